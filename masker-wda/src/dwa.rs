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

use ahash::AHashSet;
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
    /// Derived: per weight, the index of its precomputed mask (`u32::MAX`: none), and the
    /// masks.
    pub(crate) precomputed: Vec<u32>,
    pub(crate) precomputed_masks: Vec<u32>,
}

/// Weights whose expansion costs more than this many word operations are precomputed…
const PRECOMPUTE_COST: usize = 4000;
/// …within this many bytes of masks (the most expensive first).
const PRECOMPUTE_BYTES: usize = 64 << 20;

/// Scratch of one thread.
pub(crate) struct RunCache {
    acc: Vec<u64>,
    /// Pairs visited: a short list while small (most masks visit a handful), a set past that.
    seen_small: Vec<(StateId, GssNodeId)>,
    seen: AHashSet<(StateId, GssNodeId)>,
    stack: Vec<(StateId, GssNode)>,
    /// The weights the current mask is the union of.
    used: Vec<Weight>,
    /// Recent expansions: (hash of the class set, class set, mask words).
    results: Vec<(u64, Vec<u64>, Vec<u32>)>,
    next_slot: usize,
}

impl Dwa {
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
            + self.precomputed.len() * 4
            + self.precomputed_masks.len() * 4
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
        // The most expensive weights to expand, expanded once here, within a memory budget:
        // a first use then costs a copy, not thousands of scattered writes.
        let word_len = self.all.len();
        let mut costly: Vec<(usize, u32)> = self
            .weights
            .chunks(words.max(1))
            .enumerate()
            .map(|(w, set)| (self.expansion.cost(set, &self.run_start), w as u32))
            .filter(|&(c, _)| c > PRECOMPUTE_COST.max(word_len))
            .collect();
        costly.sort_unstable_by(|a, b| b.cmp(a));
        costly.truncate(PRECOMPUTE_BYTES / (word_len * 4).max(1));
        self.precomputed = vec![u32::MAX; self.weights.len() / words.max(1)];
        self.precomputed_masks = vec![0; costly.len() * word_len];
        for (i, &(_, w)) in costly.iter().enumerate() {
            self.precomputed[w as usize] = i as u32;
            let set = &self.weights[w as usize * words..(w as usize + 1) * words];
            self.expansion.expand(
                set,
                &self.run_start,
                &self.runs,
                &mut self.precomputed_masks[i * word_len..(i + 1) * word_len],
            );
        }
        let off = |&(s, w): &(u32, u32)| (offset_of[s as usize], w);
        self.plain_off = self.plain.iter().map(off).collect();
        self.inhibited_off = self.inhibited.iter().map(off).collect();
        self
    }

    pub(crate) fn create_cache(&self) -> RunCache {
        RunCache {
            acc: vec![0; self.words as usize],
            seen_small: Vec::new(),
            seen: AHashSet::new(),
            stack: Vec::new(),
            used: Vec::new(),
            results: Vec::new(),
            next_slot: 0,
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
        cache.acc.fill(0);
        cache.seen_small.clear();
        if !cache.seen.is_empty() {
            cache.seen.clear();
        }
        cache.stack.clear();
        cache.used.clear();
        for h in state.heads() {
            let (s, yes) = self.point(h.lex_state(), h.inhibitor());
            if yes != 0 && !cache.used.contains(&yes) {
                cache.used.push(yes);
                Self::or_weight(&mut cache.acc, self.weight(yes));
            }
            if s != DEAD {
                cache.stack.push((s, h.node().clone()));
            }
        }
        while let Some((s, node)) = cache.stack.pop() {
            let key = (s, node.id());
            if cache.seen_small.len() < 32 {
                if cache.seen_small.contains(&key) {
                    continue;
                }
                cache.seen_small.push(key);
            } else {
                if cache.seen.is_empty() {
                    cache.seen.extend(cache.seen_small.iter().copied());
                }
                if !cache.seen.insert(key) {
                    continue;
                }
            }
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

    /// Writes the tokens of the classes found by [`Dwa::run`] into mask words (every other
    /// bit cleared).
    ///
    /// The last few results are kept in the thread's scratch, by class set: consecutive masks
    /// often allow the same classes (inside a string, a comment, a name). Otherwise the mask is
    /// the OR of the masks of the weights the run used: the costliest weights' masks are
    /// precomputed (see [`Dwa::finish`]), the others are cheap to expand by walking their
    /// classes.
    pub(crate) fn expand(&self, cache: &mut RunCache, words: &mut [u32]) {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for &w in &cache.acc {
            hash = (hash ^ w).wrapping_mul(0x0000_0100_0000_01b3);
            hash ^= hash >> 29;
        }
        if let Some(e) = cache
            .results
            .iter()
            .find(|e| e.0 == hash && e.1 == cache.acc)
        {
            words.copy_from_slice(&e.2);
            return;
        }
        // A precomputed mask (or a dense expansion) as the base, every other weight ORed in:
        // precomputed ones word by word, the others by walking their classes.
        let word_len = words.len();
        let precomputed = |w: Weight| {
            let i = self.precomputed[w as usize];
            (i != u32::MAX).then(|| {
                &self.precomputed_masks[i as usize * word_len..(i as usize + 1) * word_len]
            })
        };
        let base = cache
            .used
            .iter()
            .position(|&w| precomputed(w).is_some())
            .or_else(|| {
                cache
                    .used
                    .iter()
                    .position(|&w| !self.expansion.is_sparse(self.weight(w)))
            });
        match base {
            Some(i) => {
                let w = cache.used[i];
                match precomputed(w) {
                    Some(m) => words.copy_from_slice(m),
                    None => {
                        self.expansion
                            .expand(self.weight(w), &self.run_start, &self.runs, words)
                    }
                }
            }
            None => words.fill(0),
        }
        for (i, &w) in cache.used.iter().enumerate() {
            if Some(i) == base {
                continue;
            }
            match precomputed(w) {
                Some(m) => {
                    for (a, b) in words.iter_mut().zip(m) {
                        *a |= b;
                    }
                }
                None => self
                    .expansion
                    .or_into(self.weight(w), &self.run_start, &self.runs, words),
            }
        }
        if cache.results.len() < RESULTS {
            cache
                .results
                .push((hash, cache.acc.clone(), words.to_vec()));
        } else {
            // Reuse the slot's buffers: no allocation once the cache is full.
            let e = &mut cache.results[cache.next_slot];
            e.0 = hash;
            e.1.copy_from_slice(&cache.acc);
            e.2.copy_from_slice(words);
            cache.next_slot = (cache.next_slot + 1) % RESULTS;
        }
    }
}

/// Expanded results kept per thread.
const RESULTS: usize = 64;
