//! Mask time: one head's walk of its point's trie against the real GSS.
//!
//! The always-accepted classes `A(q, s)` come from the tables. What is left are the spans the
//! bare stack `s` does not take: some are rejected, some need what lies below the head. The walk
//! goes down the point's trie in preorder with the frontier of the real stacks after each
//! emitted lexeme ([`Sim`] over the real GSS: nothing is built in the GSS), and skips
//!
//! - subtrees whose every span the bare stack takes (already in `A(q, s)`);
//! - at the first level, lexemes none of whose terminals has an action in `s` (no stack with
//!   top `s` can take them);
//! - subtrees where no real stack survives the lexeme;
//! - spans whose classes are allowed already.
//!
//! At a node, each span ending there is tested: the open lexeme must complete an ignored
//! terminal or one the frontier can shift.
//!
//! Frontiers are interned, and both the frontier after a lexeme and whether a frontier can shift
//! a terminal are memoised, across heads and across masks: an ignored lexeme leaves a frontier
//! as it is, so a point's trie repeats whole subtrees on one frontier, and a head's node often
//! outlives one mask (its lexeme grows, or whitespace follows). The simulator names real nodes and
//! the nodes it builds alike, by structure (LR state and the names of the nodes below, see
//! [`Sim::canonicalize`]): the frontier after a lexeme is the head the commit of that lexeme
//! makes, so the next mask finds its steps memoised. GSS node ids are never reused and a
//! finished GSS level never changes, so a name always means the same stacks and the memos never
//! go stale; they are dropped when they grow past a bound.

use std::sync::Arc;

use ahash::AHashMap;
use munch_glr::gss::GssNode;
use munch_glr::lr::ClassTables;
use munch_tokens::ClassSet;
use smallvec::SmallVec;

use crate::classify::{step, AliveCursor};
pub(crate) use crate::sim::NodeRef;
use crate::sim::{Frontier, Sim};
use crate::SpannerMasker;

/// An interned frontier (index into `Online::frontiers`).
type FrontierId = u32;

/// "No stack survives": the memoised result of a step that kills every stack.
const DEAD: FrontierId = u32::MAX;

/// When the arena holds more nodes than this, the memos start over (small enough that starting
/// over costs little).
const MAX_ARENA: usize = 1 << 17;

/// Scratch space and memos of the online walks (kept in the mask cache).
pub(crate) struct Online {
    sim: Sim,
    frontiers: Vec<Frontier>,
    frontier_index: AHashMap<Frontier, FrontierId>,
    /// `(frontier, accepted set)` → the frontier after the lexeme.
    steps: AHashMap<(FrontierId, u32), FrontierId>,
    /// Per frontier, `2 * words` words: the terminals it is known to shift, then those it is
    /// known not to.
    known: Vec<u64>,
    words: usize,
    /// The walk's path: (end of the node's subtree, its frontier, whether the bare stack gets
    /// through it).
    stack: Vec<(u32, FrontierId, bool)>,
    /// The current walk skipped a span for its hint.
    partial: bool,
    /// Arena nodes and real nodes the stacks of the first mask after the last reset needed:
    /// the bounds above are counted past these, so a stack deeper than a bound is named once
    /// and kept (naming it again at every mask made each mask linear in the depth), and the
    /// memos still start over once they hold twice what the live stacks need.
    floor: Option<(usize, usize)>,
}

impl Online {
    /// The online state over `classes` (the masker's tables), with reach bitsets of `words`
    /// words.
    pub(crate) fn new(classes: &Arc<ClassTables>, words: usize) -> Self {
        Online {
            // The arena is bounded by `MAX_ARENA` between masks, and one walk adds at most a
            // few nodes per LR state per trie node.
            sim: Sim::new(classes.tables().state_len(), usize::MAX)
                .with_classes(Arc::clone(classes)),
            frontiers: Vec::new(),
            frontier_index: AHashMap::new(),
            steps: AHashMap::new(),
            known: Vec::new(),
            words,
            stack: Vec::new(),
            partial: false,
            floor: None,
        }
    }

    /// The simulator's ref of real node `n` (equal for nodes that stand for the same stacks).
    pub(crate) fn real(&mut self, n: &GssNode) -> NodeRef {
        self.sim.real(n)
    }

    /// Drops the memos when they have grown too large; returns whether it did (then refs
    /// from [`Online::real`] are stale).
    pub(crate) fn start_mask(&mut self) -> bool {
        let (nodes, reals) = *self
            .floor
            .get_or_insert((self.sim.mark(), self.sim.real_len()));
        if self.sim.mark() > MAX_ARENA + 2 * nodes
            || self.steps.len() > MAX_ARENA
            || self.frontiers.len() > MAX_ARENA / 4
            || self.sim.real_len() > MAX_ARENA / 4 + 2 * reals
        {
            self.floor = None;
            self.sim.reset();
            self.frontiers.clear();
            self.frontier_index.clear();
            self.steps.clear();
            self.known.clear();
            return true;
        }
        false
    }

    fn intern(&mut self, f: Frontier) -> FrontierId {
        if f.is_empty() {
            return DEAD;
        }
        let next = self.frontiers.len() as FrontierId;
        let id = *self.frontier_index.entry(f.clone()).or_insert(next);
        if id == next {
            self.frontiers.push(f);
            self.known.extend(std::iter::repeat_n(0, 2 * self.words));
        }
        id
    }

    /// Whether frontier `f` can shift some terminal of `reach` that is also in `possible`
    /// (lookahead bitsets), memoised per terminal.
    fn can_shift_any(
        &mut self,
        m: &SpannerMasker,
        f: FrontierId,
        reach: &[u64],
        possible: Option<&[u64]>,
    ) -> bool {
        let w = self.words;
        let base = f as usize * 2 * w;
        let yes = &self.known[base..base + w];
        if reach.iter().zip(yes).any(|(r, y)| r & y != 0) {
            return true;
        }
        for i in 0..w {
            let no_i = self.known[base + w + i];
            let mut open = reach[i] & !no_i & possible.map_or(u64::MAX, |p| p[i]);
            while open != 0 {
                let t = (i * 64) as u32 + open.trailing_zeros();
                open &= open - 1;
                let Online { sim, frontiers, .. } = self;
                // The arena has no budget online (see `Online::new`), so this never fails.
                let v = sim
                    .can_shift(m.lr.tables(), &frontiers[f as usize], t)
                    .unwrap_or(false);
                let slot = base + if v { 0 } else { w } + i;
                self.known[slot] |= 1 << (t % 64);
                if v {
                    return true;
                }
            }
        }
        false
    }

    /// The frontier after a lexeme with accepted set `acc` from frontier `f`, memoised.
    fn step(&mut self, m: &SpannerMasker, f: FrontierId, acc: u32) -> FrontierId {
        if let Some(&g) = self.steps.get(&(f, acc)) {
            return g;
        }
        let Online { sim, frontiers, .. } = self;
        let mark = sim.mark();
        let next =
            step(sim, m.lr.tables(), &m.taus, &frontiers[f as usize], acc).unwrap_or_default();
        let next = sim.canonicalize(mark, &next);
        let g = self.intern(next);
        self.steps.insert((f, acc), g);
        g
    }
}

impl SpannerMasker {
    /// Adds to `acc` the classes of point `q` that leave some stack of `node` live, beyond the
    /// always-accepted ones (which `acc` holds already).
    ///
    /// `hint` holds classes already allowed by other heads: spans whose classes are all there
    /// are not tested. Returns whether the walk was complete, that is `acc` holds every class
    /// of the head, none skipped for the hint.
    pub(crate) fn walk(
        &self,
        online: &mut Online,
        acc: &mut ClassSet,
        hint: &ClassSet,
        q: usize,
        node: &GssNode,
    ) -> bool {
        online.partial = false;
        let (lo, hi) = self.tries.roots[q];
        if lo == hi {
            return true;
        }
        let s = self.lr.state(node.state()).as_usize();
        let acts = &self.acts[s * self.act_words..(s + 1) * self.act_words];
        let has_action = |t: u32| acts[t as usize / 64] & (1 << (t % 64)) != 0;
        let real = online.sim.real(node);
        let root = online.intern(SmallVec::from_elem(real, 1));

        // Spans that stay in the current lexeme (or emit only ignored lexemes): the head's own
        // node decides.
        self.leaves(online, acc, hint, lo as usize, root, Some(acts));

        online.stack.clear();
        online.stack.push((hi, root, true));
        let mut cursor = AliveCursor::default();
        let mut i = lo + 1;
        while i < hi {
            let pn = self.tries.nodes[i as usize];
            while online.stack.last().is_some_and(|top| top.0 <= i) {
                online.stack.pop();
            }
            let &(_, parent, parent_alive) = online.stack.last().expect("the root stays");
            let a = &self.taus.accs[pn.acc as usize];
            if online.stack.len() == 1 && !a.skip && !a.terms.iter().any(|&t| has_action(t)) {
                i = pn.end;
                continue;
            }
            // Only below a node the bare stack gets through can a subtree be always accepted.
            let alive = parent_alive
                && match self.alive.get(s, pn.pre, &mut cursor) {
                    Some(true) => {
                        i = pn.end;
                        continue;
                    }
                    Some(false) => true,
                    None => false,
                };
            let frontier = online.step(self, parent, pn.acc);
            if frontier == DEAD {
                i = pn.end;
                continue;
            }
            self.leaves(online, acc, hint, i as usize, frontier, None);
            online.stack.push((pn.end, frontier, alive));
            i += 1;
        }
        online.stack.clear();
        !online.partial
    }

    /// Tests the spans ending at point-trie node `at` whose stacks are `frontier`; only the
    /// terminals of `possible` (a lookahead bitset) can be shifted there, if given.
    fn leaves(
        &self,
        online: &mut Online,
        acc: &mut ClassSet,
        hint: &ClassSet,
        at: usize,
        frontier: FrontierId,
        possible: Option<&[u64]>,
    ) {
        let pn = self.tries.nodes[at];
        for leaf in &self.tries.leaves[pn.leaf_lo as usize..pn.leaf_hi as usize] {
            if self.covered(leaf.class_lo, leaf.class_hi, acc) {
                continue;
            }
            if self.covered(leaf.class_lo, leaf.class_hi, hint) {
                online.partial = true;
                continue;
            }
            let reach = &self.taus.reaches[leaf.reach as usize];
            let live = reach.any || online.can_shift_any(self, frontier, &reach.bits, possible);
            if live {
                for &c in &self.tries.classes[leaf.class_lo as usize..leaf.class_hi as usize] {
                    acc.insert(c);
                }
            }
        }
    }

    /// Whether every class of `tries.classes[lo..hi]` is in `acc`.
    fn covered(&self, lo: u32, hi: u32, acc: &ClassSet) -> bool {
        self.tries.classes[lo as usize..hi as usize]
            .iter()
            .all(|&c| acc.contains(c))
    }
}
