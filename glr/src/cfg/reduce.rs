//! Pass 2: remove unproductive and unreachable symbols.
//!
//! A production that uses an `%ignore`d terminal is unproductive too: the lexer drops ignored
//! terminals before the parser (Lark's lexers do the same), so no text can ever complete it.
//! After this pass every production uses only productive nonterminals (each derives some
//! string of terminals that are not ignored), no ignored terminal, and every nonterminal with
//! productions is reachable from the start. When the
//! start itself is unproductive the language is empty and the CFG has no productions at all
//! ([`Cfg::is_empty_language`]). Nonterminal ids are kept (removed ones simply have no
//! productions), so diagnostics can still name every rule.

use super::{Cfg, Production, Symbol};

/// Removes unproductive symbols, then unreachable ones (in that order, which is the order that
/// leaves no useless symbol).
pub fn reduce(cfg: &Cfg) -> Cfg {
    reduce_ignoring(cfg, &[])
}

/// [`reduce`], where terminal `t` is unproductive when `ignored[t]` holds (ids past the end are
/// not ignored).
pub fn reduce_ignoring(cfg: &Cfg, ignored: &[bool]) -> Cfg {
    let usable = |t: &super::TerminalId| !ignored.get(t.as_usize()).copied().unwrap_or(false);
    let n = cfg.nonterminal_len();
    let productive = super::analysis::derives_all(cfg, usable);
    let keeps = |p: &Production| {
        productive[p.lhs.as_usize()]
            && p.rhs.iter().all(|s| match s {
                Symbol::Terminal(t) => usable(t),
                Symbol::Nonterminal(m) => productive[m.as_usize()],
            })
    };
    // Reachable from the start through kept productions (an explicit stack: no recursion).
    let mut reachable = vec![false; n];
    let mut stack = Vec::new();
    if productive[cfg.start().as_usize()] {
        reachable[cfg.start().as_usize()] = true;
        stack.push(cfg.start());
    }
    while let Some(a) = stack.pop() {
        for p in &cfg.productions()[cfg.productions_of(a)] {
            if !keeps(p) {
                continue;
            }
            for s in &p.rhs {
                if let Symbol::Nonterminal(m) = *s {
                    if !reachable[m.as_usize()] {
                        reachable[m.as_usize()] = true;
                        stack.push(m);
                    }
                }
            }
        }
    }
    let productions = cfg
        .productions()
        .iter()
        .filter(|p| reachable[p.lhs.as_usize()] && keeps(p))
        .cloned()
        .collect();
    Cfg::from_parts(
        cfg.terminal_names.clone(),
        cfg.nonterminals.clone(),
        productions,
        cfg.start(),
    )
}
