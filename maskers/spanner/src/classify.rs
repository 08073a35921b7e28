//! Per LR state, which terminal spans every stack accepts.
//!
//! For LR state `s`, one depth-first walk of the terminal-span trie carries the frontier of the
//! bare stack `s` (see [`Sim`]): a span the bare stack takes is taken by every real stack with
//! top `s`, whatever lies below. The walk stops wherever the bare frontier dies (the span is
//! rejected, or needs what lies below: the real stack decides at mask time).
//!
//! The result, per state: the always-accepted spans, and the trie nodes the bare stack gets
//! through, each marked when its whole subtree is always accepted (the online walk skips those,
//! and looks for them only below nodes the bare stack got through).

use munch_glr::lr::{LrState, LrTables};

use crate::sim::{Frontier, NodeRef, Sim, SimBudget};
use crate::tau::Taus;

/// What the classification found for one LR state.
#[derive(Debug, Default)]
pub(crate) struct StateClasses {
    /// Terminal spans accepted by the bare stack, ascending.
    pub always: Vec<u32>,
    /// Trie nodes (never the root) the bare stack gets through, ascending, each with whether
    /// every span below it is accepted by the bare stack.
    pub alive: Vec<(u32, bool)>,
}

impl StateClasses {
    pub(crate) fn heap_bytes(&self) -> usize {
        self.always.capacity() * 4 + self.alive.capacity() * 8
    }
}

struct Frame {
    node: u32,
    frontier: Frontier,
    next_child: usize,
    mark: usize,
    /// Every span below is accepted so far.
    all: bool,
}

/// Classifies the terminal spans of `taus` on the bare stack `s`.
pub(crate) fn classify_state(
    sim: &mut Sim,
    tables: &LrTables,
    taus: &Taus,
    s: LrState,
    memo: &mut ShiftMemo,
    out: &mut StateClasses,
) -> Result<(), SimBudget> {
    out.always.clear();
    out.alive.clear();
    let base = sim.mark();
    let frontier = sim.bare(s);
    let mut root = Frame {
        node: 0,
        frontier,
        next_child: 0,
        mark: base,
        all: true,
    };
    root.all = leaves(sim, tables, taus, &root, memo, out)?;
    let mut stack = vec![root];
    while let Some(top) = stack.last_mut() {
        let children = &taus.nodes[top.node as usize].children;
        if top.next_child == children.len() {
            let done = stack.pop().expect("not empty");
            sim.truncate(done.mark);
            if let Some(parent) = stack.last_mut() {
                parent.all &= done.all;
                out.alive.push((done.node, done.all));
            }
            continue;
        }
        let (acc, child) = children[top.next_child];
        top.next_child += 1;
        let parent_frontier = top.frontier.clone();
        let mark = sim.mark();
        let frontier = step(sim, tables, taus, &parent_frontier, acc)?;
        if frontier.is_empty() {
            sim.truncate(mark);
            stack.last_mut().expect("not empty").all = false;
            continue;
        }
        let mut frame = Frame {
            node: child,
            frontier,
            next_child: 0,
            mark,
            all: true,
        };
        frame.all = leaves(sim, tables, taus, &frame, memo, out)?;
        stack.push(frame);
    }
    out.always.sort_unstable();
    out.alive.sort_unstable();
    Ok(())
}

/// The frontier after one emitted lexeme with accepted set `acc`.
pub(crate) fn step(
    sim: &mut Sim,
    tables: &LrTables,
    taus: &Taus,
    frontier: &[NodeRef],
    acc: u32,
) -> Result<Frontier, SimBudget> {
    let a = &taus.accs[acc as usize];
    let mut out: Frontier = if a.skip {
        frontier.iter().copied().collect()
    } else {
        Frontier::new()
    };
    for &t in a.terms.iter() {
        for n in sim.shift(tables, frontier, t)? {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    Ok(out)
}

/// Per-terminal answers of `can_shift` at one frontier: 0 unknown, 1 no, 2 yes.
pub(crate) struct ShiftMemo {
    answers: Vec<u8>,
    touched: Vec<u32>,
}

impl ShiftMemo {
    pub(crate) fn heap_bytes(&self) -> usize {
        self.answers.capacity() + self.touched.capacity() * 4
    }

    pub(crate) fn new(lookaheads: usize) -> Self {
        ShiftMemo {
            answers: vec![0; lookaheads],
            touched: Vec::new(),
        }
    }

    pub(crate) fn reset(&mut self) {
        for &t in &self.touched {
            self.answers[t as usize] = 0;
        }
        self.touched.clear();
    }

    /// Whether `frontier` can shift `t`, memoised until the next reset.
    pub(crate) fn can_shift(
        &mut self,
        sim: &mut Sim,
        tables: &LrTables,
        frontier: &[NodeRef],
        t: u32,
    ) -> Result<bool, SimBudget> {
        match self.answers[t as usize] {
            1 => Ok(false),
            2 => Ok(true),
            _ => {
                let yes = sim.can_shift(tables, frontier, t)?;
                self.answers[t as usize] = if yes { 2 } else { 1 };
                self.touched.push(t);
                Ok(yes)
            }
        }
    }
}

/// Records the spans ending at `frame`'s trie node that the bare stack accepts; returns whether
/// all of them are.
fn leaves(
    sim: &mut Sim,
    tables: &LrTables,
    taus: &Taus,
    frame: &Frame,
    memo: &mut ShiftMemo,
    out: &mut StateClasses,
) -> Result<bool, SimBudget> {
    memo.reset();
    let mut all = true;
    for &(reach, tau) in &taus.nodes[frame.node as usize].leaves {
        let r = &taus.reaches[reach as usize];
        let mut yes = r.any;
        if !yes {
            for &t in r.terms.iter() {
                if memo.can_shift(sim, tables, &frame.frontier, t)? {
                    yes = true;
                    break;
                }
            }
        }
        if yes {
            out.always.push(tau);
        } else {
            all = false;
        }
    }
    Ok(all)
}

/// Per (LR state, trie node), for the nodes the bare stack gets through: whether every span
/// below is always accepted. Nodes are named by their preorder number in the global trie. The
/// root's children (every walk asks about them) are bitsets per state; deeper nodes (asked
/// about only below such nodes, in preorder) are one sorted list per state, read with a cursor
/// that only moves forward during a walk: a hash map of every (state, node) pair missed the
/// cache on most lookups.
pub(crate) struct Alive {
    /// Per preorder number: its index among the root's children, or `u32::MAX`.
    first: Vec<u32>,
    words: usize,
    /// Per LR state, `2 * words` words: alive bits, then all-always bits.
    bits: Vec<u64>,
    /// Per LR state `s`, `deep[deep_start[s]..deep_start[s + 1]]`: the deeper alive nodes'
    /// preorder numbers, ascending, with [`ALL`] set when every span below is accepted.
    deep_start: Vec<u32>,
    deep: Vec<u32>,
}

/// The all-always flag of an entry of [`Alive::deep`] (preorder numbers stay below it).
const ALL: u32 = 1 << 31;

/// A walk's place in one state's list of [`Alive`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct AliveCursor(usize);

impl Alive {
    /// For the trie of `taus` numbered by `pre` (preorder numbers, below 2³¹).
    pub(crate) fn new(taus: &Taus, pre: &[u32]) -> Self {
        let mut first = vec![u32::MAX; taus.nodes.len()];
        let children = &taus.nodes[0].children;
        for (i, &(_, c)) in children.iter().enumerate() {
            first[pre[c as usize] as usize] = i as u32;
        }
        let words = children.len().div_ceil(64);
        Alive {
            first,
            words,
            bits: Vec::new(),
            deep_start: vec![0],
            deep: Vec::new(),
        }
    }

    /// Records the classification of the next state (states are added in order).
    pub(crate) fn push(&mut self, classes: &StateClasses, pre: &[u32]) {
        let base = self.bits.len();
        self.bits.resize(base + 2 * self.words, 0);
        let lo = self.deep.len();
        for &(x, all) in &classes.alive {
            let p = pre[x as usize];
            match self.first[p as usize] {
                u32::MAX => {
                    debug_assert!(p < ALL);
                    self.deep.push(p | if all { ALL } else { 0 });
                }
                i => {
                    let at = base + i as usize / 64;
                    self.bits[at] |= 1 << (i % 64);
                    if all {
                        self.bits[at + self.words] |= 1 << (i % 64);
                    }
                }
            }
        }
        self.deep[lo..].sort_unstable_by_key(|&e| e & !ALL);
        self.deep_start.push(self.deep.len() as u32);
    }

    /// Whether the bare stack `s` gets through the node with preorder number `p`, and if so
    /// whether every span below is accepted. Within one walk (one `cursor`, one `s`), deeper
    /// nodes must be asked about in ascending preorder.
    #[inline]
    pub(crate) fn get(&self, s: usize, p: u32, cursor: &mut AliveCursor) -> Option<bool> {
        match self.first[p as usize] {
            u32::MAX => {
                let list = &self.deep[self.deep_start[s] as usize..self.deep_start[s + 1] as usize];
                // Gallop forward from the cursor to the first entry at or past `p`.
                let mut lo = cursor.0;
                let mut step = 1;
                let mut hi = lo;
                while hi < list.len() && list[hi] & !ALL < p {
                    lo = hi + 1;
                    hi += step;
                    step *= 2;
                }
                let hi = hi.min(list.len());
                let at = lo + list[lo..hi].partition_point(|&e| e & !ALL < p);
                cursor.0 = at;
                (at < list.len() && list[at] & !ALL == p).then(|| list[at] & ALL != 0)
            }
            i => {
                let base = s * 2 * self.words + i as usize / 64;
                let bit = 1u64 << (i % 64);
                (self.bits[base] & bit != 0).then(|| self.bits[base + self.words] & bit != 0)
            }
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.first.capacity() * 4
            + self.bits.capacity() * 8
            + self.deep_start.capacity() * 4
            + self.deep.capacity() * 4
    }
}
