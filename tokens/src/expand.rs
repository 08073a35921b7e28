//! Expanding a [`ClassSet`] into token-mask words in about one pass over the words.
//!
//! [`Expander`] is the one expansion engine of the workspace: [`TokenClasses`] keeps one over
//! its token classes (the trie and spanner maskers expand through it), and the weighted
//! automaton builds one over its blocks (unions of classes) when it is built or loaded.
//! [`ExpandCache`] is the caller's scratch of recent expansions; [`Tables`] says whether the
//! caller's sets find the tables warm or cold, which sets the prices.
//!
//! [`TokenClasses`]: super::TokenClasses
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
//!   the pass starts from every small class's bits and the missing ones are cleared. Where the
//!   CPU has AVX-512 VBMI and BITALG and BMI2, a set that holds many runs either way can have
//!   every small token written at once instead, fused with the pass ([`Deposit`]: the cost of
//!   a few passes, whatever the set). The deposit also writes the big classes of the groups
//!   of few tokens (at most [`MAX_DEPOSIT_GROUP_TOKENS`]), so its pass reads only the masks of
//!   the groups of many.
//! - **Learned unions.** A pass that would read the masks of several groups reads their union
//!   instead once [`Unions`] has learned it (the second time the combination is met; shared
//!   by every caller, at most 1 MiB): real masks meet few combinations.
//! - **Bases.** A masker's mask at a lexer point holds only classes alive there, so the sets
//!   alive at lexer points (hints given to [`Expander::new`]) that cost more than three passes
//!   from scratch get their masks precomputed (at most [`MAX_BASES`], the costliest: 0.5 MiB
//!   at Llama 3, 1 MiB at Gemma 3). A set that costs as much looks up the bases equal to it
//!   on [`PROBE`] set words (those where the bases differ most), prices starting from each (a
//!   copy, the big classes that differ ORed or cleared in the same pass or from their runs,
//!   the small ones scattered in one pass over the set words that skips equal words), and
//!   takes the cheapest when cheaper. [`ExpandCache`] entries are bases too: the nearest
//!   recent expansion on the probe words is priced the same way.
//!
//! The plan is priced per set from the set's bits of the big classes and popcounts of its
//! words, never by walking its members. The pass is compiled twice, portable and with AVX2
//! (picked at run time), because its speed is the load and store width.
//!
//! What the deposit is for: without it, a set that holds about half of many small classes
//! (random sets over Java's thousands of one-token classes) needs one scattered store per
//! class. Real Java masks meet this too: some hold about half of the 4,400 classes alive at the
//! start (what the parser allows splits the identifier-like classes), about 1,500 runs from
//! every alive set, every union of their atoms, and from every class or none, so no base
//! helps. The deposit writes them at a cost that does not depend on the set, and with few big
//! classes (see [`BIG_RUNS_DIVISOR`]) what is left is mostly the pass over the groups and a
//! gather over five tables of class bytes: Llama 3 × Java's random half of its classes takes
//! about 0.8 µs (`EXPAND_MIN_ONLY=1 cargo bench -p munch-tokens --bench expand`).

use munch_vocab::bits;

use super::deposit::{low_bits, Deposit};
use super::kernels::{combine, count_in, Words};
use super::unions::Unions;
use super::ClassSet;
use munch_vocab::TokenId;

/// Classes per group of big classes: a group keeps `2^GROUP - 1` masks.
const GROUP: usize = 4;
/// The most big classes: the pass reads at most `MAX_BIG / GROUP` group masks plus one.
pub(super) const MAX_BIG: usize = 32;
/// The most bytes of group masks (each group keeps 15 masks of the vocabulary's words): 2 MiB
/// holds all [`MAX_BIG`] classes up to 140k tokens (Llama 3: 1.8 MiB), 16 at 262k (Gemma 3,
/// whose 8 largest classes hold 98% of its tokens already).
const MAX_GROUP_BYTES: usize = 2 << 20;
/// A class is big only if its members fall in at least `max(words / BIG_RUNS_DIVISOR, 8)` words:
/// below that, scattering its runs costs less than reading its group's mask.
const MIN_BIG_RUNS: u32 = 8;
/// Fewer big classes mean fewer groups to read, and the classes left out are cheap to scatter
/// (or to deposit). In `cargo bench -p munch-tokens --bench expand`, `words / 256` is faster
/// on no case and much slower on some (Gemma 3 × Java's sets alive at the start: 0.74–0.80 µs
/// against 0.33), and `words / 16` is slower on Gemma 3 × JSON's random half (1.43 against
/// 1.03).
const BIG_RUNS_DIVISOR: usize = 32;
const NOT_BIG: u8 = u8::MAX;
/// A group of big classes with at most this many tokens is written by the deposit route (as
/// its slots) rather than read as a mask in its pass: a mask read costs about as much as the
/// gather of 3,000–4,000 slots.
const MAX_DEPOSIT_GROUP_TOKENS: usize = 3_000;
/// The most bases (precomputed expansions of sets alive from a lexer point): 0.5 MiB of masks
/// at Llama 3's 128k tokens, 1 MiB at Gemma 3's 262k. Pricing one costs a full count of the
/// set's words, so only those equal to the set on [`PROBE`] words are priced.
const MAX_BASES: usize = 32;
/// Set words compared with every base (and cached expansion) to find the near ones.
pub(crate) const PROBE: usize = 8;

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

/// A precomputed expansion: a set of classes and its token mask. A set near it (a subset of a
/// set alive from a lexer point, where a masker's mask lies) starts from its mask and scatters
/// only the classes that differ.
#[derive(Clone, Debug)]
struct Base {
    set: Vec<u64>,
    /// Bit `i`: big class `big_classes[i]` is in the set.
    big: u32,
    mask: Vec<u32>,
    /// `set[probe[j]]` for each of [`Expander::probe`].
    probe: [u64; PROBE],
}

/// The expansion engine of one set of classes over one vocabulary: the precomputed patterns
/// that turn a set of classes (a bitset, in the layout of [`ClassSet::words`]) into token-mask
/// words. Immutable but for the learned unions (shared by threads); scratch is the caller's
/// [`ExpandCache`].
///
/// [`TokenClasses`](super::TokenClasses) keeps one over its token classes; a masker whose
/// tables name other sets of tokens (the weighted automaton's blocks of classes) builds its own
/// with [`Expander::new`].
#[derive(Clone, Debug)]
pub struct Expander {
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
    /// Precomputed expansions of the costliest sets alive from a lexer point.
    bases: Vec<Base>,
    /// The set-independent route for the small classes and the big classes of groups
    /// `deposit_from..`, where the CPU runs it.
    deposit: Option<Deposit>,
    /// The first group whose classes the deposit writes (the groups before it are read in its
    /// pass): the groups of few tokens cost less as slots of the deposit than as masks.
    deposit_from: usize,
    /// The set words (indices) where the bases differ most.
    probe: [usize; PROBE],
    /// The unions of group masks that passes read together, learned from the sets expanded.
    unions: Unions,
    /// Whether the tables are warm where sets are expanded (what the prices assume).
    tables: Tables,
}

/// Where an [`Expander`]'s caller expands sets, which sets its prices (every way writes the
/// same words; only the speed differs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tables {
    /// The sets reaching the expander keep its tables in the CPU's caches: scattered runs are
    /// cheap, and a miss of [`Expander::expand_cached`] may start from a near cached
    /// expansion or a base (the trie and spanner maskers, which expand most masks they make).
    #[default]
    Warm,
    /// The caller answers most masks without the expander (from its own result cache, as the
    /// weighted automaton does), so a set that reaches it finds the tables cold: each
    /// scattered run is then a random read, while the deposit route and the passes read in
    /// order, so the route is priced at a sixth of its warm price; and a miss of
    /// [`Expander::expand_cached`] starts from nothing, since pricing a near start reads cold
    /// cache entries and bases and costs more than such a start saves.
    Cold,
}

/// How [`Expander::expand`] or [`Expander::expand_cached`] wrote a mask, with the estimated
/// cost of the way taken in scattered runs (for profiling: every way writes the same words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expanded {
    /// A copy of a cached expansion of the same set.
    Repeat,
    /// From nothing.
    Scratch(u64),
    /// From a cached expansion of a near set.
    Entry(u64),
    /// From a base (a precomputed expansion of a hinted set).
    Base(u64),
}

impl Default for Expander {
    /// The expander of no classes over an empty vocabulary.
    fn default() -> Self {
        Expander::new(0, &[0], &[], &[])
    }
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
    /// How the small classes are written.
    small: Small,
    /// The estimated cost, in scattered runs.
    cost: u64,
    /// Bit `i`: big class `big_classes[i]` is in the set.
    big: u32,
}

/// How a fresh expansion writes the small classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Small {
    /// OR in the runs of the present ones.
    Present,
    /// Start from every small class and clear the runs of the missing ones.
    Missing,
    /// Every small token at once, at a cost that does not depend on the set (see
    /// [`Deposit`]), fused with the pass (big classes ORed in only).
    Deposit,
}

/// How one set is expanded from a base (a [`Base`] or a cached expansion): the base's mask,
/// with the big classes that differ ORed or cleared in the same pass (or from their runs), then
/// the small classes that differ scattered.
#[derive(Clone, Copy, Debug)]
struct Delta {
    /// Per group, the subset of its classes in the set but not in the base, and in the base
    /// but not in the set.
    add: [u8; MAX_BIG / GROUP],
    remove: [u8; MAX_BIG / GROUP],
    /// Bit `g`: group `g`'s added (removed) classes are read from its masks in the pass;
    /// otherwise they are scattered from their runs.
    add_streamed: u8,
    remove_streamed: u8,
    /// The estimated cost, in scattered runs (the pass included).
    cost: u64,
}

impl Expander {
    /// The patterns of the classes `members[member_start[c]..member_start[c + 1]]` (ascending
    /// ids below `vocab_len`) over a vocabulary of `vocab_len` ids. `alive` hints at sets that
    /// masks are subsets of (the classes alive from a lexer point): the costliest become bases.
    ///
    /// A class may have no members (one that no mask can hold, say): it costs nothing and is
    /// written by no way of expanding, so a set may hold it or not.
    ///
    /// # Panics
    /// If `member_start` is empty or not ascending, or a member is not below `vocab_len`.
    pub fn new(
        vocab_len: usize,
        member_start: &[u32],
        members: &[TokenId],
        alive: &[ClassSet],
    ) -> Expander {
        Expander::with_tables(vocab_len, member_start, members, alive, Tables::Warm)
    }

    /// A bound on the bytes [`Expander::new`] allocates for `token_len` text tokens in
    /// `class_len` classes over `vocab_len` ids with `alive_len` hinted sets, its temporaries
    /// and the unions it may learn later included: the group masks (at most
    /// [`MAX_GROUP_BYTES`]), the bases' and the three whole-vocabulary masks, the unions (at
    /// most [`MAX_UNION_BYTES`](super::unions::MAX_UNION_BYTES)), and a few words per token
    /// and per class (runs, the deposit's slots).
    pub(crate) fn bound_bytes(
        vocab_len: usize,
        token_len: usize,
        class_len: usize,
        alive_len: usize,
    ) -> usize {
        let word_len = vocab_len.div_ceil(32);
        let class_words = class_len.div_ceil(64);
        let fixed = 2 * MAX_GROUP_BYTES + super::unions::MAX_UNION_BYTES + (64 << 10);
        let masks = word_len.saturating_mul(4 * (4 + MAX_BASES) + 16);
        let sets = (MAX_BASES + 4).saturating_mul(class_words * 8 + 64);
        fixed
            .saturating_add(masks)
            .saturating_add(sets)
            .saturating_add(token_len.saturating_mul(32))
            .saturating_add(class_len.saturating_mul(48))
            .saturating_add(alive_len.saturating_mul(16))
    }

    /// [`Expander::new`], priced for where the caller expands (see [`Tables`]).
    pub fn with_tables(
        vocab_len: usize,
        member_start: &[u32],
        members: &[TokenId],
        alive: &[ClassSet],
        tables: Tables,
    ) -> Expander {
        let min_runs = MIN_BIG_RUNS.max((vocab_len.div_ceil(32) / BIG_RUNS_DIVISOR) as u32);
        let big = (min_runs, MAX_BIG, MAX_DEPOSIT_GROUP_TOKENS);
        let mut p = Expander::with_big(vocab_len, member_start, members, big, &[]);
        p.tables = tables;
        p.add_bases(alive);
        p
    }

    /// [`Expander::new`] with at most `max_big` (≤ [`MAX_BIG`]) big classes, each in at least
    /// `min_runs` words, and the groups after the last one of more than `deposit_tokens`
    /// tokens written by the deposit (tests use it to cover every kind on small vocabularies).
    pub(super) fn with_big(
        vocab_len: usize,
        member_start: &[u32],
        members: &[TokenId],
        (min_runs, max_big, deposit_tokens): (u32, usize, usize),
        alive: &[ClassSet],
    ) -> Expander {
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

        let mut p = Expander {
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
            bases: Vec::new(),
            probe: [0; PROBE],
            deposit: None,
            deposit_from: 0,
            unions: Unions::new(word_len),
            tables: Tables::Warm,
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
                if p.big[c] != NOT_BIG || p.runs.len() == start {
                    // Runs kept for sets with few of its group's classes; or no members.
                } else if p.runs.len() - start == 1 {
                    p.single_run[c] = p.runs.pop().unwrap_or((0, 0));
                    bits::insert(&mut p.single, c);
                    p.single_len += 1;
                } else {
                    bits::insert(&mut p.multi, c);
                    p.multi_len += 1;
                    p.multi_runs += (p.runs.len() - start) as u64;
                }
            }
            p.run_start.push(p.runs.len() as u32);
        }
        p.multi_mean = (p.multi_runs << 8).checked_div(p.multi_len).unwrap_or(0);
        // The deposit writes the groups after the last one with many tokens too.
        let group_tokens = |g: &Group| -> usize {
            g.classes
                .iter()
                .map(|&c| class_members(c as usize).len())
                .sum()
        };
        p.deposit_from = p
            .groups
            .iter()
            .rposition(|g| group_tokens(g) > deposit_tokens)
            .map_or(0, |g| g + 1);
        let in_deposit =
            |c: usize| p.big[c] == NOT_BIG || p.big[c] as usize / GROUP >= p.deposit_from;
        let mut deposit_tokens: Vec<(u32, u32)> = (0..class_len)
            .filter(|&c| in_deposit(c))
            .flat_map(|c| class_members(c).iter().map(move |t| (t.as_u32(), c as u32)))
            .collect();
        deposit_tokens.sort_unstable();
        p.deposit = Deposit::new(word_len, class_len, &deposit_tokens);
        for ((a, &b), &s) in p.all.iter_mut().zip(&p.all_big).zip(&p.all_small) {
            *a = b | s;
        }
        p.add_bases(alive);
        p
    }

    /// Precomputes the expansions of the [`MAX_BASES`] sets of `alive` that cost the most to
    /// expand from scratch (those that cost at most two passes gain nothing), and picks the
    /// set words where they differ most as the probe.
    fn add_bases(&mut self, alive: &[ClassSet]) {
        let mut costly: Vec<(u64, usize)> = alive
            .iter()
            .enumerate()
            .filter(|(_, a)| a.words().len() == self.single.len())
            .map(|(i, a)| (self.plan(a.words()).cost, i))
            .filter(|&(cost, _)| self.worth_a_base(cost))
            .collect();
        // The costliest first; ties by hint order, so the choice is deterministic.
        costly.sort_by_key(|&(cost, i)| (std::cmp::Reverse(cost), i));
        costly.truncate(MAX_BASES);
        let set_words = self.single.len();
        // A word's score: over pairs of bases, the classes in which they differ there.
        let mut score: Vec<(u64, usize)> = (0..set_words).map(|w| (0, w)).collect();
        for (x, &(_, i)) in costly.iter().enumerate() {
            for &(_, j) in &costly[..x] {
                for (w, sc) in score.iter_mut().enumerate() {
                    let d = alive[i].words()[w] ^ alive[j].words()[w];
                    sc.0 += u64::from(d.count_ones());
                }
            }
        }
        score.sort_by_key(|&(sc, w)| (std::cmp::Reverse(sc), w));
        for (j, probe) in self.probe.iter_mut().enumerate() {
            *probe = match score.get(j) {
                Some(&(sc, w)) if sc > 0 => w,
                // No bases differ here: spread over the set (they probe the cache too).
                _ => j * set_words / PROBE,
            };
        }
        for &(_, i) in &costly {
            let set = &alive[i];
            let mut mask = vec![0u32; self.word_len];
            let words = set.words();
            self.expand(words, &mut mask);
            self.bases.push(Base {
                set: words.to_vec(),
                big: self.big_bits(words),
                mask,
                probe: self.probe_of(words),
            });
        }
    }

    /// What a scattered run costs, in the units of a warm one.
    #[inline]
    fn run_weight(&self) -> u64 {
        match self.tables {
            Tables::Warm => 1,
            Tables::Cold => 6,
        }
    }

    /// Bit `i`: big class `big_classes[i]` is in `set`.
    #[inline]
    fn big_bits(&self, set: &[u64]) -> u32 {
        let mut bits = 0u32;
        for (i, &c) in self.big_classes.iter().enumerate() {
            bits |= (((set[c as usize / 64] >> (c % 64)) & 1) as u32) << i;
        }
        bits
    }

    /// Mask words: `vocab_len / 32`, rounded up.
    pub fn word_len(&self) -> usize {
        self.word_len
    }

    /// `u64` words of a set of these classes.
    pub fn set_len(&self) -> usize {
        self.single.len()
    }

    /// Writes the members of the classes in `set` (a bitset of [`set_len`](Expander::set_len)
    /// words; bits past the classes clear) into `words` ([`word_len`](Expander::word_len) of
    /// them), clearing every other bit; says how.
    ///
    /// # Panics
    /// If either length is not the expander's.
    pub fn expand(&self, set: &[u64], words: &mut [u32]) -> Expanded {
        self.check(set, words);
        let plan = self.plan(set);
        if self.worth_a_base(plan.cost) {
            if let Some((b, delta)) = self.nearest_base(set, &self.probe_of(set), plan.big) {
                if delta.cost < self.to_beat(&plan) {
                    let base = &self.bases[b];
                    self.run_from(&base.mask, &base.set, &delta, set, words);
                    return Expanded::Base(delta.cost);
                }
            }
        }
        self.run(&plan, set, words);
        Expanded::Scratch(plan.cost)
    }

    /// The estimated cost of expanding `set` from nothing, in scattered runs (for profiling).
    pub fn cost(&self, set: &[u64]) -> u64 {
        assert_eq!(set.len(), self.set_len(), "a set of other classes");
        self.plan(set).cost
    }

    #[inline]
    fn check(&self, set: &[u64], words: &[u32]) {
        assert_eq!(
            words.len(),
            self.word_len,
            "mask words for another vocabulary"
        );
        assert_eq!(set.len(), self.set_len(), "a set of other classes");
    }

    /// The cost a start from a base or a cached expansion must be below to be taken instead
    /// of `plan`. Such a start walks the runs of the classes that differ, which cost several
    /// times their hot price when the run tables are cold, as they are between a masker's
    /// masks; the deposit reads its tables in order. So against the deposit a start must cost
    /// at most a third of it: on the trie masker's masks along Go files with Llama 3, starts
    /// priced just under the deposit took 4.5–7 µs where it takes about 1.2 µs. A third
    /// rather than a half gives `expand_cached` the lower p99 on those masks (Go 1.51–1.56 µs
    /// against 1.56–1.68; `EXPAND_SETS`, see `benches/expand.rs`).
    fn to_beat(&self, plan: &Plan) -> u64 {
        match plan.small {
            Small::Deposit => plan.cost / 3,
            Small::Present | Small::Missing => plan.cost,
        }
    }

    /// What starting from a [`Base`] costs before its differing classes, in scattered runs.
    /// Measured on real Java masks with Llama 3 (sets a few dozen runs from a base, a couple
    /// of hundred from every class): the search, pricing and copy of a base cost about two
    /// passes, so a set about as cheap from the shared masks stays with them.
    #[inline]
    fn base_copy_cost(&self) -> u64 {
        2 * self.pass_cost
    }

    /// Whether a set that costs `cost` from scratch is worth looking up a base for: only when
    /// a base could save a pass (looking one up and rejecting it cost about 150 ns on real
    /// Java masks with Llama 3, a sixth of the typical mask's expansion).
    #[inline]
    fn worth_a_base(&self, cost: u64) -> bool {
        cost > self.base_copy_cost() + self.pass_cost
    }

    /// The probe words of `set` (bases and cached expansions keep theirs).
    #[inline]
    fn probe_of(&self, set: &[u64]) -> [u64; PROBE] {
        self.probe.map(|w| set.get(w).copied().unwrap_or(0))
    }

    /// The base that `set` (whose probe words are `probe`, with big classes `big`) is cheapest
    /// to expand from, among those equal to it on the probe words, and how.
    ///
    /// Only the bases equal to the set on the probe words are priced: pricing the nearest one
    /// whatever its distance costs more than the bases save on the trie masker's real masks
    /// (Go with Llama 3, `expand` p99 1.37–1.45 µs against 1.21–1.26; `EXPAND_SETS`, see
    /// `benches/expand.rs`), while the sets alive at a lexer point (the `expand` bench's) still
    /// start from their own base.
    fn nearest_base(&self, set: &[u64], probe: &[u64; PROBE], big: u32) -> Option<(usize, Delta)> {
        self.bases
            .iter()
            .enumerate()
            .filter(|(_, base)| same_probe(&base.probe, probe))
            .map(|(b, base)| {
                let copy = self.base_copy_cost();
                (b, self.delta(set, big, &base.set, base.big, copy, None))
            })
            .min_by_key(|(_, d)| d.cost)
    }

    /// How to expand `set` (with big classes `big`) from a base whose set is `base` (with big
    /// classes `base_big`), whose copy costs `copy`; `stream` forces every differing group to be
    /// read from its masks (`Some(true)`) or scattered from its runs (`Some(false)`), for tests.
    fn delta(
        &self,
        set: &[u64],
        big: u32,
        base: &[u64],
        base_big: u32,
        copy: u64,
        stream: Option<bool>,
    ) -> Delta {
        let mut d = Delta {
            add: [0; MAX_BIG / GROUP],
            remove: [0; MAX_BIG / GROUP],
            add_streamed: 0,
            remove_streamed: 0,
            cost: self.pass_cost,
        };
        let mut cost = copy;
        for (g, group) in self.groups.iter().enumerate() {
            let s = (big >> (g * GROUP)) as u8 & group.full;
            let b = (base_big >> (g * GROUP)) as u8 & group.full;
            d.add[g] = s & !b;
            d.remove[g] = b & !s;
            for (sub, streamed) in [
                (s & !b, &mut d.add_streamed),
                (b & !s, &mut d.remove_streamed),
            ] {
                if sub == 0 {
                    continue;
                }
                let runs = u64::from(group.subset_runs[sub as usize]);
                if stream.unwrap_or(runs > self.pass_cost) {
                    *streamed |= 1 << g;
                    cost += self.pass_cost;
                } else {
                    cost += runs;
                }
            }
        }
        let [single, multi] = count_in(set, Words::Xor(base), [&self.single, &self.multi]);
        d.cost = cost + single + ((multi * self.multi_mean) >> 8);
        d
    }

    /// Expands `set` from a base with mask `base_mask` and set `base`, as `d` says.
    fn run_from(&self, base_mask: &[u32], base: &[u64], d: &Delta, set: &[u64], words: &mut [u32]) {
        let wl = self.word_len;
        let mut pos: [&[u32]; MAX_BIG / GROUP + 1] = [&[]; MAX_BIG / GROUP + 1];
        let mut neg: [&[u32]; MAX_BIG / GROUP] = [&[]; MAX_BIG / GROUP];
        pos[0] = base_mask;
        let (mut np, mut nn) = (1, 0);
        let (mut add_key, mut remove_key) = (0u128, 0u128);
        for (g, group) in self.groups.iter().enumerate() {
            if d.add_streamed & (1 << g) != 0 {
                let s = d.add[g] as usize;
                pos[np] = &group.masks[(s - 1) * wl..s * wl];
                np += 1;
                add_key |= union_key(g, s);
            }
            if d.remove_streamed & (1 << g) != 0 {
                let s = d.remove[g] as usize;
                neg[nn] = &group.masks[(s - 1) * wl..s * wl];
                nn += 1;
                remove_key |= union_key(g, s);
            }
        }
        let np = 1 + self.learned(add_key, &mut pos[1..], np - 1);
        let nn = self.learned(remove_key, &mut neg, nn);
        combine(words, &pos[..np], &neg[..nn]);
        for (g, group) in self.groups.iter().enumerate() {
            if d.add_streamed & (1 << g) == 0 {
                self.scatter_group(group, d.add[g], words, |w, bits| *w |= bits);
            }
            if d.remove_streamed & (1 << g) == 0 {
                self.scatter_group(group, d.remove[g], words, |w, bits| *w &= !bits);
            }
        }
        self.scatter_diff(set, base, words);
    }

    /// ORs in the runs of the small classes in `set` but not in `base`, and clears those of
    /// the classes in `base` but not in `set` (classes are disjoint, so the two commute), in
    /// one pass over the set words that skips the equal ones.
    #[inline]
    fn scatter_diff(&self, set: &[u64], base: &[u64], words: &mut [u32]) {
        let n = self.single.len();
        let (set, base, single, multi) = (&set[..n], &base[..n], &self.single[..n], &self.multi);
        for i in 0..n {
            let x = set[i] ^ base[i];
            if x == 0 {
                continue;
            }
            for (mut b, add) in [(x & set[i], true), (x & base[i], false)] {
                let mut m = b & multi[i];
                b &= single[i];
                while b != 0 {
                    let (w, bits) = self.single_run[i * 64 + b.trailing_zeros() as usize];
                    b &= b - 1;
                    if add {
                        words[w as usize] |= bits;
                    } else {
                        words[w as usize] &= !bits;
                    }
                }
                while m != 0 {
                    let c = i * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    for &(w, bits) in
                        &self.runs[self.run_start[c] as usize..self.run_start[c + 1] as usize]
                    {
                        if add {
                            words[w as usize] |= bits;
                        } else {
                            words[w as usize] &= !bits;
                        }
                    }
                }
            }
        }
    }

    /// `sources[..n]` (group masks, named by `key`: see [`union_key`]) as the one learned mask
    /// of their union where there is one; how many sources are left.
    #[inline]
    fn learned<'a>(&'a self, key: u128, sources: &mut [&'a [u32]], n: usize) -> usize {
        if n < 2 {
            return n;
        }
        match self.unions.get(key, &sources[..n]) {
            Some(union) => {
                sources[0] = union;
                1
            }
            None => n,
        }
    }

    /// Applies `op` to the runs of the classes of subset `todo` of `group`.
    #[inline]
    fn scatter_group(
        &self,
        group: &Group,
        mut todo: u8,
        words: &mut [u32],
        op: impl Fn(&mut u32, u32),
    ) {
        while todo != 0 {
            let c = group.classes[todo.trailing_zeros() as usize] as usize;
            todo &= todo - 1;
            for &(w, bits) in &self.runs[self.run_start[c] as usize..self.run_start[c + 1] as usize]
            {
                op(&mut words[w as usize], bits);
            }
        }
    }

    /// The cheapest way to expand `classes`.
    fn plan(&self, set: &[u64]) -> Plan {
        self.plan_with(set, |_, _| true)
    }

    /// The cheapest way to expand `classes` among the ways `allowed(big_missing, small)`
    /// (tests force each way).
    fn plan_with(&self, set: &[u64], allowed: impl Fn(bool, Small) -> bool) -> Plan {
        let mut subsets = [0u8; MAX_BIG / GROUP];
        // Per group, reading its mask costs a pass; scattering its present classes (or, when
        // clearing from every big class, its missing ones) costs their runs.
        let (mut present_cost, mut missing_cost) = (0u64, self.pass_cost);
        let (mut present_streamed, mut missing_streamed) = (0u8, 0u8);
        let bits = self.big_bits(set);
        // Where the tables are cold, a scattered run is a random read while passes and the
        // deposit route read in order: runs count six times over (see `Tables::Cold`).
        let w = self.run_weight();
        for (g, group) in self.groups.iter().enumerate() {
            let s = (bits >> (g * GROUP)) as u8 & group.full;
            subsets[g] = s;
            let present_runs = w * u64::from(group.subset_runs[s as usize]);
            let missing_runs = w * u64::from(group.subset_runs[(group.full & !s) as usize]);
            if present_runs > self.pass_cost {
                present_streamed |= 1 << g;
            }
            present_cost += present_runs.min(self.pass_cost);
            if missing_runs > self.pass_cost {
                missing_streamed |= 1 << g;
            }
            missing_cost += missing_runs.min(self.pass_cost);
        }
        let [present_single, present_multi] =
            count_in(set, Words::Set, [&self.single, &self.multi]);
        // Runs of the multi-word classes, estimated from their mean.
        let runs = |single: u64, multi: u64| w * (single + ((multi * self.multi_mean) >> 8));
        let present_small = runs(present_single, present_multi);
        let missing_small = runs(
            self.single_len - present_single,
            self.multi_len - present_multi,
        );
        // Clearing missing small classes needs every small class's bits in the pass: an extra
        // source unless the base is every class's.
        // The route's price (in runs of about 1.4 ns) times 2: the runs walked here cost about
        // 0.6–0.7 ns each (hot, in ascending class order). Fitted on every way timed on each
        // set: on the 107 distinct masks the trie masker made along 40 Java files with Llama
        // 3, the ways ×2 picked took 1,175 ns on average against 1,174 for the fastest of each
        // (p99 1.38 µs, the fastest's; ×2.5 sent the costliest to the runs: 1.57 µs), and on
        // the `expand` benchmark's sets within 50 ns of the fastest on average (×1.5 sent
        // Gemma 3 × Java's half-full set to the route: 1.86 µs against 1.41).
        // The deposit reads the groups before `deposit_from` only.
        let deposit_streamed = present_streamed & low_bits(self.deposit_from);
        let mut deposit_cost = 0;
        for (g, group) in self.groups.iter().enumerate().take(self.deposit_from) {
            deposit_cost +=
                (w * u64::from(group.subset_runs[subsets[g] as usize])).min(self.pass_cost);
        }
        let deposit = self
            .deposit
            .as_ref()
            .map(|d| deposit_cost + d.cost() as u64 * 2);
        let options = [
            (false, Small::Present, Some(present_cost + present_small)),
            (
                false,
                Small::Missing,
                Some(present_cost + self.pass_cost + missing_small),
            ),
            (true, Small::Present, Some(missing_cost + present_small)),
            (true, Small::Missing, Some(missing_cost + missing_small)),
            (false, Small::Deposit, deposit),
        ];
        let (big_missing, small, cost) = options
            .iter()
            .filter_map(|&(b, s, c)| Some((b, s, c?)))
            .filter(|o| allowed(o.0, o.1))
            .min_by_key(|o| o.2)
            .unwrap_or((false, Small::Present, 0));
        Plan {
            subsets,
            streamed: match (big_missing, small) {
                (true, _) => missing_streamed,
                (false, Small::Deposit) => deposit_streamed,
                (false, _) => present_streamed,
            },
            big_missing,
            small,
            cost,
            big: bits,
        }
    }

    fn run(&self, plan: &Plan, set: &[u64], words: &mut [u32]) {
        let wl = self.word_len;
        let mut sources: [&[u32]; MAX_BIG / GROUP + 1] = [&[]; MAX_BIG / GROUP + 1];
        let (mut n, mut key) = (0, 0);
        if plan.big_missing {
            for (g, group) in self.groups.iter().enumerate() {
                let missing = (group.full & !plan.subsets[g]) as usize;
                if plan.streamed & (1 << g) != 0 {
                    sources[n] = &group.masks[(missing - 1) * wl..missing * wl];
                    n += 1;
                    key |= union_key(g, missing);
                }
            }
            let n = self.learned(key, &mut sources, n);
            let base = if plan.small == Small::Missing {
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
                    key |= union_key(g, present);
                }
            }
            n = self.learned(key, &mut sources, n);
            match (plan.small, &self.deposit) {
                (Small::Missing, _) => {
                    sources[n] = &self.all_small;
                    n += 1;
                    combine(words, &sources[..n], &[]);
                }
                (Small::Deposit, Some(d)) => d.expand(set, &sources[..n], words),
                _ => combine(words, &sources[..n], &[]),
            }
        }
        // The groups not streamed: their present (missing) classes, from their runs (those
        // the deposit wrote excepted).
        let scattered = match (plan.small, &self.deposit) {
            (Small::Deposit, Some(_)) => self.deposit_from,
            _ => self.groups.len(),
        };
        for (g, group) in self.groups.iter().enumerate().take(scattered) {
            if plan.streamed & (1 << g) == 0 {
                if plan.big_missing {
                    let missing = group.full & !plan.subsets[g];
                    self.scatter_group(group, missing, words, |w, bits| *w &= !bits);
                } else {
                    self.scatter_group(group, plan.subsets[g], words, |w, bits| *w |= bits);
                }
            }
        }
        match (plan.small, &self.deposit) {
            (Small::Missing, _) => self.scatter(set, |s| !s, words, |w, bits| *w &= !bits),
            (Small::Deposit, Some(_)) => {}
            // A plan names the deposit only where it exists; without it, the runs are walked.
            (Small::Present, _) | (Small::Deposit, None) => {
                self.scatter(set, |s| s, words, |w, bits| *w |= bits)
            }
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

    /// [`Expander::expand`], starting from the nearest of the recent expansions in `cache`
    /// when that costs less (a repeated set costs one copy of the words), and remembering this
    /// one. Same result, same panics.
    pub fn expand_cached(
        &self,
        cache: &mut ExpandCache,
        set: &[u64],
        words: &mut [u32],
    ) -> Expanded {
        self.check(set, words);
        cache.clock += 1;
        if cache.lens != (set.len(), words.len()) {
            // A new cache, or one used with other classes before: start over.
            cache.clear();
            cache.lens = (set.len(), words.len());
        }
        let probe = self.probe_of(set);
        if let Some(i) = cache.find(set, &probe) {
            words.copy_from_slice(&cache.masks[i]);
            cache.used[i] = cache.clock;
            return Expanded::Repeat;
        }
        let victim = cache.victim();
        let plan = self.plan(set);
        // From scratch, from the nearest cached expansion or from the nearest base, whichever
        // is cheapest; neither is worth pricing when scratch costs at most two passes, nor
        // where the tables are cold (their masks are cold too).
        enum From {
            Scratch,
            Entry(usize, Delta),
            Base(usize, Delta),
        }
        let mut from = From::Scratch;
        let mut cost = self.to_beat(&plan);
        if self.tables == Tables::Warm && plan.cost > 2 * self.pass_cost {
            // The entry differing in the fewest classes on the probe words, priced in full.
            let nearest = nearest_entry(&cache.probes, &probe);
            if let Some((n, i)) = nearest {
                if u64::from(n) + self.pass_cost < cost {
                    let e = &cache.sets[i];
                    // A recent expansion is warm in the caches: its copy costs a pass.
                    let e_big = self.big_bits(e);
                    let d = self.delta(set, plan.big, e, e_big, self.pass_cost, None);
                    if d.cost < cost {
                        cost = d.cost;
                        from = From::Entry(i, d);
                    }
                }
            }
            let base = self
                .worth_a_base(cost)
                .then(|| self.nearest_base(set, &probe, plan.big));
            if let Some((b, d)) = base.flatten() {
                if d.cost < cost {
                    from = From::Base(b, d);
                }
            }
        }
        let how = match from {
            From::Scratch => {
                self.run(&plan, set, words);
                Expanded::Scratch(plan.cost)
            }
            From::Entry(i, d) => {
                self.run_from(&cache.masks[i], &cache.sets[i], &d, set, words);
                Expanded::Entry(d.cost)
            }
            From::Base(b, d) => {
                let base = &self.bases[b];
                self.run_from(&base.mask, &base.set, &d, set, words);
                Expanded::Base(d.cost)
            }
        };
        cache.remember(victim, set, probe, words);
        how
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
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
            + self
                .bases
                .iter()
                .map(|b| b.set.capacity() * 8 + b.mask.capacity() * 4)
                .sum::<usize>()
            + self.bases.capacity() * std::mem::size_of::<Base>()
            + self.deposit.as_ref().map_or(0, Deposit::heap_bytes)
            + self.unions.heap_bytes()
    }
}

const _: () = assert!(MAX_BIG <= 128, "a union key has a bit per big class");

/// The key of the [`Unions`] naming the mask of subset `subset` of group `g`: a union of masks
/// of distinct groups is named by the OR of their keys.
#[inline]
fn union_key(g: usize, subset: usize) -> u128 {
    (subset as u128) << (g * GROUP)
}

/// Whether two sets' probe words are equal: the first word first (where most differ), then
/// all inline. `==` on the arrays called `bcmp` once per base or cache entry: 32 lookups took
/// 53 ns that way, 16 this way (a microbenchmark).
#[inline]
fn same_probe(a: &[u64; PROBE], b: &[u64; PROBE]) -> bool {
    a[0] == b[0] && a.iter().zip(b).fold(0, |d, (x, y)| d | (x ^ y)) == 0
}

/// The entry nearest `probe` on the probe words (the first of the nearest), and its distance.
/// Counted with AVX-512 popcounts, or POPCNT, where the CPU has them: the baseline target
/// counts bits with a dozen instructions per word, and 32 entries took 121–123 ns that way,
/// 60–66 with POPCNT, 31 with AVX-512 (a microbenchmark).
fn nearest_entry(probes: &[[u64; PROBE]], probe: &[u64; PROBE]) -> Option<(u32, usize)> {
    #[cfg(target_arch = "x86_64")]
    if let Some(nearest) = crate::x86_64::nearest_entry(probes, probe) {
        return nearest;
    }
    nearest_entry_portable(probes, probe)
}

#[inline(always)]
pub(crate) fn nearest_entry_portable(
    probes: &[[u64; PROBE]],
    probe: &[u64; PROBE],
) -> Option<(u32, usize)> {
    probes
        .iter()
        .enumerate()
        .map(|(i, e)| (probe_distance(e, probe), i))
        .min()
}

/// The number of classes in exactly one of two sets, on their probe words.
#[inline(always)]
fn probe_distance(a: &[u64; PROBE], b: &[u64; PROBE]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// Recent expansions, so that [`Expander::expand_cached`] (and
/// [`TokenClasses::expand_cached`](super::TokenClasses::expand_cached)) can start from the
/// nearest one instead of from nothing: masks along a text repeat, or differ in a few classes.
/// Scratch owned by the caller (one per thread), for one [`Expander`].
#[derive(Clone, Debug)]
pub struct ExpandCache {
    /// Per entry, in parallel vectors: its probe words (see [`Expander::probe`]) and their
    /// first word alone (every lookup scans them: kept together, they are a few cache lines),
    /// the clock when it was last used (the least recently used entry is replaced), its set's
    /// words and its mask words.
    probes: Vec<[u64; PROBE]>,
    first: Vec<u64>,
    used: Vec<u64>,
    sets: Vec<Vec<u64>>,
    masks: Vec<Vec<u32>>,
    /// Buffers for entries not yet filled (see [`ExpandCache::allocated`]).
    spare: Vec<(Vec<u64>, Vec<u32>)>,
    capacity: usize,
    clock: u64,
    /// The lengths of the entries' sets and masks (those of the expander they came from).
    lens: (usize, usize),
}

impl ExpandCache {
    /// A cache of the 32 most recent expansions (512 KiB of masks at Llama 3's 128k tokens,
    /// 1 MiB at Gemma 3's 262k). Along real JSON texts with Llama 3, 32 entries meet 94% of
    /// the sets again against 78% for 8, and halve the 90th percentile of `expand_cached`; a
    /// lookup compares 8 words per entry before one is priced in full.
    pub fn new() -> Self {
        Self::with_capacity(32)
    }

    /// A cache of the `entries` most recent expansions (0: no caching).
    pub fn with_capacity(entries: usize) -> Self {
        ExpandCache {
            probes: Vec::with_capacity(entries),
            first: Vec::with_capacity(entries),
            used: Vec::with_capacity(entries),
            sets: Vec::with_capacity(entries),
            masks: Vec::with_capacity(entries),
            spare: Vec::new(),
            capacity: entries,
            clock: 0,
            lens: (0, 0),
        }
    }

    /// A cache of the `entries` most recent expansions of `expander`'s sets, every buffer
    /// allocated and written now: a first-touch page fault costs microseconds, which a mask
    /// that fills an entry would otherwise pay (a masker whose latency tail matters makes its
    /// caches this way).
    pub fn allocated(entries: usize, expander: &Expander) -> Self {
        let mut cache = Self::with_capacity(entries);
        cache.spare = (0..entries)
            .map(|_| {
                let mut set = vec![0u64; expander.set_len()];
                let mut mask = vec![0u32; expander.word_len()];
                // Written through an opaque reference: zeroed allocations are mapped lazily,
                // and a plain fill of zeros could be folded away.
                std::hint::black_box(&mut set[..]).fill(0);
                std::hint::black_box(&mut mask[..]).fill(0);
                (set, mask)
            })
            .collect();
        cache
    }

    /// Forgets every expansion (keeping the buffers).
    pub fn clear(&mut self) {
        self.spare
            .extend(self.sets.drain(..).zip(self.masks.drain(..)));
        self.probes.clear();
        self.first.clear();
        self.used.clear();
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        let buffers = self.sets.iter().chain(self.spare.iter().map(|s| &s.0));
        let masks = self.masks.iter().chain(self.spare.iter().map(|s| &s.1));
        buffers.map(|s| s.capacity() * 8).sum::<usize>()
            + masks.map(|m| m.capacity() * 4).sum::<usize>()
            + self.probes.capacity() * PROBE * 8
            + (self.first.capacity() + self.used.capacity()) * 8
            + (self.sets.capacity() + self.masks.capacity() + self.spare.capacity()) * 48
    }

    /// The entry holding `set` (whose probe words are `probe`).
    #[inline]
    fn find(&self, set: &[u64], probe: &[u64; PROBE]) -> Option<usize> {
        // The first probe word first: most entries differ there.
        self.first
            .iter()
            .enumerate()
            .filter(|&(_, &f)| f == probe[0])
            .map(|(i, _)| i)
            .find(|&i| same_probe(&self.probes[i], probe) && self.sets[i] == set)
    }

    /// The entry that the next [`ExpandCache::remember`] replaces: the least recently used,
    /// once every entry is filled.
    fn victim(&self) -> Option<usize> {
        if self.sets.len() < self.capacity {
            return None;
        }
        (0..self.used.len()).min_by_key(|&i| self.used[i])
    }

    /// Remembers the expansion `words` of `set`, in place of `victim` (see
    /// [`ExpandCache::victim`]) or in a new entry.
    fn remember(&mut self, victim: Option<usize>, set: &[u64], probe: [u64; PROBE], words: &[u32]) {
        if self.capacity == 0 {
            return;
        }
        if let Some(i) = victim {
            self.sets[i].copy_from_slice(set);
            self.masks[i].copy_from_slice(words);
            self.probes[i] = probe;
            self.first[i] = probe[0];
            self.used[i] = self.clock;
        } else if self.sets.len() < self.capacity {
            let (mut s, mut m) = self.spare.pop().unwrap_or_default();
            s.clear();
            s.extend_from_slice(set);
            m.clear();
            m.extend_from_slice(words);
            self.sets.push(s);
            self.masks.push(m);
            self.probes.push(probe);
            self.first.push(probe[0]);
            self.used.push(self.clock);
        }
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
    use crate::kernels::{combine_every_kernel, count_in_every_kernel, say_skipped};
    use crate::ClassId;
    use proptest::prelude::*;

    /// The number of classes in exactly one of `a` and `b`.
    fn differing(a: &ClassSet, b: &ClassSet) -> u32 {
        a.words()
            .iter()
            .zip(b.words())
            .map(|(x, y)| (x ^ y).count_ones())
            .sum()
    }

    /// 40 classes of one token each, 33 ids apart (over 1,320 ids), and their layout.
    fn forty_one_token_classes() -> (Vec<Vec<u32>>, Vec<u32>, Vec<TokenId>) {
        let classes: Vec<Vec<u32>> = (0..40u32).map(|c| vec![c * 33]).collect();
        let (member_start, members) = layout(&classes);
        (classes, member_start, members)
    }

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
        let p = Expander::with_big(330, &member_start, &members, (2, 1, 0), &[]);
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
            p.expand(set.words(), &mut words);
            assert_eq!(words, want, "subset {subset:03b}");
            words.fill(u32::MAX);
            p.expand_cached(&mut cache, set.words(), &mut words);
            assert_eq!(words, want, "cached subset {subset:03b}");
        }
    }

    /// Twelve big classes in three groups (each class a member in every word) and two small
    /// ones: a set with big classes in every group reads three group masks until its union
    /// is learned (the second time), then that one; every way, and from a base, stays exact.
    #[test]
    fn unions_of_group_masks_are_learned_the_second_time() {
        let mut classes: Vec<Vec<u32>> = (0..12)
            .map(|c| (0..64).map(|w| w * 32 + c).collect())
            .collect();
        classes.extend([vec![20, 700], vec![31]]);
        let (member_start, members) = layout(&classes);
        let vocab_len = 64 * 32;
        let alive = {
            let mut a = ClassSet::new(14);
            a.extend((0..14).map(ClassId::from_usize));
            a
        };
        // No deposit: every group is read as a mask.
        let p = Expander::with_big(vocab_len, &member_start, &members, (8, 12, 0), &[alive]);
        assert_eq!((p.groups.len(), p.deposit_from), (3, 3));
        let mut set = ClassSet::new(14);
        set.extend([0, 1, 5, 9, 12].map(ClassId::from_usize));
        let plan = p.plan(set.words());
        assert_eq!(plan.streamed.count_ones(), 3, "{plan:?}");
        let want = naive(&classes, vocab_len, &set);
        let mut words = vec![0u32; 64];
        for learned in [0, 1, 1] {
            words.fill(0x5a5a_5a5a);
            p.expand(set.words(), &mut words);
            assert_eq!(words, want);
            assert_eq!(p.unions.len(), learned);
        }
        let mut words = vec![0u32; 64];
        let mut x = 1;
        expand_every_way(&p, &classes, vocab_len, &set, &mut words).unwrap();
        for near in near_sets(&[set], &mut x) {
            expand_every_way(&p, &classes, vocab_len, &near, &mut words).unwrap();
        }
        assert!(p.unions.len() > 1);
        // A clone learns anew.
        assert_eq!(p.clone().unions.len(), 0);
    }

    /// 40 one-member classes in different words: a set differing from a cached one in one
    /// class is built from it by toggling that class (1 store against 20 from scratch).
    #[test]
    fn cached_expansion_from_the_nearest_set() {
        let (classes, member_start, members) = forty_one_token_classes();
        let p = Expander::new(40 * 33, &member_start, &members, &[]);
        let mut cache = ExpandCache::with_capacity(2);
        let mut a = ClassSet::new(40);
        a.extend((0..40).step_by(2).map(ClassId::from_usize));
        let mut words = vec![0u32; (40 * 33usize).div_ceil(32)];
        p.expand_cached(&mut cache, a.words(), &mut words);
        assert_eq!(words, naive(&classes, 40 * 33, &a));
        let plan = p.plan(a.words());
        assert_eq!(
            (plan.cost, plan.big_missing, plan.small),
            (20, false, Small::Present)
        );
        // One more class, then one fewer: both from the cached neighbour.
        let mut b = a.clone();
        b.insert(ClassId::from_usize(7));
        let mut c = a.clone();
        c.remove(ClassId::from_usize(0));
        for set in [&b, &c, &a, &b] {
            words.fill(0xffff_ffff);
            p.expand_cached(&mut cache, set.words(), &mut words);
            assert_eq!(words, naive(&classes, 40 * 33, set));
        }
        assert_eq!(cache.sets.len(), 2);
        assert_eq!(differing(&a, &b), 1);
        assert_eq!(differing(&b, &c), 2);
    }

    /// A set lacking one of 40 one-word classes clears that class from every class's bits; a
    /// set holding one ORs that class into zeros; a big class's group is read as a mask only
    /// when its present classes fall in more words than a pass costs.
    #[test]
    fn plan_takes_the_cheaper_side() {
        let (_, member_start, members) = forty_one_token_classes();
        let p = Expander::new(40 * 33, &member_start, &members, &[]);
        let mut set = ClassSet::full(40);
        set.remove(ClassId::from_usize(3));
        let plan = p.plan(set.words());
        assert!(plan.small == Small::Missing && !plan.big_missing);
        let mut set = ClassSet::new(40);
        set.insert(ClassId::from_usize(3));
        let plan = p.plan(set.words());
        assert!(plan.small == Small::Present && !plan.big_missing);
        assert_eq!(plan.cost, 1);

        // Class 0 in each of 64 words, class 1 in 2 of them: both big, one group.
        let classes = vec![(0..64 * 32).step_by(32).collect(), vec![1, 33]];
        let (member_start, members) = layout(&classes);
        let big = (2, MAX_BIG, MAX_DEPOSIT_GROUP_TOKENS);
        let p = Expander::with_big(64 * 32, &member_start, &members, big, &[]);
        assert_eq!((p.groups.len(), p.pass_cost), (1, 2));
        let mut set = ClassSet::new(2);
        set.insert(ClassId::from_usize(1));
        let plan = p.plan(set.words());
        assert_eq!((plan.subsets[0], plan.streamed, plan.cost), (0b10, 0, 2));
        set.insert(ClassId::from_usize(0));
        set.remove(ClassId::from_usize(1));
        let plan = p.plan(set.words());
        assert_eq!((plan.subsets[0], plan.streamed & 1), (0b01, 1));
    }

    /// The costly alive sets become bases (a cheap one, and one over other classes, do not); a
    /// set equal to a base on the probe words (inside or around it elsewhere) starts from its
    /// mask and scatters the difference; one that differs there looks no base up.
    #[test]
    fn sets_near_a_base_start_from_it() {
        // 640 one-token classes, each in its own word: 10 set words, of which the probe (one
        // base, so spread over the set) reads words 0, 1, 2, 3, 5, 6, 7 and 8.
        let classes: Vec<Vec<u32>> = (0..640u32).map(|c| vec![c * 33]).collect();
        let (member_start, members) = layout(&classes);
        let vocab = 640 * 33;
        let mut alive = ClassSet::new(640);
        alive.extend((0..640).step_by(2).map(ClassId::from_usize));
        let hints = [ClassSet::new(640), alive.clone(), ClassSet::full(641)];
        let p = Expander::new(vocab, &member_start, &members, &hints);
        assert_eq!(p.bases.len(), 1);
        assert_eq!(p.bases[0].set, alive.words());
        assert_eq!(p.bases[0].mask, naive(&classes, vocab, &alive));
        assert_eq!(p.probe, [0, 1, 2, 3, 5, 6, 7, 8]);
        // Outside the probe: class 258 (word 4) dropped, class 577 (word 9) added.
        let mut inside = alive.clone();
        inside.remove(ClassId::from_usize(258));
        let mut around = alive.clone();
        around.insert(ClassId::from_usize(577));
        let mut both = inside.clone();
        both.insert(ClassId::from_usize(577));
        let mut cache = ExpandCache::with_capacity(0);
        let mut words = vec![0u32; vocab.div_ceil(32)];
        // The copy (two passes) plus one store per differing class.
        let copy = p.base_copy_cost();
        for (set, cost) in [(&alive, 0), (&inside, 1), (&around, 1), (&both, 2)] {
            let plan = p.plan(set.words());
            let (b, d) = p
                .nearest_base(set.words(), &p.probe_of(set.words()), plan.big)
                .expect("a base");
            assert_eq!((b, d.cost), (0, copy + cost));
            assert!(d.cost < p.to_beat(&plan));
            words.fill(0x5a5a_5a5a);
            p.expand(set.words(), &mut words);
            assert_eq!(words, naive(&classes, vocab, set));
            words.fill(0xa5a5_a5a5);
            p.expand_cached(&mut cache, set.words(), &mut words);
            assert_eq!(words, naive(&classes, vocab, set));
        }
        // On the probe: class 2 (word 0) dropped.
        let mut far = alive.clone();
        far.remove(ClassId::from_usize(2));
        assert!(p
            .nearest_base(
                far.words(),
                &p.probe_of(far.words()),
                p.plan(far.words()).big
            )
            .is_none());
        p.expand(far.words(), &mut words);
        assert_eq!(words, naive(&classes, vocab, &far));
    }

    /// A start from a base or a cached expansion must cost less than a walk of the runs from
    /// scratch, and less than a third of the deposit (whose reads stay in order when cold).
    #[test]
    fn starts_must_beat_a_third_of_the_deposit() {
        let (_, member_start, members) = forty_one_token_classes();
        let p = Expander::new(40 * 33, &member_start, &members, &[]);
        let mut set = ClassSet::new(40);
        set.extend((0..40).step_by(3).map(ClassId::from_usize));
        let walk = p.plan_with(set.words(), |_, s| s == Small::Present);
        assert_eq!(p.to_beat(&walk), walk.cost);
        let mut deposit = walk;
        deposit.small = Small::Deposit;
        deposit.cost = 300;
        assert_eq!(p.to_beat(&deposit), 100);
    }

    /// Every source count `combine` has a loop for, and one past them: the portable pass, the
    /// dispatched one and the AVX2 one (where the CPU has AVX2) equal the formula.
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
            for (kernel, words) in combine_every_kernel(&vec![0xdead_beef; n], pos, neg) {
                assert_eq!(words, want, "{kernel}: {p} sources, {k} cleared");
            }
        }
    }

    /// The nearest cache entry by each kernel: the portable one, the dispatched one, and each
    /// x86-64 kernel the CPU runs (the others are said to be skipped), named.
    fn nearest_entry_every_kernel(
        entries: &[[u64; PROBE]],
        probe: &[u64; PROBE],
    ) -> Vec<(&'static str, Option<(u32, usize)>)> {
        let mut nearest = vec![
            ("portable", nearest_entry_portable(entries, probe)),
            ("dispatched", nearest_entry(entries, probe)),
        ];
        #[cfg(target_arch = "x86_64")]
        nearest.extend(crate::x86_64::nearest_entry_kernels(entries, probe));
        #[cfg(not(target_arch = "x86_64"))]
        say_skipped("nearest_entry's x86-64 kernels", "the target is not x86-64");
        nearest
    }

    /// The nearest cache entry by every kernel the CPU runs (AVX-512, POPCNT, the dispatched
    /// one) is the portable one's: the first of the nearest, ties included.
    #[test]
    fn nearest_entry_matches_portable() {
        let entry =
            |seed: u64| -> [u64; PROBE] { std::array::from_fn(|i| splitmix(seed * 8 + i as u64)) };
        let mut entries: Vec<[u64; PROBE]> = (0..20).map(entry).collect();
        // Two entries at the same distance from every probe: the first must win.
        entries.push(entry(3));
        entries.insert(1, entry(3));
        for seed in 0..40 {
            let mut probe = entry(seed % 25);
            probe[(seed % 8) as usize] ^= 1 << (seed % 64);
            let want = nearest_entry_portable(&entries, &probe);
            for (kernel, nearest) in nearest_entry_every_kernel(&entries, &probe) {
                assert_eq!(nearest, want, "{kernel}");
            }
        }
        for (kernel, nearest) in nearest_entry_every_kernel(&entries, &entry(3)) {
            assert_eq!(nearest, Some((0, 1)), "{kernel}");
        }
        for (kernel, nearest) in nearest_entry_every_kernel(&[], &entry(3)) {
            assert_eq!(nearest, None, "{kernel}");
        }
    }

    /// Probe words are the same only when every one is.
    #[test]
    fn same_probe_compares_every_word() {
        let a: [u64; PROBE] = std::array::from_fn(|i| splitmix(i as u64));
        assert!(same_probe(&a, &a.clone()));
        for i in 0..PROBE {
            let mut b = a;
            b[i] ^= 1 << 40;
            assert!(!same_probe(&a, &b), "a difference in word {i}");
        }
    }

    /// The counts of every kernel the CPU runs (AVX-512 popcounts, POPCNT, the portable and
    /// the dispatched one) equal a count by hand, of a set alone, of its difference with
    /// another in either sense, in two masks and in four, over lengths around one vector of
    /// words.
    #[test]
    fn count_in_matches_portable() {
        for len in [0, 1, 7, 8, 9, 16, 77] {
            let words: Vec<u64> = (1..=len as u64).map(splitmix).collect();
            let other: Vec<u64> = words.iter().map(|w| splitmix(w ^ 1)).collect();
            let masks: Vec<Vec<u64>> = (0..4u64)
                .map(|m| words.iter().map(|w| splitmix(w ^ (m + 2))).collect())
                .collect();
            let by_hand = |set: &dyn Fn(usize) -> u64, m: usize| -> u64 {
                (0..len)
                    .map(|i| u64::from((set(i) & masks[m][i]).count_ones()))
                    .sum()
            };
            let ways: [(Words, &dyn Fn(usize) -> u64); 3] = [
                (Words::Set, &|i| words[i]),
                (Words::Xor(&other), &|i| words[i] ^ other[i]),
                (Words::AndNot(&other), &|i| words[i] & !other[i]),
            ];
            for (with, set) in ways {
                let two = [&masks[0][..], &masks[1][..]];
                let want = [by_hand(set, 0), by_hand(set, 1)];
                for (kernel, counts) in count_in_every_kernel(&words, with, two) {
                    assert_eq!(counts, want, "{kernel}: {with:?} {len}");
                }
                let four: [&[u64]; 4] = std::array::from_fn(|m| &masks[m][..]);
                let want: [u64; 4] = std::array::from_fn(|m| by_hand(set, m));
                for (kernel, counts) in count_in_every_kernel(&words, with, four) {
                    assert_eq!(counts, want, "{kernel}: {with:?} {len}");
                }
            }
        }
        // Only the words every slice has are counted.
        for (kernel, counts) in count_in_every_kernel(&[u64::MAX; 9], Words::Set, [&[u64::MAX; 3]])
        {
            assert_eq!(counts, [192], "{kernel}");
        }
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

    /// Expands `set` as planned and in every `(big_missing, small)` way (the deposit where the
    /// CPU runs it), whatever it costs, each from garbage words into `words`, twice (the
    /// second time with the unions of group masks the first learned); all must equal the
    /// per-member expansion, which is returned.
    fn expand_every_way(
        p: &Expander,
        classes: &[Vec<u32>],
        vocab_len: usize,
        set: &ClassSet,
        words: &mut [u32],
    ) -> Result<Vec<u32>, TestCaseError> {
        let want = naive(classes, vocab_len, set);
        let mut ways = vec![
            (false, Small::Present),
            (false, Small::Missing),
            (true, Small::Present),
            (true, Small::Missing),
        ];
        if p.deposit.is_some() {
            ways.push((false, Small::Deposit));
        }
        let big = p.big_bits(set.words());
        for _ in 0..2 {
            words.fill(0xa5a5_a5a5);
            p.expand(set.words(), words);
            prop_assert_eq!(&*words, &want[..], "expand {:?}", set);
            for &(big_missing, small) in &ways {
                let plan = p.plan_with(set.words(), |b, s| (b, s) == (big_missing, small));
                prop_assert_eq!((plan.big_missing, plan.small), (big_missing, small));
                words.fill(0x5a5a_5a5a);
                p.run(&plan, set.words(), words);
                prop_assert_eq!(&*words, &want[..], "{:?} {:?}", plan, set);
            }
            // From every base, each differing group streamed as priced, always, and never.
            for (b, base) in p.bases.iter().enumerate() {
                for stream in [None, Some(true), Some(false)] {
                    let d = p.delta(set.words(), big, &base.set, base.big, p.pass_cost, stream);
                    words.fill(0x3c3c_3c3c);
                    p.run_from(&base.mask, &base.set, &d, set.words(), words);
                    prop_assert_eq!(
                        &*words,
                        &want[..],
                        "base {} {:?} {:?} {:?}",
                        b,
                        stream,
                        d,
                        set
                    );
                }
            }
        }
        Ok(want)
    }

    /// Sets near `alive`'s: each one, a subset (some classes dropped), a superset (some added)
    /// and one with both, drawn from `x`.
    fn near_sets(alive: &[ClassSet], x: &mut u64) -> Vec<ClassSet> {
        let mut out = Vec::new();
        for a in alive {
            let n = a.len();
            let mut sub = a.clone();
            let mut sup = a.clone();
            let mut both = a.clone();
            for c in (0..n).map(ClassId::from_usize) {
                *x = splitmix(*x);
                match *x % 16 {
                    0 => {
                        sub.remove(c);
                        both.remove(c);
                    }
                    1 => {
                        sup.insert(c);
                        both.insert(c);
                    }
                    _ => {}
                }
            }
            out.extend([a.clone(), sub, sup, both]);
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// `expand` and `expand_cached` equal the per-member expansion for sets of every
        /// density (empty and full included), from garbage words; bits past the vocabulary
        /// stay clear.
        #[test]
        fn expansion_equals_naive(
            (vocab_len, classes, min_runs, max_big) in vocabulary(),
            deposit_tokens in prop_oneof![Just(0usize), Just(usize::MAX), 0usize..1500],
            sets in prop::collection::vec((0u64..=100, any::<u64>()), 1..12),
            hints in prop::collection::vec((0u64..=100, any::<u64>()), 0..4),
        ) {
            let (member_start, members) = layout(&classes);
            let n = classes.len();
            let alive: Vec<ClassSet> =
                hints.into_iter().map(|(percent, mut x)| random_set(n, percent, &mut x)).collect();
            let big = (min_runs, max_big, deposit_tokens);
            let p = Expander::with_big(vocab_len, &member_start, &members, big, &alive);
            // The deposit writes the groups after the last one of many tokens.
            let tokens = |g: &Group| -> usize { g.classes.iter().map(|&c| classes[c as usize].len()).sum() };
            if let Some(last) = p.deposit_from.checked_sub(1) {
                prop_assert!(tokens(&p.groups[last]) > deposit_tokens);
            }
            prop_assert!(p.groups[p.deposit_from..].iter().all(|g| tokens(g) <= deposit_tokens));
            let mut cache = ExpandCache::with_capacity(3);
            let mut words = vec![0u32; vocab_len.div_ceil(32)];
            let mut x = n as u64;
            let mut all: Vec<ClassSet> = sets
                .into_iter()
                .map(|(percent, mut seed)| random_set(n, percent, &mut seed))
                .collect();
            all.extend(near_sets(&alive, &mut x));
            for set in all {
                let want = expand_every_way(&p, &classes, vocab_len, &set, &mut words)?;
                if vocab_len % 32 != 0 {
                    prop_assert_eq!(words[words.len() - 1] >> (vocab_len % 32), 0);
                }
                words.fill(u32::MAX);
                p.expand_cached(&mut cache, set.words(), &mut words);
                prop_assert_eq!(&words, &want, "expand_cached {:?}", set);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// An expander priced for cold tables, over classes some of which have no members (as
        /// the weighted automaton's blocks that no weight holds), expands sets of every
        /// density exactly, fresh and through a cache allocated up front (the memberless
        /// classes in a set or not).
        #[test]
        fn cold_expanders_with_memberless_classes_are_exact(
            (vocab_len, classes, _, _) in vocabulary(),
            empty in prop::collection::vec(any::<bool>(), 60),
            sets in prop::collection::vec((0u64..=100, any::<u64>()), 1..12),
        ) {
            // Every other class (by `empty`) loses its members.
            let mut classes = classes;
            for (c, &e) in classes.iter_mut().zip(&empty) {
                if e {
                    c.clear();
                }
            }
            let (member_start, members) = layout(&classes);
            let n = classes.len();
            let cold = Tables::Cold;
            let p = Expander::with_tables(vocab_len, &member_start, &members, &[], cold);
            prop_assert_eq!(p.set_len(), n.div_ceil(64));
            let mut cache = ExpandCache::allocated(3, &p);
            let mut words = vec![0u32; p.word_len()];
            for (percent, mut seed) in sets {
                let set = random_set(n, percent, &mut seed);
                let want = naive(&classes, vocab_len, &set);
                words.fill(0x5a5a_5a5a);
                p.expand(set.words(), &mut words);
                prop_assert_eq!(&words, &want, "expand {:?}", set);
                words.fill(u32::MAX);
                p.expand_cached(&mut cache, set.words(), &mut words);
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
            let n = classes.len();
            let mut x = seed;
            // Bases where they cost more than two passes (with thousands of small classes).
            let alive: Vec<ClassSet> = [90, 50].iter().map(|&p| random_set(n, p, &mut x)).collect();
            let p = Expander::new(vocab_len, &member_start, &members, &alive);
            // Where the CPU runs the set-independent route, it is built here, and tried below.
            prop_assert_eq!(p.deposit.is_some(), crate::deposit::supported());
            if p.deposit.is_none() {
                say_skipped("the deposit route", crate::deposit::tests::LACKS);
            }
            let mut words = vec![0u32; vocab_len.div_ceil(32)];
            let mut sets: Vec<ClassSet> =
                [0, 1, 10, 50, 90, 99, 100].iter().map(|&p| random_set(n, p, &mut x)).collect();
            sets.extend(near_sets(&alive, &mut x));
            let mut cache = ExpandCache::with_capacity(2);
            for set in sets {
                let want = expand_every_way(&p, &classes, vocab_len, &set, &mut words)?;
                words.fill(u32::MAX);
                p.expand_cached(&mut cache, set.words(), &mut words);
                prop_assert_eq!(&words, &want, "expand_cached {:?}", set);
            }
        }
    }
}
