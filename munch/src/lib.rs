//! # munch
//!
//! Grammar-constrained decoding: at every step of LLM generation, the set of vocabulary tokens
//! that keep the output a prefix of a sentence of a context-free grammar.
//!
//! This crate is the facade: it resolves the user's inputs (a grammar given as a path, a built-in
//! name or a SynCode name; a tokenizer given as a path or a known name) and hosts the `munch`
//! command-line tool. The pieces live in `munch-lexer` (lexer DFA, vocabularies) and `munch-glr`
//! (Lark front end, GLR parser).

#![deny(missing_docs)]

pub mod input;
pub mod maskers;
pub mod parse;
pub mod stats;

pub use munch_glr as glr;
pub use munch_lexer as lexer;
