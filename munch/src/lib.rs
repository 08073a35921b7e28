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
//! use std::sync::Arc;
//! use munch::{Compiled, Config, Grammar, TokenId, Vocabulary};
//!
//! // A vocabulary: every byte, a few words and an end-of-sequence token. Real ones come from
//! // a Hugging Face `tokenizer.json` (`Vocabulary::from_tokenizer_json`).
//! let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
//! tokens.extend(["{\"", "\": ", "true", "null"].map(|t| Some(t.as_bytes().to_vec())));
//! tokens.push(None);
//! let eos = tokens.len() as u32 - 1;
//! let vocab = Arc::new(Vocabulary::from_token_bytes(tokens, vec![TokenId::from(eos)])?);
//!
//! let compiled = Compiled::new(&Grammar::builtin("json")?, vocab, &Config::default())?;
//! let mut matcher = compiled.matcher();
//! let mut bitmask = vec![0u32; compiled.bitmask_words()];
//! let allowed = |bitmask: &[u32], t: u32| bitmask[t as usize / 32] >> (t % 32) & 1 == 1;
//!
//! // What the model writes, token by token: `{"` `a` `": ` `true` `}` and EOS.
//! for token in [256, u32::from(b'a'), 257, 258, u32::from(b'}'), eos] {
//!     matcher.fill_next_token_bitmask(&mut bitmask)?;
//!     assert!(allowed(&bitmask, token));
//!     if token == 256 {
//!         // Before the first token: no `x`, and no end of text yet.
//!         assert!(!allowed(&bitmask, u32::from(b'x')) && !allowed(&bitmask, eos));
//!     }
//!     matcher.accept_token(token)?;
//! }
//! assert!(matcher.is_terminated());
//! matcher.rollback(2)?; // undo `}` and EOS
//! assert_eq!(matcher.forced_bytes(), b""); // `,`, `}` or a space may follow
//! assert_eq!(matcher.validate_tokens(&[u32::from(b','), u32::from(b'x')]), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The pieces live in their own crates, reachable here for tools: [`lexer`] (the lexer DFA,
//! vocabularies), [`glr`] (the Lark front end, the GLR parser, the [`glr::mask::Masker`] trait
//! with the exact mask contract) and the masker crates.

// All APIs need docs!
#![deny(missing_docs)]

pub mod batch;
mod compiled;
mod error;
mod grammar;
mod maskers;
mod matcher;
pub mod parse;
pub mod stats;
pub mod teacher;

pub use compiled::{BuildStats, Compiled, Config, FellBack, MaskerKind};
pub use error::{CompileError, CompileErrorKind, MatcherError, MatcherErrorKind};
pub use grammar::Grammar;
pub use matcher::{Matcher, MAX_FORCED_BYTES};
pub use munch_glr::mask::TokenMask;
pub use munch_lexer::vocab::Vocabulary;
pub use munch_lexer::TokenId;

pub use munch_glr as glr;
pub use munch_lexer as lexer;
