//! Subset construction: the combined NFA → a dense DFA over byte classes.
//!
//! Written by hand rather than taken from regex-automata because the lexer needs, per state, the
//! set of terminals whose pattern matches the whole lexeme read so far (regex-automata's DFAs
//! report a match one byte late and merge patterns), per-terminal match semantics (priority
//! for lazy terminals, below) and the lexer's tie-breaking.
//!
//! A DFA state is the ε-closed set of threads still alive, together with the tie-broken set of
//! terminals matched on entry. State [`DEAD`] (no threads, nothing accepted) always exists.
//!
//! # Priority terminals
//!
//! A terminal with a lazy repetition (a *priority terminal*, `Nfa::lazy`) matches what
//! Python's `re` (and regex-automata's `MatchKind::LeftmostFirst`) matches: its threads form a
//! list in priority order, as a PikeVM keeps them. The ε-closure explores each thread's
//! alternatives in order, depth first, and a node reached a second time keeps its first (higher)
//! place. When a thread reaches the match, the terminal matches here and every thread after it
//! in the list (lower priority) is dropped; the threads before it go on and may match later,
//! which is how `.*?` stops at the first close while a greedy loop around it keeps iterating.
//! So a priority terminal matches the lexeme `w` iff a leftmost-first search on a text starting
//! with `w` records a match at the end of `w`, and its match on the whole text is the last one
//! recorded before its threads die. A state's key keeps a priority terminal's threads in their
//! order (the same set in two orders is two states); other terminals' threads are a sorted set,
//! which keeps their language (every lexeme some path of the pattern spells) as it is.
//!
//! # Look-around
//!
//! A thread is a byte-consuming NFA node and a *watcher*: the set of nodes of the negative
//! look-ahead patterns it passed, run on the bytes read since (one set for all of them: the
//! thread dies as soon as any of them matches). A thread passing `(?!X)` adds `X`'s start to
//! its watcher (and dies if `X` matches the empty string). A terminal that matches while some
//! of its threads' watchers are still running matches *conditionally*: its condition is the
//! set of those watchers, and it holds on the next byte unless every one of them matches on
//! it. The next byte must decide the condition (each watcher matches or dies on it) wherever
//! the lexeme ends there; otherwise the terminal is refused.
//!
//! The *history* of a state is the set of nodes of the look-behind patterns started at every
//! position of the lexeme, run on the bytes read since: `(?<=Y)` holds where `Y`'s match node
//! is in it. The NFA builder made sure no look-behind can reach before the lexeme's first byte,
//! so this is exact. The history is kept only while a terminal with a look-behind has threads.
//!
//! A priority terminal that matches conditionally keeps its match node in the thread list, in
//! its place; on the next byte, where the condition holds (there it matched) the threads after
//! it are dropped, and where it fails they go on. A next byte that does not decide it is
//! refused if a thread after it would depend on it.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use ahash::AHashMap;

use super::error::{LexerBuildError, LexerBuildErrorKind};
use super::look::LookAroundKind;
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
    /// Per state: the classes of next bytes on which its accepted terminals do not match
    /// (their look-ahead fails); only classes the state has no transition on, or whose bytes
    /// begin multi-byte characters.
    pub fail: Vec<FailSet>,
    /// The start state.
    pub start: u32,
    /// Per state: what kinds of terminal match its lexemes before ties are broken
    /// ([`NONLITERAL`], [`KEPT`]: what [`LexerConfig::backtrack_literals`] and
    /// [`LexerConfig::backtrack_ignored`] read); a state past the end has none. Kept apart by
    /// minimisation.
    pub kinds: Vec<u8>,
}

/// A set of byte classes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct FailSet(pub [u64; 4]);

impl FailSet {
    pub const EMPTY: FailSet = FailSet([0; 4]);

    pub fn insert(&mut self, class: u8) {
        munch_vocab::bits::insert(&mut self.0, usize::from(class));
    }

    #[inline]
    pub fn contains(&self, class: u8) -> bool {
        munch_vocab::bits::contains(&self.0, usize::from(class))
    }
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

/// Flags a conditional match carried into a byte's bucket (see [`Determinizer::step_looks`]),
/// apart from a thread that moved onto a match node. Node ids stay below 2³¹: the build-memory
/// budget counts every node.
const MARKER: u64 = 1 << 63;

/// Puts threads (`node << 32 | watcher`) in a state's canonical order: by terminal; a priority
/// terminal's threads keep their order (highest priority first), the others are sorted.
fn canonical_order(nfa: &Nfa, threads: &mut [u64]) {
    if !nfa.any_lazy {
        // Node ids grow with their terminal (`Nfa::owner` never decreases), so with no
        // priority terminal the order is the threads' own. A state at a key's opening quote
        // holds a thread per key: hundreds, sorted at every closure.
        threads.sort_unstable();
        return;
    }
    let key = |&t: &u64| {
        let owner = nfa.owner[(t >> 32) as usize];
        (owner, if nfa.lazy[owner.as_usize()] { 0 } else { t })
    };
    // Stable: equal keys are one priority terminal's threads, in order.
    threads.sort_by_key(key);
}

/// A state's identity during construction, in one slice so that a closure is looked up
/// without allocating: the number of threads; the live threads (`node << 32 | watcher`) in
/// canonical order; the history; the matched terminals with their conditions
/// (`terminal << 32 | condition`, 0: unconditional), tie-broken when none is conditional.
/// [`key_parts`] reads it back.
type Key = [u64];

/// A [`Key`]'s threads, history and matched terminals.
/// In [`Dfa::kinds`]: a terminal other than a literal matches (with
/// [`LexerConfig::backtrack_literals`]).
pub(crate) const NONLITERAL: u8 = 1;
/// In [`Dfa::kinds`]: a terminal that is not `%ignore`d matches (with
/// [`LexerConfig::backtrack_ignored`]).
pub(crate) const KEPT: u8 = 2;
/// Where a [`Key`]'s history word holds the state's [`Dfa::kinds`], above the history.
const KINDS_SHIFT: u32 = 32;

fn key_parts(key: &Key) -> (&[u64], u32, &[u64]) {
    let n = key[0] as usize;
    (&key[1..=n], key[n + 1] as u32, &key[n + 2..])
}

/// A matched terminal of a [`Key`] and its condition.
fn match_parts(m: u64) -> (TerminalId, u32) {
    (TerminalId::from_usize((m >> 32) as usize), m as u32)
}

/// Slices of `u64` stored end to end and found again by their contents, numbered from 0 in
/// the order they are added: the states' keys (a state's id is its key's number) and the
/// seeds of the closures already made. One buffer for them all, so adding one allocates
/// nothing of its own: a map from a keyed hash of the slice to the last slice of that hash,
/// and a chain through the earlier slices of the same hash.
struct Slices {
    data: Vec<u64>,
    /// Per slice: where it ends in `data` (it starts where the one before it ends).
    ends: Vec<usize>,
    /// Per slice: the slice added before it with the same hash, or [`Slices::NONE`].
    same_hash: Vec<u32>,
    last_of_hash: HashMap<u64, u32, BuildHasherDefault<HashedHasher>>,
    hasher: ahash::RandomState,
}

impl Slices {
    const NONE: u32 = u32::MAX;

    fn new() -> Slices {
        Slices {
            data: Vec::new(),
            ends: Vec::new(),
            same_hash: Vec::new(),
            last_of_hash: HashMap::default(),
            hasher: ahash::RandomState::new(),
        }
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Slice `i`.
    fn get(&self, i: u32) -> &[u64] {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.data[start..self.ends[i]]
    }

    /// The number of the slice equal to `key`, or else `key`'s hash for [`Slices::push`].
    fn find(&self, key: &[u64]) -> Result<u32, u64> {
        let hash = self.hasher.hash_one(key);
        let mut i = self
            .last_of_hash
            .get(&hash)
            .copied()
            .unwrap_or(Slices::NONE);
        while i != Slices::NONE {
            if self.get(i) == key {
                return Ok(i);
            }
            i = self.same_hash[i as usize];
        }
        Err(hash)
    }

    /// Adds `key`, not present, whose hash [`Slices::find`] gave; returns its number.
    fn push(&mut self, key: &[u64], hash: u64) -> u32 {
        let i = self.ends.len() as u32;
        self.data.extend_from_slice(key);
        self.ends.push(self.data.len());
        let before = self.last_of_hash.insert(hash, i);
        self.same_hash.push(before.unwrap_or(Slices::NONE));
        i
    }

    fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
        self.same_hash.clear();
        self.last_of_hash.clear();
    }
}

/// The hasher of [`Slices`]' map, whose keys are hashes already: it keeps the key.
#[derive(Default)]
struct HashedHasher(u64);

impl Hasher for HashedHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }
}

/// Sets of NFA nodes (or of watcher ids), interned; id 0 is the empty set.
struct Interner {
    sets: Vec<Box<[u32]>>,
    ids: AHashMap<Box<[u32]>, u32>,
}

impl Interner {
    fn new() -> Interner {
        let mut ids = AHashMap::new();
        ids.insert(Box::from([]), 0);
        Interner {
            sets: vec![Box::new([])],
            ids,
        }
    }

    /// The id of the sorted, deduplicated `set`.
    fn intern(&mut self, set: &[u32]) -> u32 {
        if let Some(&id) = self.ids.get(set) {
            return id;
        }
        let id = self.sets.len() as u32;
        self.sets.push(set.into());
        self.ids.insert(set.into(), id);
        id
    }
}

/// What the next byte does to a condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Holds,
    Fails,
    Undecided,
}

/// The look-around part of the construction (empty when no terminal has a look-around).
struct Looks {
    /// Watchers (sets of look-ahead pattern nodes), and histories (look-behind pattern nodes).
    watchers: Interner,
    histories: Interner,
    /// Per history: the look-arounds whose pattern matches there, sorted.
    history_matches: Vec<Box<[u32]>>,
    /// Conditions: sorted sets of watcher ids.
    conditions: Interner,
    /// `(watcher, class)` → the watcher after the byte, `None` if it matched.
    steps: AHashMap<(u32, u8), Option<u32>>,
    /// The start nodes of every look-behind pattern.
    behind_starts: Vec<u32>,
}

impl Looks {
    /// The ε-closure of `seeds` inside asserted patterns: its byte-consuming and match nodes,
    /// sorted, and the look-arounds whose pattern matched.
    fn closure(nfa: &Nfa, seeds: &[u32]) -> (Vec<u32>, Vec<u32>) {
        let mut seen = ahash::AHashSet::new();
        let mut stack = seeds.to_vec();
        let (mut nodes, mut matched) = (Vec::new(), Vec::new());
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            match &nfa.nodes[n as usize] {
                Node::Bytes(_) => nodes.push(n),
                Node::Eps(next) => stack.extend(next.iter()),
                // Kept in the set too: two histories with the same running nodes differ
                // when one of them has just matched.
                Node::SubMatch(l) => {
                    nodes.push(n);
                    matched.push(*l)
                }
                // Asserted patterns have no look-around and no terminal match.
                Node::Look { .. } | Node::Match | Node::Fail => {}
            }
        }
        nodes.sort_unstable();
        matched.sort_unstable();
        matched.dedup();
        (nodes, matched)
    }

    /// The nodes `set` moves to on class `class`.
    fn step_nodes(nfa: &Nfa, set: &[u32], class: u8) -> Vec<u32> {
        let mut out = Vec::new();
        for &n in set {
            if let Node::Bytes(ranges) = &nfa.nodes[n as usize] {
                out.extend(
                    ranges
                        .iter()
                        .filter(|r| r.lo <= class && class <= r.hi)
                        .map(|r| r.next),
                );
            }
        }
        out
    }

    /// Watcher `w` after a byte of class `class`: `None` if one of its patterns matched.
    fn step(&mut self, nfa: &Nfa, w: u32, class: u8) -> Option<u32> {
        if w == 0 {
            return Some(0);
        }
        if let Some(&r) = self.steps.get(&(w, class)) {
            return r;
        }
        let seeds = Self::step_nodes(nfa, &self.watchers.sets[w as usize], class);
        let (nodes, matched) = Self::closure(nfa, &seeds);
        let r = matched.is_empty().then(|| self.watchers.intern(&nodes));
        self.steps.insert((w, class), r);
        r
    }

    /// Watcher `w` with look-ahead `look`'s pattern started: `None` if it matches the empty
    /// string (the assertion `(?!X)` fails).
    fn start(&mut self, nfa: &Nfa, w: u32, look: u32) -> Option<u32> {
        let (mut nodes, matched) = Self::closure(nfa, &[nfa.looks[look as usize].start]);
        if !matched.is_empty() {
            return None;
        }
        nodes.extend_from_slice(&self.watchers.sets[w as usize]);
        nodes.sort_unstable();
        nodes.dedup();
        Some(self.watchers.intern(&nodes))
    }

    /// The history of a lexeme's start, or after `history` read a byte of class `class`.
    fn history(&mut self, nfa: &Nfa, from: Option<(u32, u8)>) -> u32 {
        let mut seeds = self.behind_starts.clone();
        if let Some((h, class)) = from {
            seeds.extend(Self::step_nodes(
                nfa,
                &self.histories.sets[h as usize],
                class,
            ));
        }
        let (nodes, matched) = Self::closure(nfa, &seeds);
        let id = self.histories.intern(&nodes) as usize;
        // Interned ids grow by one; the matches of an existing set are already known.
        if id == self.history_matches.len() {
            self.history_matches.push(matched.into());
        }
        id as u32
    }

    /// Whether condition `c` holds on a next byte of class `class`: it does if some watcher
    /// dies there without matching, fails if every watcher matches.
    fn outcome(&mut self, nfa: &Nfa, c: u32, class: u8) -> Outcome {
        if c == 0 {
            return Outcome::Holds;
        }
        let mut undecided = false;
        for i in 0..self.conditions.sets[c as usize].len() {
            let w = self.conditions.sets[c as usize][i];
            match self.step(nfa, w, class) {
                Some(0) => return Outcome::Holds,
                Some(_) => undecided = true,
                None => {}
            }
        }
        if undecided {
            Outcome::Undecided
        } else {
            Outcome::Fails
        }
    }
}

struct Determinizer<'a> {
    nfa: &'a Nfa,
    specs: &'a [TerminalSpec],
    config: &'a LexerConfig,
    class_len: usize,
    /// `stamp[n] == epoch`: node `n` was visited by the current closure without a watcher.
    stamp: Vec<u32>,
    epoch: u32,
    /// Threads with a watcher visited by the current closure.
    seen: ahash::AHashSet<u64>,
    stack: Vec<u64>,
    matched: Vec<(TerminalId, u32)>,
    /// The current closure's threads, and its key ([`Determinizer::closure`]).
    threads: Vec<u64>,
    key: Vec<u64>,
    /// The states' keys, by id. States are expanded in id order: those from
    /// [`Determinizer::expanded`] on still have their row to fill.
    keys: Slices,
    expanded: u32,
    dfa: Dfa,
    /// Per state: its matched terminals with their conditions, when one is conditional.
    conditional: Vec<Box<[(TerminalId, u32)]>>,
    memory: usize,
    /// The state a closure led to, by its seeds (canonical order, deduplicated) followed by
    /// the history: most states are reached from many states (every way of completing a
    /// character leads to the same count of characters), and a lookup costs less than the
    /// closure and the key's interning. Only a cache: [`Determinizer::remember_target`] keeps
    /// it within the memory budget that the states leave.
    targets: Slices,
    /// Per entry of `targets`: the state.
    target_of: Vec<u32>,
    /// What `targets` holds, roughly.
    targets_memory: usize,
    looks: Looks,
    /// `(literal, stand-in)`, sorted: a literal that wins a tie against one regex is accepted
    /// as its stand-in ([`determinize`]).
    contextual: &'a [(TerminalId, TerminalId)],
    /// `(stand-in, regex)` for the states that accept a stand-in (closures repeat: a set).
    stood_in: ahash::AHashSet<(TerminalId, TerminalId)>,
}

/// Builds the DFA for `nfa` whose ranges are in class space (see [`Nfa::ranges_to_classes`]);
/// `class_lo[c]` is the lowest byte of class `c`.
///
/// `contextual` lists `(literal, stand-in)` pairs, sorted by literal: where a literal wins a
/// tie on its lexeme by being a literal (the rule of [`tie_break`]) against exactly one regex
/// of its priority, the state accepts the stand-in instead, and the second value returned
/// lists the `(stand-in, regex)` pairs of such states.
pub(crate) fn determinize(
    nfa: &Nfa,
    class_lo: &[u8],
    specs: &[TerminalSpec],
    config: &LexerConfig,
    contextual: &[(TerminalId, TerminalId)],
) -> Result<(Dfa, Vec<(TerminalId, TerminalId)>), LexerBuildError> {
    let class_len = class_lo.len();
    let behind_starts = nfa
        .looks
        .iter()
        .filter(|l| matches!(l.kind, LookAroundKind::Behind | LookAroundKind::NotBehind))
        .map(|l| l.start)
        .collect();
    let mut d = Determinizer {
        nfa,
        specs,
        config,
        class_len,
        stamp: vec![0; nfa.nodes.len()],
        epoch: 0,
        seen: ahash::AHashSet::new(),
        stack: Vec::new(),
        matched: Vec::new(),
        threads: Vec::new(),
        key: Vec::new(),
        keys: Slices::new(),
        expanded: 0,
        dfa: Dfa {
            class_len,
            table: Vec::new(),
            accepted: Vec::new(),
            fail: Vec::new(),
            start: DEAD,
            kinds: Vec::new(),
        },
        conditional: Vec::new(),
        memory: nfa.memory,
        targets: Slices::new(),
        target_of: Vec::new(),
        targets_memory: 0,
        looks: Looks {
            watchers: Interner::new(),
            histories: Interner::new(),
            history_matches: vec![Box::new([])],
            conditions: Interner::new(),
            steps: AHashMap::new(),
            behind_starts,
        },
        contextual,
        stood_in: ahash::AHashSet::new(),
    };
    // No threads, history 0, nothing matched.
    d.key.extend([0, 0]);
    let dead = d.intern()?;
    debug_assert_eq!(dead, DEAD);
    // The dead state's row is all DEAD already; it needs no expansion.
    d.expanded = 1;
    let seeds: Vec<u64> = nfa.starts.iter().map(|&n| u64::from(n) << 32).collect();
    let history = if nfa.behind.iter().any(|&b| b) {
        d.looks.history(nfa, None)
    } else {
        0
    };
    d.closure(&seeds, history)?;
    d.dfa.start = d.intern()?;

    // A state's threads cut the classes into runs that every thread treats alike (no range
    // of any thread starts or ends inside a run): each run's target is computed once, from
    // its first class, and written for all its classes. A string's content is one thread over
    // most of the classes in a dozen ranges, so this is a dozen targets instead of a row's
    // worth. Look-arounds step per class (a watcher reads the byte), so with any of them each
    // class is its own run.
    let per_class = !nfa.looks.is_empty();
    let mut cuts: Vec<u16> = Vec::new();
    let mut run_of = vec![0u32; class_len];
    let mut buckets: Vec<Vec<u64>> = Vec::new();
    // Within one state, many runs lead to the same threads (the letters of an identifier
    // around a keyword's): compute each distinct target once. The key is a run's bucket as
    // filled (its order follows the state's threads, so equal threads come in the same order)
    // with the history after it, which decide the target. A state has a few distinct targets
    // (a dozen in a string's UTF-8 ranges), so they are found by a scan of the runs already
    // done: `(run, fingerprint of its key, target)`, the key compared where the fingerprints
    // agree (at most the classes' number of fingerprints per run, however long the keys).
    let mut done: Vec<(usize, u64, u32)> = Vec::new();
    let mut sorted: Vec<u64> = Vec::new();
    let mut threads: Vec<u64> = Vec::new();
    while (d.expanded as usize) < d.keys.len() {
        let id = d.expanded;
        d.expanded += 1;
        let (key_threads, history, _) = key_parts(d.keys.get(id));
        threads.clear();
        threads.extend_from_slice(key_threads);
        cuts.clear();
        if per_class {
            cuts.extend(0..=class_len as u16);
        } else {
            // Where a run may start (bit `c`), up to the end of the row (bit `class_len`).
            let mut starts = [0u64; 5];
            let mut cut = |c: usize| starts[c / 64] |= 1 << (c % 64);
            cut(0);
            cut(class_len);
            for &t in threads.iter() {
                if let Node::Bytes(ranges) = &nfa.nodes[(t >> 32) as usize] {
                    for r in ranges.iter() {
                        cut(usize::from(r.lo));
                        cut(usize::from(r.hi) + 1);
                    }
                }
            }
            for (w, &word) in starts.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    cuts.push((w * 64) as u16 + bits.trailing_zeros() as u16);
                    bits &= bits - 1;
                }
            }
        }
        let runs = cuts.len() - 1;
        for (i, w) in cuts.windows(2).enumerate() {
            run_of[w[0] as usize..w[1] as usize].fill(i as u32);
        }
        if buckets.len() < runs {
            buckets.resize(runs, Vec::new());
        }
        buckets[..runs].iter_mut().for_each(Vec::clear);
        for &t in threads.iter() {
            match &nfa.nodes[(t >> 32) as usize] {
                Node::Bytes(ranges) => {
                    for r in ranges.iter() {
                        let (first, last) = (run_of[r.lo as usize], run_of[r.hi as usize]);
                        for b in &mut buckets[first as usize..=last as usize] {
                            b.push(u64::from(r.next) << 32 | (t & 0xFFFF_FFFF));
                        }
                    }
                }
                // A conditional match of a priority terminal: decided by the next byte, in
                // its place among the threads.
                Node::Match => buckets[..runs].iter_mut().for_each(|b| b.push(t | MARKER)),
                _ => {}
            }
        }
        done.clear();
        for i in 0..runs {
            let (before, after) = buckets.split_at_mut(i);
            let bucket = &mut after[0];
            if bucket.is_empty() {
                continue; // The row was created all DEAD.
            }
            let c = cuts[i] as usize;
            let mut history_after = 0;
            if per_class {
                d.step_looks(bucket, c as u8)?;
                if bucket.is_empty() {
                    continue;
                }
                if bucket
                    .iter()
                    .any(|&t| nfa.behind[nfa.owner[(t >> 32) as usize].as_usize()])
                {
                    history_after = d.looks.history(nfa, Some((history, c as u8)));
                }
            }
            bucket.push(u64::from(history_after));
            let print = bucket.iter().fold(bucket.len() as u64, |h, &t| {
                (h.rotate_left(5) ^ t).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            });
            let seen = done
                .iter()
                .find(|&&(j, p, _)| p == print && before[j] == *bucket);
            let target = match seen {
                Some(&(_, _, t)) => t,
                None => {
                    sorted.clear();
                    sorted.extend_from_slice(&bucket[..bucket.len() - 1]);
                    canonical_order(nfa, &mut sorted);
                    sorted.dedup();
                    sorted.push(u64::from(history_after));
                    let t = match d.targets.find(&sorted) {
                        Ok(entry) => d.target_of[entry as usize],
                        Err(hash) => {
                            let seeds = &sorted[..sorted.len() - 1];
                            d.closure(seeds, history_after)?;
                            let t = d.intern()?;
                            d.remember_target(&sorted, hash, t);
                            t
                        }
                    };
                    done.push((i, print, t));
                    t
                }
            };
            let row = id as usize * class_len;
            d.dfa.table[row + c..row + cuts[i + 1] as usize].fill(target);
        }
    }
    d.fail_sets(class_lo)?;
    let mut stood_in: Vec<(TerminalId, TerminalId)> = d.stood_in.into_iter().collect();
    stood_in.sort_unstable();
    Ok((d.dfa, stood_in))
}

impl Determinizer<'_> {
    fn unsupported(&self, terminal: TerminalId, what: String) -> LexerBuildError {
        LexerBuildError::new(LexerBuildErrorKind::Unsupported {
            terminal,
            name: self.specs[terminal.as_usize()].name.clone(),
            what,
        })
    }

    /// Moves the watchers of the threads in `bucket` (already moved to their next nodes) over
    /// the byte, dropping threads whose watcher matched. A conditional match of a priority
    /// terminal (its match node, in its place among the threads) whose condition holds on this
    /// byte drops the terminal's threads after it, which have lower priority; it drops itself
    /// either way.
    fn step_looks(&mut self, bucket: &mut Vec<u64>, class: u8) -> Result<(), LexerBuildError> {
        let nfa = self.nfa;
        let mut cut: Vec<TerminalId> = Vec::new();
        // A priority terminal whose conditional match the byte does not decide: refused if a
        // thread of lower priority depends on it.
        let mut undecided: Vec<TerminalId> = Vec::new();
        let mut out = Vec::with_capacity(bucket.len());
        for &t in bucket.iter() {
            let marker = t & MARKER != 0;
            let (n, w) = (((t & !MARKER) >> 32) as u32, (t & 0xFFFF_FFFF) as u32);
            let owner = nfa.owner[n as usize];
            if cut.contains(&owner) {
                continue;
            }
            if undecided.contains(&owner) {
                return Err(self.unsupported(
                    owner,
                    "a lazy repetition whose end depends on a look-ahead more than one byte \
                     past it"
                        .to_string(),
                ));
            }
            let stepped = self.looks.step(nfa, w, class);
            if marker {
                match stepped {
                    Some(0) => cut.push(owner),
                    Some(_) => undecided.push(owner),
                    None => {}
                }
                continue;
            }
            if let Some(w2) = stepped {
                out.push(u64::from(n) << 32 | u64::from(w2));
            }
        }
        *bucket = out;
        Ok(())
    }

    /// The ε-closure of `seeds` (threads) at a position with history `history`, as the key in
    /// `self.key`: its threads (minus those of lazy terminals that match unconditionally),
    /// sorted, and the matched terminals with their conditions.
    fn closure(&mut self, seeds: &[u64], history: u32) -> Result<(), LexerBuildError> {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            // Stamps wrapped around: forget them all so none looks current.
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        let nodes = &self.nfa.nodes;
        let nfa = self.nfa;
        let mut threads = std::mem::take(&mut self.threads);
        threads.clear();
        // Priority terminals that matched unconditionally in this closure: their threads of
        // lower priority, still to come, are dropped.
        let mut cut: Vec<TerminalId> = Vec::new();
        self.seen.clear();
        self.matched.clear();
        self.stack.clear();
        self.stack.extend(seeds.iter().rev());
        while let Some(t) = self.stack.pop() {
            let (n, w) = ((t >> 32) as u32, (t & 0xFFFF_FFFF) as u32);
            let owner = nfa.owner[n as usize];
            if !cut.is_empty() && cut.contains(&owner) {
                continue;
            }
            if w == 0 {
                let stamp = &mut self.stamp[n as usize];
                if *stamp == self.epoch {
                    continue;
                }
                *stamp = self.epoch;
            } else if !self.seen.insert(t) {
                continue;
            }
            match &nodes[n as usize] {
                Node::Bytes(_) => threads.push(t),
                Node::Eps(next) => self.stack.extend(
                    next.iter()
                        .rev()
                        .map(|&m| u64::from(m) << 32 | u64::from(w)),
                ),
                Node::Match => {
                    self.matched.push((owner, w));
                    if nfa.lazy[owner.as_usize()] {
                        if w == 0 {
                            cut.push(owner);
                        } else {
                            threads.push(t);
                        }
                    }
                }
                Node::Look { look, next } => {
                    let pass = match self.nfa.looks[*look as usize].kind {
                        LookAroundKind::NotAhead => self.looks.start(self.nfa, w, *look),
                        kind => {
                            let found = self.looks.history_matches[history as usize]
                                .binary_search(look)
                                .is_ok();
                            (found == (kind == LookAroundKind::Behind)).then_some(w)
                        }
                    };
                    if let Some(w) = pass {
                        self.stack.push(u64::from(*next) << 32 | u64::from(w));
                    }
                }
                Node::SubMatch(_) | Node::Fail => {}
            }
        }
        // Per terminal: unconditional if some thread matched with no watcher running.
        self.matched.sort_unstable();
        let mut matched: Vec<(TerminalId, u32)> = Vec::new();
        let mut i = 0;
        while i < self.matched.len() {
            let t = self.matched[i].0;
            let mut j = i;
            while j < self.matched.len() && self.matched[j].0 == t {
                j += 1;
            }
            let c = if self.matched[i].1 == 0 {
                0
            } else {
                let watchers: Vec<u32> = self.matched[i..j].iter().map(|m| m.1).collect();
                self.looks.conditions.intern(&watchers)
            };
            matched.push((t, c));
            i = j;
        }
        canonical_order(nfa, &mut threads);
        self.key.clear();
        self.key.push(threads.len() as u64);
        self.key.extend_from_slice(&threads);
        // The kinds of terminal that match here (before ties), above the history's 32 bits:
        // two closures that differ in them are two states.
        let spec = |m: &(TerminalId, u32)| &self.specs[m.0.as_usize()];
        let nonliteral =
            self.config.backtrack_literals && matched.iter().any(|m| !spec(m).is_literal);
        let kept = self.config.backtrack_ignored && matched.iter().any(|m| !spec(m).ignored);
        let kinds = (u8::from(nonliteral) * NONLITERAL) | (u8::from(kept) * KEPT);
        self.key
            .push(u64::from(history) | u64::from(kinds) << KINDS_SHIFT);
        let encode = |(t, c): (TerminalId, u32)| (t.as_usize() as u64) << 32 | u64::from(c);
        if matched.iter().all(|m| m.1 == 0) {
            let terminals: Vec<TerminalId> = matched.iter().map(|m| m.0).collect();
            let kept = tie_break(self.specs, &terminals);
            let kept = self.stand_in(&terminals, kept);
            self.key.extend(kept.iter().map(|&t| encode((t, 0))));
        } else {
            self.key.extend(matched.iter().copied().map(encode));
        }
        self.threads = threads;
        Ok(())
    }

    /// `kept` (the tie broken among `matched`), or the stand-in of the literal it holds when
    /// that literal won against exactly one regex of its priority (see [`determinize`]).
    fn stand_in(&mut self, matched: &[TerminalId], kept: Box<[TerminalId]>) -> Box<[TerminalId]> {
        let [literal] = *kept else {
            return kept;
        };
        let Ok(i) = self.contextual.binary_search_by_key(&literal, |c| c.0) else {
            return kept;
        };
        let spec = |t: TerminalId| &self.specs[t.as_usize()];
        let priority = spec(literal).priority;
        let mut regexes = matched.iter().copied().filter(|&t| {
            t != literal && !spec(t).is_literal && !spec(t).ignored && spec(t).priority == priority
        });
        let (Some(regex), None) = (regexes.next(), regexes.next()) else {
            return kept;
        };
        let stand_in = self.contextual[i].1;
        self.stood_in.insert((stand_in, regex));
        Box::new([stand_in])
    }

    /// Remembers that the closure of the seeds and history in `seeds_history` (as
    /// [`Determinizer::targets`] keys them, of hash `hash`) is state `target`, unless the cache
    /// would push the build's memory past its budget (then it is forgotten, which changes no
    /// state).
    fn remember_target(&mut self, seeds_history: &[u64], hash: u64, target: u32) {
        let size = seeds_history.len() * 8 + 32;
        if self.memory + self.targets_memory + size > self.config.max_build_memory {
            self.targets.clear();
            self.target_of.clear();
            self.targets_memory = 0;
            return;
        }
        self.targets_memory += size;
        self.targets.push(seeds_history, hash);
        self.target_of.push(target);
    }

    /// The id of the state whose key is `self.key`, adding it (with an all-DEAD row, to be
    /// expanded) if new.
    fn intern(&mut self) -> Result<u32, LexerBuildError> {
        let hash = match self.keys.find(&self.key) {
            Ok(id) => return Ok(id),
            Err(hash) => hash,
        };
        let id = self.dfa.accepted.len();
        if id >= self.config.max_states {
            return Err(LexerBuildError::new(LexerBuildErrorKind::TooManyStates {
                limit: self.config.max_states,
            }));
        }
        // The key (counted twice: a margin for the map that finds it), its accepted set in the
        // DFA, the table row, and the map's own overhead, roughly.
        let (threads, _, matched) = key_parts(&self.key);
        self.memory += 2 * threads.len() * 4 + 3 * matched.len() * 4 + self.class_len * 4 + 64;
        if self.memory > self.config.max_build_memory {
            return Err(LexerBuildError::new(LexerBuildErrorKind::TooMuchMemory {
                limit: self.config.max_build_memory,
            }));
        }
        let terminals: Vec<TerminalId> = matched.iter().map(|&m| match_parts(m).0).collect();
        let conditional = matched.iter().any(|&m| match_parts(m).1 != 0);
        self.dfa.accepted.push(if conditional {
            tie_break(self.specs, &terminals)
        } else {
            terminals.into()
        });
        self.dfa.fail.push(FailSet::EMPTY);
        let history_word = self.key[self.key[0] as usize + 1];
        self.dfa.kinds.push((history_word >> KINDS_SHIFT) as u8);
        self.conditional.push(if conditional {
            matched.iter().map(|&m| match_parts(m)).collect()
        } else {
            Box::new([])
        });
        let rows = self.dfa.table.len() + self.class_len;
        self.dfa.table.resize(rows, DEAD);
        let id = self.keys.push(&self.key, hash);
        debug_assert_eq!(id as usize, self.dfa.accepted.len() - 1);
        Ok(id)
    }

    /// Per state whose accepted terminals match conditionally: the classes of next bytes on
    /// which the lexeme may end (the row leads to DEAD, or the byte begins a multi-byte
    /// character, which may not extend the lexeme once complete) and the condition fails.
    /// Refuses what one set per state cannot say exactly, on a next byte that may end the
    /// lexeme: a condition that byte does not decide, tied terminals whose conditions differ on
    /// it, and a conditional terminal failing on it that beats another by tie-breaking (the
    /// other would win there).
    fn fail_sets(&mut self, class_lo: &[u8]) -> Result<(), LexerBuildError> {
        let k = self.class_len;
        for s in 0..self.conditional.len() {
            if self.conditional[s].is_empty() {
                continue;
            }
            let matched = std::mem::take(&mut self.conditional[s]);
            let accepted = self.dfa.accepted[s].clone();
            let top: Vec<(TerminalId, u32)> = matched
                .iter()
                .copied()
                .filter(|m| accepted.contains(&m.0))
                .collect();
            let Some(&(conditional, _)) = top.iter().find(|m| m.1 != 0) else {
                continue;
            };
            let beaten = matched
                .iter()
                .find(|m| !accepted.contains(&m.0))
                .map(|m| m.0);
            let mut fail = FailSet::EMPTY;
            // A lexeme a lazy terminal matches may end before any byte: the lexer goes back to
            // it if the longer reading never matches.
            let backtracks =
                self.config.backtrack_lazy && accepted.iter().any(|t| self.nfa.lazy[t.as_usize()]);
            for (class, &lo) in class_lo.iter().enumerate() {
                // A byte that goes on with the lexeme ends it only if it begins a multi-byte
                // character (which may turn out not to extend it), or if the lexer may go back.
                if self.dfa.table[s * k + class] != DEAD && lo < 0xC0 && !backtracks {
                    continue; // The lexeme goes on: it does not end here.
                }
                let mut outcome = None;
                for &(terminal, c) in &top {
                    let o = self.looks.outcome(self.nfa, c, class as u8);
                    if o == Outcome::Undecided {
                        return Err(self.unsupported(
                            terminal,
                            "a look-ahead reaching more than one byte past the end of the lexeme"
                                .to_string(),
                        ));
                    }
                    if outcome.is_some_and(|prev| prev != o) {
                        return Err(self.unsupported(
                            conditional,
                            "a look-ahead on a lexeme that a terminal without the same \
                             look-ahead also matches"
                                .to_string(),
                        ));
                    }
                    outcome = Some(o);
                }
                if outcome == Some(Outcome::Fails) {
                    if let Some(beaten) = beaten {
                        return Err(self.unsupported(
                            conditional,
                            format!(
                                "a look-ahead that fails on a lexeme where it beats {} by \
                                 priority",
                                self.specs[beaten.as_usize()].name
                            ),
                        ));
                    }
                    fail.insert(class as u8);
                }
            }
            self.dfa.fail[s] = fail;
        }
        Ok(())
    }
}
