//! # munch-fuzz
//!
//! Differential fuzzing of munch: the input types, the reference implementations and the checks
//! behind the cargo-fuzz targets in `fuzz_targets/`, kept in a library so that the proptests in
//! `tests/` run the very same checks on random inputs.
//!
//! | target | module | munch side | reference |
//! |---|---|---|---|
//! | `grammar_load` | [`lark`] | `lark::load` (then `Parser::new`, a commit) | invariants: a grammar keeps its documented invariants, an error is located exactly, nothing panics |
//! | `lexer` | [`lexer`] | `Lexer` (`tokenize`, per-state facts) | [`reference::RefLexer`], built on the `regex` crate |
//! | `commit` | [`commit`] | `ParserState` (commit); `Matcher` (accept, rollback, fork, validate) | reference lexer + every tie choice + Earley on this crate's own BNF expansion; a fresh replay |
//! | `masks` | [`masks`] | a `Matcher` of every masker in [`masks::compiled`] | the exact oracle's matcher (and Earley for EOS) |
//! | `artifacts` | [`artifacts`] | the wda's artifact, saved by `Compiled::save`, edited, loaded | the oracle's matcher; typed load errors |
//!
//! Every case type's `Debug` prints a ready-to-paste regression test (see [`repro`]); each
//! `check` returns `Err` with the first disagreement, and `Ok` also for cases it has to skip (a
//! build budget, too many tie choices to follow).

// Documented like the crates it tests.
#![deny(missing_docs)]

pub mod artifacts;
pub mod commit;
pub mod grammar;
pub mod lark;
pub mod lexer;
pub mod masks;
pub mod re;
pub mod reference;
pub mod repro;

/// Everything a regression test needs: `use munch_fuzz::prelude::*;`.
pub mod prelude {
    pub use crate::artifacts::{self, ArtifactCase, Edit};
    pub use crate::commit::{self, CommitCase, CommitOp};
    pub use crate::grammar::{GrammarSpec, Item, Op, Sym};
    pub use crate::lark::{self, LarkCase};
    pub use crate::lexer::{self, LexerCase};
    pub use crate::masks::{self, MaskCase, MaskStep};
    pub use crate::re::Re;
    pub use crate::reference::{Pattern, Term};
    pub use crate::repro::Bytes;
}

/// Builds a case from raw bytes the way `fuzz_target!` does (`arbitrary_take_rest`); the
/// proptests feed random byte vectors through it. `None` only if a generator fails.
pub fn case_from_bytes<'a, T: arbitrary::Arbitrary<'a>>(bytes: &'a [u8]) -> Option<T> {
    T::arbitrary_take_rest(arbitrary::Unstructured::new(bytes)).ok()
}
