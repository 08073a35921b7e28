//! Weighted subset construction: the Parser DWA.
//!
//! A state of the automaton is a *weighted item set*: items are what a run still waits for
//! while the stack is read top-down, each with the classes whose tokens ride on it:
//!
//! - `(T, INIT, κ)`: control `(T, κ)` has not read anything yet (only in initial states, one
//!   per lexer point);
//! - `(T, A, r, κ)`: an exit of the [summaries](crate::template): pop `r` more states, then go
//!   to `goto(q, A)` from the state `q` exposed, and go on with control `(T, κ)`.
//!
//! Reading LR state `x` from a weighted item set `D`:
//!
//! - `(T, INIT, κ)` contributes the pre-shift exits `E(T, x) ⊗ κ` and the post-shift
//!   outcomes `P(T, κ, x)`;
//! - `(T, A, r ≥ 1, κ)` becomes `(T, A, r - 1, κ)`;
//! - `(T, A, 0, κ)` contributes the outcomes of `goto(x, A)` pushed on `x` under control
//!   `(T, κ)` ([`Templates::pre`] and [`Templates::post`]; nothing when the goto is
//!   undefined);
//!
//! each with the item's weight. The weights of the contributions that reach `SUCC` are unioned
//! into the transition's output (those classes are allowed, whatever lies below); the exits
//! collected (unioned per exit) form the next state, from whose weights the output classes are
//! removed (they are decided). An item whose weight becomes empty is dropped. So a state knows
//! only undecided classes, and the output of a path — the union of its transitions' outputs —
//! is exactly the set of classes for which some run of the parser succeeds on that stack.
//!
//! Transitions are sparse: only `INIT` items (through their terminal's actions) and
//! `(_, A, 0, _)` items (through the states with a goto on `A`) depend on `x`; every other
//! `x` takes the state's *default* transition, where only the countdowns move. Items of one
//! `(terminal, code)` share all their work but the continuation's own.

use std::collections::VecDeque;

use ahash::AHashMap;
use munch_glr::cfg::NonterminalId;
use munch_glr::lr::{Action, LrState};
use smallvec::SmallVec;

use crate::bits::{intersects, Weight, Weights, EMPTY};
use crate::template::{item, parts, Item, SummaryBudget, Templates, INIT, SUCC};

/// A state id; state 0 is the empty item set (nothing left to decide).
pub(crate) type StateId = u32;
/// The empty state.
pub(crate) const DEAD: StateId = 0;

/// A transition: `(output weight, target state)`.
pub(crate) type Edge = (Weight, StateId);

/// The automaton before minimisation.
pub(crate) struct Dfa {
    /// Per state: the default transition (for states not listed in `edges`).
    pub(crate) default: Vec<Edge>,
    /// Per state: `(LR state, output, target)`, sorted by LR state; never equal to the default.
    pub(crate) edges: Vec<Vec<(u32, Weight, StateId)>>,
}

impl Dfa {
    pub(crate) fn state_len(&self) -> usize {
        self.default.len()
    }

    pub(crate) fn edge_len(&self) -> usize {
        self.edges.iter().map(Vec::len).sum::<usize>() + self.default.len()
    }
}

/// Which budget a construction exceeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exceeded {
    States,
    Edges,
    Memory,
}

impl From<SummaryBudget> for Exceeded {
    fn from(_: SummaryBudget) -> Self {
        Exceeded::Memory
    }
}

/// Budgets of [`determinize`].
pub(crate) struct Limits {
    pub(crate) max_states: usize,
    pub(crate) max_edges: usize,
    pub(crate) max_heap: usize,
}

/// LR states with an action per terminal, with a goto per nonterminal, and the predecessors
/// of every state (the states with a transition into it: on a GSS path, the node below a node
/// in state `q` is in one of them).
struct Relevance {
    by_terminal: Vec<Vec<u32>>,
    by_nonterminal: Vec<Vec<u32>>,
    pred: Vec<Vec<u32>>,
    /// States a head's node can be in: the start state and the targets of shifts (a head's
    /// node is the GSS root or a node made by a shift).
    top: Vec<bool>,
}

impl Relevance {
    fn new(tpl: &Templates<'_>) -> Self {
        let tables = tpl.tables();
        let cfg = tables.cfg();
        let mut by_terminal = vec![Vec::new(); tables.eof_index() as usize + 1];
        let mut by_nonterminal = vec![Vec::new(); cfg.nonterminal_len()];
        let mut pred = vec![Vec::new(); tables.state_len()];
        let mut top = vec![false; tables.state_len()];
        top[LrState::START.as_usize()] = true;
        for s in 0..tables.state_len() {
            let st = LrState::new(s).expect("LR state ids fit");
            let mut last = u32::MAX;
            for (k, a) in tables.state_actions(st) {
                if k != last {
                    by_terminal[k as usize].push(s as u32);
                    last = k;
                }
                if let Action::Shift(to) = a {
                    pred[to.as_usize()].push(s as u32);
                    top[to.as_usize()] = true;
                }
            }
            for (n, to) in tables.state_gotos(st) {
                by_nonterminal[n.as_usize()].push(s as u32);
                pred[to.as_usize()].push(s as u32);
            }
        }
        for p in &mut pred {
            p.sort_unstable();
            p.dedup();
        }
        Relevance {
            by_terminal,
            by_nonterminal,
            pred,
            top,
        }
    }
}

/// What the construction knows of one state besides its items.
#[derive(Default)]
struct Info {
    /// LR states it can be entered by (the last state read); `None`: any (initial states).
    lasts: Option<Vec<u32>>,
    /// LR states whose transition has been computed.
    done: Vec<u32>,
    /// Queued for (re)processing.
    queued: bool,
    processed: bool,
}

/// The weighted subset construction from `initial` item sets (one per lexer point; each a list
/// of `(item, weight)`, any order, duplicates allowed, and the classes already decided, which
/// are left out). Returns the automaton and the initial states, in order.
///
/// Only transitions a GSS can take are computed: an initial state reads a head's node, which
/// is the GSS root or was made by a shift, so its LR state is the start state or a shift
/// target; a state entered by reading `q` reads next a predecessor of `q`. Every other input takes the default
/// transition, whatever the items would say, which is harmless because no stack has that
/// input there (and minimisation only merges states that agree on every input, so a merged
/// state still answers each of its originals correctly on their valid inputs).
pub(crate) fn determinize(
    tpl: &mut Templates<'_>,
    weights: &mut Weights,
    initial: Vec<(Vec<(Item, Weight)>, Weight)>,
    limits: &Limits,
) -> Result<(Dfa, Vec<StateId>), Exceeded> {
    let rel = Relevance::new(tpl);
    let mut b = Builder {
        items: Vec::new(),
        item_weights: Vec::new(),
        start: vec![0],
        index: AHashMap::new(),
        heap: 0,
        info: Vec::new(),
        queue: VecDeque::new(),
    };
    b.intern(Vec::new());
    let mut starts = Vec::with_capacity(initial.len());
    let mut scratch: Vec<u64> = vec![0; weights.words()];
    for (mut items, decided) in initial {
        let items = normalize(weights, &mut items, decided, &mut scratch);
        let s = b.intern(items);
        b.info[s as usize].lasts = None;
        b.enqueue(s);
        starts.push(s);
    }
    let mut dfa = Dfa {
        default: Vec::new(),
        edges: Vec::new(),
    };
    let mut edge_count = 0usize;
    // Scratch: (x, item index) pairs of the current state, and one target's contributions.
    let mut keyed: Vec<(u32, u32)> = Vec::new();
    let mut groups: Vec<(u32, u32, u32, u32)> = Vec::new();
    let mut outs: Vec<Item> = Vec::new();
    let mut yes_bits: Vec<u64> = vec![0; weights.words()];
    let mut scratch: Vec<u64> = vec![0; weights.words()];
    let mut contrib: Vec<(Item, Weight)> = Vec::new();
    let mut wanted: Vec<u32> = Vec::new();
    let mut rounds = 0usize;
    while let Some(d) = b.queue.pop_front() {
        let di = d as usize;
        b.info[di].queued = false;
        if b.len() > limits.max_states {
            return Err(Exceeded::States);
        }
        rounds += 1;
        if debug() && rounds.is_multiple_of(10000) {
            eprintln!(
                "wda: round {rounds}: {} states, {edge_count} edges, {} weights; heap states {} MB, weights {} MB, summaries {} MB; summaries {:?}",
                b.len(),
                weights.len(),
                b.heap >> 20,
                weights.heap >> 20,
                tpl.heap_bytes() >> 20,
                tpl.counts()
            );
        }
        while dfa.default.len() < b.len() {
            dfa.default.push((EMPTY, DEAD));
            dfa.edges.push(Vec::new());
        }
        let items: Vec<(Item, Weight)> = b.state(d).collect();
        // Items are sorted by (terminal, code, continuation): groups of one (terminal, code)
        // are runs, and everything before a continuation's weight is shared by the group.
        groups.clear();
        let mut i = 0;
        while i < items.len() {
            let (t, code, _) = parts(items[i].0);
            let mut j = i + 1;
            while j < items.len() && (items[j].0 >> 32) == (items[i].0 >> 32) {
                j += 1;
            }
            groups.push((t, code, i as u32, j as u32));
            i = j;
        }
        // The default transition: countdowns move, everything else dies.
        let mut base: Vec<(Item, Weight)> = Vec::new();
        keyed.clear();
        for (gi, &(t, code, lo, hi)) in groups.iter().enumerate() {
            if code == INIT {
                for &x in &rel.by_terminal[t as usize] {
                    keyed.push((x, gi as u32));
                }
            } else {
                let (a, r) = tpl.split(code);
                if r > 0 {
                    for &(it, w) in &items[lo as usize..hi as usize] {
                        base.push((it - (1 << 32), w));
                    }
                } else {
                    for &x in &rel.by_nonterminal[a as usize] {
                        keyed.push((x, gi as u32));
                    }
                }
            }
        }
        keyed.sort_unstable();
        // The inputs possible here and not yet computed.
        wanted.clear();
        match &b.info[di].lasts {
            None => wanted.extend(
                keyed
                    .iter()
                    .map(|&(x, _)| x)
                    .filter(|&x| rel.top[x as usize]),
            ),
            Some(lasts) => {
                for &q in lasts {
                    wanted.extend_from_slice(&rel.pred[q as usize]);
                }
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        let default_target = b.intern(base.clone());
        dfa.default[di] = (EMPTY, default_target);
        // The default target is entered by every wanted input without an edge of its own;
        // giving it all of them is a superset, which is safe.
        let all_wanted = wanted.clone();
        b.info[di].processed = true;
        let done = std::mem::take(&mut b.info[di].done);
        let mut new_done = done.clone();
        let mut edges = std::mem::take(&mut dfa.edges[di]);
        let mut at = 0;
        for &x in &wanted {
            if done.binary_search(&x).is_ok() {
                continue;
            }
            new_done.push(x);
            while at < keyed.len() && keyed[at].0 < x {
                at += 1;
            }
            if at >= keyed.len() || keyed[at].0 != x {
                continue;
            }
            contrib.clear();
            contrib.extend_from_slice(&base);
            yes_bits.fill(0);
            let mut any_yes = false;
            while at < keyed.len() && keyed[at].0 == x {
                let (t, code, lo, hi) = groups[keyed[at].1 as usize];
                at += 1;
                let group = &items[lo as usize..hi as usize];
                if code == INIT {
                    let top = tpl.top(t, x)?;
                    for &(it, w) in group {
                        let (_, _, k) = parts(it);
                        for &c in top.codes.iter() {
                            contrib.push((item(t, c, k), w));
                        }
                        if top.shifts() {
                            outs.clear();
                            tpl.shifted(&top, t, k, x, &mut outs)?;
                            for &o in &outs {
                                if o == SUCC {
                                    any_yes = true;
                                    for (a, b) in yes_bits.iter_mut().zip(weights.get(w)) {
                                        *a |= b;
                                    }
                                } else {
                                    contrib.push((o, w));
                                }
                            }
                        }
                    }
                } else {
                    let (a, _) = tpl.split(code);
                    debug_assert!(tpl
                        .tables()
                        .goto(
                            LrState::new(x as usize).expect("LR state ids fit"),
                            NonterminalId::from_usize(a as usize)
                        )
                        .is_some());
                    let pre = tpl.pre(t, a, x)?.clone();
                    for &(it, w) in group {
                        let (_, _, k) = parts(it);
                        for &c in pre.codes.iter() {
                            contrib.push((item(t, c, k), w));
                        }
                        if !pre.shift_at.is_empty() {
                            outs.clear();
                            tpl.post(&pre.shift_at, t, k, x, &mut outs)?;
                            for &o in &outs {
                                if o == SUCC {
                                    any_yes = true;
                                    for (a, b) in yes_bits.iter_mut().zip(weights.get(w)) {
                                        *a |= b;
                                    }
                                } else {
                                    contrib.push((o, w));
                                }
                            }
                        }
                    }
                }
            }
            let yes = if any_yes {
                weights.intern_words(&yes_bits)
            } else {
                EMPTY
            };
            let target_items = normalize(weights, &mut contrib, yes, &mut scratch);
            let target = b.intern(target_items);
            if (yes, target) != (EMPTY, default_target) {
                edges.push((x, yes, target));
                edge_count += 1;
            }
            b.enter(target, &[x]);
            if b.heap + weights.heap + tpl.heap_bytes() + edge_count * 12 > limits.max_heap {
                return Err(Exceeded::Memory);
            }
        }
        new_done.sort_unstable();
        new_done.dedup();
        b.info[di].done = new_done;
        dfa.edges[di] = edges;
        b.enter(default_target, &all_wanted);
        if edge_count + b.len() > limits.max_edges {
            return Err(Exceeded::Edges);
        }
    }
    while dfa.default.len() < b.len() {
        dfa.default.push((EMPTY, DEAD));
        dfa.edges.push(Vec::new());
    }
    for e in &mut dfa.edges {
        e.sort_unstable();
    }
    Ok((dfa, starts))
}

/// Merges duplicate items (union of weights), removes the classes of `decided` from every
/// weight, drops items left with none, and sorts by item. Unions and differences are computed
/// in `scratch`; only the resulting weights are interned.
fn normalize(
    weights: &mut Weights,
    items: &mut [(Item, Weight)],
    decided: Weight,
    scratch: &mut [u64],
) -> Vec<(Item, Weight)> {
    items.sort_unstable();
    let mut out: Vec<(Item, Weight)> = Vec::with_capacity(items.len());
    let mut i = 0;
    while i < items.len() {
        let it = items[i].0;
        let mut j = i + 1;
        while j < items.len() && items[j].0 == it {
            j += 1;
        }
        let run = &items[i..j];
        i = j;
        let single = run.iter().all(|&(_, w)| w == run[0].1);
        if single && (decided == EMPTY || !intersects(weights.get(run[0].1), weights.get(decided)))
        {
            if run[0].1 != EMPTY {
                out.push((it, run[0].1));
            }
            continue;
        }
        scratch.fill(0);
        for &(_, w) in run {
            for (a, b) in scratch.iter_mut().zip(weights.get(w)) {
                *a |= b;
            }
        }
        if decided != EMPTY {
            for (a, b) in scratch.iter_mut().zip(weights.get(decided)) {
                *a &= !b;
            }
        }
        if scratch.iter().any(|&x| x != 0) {
            out.push((it, weights.intern_words(scratch)));
        }
    }
    out
}

/// The states of the construction: item sets stored once, in an arena, found again by hash.
struct Builder {
    items: Vec<Item>,
    item_weights: Vec<Weight>,
    /// State `s` is `items[start[s]..start[s + 1]]` (with `item_weights` alongside).
    start: Vec<usize>,
    index: AHashMap<u64, SmallVec<[StateId; 1]>>,
    heap: usize,
    info: Vec<Info>,
    queue: VecDeque<StateId>,
}

impl Builder {
    fn len(&self) -> usize {
        self.start.len() - 1
    }

    fn state(&self, s: StateId) -> impl Iterator<Item = (Item, Weight)> + '_ {
        let (lo, hi) = (self.start[s as usize], self.start[s as usize + 1]);
        self.items[lo..hi]
            .iter()
            .copied()
            .zip(self.item_weights[lo..hi].iter().copied())
    }

    fn intern(&mut self, state: Vec<(Item, Weight)>) -> StateId {
        let mut h: u64 = 0x1234_5678_9abc_def1;
        for &(i, w) in &state {
            h = (h ^ i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            h = (h ^ w as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            h ^= h >> 29;
        }
        if let Some(ids) = self.index.get(&h) {
            for &id in ids {
                let (lo, hi) = (self.start[id as usize], self.start[id as usize + 1]);
                if hi - lo == state.len()
                    && self.items[lo..hi]
                        .iter()
                        .zip(&self.item_weights[lo..hi])
                        .zip(&state)
                        .all(|((&i, &w), &(i2, w2))| i == i2 && w == w2)
                {
                    return id;
                }
            }
        }
        let s = self.len() as StateId;
        self.heap += state.len() * 12 + 120;
        for (i, w) in state {
            self.items.push(i);
            self.item_weights.push(w);
        }
        self.start.push(self.items.len());
        self.index.entry(h).or_default().push(s);
        self.info.push(Info {
            lasts: Some(Vec::new()),
            ..Info::default()
        });
        s
    }

    fn enqueue(&mut self, s: StateId) {
        if s != DEAD && !self.info[s as usize].queued {
            self.info[s as usize].queued = true;
            self.queue.push_back(s);
        }
    }

    /// Records that `s` can be entered by reading each of `xs`; (re)queues it if that makes
    /// new inputs possible there.
    fn enter(&mut self, s: StateId, xs: &[u32]) {
        if s == DEAD {
            return;
        }
        let info = &mut self.info[s as usize];
        let Some(lasts) = &mut info.lasts else {
            return;
        };
        let before = lasts.len();
        lasts.extend_from_slice(xs);
        lasts.sort_unstable();
        lasts.dedup();
        if lasts.len() != before {
            self.heap += (lasts.len() - before) * 4;
            self.enqueue(s);
        }
    }
}

/// Whether `MUNCH_WDA_DEBUG` asks for build progress on stderr.
pub(crate) fn debug() -> bool {
    std::env::var_os("MUNCH_WDA_DEBUG").is_some()
}
