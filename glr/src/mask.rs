//! Token masks: the set of allowed vocabulary tokens, in the layout logits kernels take.
//!
//! A [`TokenMask`] is a vector of `u32` words; token `id` is allowed iff bit `id % 32` of word
//! `id / 32` is set. This is the layout vLLM, XGrammar and llguidance hand to their kernels, so a
//! mask goes to the GPU without conversion. Bits past `len` are always clear.

use munch_lexer::TokenId;

/// A set of token ids over a vocabulary of `len` tokens.
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
        let i = id.as_usize();
        i < self.len && self.words[i / 32] & (1 << (i % 32)) != 0
    }

    /// The number of allowed tokens.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The allowed tokens in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = TokenId> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &word)| {
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

    /// Adds every token of `other` (same length).
    pub fn union_with(&mut self, other: &TokenMask) {
        debug_assert_eq!(self.len, other.len);
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
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

    fn trim(&mut self) {
        let tail = self.len % 32;
        if tail != 0 {
            if let Some(last) = self.words.last_mut() {
                *last &= (1u32 << tail) - 1;
            }
        }
    }
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
