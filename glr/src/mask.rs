//! Token masks: the set of allowed vocabulary tokens, in the layout logits kernels take.
//!
//! A [`TokenMask`] is a vector of `u32` words; token `id` is allowed iff bit `id % 32` of word
//! `id / 32` is set. This is the layout vLLM, XGrammar and llguidance hand to their kernels, so a
//! mask goes to the GPU without conversion. Bits past `len` are always clear.
//!
//! [`MaskMut`] is the same set over words the caller owns (one row of an engine's
//! `[batch, ceil(V/32)]` bitmask), so that a mask is written where the logits kernel reads it,
//! without a copy. A [`Masker`] fills one for a [`ParserState`]; every masker meets the one
//! contract stated on the trait, and the conformance suite checks that they return identical
//! masks.

use std::any::Any;
use std::sync::Arc;

use munch_vocab::{TokenId, Vocabulary};

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
            let mut next = state.clone();
            if next.commit_bytes(bytes).is_ok() && next.is_live() {
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

/// A set of token ids over a vocabulary of `len` tokens, owning its words.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TokenMask {
    words: Vec<u32>,
    len: usize,
}

impl TokenMask {
    /// The empty mask over `len` tokens.
    pub fn new(len: usize) -> Self {
        TokenMask {
            words: vec![0; len.div_ceil(32)],
            len,
        }
    }

    /// The mask over `len` tokens with `words` (bits past `len` are cleared); `None` unless
    /// there are `ceil(len / 32)` words.
    pub fn from_words(words: &[u32], len: usize) -> Option<Self> {
        if words.len() != len.div_ceil(32) {
            return None;
        }
        let mut mask = TokenMask {
            words: words.to_vec(),
            len,
        };
        mask.as_mut().trim();
        Some(mask)
    }

    /// The same set over the same words, as the [`Masker`]s write it.
    #[inline]
    pub fn as_mut(&mut self) -> MaskMut<'_> {
        MaskMut {
            words: &mut self.words,
            len: self.len,
        }
    }

    /// The number of tokens the mask ranges over (the vocabulary size).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mask ranges over no tokens at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The words, for a logits kernel.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// The words, mutably; callers keep bits past `len` clear.
    pub fn words_mut(&mut self) -> &mut [u32] {
        &mut self.words
    }

    /// Disallows every token.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// Allows every token.
    pub fn fill(&mut self) {
        self.as_mut().fill();
    }

    /// Allows `id`; ids out of range are ignored.
    #[inline]
    pub fn insert(&mut self, id: TokenId) {
        self.as_mut().insert(id);
    }

    /// Disallows `id`.
    #[inline]
    pub fn remove(&mut self, id: TokenId) {
        self.as_mut().remove(id);
    }

    /// Whether `id` is allowed (false out of range).
    #[inline]
    pub fn contains(&self, id: TokenId) -> bool {
        contains(&self.words, self.len, id)
    }

    /// The number of allowed tokens.
    pub fn count(&self) -> usize {
        count(&self.words)
    }

    /// The allowed tokens in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = TokenId> + '_ {
        iter(&self.words)
    }

    /// Adds every token of `other` (same length).
    pub fn union_with(&mut self, other: &TokenMask) {
        self.as_mut().union_with(other);
    }

    /// The first token on which `self` and `other` differ, if any.
    pub fn first_difference(&self, other: &TokenMask) -> Option<TokenId> {
        self.words
            .iter()
            .zip(&other.words)
            .position(|(a, b)| a != b)
            .map(|wi| {
                let diff = self.words[wi] ^ other.words[wi];
                TokenId::from_usize(wi * 32 + diff.trailing_zeros() as usize)
            })
    }
}

/// A set of token ids over `len` tokens, written into `ceil(len / 32)` words the caller owns
/// (a row of an engine's bitmask). [`TokenMask::as_mut`] views an owned mask this way.
#[derive(Debug)]
pub struct MaskMut<'a> {
    words: &'a mut [u32],
    len: usize,
}

impl<'a> MaskMut<'a> {
    /// The mask over `len` tokens in `words`; `None` unless there are exactly `ceil(len / 32)`
    /// words. The words are taken as they are: callers [`MaskMut::clear`] them or keep bits
    /// past `len` clear.
    pub fn new(words: &'a mut [u32], len: usize) -> Option<Self> {
        (words.len() == len.div_ceil(32)).then_some(MaskMut { words, len })
    }

    /// The same mask for a shorter borrow (to pass on and keep).
    #[inline]
    pub fn reborrow(&mut self) -> MaskMut<'_> {
        MaskMut {
            words: self.words,
            len: self.len,
        }
    }

    /// The number of tokens the mask ranges over (the vocabulary size).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mask ranges over no tokens at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The words.
    pub fn words(&self) -> &[u32] {
        self.words
    }

    /// The words, mutably; callers keep bits past `len` clear.
    #[inline]
    pub fn words_mut(&mut self) -> &mut [u32] {
        self.words
    }

    /// Disallows every token.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// Allows every token.
    pub fn fill(&mut self) {
        self.words.fill(u32::MAX);
        self.trim();
    }

    /// Allows `id`; ids out of range are ignored.
    #[inline]
    pub fn insert(&mut self, id: TokenId) {
        let i = id.as_usize();
        if i < self.len {
            self.words[i / 32] |= 1 << (i % 32);
        }
    }

    /// Disallows `id`.
    #[inline]
    pub fn remove(&mut self, id: TokenId) {
        let i = id.as_usize();
        if i < self.len {
            self.words[i / 32] &= !(1 << (i % 32));
        }
    }

    /// Whether `id` is allowed (false out of range).
    #[inline]
    pub fn contains(&self, id: TokenId) -> bool {
        contains(self.words, self.len, id)
    }

    /// The number of allowed tokens.
    pub fn count(&self) -> usize {
        count(self.words)
    }

    /// Adds every token of `other` (same length).
    pub fn union_with(&mut self, other: &TokenMask) {
        debug_assert_eq!(self.len, other.len);
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// Sets the mask to `other` (same length).
    pub fn copy_from(&mut self, other: &TokenMask) {
        self.words.copy_from_slice(&other.words);
    }

    fn trim(&mut self) {
        let tail = self.len % 32;
        if tail != 0 {
            if let Some(last) = self.words.last_mut() {
                *last &= (1u32 << tail) - 1;
            }
        }
    }
}

#[inline]
fn contains(words: &[u32], len: usize, id: TokenId) -> bool {
    let i = id.as_usize();
    i < len && words[i / 32] & (1 << (i % 32)) != 0
}

fn count(words: &[u32]) -> usize {
    words.iter().map(|w| w.count_ones() as usize).sum()
}

fn iter(words: &[u32]) -> impl Iterator<Item = TokenId> + '_ {
    words.iter().enumerate().flat_map(|(wi, &word)| {
        let mut w = word;
        std::iter::from_fn(move || {
            if w == 0 {
                return None;
            }
            let bit = w.trailing_zeros() as usize;
            w &= w - 1;
            Some(TokenId::from_usize(wi * 32 + bit))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(i: usize) -> TokenId {
        TokenId::from_usize(i)
    }

    #[test]
    fn bits_follow_the_kernel_layout() {
        let mut m = TokenMask::new(70);
        m.insert(id(0));
        m.insert(id(33));
        m.insert(id(69));
        m.insert(id(70)); // out of range: ignored
        assert_eq!(m.words(), &[1, 2, 1 << 5]);
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![id(0), id(33), id(69)]);
        assert_eq!(m.count(), 3);
        assert!(m.contains(id(33)) && !m.contains(id(34)) && !m.contains(id(70)));
        m.remove(id(33));
        assert!(!m.contains(id(33)));
    }

    #[test]
    fn a_view_over_caller_words_is_the_same_set() {
        let mut words = [u32::MAX; 3];
        assert!(
            MaskMut::new(&mut words, 97).is_none(),
            "97 tokens take 4 words"
        );
        let mut view = MaskMut::new(&mut words, 70).unwrap();
        view.fill();
        assert_eq!(view.words(), &[u32::MAX, u32::MAX, (1 << 6) - 1]);
        view.clear();
        view.insert(id(69));
        view.insert(id(5));
        view.insert(id(70));
        assert!(view.contains(id(69)) && !view.contains(id(70)));
        assert_eq!(view.count(), 2);
        let owned = TokenMask::from_words(&words, 70).unwrap();
        assert_eq!(owned.iter().collect::<Vec<_>>(), vec![id(5), id(69)]);
        assert!(TokenMask::from_words(&words, 200).is_none());
        // Bits past `len` are cleared when read in.
        assert_eq!(TokenMask::from_words(&[u32::MAX], 3).unwrap().count(), 3);
    }

    #[test]
    fn fill_keeps_bits_past_len_clear() {
        let mut m = TokenMask::new(33);
        m.fill();
        assert_eq!(m.words(), &[u32::MAX, 1]);
        assert_eq!(m.count(), 33);
        m.clear();
        assert_eq!(m.count(), 0);
    }

    #[test]
    fn first_difference_finds_the_lowest_differing_id() {
        let mut a = TokenMask::new(100);
        let mut b = TokenMask::new(100);
        assert_eq!(a.first_difference(&b), None);
        a.insert(id(77));
        b.insert(id(90));
        assert_eq!(a.first_difference(&b), Some(id(77)));
        b.union_with(&a);
        a.insert(id(90));
        assert_eq!(a.first_difference(&b), None);
    }
}
