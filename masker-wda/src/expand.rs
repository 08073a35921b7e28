//! From a set of token classes to mask words, fast.
//!
//! Classes are stored as runs `(mask word, bits)` of their members. Expanding a set costs one
//! read-modify-write per run, so two things keep it short:
//!
//! - the few classes with many runs (the vocabulary's bulk: words, numbers, …) get a dense
//!   bitmap, ORed in word by word (or, when the set holds most of them, all of them at once and
//!   the missing ones cleared);
//! - for the other (*sparse*) classes, when the set holds most of them, the expansion starts
//!   from every sparse-classed token and clears the classes missing from the set.
//!
//! Which side to walk is decided by counting classes (a popcount over the set), which only
//! affects speed. Classes that no weight of the automaton holds (tokens dead everywhere, say)
//! are never in a set and count for nothing. The tables are derived from the runs when the
//! automaton is built or loaded, so the artifact stores only the runs.

/// The derived expansion tables of a [`Dwa`](crate::dwa::Dwa).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct Expansion {
    word_len: usize,
    /// Class bitsets of the sparse and the dense classes (neither: in no weight).
    sparse: Vec<u64>,
    dense_set: Vec<u64>,
    /// Per class: its dense bitmap's index (dense classes only).
    dense_index: Vec<u32>,
    /// Dense bitmaps, `word_len` words each.
    dense: Vec<u32>,
    /// Every token of a sparse class, of a dense class.
    all_sparse: Vec<u32>,
    all_dense: Vec<u32>,
    /// Runs of all sparse classes; number of dense classes.
    sparse_runs: usize,
    dense_len: usize,
}

impl Expansion {
    /// Derives the tables from per-class runs over `word_len` mask words; classes not in `live`
    /// (a class bitset) are never expanded.
    pub(crate) fn new(
        word_len: usize,
        run_start: &[u32],
        runs: &[(u32, u32)],
        live: &[u64],
    ) -> Self {
        let classes = run_start.len().saturating_sub(1);
        // A class whose runs cost more than an eighth of a word-by-word pass gets a bitmap.
        let threshold = (word_len / 8).max(64);
        let set_words = classes.div_ceil(64);
        let mut e = Expansion {
            word_len,
            sparse: vec![0; set_words],
            dense_set: vec![0; set_words],
            dense_index: vec![u32::MAX; classes],
            dense: Vec::new(),
            all_sparse: vec![0; word_len],
            all_dense: vec![0; word_len],
            sparse_runs: 0,
            dense_len: 0,
        };
        for c in 0..classes {
            if live.get(c / 64).is_none_or(|w| w >> (c % 64) & 1 == 0) {
                continue;
            }
            let rs = &runs[run_start[c] as usize..run_start[c + 1] as usize];
            if rs.len() > threshold {
                e.dense_set[c / 64] |= 1 << (c % 64);
                e.dense_len += 1;
                e.dense_index[c] = (e.dense.len() / word_len) as u32;
                let at = e.dense.len();
                e.dense.resize(at + word_len, 0);
                for &(w, bits) in rs {
                    e.dense[at + w as usize] |= bits;
                    e.all_dense[w as usize] |= bits;
                }
            } else {
                e.sparse[c / 64] |= 1 << (c % 64);
                e.sparse_runs += rs.len();
                for &(w, bits) in rs {
                    e.all_sparse[w as usize] |= bits;
                }
            }
        }
        e
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        (self.sparse.len() + self.dense_set.len()) * 8
            + (self.dense_index.len() + self.dense.len()) * 4
            + (self.all_sparse.len() + self.all_dense.len()) * 4
    }

    /// The expansion's cost in word operations, about.
    pub(crate) fn cost(&self, set: &[u64], run_start: &[u32]) -> usize {
        let inside: usize = iter_kind(set, &self.sparse, false)
            .map(|c| (run_start[c + 1] - run_start[c]) as usize)
            .sum();
        let outside = self.sparse_runs - inside;
        let dense_in = iter_kind(set, &self.dense_set, false).count();
        let dense_out = self.dense_len - dense_in;
        inside.min(outside) + dense_in.min(dense_out) * self.word_len / 4 + self.word_len / 4
    }

    /// ORs the members of the classes in `set` into `words`, walking the classes in the set
    /// (for sets that hold few of them; [`Expansion::expand`] picks the cheaper side).
    pub(crate) fn or_into(
        &self,
        set: &[u64],
        run_start: &[u32],
        runs: &[(u32, u32)],
        words: &mut [u32],
    ) {
        for c in iter_kind(set, &self.sparse, false) {
            for &(w, bits) in &runs[run_start[c] as usize..run_start[c + 1] as usize] {
                words[w as usize] |= bits;
            }
        }
        for c in iter_kind(set, &self.dense_set, false) {
            let at = self.dense_index[c] as usize * self.word_len;
            for (a, b) in words.iter_mut().zip(&self.dense[at..at + self.word_len]) {
                *a |= b;
            }
        }
    }

    /// Whether [`Expansion::or_into`] is the cheap way for `set` (it holds at most half of the
    /// sparse classes' runs and of the dense classes).
    pub(crate) fn is_sparse(&self, set: &[u64]) -> bool {
        let count = |kind: &[u64], inside: bool| -> u32 {
            set.iter()
                .zip(kind)
                .map(|(&s, &k)| if inside { s & k } else { !s & k }.count_ones())
                .sum()
        };
        count(&self.sparse, true) <= count(&self.sparse, false)
            && count(&self.dense_set, true) <= count(&self.dense_set, false)
    }

    /// Writes the members of the classes in `set` (a class bitset) into `words`, clearing every
    /// other bit.
    pub(crate) fn expand(
        &self,
        set: &[u64],
        run_start: &[u32],
        runs: &[(u32, u32)],
        words: &mut [u32],
    ) {
        let runs_of = |c: usize| &runs[run_start[c] as usize..run_start[c + 1] as usize];
        let count = |f: &dyn Fn(u64, u64) -> u64, kind: &[u64]| -> u32 {
            set.iter()
                .zip(kind)
                .map(|(&s, &k)| f(s, k).count_ones())
                .sum()
        };
        let inside = |s: u64, k: u64| s & k;
        let outside = |s: u64, k: u64| !s & k;
        if count(&inside, &self.sparse) <= count(&outside, &self.sparse) {
            words.fill(0);
            for c in iter_kind(set, &self.sparse, false) {
                for &(w, bits) in runs_of(c) {
                    words[w as usize] |= bits;
                }
            }
        } else {
            words.copy_from_slice(&self.all_sparse);
            for c in iter_kind(set, &self.sparse, true) {
                for &(w, bits) in runs_of(c) {
                    words[w as usize] &= !bits;
                }
            }
        }
        if count(&inside, &self.dense_set) <= count(&outside, &self.dense_set) {
            for c in iter_kind(set, &self.dense_set, false) {
                let at = self.dense_index[c] as usize * self.word_len;
                for (a, b) in words.iter_mut().zip(&self.dense[at..at + self.word_len]) {
                    *a |= b;
                }
            }
        } else {
            // Members of different classes are disjoint, so clearing a missing dense class
            // never clears another class's token.
            for (a, b) in words.iter_mut().zip(&self.all_dense) {
                *a |= b;
            }
            for c in iter_kind(set, &self.dense_set, true) {
                let at = self.dense_index[c] as usize * self.word_len;
                for (a, b) in words.iter_mut().zip(&self.dense[at..at + self.word_len]) {
                    *a &= !b;
                }
            }
        }
    }
}

/// The set bits of a bitset, ascending.
pub(crate) fn iter_bits(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(|(wi, &word)| {
        let mut w = word;
        std::iter::from_fn(move || {
            if w == 0 {
                return None;
            }
            let b = w.trailing_zeros() as usize;
            w &= w - 1;
            Some(wi * 64 + b)
        })
    })
}

/// The classes of `kind` that are in `set` (or, with `complement`, not in it), ascending.
fn iter_kind<'a>(
    set: &'a [u64],
    kind: &'a [u64],
    complement: bool,
) -> impl Iterator<Item = usize> + 'a {
    set.iter()
        .zip(kind)
        .enumerate()
        .flat_map(move |(wi, (&s, &k))| {
            let mut w = if complement { !s & k } else { s & k };
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(wi * 64 + b)
            })
        })
}
