//! Conflicts as data: which state, which lookahead, which items compete, and a symbol prefix
//! that reaches the state; rendered for people by [`LrTables::render_conflict`].

use std::collections::VecDeque;
use std::fmt::Write;

use munch_lexer::TerminalId;

use super::lr0::{closure, Grammar0, Item};
use super::{Action, Lookahead, LrState, LrTables};
use crate::cfg::Symbol;

/// An LR(0) item `A -> α · β`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LrItem {
    /// Index into [`crate::cfg::Cfg::productions`]; one past the last is the augmented
    /// `S' -> S $`.
    pub production: usize,
    /// Dot position.
    pub dot: usize,
}

/// Several actions of the plain LALR(1) table on one (state, lookahead). The GLR parser
/// follows all of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The state.
    pub state: LrState,
    /// The lookahead.
    pub lookahead: Lookahead,
    /// The competing actions, sorted (shifts first).
    pub actions: Vec<Action>,
    /// The items behind them: those with the lookahead after the dot (shift) and the completed
    /// ones (reduce).
    pub items: Vec<LrItem>,
    /// A shortest symbol sequence that leads from the start state to `state`.
    pub prefix: Vec<Symbol>,
}

impl Conflict {
    /// `"shift/reduce"`, `"reduce/reduce"` or `"shift/reduce/reduce"` and so on.
    pub fn kind(&self) -> String {
        let mut parts: Vec<&str> = Vec::new();
        for a in &self.actions {
            parts.push(match a {
                Action::Shift(_) => "shift",
                Action::Reduce { .. } => "reduce",
                Action::Accept => "accept",
            });
        }
        parts.join("/")
    }
}

/// The conflicts of the plain LALR(1) table: right-nulled reductions (shorter than their
/// production) are left out.
pub(super) fn find(t: &LrTables, g: &Grammar0) -> Vec<Conflict> {
    let mut prefixes: Option<Vec<Option<(LrState, Symbol)>>> = None;
    let mut out = Vec::new();
    scan(t, g, |state, k, actions| {
        let s = state.as_usize();
        let kernel: Vec<Item> = t.kernels[s]
            .iter()
            .map(|i| Item {
                prod: i.production as u32,
                dot: i.dot as u32,
            })
            .collect();
        let mut items: Vec<LrItem> = closure(g, &kernel)
            .into_iter()
            .filter(|&it| match g.after_dot(it) {
                Some(sym) => sym == k,
                None => actions.iter().any(
                    |a| matches!(a, Action::Reduce { production, .. } if *production == it.prod),
                ),
            })
            .map(|it| LrItem {
                production: it.prod as usize,
                dot: it.dot as usize,
            })
            .collect();
        items.sort();
        let parents = prefixes.get_or_insert_with(|| shortest_paths(t));
        let mut prefix = Vec::new();
        let mut at = state;
        while let Some((from, sym)) = parents[at.as_usize()] {
            prefix.push(sym);
            at = from;
        }
        prefix.reverse();
        out.push(Conflict {
            state,
            lookahead: if k == t.terminal_len {
                Lookahead::Eof
            } else {
                Lookahead::Terminal(TerminalId::from_usize(k as usize))
            },
            actions,
            items,
            prefix,
        });
    });
    out
}

/// The number of conflicts [`find`] lists, without their items and prefixes.
pub(super) fn count(t: &LrTables, g: &Grammar0) -> usize {
    let mut n = 0;
    scan(t, g, |_, _, _| n += 1);
    n
}

/// Calls `found(state, lookahead, actions)` for each conflict, in order.
fn scan(t: &LrTables, g: &Grammar0, mut found: impl FnMut(LrState, u32, Vec<Action>)) {
    for s in 0..t.state_len() {
        let state = LrState(s as u32);
        let full = |a: &Action| match *a {
            Action::Reduce {
                production, len, ..
            } => g.rhs[production as usize].len() == len as usize,
            _ => true,
        };
        let full_reductions = t.state_reductions(state).filter(|(a, _)| full(a)).count();
        // Without two full reductions, a conflict needs a shift or accept: only their
        // lookaheads are candidates (a reduction's set may hold thousands).
        let candidates: Vec<u32> = if full_reductions >= 2 {
            t.state_lookaheads(state).collect()
        } else if full_reductions == 1 {
            let mut ks: Vec<u32> = t.state_shifts(state).map(|(k, _)| k).collect();
            if t.is_accepting(state) {
                ks.push(t.terminal_len);
            }
            ks
        } else {
            Vec::new()
        };
        for k in candidates {
            let actions: Vec<Action> = t.actions_at(state, k).copied().filter(full).collect();
            if actions.len() >= 2 {
                found(state, k, actions);
            }
        }
    }
}

/// Breadth-first parents: for each state, the state and symbol it is first reached from.
fn shortest_paths(t: &LrTables) -> Vec<Option<(LrState, Symbol)>> {
    let mut parent = vec![None; t.state_len()];
    let mut seen = vec![false; t.state_len()];
    seen[0] = true;
    let mut queue = VecDeque::from([LrState::START]);
    while let Some(s) = queue.pop_front() {
        let mut next: Vec<(Symbol, LrState)> = Vec::new();
        for (k, a) in t.state_shifts(s) {
            if let Action::Shift(to) = a {
                next.push((Symbol::Terminal(TerminalId::from_usize(k as usize)), to));
            }
        }
        for (n, to) in t.state_gotos(s) {
            next.push((Symbol::Nonterminal(n), to));
        }
        for (sym, to) in next {
            if !seen[to.as_usize()] {
                seen[to.as_usize()] = true;
                parent[to.as_usize()] = Some((s, sym));
                queue.push_back(to);
            }
        }
    }
    parent
}

impl LrTables {
    /// Renders an item as `A -> α · β`.
    pub fn render_item(&self, item: LrItem) -> String {
        let cfg = self.cfg();
        let (lhs, rhs): (&str, Vec<&str>) = if item.production == cfg.productions().len() {
            (
                "S'",
                vec![cfg.symbol_name(Symbol::Nonterminal(cfg.start())), "$"],
            )
        } else {
            let p = &cfg.productions()[item.production];
            (
                &cfg.nonterminal(p.lhs).name,
                p.rhs.iter().map(|&s| cfg.symbol_name(s)).collect(),
            )
        };
        let mut s = format!("{lhs} ->");
        for (i, sym) in rhs.iter().enumerate() {
            if i == item.dot {
                s.push_str(" ·");
            }
            s.push(' ');
            s.push_str(sym);
        }
        if item.dot >= rhs.len() {
            s.push_str(" ·");
        }
        s
    }

    fn lookahead_name(&self, l: Lookahead) -> &str {
        match l {
            Lookahead::Terminal(t) => self.cfg().terminal_name(t),
            Lookahead::Eof => "$",
        }
    }

    /// Renders a conflict: state, lookahead, kind, an example prefix and the competing items.
    ///
    /// ```text
    /// state 5 on `+`: shift/reduce
    ///   after: e + e
    ///   e -> e · + e    shift to state 3
    ///   e -> e + e ·    reduce
    /// ```
    pub fn render_conflict(&self, c: &Conflict) -> String {
        let mut s = String::new();
        let la = self.lookahead_name(c.lookahead);
        let _ = writeln!(s, "state {} on `{la}`: {}", c.state, c.kind());
        let prefix: Vec<&str> = c
            .prefix
            .iter()
            .map(|&x| self.cfg().symbol_name(x))
            .collect();
        let _ = writeln!(s, "  after: {}", prefix.join(" "));
        let rendered: Vec<String> = c.items.iter().map(|&i| self.render_item(i)).collect();
        let width = rendered
            .iter()
            .map(|r| r.chars().count())
            .max()
            .unwrap_or(0);
        for (item, text) in c.items.iter().zip(&rendered) {
            let what = match c.actions.iter().find(|a| match a {
                Action::Reduce { production, .. } => {
                    *production as usize == item.production
                        && self.production_len(item.production) == item.dot
                }
                _ => false,
            }) {
                Some(_) => "reduce".to_string(),
                None => match c.actions.iter().find(|a| matches!(a, Action::Shift(_))) {
                    Some(Action::Shift(to)) => format!("shift to state {to}"),
                    _ => "accept".to_string(),
                },
            };
            let pad = width - text.chars().count();
            let _ = writeln!(s, "  {text}{:pad$}    {what}", "");
        }
        s
    }

    /// All conflicts rendered, separated by blank lines.
    pub fn render_conflicts(&self) -> String {
        self.conflicts()
            .iter()
            .map(|c| self.render_conflict(c))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn production_len(&self, p: usize) -> usize {
        self.cfg()
            .productions()
            .get(p)
            .map_or(2, |prod| prod.rhs.len())
    }
}
