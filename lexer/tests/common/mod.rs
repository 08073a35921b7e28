//! What the lexer's test files share: terminal specs as Lark writes them, a lexer built with
//! the default configuration, the state a text leads to and a text's lexemes.

// Each test file uses some of these.
#![allow(dead_code, unused_imports)]

use munch_lexer::dfa::{LexError, Lexer, LexerBuildError, LexerConfig, TerminalSpec};
use munch_lexer::LexState;
/// Literal and regex terminals (`"x"` and `/x/` in Lark), and the lexer of a list of them with
/// the default configuration.
pub use munch_testkit::lexers::{build, lit, re};

/// `spec` with another priority.
pub fn with_priority(spec: TerminalSpec, priority: i32) -> TerminalSpec {
    TerminalSpec { priority, ..spec }
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
