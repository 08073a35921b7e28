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

/// The compiled automaton (immutable, shared).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dwa {
    /// Number of token classes.
    pub(crate) class_len: u32,
    /// `u64` words per class set.
    pub(crate) words: u32,
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
    /// Per class: `runs[run_start[c]..run_start[c + 1]]`, `(mask word, bits)` of its members.
    pub(crate) run_start: Vec<u32>,
    pub(crate) runs: Vec<(u32, u32)>,
    /// Every classed token's bit.
    pub(crate) all: Vec<u32>,
}

/// Scratch of one thread.
pub(crate) struct RunCache {
    acc: Vec<u64>,
    seen: AHashSet<(StateId, GssNodeId)>,
    stack: Vec<(StateId, GssNode)>,
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
    }

    pub(crate) fn create_cache(&self) -> RunCache {
        RunCache {
            acc: vec![0; self.words as usize],
            seen: AHashSet::new(),
            stack: Vec::new(),
        }
    }

    #[inline]
    fn weight(&self, w: Weight) -> &[u64] {
        let n = self.words as usize;
        &self.weights[w as usize * n..(w as usize + 1) * n]
    }

    #[inline]
    fn step(&self, s: StateId, x: u32) -> (u32, u32) {
        let lo = self.edge_start[s as usize] as usize;
        let hi = self.edge_start[s as usize + 1] as usize;
        match self.edge_x[lo..hi].binary_search(&x) {
            Ok(i) => self.edge_out[lo + i],
            Err(_) => self.default[s as usize],
        }
    }

    fn or_weight(acc: &mut [u64], w: &[u64]) {
        for (a, b) in acc.iter_mut().zip(w) {
            *a |= b;
        }
    }

    /// The initial `(state, outright weight)` of a head's lexer configuration.
    fn point(&self, lex: LexState, inhibitor: Option<LexState>) -> (u32, u32) {
        let none = (DEAD, 0);
        match inhibitor {
            None => self.plain.get(lex.as_usize()).copied().unwrap_or(none),
            Some(i) if lex.as_u32() == self.lex_start => {
                self.inhibited.get(i.as_usize()).copied().unwrap_or(none)
            }
            Some(_) => none,
        }
    }

    /// The allowed classes of `state` into `cache.acc`.
    pub(crate) fn run(&self, cache: &mut RunCache, state: &ParserState) {
        cache.acc.fill(0);
        cache.seen.clear();
        cache.stack.clear();
        for h in state.heads() {
            let (s, yes) = self.point(h.lex_state(), h.inhibitor());
            Self::or_weight(&mut cache.acc, self.weight(yes));
            if s != DEAD {
                cache.stack.push((s, h.node().clone()));
            }
        }
        let mut visits = 0usize;
        while let Some((s, node)) = cache.stack.pop() {
            if !cache.seen.insert((s, node.id())) {
                continue;
            }
            visits += 1;
            let (out, t) = self.step(s, node.state().as_u32());
            if out != 0 {
                let n = self.words as usize;
                let w = &self.weights[out as usize * n..(out as usize + 1) * n];
                Self::or_weight(&mut cache.acc, w);
            }
            if t == DEAD || is_subset(self.weight(self.undecided[t as usize]), &cache.acc) {
                continue;
            }
            for m in node.predecessors() {
                cache.stack.push((t, m));
            }
        }
        if std::env::var_os("MUNCH_WDA_VISITS").is_some() {
            eprintln!("visits {visits} heads {}", state.head_len());
        }
    }

    /// Writes the tokens of the classes in `cache.acc` into mask words (every other bit
    /// cleared).
    pub(crate) fn expand(&self, cache: &RunCache, words: &mut [u32]) {
        let acc = &cache.acc;
        let class_len = self.class_len as usize;
        let chosen: usize = iter_bits(acc)
            .map(|c| (self.run_start[c + 1] - self.run_start[c]) as usize)
            .sum();
        if chosen * 2 <= self.runs.len() {
            words.fill(0);
            for c in iter_bits(acc) {
                for &(w, bits) in
                    &self.runs[self.run_start[c] as usize..self.run_start[c + 1] as usize]
                {
                    words[w as usize] |= bits;
                }
            }
        } else {
            // Most of the vocabulary: start from every classed token, clear the missing classes.
            words.copy_from_slice(&self.all);
            for (i, &word) in acc.iter().enumerate() {
                let mut missing = !word;
                while missing != 0 {
                    let c = i * 64 + missing.trailing_zeros() as usize;
                    missing &= missing - 1;
                    if c >= class_len {
                        break;
                    }
                    for &(w, bits) in
                        &self.runs[self.run_start[c] as usize..self.run_start[c + 1] as usize]
                    {
                        words[w as usize] &= !bits;
                    }
                }
            }
        }
    }
}

fn iter_bits(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
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
