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

use ahash::AHashSet;
use munch_glr::gss::{GssNode, GssNodeId};
use munch_glr::mask::MaskMut;
use munch_glr::parser::ParserState;
use munch_lexer::LexState;

use munch_tokens::{ExpandCache, Expanded, Expander, Tables};
use munch_vocab::{TokenId, Vocabulary};

use crate::bits::{is_subset, Weight};
use crate::determinize::{StateId, DEAD};

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
    /// Derived from the runs (not saved): `munch_tokens`' expansion engine over the blocks.
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

/// The automaton of the dead state alone, over no blocks and no tokens, its derived tables
/// not yet made: what a build or a load fills in before [`Dwa::finish`].
impl Default for Dwa {
    fn default() -> Self {
        Dwa {
            class_len: 0,
            words: 0,
            token_classes: 0,
            weights: Vec::new(),
            default: vec![(0, DEAD)],
            edge_start: vec![0, 0],
            edge_x: Vec::new(),
            edge_out: Vec::new(),
            undecided: vec![0],
            lex_start: 0,
            eos: DEAD,
            eos_block: u32::MAX,
            plain: Vec::new(),
            inhibited: Vec::new(),
            vocab_len: 0,
            run_start: vec![0],
            runs: Vec::new(),
            all: Vec::new(),
            expansion: Default::default(),
            packed: Vec::new(),
            plain_off: Vec::new(),
            inhibited_off: Vec::new(),
            eos_off: 0,
        }
    }
}

/// The expansion engine of a [`Dwa`]'s blocks. It is derived from the runs, which the automata
/// compare, so any two are equal.
#[derive(Clone, Debug, Default)]
pub(crate) struct Expansion(Expander);

impl PartialEq for Expansion {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Expansion {}

/// Scratch of one thread.
pub(crate) struct RunCache {
    pub(crate) acc: Vec<u64>,
    /// Pairs visited: a short list while small (most masks visit a handful), a set past that.
    seen_small: Vec<(StateId, GssNodeId)>,
    seen: AHashSet<(StateId, GssNodeId)>,
    pub(crate) stack: Vec<(StateId, GssNode)>,
    /// The weights the current mask is the union of.
    pub(crate) used: Vec<Weight>,
    /// Recent expansions, by block set.
    expanded: ExpandCache,
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
            eos_block,
            vocab_len: vocab_len as u32,
            run_start,
            runs,
            all,
            ..Dwa::default()
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
            + self.expansion.0.heap_bytes()
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
        self.expansion = Expansion(self.expander(&live));
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

    /// `munch_tokens`' expansion engine over the blocks of `live` (a block set: the blocks
    /// some weight holds; the others, never in a mask, get no members). Its tables are priced
    /// cold ([`Tables::Cold`]): the result cache answers most masks, so a mask that reaches the
    /// engine finds them out of the CPU's caches.
    fn expander(&self, live: &[u64]) -> Expander {
        let words = self.words as usize;
        let blocks = self.run_start.len().saturating_sub(1);
        let is_live = |b: usize| live.get(b / 64).is_some_and(|w| w >> (b % 64) & 1 == 1);
        // One class per bit of a block set (the bits past the blocks have no members).
        let mut member_start = Vec::with_capacity(words * 64 + 1);
        let mut members =
            Vec::with_capacity(self.all.iter().map(|w| w.count_ones() as usize).sum());
        member_start.push(0);
        for b in 0..words * 64 {
            if b < blocks && is_live(b) {
                let runs = &self.runs[self.run_start[b] as usize..self.run_start[b + 1] as usize];
                for &(w, mut bits) in runs {
                    while bits != 0 {
                        members.push(TokenId::from(w * 32 + bits.trailing_zeros()));
                        bits &= bits - 1;
                    }
                }
            }
            member_start.push(members.len() as u32);
        }
        let vocab_len = self.vocab_len as usize;
        Expander::with_tables(vocab_len, &member_start, &members, &[], Tables::Cold)
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
        RunCache {
            acc: vec![0; self.words as usize],
            seen_small: Vec::with_capacity(32),
            seen: AHashSet::with_capacity(256),
            stack: Vec::with_capacity(256),
            used: Vec::with_capacity(64),
            expanded: ExpandCache::allocated(self.result_slots(), &self.expansion.0),
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
    /// bit cleared), by `munch_tokens`' expansion engine; says how (for profiling).
    ///
    /// The last results are kept in the thread's scratch, by block set: consecutive masks
    /// often allow the same blocks (inside a string, a comment, a name), and a near one is a
    /// cheaper start than nothing when few blocks differ.
    pub(crate) fn expand(&self, cache: &mut RunCache, words: &mut [u32]) -> Expanded {
        self.expansion
            .0
            .expand_cached(&mut cache.expanded, &cache.acc, words)
    }

    /// Writes the mask of the last [`Dwa::run`] into `mask`: the tokens of its classes
    /// ([`Dwa::expand`]) and, if it allows end of sequence ([`Dwa::take_eos`]), `vocab`'s EOS
    /// tokens.
    pub(crate) fn write_mask(
        &self,
        cache: &mut RunCache,
        vocab: &Vocabulary,
        mask: &mut MaskMut<'_>,
    ) {
        let eos = self.take_eos(cache);
        let _ = self.expand(cache, mask.words_mut());
        if eos {
            for &t in vocab.eos() {
                mask.insert(t);
            }
        }
    }

    /// [`Dwa::expand`] without the result cache (for profiling).
    pub(crate) fn expand_uncached(&self, cache: &RunCache, words: &mut [u32]) -> Expanded {
        self.expansion.0.expand(&cache.acc, words)
    }

    /// For profiling: the number of weights the last run used, and the estimated cost of a
    /// fresh expansion of its result.
    pub(crate) fn used_profile(&self, cache: &RunCache) -> (usize, usize) {
        (cache.used.len(), self.expansion.0.cost(&cache.acc) as usize)
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
