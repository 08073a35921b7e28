//! # munch-glr
//!
//! Grammars and parsing for munch:
//!
//! - [`lark`]: the Lark grammar language → [`grammar::Grammar`], with located errors.
//! - [`grammar`]: the EBNF-level grammar model.
//!
//! Normalisation to BNF, the LALR(1) automaton that keeps every conflict, and the GLR runtime
//! (`ParserState`, `commit`, rollback) build on these.

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
