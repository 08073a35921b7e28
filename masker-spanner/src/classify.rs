//! Per LR state, which terminal spans every stack accepts, which none does, and which depend on
//! what lies below the top.
//!
//! For LR state `s`, one depth-first walk of the terminal-span trie carries two frontiers of
//! the [`Sim`]ulator: the *bare* stack `s` and the *virtual* one (every automaton path below
//! `s`). A span is
//!
//! - [`Class::Always`] when the bare stack takes it: every real stack with top `s` does too;
//! - never (left out) when the virtual stack rejects it: so does every real stack;
//! - [`Class::Depends`] otherwise: the real stack decides at mask time.
//!
//! A subtree is cut as soon as the virtual frontier is empty.

use munch_glr::lr::LrState;

use crate::sim::{Frontier, NodeRef, Sim, SimBudget};
use crate::tau::Taus;

/// How a terminal span fares on the stacks whose top is one LR state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Class {
    /// Accepted whatever lies below.
    Always,
    /// Accepted on some stacks only: checked against the real stack.
    Depends,
}

struct Frame {
    node: u32,
    exact: Frontier,
    approx: Frontier,
    next_child: usize,
    mark: usize,
}

/// Per-terminal answers of the R checks at one trie node: 0 unknown, 1 no, 2 yes.
struct ShiftMemo {
    exact: Vec<u8>,
    approx: Vec<u8>,
    touched: Vec<u32>,
}

impl ShiftMemo {
    fn reset(&mut self) {
        for &t in &self.touched {
            self.exact[t as usize] = 0;
            self.approx[t as usize] = 0;
        }
        self.touched.clear();
    }
}

/// Classifies every terminal span of `taus` on stacks with top `s`; appends `(span, class)` to
/// `out` for the spans some stack accepts.
pub(crate) fn classify_state(
    sim: &mut Sim<'_>,
    taus: &Taus,
    s: LrState,
    lookaheads: usize,
    out: &mut Vec<(u32, Class)>,
) -> Result<(), SimBudget> {
    let base = sim.mark();
    let exact = sim.bare(s);
    let approx = Sim::virtual_top(s);
    let mut memo = ShiftMemo {
        exact: vec![0; lookaheads],
        approx: vec![0; lookaheads],
        touched: Vec::new(),
    };
    let mut stack = vec![Frame {
        node: 0,
        exact,
        approx,
        next_child: 0,
        mark: base,
    }];
    leaves(sim, taus, &stack[0], &mut memo, out)?;
    while let Some(top) = stack.last_mut() {
        let children = &taus.nodes[top.node as usize].children;
        if top.next_child == children.len() {
            let mark = top.mark;
            stack.pop();
            sim.truncate(mark);
            continue;
        }
        let (acc, child) = children[top.next_child];
        top.next_child += 1;
        let mark = sim.mark();
        let approx = step(sim, taus, &top.approx.clone(), acc)?;
        if approx.is_empty() {
            sim.truncate(mark);
            continue;
        }
        let top = stack.last().expect("still on the stack");
        let exact = if top.exact.is_empty() {
            Frontier::new()
        } else {
            step(sim, taus, &top.exact.clone(), acc)?
        };
        let frame = Frame {
            node: child,
            exact,
            approx,
            next_child: 0,
            mark,
        };
        leaves(sim, taus, &frame, &mut memo, out)?;
        stack.push(frame);
    }
    sim.truncate(base);
    Ok(())
}

/// The frontier after one emitted lexeme with accepted set `acc`.
fn step(
    sim: &mut Sim<'_>,
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
        for n in sim.shift(frontier, t)? {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    Ok(out)
}

/// Classifies the spans ending at `frame`'s trie node.
fn leaves(
    sim: &mut Sim<'_>,
    taus: &Taus,
    frame: &Frame,
    memo: &mut ShiftMemo,
    out: &mut Vec<(u32, Class)>,
) -> Result<(), SimBudget> {
    memo.reset();
    for &(reach, tau) in &taus.nodes[frame.node as usize].leaves {
        let r = &taus.reaches[reach as usize];
        let class = if r.any {
            Some(if frame.exact.is_empty() {
                Class::Depends
            } else {
                Class::Always
            })
        } else {
            let mut class = None;
            if !frame.exact.is_empty() {
                for &t in r.terms.iter() {
                    if check(sim, &frame.exact, t, &mut memo.exact, &mut memo.touched)? {
                        class = Some(Class::Always);
                        break;
                    }
                }
            }
            if class.is_none() {
                for &t in r.terms.iter() {
                    if check(sim, &frame.approx, t, &mut memo.approx, &mut memo.touched)? {
                        class = Some(Class::Depends);
                        break;
                    }
                }
            }
            class
        };
        if let Some(class) = class {
            out.push((tau, class));
        }
    }
    Ok(())
}

fn check(
    sim: &mut Sim<'_>,
    frontier: &[NodeRef],
    t: u32,
    memo: &mut [u8],
    touched: &mut Vec<u32>,
) -> Result<bool, SimBudget> {
    match memo[t as usize] {
        1 => Ok(false),
        2 => Ok(true),
        _ => {
            let yes = sim.can_shift(frontier, t)?;
            memo[t as usize] = if yes { 2 } else { 1 };
            touched.push(t);
            Ok(yes)
        }
    }
}
