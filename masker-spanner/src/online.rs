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
//! - subtrees whose classes are all allowed already (by another head or another span);
//! - subtrees where no real stack survives the lexeme.
//!
//! At a node, each span ending there is tested: the open lexeme must complete an ignored
//! terminal or one the frontier can shift. At the root the frontier is the head's own node and
//! the parser's memoised [`Parser::can_shift`] answers (the memo outlives the mask: a head's
//! node often stays while its lexeme grows).

use munch_glr::gss::GssNode;
use munch_glr::parser::{Parser, ShiftCache};
use munch_lexer::spans::ClassSet;
use munch_lexer::TerminalId;
use smallvec::SmallVec;

use crate::classify::{step, ShiftMemo};
use crate::sim::{Frontier, Sim};
use crate::SpannerMasker;

/// Scratch space of the online walks (kept in the mask cache).
pub(crate) struct Online {
    sim: Sim,
    memo: ShiftMemo,
    shift: ShiftCache,
    stack: Vec<(u32, Frontier, usize)>,
    /// Spans tested against a real stack (a statistic).
    pub tests: u64,
    pub dbg_nodes: u64,
    pub dbg_steps: u64,
    pub dbg_covered: u64,
}

impl Online {
    pub(crate) fn new(lr_states: usize, lookaheads: usize) -> Self {
        Online {
            // The arena holds one frontier per trie level, each at most two nodes per LR
            // state: it is bounded by the walk itself.
            sim: Sim::new(lr_states, usize::MAX),
            memo: ShiftMemo::new(lookaheads),
            shift: ShiftCache::new(),
            stack: Vec::new(),
            tests: 0,
            dbg_nodes: 0,
            dbg_steps: 0,
            dbg_covered: 0,
        }
    }

    pub(crate) fn sim_closures(&self) -> u64 {
        self.sim.closures
    }

    /// Forgets the previous mask's real nodes (the shift memo is kept while small: node ids are
    /// never reused).
    pub(crate) fn start_mask(&mut self) {
        self.sim.reset();
        if self.shift.len() > 1 << 16 {
            self.shift.clear();
        }
    }
}

impl SpannerMasker {
    /// Adds to `acc` the classes of point `q` that leave some stack of `node` live, beyond the
    /// always-accepted ones.
    pub(crate) fn walk(&self, online: &mut Online, acc: &mut ClassSet, q: usize, node: &GssNode) {
        let (lo, hi) = self.tries.roots[q];
        if lo == hi {
            return;
        }
        let s = node.state().as_usize();
        let acts = &self.acts[s * self.act_words..(s + 1) * self.act_words];
        let has_action = |t: u32| acts[t as usize / 64] & (1 << (t % 64)) != 0;
        let classes = &self.state_classes[s];
        let tables = self.parser.tables();
        let base = online.sim.mark();
        let root: Frontier = SmallVec::from_elem(online.sim.real(node), 1);

        // Spans that stay in the current lexeme (or emit only ignored lexemes): the head's own
        // node decides.
        let parser: &Parser = &self.parser;
        self.leaves(online, acc, lo as usize, &root, |online, t| {
            has_action(t) && parser.can_shift(node, TerminalId::from(t), &mut online.shift)
        });

        online.stack.clear();
        online.stack.push((hi, root, base));
        let mut i = lo + 1;
        while i < hi {
            let pn = self.tries.nodes[i as usize];
            online.dbg_nodes += 1;
            while online.stack.last().is_some_and(|top| top.0 <= i) {
                let (_, _, mark) = online.stack.pop().expect("checked");
                online.sim.truncate(mark);
            }
            let first_level = online.stack.len() == 1;
            if classes.always_nodes.binary_search(&pn.global).is_ok() {
                i = pn.end;
                continue;
            }
            let acc_id = self.taus.nodes[pn.global as usize].acc;
            let a = &self.taus.accs[acc_id as usize];
            if first_level && !a.skip && !a.terms.iter().any(|&t| has_action(t)) {
                i = pn.end;
                continue;
            }
            online.dbg_covered += (pn.class_hi - pn.class_lo) as u64;
            if self.covered(pn.class_lo, pn.class_hi, acc) {
                i = pn.end;
                continue;
            }
            online.dbg_steps += 1;
            let mark = online.sim.mark();
            let parent = online.stack.last().expect("the root stays").1.clone();
            // The arena has no budget online (see `Online::new`), so this never fails.
            let frontier =
                step(&mut online.sim, tables, &self.taus, &parent, acc_id).unwrap_or_default();
            if frontier.is_empty() {
                online.sim.truncate(mark);
                i = pn.end;
                continue;
            }
            self.leaves(online, acc, i as usize, &frontier, |online, t| {
                let Online { sim, memo, .. } = online;
                memo.can_shift(sim, tables, &frontier, t).unwrap_or(false)
            });
            online.memo.reset();
            online.stack.push((pn.end, frontier, mark));
            i += 1;
        }
        online.stack.clear();
        online.sim.truncate(base);
    }

    /// Tests the spans ending at point-trie node `at` whose stacks are `frontier`;
    /// `shiftable(t)` answers whether the frontier can shift terminal `t`.
    fn leaves(
        &self,
        online: &mut Online,
        acc: &mut ClassSet,
        at: usize,
        frontier: &Frontier,
        mut shiftable: impl FnMut(&mut Online, u32) -> bool,
    ) {
        let pn = self.tries.nodes[at];
        debug_assert!(!frontier.is_empty());
        for leaf in &self.tries.leaves[pn.leaf_lo as usize..pn.leaf_hi as usize] {
            if self.covered(leaf.class_lo, leaf.class_hi, acc) {
                continue;
            }
            online.tests += 1;
            let reach = &self.taus.reaches[self.taus.taus[leaf.tau as usize].reach as usize];
            let live = reach.any || reach.terms.iter().any(|&t| shiftable(online, t));
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
