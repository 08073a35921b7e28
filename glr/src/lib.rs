//! # munch-glr
//!
//! Grammars and parsing for munch, in pipeline order:
//!
//! - [`lark`]: the Lark grammar language → [`grammar::Grammar`], with located errors.
//! - [`grammar`]: the EBNF-level grammar model.
//! - [`cfg`]: normalisation to plain BNF as ordered passes; nullable/FIRST.
//! - [`lr`]: LALR(1) tables (DeRemer–Pennello lookaheads, right-nulled reductions) that keep
//!   every shift/reduce and reduce/reduce conflict; conflicts as data, rendered for
//!   `munch check --conflicts`.
//! - [`gss`]: the persistent graph-structured stack (immutable, reference-counted nodes).
//! - [`parser`]: the RNGLR runtime fed by the streaming lexer: [`parser::Parser`] (compiled,
//!   shareable) and [`parser::ParserState`] (`commit_bytes`, `commit_token`, `is_live`,
//!   `is_accepting`, `rollback`, O(1) clone).
//! - [`mask`]: [`mask::TokenMask`], the [`mask::Masker`] trait with the exact mask contract,
//!   and the brute-force [`mask::Oracle`].
//!
//! ```
//! use std::sync::Arc;
//! use munch_glr::lark::{load, LoadConfig};
//! use munch_glr::parser::{Parser, ParserConfig, ParserState};
//!
//! let grammar = load(br#"start: "a"+ "b""#, &LoadConfig::default()).unwrap();
//! let parser = Arc::new(Parser::new(&grammar, &ParserConfig::default()).unwrap());
//! let mut state = ParserState::new(parser);
//! state.commit_bytes(b"aa").unwrap();
//! assert!(state.is_live() && !state.is_accepting());
//! let before = state.clone();
//! state.commit_bytes(b"b").unwrap();
//! assert!(state.is_accepting());
//! assert!(state.commit_bytes(b"b").is_err()); // refused, state unchanged
//! state.rollback(1).unwrap();
//! assert_eq!(state.is_accepting(), before.is_accepting());
//! ```

// All APIs need docs: the parser state and grammar model are what every masker programs against.
#![deny(missing_docs)]

pub mod cfg;
pub mod grammar;
pub mod gss;
pub mod lark;
pub mod lr;
pub mod mask;
pub mod parser;
pub mod span;
