//! Token masks: the set of allowed vocabulary tokens, in the layout logits kernels take.
//!
//! A [`TokenMask`] is a vector of `u32` words; token `id` is allowed iff bit `id % 32` of word
//! `id / 32` is set. This is the layout vLLM, XGrammar and llguidance hand to their kernels, so a
//! mask goes to the GPU without conversion. Bits past `len` are always clear.
//!
//! [`MaskMut`] is the same set over words the caller owns (one row of an engine's
//! `[batch, ceil(V/32)]` bitmask), so that a mask is written where the logits kernel reads it,
//! without a copy. Every masker writes its masks through one.

use munch_vocab::TokenId;

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

    /// The same set over the same words, as the maskers write it.
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
