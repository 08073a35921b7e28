//! Lexers for tests: terminal specs as Lark writes them, and the lexer of a list of them.
//!
//! A test's terminals are part of the test, so these panic when a pattern does not parse or
//! the lexer does not build.

use munch_lexer::dfa::{Lexer, LexerConfig, TerminalSpec};
use regex_syntax::hir::Hir;

/// A literal terminal (`"x"` in Lark), of priority 0 and not ignored.
pub fn lit(name: &str, text: &str) -> TerminalSpec {
    TerminalSpec {
        name: name.to_string(),
        hir: Some(Hir::literal(text.as_bytes())),
        is_literal: true,
        priority: 0,
        ignored: false,
    }
}

/// A regex terminal (`/x/` in Lark), of priority 0 and not ignored.
///
/// # Panics
/// When `pattern` does not parse.
pub fn re(name: &str, pattern: &str) -> TerminalSpec {
    TerminalSpec {
        name: name.to_string(),
        hir: Some(regex_syntax::parse(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"))),
        is_literal: false,
        priority: 0,
        ignored: false,
    }
}

/// The lexer of `specs`, with the default configuration.
///
/// # Panics
/// When the lexer does not build.
pub fn build(specs: &[TerminalSpec]) -> Lexer {
    build_with(specs, &LexerConfig::default())
}

/// The lexer of `specs` under `config`.
///
/// # Panics
/// When the lexer does not build.
pub fn build_with(specs: &[TerminalSpec], config: &LexerConfig) -> Lexer {
    Lexer::new(specs, config).unwrap_or_else(|e| panic!("{e}"))
}

/// The lexer of one regex terminal per pattern (`T0`, `T1`, …), with the default
/// configuration.
///
/// # Panics
/// When a pattern does not parse or the lexer does not build.
pub fn of_patterns(patterns: &[&str]) -> Lexer {
    let specs: Vec<TerminalSpec> = patterns
        .iter()
        .enumerate()
        .map(|(i, p)| re(&format!("T{i}"), p))
        .collect();
    build(&specs)
}
