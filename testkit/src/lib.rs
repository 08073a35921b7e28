//! # munch-testkit
//!
//! Test material shared by munch's crates, kept out of the libraries' public APIs (`publish =
//! false`; crates take it as a dev-dependency, the conformance and fuzz harnesses as a
//! dependency):
//!
//! - [`dsl`]: a tiny text form of grammars (`s -> 'a' s | ε`), whose anonymous terminals are named
//!   by their text, so expected CFGs and tables read as the grammar does.
//! - [`earley`]: a slow, simple reference recogniser that the GLR parser is checked against.
//! - [`files`]: the real files of one kind under a folder (a corpus cache), evenly spread.
//! - [`generate`]: seeded random sentences of a grammar, and lexemes of its terminals, so that a
//!   failing seed replays.
//! - [`grammar`]: compiled parsers of a Lark or DSL text, a built-in or a SynCode grammar, for
//!   tests whose grammar is part of the test.
//! - [`lexers`]: terminal specs as Lark writes them (`lit`, `re`) and the lexer of a list of
//!   them, for tests whose terminals are part of the test.
//! - [`npm`]: npm packages of test data (the JSON Schema Test Suite), fetched once into the cache.
//! - [`props`]: seeded property-test settings, so that a failing case replays.
//! - [`re`]: small regex syntax trees written out for munch and the `regex` crate, with the pattern
//!   of their viable prefixes: the reference the lexer is checked against.
//! - [`vocab`]: synthetic vocabularies (every byte, a few words, EOS), small enough for the
//!   oracle at every step, and the conformance corpus's `synthetic:NAME` vocabularies.

// All APIs need docs: tests in every crate read them.
#![deny(missing_docs)]

pub mod dsl;
pub mod earley;
pub mod files;
pub mod generate;
pub mod grammar;
pub mod lexers;
pub mod lexing;
pub mod npm;
pub mod props;
pub mod re;
pub mod vocab;
