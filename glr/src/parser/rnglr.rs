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
//! Within a step, each reduction walk is done once (see `Reducer`), which bounds a step by the
//! GSS's edges; across steps, where a reduction passes through a chain of states that only
//! reduce (right recursion closed again at every step under a lookahead that LALR(1) allows
//! but the context does not), where the chain ends is remembered per (node, state, lookahead)
//! and later steps jump there (see `Chains`).
//!
//! The same reducer answers, without building anything persistent, whether a terminal can be
//! shifted from a node ([`reduce`] with [`Stop::AtShift`]). Whether the input may end is
//! answered by [`accepts`], a search over the reducer's configurations under `$` that builds no
//! node and is memoised per configuration.

use ahash::{AHashMap, AHashSet};
use smallvec::SmallVec;

use crate::cfg::NonterminalId;
use crate::gss::{Edge, GssNode, GssNodeId, Level, NodeData, NodeRef, WeakNode};
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

/// A budget of the reducer ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exceeded {
    /// More scratch or shifted nodes than the step allows.
    Nodes,
    /// More work (reduction items expanded, GSS edges walked) than the step allows.
    Work,
}

/// What one parser step may still spend: nodes built and units of work. Both only go down, so
/// a step that succeeds with an allowance succeeds, identically, with a larger one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Allowance {
    /// Nodes the step may still build.
    pub nodes: usize,
    /// Units of work the step may still do.
    pub work: usize,
}

impl Allowance {
    /// No limit.
    pub const fn unlimited() -> Allowance {
        Allowance {
            nodes: usize::MAX,
            work: usize::MAX,
        }
    }

    /// Whether this allowance is at least `spent`, in both parts.
    pub fn covers(&self, spent: &Allowance) -> bool {
        self.nodes >= spent.nodes && self.work >= spent.work
    }

    /// Takes `spent` off (which this allowance covers).
    pub fn charge(&mut self, spent: &Allowance) {
        self.nodes -= spent.nodes;
        self.work -= spent.work;
    }

    /// What was spent between `self` (before) and `after`.
    pub fn minus(&self, after: &Allowance) -> Allowance {
        Allowance {
            nodes: self.nodes - after.nodes,
            work: self.work - after.work,
        }
    }

    #[inline]
    pub fn spend(&mut self, units: usize) -> Result<(), Exceeded> {
        match self.work.checked_sub(units) {
            Some(left) => {
                self.work = left;
                Ok(())
            }
            None => Err(Exceeded::Work),
        }
    }
}

/// A scratch node's edges are checked for duplicates by a linear scan up to this many, through
/// a hash set past it (a node of an ambiguous grammar can have an edge to every level below).
const LINEAR_EDGES: usize = 8;

/// An edge's target, for the duplicate check: a scratch index (below 2^32) or a frozen node's
/// [`GssNodeId::bits`] (at least 2^32), in one number so that hashing it is one step.
#[derive(Clone, Copy, PartialEq, Eq)]
struct EdgeKey(u128);

impl EdgeKey {
    fn same(i: u32) -> EdgeKey {
        EdgeKey(u128::from(i))
    }

    fn down(id: GssNodeId) -> EdgeKey {
        EdgeKey(id.bits())
    }
}

/// Scratch nodes: same layout as frozen ones (`Edge::Same` indexes the scratch level).
struct Scratch {
    nodes: Vec<NodeData>,
    /// LR state → scratch index; a linear list while small, a map past that.
    small: SmallVec<[(LrState, u32); 8]>,
    map: Option<AHashMap<LrState, u32>>,
    /// The edges of the nodes with more than [`LINEAR_EDGES`] of them.
    many: AHashSet<u128>,
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

    fn has_edge(&self, w: u32, to: EdgeKey) -> bool {
        let edges = &self.nodes[w as usize].edges;
        if edges.len() <= LINEAR_EDGES {
            edges.iter().any(|e| edge_key(e) == to)
        } else {
            self.many.contains(&many_key(w, to))
        }
    }

    /// Adds the edge `w → to` (not already there).
    fn push_edge(&mut self, w: u32, to: Target) {
        let key = to.key();
        let edges = &mut self.nodes[w as usize].edges;
        edges.push(edge_to(to));
        match edges.len() {
            n if n <= LINEAR_EDGES => {}
            n if n == LINEAR_EDGES + 1 => {
                for e in edges.iter() {
                    self.many.insert(many_key(w, edge_key(e)));
                }
            }
            _ => {
                self.many.insert(many_key(w, key));
            }
        }
    }
}

/// Where a reduction path ends: the node `goto` is taken from.
#[derive(Clone)]
enum Target {
    /// A scratch node (only for length-0 reductions).
    Scratch(u32),
    /// A frozen node.
    Node(GssNode),
}

impl Target {
    fn key(&self) -> EdgeKey {
        match self {
            Target::Scratch(i) => EdgeKey::same(*i),
            Target::Node(n) => EdgeKey::down(n.id()),
        }
    }
}

fn edge_key(e: &Edge) -> EdgeKey {
    match e {
        Edge::Same(i) => EdgeKey::same(*i),
        Edge::Down(n) => EdgeKey::down(n.id()),
    }
}

/// The key of the edge `w → to` in [`Scratch::many`]: ids take at most 96 bits.
fn many_key(w: u32, to: EdgeKey) -> u128 {
    (u128::from(w) << 96) | to.0
}

fn edge_to(u: Target) -> Edge {
    match u {
        Target::Scratch(i) => Edge::Same(i),
        Target::Node(n) => Edge::Down(n),
    }
}

/// Steps down a deterministic reduction path after which [`Reducer::follow`] looks for a
/// remembered end, and which a path must have to be remembered: shorter paths (closing a
/// statement or an expression) are walked faster than remembered.
const LOOKUP_AFTER: u32 = if cfg!(test) { 0 } else { 4 };

/// Whether the configurations over `u` are looked up and remembered: one node in 8 (in 2 under
/// `cfg(test)`, so that tests walk past the others too), picked by a hash of its id so that
/// every run over the same nodes picks the same ones. A run reaches a remembered one within a
/// few steps, and a path seen for the first time (closing 100 nested brackets under each
/// lookahead a liveness check tries) costs a lookup and an entry per 8 steps, not per step.
#[inline]
fn memo_point(u: GssNodeId) -> bool {
    let bits = u.bits();
    let h = ((bits as u64) ^ ((bits >> 64) as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h >> if cfg!(test) { 63 } else { 61 } == 0
}

/// Whether a path that went `descents` steps down is looked up and remembered.
#[inline]
// Tests remember paths from their first step (`LOOKUP_AFTER` is 0 there), to exercise the memo.
#[allow(clippy::absurd_extreme_comparisons)]
fn long_path(descents: u32) -> bool {
    descents >= LOOKUP_AFTER
}

/// Where the deterministic reduction path of a configuration ends, under one lookahead.
#[derive(Clone)]
enum PathEnd {
    /// Nowhere: no configuration on it can shift the lookahead or accept.
    Dead,
    /// At the configuration (state over node) that does more than pass through, or whose one
    /// reduction can take several paths down.
    At(WeakNode, LrState),
}

/// A configuration (state over frozen node) under a lookahead, as a key of [`Chains`]: node
/// ids take at most 96 bits.
type ChainKey = (u128, u32);

fn chain_key(u: GssNodeId, l: LrState, k: u32) -> ChainKey {
    (u.bits() | (u128::from(l.as_u32()) << 96), k)
}

#[cfg(test)]
thread_local! {
    /// Tests turn [`Chains`] off to compare the steps with and without it.
    pub(crate) static CHAINS_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[inline]
fn chains_on() -> bool {
    #[cfg(test)]
    if CHAINS_OFF.get() {
        return false;
    }
    true
}

/// Remembered ends of deterministic reduction paths.
///
/// A state *passes through* under a lookahead when all it does there is one reduction of
/// length > 0. A configuration whose state passes through, over a node from which the
/// reduction has one path down, leads to exactly one configuration, and contributes nothing
/// else to the step: it shifts nothing, accepts nothing, and no shifting node reaches it
/// through a same-level edge (those come from length-0 reductions), so the step keeps none of
/// it. A chain of such configurations can be replaced by where it ends — the first
/// configuration that does more, or whose reduction branches, or nothing at all — without
/// changing what the step shifts or keeps. That end depends only on the nodes below the first
/// configuration, which never change, so it is remembered across steps, keyed by (node id,
/// state, lookahead); ids are never reused, so entries never go stale.
///
/// This keeps right recursion linear where the same chain is reduced again at every step, as
/// LALR(1)'s merged lookaheads make it: in an else-if chain of `n` links every `else` (and every
/// prefix of it that is also a name) reduces the innermost `if`, and the reduction runs down all
/// `n` links to the top level, where a name shifts and `else` dies; remembered, each `else`
/// costs the same whatever `n` (munch's tricky grammar, `if (x) x=1; else `×n `x=1;`: 319 k
/// units at n = 1,000, 1.28 M at 4,000; `parse_file … --work`, bench/PERFORMANCE.md). As Leo's
/// right-recursion optimisation for Earley parsers, it skips only where there is one path: a
/// node whose edges are each a parse still possible (nested dangling `else`s) is walked edge by
/// edge.
///
/// Entries live in two generations: once the young one holds more than [`Chains::GENERATION`]
/// entries, it becomes the old one and the old one is dropped; a hit in the old one moves the
/// entry back. A long chain keeps its recent entries, and memory stays bounded on a thread
/// that parses for ever. The ends' nodes are held weakly, so forgotten parses are freed.
struct Chains {
    young: AHashMap<ChainKey, PathEnd>,
    old: AHashMap<ChainKey, PathEnd>,
}

impl Default for Chains {
    fn default() -> Self {
        // Fixed seeds: node ids are not attacker-chosen.
        Chains {
            young: AHashMap::with_hasher(ahash::RandomState::with_seeds(1, 2, 3, 4)),
            old: AHashMap::with_hasher(ahash::RandomState::with_seeds(1, 2, 3, 4)),
        }
    }
}

impl Chains {
    /// Entries per generation.
    const GENERATION: usize = 1 << 14;

    fn get(&mut self, key: &ChainKey) -> Option<PathEnd> {
        if let Some(end) = self.young.get(key) {
            return Some(end.clone());
        }
        let end = self.old.remove(key)?;
        self.young.insert(*key, end.clone());
        Some(end)
    }

    fn insert(&mut self, key: ChainKey, end: PathEnd) {
        self.young.insert(key, end);
    }

    /// Starts a new generation when the young one is full.
    fn age(&mut self) {
        if self.young.len() > Self::GENERATION {
            self.old = std::mem::replace(
                &mut self.young,
                AHashMap::with_hasher(ahash::RandomState::with_seeds(1, 2, 3, 4)),
            );
        }
    }
}

/// A pending reduction.
enum Item {
    /// A length-0 reduction to `lhs` at a scratch node.
    Null(u32, NonterminalId),
    /// The rest of a reduction to `lhs` of length `m > 0`: walk `rest` edges down from the frozen
    /// node, then take `goto` from where the walk ends.
    Walk(GssNode, NonterminalId, u32),
}

/// The outcome of the reducer under one lookahead.
pub(crate) struct Reduced {
    nodes: Vec<NodeData>,
    /// `(scratch node, state after the shift)`.
    pub shifts: SmallVec<[(u32, LrState); 4]>,
    /// Some node accepts (only under `$`).
    pub accepted: bool,
    /// No reduction added a node or an edge and no two frontier nodes merged: scratch node `i`
    /// is a copy of frontier node `i` (same state, same edges).
    pub copies_frontier: bool,
}

impl Reduced {
    /// The LR state on top when each shift happens (the state it shifts from).
    pub(crate) fn shift_tops(&self) -> impl Iterator<Item = LrState> + '_ {
        self.shifts
            .iter()
            .filter_map(|&(i, _)| self.nodes.get(i as usize).map(|n| n.state))
    }
}

/// One run of the reducer.
///
/// A walk's outcome depends only on (node, lhs, rest) — the nodes below a frozen node never
/// change — so each is done once per run (`seen`), and a walk's last edge leads straight to its
/// `goto`, whose duplicate edge check stands in for the walk's. This is what keeps a step
/// polynomial on ambiguous grammars: at most |GSS edges| × |nonterminals| × the longest rule,
/// where RNGLR's per-path reductions walk the same sub-paths again for every edge above them
/// (`s: s s | "a"` on 1,000 `a`s takes 0.3 s this way, against minutes).
struct Reducer<'a> {
    tables: &'a LrTables,
    k: u32,
    s: Scratch,
    out: Reduced,
    items: Vec<Item>,
    seen: Seen<(u128, u32)>,
    left: &'a mut Allowance,
    /// This thread's, kept across runs (see [`Chains`]).
    chains: &'a mut Chains,
    /// Some reduction reached a scratch node (added an edge or a node).
    reduced: bool,
}

/// The key of a walk in [`Reducer::seen`]: ids take at most 96 bits.
fn walk_key(n: GssNodeId, lhs: NonterminalId, rest: u32) -> (u128, u32) {
    (n.bits() | ((lhs.as_usize() as u128) << 96), rest)
}

impl Reducer<'_> {
    fn walk(&mut self, n: NodeRef<'_>, lhs: NonterminalId, rest: u32) {
        if self.seen.insert(walk_key(n.id(), lhs, rest)) {
            self.items.push(Item::Walk(n.to_node(), lhs, rest));
        }
    }

    /// Walks one edge of `n`, then `rest` more edges, then takes `goto` on `lhs`. Runs of nodes
    /// with one edge each are walked straight through (no path can branch there, so the
    /// duplicate check would only cost); a walk is remembered where it reaches a node with
    /// several edges.
    #[inline]
    fn walk_edge(
        &mut self,
        n: &GssNode,
        e: &Edge,
        lhs: NonterminalId,
        mut rest: u32,
    ) -> Result<(), Exceeded> {
        let mut m = n.as_ref().follow(e);
        while rest > 0 {
            match m.edges() {
                [only] => {
                    self.left.spend(1)?;
                    m = m.follow(only);
                    rest -= 1;
                }
                [] => return Ok(()),
                _ => break,
            }
        }
        if rest == 0 {
            return self.reach_node(m, lhs);
        }
        self.walk(m, lhs, rest);
        Ok(())
    }

    /// A reduction to `x` ends at the frozen node `u`.
    #[inline]
    fn reach_node(&mut self, u: NodeRef<'_>, x: NonterminalId) -> Result<(), Exceeded> {
        match self.tables.goto(u.state(), x) {
            Some(l) => self.enter(u, l),
            None => Ok(()),
        }
    }

    /// A length-0 reduction to `x` ends at the scratch node `i`.
    fn reach_scratch(&mut self, i: u32, x: NonterminalId) -> Result<(), Exceeded> {
        let state = self.s.nodes[i as usize].state;
        match self.tables.goto(state, x) {
            Some(l) => self.link(l, EdgeKey::same(i), || Target::Scratch(i)),
            None => Ok(()),
        }
    }

    /// The configuration `l` over the frozen node `u`: an edge to `u` from the scratch node of
    /// state `l`, with what it allows. A state that passes through (see [`Chains`]) has its
    /// path followed here.
    #[inline]
    fn enter(&mut self, u: NodeRef<'_>, l: LrState) -> Result<(), Exceeded> {
        let Some(slot) = self.slot(l, EdgeKey::down(u.id())) else {
            return Ok(());
        };
        match self.add_edge(slot, l, Target::Node(u.to_node()), chains_on())? {
            Some((lhs, len)) => self.follow(u, l, lhs, len),
            None => Ok(()),
        }
    }

    /// Where the edge from the scratch node of state `l` to `ukey` would go: `None` when it is
    /// there already, else the node, if there is one.
    #[inline]
    fn slot(&self, l: LrState, ukey: EdgeKey) -> Option<Option<u32>> {
        match self.s.find(l) {
            Some(w) if self.s.has_edge(w, ukey) => None,
            w => Some(w),
        }
    }

    /// Gives the scratch node of state `l` (made if need be) the edge to `u` (`ukey` is its
    /// identity) unless it has it, with what the new edge or node allows (see
    /// [`Reducer::add_edge`]).
    fn link(
        &mut self,
        l: LrState,
        ukey: EdgeKey,
        u: impl FnOnce() -> Target,
    ) -> Result<(), Exceeded> {
        match self.slot(l, ukey) {
            Some(slot) => self.add_edge(slot, l, u(), false).map(drop),
            None => Ok(()),
        }
    }

    /// Adds the edge to `u` (not there yet) to the scratch node `slot` of state `l`, or to a new
    /// one, and queues what the new edge or node allows: shifts, acceptance, length-0
    /// reductions and, through a new edge to a frozen node, the reductions of length > 0.
    /// With `follow`, a state that passes through (see [`Chains`]) over a frozen node queues
    /// nothing: its one reduction is returned for the caller to follow.
    #[inline]
    fn add_edge(
        &mut self,
        slot: Option<u32>,
        l: LrState,
        u: Target,
        follow: bool,
    ) -> Result<Option<(NonterminalId, u32)>, Exceeded> {
        self.reduced = true;
        let w = match slot {
            Some(w) => w,
            None => {
                if self.s.nodes.len() >= self.left.nodes {
                    return Err(Exceeded::Nodes);
                }
                self.s.add(l, SmallVec::new())
            }
        };
        let new_node = slot.is_none();
        let mut actions = self.tables.actions_at(l, self.k);
        let first = actions.next();
        if let (Target::Node(_), true) = (&u, follow) {
            if let Some(&Action::Reduce { lhs, len, .. }) = first {
                if len > 0 && actions.clone().next().is_none() {
                    self.s.push_edge(w, u);
                    return Ok(Some((lhs, len)));
                }
            }
        }
        for &a in first.into_iter().chain(actions) {
            match a {
                Action::Shift(to) if new_node => self.out.shifts.push((w, to)),
                Action::Accept if new_node => self.out.accepted = true,
                Action::Reduce { lhs, len: 0, .. } if new_node => {
                    self.items.push(Item::Null(w, lhs))
                }
                // Through a new edge to a frozen node, the reductions of `l` of length > 0
                // run through it. (Through a new edge to a scratch node, right-nulled
                // reductions already cover them.)
                Action::Reduce { lhs, len, .. } if len > 0 => {
                    if let Target::Node(n) = &u {
                        self.walk(n.as_ref(), lhs, len - 1);
                    }
                }
                _ => {}
            }
        }
        self.s.push_edge(w, u);
        Ok(None)
    }

    /// Follows the reduction path from the configuration `l` over `u` (its edge just added),
    /// `l` passing through with the reduction to `lhs` of length `len`, for as long as it is
    /// deterministic (see [`Chains`]): each configuration on it gets its edge as usual, but its
    /// reduction is walked here. Past [`LOOKUP_AFTER`] steps down, a remembered configuration
    /// (at a [`memo_point`]) jumps to where its path ends; a path of that many steps has its
    /// points remembered.
    fn follow(
        &mut self,
        mut u: NodeRef<'_>,
        mut l: LrState,
        mut lhs: NonterminalId,
        mut len: u32,
    ) -> Result<(), Exceeded> {
        let mut path: SmallVec<[ChainKey; 8]> = SmallVec::new();
        let mut descents = 0u32;
        let mut point = memo_point(u.id());
        if point {
            path.push(chain_key(u.id(), l, self.k));
        }
        let end = loop {
            // `l` over `u` has its edge: walk its reduction down.
            self.left.spend(1)?;
            let mut w = u;
            let mut rest = len - 1;
            if rest > 0 {
                descents += 1;
            }
            while rest > 0 {
                match w.edges() {
                    [only] => {
                        self.left.spend(1)?;
                        w = w.follow(only);
                        rest -= 1;
                    }
                    _ => break,
                }
            }
            if rest > 0 {
                if w.edges().is_empty() {
                    break None;
                }
                // The path branches: this configuration's reduction goes on as a walk, and the
                // configurations before it lead here.
                self.walk(w, lhs, rest);
                if point {
                    path.pop();
                }
                break Some((u, l));
            }
            let Some(next) = self.tables.goto(w.state(), lhs) else {
                break None;
            };
            // The next configuration, `next` over `w`.
            point = memo_point(w.id());
            if point && long_path(descents) {
                let key = chain_key(w.id(), next, self.k);
                if let Some(end) = self.chains.get(&key) {
                    if self.jump(&end)? {
                        // The points before this one extend the remembered part upwards,
                        // which is where the next step starts.
                        for key in path {
                            self.chains.insert(key, end.clone());
                        }
                        return Ok(());
                    }
                }
            }
            let Some(slot) = self.slot(next, EdgeKey::down(w.id())) else {
                // Entered before in this run: the rest of the path was followed then.
                return Ok(());
            };
            match self.add_edge(slot, next, Target::Node(w.to_node()), true)? {
                Some((a, m)) => {
                    if point {
                        path.push(chain_key(w.id(), next, self.k));
                    }
                    (u, l, lhs, len) = (w, next, a, m);
                }
                None => break Some((w, next)),
            }
        };
        if long_path(descents) && !path.is_empty() {
            let end = match end {
                None => PathEnd::Dead,
                Some((node, state)) => PathEnd::At(node.downgrade(), state),
            };
            for key in path {
                self.chains.insert(key, end.clone());
            }
        }
        Ok(())
    }

    /// Reaches where a remembered path ends: nothing for a dead end, else the configuration
    /// there, entered as usual. False when its node is gone (never while the path's first
    /// node lives; the caller then follows the path itself).
    fn jump(&mut self, end: &PathEnd) -> Result<bool, Exceeded> {
        self.left.spend(1)?;
        match end {
            PathEnd::Dead => Ok(true),
            PathEnd::At(node, l) => match node.upgrade() {
                Some(n) => {
                    let key = EdgeKey::down(n.id());
                    self.link(*l, key, || Target::Node(n))?;
                    Ok(true)
                }
                None => Ok(false),
            },
        }
    }

    fn done(&self, stop: Stop) -> bool {
        match stop {
            Stop::Never => false,
            Stop::AtShift => !self.out.shifts.is_empty(),
            Stop::AtAccept => self.out.accepted,
        }
    }

    fn run(&mut self, stop: Stop) -> Result<(), Exceeded> {
        while let Some(item) = self.items.pop() {
            if self.done(stop) {
                break;
            }
            self.left.spend(1)?;
            match item {
                Item::Null(i, x) => self.reach_scratch(i, x)?,
                Item::Walk(n, x, 0) => self.reach_node(n.as_ref(), x)?,
                Item::Walk(n, x, rest) => {
                    self.left.spend(n.predecessor_len())?;
                    for e in &n.data().edges {
                        self.walk_edge(&n, e, x, rest - 1)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The sets and the worklist of a reducer run, kept per thread between runs so that their
/// tables are not grown again at every step.
struct Pool {
    many: AHashSet<u128>,
    seen: Seen<(u128, u32)>,
    items: Vec<Item>,
}

impl Pool {
    /// Past this many entries a set is dropped rather than kept for the next run.
    const KEEP: usize = 1 << 16;

    fn new() -> Pool {
        Pool {
            many: AHashSet::with_hasher(ahash::RandomState::with_seeds(1, 2, 3, 4)),
            seen: Seen::default(),
            items: Vec::new(),
        }
    }

    fn take() -> Pool {
        POOL.with(|p| p.borrow_mut().take())
            .unwrap_or_else(Pool::new)
    }

    fn give_back(mut self) {
        if self.many.capacity() > Self::KEEP || self.seen.capacity() > Self::KEEP {
            self = Pool::new();
        } else {
            self.many.clear();
            self.seen.clear();
            self.items.clear();
        }
        POOL.with(|p| *p.borrow_mut() = Some(self));
    }
}

thread_local! {
    static POOL: std::cell::RefCell<Option<Pool>> = const { std::cell::RefCell::new(None) };
    /// Borrowed by each run, not moved in and out: runs are many and short.
    static CHAINS: std::cell::RefCell<Chains> = std::cell::RefCell::new(Chains::default());
}

/// Runs the RNGLR reducer from `frontier` under lookahead index `k`, spending from `left`.
pub(crate) fn reduce(
    tables: &LrTables,
    frontier: &[GssNode],
    k: u32,
    left: &mut Allowance,
    stop: Stop,
) -> Result<Reduced, Exceeded> {
    CHAINS.with(|chains| match chains.try_borrow_mut() {
        Ok(mut chains) => {
            chains.age();
            reduce_with(tables, frontier, k, left, stop, &mut chains)
        }
        // Not reached (runs do not nest); a fresh memo would do.
        Err(_) => reduce_with(tables, frontier, k, left, stop, &mut Chains::default()),
    })
}

fn reduce_with(
    tables: &LrTables,
    frontier: &[GssNode],
    k: u32,
    left: &mut Allowance,
    stop: Stop,
    chains: &mut Chains,
) -> Result<Reduced, Exceeded> {
    let pool = Pool::take();
    let mut r = Reducer {
        tables,
        k,
        s: Scratch {
            nodes: Vec::with_capacity(frontier.len() + 2),
            small: SmallVec::new(),
            map: None,
            many: pool.many,
        },
        out: Reduced {
            nodes: Vec::new(),
            shifts: SmallVec::new(),
            accepted: false,
            copies_frontier: false,
        },
        reduced: false,
        items: pool.items,
        seen: pool.seen,
        left,
        chains,
    };
    let result = r.start(frontier).and_then(|()| r.run(stop));
    let Reducer {
        s,
        mut out,
        items,
        seen,
        left,
        reduced,
        ..
    } = r;
    out.copies_frontier = !reduced && s.nodes.len() == frontier.len();
    Pool {
        many: s.many,
        seen,
        items,
    }
    .give_back();
    result?;
    left.nodes -= s.nodes.len();
    out.nodes = s.nodes;
    Ok(out)
}

impl Reducer<'_> {
    /// Copies the frontier into the scratch level, merged per LR state, with same-level edges
    /// made explicit, and seeds the reductions from it, as RNGLR's shifter would have.
    fn start(&mut self, frontier: &[GssNode]) -> Result<(), Exceeded> {
        for f in frontier {
            self.left.spend(1 + f.predecessor_len())?;
            let i = match self.s.find(f.state()) {
                Some(i) => i,
                None => {
                    if self.s.nodes.len() >= self.left.nodes {
                        return Err(Exceeded::Nodes);
                    }
                    self.s.add(f.state(), SmallVec::new())
                }
            };
            for e in &f.data().edges {
                let to = Target::Node(f.resolve(e));
                if !self.s.has_edge(i, to.key()) {
                    self.s.push_edge(i, to);
                }
            }
        }
        for i in 0..self.s.nodes.len() {
            let state = self.s.nodes[i].state;
            for &a in self.tables.actions_at(state, self.k) {
                match a {
                    Action::Shift(to) => self.out.shifts.push((i as u32, to)),
                    Action::Accept => self.out.accepted = true,
                    Action::Reduce { lhs, len: 0, .. } => {
                        self.items.push(Item::Null(i as u32, lhs))
                    }
                    Action::Reduce { lhs, len, .. } => {
                        for j in 0..self.s.nodes[i].edges.len() {
                            if let Edge::Down(n) = &self.s.nodes[i].edges[j] {
                                let n = n.clone();
                                self.walk(n.as_ref(), lhs, len - 1);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Shifts the lookaheads `ks` (all completing at the same position) from `frontier`: returns the
/// new frontier, one node per LR state, or an empty list when none can be shifted.
pub(crate) fn shift(
    tables: &LrTables,
    frontier: &[GssNode],
    ks: &[u32],
    left: &mut Allowance,
) -> Result<SmallVec<[GssNode; 2]>, Exceeded> {
    // (state after shift) → edges to frozen scratch nodes.
    let mut targets: SmallVec<[(LrState, SmallVec<[Edge; 2]>); 2]> = SmallVec::new();
    for &k in ks {
        let mut red = reduce(tables, frontier, k, left, Stop::Never)?;
        if red.shifts.is_empty() {
            continue;
        }
        if red.copies_frontier {
            // Nothing reduced: the scratch level would copy the frontier, so the new nodes
            // point at the frontier's own nodes (once each: another lookahead may shift the
            // same node to the same state).
            for &(i, to) in &red.shifts {
                let node = &frontier[i as usize];
                let edge = Edge::Down(node.clone());
                match targets.iter_mut().find(|(s, _)| *s == to) {
                    Some((_, edges)) => {
                        let id = node.id();
                        if !edges
                            .iter()
                            .any(|e| matches!(e, Edge::Down(n) if n.id() == id))
                        {
                            edges.push(edge)
                        }
                    }
                    None => targets.push((to, SmallVec::from_elem(edge, 1))),
                }
            }
            continue;
        }
        keep_shifting(&mut red);
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
    if targets.len() > left.nodes {
        return Err(Exceeded::Nodes);
    }
    left.nodes -= targets.len();
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

/// Drops the scratch nodes that no shifting node reaches (through same-level edges), renumbering
/// the rest. A level is freed as a whole, so one kept node would otherwise keep every node of
/// its step alive, and through their edges every older level: on a long text the whole GSS
/// (hundreds of bytes per input byte) instead of the live stacks.
fn keep_shifting(red: &mut Reduced) {
    const GONE: u32 = u32::MAX;
    let mut new_index = vec![GONE; red.nodes.len()];
    let mut order: Vec<u32> = Vec::with_capacity(red.nodes.len());
    for &(i, _) in &red.shifts {
        if new_index[i as usize] == GONE {
            new_index[i as usize] = order.len() as u32;
            order.push(i);
        }
    }
    let mut at = 0;
    while at < order.len() {
        for e in &red.nodes[order[at] as usize].edges {
            if let Edge::Same(j) = e {
                if new_index[*j as usize] == GONE {
                    new_index[*j as usize] = order.len() as u32;
                    order.push(*j);
                }
            }
        }
        at += 1;
    }
    if order.len() == red.nodes.len() && order.iter().enumerate().all(|(a, &b)| a == b as usize) {
        return;
    }
    let mut old: Vec<Option<NodeData>> = std::mem::take(&mut red.nodes)
        .into_iter()
        .map(Some)
        .collect();
    red.nodes = order
        .iter()
        .map(|&i| {
            let mut node = old[i as usize].take().expect("each node once");
            for e in node.edges.iter_mut() {
                if let Edge::Same(j) = e {
                    *j = new_index[*j as usize];
                }
            }
            node
        })
        .collect();
    for (i, _) in red.shifts.iter_mut() {
        *i = new_index[*i as usize];
    }
}

/// Per LR state, whether the parser accepts at end of input from a stack topped by that state
/// through ε-reductions alone (the state itself accepts on `$`, or a chain of length-0
/// reductions on `$` reaches one that does). This is the part of the end-of-input closure that
/// does not look below the top, so [`accepts`] reads it instead of building nodes.
pub(crate) fn eof_closure_accepts(tables: &LrTables) -> Vec<bool> {
    // Backward reachability from the accepting states over the ε-reduction edges `x → goto(x,
    // A)` on `$`: linear in the edges, where a closure per state would be quadratic on long
    // chains of ε-reductions (a rule of thousands of optional items).
    let eof = tables.eof_index();
    let n = tables.state_len();
    let mut preds: Vec<Vec<LrState>> = vec![Vec::new(); n];
    let mut out = vec![false; n];
    let mut pending: Vec<LrState> = Vec::new();
    for (s, accepts) in out.iter_mut().enumerate() {
        let x = LrState::new(s).expect("state ids fit u32");
        for &a in tables.actions_at(x, eof) {
            match a {
                Action::Accept if !*accepts => {
                    *accepts = true;
                    pending.push(x);
                }
                Action::Reduce { lhs, len: 0, .. } => {
                    if let Some(g) = tables.goto(x, lhs) {
                        preds[g.as_usize()].push(x);
                    }
                }
                _ => {}
            }
        }
    }
    while let Some(g) = pending.pop() {
        for &x in &preds[g.as_usize()] {
            if !out[x.as_usize()] {
                out[x.as_usize()] = true;
                pending.push(x);
            }
        }
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
///
/// Each configuration visited costs one unit of `left`, each edge walked one more; when `left`
/// runs out the search stops with [`Exceeded::Work`] and memoises nothing.
pub(crate) fn accepts(
    tables: &LrTables,
    closure_accepts: &[bool],
    node: &GssNode,
    memo: &mut AcceptMemo,
    left: &mut Allowance,
) -> Result<bool, Exceeded> {
    left.spend(1)?;
    if closure_accepts[node.state().as_usize()] {
        return Ok(true);
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
            left,
        )?;
    }
    let mut found: Option<usize> = None;
    while let Some((l, u, parent)) = pending.pop() {
        left.spend(1)?;
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
        push_configurations(tables, l, &u, at, &mut pending, &mut walk, left)?;
    }
    match found {
        Some(mut i) => {
            while i != usize::MAX {
                let (l, u, parent) = &visited[i];
                memo.insert((u.id(), *l), true);
                i = *parent;
            }
            Ok(true)
        }
        None => {
            for (l, u, _) in &visited {
                memo.insert((u.id(), *l), false);
            }
            Ok(false)
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
    left: &mut Allowance,
) -> Result<(), Exceeded> {
    for &a in tables.actions_at(l, tables.eof_index()) {
        let Action::Reduce { lhs, len, .. } = a else {
            continue;
        };
        if len == 0 {
            continue;
        }
        for w in walk.at_distance(u, len - 1, left)? {
            if let Some(g) = tables.goto(w.state(), lhs) {
                pending.push((g, w, parent));
            }
        }
    }
    Ok(())
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
    /// The nodes at distance `d` below `u` (each once), one unit of `left` per edge walked.
    fn at_distance(
        &mut self,
        u: &GssNode,
        d: u32,
        left: &mut Allowance,
    ) -> Result<smallvec::Drain<'_, [GssNode; 4]>, Exceeded> {
        self.layer.clear();
        self.layer.push(u.clone());
        for _ in 0..d {
            self.next.clear();
            self.seen.clear();
            for v in self.layer.iter() {
                left.spend(v.predecessor_len())?;
                for e in &v.data().edges {
                    let w = v.resolve(e);
                    if self.seen.insert(w.id()) {
                        self.next.push(w);
                    }
                }
            }
            std::mem::swap(&mut self.layer, &mut self.next);
        }
        Ok(self.layer.drain(..))
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
    /// The capacity of the hashed part.
    fn capacity(&self) -> usize {
        self.big.as_ref().map_or(0, |b| b.capacity())
    }

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
