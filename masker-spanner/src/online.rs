//! Mask-time checks of context-dependent terminal spans against the real GSS.
//!
//! A span that depends on what lies below a head's top is run on the head's real stacks with
//! the parser's own speculative shifts ([`Parser::shift_frontier`], [`Parser::can_shift`]), the
//! same operations a commit performs, so the answer is the ground truth. Frontiers are memoised
//! per (head node, trie node of the span's emitted lexemes) and answers per (head node, span),
//! for one mask: GSS node ids are unique for the process, so the keys never collide.

use ahash::AHashMap;
use munch_glr::gss::{GssNode, GssNodeId};
use munch_glr::parser::{Parser, ShiftCache};
use munch_lexer::TerminalId;
use smallvec::SmallVec;

use crate::tau::Taus;

type Nodes = SmallVec<[GssNode; 2]>;

/// Per-mask memo tables of the online checks (kept in the mask cache; cleared per mask).
#[derive(Default)]
pub(crate) struct Online {
    shift: ShiftCache,
    /// `(head, trie node)` → index into `frontiers` (an empty frontier: no stack survives).
    frontier_of: AHashMap<(GssNodeId, u32), u32>,
    frontiers: Vec<Nodes>,
    /// `(head, span)` → accepted.
    answers: AHashMap<(GssNodeId, u32), bool>,
    /// Spans checked against a real stack since the cache was made (a statistic).
    pub checks: u64,
}

impl Online {
    /// Forgets the per-mask memos (the shift memo is kept while small: node ids never repeat).
    pub(crate) fn start_mask(&mut self) {
        self.frontier_of.clear();
        self.frontiers.clear();
        self.answers.clear();
        if self.shift.len() > 1 << 16 {
            self.shift.clear();
        }
    }

    /// Whether terminal span `tau` leaves some stack of `head` live.
    pub(crate) fn accepts(
        &mut self,
        parser: &Parser,
        taus: &Taus,
        head: &GssNode,
        tau: u32,
    ) -> bool {
        let key = (head.id(), tau);
        if let Some(&v) = self.answers.get(&key) {
            return v;
        }
        self.checks += 1;
        let t = taus.taus[tau as usize];
        let f = self.frontier(parser, taus, head, t.node);
        let frontier = &self.frontiers[f as usize];
        let reach = &taus.reaches[t.reach as usize];
        let v = !frontier.is_empty()
            && (reach.any
                || reach.terms.iter().any(|&k| {
                    frontier
                        .iter()
                        .any(|n| parser.can_shift(n, TerminalId::from(k), &mut self.shift))
                }));
        self.answers.insert(key, v);
        v
    }

    /// The frontier after the emitted lexemes of trie node `node`, from `head`.
    fn frontier(&mut self, parser: &Parser, taus: &Taus, head: &GssNode, node: u32) -> u32 {
        let id = head.id();
        // The path from the deepest memoised ancestor (or the root) down to `node`.
        let mut path: SmallVec<[u32; 8]> = SmallVec::new();
        let mut n = node;
        let mut f = loop {
            if let Some(&f) = self.frontier_of.get(&(id, n)) {
                break f;
            }
            if n == 0 {
                self.frontiers.push(SmallVec::from_elem(head.clone(), 1));
                let f = (self.frontiers.len() - 1) as u32;
                self.frontier_of.insert((id, 0), f);
                break f;
            }
            path.push(n);
            n = taus.nodes[n as usize].parent;
        };
        while let Some(n) = path.pop() {
            let from = &self.frontiers[f as usize];
            let acc = &taus.accs[taus.nodes[n as usize].acc as usize];
            let mut next: Nodes = SmallVec::new();
            if !from.is_empty() {
                if acc.skip {
                    next.extend(from.iter().cloned());
                }
                for &k in acc.terms.iter() {
                    // A budget error means a commit would refuse the token too: no stack.
                    if let Ok(nodes) = parser.shift_frontier(from, TerminalId::from(k)) {
                        for m in nodes {
                            if !next.iter().any(|x| x.id() == m.id()) {
                                next.push(m);
                            }
                        }
                    }
                }
            }
            self.frontiers.push(next);
            f = (self.frontiers.len() - 1) as u32;
            self.frontier_of.insert((id, n), f);
        }
        f
    }
}
