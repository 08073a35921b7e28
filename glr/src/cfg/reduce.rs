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
    // Productive: fixpoint over "every nonterminal of the rhs is productive".
    let mut productive = vec![false; n];
    let mut changed = true;
    while changed {
        changed = false;
        for p in cfg.productions() {
            if !productive[p.lhs.as_usize()]
                && p.rhs.iter().all(|s| match s {
                    Symbol::Terminal(t) => usable(t),
                    Symbol::Nonterminal(m) => productive[m.as_usize()],
                })
            {
                productive[p.lhs.as_usize()] = true;
                changed = true;
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::{dsl, lower, NormalizeConfig};

    fn reduced(src: &str) -> Cfg {
        let g = dsl::parse(src).unwrap();
        reduce(&lower::lower(&g, &NormalizeConfig::default()).unwrap())
    }

    #[test]
    fn drops_unproductive_then_unreachable() {
        // `b` is unproductive (only recursion); `c` is reachable only through `b`.
        let cfg = reduced("s -> 'x' | b\nb -> b c\nc -> 'y'\nd -> 'z'");
        assert_eq!(cfg.to_string(), "s -> x\n");
        assert!(!cfg.is_empty_language());
    }

    #[test]
    fn empty_language() {
        let cfg = reduced("s -> s 'x'");
        assert!(cfg.is_empty_language());
        assert_eq!(cfg.productions().len(), 0);
    }

    #[test]
    fn keeps_everything_useful() {
        let src = "s -> a s | ε\na -> 'x' | 'y' a";
        let before = lower::lower(&dsl::parse(src).unwrap(), &NormalizeConfig::default()).unwrap();
        assert_eq!(reduced(src).to_string(), before.to_string());
    }

    #[test]
    fn productions_using_an_ignored_terminal_are_unproductive() {
        // `b` needs `z`, which is ignored: `s -> x b` can never complete, `b` goes with it.
        let src = "s -> 'x' b | 'y'\nb -> 'z'";
        let lowered = lower::lower(&dsl::parse(src).unwrap(), &NormalizeConfig::default()).unwrap();
        let ignored: Vec<bool> = (0..lowered.terminal_len())
            .map(|t| lowered.terminal_name(super::super::TerminalId::from_usize(t)) == "z")
            .collect();
        assert!(ignored.iter().any(|&i| i), "the DSL names the terminal `z`");
        assert_eq!(reduce_ignoring(&lowered, &ignored).to_string(), "s -> y\n");
        assert_eq!(reduce(&lowered).productions().len(), 3);
    }
}
