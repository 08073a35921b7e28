//! The [`Masker`] trait and its contract, and the [`Oracle`] that meets it by brute force.
//!
//! A [`Masker`] fills a [`MaskMut`] (a row of an engine's `[batch, ceil(V/32)]` bitmask; the
//! mask types live in `munch_tokens` and are re-exported here, since the trait names them) for
//! a [`ParserState`]; every masker meets the one contract stated on the trait, and the
//! conformance suite checks that they return identical masks.

use std::any::Any;
use std::sync::Arc;

pub use munch_tokens::{MaskMut, TokenMask};
use munch_vocab::Vocabulary;

use crate::parser::ParserState;

/// Computes the tokens allowed after a parser state.
///
/// # The contract
///
/// For a state reached by committing text `w`, a text token `v` (one with bytes in the
/// vocabulary) is allowed iff committing `v`'s bytes to the state succeeds and leaves it
/// **live**: some head of the GSS, together with its lexer configuration, can still go on — its
/// partial lexeme can be completed to a terminal the parser can shift (after reductions), or to an
/// `%ignore`d terminal, or its lexeme is empty and some terminal can be shifted. In other words
/// `v` is allowed iff `state.clone()` followed by `commit_token(v)` is `Ok` and
/// [`ParserState::is_live`] holds after it. An end-of-sequence token is allowed iff
/// [`ParserState::is_accepting`] holds now; other special tokens are never allowed.
///
/// The mask is a pure function of the state's text (not of how it was committed: byte by byte,
/// token by token, after rollbacks). Maskers may memoise and precompute anything, but must
/// return exactly this set for every state of every grammar and vocabulary; `Cache` is scratch
/// owned by the caller so that a compiled masker stays immutable and shareable between threads.
pub trait Masker: Send + Sync {
    /// A short name (`trie`, `oracle`, ...).
    fn name(&self) -> &str;

    /// The vocabulary this masker was built for.
    fn vocabulary(&self) -> &Vocabulary;

    /// Fresh scratch space for [`Masker::fill_mask`]; one per thread.
    fn create_cache(&self) -> MaskCache;

    /// Sets `mask` (over [`Vocabulary::len`] tokens) to exactly the allowed tokens of `state`.
    fn fill_into(&self, cache: &mut MaskCache, state: &ParserState, mask: MaskMut<'_>);

    /// [`Masker::fill_into`] an owned mask.
    fn fill_mask(&self, cache: &mut MaskCache, state: &ParserState, mask: &mut TokenMask) {
        self.fill_into(cache, state, mask.as_mut());
    }

    /// The allowed tokens of `state` in a new mask (allocates; hot loops use `fill_mask`).
    fn mask(&self, cache: &mut MaskCache, state: &ParserState) -> TokenMask {
        let mut mask = TokenMask::new(self.vocabulary().len());
        self.fill_mask(cache, state, &mut mask);
        mask
    }
}

/// Caller-owned scratch space of one masker (its memo tables), made by
/// [`Masker::create_cache`].
pub struct MaskCache(Box<dyn Any + Send>);

impl MaskCache {
    /// Wraps a masker's own cache type.
    pub fn new<T: Any + Send>(inner: T) -> Self {
        MaskCache(Box::new(inner))
    }

    /// The masker's own cache.
    ///
    /// # Panics
    /// When the cache was made by a different kind of masker: a cache belongs to the masker that
    /// created it.
    pub fn get_mut<T: Any + Send>(&mut self) -> &mut T {
        self.0
            .downcast_mut()
            .expect("a MaskCache was passed to a masker that did not create it")
    }
}

/// The exact oracle: the contract computed by brute force.
///
/// For every text token: clone the state, commit the token, test liveness. Obviously right and
/// slow (one commit per vocabulary entry); every other masker is checked against it. It lives
/// beside the trait, not in the conformance crate, because `munch trace --oracle` uses it too.
pub struct Oracle {
    vocab: Arc<Vocabulary>,
}

impl Oracle {
    /// An oracle over `vocab`.
    pub fn new(vocab: Arc<Vocabulary>) -> Self {
        Oracle { vocab }
    }
}

impl Masker for Oracle {
    fn name(&self) -> &str {
        "oracle"
    }

    fn vocabulary(&self) -> &Vocabulary {
        &self.vocab
    }

    fn create_cache(&self) -> MaskCache {
        MaskCache::new(())
    }

    fn fill_into(&self, _cache: &mut MaskCache, state: &ParserState, mut mask: MaskMut<'_>) {
        mask.clear();
        for (id, bytes) in self.vocab.text_tokens() {
            if state.allows(bytes) {
                mask.insert(id);
            }
        }
        set_eos(&self.vocab, state, &mut mask);
    }
}

/// Sets the end-of-sequence tokens of `vocab` in `mask` iff `state` accepts now, as the contract
/// requires of every masker.
pub fn set_eos(vocab: &Vocabulary, state: &ParserState, mask: &mut MaskMut<'_>) {
    if state.is_accepting() {
        for &eos in vocab.eos() {
            mask.insert(eos);
        }
    }
}

mod indent;
pub use indent::IndentFix;
