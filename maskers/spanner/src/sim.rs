//! A GLR recogniser over the LR tables, for terminal sequences on a *bare* stack (offline) or
//! on the real GSS below a head (online).
//!
//! Offline there is no real stack: a sequence is simulated from one LR state `s` with nothing
//! below it (the *bare* stack). A reduction that would pop below `s` has no path there, so a
//! sequence accepted by the bare stack is accepted by every real stack whose top is `s` (a
//! real stack only adds paths). Online the bottom is a real [`GssNode`], whose predecessors are
//! read as the paths go down; nothing is built in the GSS itself.
//!
//! The recogniser is the runtime's RNGLR (see [`Sim::close`]): nodes are merged per LR state at
//! each position, so ε-rules, hidden left recursion and cycles terminate, and every action of
//! the table is followed, conflicts included. It differs only in where nodes live (an arena
//! reused across calls, and the real GSS read in place), so a speculative shift allocates
//! nothing. The oracle tests check that it accepts exactly what commits do.
//!
//! Nodes live in one arena used as a stack: a depth-first caller marks the arena with
//! [`Sim::mark`] and drops everything built since with [`Sim::truncate`].

use std::sync::Arc;

use ahash::AHashMap;
use munch_glr::cfg::NonterminalId;
use munch_glr::gss::{GssNode, GssNodeId};
use munch_glr::lr::{Action, ClassTables, LrState, LrTables};
use smallvec::SmallVec;

/// A node of the simulation: one of the arena, or a real GSS node (an index into the
/// simulator's table of real nodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum NodeRef {
    /// An arena node.
    Local(u32),
    /// A real GSS node.
    Real(u32),
}

/// Marks of [`Sim::canonicalize`]'s scratch (never real refs: no simulator names 2³² nodes).
const UNVISITED: NodeRef = NodeRef::Real(u32::MAX);
const OPEN: NodeRef = NodeRef::Real(u32::MAX - 1);

/// The tops of the simulated stacks after some prefix of a terminal sequence.
pub(crate) type Frontier = SmallVec<[NodeRef; 4]>;

struct SimNode {
    state: LrState,
    edges: SmallVec<[NodeRef; 2]>,
}

/// A real node on a GSS cycle.
struct RealNode {
    node: GssNode,
    /// Its predecessors' refs, once asked for.
    preds: Option<SmallVec<[NodeRef; 2]>>,
}

/// The arena grew past its budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SimBudget;

/// The simulator's arena and scratch tables (reused across calls; owns no table).
pub(crate) struct Sim {
    nodes: Vec<SimNode>,
    max_nodes: usize,
    reals: Vec<RealNode>,
    real_index: AHashMap<GssNodeId, NodeRef>,
    /// Per LR state: the scratch node of the current closure holding it (valid iff the stamp
    /// matches).
    slot: Vec<(u32, u32)>,
    stamp: u32,
    ends: Vec<NodeRef>,
    /// The edges of the current closure's scratch nodes whose edge lists grew long, for O(1)
    /// deduplication (a wide GSS gives a node hundreds of edges).
    edge_set: ahash::AHashSet<(u32, NodeRef)>,
    next: Vec<NodeRef>,
    /// The pending reductions of [`Sim::close`] (kept for their allocation).
    pending: Vec<(Start, NonterminalId, u32)>,
    /// Arena nodes by structure (state, sorted edges), for [`Sim::canonicalize`].
    cons: AHashMap<(LrState, SmallVec<[NodeRef; 2]>), u32>,
    /// Scratch of [`Sim::canonicalize`]: per node since its mark, its canonical ref (or
    /// [`UNVISITED`]/[`OPEN`]), and the canonical nodes it makes.
    canon: Vec<NodeRef>,
    made: Vec<SimNode>,
    /// Closures run (a measure of work).
    pub(crate) closures: u64,
    /// How real nodes' LR states are read: as their classes (the tables the simulator is
    /// given are the classes' tables).
    classes: Option<Arc<ClassTables>>,
}

impl Sim {
    /// Bytes of one arena node (its edges inline), what a node of the `max_nodes` budget costs.
    pub(crate) const NODE_BYTES: usize = std::mem::size_of::<SimNode>();

    /// Approximate heap bytes of the arena and its tables (spilled edge lists not included).
    pub(crate) fn heap_bytes(&self) -> usize {
        // A hash table's bucket: its control byte, rounded up generously.
        const ENTRY: usize = 8;
        (self.nodes.capacity() + self.made.capacity()) * Self::NODE_BYTES
            + self.reals.capacity() * std::mem::size_of::<RealNode>()
            + self.real_index.capacity() * (std::mem::size_of::<(GssNodeId, NodeRef)>() + ENTRY)
            + self.slot.capacity() * 8
            + (self.ends.capacity() + self.next.capacity() + self.canon.capacity())
                * std::mem::size_of::<NodeRef>()
            + self.edge_set.capacity() * (std::mem::size_of::<(u32, NodeRef)>() + ENTRY)
            + self.pending.capacity() * std::mem::size_of::<(Start, NonterminalId, u32)>()
            + self.cons.capacity()
                * (std::mem::size_of::<((LrState, SmallVec<[NodeRef; 2]>), u32)>() + ENTRY)
    }

    /// A simulator for tables with `states` LR states.
    pub(crate) fn new(states: usize, max_nodes: usize) -> Self {
        Sim {
            nodes: Vec::new(),
            max_nodes,
            reals: Vec::new(),
            real_index: AHashMap::new(),
            slot: vec![(0, 0); states],
            stamp: 0,
            ends: Vec::new(),
            edge_set: ahash::AHashSet::new(),
            next: Vec::new(),
            pending: Vec::new(),
            cons: AHashMap::new(),
            canon: Vec::new(),
            made: Vec::new(),
            closures: 0,
            classes: None,
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

    /// The number of real GSS nodes named so far.
    pub(crate) fn real_len(&self) -> usize {
        self.real_index.len()
    }

    /// Forgets every node, real ones included (between masks).
    pub(crate) fn reset(&mut self) {
        self.nodes.clear();
        self.reals.clear();
        self.real_index.clear();
        self.cons.clear();
    }

    /// Replaces the nodes built since `mark` by canonical ones, shared by structure: an arena
    /// node with the same state and the same (canonical) edges as one kept before stands for
    /// the same stacks, so it is that node. Returns `frontier` (nodes since `mark` or before)
    /// in canonical refs, sorted; the arena keeps only the new canonical nodes it reaches.
    ///
    /// Frontiers of different real tops converge once a reduction pops the tops, and from
    /// there on their memos (steps, shift answers) are shared. The nodes before `mark` must be
    /// canonical or unique (every node kept by the online walk is). When the new nodes hold a
    /// cycle (ε-rules can make one), they are kept as they are: unique, still correct.
    pub(crate) fn canonicalize(&mut self, mark: usize, frontier: &[NodeRef]) -> Frontier {
        let new = self.nodes.len() - mark;
        self.canon.clear();
        self.canon.resize(new, UNVISITED);
        self.made.clear();
        // Iterative post-order from the frontier's new nodes.
        let mut stack: Vec<u32> = Vec::new();
        for &f in frontier {
            let NodeRef::Local(i) = f else { continue };
            if (i as usize) < mark {
                continue;
            }
            stack.push(i);
            while let Some(&top) = stack.last() {
                let at = top as usize - mark;
                if self.canon[at] == UNVISITED {
                    self.canon[at] = OPEN;
                    for &e in &self.nodes[top as usize].edges {
                        if let NodeRef::Local(j) = e {
                            if j as usize >= mark {
                                match self.canon[j as usize - mark] {
                                    UNVISITED => stack.push(j),
                                    OPEN => {
                                        // A cycle among the new nodes: keep them unique, and
                                        // forget the canonical nodes made so far (they were
                                        // never added to the arena).
                                        for n in self.made.drain(..) {
                                            self.cons.remove(&(n.state, n.edges));
                                        }
                                        let mut out: Frontier = frontier.iter().copied().collect();
                                        out.sort_unstable();
                                        out.dedup();
                                        return out;
                                    }
                                    _ => {}
                                }
                            }
                        }
                    }
                    continue;
                }
                stack.pop();
                if self.canon[at] != OPEN {
                    continue;
                }
                let mut edges: SmallVec<[NodeRef; 2]> = self.nodes[top as usize]
                    .edges
                    .iter()
                    .map(|&e| self.canonical(mark, e))
                    .collect();
                edges.sort_unstable();
                edges.dedup();
                let state = self.nodes[top as usize].state;
                let next = (mark + self.made.len()) as u32;
                let id = *self.cons.entry((state, edges.clone())).or_insert(next);
                if id == next {
                    self.made.push(SimNode { state, edges });
                }
                self.canon[at] = NodeRef::Local(id);
            }
        }
        let mut out: Frontier = frontier.iter().map(|&f| self.canonical(mark, f)).collect();
        out.sort_unstable();
        out.dedup();
        self.nodes.truncate(mark);
        self.nodes.append(&mut self.made);
        out
    }

    /// `r` in canonical refs once [`Self::canonicalize`] has visited it: a node since `mark`
    /// by the node it became, one before `mark` as it is.
    fn canonical(&self, mark: usize, r: NodeRef) -> NodeRef {
        match r {
            NodeRef::Local(j) if j as usize >= mark => self.canon[j as usize - mark],
            r => r,
        }
    }

    /// The frontier of the bare stack `s` (nothing below).
    pub(crate) fn bare(&mut self, s: LrState) -> Frontier {
        let i = self.nodes.len() as u32;
        self.nodes.push(SimNode {
            state: s,
            edges: SmallVec::new(),
        });
        SmallVec::from_elem(NodeRef::Local(i), 1)
    }

    /// The ref of real node `n`.
    ///
    /// A real node is named by structure, in the same namespace as the arena's canonical
    /// nodes (see [`Sim::canonicalize`]): an arena node with its LR state and its
    /// predecessors' refs as edges. Equal structures stand for the same stacks and get the
    /// same ref: a commit copies the nodes it reduces from into a new level and shifts onto
    /// the copies, so a lexeme emitted again (it grew by a token and is handed to the parser,
    /// inhibited, once more) gives a new node equal to the last one; and the node a commit
    /// makes is the node the walk of the mask before simulated for that lexeme, so the memos
    /// keyed by frontiers carry over from mask to mask. Nodes on a GSS cycle (ε-rules make
    /// them) are [`NodeRef::Real`], read from the GSS as the walk goes down.
    ///
    /// Every node below `n` is named when this returns, so naming a cycle node's predecessors
    /// later adds no arena node (a closure between [`Sim::mark`] and [`Sim::truncate`] may).
    pub(crate) fn real(&mut self, n: &GssNode) -> NodeRef {
        if let Some(&r) = self.real_index.get(&n.id()) {
            return r;
        }
        // Intern `n` after its predecessors, iteratively (a GSS can be deep).
        let mut pending: Vec<GssNode> = vec![n.clone()];
        let mut open: ahash::AHashSet<GssNodeId> = ahash::AHashSet::new();
        while let Some(top) = pending.last() {
            let id = top.id();
            if self.real_index.contains_key(&id) {
                pending.pop();
                continue;
            }
            let below: SmallVec<[GssNode; 2]> = top.predecessors().collect();
            if open.insert(id) {
                let unknown: SmallVec<[GssNode; 2]> = below
                    .iter()
                    .filter(|p| !self.real_index.contains_key(&p.id()) && !open.contains(&p.id()))
                    .cloned()
                    .collect();
                if !unknown.is_empty() {
                    pending.extend(unknown);
                    continue;
                }
            }
            let top = pending.pop().expect("not empty");
            let refs: Option<SmallVec<[NodeRef; 2]>> = below
                .iter()
                .map(|p| self.real_index.get(&p.id()).copied())
                .collect();
            let r = match refs {
                Some(mut edges) => {
                    edges.sort_unstable();
                    edges.dedup();
                    let state = self.class(top.state());
                    let next = self.nodes.len() as u32;
                    let i = *self.cons.entry((state, edges.clone())).or_insert(next);
                    if i == next {
                        self.nodes.push(SimNode { state, edges });
                    }
                    NodeRef::Local(i)
                }
                // A predecessor is still open: `top` is on a cycle.
                None => {
                    self.reals.push(RealNode {
                        node: top.clone(),
                        preds: None,
                    });
                    NodeRef::Real((self.reals.len() - 1) as u32)
                }
            };
            self.real_index.insert(top.id(), r);
        }
        self.real_index[&n.id()]
    }

    /// The predecessors of cycle node `i` (named already: see [`Sim::real`]).
    fn real_preds(&mut self, i: u32) -> SmallVec<[NodeRef; 2]> {
        if let Some(p) = &self.reals[i as usize].preds {
            return p.clone();
        }
        let below: SmallVec<[GssNode; 2]> = self.reals[i as usize].node.predecessors().collect();
        let preds: SmallVec<[NodeRef; 2]> = below.iter().map(|n| self.real(n)).collect();
        self.reals[i as usize].preds = Some(preds.clone());
        preds
    }

    /// The LR state of `n` (a class of states for a real node read through classes).
    pub(crate) fn state_of(&self, n: NodeRef) -> LrState {
        match n {
            NodeRef::Local(i) => self.nodes[i as usize].state,
            NodeRef::Real(i) => self.class(self.reals[i as usize].node.state()),
        }
    }

    /// Reads real nodes' states as their classes in `classes`.
    pub(crate) fn with_classes(mut self, classes: Arc<ClassTables>) -> Self {
        self.classes = Some(classes);
        self
    }

    /// The class of a real node's state `s`.
    #[inline]
    fn class(&self, s: LrState) -> LrState {
        self.classes.as_ref().map_or(s, |c| c.state(s))
    }

    /// Whether terminal index `k` can be shifted from some stack of `frontier` (after
    /// reductions).
    pub(crate) fn can_shift(
        &mut self,
        tables: &LrTables,
        frontier: &[NodeRef],
        k: u32,
    ) -> Result<bool, SimBudget> {
        // A top that shifts `k` directly answers without a closure.
        if frontier.iter().any(|&f| {
            tables
                .actions_at(self.state_of(f), k)
                .iter()
                .any(|a| matches!(a, Action::Shift(_)))
        }) {
            return Ok(true);
        }
        let mark = self.mark();
        let r = self.close(tables, frontier, k, true).map(|c| !c.is_empty());
        self.truncate(mark);
        r
    }

    /// The frontier after shifting terminal index `k` onto the stacks of `frontier` (after every
    /// reduction it allows): empty when no stack can shift it. The new nodes stay in the arena
    /// until the caller truncates to a mark taken before.
    pub(crate) fn shift(
        &mut self,
        tables: &LrTables,
        frontier: &[NodeRef],
        k: u32,
    ) -> Result<Frontier, SimBudget> {
        // A lone top whose only actions on `k` are shifts (the deterministic case): no closure
        // and no scratch copy (a copy of one node that no reduction reaches is that node).
        if let [f] = *frontier {
            let actions = tables.actions_at(self.state_of(f), k);
            if actions
                .iter()
                .all(|a| matches!(a, Action::Shift(_) | Action::Accept))
            {
                let mut out: Frontier = SmallVec::new();
                let first = self.nodes.len();
                for a in actions {
                    if let Action::Shift(to) = *a {
                        if self.nodes[first..].iter().all(|n| n.state != to) {
                            let i = self.push_node(to, f)?;
                            out.push(NodeRef::Local(i));
                        }
                    }
                }
                return Ok(out);
            }
        }
        let shifts = self.close(tables, frontier, k, false)?;
        let mut out: Frontier = SmallVec::new();
        // One new node per target state, with an edge to every scratch node shifting into it.
        let first = self.nodes.len();
        for (from, to) in shifts {
            match self.nodes[first..].iter().position(|n| n.state == to) {
                Some(j) => {
                    let edges = &mut self.nodes[first + j].edges;
                    if !edges.contains(&NodeRef::Local(from)) {
                        edges.push(NodeRef::Local(from));
                    }
                }
                None => {
                    let i = self.push_node(to, NodeRef::Local(from))?;
                    out.push(NodeRef::Local(i));
                }
            }
        }
        Ok(out)
    }

    fn push_node(&mut self, state: LrState, edge: NodeRef) -> Result<u32, SimBudget> {
        if self.nodes.len() >= self.max_nodes {
            return Err(SimBudget);
        }
        self.nodes.push(SimNode {
            state,
            edges: SmallVec::from_elem(edge, 1),
        });
        Ok((self.nodes.len() - 1) as u32)
    }

    /// The scratch node of state `l` in the current closure.
    fn slot(&self, l: LrState) -> Option<u32> {
        let (stamp, i) = self.slot[l.as_usize()];
        (stamp == self.stamp).then_some(i)
    }

    fn set_slot(&mut self, l: LrState, i: u32) {
        self.slot[l.as_usize()] = (self.stamp, i);
    }

    /// The reduction closure of `frontier` under lookahead `k`: scratch nodes (copies of the
    /// frontier merged per state, then every node reductions build), and the shifts they allow
    /// as `(scratch node, state after the shift)`. With `stop_at_shift`, stops at the first.
    ///
    /// This is the runtime's RNGLR reducer (`munch_glr::parser::rnglr`) step for step, so that
    /// the two agree exactly: a pending reduction `(start, lhs, len)` runs along the paths
    /// that begin at a scratch node and go down through `start` (or stay at the scratch node
    /// for `len = 0`); a new edge into an existing scratch node queues the reductions of that
    /// node through the new edge only. Paths never begin through an ε-edge of the current
    /// position: the tables' right-nulled reductions make that unnecessary.
    fn close(
        &mut self,
        tables: &LrTables,
        frontier: &[NodeRef],
        k: u32,
        stop_at_shift: bool,
    ) -> Result<SmallVec<[(u32, LrState); 4]>, SimBudget> {
        let mut shifts: SmallVec<[(u32, LrState); 4]> = SmallVec::new();
        // Nothing to do unless some top has an action on `k`.
        if !frontier
            .iter()
            .any(|&f| !tables.actions_at(self.state_of(f), k).is_empty())
        {
            return Ok(shifts);
        }
        self.closures += 1;
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.slot.iter_mut().for_each(|s| *s = (0, 0));
            self.stamp = 1;
        }
        let lo = self.nodes.len();
        self.edge_set.clear();
        for &f in frontier {
            let state = self.state_of(f);
            let edges: SmallVec<[NodeRef; 2]> = match f {
                NodeRef::Local(i) => self.nodes[i as usize].edges.clone(),
                NodeRef::Real(i) => self.real_preds(i),
            };
            match self.slot(state) {
                Some(j) => {
                    for e in edges {
                        self.add_edge(j, e);
                    }
                }
                None => {
                    if self.nodes.len() >= self.max_nodes {
                        return Err(SimBudget);
                    }
                    self.nodes.push(SimNode { state, edges });
                    let j = (self.nodes.len() - 1) as u32;
                    self.set_slot(state, j);
                }
            }
        }
        // Seed the pending reductions from the copies, as RNGLR's shifter would have.
        let mut pending = std::mem::take(&mut self.pending);
        pending.clear();
        for j in lo..self.nodes.len() {
            let state = self.nodes[j].state;
            for a in tables.actions_at(state, k) {
                match *a {
                    Action::Shift(to) => shifts.push((j as u32, to)),
                    Action::Accept => {}
                    Action::Reduce { lhs, len: 0, .. } => {
                        pending.push((Start::Scratch(j as u32), lhs, 0))
                    }
                    Action::Reduce { lhs, len, .. } => {
                        for &e in &self.nodes[j].edges {
                            pending.push((Start::Node(e), lhs, len));
                        }
                    }
                }
            }
        }
        let mut ends = std::mem::take(&mut self.ends);
        while let Some((start, lhs, m)) = pending.pop() {
            if stop_at_shift && !shifts.is_empty() {
                break;
            }
            match start {
                Start::Scratch(j) => {
                    ends.clear();
                    ends.push(NodeRef::Local(j));
                }
                Start::Node(n) => self.below(n, m.saturating_sub(1), &mut ends),
            }
            for &u in &ends {
                let Some(l) = tables.goto(self.state_of(u), lhs) else {
                    continue;
                };
                match self.slot(l) {
                    Some(w) => {
                        if !self.add_edge(w, u) {
                            continue;
                        }
                        if m != 0 {
                            for a in tables.actions_at(l, k) {
                                if let Action::Reduce { lhs, len, .. } = *a {
                                    if len != 0 {
                                        pending.push((Start::Node(u), lhs, len));
                                    }
                                }
                            }
                        }
                    }
                    None => {
                        let w = match self.push_node(l, u) {
                            Ok(w) => w,
                            Err(e) => {
                                self.ends = ends;
                                self.pending = pending;
                                return Err(e);
                            }
                        };
                        self.set_slot(l, w);
                        for a in tables.actions_at(l, k) {
                            match *a {
                                Action::Shift(to) => shifts.push((w, to)),
                                Action::Accept => {}
                                Action::Reduce { lhs, len: 0, .. } => {
                                    pending.push((Start::Scratch(w), lhs, 0))
                                }
                                Action::Reduce { lhs, len, .. } => {
                                    if m != 0 {
                                        pending.push((Start::Node(u), lhs, len));
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        self.ends = ends;
        self.pending = pending;
        Ok(shifts)
    }

    /// Adds edge `j → e` to scratch node `j` unless it has it; returns whether it was added.
    fn add_edge(&mut self, j: u32, e: NodeRef) -> bool {
        /// Past this many edges a node's edges are also kept in `edge_set`.
        const LINEAR: usize = 8;
        let edges = &mut self.nodes[j as usize].edges;
        if edges.len() < LINEAR {
            if edges.contains(&e) {
                return false;
            }
        } else {
            // The first time past the threshold, index the node's edges so far (a sentinel
            // entry records that it is indexed).
            if self.edge_set.insert((j, NodeRef::Local(u32::MAX))) {
                for &x in edges.iter() {
                    self.edge_set.insert((j, x));
                }
            }
            if !self.edge_set.insert((j, e)) {
                return false;
            }
        }
        edges.push(e);
        true
    }

    /// The nodes `d` edges below `from` (a node of an earlier position: every path follows
    /// frozen edges), into `out`, deduplicated.
    fn below(&mut self, from: NodeRef, d: u32, out: &mut Vec<NodeRef>) {
        out.clear();
        out.push(from);
        if d == 0 {
            return;
        }
        let mut next = std::mem::take(&mut self.next);
        for _ in 0..d {
            next.clear();
            for &u in out.iter() {
                match u {
                    NodeRef::Local(j) => next.extend_from_slice(&self.nodes[j as usize].edges),
                    NodeRef::Real(j) => {
                        let preds = self.real_preds(j);
                        next.extend(preds);
                    }
                }
            }
            next.sort_unstable();
            next.dedup();
            std::mem::swap(out, &mut next);
        }
        self.next = next;
    }
}

/// Where a pending reduction's paths start: at a scratch node (`len = 0`), or through a node
/// below the scratch nodes (the path's first edge leads to it).
#[derive(Clone, Copy, Debug)]
enum Start {
    Scratch(u32),
    Node(NodeRef),
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use munch_glr::parser::{ParserState, ShiftCache};
    use munch_lexer::TerminalId;
    use munch_testkit::grammar::parser;

    use super::*;

    /// The states of `nodes`, sorted.
    fn states(nodes: impl Iterator<Item = LrState>) -> Vec<LrState> {
        let mut v: Vec<LrState> = nodes.collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// On the real GSS of many parser states, the simulator shifts exactly what the parser
    /// shifts (same answers, same LR states after the shift), and a second shift from the
    /// simulated frontier agrees with the parser's from its speculative nodes.
    fn agrees_with_the_parser(source: &str, texts: &[&str]) {
        let p = parser(source);
        let tables = p.tables();
        let mut sim = Sim::new(tables.state_len(), usize::MAX);
        let mut cache = ShiftCache::new();
        let terminals = p.cfg().terminal_len();
        let mut checked = 0;
        for text in texts {
            let mut state = ParserState::new(Arc::clone(&p));
            for &b in text.as_bytes() {
                state.commit_bytes(&[b]).unwrap();
                for head in state.heads() {
                    let node = head.node();
                    let real = sim.real(node);
                    for t in 0..terminals {
                        let tid = TerminalId::from_usize(t);
                        let k = t as u32;
                        let expected = p.can_shift(node, tid, &mut cache);
                        assert_eq!(
                            sim.can_shift(tables, &[real], k).unwrap(),
                            expected,
                            "{text:?}: can_shift {}",
                            p.terminal_name(tid)
                        );
                        let mark = sim.mark();
                        let ours = sim.shift(tables, &[real], k).unwrap();
                        let theirs = p.shift_from(node, tid).unwrap();
                        assert_eq!(
                            states(ours.iter().map(|&n| sim.state_of(n))),
                            states(theirs.iter().map(|n| n.state())),
                            "{text:?}: shift {}",
                            p.terminal_name(tid)
                        );
                        for t2 in 0..terminals {
                            let t2id = TerminalId::from_usize(t2);
                            let deeper = theirs.iter().any(|n| p.can_shift(n, t2id, &mut cache));
                            assert_eq!(sim.can_shift(tables, &ours, t2 as u32).unwrap(), deeper);
                            checked += 1;
                        }
                        sim.truncate(mark);
                    }
                }
            }
        }
        assert!(checked > 0);
    }

    #[test]
    fn agrees_with_the_parser_on_tricky() {
        agrees_with_the_parser(
            munch_grammars::builtin("tricky").unwrap().source,
            &[
                "if (x) if (y) z = 1; else print z;",
                "x += -(1 + 2) * 3; { lbl: ; }",
            ],
        );
    }

    #[test]
    fn agrees_with_the_parser_on_ambiguous_nullable_grammars() {
        agrees_with_the_parser(
            r#"
            start: e
            e: e e | "a" | "(" e ")" | n e "b" |
            n: "c"? | n n
            "#,
            &["aa(a)", "cab", "ccab(a)"],
        );
    }

    /// A node pushed after `mark` with `state` and `edges`.
    fn push(sim: &mut Sim, state: usize, edges: &[NodeRef]) -> NodeRef {
        sim.nodes.push(SimNode {
            state: LrState::new(state).unwrap(),
            edges: edges.iter().copied().collect(),
        });
        NodeRef::Local((sim.nodes.len() - 1) as u32)
    }

    #[test]
    fn canonical_nodes_are_shared_by_structure() {
        let mut sim = Sim::new(8, usize::MAX);
        let base = push(&mut sim, 1, &[]);
        let f = sim.canonicalize(0, &[base]);
        // Two structurally equal chains on `base`, built after a mark, become one.
        let mark = sim.mark();
        let a = push(&mut sim, 2, &[f[0]]);
        let b = push(&mut sim, 2, &[f[0]]);
        let top = push(&mut sim, 3, &[a, b]);
        let g = sim.canonicalize(mark, &[top, a]);
        assert_eq!(g.len(), 2);
        assert_eq!(sim.mark(), mark + 2, "one copy of each structure is kept");
        let mark = sim.mark();
        let again = push(&mut sim, 2, &[f[0]]);
        assert_eq!(sim.canonicalize(mark, &[again]).as_slice(), &[g[0]]);
        assert_eq!(sim.mark(), mark);
    }

    #[test]
    fn a_cycle_keeps_its_nodes_and_forgets_what_it_made() {
        let mut sim = Sim::new(8, usize::MAX);
        let mark = sim.mark();
        // `c` is canonicalised first; then the cycle `x ⇄ y` is found.
        let c = push(&mut sim, 3, &[]);
        let x = push(&mut sim, 1, &[NodeRef::Local(2)]);
        let y = push(&mut sim, 2, &[x]);
        assert_eq!(y, NodeRef::Local(2));
        let out = sim.canonicalize(mark, &[c, x]);
        assert_eq!(out.as_slice(), &[c, x]);
        assert_eq!(sim.mark(), 3, "the new nodes stay as they are");
        assert!(
            sim.cons.is_empty(),
            "no canonical entry names a node that is not there"
        );
        // A later node of `c`'s structure is canonicalised into a node of that structure.
        let mark = sim.mark();
        let c2 = push(&mut sim, 3, &[]);
        let out = sim.canonicalize(mark, &[c2]);
        assert_eq!(sim.state_of(out[0]), LrState::new(3).unwrap());
        assert!(sim.nodes[3].edges.is_empty());
    }

    #[test]
    fn equal_real_nodes_share_a_ref() {
        // The same text parsed by two states: each builds its own GSS nodes (ids differ) with
        // the same states and predecessors, so they intern to the same refs.
        let p = parser(
            r#"start: W ";" W
                         W: /[a-z]+/"#,
        );
        let mut sim = Sim::new(p.tables().state_len(), usize::MAX);
        let mut one = ParserState::new(Arc::clone(&p));
        one.commit_bytes(b"ab").unwrap();
        let first: Vec<_> = one
            .heads()
            .map(|h| (h.node().id(), sim.real(h.node())))
            .collect();
        let mut two = ParserState::new(Arc::clone(&p));
        two.commit_bytes(b"a").unwrap();
        two.commit_bytes(b"b").unwrap();
        let second: Vec<_> = two
            .heads()
            .map(|h| (h.node().id(), sim.real(h.node())))
            .collect();
        let fresh = second
            .iter()
            .find(|(id, _)| first.iter().all(|(other, _)| other != id))
            .expect("the second state has nodes of its own");
        assert!(first.iter().any(|(_, r)| *r == fresh.1));
    }
}
