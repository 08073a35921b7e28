//! Terminal patterns → one byte-level DFA; streaming longest-match lexing.

use regex_syntax::hir::Hir;

/// One terminal as the lexer sees it. Index `i` of the list handed to the builder is
/// `TerminalId(i)`.
#[derive(Clone, Debug)]
pub struct TerminalSpec {
    /// Name, for diagnostics.
    pub name: String,
    /// The pattern over Unicode text; `None` for a terminal the lexer never produces
    /// (a `%declare`d one).
    pub hir: Option<Hir>,
    /// A plain string literal: beats a regex on a tie of the same lexeme.
    pub is_literal: bool,
    /// Higher priority wins a tie of the same lexeme.
    pub priority: i32,
    /// `%ignore`d: separates lexemes, never reaches the parser.
    pub ignored: bool,
}
