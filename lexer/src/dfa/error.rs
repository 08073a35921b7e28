//! Errors from building a [`Lexer`](super::Lexer) and from lexing with it.

use std::fmt;

use crate::TerminalId;

/// Why [`Lexer::new`](super::Lexer::new) failed.
///
/// Opaque: inspect it with [`kind`](LexerBuildError::kind); its `Display` names the terminal or
/// the budget involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexerBuildError {
    kind: LexerBuildErrorKind,
}

/// The kinds of [`LexerBuildError`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LexerBuildErrorKind {
    /// The DFA would have more than [`LexerConfig::max_states`](super::LexerConfig::max_states)
    /// states (counted before minimisation).
    TooManyStates {
        /// The budget that was hit.
        limit: usize,
    },
    /// The construction would hold more than
    /// [`LexerConfig::max_build_memory`](super::LexerConfig::max_build_memory) bytes (NFAs,
    /// subset-construction keys and the transition table, approximately).
    TooMuchMemory {
        /// The budget that was hit, in bytes.
        limit: usize,
    },
    /// One terminal's NFA exceeds
    /// [`LexerConfig::nfa_size_limit`](super::LexerConfig::nfa_size_limit).
    NfaTooBig {
        /// The terminal.
        terminal: TerminalId,
        /// Its name.
        name: String,
        /// The budget that was hit, in bytes.
        limit: usize,
    },
    /// One terminal's pattern nests deeper than
    /// [`LexerConfig::nest_limit`](super::LexerConfig::nest_limit).
    TooDeep {
        /// The terminal.
        terminal: TerminalId,
        /// Its name.
        name: String,
        /// The budget that was hit.
        limit: usize,
    },
    /// A terminal uses a regex feature a byte-level lexer cannot honour.
    Unsupported {
        /// The terminal.
        terminal: TerminalId,
        /// Its name.
        name: String,
        /// The feature, e.g. "look-around assertion `\b`".
        what: String,
    },
    /// A terminal's pattern matches the empty string, so longest-match lexing could loop.
    EmptyMatch {
        /// The terminal.
        terminal: TerminalId,
        /// Its name.
        name: String,
    },
    /// A part of a terminal's intersection ([`meet_name`](super::meet_name)) does not build,
    /// or the product of its parts exceeds the state budget.
    Intersection {
        /// The terminal.
        terminal: TerminalId,
        /// Its name.
        name: String,
        /// What went wrong with the part, or the budget the product hit.
        source: Box<LexerBuildError>,
    },
    /// More terminals than [`TerminalId`] can number.
    TooManyTerminals {
        /// How many were given.
        given: usize,
        /// The most there may be.
        limit: usize,
    },
}

impl LexerBuildError {
    /// What went wrong.
    pub fn kind(&self) -> &LexerBuildErrorKind {
        &self.kind
    }

    /// The terminal the error is about, if it is about one.
    pub fn terminal(&self) -> Option<TerminalId> {
        match self.kind {
            LexerBuildErrorKind::NfaTooBig { terminal, .. }
            | LexerBuildErrorKind::TooDeep { terminal, .. }
            | LexerBuildErrorKind::Unsupported { terminal, .. }
            | LexerBuildErrorKind::EmptyMatch { terminal, .. }
            | LexerBuildErrorKind::Intersection { terminal, .. } => Some(terminal),
            _ => None,
        }
    }

    pub(crate) fn new(kind: LexerBuildErrorKind) -> LexerBuildError {
        LexerBuildError { kind }
    }
}

impl fmt::Display for LexerBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            LexerBuildErrorKind::TooManyStates { limit } => write!(
                f,
                "lexer DFA exceeds the state budget (max_states = {limit})"
            ),
            LexerBuildErrorKind::TooMuchMemory { limit } => write!(
                f,
                "lexer DFA construction exceeds the memory budget (max_build_memory = {limit} bytes)"
            ),
            LexerBuildErrorKind::NfaTooBig {
                name,
                limit,
                terminal,
            } => write!(
                f,
                "terminal {name} (#{terminal}): pattern exceeds the NFA budget (nfa_size_limit = {limit} bytes)"
            ),
            LexerBuildErrorKind::TooDeep {
                name,
                limit,
                terminal,
            } => write!(
                f,
                "terminal {name} (#{terminal}): pattern nests deeper than the budget (nest_limit = {limit})"
            ),
            LexerBuildErrorKind::Unsupported {
                name,
                what,
                terminal,
            } => write!(
                f,
                "terminal {name} (#{terminal}): {what} is not supported by the lexer"
            ),
            LexerBuildErrorKind::EmptyMatch { name, terminal } => write!(
                f,
                "terminal {name} (#{terminal}): pattern matches the empty string"
            ),
            LexerBuildErrorKind::Intersection {
                name,
                terminal,
                source,
            } => write!(f, "terminal {name} (#{terminal}): its intersection: {source}"),
            LexerBuildErrorKind::TooManyTerminals { given, limit } => {
                write!(f, "{given} terminals given, at most {limit} are supported")
            }
        }
    }
}

impl std::error::Error for LexerBuildError {}

/// [`Lexer::tokenize`](super::Lexer::tokenize) found no lexeme.
///
/// `offset` is the byte that could not be read: the first byte that neither extends the lexeme
/// nor begins the next one after a lexeme that matches a terminal (whole characters decide:
/// see [`Lexer::tokenize`](super::Lexer::tokenize)), or `input.len()` when the input ends inside
/// a lexeme that matches no terminal or inside a character.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError {
    /// The offset of the offending byte (or the input length at end of input).
    pub offset: usize,
    /// Where the lexeme that could not be completed began (`<= offset`).
    pub lexeme_start: usize,
}

impl fmt::Display for LexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no terminal matches at byte {}", self.offset)
    }
}

impl std::error::Error for LexError {}
