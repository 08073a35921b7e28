//! From a set of token classes to mask words, fast.
//!
//! Classes are stored as runs `(mask word, bits)` of their members. Expanding a set costs one
//! read-modify-write per run, and a mask is thousands of words (4,008 for a 128k vocabulary),
//! so the expansion is built to write the mask once and read little:
//!
//! - the classes with many runs (the vocabulary's bulk: words, numbers, …) are *units*, and
//!   so is "every token of a sparse class" (the base of a complemented sparse expansion).
//!   Units are grouped, at most six to a group (SynCode's grammars make one to three groups),
//!   and every subset of a group has its mask precomputed, so the units' part of any set is
//!   one fused pass that reads one precomputed mask per group (or, for a combination of
//!   groups' subsets met before, their union, learned by [`Unions`]) and writes each word
//!   once. Room left in the groups goes to the sparse classes with the most runs. Where the
//!   CPU runs the deposit route (below), the dense classes that would need one more group are
//!   left sparse when they hold few tokens;
//! - the other (*sparse*) classes are walked run by run on top: the classes in the set, or,
//!   when the set holds most of them, the ones missing from it are cleared from the "every
//!   sparse token" unit; or, where the CPU has the instructions and the set holds many runs
//!   either way, every sparse token is written at once by [`Deposit`], fused with the units'
//!   pass, at a cost that does not depend on the set. Where that route exists, the units' pass
//!   of the other ways is also read and written 512 bits at a time.
//!
//! [`Expansion::apply_delta`] turns the expansion of one set into another's (classes added,
//! classes cleared), which the run uses to start from a recent result when that is cheaper.
//! Which way to go is decided by estimates (popcounts over cost buckets), which only affect
//! speed. Classes that no weight of the automaton holds (tokens dead everywhere, say) are never
//! in a set and count for nothing. The tables are derived from the runs when the automaton is
//! built or loaded, so the artifact stores only the runs.
//!
//! This is the idea of the token classes' expansion (`munch_tokens`) in the automaton's
//! terms: the units play its big classes (grouped, every subset's mask precomputed), the
//! sparse classes its small ones, and both use [`Deposit`], [`Unions`] and [`count_in`].

use smallvec::SmallVec;

use munch_tokens::deposit::Deposit;
use munch_tokens::unions::Unions;
use munch_tokens::{count_in, Words};

/// How a fresh expansion writes the sparse classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sparse {
    /// The runs of the sparse classes in the set, ORed in.
    Inside,
    /// The runs of the sparse classes missing from the set, cleared from every sparse token.
    Outside,
    /// Every sparse token at once ([`Deposit`]): the same cost for every set.
    Deposit,
}

/// The derived expansion tables of a [`Dwa`](crate::dwa::Dwa).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct Expansion {
    word_len: usize,
    /// `u64` words of a class set.
    set_words: usize,
    /// Class bitsets of the sparse and the dense classes (neither: in no weight).
    sparse: Vec<u64>,
    dense_set: Vec<u64>,
    /// Per class: its unit (dense classes only; `u32::MAX` otherwise).
    unit_of: Vec<u32>,
    /// Units: the dense classes, then "every sparse token" (index `units - 1`).
    units: usize,
    /// Units per group.
    group: usize,
    /// Per group of `group` units: `combos[(group_start[g] + subset) * word_len..]` is the
    /// mask of the subset (bit `j` = the group's unit `j`).
    group_start: Vec<u32>,
    combos: Vec<u32>,
    /// Cost buckets for quick estimates: `buckets[k * set_words..]` holds the sparse classes
    /// with runs in `BOUNDS[k]..BOUNDS[k + 1]`; `bucket_avg[k]` is their mean number of runs.
    buckets: Vec<u64>,
    bucket_avg: [usize; BUCKETS],
    /// Runs of all sparse classes.
    sparse_runs: usize,
    /// The set-independent route for the sparse classes, where the CPU runs it.
    deposit: Option<Deposit>,
    /// The unions of subset masks of several groups that expansions read together, learned
    /// from the sets expanded.
    unions: Unions,
}

/// Bytes of the precomputed subset masks (all groups).
const COMBO_BUDGET: usize = 20 << 20;
/// The most units a group may have (2^6 subsets: 1 MiB of masks with a 128k vocabulary).
/// Groups of 9–10 units (16 MiB) were no faster to expand on SynCode's grammars with Llama 3
/// and Gemma 3, and deriving their masks was most of the cost of loading an artifact (JSON:
/// 10 ms, now 0.2 ms).
const MAX_BITS: usize = 6;
/// The most tokens of dense classes left out of the groups to save one (see
/// `Expansion::with_route`): about what the route gathers in the time a group's mask is read.
const MAX_LEFT_OUT_TOKENS: usize = 3_000;
/// The most groups: past that, dense classes stay sparse.
const MAX_GROUPS: usize = 16;
const _: () = assert!(
    MAX_GROUPS * MAX_BITS <= 128,
    "a union key has a bit per unit"
);
/// Cost buckets: coarse, since popcounts over them are the estimate's cost.
const BUCKETS: usize = 4;
/// Their lower bounds in runs.
const BOUNDS: [usize; BUCKETS] = [0, 3, 9, 33];

impl Expansion {
    /// Derives the tables from per-class runs over `word_len` mask words; classes not in `live`
    /// (a class bitset) are never expanded.
    pub(crate) fn new(
        word_len: usize,
        run_start: &[u32],
        runs: &[(u32, u32)],
        live: &[u64],
    ) -> Self {
        let route = munch_tokens::deposit::supported();
        Expansion::with_route(word_len, (run_start, runs), live, route)
    }

    /// [`Expansion::new`], grouping the dense classes as if the CPU ran the deposit route
    /// (`route`) or not (tests check both anywhere).
    fn with_route(
        word_len: usize,
        (run_start, runs): (&[u32], &[(u32, u32)]),
        live: &[u64],
        route: bool,
    ) -> Self {
        let classes = run_start.len().saturating_sub(1);
        let set_words = classes.div_ceil(64);
        let runs_of = |c: usize| &runs[run_start[c] as usize..run_start[c + 1] as usize];
        let is_live = |c: usize| live.get(c / 64).is_some_and(|w| w >> (c % 64) & 1 == 1);
        // A class whose runs cost more than an eighth of a word-by-word pass is dense; the
        // fewest groups that hold them all within the memory budget are made, as large as the
        // budget allows, and the room left goes to the sparse classes with the most runs
        // (a unit costs nothing more to expand than its group's pass).
        let threshold = (word_len / 8).max(64);
        let mut by_runs: Vec<usize> = (0..classes).filter(|&c| is_live(c)).collect();
        by_runs.sort_by_key(|&c| (std::cmp::Reverse(runs_of(c).len()), c));
        let must = by_runs
            .iter()
            .take_while(|&&c| runs_of(c).len() > threshold)
            .count()
            + 1;
        let combo_bytes = (word_len * 4).max(1);
        let bits_of = |groups: usize| -> usize {
            let per = COMBO_BUDGET / groups / combo_bytes;
            ((usize::BITS - 1 - per.max(1).leading_zeros()) as usize).clamp(1, MAX_BITS)
        };
        let mut groups = 1;
        while groups < MAX_GROUPS && groups * bits_of(groups) < must {
            groups += 1;
        }
        // With the deposit route, a group fewer when the dense classes left out of the
        // smaller groups hold few tokens: the route gathers them as sparse tokens for less
        // than reading a group's mask costs. On Java with Llama 3, 3 classes of 1,718 tokens
        // left out (3 groups to 2) took the fresh expansions from 1.09–1.12 to 1.05–1.06 µs
        // hot at p50 (`wda_trace`, alternated), the same as met.
        if groups > 1 && route {
            let room = (groups - 1) * bits_of(groups - 1) - 1;
            let left_out: usize = by_runs[room..must - 1]
                .iter()
                .flat_map(|&c| runs_of(c))
                .map(|r| r.1.count_ones() as usize)
                .sum();
            if left_out <= MAX_LEFT_OUT_TOKENS {
                groups -= 1;
            }
        }
        // No bigger than the dense classes need: each unit more doubles a group's masks.
        let group = bits_of(groups).min(must.div_ceil(groups));
        // Sparse classes with a single run gain nothing from a unit.
        let mut dense: Vec<usize> = by_runs
            .iter()
            .copied()
            .take_while(|&c| runs_of(c).len() > 1)
            .take(groups * group - 1)
            .collect();
        dense.sort_unstable();
        let units = dense.len() + 1;
        let mut e = Expansion {
            word_len,
            set_words,
            sparse: vec![0; set_words],
            dense_set: vec![0; set_words],
            unit_of: vec![u32::MAX; classes],
            units,
            group,
            group_start: Vec::new(),
            combos: Vec::new(),
            buckets: vec![0; BUCKETS * set_words],
            bucket_avg: [0; BUCKETS],
            sparse_runs: 0,
            deposit: None,
            unions: Unions::new(word_len),
        };
        // Unit bitmaps, then every subset of each group.
        let mut unit_masks = vec![0u32; units * word_len];
        for (u, &c) in dense.iter().enumerate() {
            e.dense_set[c / 64] |= 1 << (c % 64);
            e.unit_of[c] = u as u32;
            for &(w, bits) in runs_of(c) {
                unit_masks[u * word_len + w as usize] |= bits;
            }
        }
        let all_sparse = (units - 1) * word_len;
        let mut counts = [0usize; BUCKETS];
        for c in (0..classes).filter(|&c| is_live(c) && e.unit_of[c] == u32::MAX) {
            e.sparse[c / 64] |= 1 << (c % 64);
            let n = runs_of(c).len();
            let k = BOUNDS.iter().rposition(|&b| n >= b).unwrap_or(0);
            e.buckets[k * set_words + c / 64] |= 1 << (c % 64);
            e.bucket_avg[k] += n;
            counts[k] += 1;
            e.sparse_runs += n;
            for &(w, bits) in runs_of(c) {
                unit_masks[all_sparse + w as usize] |= bits;
            }
        }
        for (avg, n) in e.bucket_avg.iter_mut().zip(counts) {
            *avg /= n.max(1);
        }
        let mut sparse_tokens: Vec<(u32, u32)> = Vec::new();
        for c in iter_bits(&e.sparse) {
            for &(w, bits) in runs_of(c) {
                let mut b = bits;
                while b != 0 {
                    sparse_tokens.push((w * 32 + b.trailing_zeros(), c as u32));
                    b &= b - 1;
                }
            }
        }
        sparse_tokens.sort_unstable();
        e.deposit = Deposit::new(word_len, classes, &sparse_tokens);
        let mut start = 0u32;
        for g in 0..units.div_ceil(group) {
            e.group_start.push(start);
            let size = (units - g * group).min(group);
            let at = start as usize * word_len;
            e.combos.resize(at + (word_len << size), 0);
            let masks = &mut e.combos[at..];
            for subset in 1..1usize << size {
                let j = subset.trailing_zeros() as usize;
                let rest = subset & (subset - 1);
                let unit = &unit_masks[(g * group + j) * word_len..][..word_len];
                // `rest` < `subset`: its mask is before this one (split borrows, so that the
                // loop is a plain vectorised OR of two rows).
                let (before, this) = masks.split_at_mut(subset * word_len);
                let rest = &before[rest * word_len..][..word_len];
                for ((out, &r), &u) in this[..word_len].iter_mut().zip(rest).zip(unit) {
                    *out = r | u;
                }
            }
            start += 1 << size;
        }
        e
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        (self.sparse.len() + self.dense_set.len() + self.buckets.len()) * 8
            + (self.unit_of.len() + self.group_start.len() + self.combos.len()) * 4
            + self.deposit.as_ref().map_or(0, Deposit::heap_bytes)
            + self.unions.heap_bytes()
    }

    /// Whether the set-independent route ([`Sparse::Deposit`]) runs here.
    #[cfg(test)]
    pub(crate) fn has_deposit(&self) -> bool {
        self.deposit.is_some()
    }

    /// The cost of a fresh expansion that walks no sparse class.
    pub(crate) fn fresh_floor(&self) -> usize {
        self.group_start.len() * self.pass_cost()
    }

    /// What one pass over the mask words costs, in the units of a run's write.
    fn pass_cost(&self) -> usize {
        self.word_len / 4
    }

    /// The subset of each group's units (the dense classes) that `set` holds.
    fn subsets(&self, set: &[u64]) -> [usize; MAX_GROUPS] {
        let mut subsets = [0usize; MAX_GROUPS];
        for c in iter_kind(set, &self.dense_set, false) {
            let u = self.unit_of[c] as usize;
            subsets[u / self.group] |= 1 << (u % self.group);
        }
        subsets
    }

    /// Estimated runs of the classes in `set` and not in `not` (if given). Every expansion
    /// prices itself this way (four buckets of every set word, and twice more per recent
    /// result it might start from), so the count is `munch_lexer`'s, with the CPU's popcounts
    /// (the baseline target counts bits with a dozen instructions per word: 40 words took 114
    /// ns that way, 74 with POPCNT, in a microbenchmark).
    fn runs_in(&self, set: &[u64], not: Option<&[u64]>) -> usize {
        let with = not.map_or(Words::Set, Words::AndNot);
        let buckets: [&[u64]; BUCKETS] =
            std::array::from_fn(|k| &self.buckets[k * self.set_words..(k + 1) * self.set_words]);
        count_in(set, with, buckets)
            .iter()
            .zip(&self.bucket_avg)
            .map(|(&n, &avg)| n as usize * avg)
            .sum()
    }

    /// Estimated cost of [`Expansion::expand`] on `set` (quick, rough), and the cheapest way
    /// to write its sparse classes.
    pub(crate) fn fresh_cost(&self, set: &[u64]) -> (usize, Sparse) {
        let inside = self.runs_in(set, None);
        let outside = self.sparse_runs.saturating_sub(inside);
        let mut best = if outside < inside {
            (outside, Sparse::Outside)
        } else {
            (inside, Sparse::Inside)
        };
        if let Some(d) = &self.deposit {
            // Priced at two thirds of its hot cost (385 runs on Java with Llama 3): a mask that
            // misses the result cache finds the run tables cold, where each scattered run is a
            // random read, while the route reads its tables in order. The route's first
            // version, priced about the same (358 runs), took teacher-forced traces with Llama 3
            // from mask p99 / p99.9 of 4.2 / 9.5 µs to 3.0–3.3 / 6.2–6.5 µs on Java, 7.0–7.2 /
            // 14.1–14.5 to 6.2–6.3 / 9.8–10.2 on Go, and SQL's p90 from 4.8–5.2 to 3.6–4.1
            // (`wda_trace`, two runs each).
            let cost = d.cost() * 2 / 3;
            if cost < best.0 {
                best = (cost, Sparse::Deposit);
            }
        }
        (best.0 + self.group_start.len() * self.pass_cost(), best.1)
    }

    /// Estimated cost of [`Expansion::apply_delta`] from `from` to `to`, the copy of the base
    /// included.
    pub(crate) fn delta_cost(&self, from: &[u64], to: &[u64]) -> usize {
        let cost = self.runs_in(from, Some(to)) + self.runs_in(to, Some(from));
        let (f, t) = (self.subsets(from), self.subsets(to));
        let changed = f.iter().zip(&t).filter(|(a, b)| a != b).count();
        cost + (changed + 1) * self.pass_cost()
    }

    /// Turns `words`, the expansion of `from`, into that of `to`: the classes only in `to` are
    /// ORed in, those only in `from` cleared (classes' members are disjoint, so clearing one
    /// never clears another's).
    pub(crate) fn apply_delta(
        &self,
        from: &[u64],
        to: &[u64],
        run_start: &[u32],
        runs: &[(u32, u32)],
        words: &mut [u32],
    ) {
        // Units: members of different units are disjoint, so a group's mask moves from
        // subset `f` to subset `t` by XOR with the mask of `f ^ t`.
        let (fs, ts) = (self.subsets(from), self.subsets(to));
        for (g, (&f, &t)) in fs.iter().zip(&ts).enumerate().take(self.group_start.len()) {
            if f != t {
                let at = (self.group_start[g] as usize + (f ^ t)) * self.word_len;
                for (a, b) in words.iter_mut().zip(&self.combos[at..at + self.word_len]) {
                    *a ^= b;
                }
            }
        }
        let runs_of = |c: usize| &runs[run_start[c] as usize..run_start[c + 1] as usize];
        for (wi, ((&f, &t), &k)) in from.iter().zip(to).zip(&self.sparse).enumerate() {
            let (mut add, mut del) = (t & !f & k, f & !t & k);
            while add != 0 {
                let c = wi * 64 + add.trailing_zeros() as usize;
                add &= add - 1;
                for &(w, bits) in runs_of(c) {
                    words[w as usize] |= bits;
                }
            }
            while del != 0 {
                let c = wi * 64 + del.trailing_zeros() as usize;
                del &= del - 1;
                for &(w, bits) in runs_of(c) {
                    words[w as usize] &= !bits;
                }
            }
        }
    }

    /// Writes the members of the classes in `set` (a class bitset) into `words`, clearing every
    /// other bit. `sparse` says how the sparse classes are written: every way gives the same
    /// words at another cost ([`Sparse::Deposit`] only where [`Expansion::fresh_cost`] offers
    /// it).
    pub(crate) fn expand(
        &self,
        set: &[u64],
        sparse: Sparse,
        run_start: &[u32],
        runs: &[(u32, u32)],
        words: &mut [u32],
    ) {
        // The subset of each group: the set's dense classes, and the "every sparse token" unit
        // when the sparse classes are walked from the outside.
        let mut subsets = self.subsets(set);
        let complement = sparse == Sparse::Outside;
        if complement {
            let u = self.units - 1;
            subsets[u / self.group] |= 1 << (u % self.group);
        }
        let mut parts: SmallVec<[&[u32]; 4]> = subsets
            .iter()
            .zip(&self.group_start)
            .filter(|(&s, _)| s != 0)
            .map(|(&s, &g)| {
                let at = (g as usize + s) * self.word_len;
                &self.combos[at..at + self.word_len]
            })
            .collect();
        // Several groups' masks: their union, once learned (named by the groups' subsets).
        if parts.len() >= 2 {
            let key = subsets
                .iter()
                .enumerate()
                .fold(0u128, |k, (g, &s)| k | (s as u128) << (g * self.group));
            if let Some(union) = self.unions.get(key, &parts) {
                parts = SmallVec::from_slice(&[union]);
            }
        }
        let runs_of = |c: usize| &runs[run_start[c] as usize..run_start[c + 1] as usize];
        match (sparse, &self.deposit) {
            (Sparse::Deposit, Some(d)) => return d.expand(set, &parts, words),
            (_, Some(d)) => d.pass(&parts, words),
            (_, None) => pass(&parts, words),
        }
        if complement {
            for c in iter_kind(set, &self.sparse, true) {
                for &(w, bits) in runs_of(c) {
                    words[w as usize] &= !bits;
                }
            }
        } else {
            for c in iter_kind(set, &self.sparse, false) {
                for &(w, bits) in runs_of(c) {
                    words[w as usize] |= bits;
                }
            }
        }
    }
}

/// `words` = the OR of `parts`: one fused pass, every word written once.
fn pass(parts: &[&[u32]], words: &mut [u32]) {
    match parts {
        [] => words.fill(0),
        [a] => words.copy_from_slice(a),
        [a, b] => {
            for ((w, a), b) in words.iter_mut().zip(*a).zip(*b) {
                *w = a | b;
            }
        }
        [a, b, c, rest @ ..] => {
            for (((w, a), b), c) in words.iter_mut().zip(*a).zip(*b).zip(*c) {
                *w = a | b | c;
            }
            for r in rest {
                for (w, r) in words.iter_mut().zip(*r) {
                    *w |= r;
                }
            }
        }
    }
}

/// The set bits of a bitset, ascending.
pub(crate) fn iter_bits(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words
        .iter()
        .enumerate()
        .flat_map(|(wi, &word)| word_bits(wi, word))
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
        .flat_map(move |(wi, (&s, &k))| word_bits(wi, if complement { !s & k } else { s & k }))
}

/// The set bits of `word`, word `wi` of a bitset, as bit indices of the whole set, ascending.
#[inline]
fn word_bits(wi: usize, mut w: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if w == 0 {
            return None;
        }
        let b = w.trailing_zeros() as usize;
        w &= w - 1;
        Some(wi * 64 + b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Per-class runs of a random assignment of `tokens` tokens to `classes` classes, where
    /// the first classes take most tokens (so that some are dense, across several groups).
    fn runs_of_assignment(classes: usize, of: &[usize]) -> (Vec<u32>, Vec<(u32, u32)>) {
        let mut run_start = vec![0u32];
        let mut runs = Vec::new();
        for c in 0..classes {
            let mut cur: Option<(u32, u32)> = None;
            for (t, _) in of.iter().enumerate().filter(|(_, &k)| k == c) {
                let (w, b) = ((t / 32) as u32, 1u32 << (t % 32));
                match &mut cur {
                    Some((cw, bits)) if *cw == w => *bits |= b,
                    _ => {
                        runs.extend(cur.take());
                        cur = Some((w, b));
                    }
                }
            }
            runs.extend(cur);
            run_start.push(runs.len() as u32);
        }
        (run_start, runs)
    }

    fn naive(set: &[u64], of: &[usize], word_len: usize) -> Vec<u32> {
        let mut words = vec![0u32; word_len];
        for (t, &c) in of.iter().enumerate() {
            if set[c / 64] >> (c % 64) & 1 == 1 {
                words[t / 32] |= 1 << (t % 32);
            }
        }
        words
    }

    /// With the deposit route, the dense classes left out of one group fewer are made sparse
    /// when they hold few tokens, and not when they hold many; every way stays exact.
    #[test]
    fn a_group_fewer_when_the_left_out_classes_hold_few_tokens() {
        // 40,000 tokens in 1,251 words: a class is dense past 156 runs. Classes 0..11 share
        // most tokens (1,251 runs each), classes 11 and 12 take every `thin`-th token (dense,
        // and last by runs, then ids: the two left out of two groups of six units), and
        // classes 13..33 take one token in 97.
        let (tokens, classes) = (40_000usize, 33usize);
        let word_len = tokens / 32 + 1;
        let live = vec![(1u64 << classes) - 1];
        for (thin, groups_with_route) in [(64, 2), (16, 3)] {
            let of: Vec<usize> = (0..tokens)
                .map(|t| match (t % thin, t % 97) {
                    (3, _) => 11,
                    (7, _) => 12,
                    (_, 50) => 13 + t / 97 % 20,
                    _ => t % 11,
                })
                .collect();
            let (run_start, runs) = runs_of_assignment(classes, &of);
            let runs = (&run_start[..], &runs[..]);
            let with = Expansion::with_route(word_len, runs, &live, true);
            let without = Expansion::with_route(word_len, runs, &live, false);
            assert_eq!(without.group_start.len(), 3, "thin {thin}");
            assert_eq!(with.group_start.len(), groups_with_route, "thin {thin}");
            let left_out = with.sparse[0] >> 11 & 0b11;
            assert_eq!(left_out, if groups_with_route == 2 { 0b11 } else { 0 });
            let sets = [live[0], 0x1_5555_5555, 0x7ff | 0x0aaa_a000];
            for e in [&with, &without] {
                let mut words = vec![0u32; word_len];
                for set in sets {
                    let mut ways = vec![Sparse::Inside, Sparse::Outside];
                    if e.has_deposit() {
                        ways.push(Sparse::Deposit);
                    }
                    for way in ways {
                        e.expand(&[set], way, runs.0, runs.1, &mut words);
                        assert_eq!(words, naive(&[set], &of, word_len), "{way:?}");
                    }
                }
            }
        }
    }

    /// The count of runs in a set (by the CPU's popcounts) is the one by hand, over set words
    /// past one vector and a partial last one.
    #[test]
    fn runs_in_counts_as_by_hand() {
        let (tokens, classes) = (40_000usize, 700usize);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let of: Vec<usize> = (0..tokens)
            .map(|_| {
                let r = (next() % 1000) as usize;
                if r < 600 {
                    r % 20
                } else {
                    r % classes
                }
            })
            .collect();
        let (run_start, runs) = runs_of_assignment(classes, &of);
        let live: Vec<u64> = (0..classes.div_ceil(64))
            .map(|w| {
                if w == classes / 64 {
                    (1 << (classes % 64)) - 1
                } else {
                    u64::MAX
                }
            })
            .collect();
        let e = Expansion::new(tokens / 32 + 1, &run_start, &runs, &live);
        let by_hand = |set: &[u64], not: Option<&[u64]>| -> usize {
            (0..BUCKETS)
                .map(|k| {
                    let b = &e.buckets[k * e.set_words..(k + 1) * e.set_words];
                    let n: u32 = (0..e.set_words)
                        .map(|i| (set[i] & b[i] & !not.map_or(0, |n| n[i])).count_ones())
                        .sum();
                    n as usize * e.bucket_avg[k]
                })
                .sum()
        };
        assert!(by_hand(&live, None) > 0, "some sparse classes have runs");
        for _ in 0..20 {
            let a: Vec<u64> = live.iter().map(|l| l & next()).collect();
            let b: Vec<u64> = live.iter().map(|l| l & next()).collect();
            assert_eq!(e.runs_in(&a, None), by_hand(&a, None));
            assert_eq!(e.runs_in(&a, Some(&b)), by_hand(&a, Some(&b)));
            assert_eq!(e.delta_cost(&a, &b), e.delta_cost(&b, &a));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Fresh expansions and deltas between sets give exactly the members of the set's
        /// classes, with dense units spread over several groups and some classes dead, before
        /// and after the unions of group masks are learned.
        #[test]
        fn expansions_and_deltas_are_exact(
            seed in any::<u64>(),
            sets in proptest::collection::vec(proptest::collection::vec(any::<bool>(), 90), 4),
        ) {
            let classes = 90;
            let tokens = 40_000;
            let word_len = tokens / 32 + 1;
            // A skewed assignment: class c gets weight ~ 1 / (c + 1), so about 30 classes have
            // more than word_len / 8 runs.
            let mut x = seed | 1;
            let of: Vec<usize> = (0..tokens)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let r = (x % 1000) as usize;
                    if r < 600 { r % 35 } else { r % classes }
                })
                .collect();
            let (run_start, runs) = runs_of_assignment(classes, &of);
            // Classes 88 and 89 are in no weight.
            let live = vec![u64::MAX, (1u64 << (classes - 64 - 2)) - 1];
            let e = Expansion::new(word_len, &run_start, &runs, &live);
            prop_assert!(e.group_start.len() > 1, "one group holds every unit ({})", e.units);
            let sets: Vec<Vec<u64>> = sets
                .iter()
                .map(|bools| {
                    let mut s = vec![0u64; 2];
                    for (c, &b) in bools.iter().enumerate() {
                        if b && live[c / 64] >> (c % 64) & 1 == 1 {
                            s[c / 64] |= 1 << (c % 64);
                        }
                    }
                    s
                })
                .collect();
            // One nearly full set, so that the complemented side is taken.
            let mut all = sets.clone();
            all.push(live.clone());
            let mut words = vec![0u32; word_len];
            // Where the CPU runs it, the set-independent route is tried on every set too.
            prop_assert_eq!(e.has_deposit(), munch_tokens::deposit::supported());
            let mut ways = vec![Sparse::Inside, Sparse::Outside];
            if e.has_deposit() {
                ways.push(Sparse::Deposit);
            }
            // Twice: the second time round with the unions of group masks learned.
            for _ in 0..2 {
                for (i, set) in all.iter().enumerate() {
                    for &way in &ways {
                        e.expand(set, way, &run_start, &runs, &mut words);
                        prop_assert_eq!(&words, &naive(set, &of, word_len), "{:?}", way);
                    }
                    let next = &all[(i + 1) % all.len()];
                    e.apply_delta(set, next, &run_start, &runs, &mut words);
                    prop_assert_eq!(&words, &naive(next, &of, word_len));
                }
            }
            // The full set reads every group's mask: their union is learned.
            prop_assert!(!e.unions.is_empty());
        }
    }
}
