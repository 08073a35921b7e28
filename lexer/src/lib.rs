//! # munch-lexer
//!
//! The lexical half of munch's pipeline:
//!
//! - [`dfa`]: terminal patterns (as `regex-syntax` HIR) compiled into one byte-level DFA over byte
//!   classes, with per-state accepted terminals (after tie-breaking), growth and reachability, and
//!   the streaming longest-match semantics with inhibited terminals that the parser drives.
//!
//! Nothing here knows about grammars or parsers: a terminal is an id, a name, a pattern and a
//! priority.

// All APIs need docs: this crate is the contract the parser and every masker build on.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod dfa;
mod id;

pub use dfa::{
    LexError, Lexeme, Lexer, LexerBuildError, LexerBuildErrorKind, LexerConfig, TerminalSet,
    TerminalSpec,
};
pub use id::{LexState, TerminalId};
