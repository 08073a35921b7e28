//! One GLR step over the GSS: RNGLR (Scott & Johnstone, "Right Nulled GLR Parsers", TOPLAS
//! 2006), as a recogniser, one lookahead at a time.
//!
//! RNGLR is correct for every CFG, including ε-rules, hidden left recursion and cycles: the
//! tables carry right-nulled reductions (reduce `A -> α · β` by `|α|` when `β ⇒* ε`), so
//! reductions never have to run through ε-edges built at the current position, and nodes are
//! merged per LR state at each position, so ambiguity costs polynomial, not exponential, work.
//!
//! The published algorithm processes level `i` knowing `a_{i+1}`. munch learns the next
//! terminal only when the lexer completes it, and different heads may complete different
//! terminals, so a step here is: take the *frontier* (nodes made by shifts, before any
//! reduction), copy it into a scratch level, run the reducer under one lookahead `k` (seeding
//! `R` and `Q` from the frontier as RNGLR's shifter would have), then freeze the scratch level
//! and shift: the shifted nodes (one per LR state) form the next frontier. Copying the frontier
//! keeps every built level immutable (persistence), at the cost of copying a few nodes.
//!
//! The same reducer answers, without building anything persistent, whether a terminal can be
//! shifted from a node ([`reduce`] with [`Stop::AtShift`]). Whether the input may end is
//! answered by [`accepts`], a search over the reducer's configurations under `$` that builds no
//! node and is memoised per configuration.

use ahash::{AHashMap, AHashSet};
use smallvec::SmallVec;

use crate::cfg::NonterminalId;
use crate::gss::{Edge, GssNode, GssNodeId, Level, NodeData};
use crate::lr::{Action, LrState, LrTables};

/// When the reducer may stop early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Run to completion (a real step).
    Never,
    /// As soon as some node can shift the lookahead.
    AtShift,
    /// As soon as some node accepts (the lookahead is `$`). Only the tests use it: they check
    /// [`accepts`] against the reducer.
    #[cfg_attr(not(test), allow(dead_code))]
    AtAccept,
}

/// The scratch level exceeded its node budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NodeBudget;

/// Scratch nodes: same layout as frozen ones (`Edge::Same` indexes the scratch level).
struct Scratch {
    nodes: Vec<NodeData>,
    /// LR state → scratch index; a linear list while small, a map past that.
    small: SmallVec<[(LrState, u32); 8]>,
    map: Option<AHashMap<LrState, u32>>,
}

impl Scratch {
    fn find(&self, s: LrState) -> Option<u32> {
        match &self.map {
            Some(m) => m.get(&s).copied(),
            None => self.small.iter().find(|&&(x, _)| x == s).map(|&(_, i)| i),
        }
    }

    fn add(&mut self, state: LrState, edges: SmallVec<[Edge; 2]>) -> u32 {
        let i = self.nodes.len() as u32;
        self.nodes.push(NodeData { state, edges });
        match &mut self.map {
            Some(m) => {
                m.insert(state, i);
            }
            None => {
                self.small.push((state, i));
                if self.small.len() > 16 {
                    self.map = Some(self.small.iter().copied().collect());
                }
            }
        }
        i
    }
}

/// Where a reduction path starts.
#[derive(Clone)]
enum Target {
    /// A scratch node (only for length-0 reductions).
    Scratch(u32),
    /// A frozen node.
    Node(GssNode),
}

fn same_edge(e: &Edge, to: &Target) -> bool {
    match (e, to) {
        (Edge::Same(a), Target::Scratch(b)) => a == b,
        (Edge::Down(a), Target::Node(b)) => a.id() == b.id(),
        _ => false,
    }
}

/// The outcome of the reducer under one lookahead.
pub(crate) struct Reduced {
    nodes: Vec<NodeData>,
    /// `(scratch node, state after the shift)`.
    pub shifts: SmallVec<[(u32, LrState); 4]>,
    /// Some node accepts (only under `$`).
    pub accepted: bool,
}

/// Runs the RNGLR reducer from `frontier` under lookahead index `k`.
pub(crate) fn reduce(
    tables: &LrTables,
    frontier: &[GssNode],
    k: u32,
    max_nodes: usize,
    stop: Stop,
) -> Result<Reduced, NodeBudget> {
    let mut s = Scratch {
        nodes: Vec::with_capacity(frontier.len() + 2),
        small: SmallVec::new(),
        map: None,
    };
    // Copy the frontier, merged per LR state, with same-level edges made explicit.
    for f in frontier {
        let edges = f.data().edges.iter().map(|e| Edge::Down(f.resolve(e)));
        match s.find(f.state()) {
            Some(i) => {
                for e in edges {
                    let node = &mut s.nodes[i as usize];
                    if let Edge::Down(n) = &e {
                        let to = Target::Node(n.clone());
                        if !node.edges.iter().any(|x| same_edge(x, &to)) {
                            node.edges.push(e);
                        }
                    }
                }
            }
            None => {
                s.add(f.state(), edges.collect());
            }
        }
    }
    if s.nodes.len() > max_nodes {
        return Err(NodeBudget);
    }
    let mut out = Reduced {
        nodes: Vec::new(),
        shifts: SmallVec::new(),
        accepted: false,
    };
    let mut r: Vec<(Target, NonterminalId, u32)> = Vec::new();
    // Seed R and Q from the frontier, as RNGLR's shifter would have.
    for i in 0..s.nodes.len() {
        for &a in tables.actions_at(s.nodes[i].state, k) {
            match a {
                Action::Shift(to) => out.shifts.push((i as u32, to)),
                Action::Accept => out.accepted = true,
                Action::Reduce { lhs, len: 0, .. } => r.push((Target::Scratch(i as u32), lhs, 0)),
                Action::Reduce { lhs, len, .. } => {
                    for e in &s.nodes[i].edges {
                        if let Edge::Down(n) = e {
                            r.push((Target::Node(n.clone()), lhs, len));
                        }
                    }
                }
            }
        }
    }
    let done = |out: &Reduced| match stop {
        Stop::Never => false,
        Stop::AtShift => !out.shifts.is_empty(),
        Stop::AtAccept => out.accepted,
    };
    let mut walk = Walk::default();
    while let Some((v, x, m)) = r.pop() {
        if done(&out) {
            break;
        }
        // χ: the nodes at distance m - 1 from v (v itself for m = 0 or 1).
        let chi: SmallVec<[Target; 2]> = match v {
            Target::Scratch(i) => SmallVec::from_elem(Target::Scratch(i), 1),
            Target::Node(n) if m <= 1 => SmallVec::from_elem(Target::Node(n), 1),
            Target::Node(n) => walk.at_distance(&n, m - 1).map(Target::Node).collect(),
        };
        for u in chi {
            let ustate = match &u {
                Target::Scratch(i) => s.nodes[*i as usize].state,
                Target::Node(n) => n.state(),
            };
            let Some(l) = tables.goto(ustate, x) else {
                continue;
            };
            match s.find(l) {
                Some(w) => {
                    if s.nodes[w as usize].edges.iter().any(|e| same_edge(e, &u)) {
                        continue;
                    }
                    if m != 0 {
                        for &a in tables.actions_at(l, k) {
                            if let Action::Reduce { lhs, len, .. } = a {
                                if len != 0 {
                                    if let Target::Node(n) = &u {
                                        r.push((Target::Node(n.clone()), lhs, len));
                                    }
                                }
                            }
                        }
                    }
                    s.nodes[w as usize].edges.push(edge_to(u));
                }
                None => {
                    if s.nodes.len() >= max_nodes {
                        return Err(NodeBudget);
                    }
                    let u_node = match &u {
                        Target::Node(n) => Some(n.clone()),
                        Target::Scratch(_) => None,
                    };
                    let w = s.add(l, SmallVec::from_elem(edge_to(u), 1));
                    for &a in tables.actions_at(l, k) {
                        match a {
                            Action::Shift(to) => out.shifts.push((w, to)),
                            Action::Accept => out.accepted = true,
                            Action::Reduce { lhs, len: 0, .. } => {
                                r.push((Target::Scratch(w), lhs, 0))
                            }
                            Action::Reduce { lhs, len, .. } => {
                                if m != 0 {
                                    if let Some(n) = &u_node {
                                        r.push((Target::Node(n.clone()), lhs, len));
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out.nodes = s.nodes;
    Ok(out)
}

fn edge_to(u: Target) -> Edge {
    match u {
        Target::Scratch(i) => Edge::Same(i),
        Target::Node(n) => Edge::Down(n),
    }
}

/// Shifts the lookaheads `ks` (all completing at the same position) from `frontier`: returns the
/// new frontier, one node per LR state, or an empty list when none can be shifted.
pub(crate) fn shift(
    tables: &LrTables,
    frontier: &[GssNode],
    ks: &[u32],
    max_nodes: usize,
) -> Result<SmallVec<[GssNode; 2]>, NodeBudget> {
    // (state after shift) → edges to frozen scratch nodes.
    let mut targets: SmallVec<[(LrState, SmallVec<[Edge; 2]>); 2]> = SmallVec::new();
    let mut budget = max_nodes;
    for &k in ks {
        let red = reduce(tables, frontier, k, budget, Stop::Never)?;
        budget = budget.saturating_sub(red.nodes.len());
        if red.shifts.is_empty() {
            continue;
        }
        let level = Level::new(red.nodes);
        for &(i, to) in &red.shifts {
            let edge = Edge::Down(GssNode {
                level: level.clone(),
                index: i,
            });
            match targets.iter_mut().find(|(s, _)| *s == to) {
                Some((_, edges)) => edges.push(edge),
                None => targets.push((to, SmallVec::from_elem(edge, 1))),
            }
        }
    }
    if targets.len() > budget {
        return Err(NodeBudget);
    }
    if targets.is_empty() {
        return Ok(SmallVec::new());
    }
    let n = targets.len();
    let level = Level::new(
        targets
            .into_iter()
            .map(|(state, edges)| NodeData { state, edges })
            .collect(),
    );
    Ok((0..n)
        .map(|i| GssNode {
            level: level.clone(),
            index: i as u32,
        })
        .collect())
}

/// Per LR state, whether the parser accepts at end of input from a stack topped by that state
/// through ε-reductions alone (the state itself accepts on `$`, or a chain of length-0
/// reductions on `$` reaches one that does). This is the part of the end-of-input closure that
/// does not look below the top, so [`accepts`] reads it instead of building nodes.
pub(crate) fn eof_closure_accepts(tables: &LrTables) -> Vec<bool> {
    let eof = tables.eof_index();
    let mut out = Vec::with_capacity(tables.state_len());
    let mut pending: Vec<LrState> = Vec::new();
    let mut seen: AHashSet<LrState> =
        AHashSet::with_hasher(ahash::RandomState::with_seeds(1, 2, 3, 4));
    for s in 0..tables.state_len() {
        let s = LrState::new(s).expect("state ids fit u32");
        pending.clear();
        seen.clear();
        pending.push(s);
        seen.insert(s);
        let mut accepts = false;
        'closure: while let Some(x) = pending.pop() {
            for &a in tables.actions_at(x, eof) {
                match a {
                    Action::Accept => {
                        accepts = true;
                        break 'closure;
                    }
                    Action::Reduce { lhs, len: 0, .. } => {
                        if let Some(g) = tables.goto(x, lhs) {
                            if seen.insert(g) {
                                pending.push(g);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        out.push(accepts);
    }
    out
}

/// A memo of [`accepts`]: per configuration (a GSS node `u`, an LR state `l` reduced onto it),
/// whether the end of input can be accepted from a stack topped by `l` over `u`. The answer
/// depends only on the nodes below `u`, which never change, and node ids are never reused, so
/// entries never go stale.
pub(crate) type AcceptMemo = AHashMap<(GssNodeId, LrState), bool>;

/// Whether the parser accepts at end of input with the stacks of `node`: the answer of
/// [`reduce`] under `$` with [`Stop::AtAccept`], computed without building nodes.
///
/// The reducer's closure under `$` is the union, over the configurations it reaches, of what
/// each configuration reaches: a configuration is a state `l` reduced onto a frozen node `u`
/// (a scratch node with one edge down to `u`). From it, `l`'s ε-closure may accept
/// (`closure_accepts`), and each reduction of `l` of length `m > 0` leads, for every node `w`
/// at distance `m - 1` from `u`, to the configuration `(goto(w, A), w)`. Length-`m > 0`
/// reductions are not taken from states reached by ε-reductions (right-nulled reductions cover
/// them, as in the reducer). So acceptance is reachability over configurations: a depth-first
/// search with a visited list, memoised per configuration in `memo`: when the search fails,
/// every configuration it visited fails (what they reach was all visited or memoised false);
/// when it succeeds, the configurations on the path to the accepting one succeed.
pub(crate) fn accepts(
    tables: &LrTables,
    closure_accepts: &[bool],
    node: &GssNode,
    memo: &mut AcceptMemo,
) -> bool {
    if closure_accepts[node.state().as_usize()] {
        return true;
    }
    // (state, node below, index of the configuration that led here or usize::MAX).
    let mut visited: SmallVec<[(LrState, GssNode, usize); 16]> = SmallVec::new();
    let mut pending: SmallVec<[(LrState, GssNode, usize); 8]> = SmallVec::new();
    let mut walk = Walk::default();
    let mut configurations: Seen<(GssNodeId, LrState)> = Seen::default();
    for p in node.predecessors() {
        push_configurations(
            tables,
            node.state(),
            &p,
            usize::MAX,
            &mut pending,
            &mut walk,
        );
    }
    let mut found: Option<usize> = None;
    while let Some((l, u, parent)) = pending.pop() {
        let key = (u.id(), l);
        match memo.get(&key) {
            Some(true) => {
                found = Some(parent);
                break;
            }
            Some(false) => continue,
            None => {}
        }
        if !configurations.insert(key) {
            continue;
        }
        let at = visited.len();
        visited.push((l, u.clone(), parent));
        if closure_accepts[l.as_usize()] {
            found = Some(at);
            break;
        }
        push_configurations(tables, l, &u, at, &mut pending, &mut walk);
    }
    match found {
        Some(mut i) => {
            while i != usize::MAX {
                let (l, u, parent) = &visited[i];
                memo.insert((u.id(), *l), true);
                i = *parent;
            }
            true
        }
        None => {
            for (l, u, _) in &visited {
                memo.insert((u.id(), *l), false);
            }
            false
        }
    }
}

/// Pushes the configurations that the reductions of length `m > 0` of state `l` on `$` lead to
/// from `l` reduced onto `u`.
fn push_configurations(
    tables: &LrTables,
    l: LrState,
    u: &GssNode,
    parent: usize,
    pending: &mut SmallVec<[(LrState, GssNode, usize); 8]>,
    walk: &mut Walk,
) {
    for &a in tables.actions_at(l, tables.eof_index()) {
        let Action::Reduce { lhs, len, .. } = a else {
            continue;
        };
        if len == 0 {
            continue;
        }
        for w in walk.at_distance(u, len - 1) {
            if let Some(g) = tables.goto(w.state(), lhs) {
                pending.push((g, w, parent));
            }
        }
    }
}

/// Nodes at one distance below a node (usually one or two).
type Layer = SmallVec<[GssNode; 4]>;

/// Scratch for walking down the GSS, reused across the reductions of one step.
#[derive(Default)]
struct Walk {
    layer: Layer,
    next: Layer,
    seen: Seen<GssNodeId>,
}

impl Walk {
    /// The nodes at distance `d` below `u` (each once).
    fn at_distance(&mut self, u: &GssNode, d: u32) -> smallvec::Drain<'_, [GssNode; 4]> {
        self.layer.clear();
        self.layer.push(u.clone());
        for _ in 0..d {
            self.next.clear();
            self.seen.clear();
            for v in self.layer.iter() {
                for e in &v.data().edges {
                    let w = v.resolve(e);
                    if self.seen.insert(w.id()) {
                        self.next.push(w);
                    }
                }
            }
            std::mem::swap(&mut self.layer, &mut self.next);
        }
        self.layer.drain(..)
    }
}

/// A set of keys: a linear list while small (the common case), hashed past 16.
struct Seen<K> {
    small: SmallVec<[K; 16]>,
    big: Option<AHashSet<K>>,
}

impl<K> Default for Seen<K> {
    fn default() -> Self {
        Seen {
            small: SmallVec::new(),
            big: None,
        }
    }
}

impl<K: Copy + Eq + std::hash::Hash> Seen<K> {
    fn clear(&mut self) {
        self.small.clear();
        if let Some(big) = &mut self.big {
            big.clear();
        }
    }

    /// Whether `k` is new (and now seen).
    fn insert(&mut self, k: K) -> bool {
        if self.small.len() < 16 {
            if self.small.contains(&k) {
                return false;
            }
            self.small.push(k);
            return true;
        }
        // Fixed seeds: a fresh random state per call costs more than the set saves (the keys
        // are not attacker-chosen).
        let big = self.big.get_or_insert_with(|| {
            AHashSet::with_hasher(ahash::RandomState::with_seeds(1, 2, 3, 4))
        });
        if big.is_empty() {
            big.extend(self.small.iter().copied());
        }
        big.insert(k)
    }
}
