//! Weighted subset construction: the Parser DWA.
//!
//! A state of the automaton is a *weighted item set*: items are what a run still waits for
//! while the stack is read top-down, each with the classes whose tokens ride on it:
//!
//! - `Init(c)`: control `c` has not read anything yet (only in initial states, one per lexer
//!   point);
//! - `Exit(o)`: an exit `(c, A, r)` of the [summaries](crate::template): pop `r` more states,
//!   then go to `goto(q, A)` from the state `q` exposed, under control `c`.
//!
//! Reading LR state `x` from a weighted item set `D`:
//!
//! - `Init(c)` contributes every outcome of `S(c, x)`;
//! - `Exit(c, A, r ≥ 1)` becomes `Exit(c, A, r - 1)`;
//! - `Exit(c, A, 0)` contributes the outcomes of `C(c, goto(x, A), x)` (nothing when the goto
//!   is undefined);
//!
//! each with the item's weight. The weights of the contributions that reach `SUCC` are unioned
//! into the transition's output (those classes are allowed, whatever lies below); the exits
//! collected (unioned per exit) form the next state, from whose weights the output classes are
//! removed (they are decided). An item whose weight becomes empty is dropped. So a state knows
//! only undecided classes, and the output of a path — the union of its transitions' outputs —
//! is exactly the set of classes for which some run of the parser succeeds on that stack.
//!
//! Transitions are sparse: only `Init` items (through their terminal's actions) and
//! `Exit(_, A, 0)` items (through the states with a goto on `A`) depend on `x`; every other
//! `x` takes the state's *default* transition, where only the countdowns move.

use ahash::AHashMap;
use munch_glr::cfg::NonterminalId;
use munch_glr::lr::LrState;

use crate::bits::{Weight, Weights, EMPTY};
use crate::template::{Outcome, SummaryBudget, Templates, SUCC};

/// An item: `INIT | control` or an exit outcome (never [`SUCC`]).
pub(crate) type Item = u32;
/// The tag of `Init` items.
pub(crate) const INIT: Item = 1 << 31;

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

/// LR states with an action per terminal, and with a goto per nonterminal.
struct Relevance {
    by_terminal: Vec<Vec<u32>>,
    by_nonterminal: Vec<Vec<u32>>,
}

impl Relevance {
    fn new(tpl: &Templates<'_>) -> Self {
        let tables = tpl.tables();
        let cfg = tables.cfg();
        let mut by_terminal = vec![Vec::new(); tables.eof_index() as usize + 1];
        let mut by_nonterminal = vec![Vec::new(); cfg.nonterminal_len()];
        for s in 0..tables.state_len() {
            let st = LrState::new(s).expect("LR state ids fit");
            let mut last = u32::MAX;
            for (k, _) in tables.state_actions(st) {
                if k != last {
                    by_terminal[k as usize].push(s as u32);
                    last = k;
                }
            }
            for (n, _) in tables.state_gotos(st) {
                by_nonterminal[n.as_usize()].push(s as u32);
            }
        }
        Relevance {
            by_terminal,
            by_nonterminal,
        }
    }
}

/// The weighted subset construction from `initial` item sets (one per lexer point; each a list
/// of `(item, weight)`, any order, duplicates allowed, and the classes already decided, which
/// are left out). Returns the automaton and the initial states, in order.
pub(crate) fn determinize(
    tpl: &mut Templates<'_>,
    weights: &mut Weights,
    initial: Vec<(Vec<(Item, Weight)>, Weight)>,
    limits: &Limits,
) -> Result<(Dfa, Vec<StateId>), Exceeded> {
    let rel = Relevance::new(tpl);
    let mut b = Builder {
        states: Vec::new(),
        index: AHashMap::new(),
        heap: 0,
    };
    b.intern(Vec::new());
    let mut starts = Vec::with_capacity(initial.len());
    for (items, decided) in initial {
        let items = normalize(weights, items, decided);
        starts.push(b.intern(items));
    }
    let mut dfa = Dfa {
        default: Vec::new(),
        edges: Vec::new(),
    };
    let mut edge_count = 0usize;
    // Scratch: (x, item index) pairs of the current state, and one target's contributions.
    let mut keyed: Vec<(u32, u32)> = Vec::new();
    let mut contrib: Vec<(Item, Weight)> = Vec::new();
    let mut next = 0usize;
    while next < b.states.len() {
        if b.states.len() > limits.max_states {
            return Err(Exceeded::States);
        }
        let items = b.states[next].clone();
        next += 1;
        // The default transition: countdowns move, everything else dies.
        let mut base: Vec<(Item, Weight)> = Vec::new();
        keyed.clear();
        for (i, &(item, _)) in items.iter().enumerate() {
            if item & INIT != 0 {
                let (t, _) = tpl.conts().control(item & !INIT);
                for &x in &rel.by_terminal[t as usize] {
                    keyed.push((x, i as u32));
                }
            } else {
                let (c, a, r) = tpl.exit_parts(item);
                if r > 0 {
                    base.push((tpl.exit(c, a, r - 1), items[i].1));
                } else {
                    for &x in &rel.by_nonterminal[a as usize] {
                        keyed.push((x, i as u32));
                    }
                }
            }
        }
        let default_target = b.intern(base.clone());
        dfa.default.push((EMPTY, default_target));
        keyed.sort_unstable();
        let mut edges = Vec::new();
        let mut at = 0;
        while at < keyed.len() {
            let x = keyed[at].0;
            let xs = LrState::new(x as usize).expect("LR state ids fit");
            contrib.clear();
            contrib.extend_from_slice(&base);
            let mut yes = EMPTY;
            while at < keyed.len() && keyed[at].0 == x {
                let (item, w) = items[keyed[at].1 as usize];
                at += 1;
                let outs: Box<[Outcome]> = if item & INIT != 0 {
                    tpl.summary(item & !INIT, xs)?.into()
                } else {
                    let (c, a, _) = tpl.exit_parts(item);
                    debug_assert!(tpl
                        .tables()
                        .goto(xs, NonterminalId::from_usize(a as usize))
                        .is_some());
                    tpl.config_out(c, a, xs)?
                };
                for &o in outs.iter() {
                    if o == SUCC {
                        yes = weights.union(yes, w);
                    } else {
                        contrib.push((o, w));
                    }
                }
            }
            let target_items = normalize(weights, std::mem::take(&mut contrib), yes);
            let target = b.intern(target_items);
            if (yes, target) != (EMPTY, default_target) {
                edges.push((x, yes, target));
            }
            if b.heap + weights.heap + tpl.heap_bytes() + edge_count * 12 > limits.max_heap {
                return Err(Exceeded::Memory);
            }
        }
        edge_count += edges.len() + 1;
        if edge_count > limits.max_edges {
            return Err(Exceeded::Edges);
        }
        dfa.edges.push(edges);
    }
    Ok((dfa, starts))
}

/// Merges duplicate items (union of weights), removes the classes of `decided` from every
/// weight, drops items left with none, and sorts by item.
fn normalize(
    weights: &mut Weights,
    mut items: Vec<(Item, Weight)>,
    decided: Weight,
) -> Vec<(Item, Weight)> {
    items.sort_unstable_by_key(|&(i, _)| i);
    let mut out: Vec<(Item, Weight)> = Vec::with_capacity(items.len());
    for (i, w) in items {
        match out.last_mut() {
            Some((li, lw)) if *li == i => *lw = weights.union(*lw, w),
            _ => out.push((i, w)),
        }
    }
    out.retain_mut(|(_, w)| {
        *w = weights.minus(*w, decided);
        *w != EMPTY
    });
    out
}

struct Builder {
    states: Vec<Vec<(Item, Weight)>>,
    index: AHashMap<Vec<(Item, Weight)>, StateId>,
    heap: usize,
}

impl Builder {
    fn intern(&mut self, items: Vec<(Item, Weight)>) -> StateId {
        if let Some(&s) = self.index.get(&items) {
            return s;
        }
        let s = self.states.len() as StateId;
        self.heap += items.len() * 16 + 96;
        self.states.push(items.clone());
        self.index.insert(items, s);
        s
    }
}
