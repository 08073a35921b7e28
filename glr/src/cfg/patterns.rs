//! Check after normalisation: every terminal the reduced CFG uses has a pattern.
//!
//! A terminal without one (a `%declare`d terminal such as Python's `_INDENT`, or a regex with
//! look-around) can never come out of munch's lexer, so a parser built anyway would reject texts
//! the grammar accepts. The check refuses such grammars with the terminals named; terminals the
//! reduced grammar does not use are harmless and pass.

use std::fmt;

use munch_lexer::TerminalId;

use super::{Cfg, Symbol};
use crate::grammar::{Grammar, NoPattern};

/// Terminals used by reachable rules that have no pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingPatterns {
    /// Each terminal, its name and why it has no pattern, in id order.
    pub terminals: Vec<(TerminalId, String, NoPattern)>,
}

impl fmt::Display for MissingPatterns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the grammar uses terminals munch's lexer cannot produce:"
        )?;
        for (_, name, why) in &self.terminals {
            match why {
                NoPattern::Declared => write!(
                    f,
                    " `{name}` is %declare'd (made outside the lexer: Python's \
                     `_INDENT`/`_DEDENT` come from the indentation-aware post-lexer, postlex = python);"
                )?,
                NoPattern::Unsupported(what) => write!(
                    f,
                    " `{name}` uses {what}, which a DFA lexer cannot express;"
                )?,
            }
        }
        Ok(())
    }
}

impl std::error::Error for MissingPatterns {}

/// Checks that every terminal used by `cfg` (normalised from `grammar`) has a pattern.
/// Terminals for which `made_elsewhere` holds (a post-lexer's `_INDENT`) pass.
pub fn check(
    grammar: &Grammar,
    cfg: &Cfg,
    made_elsewhere: impl Fn(TerminalId) -> bool,
) -> Result<(), MissingPatterns> {
    let mut used = vec![false; grammar.terminals.len()];
    for p in cfg.productions() {
        for s in &p.rhs {
            if let Symbol::Terminal(t) = *s {
                used[t.as_usize()] = true;
            }
        }
    }
    let terminals: Vec<_> = grammar
        .terminals_without_pattern()
        .filter(|(t, _)| used[t.as_usize()] && !made_elsewhere(*t))
        .map(|(t, why)| (t, grammar.terminal(t).name.clone(), why.clone()))
        .collect();
    if terminals.is_empty() {
        Ok(())
    } else {
        Err(MissingPatterns { terminals })
    }
}
