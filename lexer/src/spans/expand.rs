//! Expanding a [`ClassSet`] into token-mask words in about one pass over the words.
//!
//! A mask has `vocab_len / 32` words (4,008 for Llama 3): writing them is most of the budget,
//! so the work per set is kept to one vectorised pass plus a few scattered stores.
//!
//! - **Big classes** (at most [`MAX_BIG`], the classes whose members fall in the most words:
//!   in a real vocabulary they hold 90–99% of the tokens) are put in *groups* of [`GROUP`]
//!   (largest first); each group keeps the union mask of every non-empty subset of its classes
//!   (15 masks of the vocabulary's words). A set's big classes are then at most one
//!   precomputed mask per group, and the pass ORs those masks together (or, when the set holds
//!   most of them, clears the masks of the missing ones from the mask of every big class). A
//!   group whose present (missing) classes fall in fewer words than a pass costs is scattered
//!   from their runs instead, and a group wholly out of (in) the set costs nothing.
//! - **Small classes** (all others: in a real vocabulary mostly classes of one to a few tokens)
//!   keep their `(word, bits)` runs (inline for the classes in one word) and are scattered
//!   after the pass: ORed in when the set holds fewer of their runs than it lacks, otherwise
//!   the pass starts from every small class's bits and the missing ones are cleared.
//!
//! The plan is priced per set from the set's bits of the big classes and popcounts of its
//! words, never by walking its members. The pass is compiled twice, portable and with AVX2
//! (picked at run time), because its speed is the load and store width.
//!
//! What this cannot make cheap: a set that holds about half of many small classes (random
//! sets over Java's thousands of one-token classes) needs one scattered store per class.

use super::ClassSet;
use crate::TokenId;

/// Classes per group of big classes: a group keeps `2^GROUP - 1` masks.
const GROUP: usize = 4;
/// The most big classes: the pass reads at most `MAX_BIG / GROUP` group masks plus one.
pub(super) const MAX_BIG: usize = 32;
/// The most bytes of group masks (each group keeps 15 masks of the vocabulary's words): 2 MiB
/// holds all [`MAX_BIG`] classes up to 140k tokens (Llama 3: 1.8 MiB), 16 at 262k (Gemma 3,
/// whose 8 largest classes hold 98% of its tokens already).
const MAX_GROUP_BYTES: usize = 2 << 20;
/// A class is big only if its members fall in at least `max(words / 256, 8)` words: below
/// that, scattering its runs costs less than reading its group's mask.
const MIN_BIG_RUNS: u32 = 8;
const NOT_BIG: u8 = u8::MAX;

/// A group of big classes with the union mask of each non-empty subset.
#[derive(Clone, Debug)]
struct Group {
    /// Its classes: subset bit `j` is `classes[j]`.
    classes: Vec<u32>,
    /// The runs (words) of the classes of each subset.
    subset_runs: [u32; 1 << GROUP],
    /// The subset of all its classes.
    full: u8,
    /// `masks[(s - 1) * words..s * words]` is the union of subset `s`'s classes.
    masks: Vec<u32>,
}

/// The precomputed patterns of one [`TokenClasses`](super::TokenClasses).
#[derive(Clone, Debug)]
pub(super) struct Patterns {
    word_len: usize,
    groups: Vec<Group>,
    /// Per class: `group * GROUP + bit` for a big class, [`NOT_BIG`] otherwise.
    big: Vec<u8>,
    /// The big classes, group by group.
    big_classes: Vec<u32>,
    /// The small classes whose members are in one word, and those in several, in the layout
    /// of [`ClassSet::words`]; how many of each; the runs of the latter.
    single: Vec<u64>,
    multi: Vec<u64>,
    single_len: u64,
    multi_len: u64,
    multi_runs: u64,
    /// The mean runs of a multi-word small class, times 256.
    multi_mean: u64,
    /// Per class `c` with members in one word: `(word index, bits)`.
    single_run: Vec<(u32, u32)>,
    /// Per class `c` with members in several words (big ones included): its runs
    /// `runs[run_start[c]..run_start[c + 1]]` (empty for other classes), as `(word index,
    /// bits)`.
    run_start: Vec<u32>,
    runs: Vec<(u32, u32)>,
    /// Every text token's bit; every big class's; every small class's.
    all: Vec<u32>,
    all_big: Vec<u32>,
    all_small: Vec<u32>,
    /// What one pass over the words costs, in scattered runs (a guess: a run is a few
    /// dependent instructions, a pass moves 8–16 words per instruction on two ports).
    pass_cost: u64,
}

/// How one set is expanded.
#[derive(Clone, Copy, Debug)]
struct Plan {
    /// Per group, the subset of its classes in the set.
    subsets: [u8; MAX_BIG / GROUP],
    /// Bit `g`: group `g`'s mask is read in the pass; otherwise the runs of its present (or,
    /// with `big_missing`, missing) classes are scattered.
    streamed: u8,
    /// Start from every big class and clear the missing ones (else OR the present ones).
    big_missing: bool,
    /// Start from every small class and clear the missing ones (else OR the present ones).
    small_missing: bool,
    /// The estimated cost, in scattered runs.
    cost: u64,
}

impl Patterns {
    /// The patterns of the classes `members[member_start[c]..member_start[c + 1]]` (ascending
    /// ids) over a vocabulary of `vocab_len` ids.
    pub(super) fn new(vocab_len: usize, member_start: &[u32], members: &[TokenId]) -> Patterns {
        let min_runs = MIN_BIG_RUNS.max((vocab_len.div_ceil(32) / 256) as u32);
        Patterns::with_big(vocab_len, member_start, members, min_runs, MAX_BIG)
    }

    /// [`Patterns::new`] with at most `max_big` (≤ [`MAX_BIG`]) big classes, each in at least
    /// `min_runs` words (tests use it to cover both kinds on small vocabularies).
    pub(super) fn with_big(
        vocab_len: usize,
        member_start: &[u32],
        members: &[TokenId],
        min_runs: u32,
        max_big: usize,
    ) -> Patterns {
        let word_len = vocab_len.div_ceil(32);
        let class_len = member_start.len() - 1;
        let class_members =
            |c: usize| &members[member_start[c] as usize..member_start[c + 1] as usize];
        // Runs per class: members are ascending, so a new word is a new run.
        let run_count: Vec<u32> = (0..class_len)
            .map(|c| {
                let mut last = u32::MAX;
                let mut n = 0;
                for t in class_members(c) {
                    let w = t.as_u32() / 32;
                    n += u32::from(w != last);
                    last = w;
                }
                n
            })
            .collect();
        let mut big_classes: Vec<usize> = (0..class_len)
            .filter(|&c| run_count[c] >= min_runs.max(1))
            .collect();
        // The most runs first (ties: lower class), so groups hold classes of like size.
        big_classes.sort_by_key(|&c| (std::cmp::Reverse(run_count[c]), c));
        let per_group = ((1 << GROUP) - 1) * word_len * 4;
        let max_groups = MAX_GROUP_BYTES / per_group.max(1);
        big_classes.truncate(max_big.min(MAX_BIG).min(max_groups * GROUP));

        let mut p = Patterns {
            word_len,
            groups: Vec::new(),
            big: vec![NOT_BIG; class_len],
            big_classes: big_classes.iter().map(|&c| c as u32).collect(),
            single: vec![0; class_len.div_ceil(64)],
            multi: vec![0; class_len.div_ceil(64)],
            single_len: 0,
            multi_len: 0,
            multi_runs: 0,
            multi_mean: 0,
            single_run: vec![(0, 0); class_len],
            run_start: Vec::with_capacity(class_len + 1),
            runs: Vec::with_capacity(run_count.iter().map(|&r| r as usize).sum()),
            all: vec![0; word_len],
            all_big: vec![0; word_len],
            all_small: vec![0; word_len],
            pass_cost: (word_len as u64 / 24).max(1),
        };
        for (i, &c) in big_classes.iter().enumerate() {
            p.big[c] = i as u8;
        }
        for chunk in big_classes.chunks(GROUP) {
            let subsets = (1usize << chunk.len()) - 1;
            let mut masks = vec![0u32; subsets * word_len];
            for (j, &c) in chunk.iter().enumerate() {
                let mask = &mut masks[((1 << j) - 1) * word_len..(1 << j) * word_len];
                for t in class_members(c) {
                    mask[t.as_usize() / 32] |= 1 << (t.as_u32() % 32);
                }
            }
            // Every other subset is a smaller subset plus its lowest class.
            for s in 1..=subsets {
                let low = s & s.wrapping_neg();
                if low != s {
                    let (done, rest) = masks.split_at_mut((s - 1) * word_len);
                    let a = &done[(s ^ low) * word_len - word_len..(s ^ low) * word_len];
                    let b = &done[(low - 1) * word_len..low * word_len];
                    for ((m, &x), &y) in rest[..word_len].iter_mut().zip(a).zip(b) {
                        *m = x | y;
                    }
                }
            }
            for (a, &m) in p.all_big.iter_mut().zip(&masks[(subsets - 1) * word_len..]) {
                *a |= m;
            }
            let mut subset_runs = [0u32; 1 << GROUP];
            for (s, runs) in subset_runs.iter_mut().enumerate() {
                *runs = (0..chunk.len())
                    .filter(|j| s & (1 << j) != 0)
                    .map(|j| run_count[chunk[j]])
                    .sum();
            }
            p.groups.push(Group {
                classes: chunk.iter().map(|&c| c as u32).collect(),
                subset_runs,
                full: subsets as u8,
                masks,
            });
        }
        p.run_start.push(0);
        for c in 0..class_len {
            let start = p.runs.len();
            {
                for t in class_members(c) {
                    let (w, bit) = (t.as_u32() / 32, 1u32 << (t.as_u32() % 32));
                    if p.big[c] == NOT_BIG {
                        p.all_small[w as usize] |= bit;
                    }
                    match p.runs[start..].last_mut() {
                        Some((lw, bits)) if *lw == w => *bits |= bit,
                        _ => p.runs.push((w, bit)),
                    }
                }
                if p.big[c] != NOT_BIG {
                    // Runs kept for sets with few of its group's classes.
                } else if p.runs.len() - start == 1 {
                    p.single_run[c] = p.runs.pop().unwrap_or((0, 0));
                    p.single[c / 64] |= 1 << (c % 64);
                    p.single_len += 1;
                } else {
                    p.multi[c / 64] |= 1 << (c % 64);
                    p.multi_len += 1;
                    p.multi_runs += (p.runs.len() - start) as u64;
                }
            }
            p.run_start.push(p.runs.len() as u32);
        }
        p.multi_mean = (p.multi_runs << 8).checked_div(p.multi_len).unwrap_or(0);
        for ((a, &b), &s) in p.all.iter_mut().zip(&p.all_big).zip(&p.all_small) {
            *a = b | s;
        }
        p
    }

    /// Writes the words of `classes` (a set over these classes) into `words` (of the right
    /// length: the caller checks both).
    pub(super) fn expand(&self, classes: &ClassSet, words: &mut [u32]) {
        let plan = self.plan(classes);
        self.run(&plan, classes, words);
    }

    /// The cheapest way to expand `classes`.
    fn plan(&self, classes: &ClassSet) -> Plan {
        self.plan_with(classes, |_, _| true)
    }

    /// The cheapest way to expand `classes` among the ways `allowed(big_missing,
    /// small_missing)` (tests force each way).
    fn plan_with(&self, classes: &ClassSet, allowed: impl Fn(bool, bool) -> bool) -> Plan {
        let set = classes.words();
        let mut subsets = [0u8; MAX_BIG / GROUP];
        // Per group, reading its mask costs a pass; scattering its present classes (or, when
        // clearing from every big class, its missing ones) costs their runs.
        let (mut present_cost, mut missing_cost) = (0u64, self.pass_cost);
        let (mut present_streamed, mut missing_streamed) = (0u8, 0u8);
        let mut bits = 0u32;
        for (i, &c) in self.big_classes.iter().enumerate() {
            bits |= (((set[c as usize / 64] >> (c % 64)) & 1) as u32) << i;
        }
        for (g, group) in self.groups.iter().enumerate() {
            let s = (bits >> (g * GROUP)) as u8 & group.full;
            subsets[g] = s;
            let present_runs = u64::from(group.subset_runs[s as usize]);
            let missing_runs = u64::from(group.subset_runs[(group.full & !s) as usize]);
            if present_runs > self.pass_cost {
                present_streamed |= 1 << g;
            }
            present_cost += present_runs.min(self.pass_cost);
            if missing_runs > self.pass_cost {
                missing_streamed |= 1 << g;
            }
            missing_cost += missing_runs.min(self.pass_cost);
        }
        let (present_single, present_multi) = count_small(set, &self.single, &self.multi);
        // Runs of the multi-word classes, estimated from their mean.
        let runs = |single: u64, multi: u64| single + ((multi * self.multi_mean) >> 8);
        let present_small = runs(present_single, present_multi);
        let missing_small = runs(
            self.single_len - present_single,
            self.multi_len - present_multi,
        );
        // Clearing missing small classes needs every small class's bits in the pass: an extra
        // source unless the base is every class's.
        let options = [
            (false, false, present_cost + present_small),
            (false, true, present_cost + self.pass_cost + missing_small),
            (true, false, missing_cost + present_small),
            (true, true, missing_cost + missing_small),
        ];
        let (big_missing, small_missing, cost) = options
            .iter()
            .copied()
            .filter(|o| allowed(o.0, o.1))
            .min_by_key(|o| o.2)
            .unwrap_or((false, false, 0));
        Plan {
            subsets,
            streamed: if big_missing {
                missing_streamed
            } else {
                present_streamed
            },
            big_missing,
            small_missing,
            cost,
        }
    }

    fn run(&self, plan: &Plan, classes: &ClassSet, words: &mut [u32]) {
        let wl = self.word_len;
        let mut sources: [&[u32]; MAX_BIG / GROUP + 1] = [&[]; MAX_BIG / GROUP + 1];
        let mut n = 0;
        if plan.big_missing {
            for (g, group) in self.groups.iter().enumerate() {
                let missing = (group.full & !plan.subsets[g]) as usize;
                if plan.streamed & (1 << g) != 0 {
                    sources[n] = &group.masks[(missing - 1) * wl..missing * wl];
                    n += 1;
                }
            }
            let base = if plan.small_missing {
                &self.all
            } else {
                &self.all_big
            };
            combine(words, &[base], &sources[..n]);
        } else {
            for (g, group) in self.groups.iter().enumerate() {
                let present = plan.subsets[g] as usize;
                if plan.streamed & (1 << g) != 0 {
                    sources[n] = &group.masks[(present - 1) * wl..present * wl];
                    n += 1;
                }
            }
            if plan.small_missing {
                sources[n] = &self.all_small;
                n += 1;
            }
            combine(words, &sources[..n], &[]);
        }
        // The groups not streamed: their present (missing) classes, from their runs.
        for (g, group) in self.groups.iter().enumerate() {
            if plan.streamed & (1 << g) == 0 {
                let mut todo = if plan.big_missing {
                    group.full & !plan.subsets[g]
                } else {
                    plan.subsets[g]
                };
                while todo != 0 {
                    let c = group.classes[todo.trailing_zeros() as usize] as usize;
                    todo &= todo - 1;
                    let runs =
                        &self.runs[self.run_start[c] as usize..self.run_start[c + 1] as usize];
                    for &(w, bits) in runs {
                        if plan.big_missing {
                            words[w as usize] &= !bits;
                        } else {
                            words[w as usize] |= bits;
                        }
                    }
                }
            }
        }
        let set = classes.words();
        if plan.small_missing {
            self.scatter(set, |s| !s, words, |w, bits| *w &= !bits);
        } else {
            self.scatter(set, |s| s, words, |w, bits| *w |= bits);
        }
    }

    /// Applies `op` to the runs of the small classes in `pick(set word)`.
    #[inline]
    fn scatter(
        &self,
        set: &[u64],
        pick: impl Fn(u64) -> u64,
        words: &mut [u32],
        op: impl Fn(&mut u32, u32),
    ) {
        for (i, ((&s, &single), &multi)) in
            set.iter().zip(&self.single).zip(&self.multi).enumerate()
        {
            let s = pick(s);
            let mut b = s & single;
            while b != 0 {
                let (w, bits) = self.single_run[i * 64 + b.trailing_zeros() as usize];
                b &= b - 1;
                op(&mut words[w as usize], bits);
            }
            let mut b = s & multi;
            while b != 0 {
                let c = i * 64 + b.trailing_zeros() as usize;
                b &= b - 1;
                let runs = &self.runs[self.run_start[c] as usize..self.run_start[c + 1] as usize];
                for &(w, bits) in runs {
                    op(&mut words[w as usize], bits);
                }
            }
        }
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
        let plan = self.plan(classes);
        // Starting from a cached entry costs its copy (a pass) plus its differing classes.
        let fresh = plan.cost.saturating_sub(self.pass_cost);
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
            if u64::from(n) >= fresh {
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
                    self.toggle(c, words);
                }
            }
            None => self.run(&plan, classes, words),
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

    /// The cost of toggling each of `classes`, in scattered runs.
    fn cost_of(&self, classes: impl Iterator<Item = usize>) -> u64 {
        classes
            .map(|c| u64::from(self.run_start[c + 1] - self.run_start[c]).clamp(1, self.pass_cost))
            .sum()
    }

    /// Flips the bits of class `c`'s members.
    fn toggle(&self, c: usize, words: &mut [u32]) {
        match self.big[c] {
            NOT_BIG if self.single[c / 64] & (1 << (c % 64)) != 0 => {
                let (w, bits) = self.single_run[c];
                words[w as usize] ^= bits;
            }
            slot if slot == NOT_BIG
                || u64::from(self.run_start[c + 1] - self.run_start[c]) <= self.pass_cost =>
            {
                for &(w, bits) in
                    &self.runs[self.run_start[c] as usize..self.run_start[c + 1] as usize]
                {
                    words[w as usize] ^= bits;
                }
            }
            slot => {
                let (g, j) = (slot as usize / GROUP, slot as usize % GROUP);
                let wl = self.word_len;
                let mask = &self.groups[g].masks[((1 << j) - 1) * wl..(1 << j) * wl];
                for (w, &m) in words.iter_mut().zip(mask) {
                    *w ^= m;
                }
            }
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.groups
            .iter()
            .map(|g| g.classes.capacity() * 4 + g.masks.capacity() * 4)
            .sum::<usize>()
            + self.groups.capacity() * std::mem::size_of::<Group>()
            + self.big.capacity()
            + self.big_classes.capacity() * 4
            + (self.single.capacity() + self.multi.capacity()) * 8
            + self.single_run.capacity() * 8
            + self.run_start.capacity() * 4
            + self.runs.capacity() * 8
            + (self.all.capacity() + self.all_big.capacity() + self.all_small.capacity()) * 4
    }
}

/// The number of classes of `set` in `single` and in `multi` (sets over the same classes).
fn count_small(set: &[u64], single: &[u64], multi: &[u64]) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            // SAFETY: the CPU has AVX2 and POPCNT, checked just above.
            return unsafe { count_small_avx2(set, single, multi) };
        }
    }
    count_small_portable(set, single, multi)
}

/// [`count_small`] compiled with POPCNT and AVX2: the baseline target has no popcount
/// instruction, and its bit-twiddling count over Java's 76 set words cost about 60 ns of the
/// 430 ns an empty set takes on Llama 3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
fn count_small_avx2(set: &[u64], single: &[u64], multi: &[u64]) -> (u64, u64) {
    count_small_portable(set, single, multi)
}

#[inline(always)]
fn count_small_portable(set: &[u64], single: &[u64], multi: &[u64]) -> (u64, u64) {
    let (mut present_single, mut present_multi) = (0u64, 0u64);
    for ((&s, &single), &multi) in set.iter().zip(single).zip(multi) {
        present_single += u64::from((s & single).count_ones());
        present_multi += u64::from((s & multi).count_ones());
    }
    (present_single, present_multi)
}

/// `words = (pos[0] | pos[1] | …) & !(neg[0] | neg[1] | …)` (all zero without `pos`), every
/// slice as long as `words`: the one pass of an expansion.
fn combine(words: &mut [u32], pos: &[&[u32]], neg: &[&[u32]]) {
    // A fill or a copy is best left to the C library's memset and memcpy.
    match (pos, neg) {
        ([], _) => return words.fill(0),
        ([a], []) => return words.copy_from_slice(a),
        _ => {}
    }
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            unsafe { combine_avx2(words, pos, neg) };
            return;
        }
    }
    combine_portable(words, pos, neg);
}

/// [`combine`] compiled for AVX2: twice the width of the baseline's SSE2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn combine_avx2(words: &mut [u32], pos: &[&[u32]], neg: &[&[u32]]) {
    combine_portable(words, pos, neg);
}

/// One vectorisable loop over the words: `$i` indexes `$words` and every named source, cut to
/// one length so that the bounds checks go.
macro_rules! pass {
    ($words:ident, |$i:ident| $value:expr, $($s:ident),*) => {{
        let n = $words.len();
        $(let $s = &$s[..n];)*
        for $i in 0..n {
            $words[$i] = $value;
        }
    }};
}

/// [`combine`] with one loop per source count up to 5 ORed or 4 cleared sources (each loop
/// reads every source once), and further passes over the words for more.
#[inline(always)]
fn combine_portable(words: &mut [u32], pos: &[&[u32]], neg: &[&[u32]]) {
    let rest = if let ([a], false) = (pos, neg.is_empty()) {
        // One source to clear others from: fused in one loop.
        let (first, rest) = neg.split_at(neg.len().min(4));
        match first {
            [x] => pass!(words, |i| a[i] & !x[i], a, x),
            [x, y] => pass!(words, |i| a[i] & !(x[i] | y[i]), a, x, y),
            [x, y, z] => pass!(words, |i| a[i] & !(x[i] | y[i] | z[i]), a, x, y, z),
            [x, y, z, u] => {
                pass!(
                    words,
                    |i| a[i] & !(x[i] | y[i] | z[i] | u[i]),
                    a,
                    x,
                    y,
                    z,
                    u
                )
            }
            _ => unreachable!("1 to 4 sources"),
        }
        rest
    } else {
        let (first, more) = pos.split_at(pos.len().min(5));
        match first {
            [] => {
                words.fill(0);
                return;
            }
            [a] => words.copy_from_slice(a),
            [a, b] => pass!(words, |i| a[i] | b[i], a, b),
            [a, b, c] => pass!(words, |i| a[i] | b[i] | c[i], a, b, c),
            [a, b, c, d] => pass!(words, |i| a[i] | b[i] | c[i] | d[i], a, b, c, d),
            [a, b, c, d, e] => {
                pass!(words, |i| a[i] | b[i] | c[i] | d[i] | e[i], a, b, c, d, e)
            }
            _ => unreachable!("0 to 5 sources"),
        }
        for chunk in more.chunks(4) {
            match chunk {
                [a] => pass!(words, |i| words[i] | a[i], a),
                [a, b] => pass!(words, |i| words[i] | a[i] | b[i], a, b),
                [a, b, c] => pass!(words, |i| words[i] | a[i] | b[i] | c[i], a, b, c),
                [a, b, c, d] => pass!(words, |i| words[i] | a[i] | b[i] | c[i] | d[i], a, b, c, d),
                _ => unreachable!("chunks of 1 to 4"),
            }
        }
        neg
    };
    for chunk in rest.chunks(4) {
        match chunk {
            [x] => pass!(words, |i| words[i] & !x[i], x),
            [x, y] => pass!(words, |i| words[i] & !(x[i] | y[i]), x, y),
            [x, y, z] => pass!(words, |i| words[i] & !(x[i] | y[i] | z[i]), x, y, z),
            [x, y, z, u] => pass!(
                words,
                |i| words[i] & !(x[i] | y[i] | z[i] | u[i]),
                x,
                y,
                z,
                u
            ),
            _ => unreachable!("chunks of 1 to 4"),
        }
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
    use proptest::prelude::*;

    /// `(member_start, members)` of classes given as member lists.
    fn layout(classes: &[Vec<u32>]) -> (Vec<u32>, Vec<TokenId>) {
        let mut members: Vec<TokenId> = Vec::new();
        let mut member_start = vec![0u32];
        for class in classes {
            members.extend(class.iter().map(|&t| TokenId::from(t)));
            member_start.push(members.len() as u32);
        }
        (member_start, members)
    }

    /// The mask of `set`, one member at a time.
    fn naive(classes: &[Vec<u32>], vocab_len: usize, set: &ClassSet) -> Vec<u32> {
        let mut want = vec![0u32; vocab_len.div_ceil(32)];
        for c in set.iter() {
            for &t in &classes[c.as_usize()] {
                want[t as usize / 32] |= 1 << (t % 32);
            }
        }
        want
    }

    /// Class 0 is big (a member in every word), class 1 small with two far-apart members,
    /// class 2 a single member; expand every subset from garbage words, fresh and cached.
    #[test]
    fn big_and_small_classes_expand_exactly() {
        let classes = vec![(0..320).step_by(3).collect(), vec![1, 301], vec![2]];
        let (member_start, members) = layout(&classes);
        let p = Patterns::with_big(330, &member_start, &members, 2, 1);
        assert_eq!(p.big, [0, NOT_BIG, NOT_BIG]);
        assert_eq!((p.single_len, p.multi_len, p.multi_runs), (1, 1, 2));
        let mut cache = ExpandCache::with_capacity(2);
        for subset in 0u32..8 {
            let mut set = ClassSet::new(3);
            set.extend(
                (0..3)
                    .filter(|c| subset & (1 << c) != 0)
                    .map(ClassId::from_usize),
            );
            let want = naive(&classes, 330, &set);
            let mut words = vec![0x5555_5555; 11];
            p.expand(&set, &mut words);
            assert_eq!(words, want, "subset {subset:03b}");
            words.fill(u32::MAX);
            p.expand_cached(&mut cache, &set, &mut words);
            assert_eq!(words, want, "cached subset {subset:03b}");
        }
    }

    /// 40 one-member classes in different words: a set differing from a cached one in one
    /// class is built from it by toggling that class (1 store against 20 from scratch).
    #[test]
    fn cached_expansion_from_the_nearest_set() {
        let classes: Vec<Vec<u32>> = (0..40u32).map(|c| vec![c * 33]).collect();
        let (member_start, members) = layout(&classes);
        let p = Patterns::new(40 * 33, &member_start, &members);
        let mut cache = ExpandCache::with_capacity(2);
        let mut a = ClassSet::new(40);
        a.extend((0..40).step_by(2).map(ClassId::from_usize));
        let mut words = vec![0u32; (40 * 33usize).div_ceil(32)];
        p.expand_cached(&mut cache, &a, &mut words);
        assert_eq!(words, naive(&classes, 40 * 33, &a));
        let plan = p.plan(&a);
        assert_eq!(
            (plan.cost, plan.big_missing, plan.small_missing),
            (20, false, false)
        );
        // One more class, then one fewer: both from the cached neighbour.
        let mut b = a.clone();
        b.insert(ClassId::from_usize(7));
        let mut c = a.clone();
        c.remove(ClassId::from_usize(0));
        for set in [&b, &c, &a, &b] {
            words.fill(0xffff_ffff);
            p.expand_cached(&mut cache, set, &mut words);
            assert_eq!(words, naive(&classes, 40 * 33, set));
        }
        assert_eq!(cache.entries.len(), 2);
        assert_eq!(differing(&a, &b), 1);
        assert_eq!(Differing::new(&b, &c).collect::<Vec<_>>(), [0, 7]);
    }

    /// A set lacking one of 40 one-word classes clears that class from every class's bits; a
    /// set holding one ORs that class into zeros; a big class's group is read as a mask only
    /// when its present classes fall in more words than a pass costs.
    #[test]
    fn plan_takes_the_cheaper_side() {
        let classes: Vec<Vec<u32>> = (0..40u32).map(|c| vec![c * 33]).collect();
        let (member_start, members) = layout(&classes);
        let p = Patterns::new(40 * 33, &member_start, &members);
        let mut set = ClassSet::full(40);
        set.remove(ClassId::from_usize(3));
        let plan = p.plan(&set);
        assert!(plan.small_missing && !plan.big_missing);
        let mut set = ClassSet::new(40);
        set.insert(ClassId::from_usize(3));
        let plan = p.plan(&set);
        assert!(!plan.small_missing && !plan.big_missing);
        assert_eq!(plan.cost, 1);

        // Class 0 in each of 64 words, class 1 in 2 of them: both big, one group.
        let classes = vec![(0..64 * 32).step_by(32).collect(), vec![1, 33]];
        let (member_start, members) = layout(&classes);
        let p = Patterns::with_big(64 * 32, &member_start, &members, 2, MAX_BIG);
        assert_eq!((p.groups.len(), p.pass_cost), (1, 2));
        let mut set = ClassSet::new(2);
        set.insert(ClassId::from_usize(1));
        let plan = p.plan(&set);
        assert_eq!((plan.subsets[0], plan.streamed, plan.cost), (0b10, 0, 2));
        set.insert(ClassId::from_usize(0));
        set.remove(ClassId::from_usize(1));
        let plan = p.plan(&set);
        assert_eq!((plan.subsets[0], plan.streamed & 1), (0b01, 1));
    }

    /// Every source count `combine` has a loop for, and one past them: the dispatched pass
    /// (AVX2 where the CPU has it) equals the portable one and the formula.
    #[test]
    fn combine_matches_its_formula() {
        let n = 37;
        let source = |k: u32| -> Vec<u32> {
            (0..n as u32)
                .map(|i| (i + 1).wrapping_mul(0x9e37_79b9).rotate_left(k * 7) ^ k)
                .collect()
        };
        let sources: Vec<Vec<u32>> = (0..20).map(source).collect();
        let refs: Vec<&[u32]> = sources.iter().map(|s| &s[..]).collect();
        let mut shapes: Vec<(usize, usize)> = (0..=10).map(|p| (p, 0)).collect();
        shapes.extend((1..=10).map(|k| (1, k)));
        shapes.extend([(2, 1), (3, 5), (7, 9)]);
        for (p, k) in shapes {
            let (pos, neg) = (&refs[..p], &refs[p..p + k]);
            let want: Vec<u32> = (0..n)
                .map(|i| {
                    let or = pos.iter().fold(0, |a, s| a | s[i]);
                    let not = neg.iter().fold(0, |a, s| a | s[i]);
                    if p == 0 {
                        0
                    } else {
                        or & !not
                    }
                })
                .collect();
            let mut words = vec![0xdead_beef; n];
            combine(&mut words, pos, neg);
            assert_eq!(words, want, "{p} sources, {k} cleared");
            words.fill(1);
            combine_portable(&mut words, pos, neg);
            assert_eq!(words, want, "portable: {p} sources, {k} cleared");
        }
    }

    /// The dispatched count (POPCNT and AVX2 where the CPU has them) equals the portable one.
    #[test]
    fn count_small_matches_portable() {
        let words: Vec<u64> = (1..=77u64).map(splitmix).collect();
        let single: Vec<u64> = words.iter().map(|w| splitmix(*w)).collect();
        let multi: Vec<u64> = single.iter().map(|w| splitmix(*w) & !w).collect();
        let want = count_small_portable(&words, &single, &multi);
        let by_hand = words
            .iter()
            .zip(&single)
            .zip(&multi)
            .fold((0, 0), |(a, b), ((w, s), m)| {
                (
                    a + u64::from((w & s).count_ones()),
                    b + u64::from((w & m).count_ones()),
                )
            });
        assert_eq!(want, by_hand);
        assert_eq!(count_small(&words, &single, &multi), want);
    }

    /// Classes with a skewed size distribution (a few large ones, many of one or two tokens),
    /// some ids in no class, numbered by lowest member; random big-class parameters.
    fn vocabulary() -> impl Strategy<Value = (usize, Vec<Vec<u32>>, u32, usize)> {
        (
            0usize..1500,
            1usize..60,
            any::<u64>(),
            1u32..6,
            0usize..=MAX_BIG,
        )
            .prop_map(|(vocab_len, k, seed, min_runs, max_big)| {
                let mut x = seed;
                let mut by_class: Vec<Vec<u32>> = vec![Vec::new(); k];
                for t in 0..vocab_len as u32 {
                    x = splitmix(x);
                    let r = (x >> 32) as usize;
                    if r % 10 == 9 {
                        continue; // a special token
                    }
                    // Class i with probability about 2^-(i+1): low classes are large.
                    let i = (x as u32).trailing_zeros() as usize;
                    by_class[if i < k { i } else { r % k }].push(t);
                }
                let mut classes: Vec<Vec<u32>> =
                    by_class.into_iter().filter(|c| !c.is_empty()).collect();
                classes.sort_by_key(|c| c[0]);
                (vocab_len, classes, min_runs, max_big)
            })
    }

    /// A vocabulary the size of Gemma 3's or Llama 3's shaped like Java's classes: 40 large
    /// classes over most tokens, and thousands of small ones (mostly one token, some of two
    /// to twenty tokens anywhere), numbered by lowest member.
    fn java_like() -> impl Strategy<Value = (usize, Vec<Vec<u32>>)> {
        (100_000usize..300_000, 500usize..5000, any::<u64>()).prop_map(
            |(vocab_len, small, seed)| {
                let mut x = seed;
                let mut class_of = vec![u32::MAX; vocab_len];
                let mut next = 40;
                for _ in 0..small {
                    x = splitmix(x);
                    let size = if x % 8 == 0 { 2 + (x >> 8) % 19 } else { 1 };
                    for _ in 0..size {
                        x = splitmix(x);
                        class_of[(x % vocab_len as u64) as usize] = next;
                    }
                    next += 1;
                }
                let mut by_class: Vec<Vec<u32>> = vec![Vec::new(); next as usize];
                for (t, c) in class_of.iter().enumerate() {
                    x = splitmix(x);
                    let c = match *c {
                        u32::MAX if x % 50 == 0 => continue, // a special token
                        u32::MAX => (x >> 32).trailing_zeros().min(39),
                        c => c,
                    };
                    by_class[c as usize].push(t as u32);
                }
                let mut classes: Vec<Vec<u32>> =
                    by_class.into_iter().filter(|c| !c.is_empty()).collect();
                classes.sort_by_key(|c| c[0]);
                (vocab_len, classes)
            },
        )
    }

    fn splitmix(x: u64) -> u64 {
        let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A set holding each of `n` classes with probability `percent`%, drawn from `x`.
    fn random_set(n: usize, percent: u64, x: &mut u64) -> ClassSet {
        let mut set = ClassSet::new(n);
        for c in 0..n {
            *x = splitmix(*x);
            if *x % 100 < percent {
                set.insert(ClassId::from_usize(c));
            }
        }
        set
    }

    /// Expands `set` as planned and in every `(big_missing, small_missing)` way, whatever it
    /// costs, each from garbage words into `words`; all must equal the per-member expansion,
    /// which is returned.
    fn expand_every_way(
        p: &Patterns,
        classes: &[Vec<u32>],
        vocab_len: usize,
        set: &ClassSet,
        words: &mut [u32],
    ) -> Result<Vec<u32>, TestCaseError> {
        let want = naive(classes, vocab_len, set);
        words.fill(0xa5a5_a5a5);
        p.expand(set, words);
        prop_assert_eq!(&*words, &want[..], "expand {:?}", set);
        for (big_missing, small_missing) in
            [(false, false), (false, true), (true, false), (true, true)]
        {
            let plan = p.plan_with(set, |b, s| (b, s) == (big_missing, small_missing));
            prop_assert_eq!(
                (plan.big_missing, plan.small_missing),
                (big_missing, small_missing)
            );
            words.fill(0x5a5a_5a5a);
            p.run(&plan, set, words);
            prop_assert_eq!(&*words, &want[..], "{:?} {:?}", plan, set);
        }
        Ok(want)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// `expand` and `expand_cached` equal the per-member expansion for sets of every
        /// density (empty and full included), from garbage words; bits past the vocabulary
        /// stay clear.
        #[test]
        fn expansion_equals_naive(
            (vocab_len, classes, min_runs, max_big) in vocabulary(),
            sets in prop::collection::vec((0u64..=100, any::<u64>()), 1..12),
        ) {
            let (member_start, members) = layout(&classes);
            let p = Patterns::with_big(vocab_len, &member_start, &members, min_runs, max_big);
            let n = classes.len();
            let mut cache = ExpandCache::with_capacity(3);
            let mut words = vec![0u32; vocab_len.div_ceil(32)];
            for (percent, mut seed) in sets {
                let set = random_set(n, percent, &mut seed);
                let want = expand_every_way(&p, &classes, vocab_len, &set, &mut words)?;
                if vocab_len % 32 != 0 {
                    prop_assert_eq!(words[words.len() - 1] >> (vocab_len % 32), 0);
                }
                words.fill(u32::MAX);
                p.expand_cached(&mut cache, &set, &mut words);
                prop_assert_eq!(&words, &want, "expand_cached {:?}", set);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(6))]

        /// On vocabularies of real size with thousands of small classes: every way of
        /// expanding sets of every density (empty, full, complements of a few) equals the
        /// per-member expansion.
        #[test]
        fn big_vocabularies_expand_exactly(
            (vocab_len, classes) in java_like(),
            seed in any::<u64>(),
        ) {
            let (member_start, members) = layout(&classes);
            let p = Patterns::new(vocab_len, &member_start, &members);
            let n = classes.len();
            let mut words = vec![0u32; vocab_len.div_ceil(32)];
            let mut x = seed;
            for percent in [0, 1, 10, 50, 90, 99, 100] {
                let set = random_set(n, percent, &mut x);
                expand_every_way(&p, &classes, vocab_len, &set, &mut words)?;
            }
        }
    }
}
