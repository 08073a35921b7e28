//! The compiled Parser DWA and its run over the GSS.
//!
//! # Tables
//!
//! States are `u32`s, state 0 is dead (nothing left to decide). Per state: a default
//! transition and a sorted list of `(LR state, output weight, target)`; per state the weight
//! of the classes still undecided there. Weights are class sets stored once each. Per lexer
//! point (a head's `(lexer state, inhibitor)`): the initial state and the classes allowed
//! whatever the stack.
//!
//! # The run
//!
//! The output for a stack is the union of the outputs of its transitions, and the mask is the
//! union over every stack of every head. A GSS node is a set of stacks sharing a top, so the
//! run is a search over pairs `(automaton state, GSS node)` — "this state is about to read this
//! node" — each visited once: the node's LR state is read, the output joins the mask, and the
//! target state goes on to every predecessor of the node. Because outputs only ever add
//! classes, the union over the (possibly cyclic: ε-rules make same-level GSS cycles) product
//! graph is just the union over every pair reached; no fixpoint is needed. A pair is not
//! expanded when its state's undecided classes are all in the mask already, which is where the
//! run stops reading the stack — usually after one or two nodes.
//!
//! End of sequence is one more class (a block with no tokens): every head whose lexeme is
//! empty also seeds the pair `(eos state, node)`, whose automaton reads the reductions under
//! `$` down to an accept. [`Dwa::take_eos`] takes it out of the result before expansion.

use ahash::{AHashMap, AHashSet};
use munch_glr::gss::{GssNode, GssNodeId};
use munch_glr::parser::ParserState;
use munch_lexer::LexState;

use crate::bits::{is_subset, Weight};
use crate::determinize::{StateId, DEAD};
use crate::expand::Expansion;

/// The compiled automaton (immutable, shared).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dwa {
    /// Number of blocks (sets of token classes the automaton never tells apart; see
    /// `blocks`). Weights are block sets.
    pub(crate) class_len: u32,
    /// `u64` words per block set.
    pub(crate) words: u32,
    /// Number of token classes (for statistics).
    pub(crate) token_classes: u32,
    /// Weight `w` is `weights[w * words..(w + 1) * words]`; weight 0 is empty.
    pub(crate) weights: Vec<u64>,
    /// Per state: default `(output, target)`.
    pub(crate) default: Vec<(u32, u32)>,
    /// Per state: `edge_x[edge_start[s]..edge_start[s + 1]]` sorted.
    pub(crate) edge_start: Vec<u32>,
    pub(crate) edge_x: Vec<u32>,
    pub(crate) edge_out: Vec<(u32, u32)>,
    /// Per state: the weight of the classes some path from it can still output.
    pub(crate) undecided: Vec<u32>,
    /// The lexer's start state.
    pub(crate) lex_start: u32,
    /// The state that reads end of sequence (the control `($, FIN)`) from a head whose lexeme
    /// is empty ([`DEAD`] if the grammar never accepts).
    pub(crate) eos: u32,
    /// The block of the end-of-sequence pseudo-class (`u32::MAX`: in no weight).
    pub(crate) eos_block: u32,
    /// Per lexer state `s`: `(initial state, classes allowed outright)` of point `(s, None)`.
    pub(crate) plain: Vec<(u32, u32)>,
    /// Per lexer state `i`: the same for point `(start, Some(i))`.
    pub(crate) inhibited: Vec<(u32, u32)>,
    /// The vocabulary size.
    pub(crate) vocab_len: u32,
    /// Per block: `runs[run_start[b]..run_start[b + 1]]`, `(mask word, bits)` of its members.
    pub(crate) run_start: Vec<u32>,
    pub(crate) runs: Vec<(u32, u32)>,
    /// Every token of some block.
    pub(crate) all: Vec<u32>,
    /// Derived from the runs (not saved).
    pub(crate) expansion: Expansion,
    /// Derived (not saved): the states packed for the run, each at an offset that transitions
    /// name directly — `[default output, default target, undecided weight, n, x1..xn,
    /// (output, target) × n]` — so that one step touches one stretch of memory. The dead
    /// state is at offset 0.
    pub(crate) packed: Vec<u32>,
    /// Derived: per lexer state, `(offset of the initial state, outright weight)` of the
    /// points `(s, None)` and `(start, Some(s))`.
    pub(crate) plain_off: Vec<(u32, u32)>,
    pub(crate) inhibited_off: Vec<(u32, u32)>,
    /// Derived: the offset of state `eos`.
    pub(crate) eos_off: u32,
}

/// Scratch of one thread.
pub(crate) struct RunCache {
    pub(crate) acc: Vec<u64>,
    /// Pairs visited: a short list while small (most masks visit a handful), a set past that.
    seen_small: Vec<(StateId, GssNodeId)>,
    seen: AHashSet<(StateId, GssNodeId)>,
    pub(crate) stack: Vec<(StateId, GssNode)>,
    /// The weights the current mask is the union of.
    pub(crate) used: Vec<Weight>,
    /// Recent expansions: (hash of the class set, class set, mask words); the first `filled`
    /// slots hold results, the others are allocated for them.
    results: Vec<(u64, Vec<u64>, Vec<u32>)>,
    /// The slot of each result's hash (the latest, if two sets share a hash).
    slot_of: AHashMap<u64, u32>,
    filled: usize,
    next_slot: usize,
    /// Pairs read by the last run.
    pub(crate) pairs: usize,
}

impl RunCache {
    /// Empties the scratch for a new run.
    pub(crate) fn begin(&mut self) {
        self.acc.fill(0);
        self.seen_small.clear();
        if !self.seen.is_empty() {
            self.seen.clear();
        }
        self.stack.clear();
        self.used.clear();
        self.pairs = 0;
    }

    /// Whether the pair is visited for the first time in this run: a short list while small
    /// (most masks visit a handful), a set past that.
    #[inline]
    pub(crate) fn first_visit(&mut self, key: (StateId, GssNodeId)) -> bool {
        if self.seen_small.len() < 32 {
            if self.seen_small.contains(&key) {
                return false;
            }
            self.seen_small.push(key);
            return true;
        }
        if self.seen.is_empty() {
            self.seen.extend(self.seen_small.iter().copied());
        }
        self.seen.insert(key)
    }
}

impl Dwa {
    /// Tables that only expand block sets into masks (their automaton is the dead state
    /// alone): `weights` are the block sets that can occur (which blocks are live).
    #[allow(clippy::too_many_arguments)] // the expansion's parts, named once here
    pub(crate) fn for_expansion(
        blocks: usize,
        words: usize,
        token_classes: usize,
        weights: Vec<u64>,
        eos_block: u32,
        vocab_len: usize,
        run_start: Vec<u32>,
        runs: Vec<(u32, u32)>,
        all: Vec<u32>,
    ) -> Dwa {
        Dwa {
            class_len: blocks as u32,
            words: words as u32,
            token_classes: token_classes as u32,
            weights,
            default: vec![(0, DEAD)],
            edge_start: vec![0, 0],
            edge_x: Vec::new(),
            edge_out: Vec::new(),
            undecided: vec![0],
            lex_start: 0,
            eos: DEAD,
            eos_block,
            plain: Vec::new(),
            inhibited: Vec::new(),
            vocab_len: vocab_len as u32,
            run_start,
            runs,
            all,
            expansion: Default::default(),
            packed: Vec::new(),
            plain_off: Vec::new(),
            inhibited_off: Vec::new(),
            eos_off: 0,
        }
        .finish()
    }

    pub(crate) fn state_len(&self) -> usize {
        self.default.len()
    }

    pub(crate) fn edge_len(&self) -> usize {
        self.edge_x.len() + self.default.len()
    }

    pub(crate) fn weight_len(&self) -> usize {
        self.weights.len() / (self.words.max(1) as usize)
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.weights.len() * 8
            + self.default.len() * 8
            + self.edge_start.len() * 4
            + self.edge_x.len() * 12
            + self.undecided.len() * 4
            + (self.plain.len() + self.inhibited.len()) * 8
            + self.run_start.len() * 4
            + self.runs.len() * 8
            + self.all.len() * 4
            + self.expansion.heap_bytes()
            + self.packed.len() * 4
            + (self.plain_off.len() + self.inhibited_off.len()) * 8
    }

    /// Derives the expansion tables (after building or loading).
    pub(crate) fn finish(mut self) -> Self {
        // Only classes some weight holds can ever be in a mask.
        let words = self.words as usize;
        let mut live = vec![0u64; words];
        for w in self.weights.chunks(words.max(1)) {
            for (a, b) in live.iter_mut().zip(w) {
                *a |= b;
            }
        }
        self.expansion = Expansion::new(self.all.len(), &self.run_start, &self.runs, &live);
        let n = self.default.len();
        let mut offset_of = Vec::with_capacity(n);
        let mut at = 0u32;
        for s in 0..n {
            offset_of.push(at);
            at += 4 + 3 * (self.edge_start[s + 1] - self.edge_start[s]);
        }
        let mut packed = Vec::with_capacity(at as usize);
        for s in 0..n {
            let (lo, hi) = (self.edge_start[s] as usize, self.edge_start[s + 1] as usize);
            let (dw, dt) = self.default[s];
            packed.extend_from_slice(&[
                dw,
                offset_of[dt as usize],
                self.undecided[s],
                (hi - lo) as u32,
            ]);
            packed.extend_from_slice(&self.edge_x[lo..hi]);
            for &(w, t) in &self.edge_out[lo..hi] {
                packed.extend_from_slice(&[w, offset_of[t as usize]]);
            }
        }
        self.packed = packed;
        let off = |&(s, w): &(u32, u32)| (offset_of[s as usize], w);
        self.plain_off = self.plain.iter().map(off).collect();
        self.inhibited_off = self.inhibited.iter().map(off).collect();
        self.eos_off = offset_of[self.eos as usize];
        self
    }

    /// Result slots per thread (see [`RESULT_BYTES`]).
    fn result_slots(&self) -> usize {
        let mask_bytes = (self.vocab_len as usize).div_ceil(32) * 4;
        (RESULT_BYTES / mask_bytes.max(1)).max(MIN_RESULTS)
    }

    pub(crate) fn create_cache(&self) -> RunCache {
        // Every buffer a mask may need is allocated and written here, once: a first-touch
        // page fault costs microseconds, and a mask that grows a buffer would pay it (for the
        // result slots, several times per slot).
        let set_words = self.words as usize;
        let mask_words = self.vocab_len.div_ceil(32) as usize;
        let slots = self.result_slots();
        let results = (0..slots)
            .map(|_| {
                let mut set = vec![0u64; set_words];
                let mut words = vec![0u32; mask_words];
                // Written through an opaque reference: zeroed allocations are mapped lazily,
                // and a plain fill of zeros could be folded away.
                std::hint::black_box(&mut set[..]).fill(0);
                std::hint::black_box(&mut words[..]).fill(0);
                // A hash no set of classes has before the slot is written (`remember` sets it).
                (EMPTY_SLOT, set, words)
            })
            .collect();
        RunCache {
            acc: vec![0; set_words],
            seen_small: Vec::with_capacity(32),
            seen: AHashSet::with_capacity(256),
            stack: Vec::with_capacity(256),
            used: Vec::with_capacity(64),
            results,
            slot_of: AHashMap::with_capacity_and_hasher(
                2 * slots,
                ahash::RandomState::with_seeds(5, 6, 7, 8),
            ),
            filled: 0,
            next_slot: 0,
            pairs: 0,
        }
    }

    #[inline]
    fn weight(&self, w: Weight) -> &[u64] {
        let n = self.words as usize;
        &self.weights[w as usize * n..(w as usize + 1) * n]
    }

    /// `(output, target offset)` of the packed state at offset `o` reading `x`.
    #[inline]
    fn step(&self, o: u32, x: u32) -> (u32, u32) {
        let o = o as usize;
        let n = self.packed[o + 3] as usize;
        match self.packed[o + 4..o + 4 + n].binary_search(&x) {
            Ok(i) => {
                let at = o + 4 + n + 2 * i;
                (self.packed[at], self.packed[at + 1])
            }
            Err(_) => (self.packed[o], self.packed[o + 1]),
        }
    }

    fn or_weight(acc: &mut [u64], w: &[u64]) {
        for (a, b) in acc.iter_mut().zip(w) {
            *a |= b;
        }
    }

    /// The initial `(state offset, outright weight)` of a head's lexer configuration.
    fn point(&self, lex: LexState, inhibitor: Option<LexState>) -> (u32, u32) {
        let none = (DEAD, 0);
        match inhibitor {
            None => self.plain_off.get(lex.as_usize()).copied().unwrap_or(none),
            Some(i) if lex.as_u32() == self.lex_start => self
                .inhibited_off
                .get(i.as_usize())
                .copied()
                .unwrap_or(none),
            Some(_) => none,
        }
    }

    /// The allowed classes of `state` into `cache.acc`, and the weights they come from into
    /// `cache.used`.
    pub(crate) fn run(&self, cache: &mut RunCache, state: &ParserState) {
        cache.begin();
        for h in state.heads() {
            let (s, yes) = self.point(h.lex_state(), h.inhibitor());
            if yes != 0 && !cache.used.contains(&yes) {
                cache.used.push(yes);
                Self::or_weight(&mut cache.acc, self.weight(yes));
            }
            if s != DEAD {
                cache.stack.push((s, h.node().clone()));
            }
            // End of sequence: the text may end here iff some head with an empty lexeme
            // accepts `$` (what `ParserState::is_accepting` simulates), read as the
            // end-of-sequence pseudo-class over the same stacks.
            if h.lexeme_is_empty() && self.eos_off != DEAD {
                cache.stack.push((self.eos_off, h.node().clone()));
            }
        }
        while let Some((s, node)) = cache.stack.pop() {
            if !cache.first_visit((s, node.id())) {
                continue;
            }
            cache.pairs += 1;
            let (out, t) = self.step(s, node.state().as_u32());
            if out != 0 && !cache.used.contains(&out) {
                cache.used.push(out);
                Self::or_weight(&mut cache.acc, self.weight(out));
            }
            if t == DEAD || is_subset(self.weight(self.packed[t as usize + 2]), &cache.acc) {
                continue;
            }
            for m in node.predecessors() {
                cache.stack.push((t, m));
            }
        }
    }

    /// Whether the last [`Dwa::run`] allows end of sequence; takes it out of the result (its
    /// block has no tokens), so that the expansion's result cache does not tell apart sets
    /// that differ only there.
    pub(crate) fn take_eos(&self, cache: &mut RunCache) -> bool {
        let b = self.eos_block as usize;
        match cache.acc.get_mut(b / 64) {
            Some(w) if self.eos_block != u32::MAX => {
                let bit = 1u64 << (b % 64);
                let eos = *w & bit != 0;
                *w &= !bit;
                eos
            }
            _ => false,
        }
    }

    /// Writes the tokens of the classes found by [`Dwa::run`] into mask words (every other
    /// bit cleared).
    ///
    /// The last few results are kept in the thread's scratch, by class set: consecutive masks
    /// often allow the same classes (inside a string, a comment, a name). Otherwise the union
    /// is expanded once (see `expand`), or, when cheaper, a recent result is copied and
    /// corrected class by class.
    pub(crate) fn expand(&self, cache: &mut RunCache, words: &mut [u32]) -> Option<(Base, usize)> {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for &w in &cache.acc {
            hash = (hash ^ w).wrapping_mul(0x0000_0100_0000_01b3);
            hash ^= hash >> 29;
        }
        if let Some(&slot) = cache.slot_of.get(&hash) {
            let e = &cache.results[slot as usize];
            if e.1 == cache.acc {
                words.copy_from_slice(&e.2);
                return None;
            }
        }
        let how = self.expand_uncached(cache, words);
        self.remember(cache, hash, words);
        Some(how)
    }

    /// [`Dwa::expand`] without the result cache; says which base it took (for profiling).
    pub(crate) fn expand_uncached(&self, cache: &RunCache, words: &mut [u32]) -> (Base, usize) {
        // One pass from the cheapest base: nothing (a fresh expansion of the whole set) or a
        // recent result (classes added and cleared). The estimates only choose; both give the
        // same words.
        let acc = &cache.acc;
        let (mut best, sparse) = self.expansion.fresh_cost(acc);
        let mut base = Base::Fresh;
        // A recent result is worth trying when the sparse walk is long.
        if best > self.expansion.fresh_floor() + DELTA_WORTH {
            let slots = cache.results.len();
            for k in 0..RECENT.min(cache.filled) {
                let e = (cache.next_slot + slots - 1 - k) % slots;
                let c = self.expansion.delta_cost(&cache.results[e].1, acc);
                if c < best {
                    best = c;
                    base = Base::Result(e);
                }
            }
        }
        match base {
            Base::Fresh => self
                .expansion
                .expand(acc, sparse, &self.run_start, &self.runs, words),
            Base::Result(e) => {
                let e = &cache.results[e];
                words.copy_from_slice(&e.2);
                self.expansion
                    .apply_delta(&e.1, acc, &self.run_start, &self.runs, words);
            }
        }
        (base, best)
    }

    fn remember(&self, cache: &mut RunCache, hash: u64, words: &[u32]) {
        // The slots' buffers were allocated with the cache: no allocation here (the map's
        // capacity is twice the slots, so it never grows either).
        let slot = cache.next_slot;
        let e = &mut cache.results[slot];
        if slot < cache.filled && cache.slot_of.get(&e.0) == Some(&(slot as u32)) {
            cache.slot_of.remove(&e.0);
        }
        e.0 = hash;
        e.1.copy_from_slice(&cache.acc);
        e.2.copy_from_slice(words);
        cache.slot_of.insert(hash, slot as u32);
        cache.next_slot = (slot + 1) % cache.results.len();
        cache.filled = (cache.filled + 1).min(cache.results.len());
    }

    /// For profiling: the number of weights the last run used, and the estimated cost of a
    /// fresh expansion of its result.
    pub(crate) fn used_profile(&self, cache: &RunCache) -> (usize, usize) {
        (cache.used.len(), self.expansion.fresh_cost(&cache.acc).0)
    }

    /// For profiling: blocks in the last run's result.
    pub(crate) fn acc_len(&self, cache: &RunCache) -> usize {
        cache.acc.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// Expanded results kept per thread: as many as fit this many bytes of mask words, at least
/// [`MIN_RESULTS`]. Short texts see many class sets once or twice (SQL with Llama 3: 146
/// distinct sets in 770 masks, a third of them missed with 64 slots, a fifth with 1,024), and a
/// copy costs a fraction of a fresh expansion. But the slots share the CPU's caches with the
/// parser: with 8 MiB, one-pass traces on a quiet machine were slower everywhere (SQL/Llama 3
/// mask p50 4.5 µs against 2.3 µs with 1 MiB; Go's commit p99 21–24 µs against 11–13 µs).
const RESULT_BYTES: usize = 1 << 20;
const MIN_RESULTS: usize = 64;
/// The hash of a result slot not yet written.
const EMPTY_SLOT: u64 = 0;
/// The most recent of them tried as the base of a new expansion…
const RECENT: usize = 4;
/// …when a fresh expansion walks more than this many runs.
const DELTA_WORTH: usize = 512;

/// Where an expansion starts.
#[derive(Debug)]
pub(crate) enum Base {
    Fresh,
    /// A recent result's slot.
    Result(usize),
}
