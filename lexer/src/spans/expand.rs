//! Expanding a [`ClassSet`] into token-mask words: per class, a precomputed word pattern.
//!
//! A class's members set a few bits in many words. Its pattern is either *sparse*, a list of
//! `(word index, bits)` runs, or *dense*, the words from its first to its last member stored
//! whole, when the runs fill at least a quarter of that range: a dense pattern is ORed as one
//! slice, which the compiler vectorises, instead of one scattered store per run.
//!
//! A set is expanded from zero by ORing the patterns of its classes, or, when the classes not
//! in the set cost less, from the words of every text token by clearing the patterns of the
//! classes it lacks. Either way the work is a copy of the words plus the cheaper half.

use super::ClassSet;
use crate::TokenId;

/// Where a class's pattern lives.
#[derive(Clone, Copy, Debug)]
enum Pattern {
    /// `runs[start..end]`.
    Sparse { start: u32, end: u32 },
    /// `dense[start..end]` are the words from `first_word` on.
    Dense {
        first_word: u32,
        start: u32,
        end: u32,
    },
}

/// Per class, the words its members set.
#[derive(Clone, Debug)]
pub(super) struct Patterns {
    pattern: Vec<Pattern>,
    /// Per class: the cost of applying its pattern, in units of about one scattered store.
    cost: Vec<u32>,
    total_cost: u64,
    runs: Vec<(u32, u32)>,
    dense: Vec<u32>,
    /// Every text token's bit.
    all: Vec<u32>,
}

/// Words a vectorised OR handles for the cost of one scattered store (a guess on the safe
/// side: 8 `u32` lanes per instruction, minus loads).
const DENSE_WORDS_PER_STORE: u32 = 4;

impl Patterns {
    /// The patterns of the classes `members[member_start[c]..member_start[c + 1]]` (ascending
    /// ids) over a vocabulary of `vocab_len` ids.
    pub(super) fn new(vocab_len: usize, member_start: &[u32], members: &[TokenId]) -> Patterns {
        let word_len = vocab_len.div_ceil(32);
        let class_len = member_start.len() - 1;
        let mut p = Patterns {
            pattern: Vec::with_capacity(class_len),
            cost: Vec::with_capacity(class_len),
            total_cost: 0,
            runs: Vec::new(),
            dense: Vec::new(),
            all: vec![0u32; word_len],
        };
        let mut class_runs: Vec<(u32, u32)> = Vec::new();
        for c in 0..class_len {
            class_runs.clear();
            for &t in &members[member_start[c] as usize..member_start[c + 1] as usize] {
                let (w, bit) = (t.as_u32() / 32, 1u32 << (t.as_u32() % 32));
                p.all[w as usize] |= bit;
                match class_runs.last_mut() {
                    Some((lw, bits)) if *lw == w => *bits |= bit,
                    _ => class_runs.push((w, bit)),
                }
            }
            let (first, last) = match (class_runs.first(), class_runs.last()) {
                (Some(f), Some(l)) => (f.0, l.0),
                _ => (0, 0),
            };
            let range = last - first + 1;
            let runs = class_runs.len() as u32;
            if runs > 1 && runs * 4 >= range {
                let start = p.dense.len() as u32;
                p.dense.resize(p.dense.len() + range as usize, 0);
                for &(w, bits) in &class_runs {
                    p.dense[(start + w - first) as usize] = bits;
                }
                p.pattern.push(Pattern::Dense {
                    first_word: first,
                    start,
                    end: p.dense.len() as u32,
                });
                p.cost.push(range.div_ceil(DENSE_WORDS_PER_STORE));
            } else {
                let start = p.runs.len() as u32;
                p.runs.extend_from_slice(&class_runs);
                p.pattern.push(Pattern::Sparse {
                    start,
                    end: p.runs.len() as u32,
                });
                p.cost.push(runs);
            }
        }
        p.total_cost = p.cost.iter().map(|&c| u64::from(c)).sum();
        p
    }

    /// Writes the words of `classes` (a set over these classes) into `words` (of the right
    /// length: the caller checks both).
    pub(super) fn expand(&self, classes: &ClassSet, words: &mut [u32]) {
        let (chosen, missing) = self.costs(classes);
        self.expand_fresh(classes, chosen, missing, words);
    }

    /// [`Patterns::expand`], starting from the nearest of the recent expansions in `cache`
    /// when that costs less, and remembering this one.
    pub(super) fn expand_cached(
        &self,
        cache: &mut ExpandCache,
        classes: &ClassSet,
        words: &mut [u32],
    ) {
        cache.clock += 1;
        let clock = cache.clock;
        if cache
            .entries
            .first()
            .is_some_and(|e| e.words.len() != words.len() || e.set.len() != classes.len())
        {
            // A cache used with other classes before: start over.
            cache.entries.clear();
        }
        if let Some(e) = cache.entries.iter_mut().find(|e| e.set == *classes) {
            words.copy_from_slice(&e.words);
            e.used = clock;
            return;
        }
        let (chosen, missing) = self.costs(classes);
        let fresh = chosen.min(missing);
        // The entry differing in the fewest classes, and what starting from it costs.
        let nearest = cache
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (differing(&e.set, classes), i))
            .min();
        let from = nearest.and_then(|(n, i)| {
            // Each differing class costs at least one store: skip the exact sum when even that
            // cannot win.
            if n as u64 >= fresh {
                return None;
            }
            let delta = self.cost_of(Differing::new(&cache.entries[i].set, classes));
            (delta < fresh).then_some(i)
        });
        match from {
            Some(i) => {
                let e = &mut cache.entries[i];
                words.copy_from_slice(&e.words);
                // Classes are disjoint, so XOR toggles exactly one class's bits.
                for c in Differing::new(&e.set, classes) {
                    self.apply(c, words, |w, bits| *w ^= bits);
                }
            }
            None => self.expand_fresh(classes, chosen, missing, words),
        }
        if cache.capacity == 0 {
            return;
        }
        if cache.entries.len() < cache.capacity {
            cache.entries.push(CacheEntry {
                set: classes.clone(),
                words: words.to_vec(),
                used: clock,
            });
        } else if let Some(e) = cache.entries.iter_mut().min_by_key(|e| e.used) {
            e.set.clone_from(classes);
            e.words.copy_from_slice(words);
            e.used = clock;
        }
    }

    /// The cost of the patterns of the classes in `classes` and of those not in it, summed
    /// over whichever side has fewer classes.
    fn costs(&self, classes: &ClassSet) -> (u64, u64) {
        let count = classes.count();
        if count * 2 <= classes.len() {
            let chosen = self.cost_of(classes.iter().map(|c| c.as_usize()));
            (chosen, self.total_cost - chosen)
        } else {
            let missing = self.cost_of(Missing::new(classes));
            (self.total_cost - missing, missing)
        }
    }

    fn expand_fresh(&self, classes: &ClassSet, chosen: u64, missing: u64, words: &mut [u32]) {
        if chosen <= missing {
            words.fill(0);
            for c in classes.iter() {
                self.apply(c.as_usize(), words, |w, bits| *w |= bits);
            }
        } else {
            words.copy_from_slice(&self.all);
            for c in Missing::new(classes) {
                self.apply(c, words, |w, bits| *w &= !bits);
            }
        }
    }

    fn cost_of(&self, classes: impl Iterator<Item = usize>) -> u64 {
        classes.map(|c| u64::from(self.cost[c])).sum()
    }

    #[inline]
    fn apply(&self, c: usize, words: &mut [u32], op: impl Fn(&mut u32, u32)) {
        match self.pattern[c] {
            Pattern::Sparse { start, end } => {
                for &(w, bits) in &self.runs[start as usize..end as usize] {
                    op(&mut words[w as usize], bits);
                }
            }
            Pattern::Dense {
                first_word,
                start,
                end,
            } => {
                let src = &self.dense[start as usize..end as usize];
                let dst = &mut words[first_word as usize..first_word as usize + src.len()];
                for (w, &bits) in dst.iter_mut().zip(src) {
                    op(w, bits);
                }
            }
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.pattern.capacity() * std::mem::size_of::<Pattern>()
            + self.cost.capacity() * 4
            + self.runs.capacity() * 8
            + (self.dense.capacity() + self.all.capacity()) * 4
    }
}

/// The positions of the set bits of `word(0..n)`, ascending.
struct Bits<F> {
    word: F,
    n: usize,
    index: usize,
    current: u64,
}

impl<F: Fn(usize) -> u64> Bits<F> {
    fn new(word: F, n: usize) -> Self {
        let current = if n > 0 { word(0) } else { 0 };
        Bits {
            word,
            n,
            index: 0,
            current,
        }
    }
}

impl<F: Fn(usize) -> u64> Iterator for Bits<F> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        loop {
            if self.current != 0 {
                let bit = self.current.trailing_zeros() as usize;
                self.current &= self.current - 1;
                return Some(self.index * 64 + bit);
            }
            self.index += 1;
            if self.index >= self.n {
                return None;
            }
            self.current = (self.word)(self.index);
        }
    }
}

/// The classes below `set.len()` not in `set`, ascending.
struct Missing;

impl Missing {
    #[allow(clippy::new_ret_no_self)] // a constructor of the iterator, named for the reader
    fn new(set: &ClassSet) -> Bits<impl Fn(usize) -> u64 + '_> {
        let words = set.words();
        let (n, len) = (words.len(), set.len());
        Bits::new(
            move |i| {
                let w = !words[i];
                if i + 1 == n && len % 64 != 0 {
                    w & ((1u64 << (len % 64)) - 1)
                } else {
                    w
                }
            },
            n,
        )
    }
}

/// The classes in exactly one of two sets over the same classes, ascending.
struct Differing;

impl Differing {
    #[allow(clippy::new_ret_no_self)] // a constructor of the iterator, named for the reader
    fn new<'a>(a: &'a ClassSet, b: &'a ClassSet) -> Bits<impl Fn(usize) -> u64 + 'a> {
        let (a, b) = (a.words(), b.words());
        Bits::new(move |i| a[i] ^ b[i], a.len().min(b.len()))
    }
}

/// The number of classes in exactly one of `a` and `b`.
fn differing(a: &ClassSet, b: &ClassSet) -> u32 {
    a.words()
        .iter()
        .zip(b.words())
        .map(|(x, y)| (x ^ y).count_ones())
        .sum()
}

/// Recent expansions, so that [`TokenClasses::expand_cached`](super::TokenClasses::expand_cached)
/// can start from the nearest one instead of from nothing: masks along a text repeat, or differ
/// in a few classes. Scratch owned by the caller (one per thread), for one [`TokenClasses`].
///
/// [`TokenClasses`]: super::TokenClasses
#[derive(Clone, Debug)]
pub struct ExpandCache {
    entries: Vec<CacheEntry>,
    capacity: usize,
    clock: u64,
}

#[derive(Clone, Debug)]
struct CacheEntry {
    set: ClassSet,
    words: Vec<u32>,
    /// The clock when last used: the least recently used entry is replaced.
    used: u64,
}

impl ExpandCache {
    /// A cache of the 8 most recent expansions.
    pub fn new() -> Self {
        Self::with_capacity(8)
    }

    /// A cache of the `entries` most recent expansions (0: no caching).
    pub fn with_capacity(entries: usize) -> Self {
        ExpandCache {
            entries: Vec::with_capacity(entries),
            capacity: entries,
            clock: 0,
        }
    }

    /// Forgets every expansion.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.entries
            .iter()
            .map(|e| e.set.words().len() * 8 + e.words.capacity() * 4)
            .sum::<usize>()
            + self.entries.capacity() * std::mem::size_of::<CacheEntry>()
    }
}

impl Default for ExpandCache {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spans::ClassId;

    /// Class 0 is dense (a member in every word), class 1 sparse (two far-apart members),
    /// class 2 a single member; expand every subset from garbage words.
    #[test]
    fn dense_and_sparse_patterns_expand_exactly() {
        let class0: Vec<u32> = (0..320).step_by(3).collect();
        let class1 = [1u32, 301];
        let class2 = [2u32];
        let mut members: Vec<TokenId> = Vec::new();
        let mut member_start = vec![0u32];
        for class in [&class0[..], &class1, &class2] {
            members.extend(class.iter().map(|&t| TokenId::from(t)));
            member_start.push(members.len() as u32);
        }
        let p = Patterns::new(330, &member_start, &members);
        assert!(matches!(p.pattern[0], Pattern::Dense { .. }));
        assert!(matches!(p.pattern[1], Pattern::Sparse { .. }));
        assert!(matches!(p.pattern[2], Pattern::Sparse { .. }));
        for subset in 0u32..8 {
            let mut set = ClassSet::new(3);
            let mut want = vec![0u32; 11];
            for (c, class) in [&class0[..], &class1, &class2].iter().enumerate() {
                if subset & (1 << c) != 0 {
                    set.insert(ClassId::from_usize(c));
                    for &t in class.iter() {
                        want[t as usize / 32] |= 1 << (t % 32);
                    }
                }
            }
            let mut words = vec![0x5555_5555; 11];
            p.expand(&set, &mut words);
            assert_eq!(words, want, "subset {subset:03b}");
        }
    }

    /// 40 one-member classes in different words: a set differing from a cached one in one
    /// class is built from it by toggling that class (1 store against 20 from scratch).
    #[test]
    fn cached_expansion_from_the_nearest_set() {
        let members: Vec<TokenId> = (0..40u32).map(|c| TokenId::from(c * 33)).collect();
        let member_start: Vec<u32> = (0..=40).collect();
        let p = Patterns::new(40 * 33, &member_start, &members);
        let words_of = |set: &ClassSet| {
            let mut want = vec![0u32; (40 * 33usize).div_ceil(32)];
            for c in set.iter() {
                let t = c.as_usize() * 33;
                want[t / 32] |= 1 << (t % 32);
            }
            want
        };
        let mut cache = ExpandCache::with_capacity(2);
        let mut a = ClassSet::new(40);
        a.extend((0..40).step_by(2).map(ClassId::from_usize));
        let mut words = vec![0u32; words_of(&a).len()];
        p.expand_cached(&mut cache, &a, &mut words);
        assert_eq!(words, words_of(&a));
        let (fresh_in, fresh_out) = p.costs(&a);
        assert_eq!((fresh_in, fresh_out), (20, 20));
        // One more class, then one fewer: both from the cached neighbour.
        let mut b = a.clone();
        b.insert(ClassId::from_usize(7));
        let mut c = a.clone();
        c.remove(ClassId::from_usize(0));
        for set in [&b, &c, &a, &b] {
            words.fill(0xffff_ffff);
            p.expand_cached(&mut cache, set, &mut words);
            assert_eq!(words, words_of(set));
        }
        assert_eq!(cache.entries.len(), 2);
        assert_eq!(differing(&a, &b), 1);
        assert_eq!(Differing::new(&b, &c).collect::<Vec<_>>(), [0, 7]);
    }
}
