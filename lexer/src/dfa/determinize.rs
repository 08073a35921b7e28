//! Subset construction: the combined NFA → a dense DFA over byte classes.
//!
//! Written by hand rather than taken from regex-automata because the lexer needs, per state, the
//! set of terminals whose pattern matches the whole lexeme read so far (regex-automata's DFAs
//! report a match one byte late and merge patterns), per-terminal laziness (a lazy terminal's
//! threads die as soon as it matches) and the lexer's tie-breaking.
//!
//! A DFA state is the ε-closed set of byte-consuming NFA nodes still alive, together with the
//! tie-broken set of terminals matched on entry. State [`DEAD`] (no threads, nothing accepted)
//! always exists.

use std::collections::VecDeque;

use ahash::AHashMap;

use super::error::{LexerBuildError, LexerBuildErrorKind};
use super::nfa::{Nfa, Node};
use super::{LexerConfig, TerminalSpec};
use crate::TerminalId;

/// The id of the dead state in every DFA built here.
pub(crate) const DEAD: u32 = 0;

/// A DFA over byte classes, before or after minimisation.
#[derive(Clone, Debug)]
pub(crate) struct Dfa {
    /// Number of byte classes: the row length of `table`.
    pub class_len: usize,
    /// `table[s * class_len + c]`: the state after reading a byte of class `c` in state `s`.
    pub table: Vec<u32>,
    /// Per state: the terminals accepted there, after tie-breaking, sorted.
    pub accepted: Vec<Box<[TerminalId]>>,
    /// The start state.
    pub start: u32,
}

impl Dfa {
    /// The number of states.
    pub fn state_len(&self) -> usize {
        self.accepted.len()
    }
}

/// Keeps the highest priority, then literals over regexes if any literal is left; `matched`
/// must be sorted, and so is the result.
pub(crate) fn tie_break(specs: &[TerminalSpec], matched: &[TerminalId]) -> Box<[TerminalId]> {
    let Some(best) = matched.iter().map(|t| specs[t.as_usize()].priority).max() else {
        return Box::new([]);
    };
    let top = |t: &&TerminalId| specs[t.as_usize()].priority == best;
    let any_literal = matched
        .iter()
        .filter(top)
        .any(|t| specs[t.as_usize()].is_literal);
    matched
        .iter()
        .filter(top)
        .filter(|t| !any_literal || specs[t.as_usize()].is_literal)
        .copied()
        .collect()
}

/// A state's identity during construction: sorted live threads, accepted terminals.
type Key = (Box<[u32]>, Box<[TerminalId]>);

struct Determinizer<'a> {
    nfa: &'a Nfa,
    specs: &'a [TerminalSpec],
    config: &'a LexerConfig,
    class_len: usize,
    /// `stamp[n] == epoch`: node `n` was visited by the current closure.
    stamp: Vec<u32>,
    epoch: u32,
    stack: Vec<u32>,
    matched: Vec<TerminalId>,
    ids: AHashMap<Key, u32>,
    dfa: Dfa,
    /// States whose row is still to be filled, with their threads.
    queue: VecDeque<(u32, Box<[u32]>)>,
    memory: usize,
}

/// Builds the DFA for `nfa` whose ranges are in class space (see [`Nfa::ranges_to_classes`]).
pub(crate) fn determinize(
    nfa: &Nfa,
    class_len: usize,
    specs: &[TerminalSpec],
    config: &LexerConfig,
) -> Result<Dfa, LexerBuildError> {
    let mut d = Determinizer {
        nfa,
        specs,
        config,
        class_len,
        stamp: vec![0; nfa.nodes.len()],
        epoch: 0,
        stack: Vec::new(),
        matched: Vec::new(),
        ids: AHashMap::new(),
        dfa: Dfa {
            class_len,
            table: Vec::new(),
            accepted: Vec::new(),
            start: DEAD,
        },
        queue: VecDeque::new(),
        memory: nfa.memory,
    };
    let dead = d.intern(Box::new([]), Box::new([]))?;
    debug_assert_eq!(dead, DEAD);
    // The dead state's row is all DEAD already; it needs no expansion.
    d.queue.clear();
    let (threads, accepted) = d.closure(&nfa.starts);
    d.dfa.start = d.intern(threads, accepted)?;

    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); class_len];
    // Within one state, many classes lead to the same NFA nodes (every letter of an
    // identifier): compute each distinct target once.
    let mut local: AHashMap<Vec<u32>, u32> = AHashMap::new();
    while let Some((id, threads)) = d.queue.pop_front() {
        buckets.iter_mut().for_each(Vec::clear);
        for &n in threads.iter() {
            if let Node::Bytes(ranges) = &nfa.nodes[n as usize] {
                for r in ranges.iter() {
                    for c in r.lo..=r.hi {
                        buckets[c as usize].push(r.next);
                    }
                }
            }
        }
        local.clear();
        for (c, bucket) in buckets.iter_mut().enumerate() {
            if bucket.is_empty() {
                continue; // The row was created all DEAD.
            }
            bucket.sort_unstable();
            bucket.dedup();
            let target = match local.get(bucket.as_slice()) {
                Some(&t) => t,
                None => {
                    let (threads, accepted) = d.closure(bucket);
                    let t = d.intern(threads, accepted)?;
                    local.insert(bucket.clone(), t);
                    t
                }
            };
            d.dfa.table[id as usize * class_len + c] = target;
        }
    }
    Ok(d.dfa)
}

impl Determinizer<'_> {
    /// The ε-closure of `seeds`: its byte-consuming nodes (minus the threads of lazy terminals
    /// that match here), sorted, and the tie-broken terminals that match here.
    fn closure(&mut self, seeds: &[u32]) -> (Box<[u32]>, Box<[TerminalId]>) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // Stamps wrapped around: forget them all so none looks current.
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        let nodes = &self.nfa.nodes;
        let mut threads = Vec::new();
        self.matched.clear();
        self.stack.clear();
        self.stack.extend(seeds.iter().rev());
        while let Some(n) = self.stack.pop() {
            let stamp = &mut self.stamp[n as usize];
            if *stamp == self.epoch {
                continue;
            }
            *stamp = self.epoch;
            match &nodes[n as usize] {
                Node::Bytes(_) => threads.push(n),
                Node::Eps(next) => self.stack.extend(next.iter().rev()),
                Node::Match => self.matched.push(self.nfa.owner[n as usize]),
                Node::Fail => {}
            }
        }
        self.matched.sort_unstable();
        self.matched.dedup();
        let nfa = self.nfa;
        let matched = &self.matched;
        // A lazy terminal matches the shortest lexeme: once it matched, no extension may.
        if matched.iter().any(|t| nfa.lazy[t.as_usize()]) {
            threads.retain(|&n| {
                let owner = nfa.owner[n as usize];
                !(nfa.lazy[owner.as_usize()] && matched.binary_search(&owner).is_ok())
            });
        }
        threads.sort_unstable();
        (threads.into(), tie_break(self.specs, matched))
    }

    /// The id of the state `(threads, accepted)`, adding it (with an all-DEAD row, queued for
    /// expansion) if new.
    fn intern(
        &mut self,
        threads: Box<[u32]>,
        accepted: Box<[TerminalId]>,
    ) -> Result<u32, LexerBuildError> {
        let key = (threads, accepted);
        if let Some(&id) = self.ids.get(&key) {
            return Ok(id);
        }
        let id = self.dfa.accepted.len();
        if id >= self.config.max_states {
            return Err(LexerBuildError::new(LexerBuildErrorKind::TooManyStates {
                limit: self.config.max_states,
            }));
        }
        // The key twice (map and queue), its accepted set in the DFA, the table row, and the
        // map's own overhead, roughly.
        self.memory += 2 * key.0.len() * 4 + 3 * key.1.len() * 4 + self.class_len * 4 + 64;
        if self.memory > self.config.max_build_memory {
            return Err(LexerBuildError::new(LexerBuildErrorKind::TooMuchMemory {
                limit: self.config.max_build_memory,
            }));
        }
        let id = id as u32;
        self.dfa.accepted.push(key.1.clone());
        let rows = self.dfa.table.len() + self.class_len;
        self.dfa.table.resize(rows, DEAD);
        self.queue.push_back((id, key.0.clone()));
        self.ids.insert(key, id);
        Ok(id)
    }
}
