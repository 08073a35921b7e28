//! A GLR recogniser over the LR tables alone, for the offline classification of terminal
//! sequences per LR state.
//!
//! The runtime parser (`munch_glr::parser`) works on the real GSS. Offline there is no real
//! stack: a sequence is simulated from one LR state `s` with either of two bottoms:
//!
//! - **bare**: `s` with nothing below. A reduction that would pop below `s` has no path, so a
//!   sequence accepted here is accepted on every real stack whose top is `s` (a real stack only
//!   adds paths);
//! - **virtual**: `s` with every stack the LR automaton allows below it (a *virtual* node for
//!   state `x` has the virtual nodes of all automaton predecessors of `x` below it). Every real
//!   stack is a path of the automaton, so a sequence rejected here is rejected on every real
//!   stack whose top is `s`.
//!
//! The simulation is the same recogniser as the runtime's RNGLR in spirit: nodes are merged per
//! LR state at each position, so ε-rules, hidden left recursion and cycles terminate. Unlike
//! RNGLR it closes the reductions of one position by iterating to a fixpoint rather than by a
//! careful worklist (levels here hold a handful of nodes, simplicity wins), and it follows every
//! action of the table, conflicts included.
//!
//! Nodes live in one arena used as a stack: a depth-first caller marks the arena with
//! [`Sim::mark`] and drops everything built since with [`Sim::truncate`].

use ahash::AHashMap;
use munch_glr::lr::{Action, LrState, LrTables};
use smallvec::SmallVec;

/// A node of the simulation: one of the arena, or a virtual node standing for the LR state it
/// names with every automaton-consistent stack below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum NodeRef {
    /// An arena node.
    Local(u32),
    /// A virtual node (an LR state index).
    Virtual(u32),
}

/// The tops of the simulated stacks after some prefix of a terminal sequence.
pub(crate) type Frontier = SmallVec<[NodeRef; 4]>;

struct SimNode {
    state: LrState,
    /// The automaton predecessors of `state` are (virtual) predecessors of this node too.
    virt: bool,
    edges: SmallVec<[NodeRef; 2]>,
}

/// The LR automaton's predecessor lists: `pred(x)` = states with a transition (shift or goto)
/// into `x`.
pub(crate) struct Preds {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Preds {
    pub(crate) fn new(tables: &LrTables) -> Self {
        let n = tables.state_len();
        let mut per: Vec<Vec<u32>> = vec![Vec::new(); n];
        for s in 0..n {
            let from = LrState::new(s).expect("tables index their states");
            for (_, a) in tables.state_actions(from) {
                if let Action::Shift(to) = a {
                    per[to.as_usize()].push(s as u32);
                }
            }
            for (_, to) in tables.state_gotos(from) {
                per[to.as_usize()].push(s as u32);
            }
        }
        let mut start = Vec::with_capacity(n + 1);
        let mut list = Vec::new();
        for mut p in per {
            p.sort_unstable();
            p.dedup();
            start.push(list.len() as u32);
            list.extend(p);
        }
        start.push(list.len() as u32);
        Preds { start, list }
    }

    fn of(&self, x: u32) -> &[u32] {
        &self.list[self.start[x as usize] as usize..self.start[x as usize + 1] as usize]
    }
}

/// The simulation exceeded its node budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SimBudget;

/// The simulator: the tables, the arena and memo tables.
pub(crate) struct Sim<'a> {
    tables: &'a LrTables,
    preds: &'a Preds,
    nodes: Vec<SimNode>,
    max_nodes: usize,
    pow: PowMemo,
    /// Per LR state: the scratch node of the current closure holding it (valid iff the stamp
    /// matches).
    slot: Vec<(u32, u32)>,
    stamp: u32,
    /// Closures run (a measure of build work).
    pub(crate) closures: u64,
}

impl<'a> Sim<'a> {
    pub(crate) fn new(tables: &'a LrTables, preds: &'a Preds, max_nodes: usize) -> Self {
        let n = tables.state_len();
        Sim {
            tables,
            preds,
            nodes: Vec::new(),
            max_nodes,
            pow: PowMemo {
                map: AHashMap::new(),
                seen: vec![0; n],
                stamp: 0,
            },
            slot: vec![(0, 0); n],
            stamp: 0,
            closures: 0,
        }
    }

    /// The current arena size, to [`Sim::truncate`] back to.
    pub(crate) fn mark(&self) -> usize {
        self.nodes.len()
    }

    /// Drops every node built since `mark`. Frontiers holding such nodes are invalid after.
    pub(crate) fn truncate(&mut self, mark: usize) {
        self.nodes.truncate(mark);
    }

    /// The frontier of the bare stack `s` (nothing below).
    pub(crate) fn bare(&mut self, s: LrState) -> Frontier {
        let i = self.nodes.len() as u32;
        self.nodes.push(SimNode {
            state: s,
            virt: false,
            edges: SmallVec::new(),
        });
        SmallVec::from_elem(NodeRef::Local(i), 1)
    }

    /// The frontier of the virtual stack `s` (every automaton path below).
    pub(crate) fn virtual_top(s: LrState) -> Frontier {
        SmallVec::from_elem(NodeRef::Virtual(s.as_u32()), 1)
    }

    fn state_of(&self, n: NodeRef) -> LrState {
        match n {
            NodeRef::Local(i) => self.nodes[i as usize].state,
            NodeRef::Virtual(x) => LrState::new(x as usize).expect("virtual nodes are states"),
        }
    }

    /// Whether terminal index `k` can be shifted from some stack of `frontier` (after
    /// reductions).
    pub(crate) fn can_shift(&mut self, frontier: &[NodeRef], k: u32) -> Result<bool, SimBudget> {
        let mark = self.mark();
        let r = self.close(frontier, k, true).map(|c| !c.shifts.is_empty());
        self.truncate(mark);
        r
    }

    /// The frontier after shifting terminal index `k` onto the stacks of `frontier` (after every
    /// reduction it allows): empty when no stack can shift it. The new nodes stay in the arena
    /// until the caller truncates to a mark taken before.
    pub(crate) fn shift(&mut self, frontier: &[NodeRef], k: u32) -> Result<Frontier, SimBudget> {
        let closed = self.close(frontier, k, false)?;
        let mut out: Frontier = SmallVec::new();
        // One new node per target state, with an edge to every scratch node shifting into it.
        let first = self.nodes.len();
        for (from, to) in closed.shifts {
            match self.nodes[first..].iter().position(|n| n.state == to) {
                Some(j) => {
                    let edges = &mut self.nodes[first + j].edges;
                    if !edges.contains(&NodeRef::Local(from)) {
                        edges.push(NodeRef::Local(from));
                    }
                }
                None => {
                    self.push_node(SimNode {
                        state: to,
                        virt: false,
                        edges: SmallVec::from_elem(NodeRef::Local(from), 1),
                    })?;
                    out.push(NodeRef::Local((self.nodes.len() - 1) as u32));
                }
            }
        }
        Ok(out)
    }

    fn push_node(&mut self, node: SimNode) -> Result<u32, SimBudget> {
        if self.nodes.len() >= self.max_nodes {
            return Err(SimBudget);
        }
        self.nodes.push(node);
        Ok((self.nodes.len() - 1) as u32)
    }

    /// The scratch node of state `l` in the current closure.
    fn slot(&self, l: LrState) -> Option<u32> {
        let (stamp, i) = self.slot[l.as_usize()];
        (stamp == self.stamp).then_some(i)
    }

    /// The reduction closure of `frontier` under lookahead `k`: scratch nodes (copies of the
    /// frontier merged per state, then every node reductions build) and the shifts they allow.
    /// With `stop_at_shift`, stops at the first shift found.
    fn close(
        &mut self,
        frontier: &[NodeRef],
        k: u32,
        stop_at_shift: bool,
    ) -> Result<Closed, SimBudget> {
        let mut out = Closed {
            shifts: SmallVec::new(),
        };
        // Nothing to do unless some top has an action on `k`.
        if !frontier
            .iter()
            .any(|&f| !self.tables.actions_at(self.state_of(f), k).is_empty())
        {
            return Ok(out);
        }
        self.closures += 1;
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.slot.iter_mut().for_each(|s| *s = (0, 0));
            self.stamp = 1;
        }
        let lo = self.nodes.len();
        for &f in frontier {
            let (state, virt, edges) = match f {
                NodeRef::Local(i) => {
                    let n = &self.nodes[i as usize];
                    (n.state, n.virt, n.edges.clone())
                }
                NodeRef::Virtual(x) => (self.state_of(NodeRef::Virtual(x)), true, SmallVec::new()),
            };
            match self.slot(state) {
                Some(j) => {
                    let node = &mut self.nodes[j as usize];
                    node.virt |= virt;
                    for e in edges {
                        if !node.edges.contains(&e) {
                            node.edges.push(e);
                        }
                    }
                }
                None => {
                    let j = self.push_node(SimNode { state, virt, edges })?;
                    self.slot[state.as_usize()] = (self.stamp, j);
                    self.note_shifts(j, k, &mut out);
                }
            }
        }
        if stop_at_shift && !out.shifts.is_empty() {
            return Ok(out);
        }
        let mut ends: Vec<NodeRef> = Vec::new();
        loop {
            let mut changed = false;
            let mut i = lo;
            while i < self.nodes.len() {
                let state = self.nodes[i].state;
                let actions = self.tables.actions_at(state, k);
                for a in actions {
                    let Action::Reduce { lhs, len, .. } = *a else {
                        continue;
                    };
                    self.endpoints(i as u32, len, &mut ends);
                    for &u in &ends {
                        let Some(l) = self.tables.goto(self.state_of(u), lhs) else {
                            continue;
                        };
                        match self.slot(l) {
                            Some(w) => {
                                let node = &mut self.nodes[w as usize];
                                if !node.edges.contains(&u) {
                                    node.edges.push(u);
                                    changed = true;
                                }
                            }
                            None => {
                                let w = self.push_node(SimNode {
                                    state: l,
                                    virt: false,
                                    edges: SmallVec::from_elem(u, 1),
                                })?;
                                self.slot[l.as_usize()] = (self.stamp, w);
                                self.note_shifts(w, k, &mut out);
                                if stop_at_shift && !out.shifts.is_empty() {
                                    return Ok(out);
                                }
                            }
                        }
                    }
                }
                i += 1;
            }
            // A new edge on an existing node may open new reduction paths: go round again.
            if !changed {
                break;
            }
        }
        Ok(out)
    }

    fn note_shifts(&self, j: u32, k: u32, out: &mut Closed) {
        for a in self.tables.actions_at(self.nodes[j as usize].state, k) {
            if let Action::Shift(to) = *a {
                out.shifts.push((j, to));
            }
        }
    }

    /// The nodes at the end of every path of `m` edges from arena node `from`, into `out`
    /// (sorted, deduplicated).
    fn endpoints(&mut self, from: u32, m: u32, out: &mut Vec<NodeRef>) {
        out.clear();
        if m == 0 {
            out.push(NodeRef::Local(from));
            return;
        }
        let Sim {
            nodes, pow, preds, ..
        } = self;
        let mut layer: Vec<u32> = vec![from];
        let mut next: Vec<u32> = Vec::new();
        for step in 0..m {
            let left = m - step - 1; // steps still to take after this one
            next.clear();
            for &j in &layer {
                let node = &nodes[j as usize];
                for &e in &node.edges {
                    match e {
                        NodeRef::Local(x) if left > 0 => next.push(x),
                        NodeRef::Virtual(x) if left > 0 => {
                            out.extend(pow.get(preds, x, left).iter().map(|&v| NodeRef::Virtual(v)))
                        }
                        e => out.push(e),
                    }
                }
                if node.virt {
                    let below = pow.get(preds, node.state.as_u32(), left + 1);
                    out.extend(below.iter().map(|&v| NodeRef::Virtual(v)));
                }
            }
            next.sort_unstable();
            next.dedup();
            std::mem::swap(&mut layer, &mut next);
        }
        out.sort_unstable();
        out.dedup();
    }
}

/// `(x, r)` → the states `r` predecessor steps below state `x` in the automaton, memoised.
struct PowMemo {
    map: AHashMap<(u32, u32), Box<[u32]>>,
    /// Per LR state: a stamp, for deduplicating a layer.
    seen: Vec<u32>,
    stamp: u32,
}

impl PowMemo {
    fn get(&mut self, preds: &Preds, x: u32, r: u32) -> &[u32] {
        if !self.map.contains_key(&(x, r)) {
            let mut layer: Vec<u32> = vec![x];
            for _ in 0..r {
                self.stamp = self.stamp.wrapping_add(1);
                if self.stamp == 0 {
                    self.seen.iter_mut().for_each(|s| *s = 0);
                    self.stamp = 1;
                }
                let mut next = Vec::new();
                for &y in &layer {
                    for &p in preds.of(y) {
                        if self.seen[p as usize] != self.stamp {
                            self.seen[p as usize] = self.stamp;
                            next.push(p);
                        }
                    }
                }
                layer = next;
            }
            layer.sort_unstable();
            self.map.insert((x, r), layer.into_boxed_slice());
        }
        &self.map[&(x, r)]
    }
}

struct Closed {
    /// `(scratch node, state after the shift)`.
    shifts: SmallVec<[(u32, LrState); 4]>,
}
