//! What the lexer's test files share: terminal specs as Lark writes them, a lexer built with
//! the default configuration, the state a text leads to and a text's lexemes.

// Each test file uses some of these.
#![allow(dead_code)]

use munch_lexer::dfa::{LexError, Lexer, LexerBuildError, LexerConfig, TerminalSpec};
use munch_lexer::LexState;
use regex_syntax::hir::Hir;

/// A literal terminal (`"x"` in Lark).
pub fn lit(name: &str, text: &str) -> TerminalSpec {
    TerminalSpec {
        name: name.to_string(),
        hir: Some(Hir::literal(text.as_bytes())),
        is_literal: true,
        priority: 0,
        ignored: false,
    }
}

/// A regex terminal (`/x/` in Lark).
pub fn re(name: &str, pattern: &str) -> TerminalSpec {
    TerminalSpec {
        name: name.to_string(),
        hir: Some(regex_syntax::Parser::new().parse(pattern).unwrap()),
        is_literal: false,
        priority: 0,
        ignored: false,
    }
}

/// `spec` with another priority.
pub fn with_priority(spec: TerminalSpec, priority: i32) -> TerminalSpec {
    TerminalSpec { priority, ..spec }
}

/// The lexer of `specs`, with the default configuration.
pub fn build(specs: &[TerminalSpec]) -> Lexer {
    Lexer::new(specs, &LexerConfig::default()).unwrap()
}

/// Why the lexer of `specs`, with the default configuration, is refused.
pub fn build_err(specs: &[TerminalSpec]) -> LexerBuildError {
    Lexer::new(specs, &LexerConfig::default()).unwrap_err()
}

/// The state after reading `text` from the start.
pub fn walk(lexer: &Lexer, text: &[u8]) -> LexState {
    text.iter().fold(lexer.start(), |s, &b| lexer.next(s, b))
}

/// `tokenize` as (lexeme text, terminal names) pairs.
pub fn lex(lexer: &Lexer, input: &str) -> Result<Vec<(String, Vec<String>)>, LexError> {
    Ok(lexer
        .tokenize(input.as_bytes())?
        .into_iter()
        .map(|l| {
            let names = l
                .terminals
                .iter()
                .map(|&id| lexer.terminal(id).name.clone())
                .collect();
            (input[l.start..l.end].to_string(), names)
        })
        .collect())
}
