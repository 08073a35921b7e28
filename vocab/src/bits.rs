//! [`Ones`]: the set bits of `u64` words as ids, the iterator of every bit set over ids (the
//! lexer's terminal sets, the token classes' class sets).

use std::marker::PhantomData;

/// The indices of the set bits of `words` (bit `b` of word `w` is index `64 w + b`), in
/// increasing order, as ids of type `I`.
pub struct Ones<'a, I> {
    words: &'a [u64],
    index: usize,
    /// The bits of `words[index]` not yet yielded.
    current: u64,
    id: PhantomData<fn() -> I>,
}

impl<'a, I> Ones<'a, I> {
    /// The set bits of `words`.
    #[inline]
    pub fn new(words: &'a [u64]) -> Self {
        Ones {
            words,
            index: 0,
            current: words.first().copied().unwrap_or(0),
            id: PhantomData,
        }
    }
}

impl<I> Clone for Ones<'_, I> {
    fn clone(&self) -> Self {
        Ones {
            id: PhantomData,
            ..*self
        }
    }
}

impl<I> std::fmt::Debug for Ones<'_, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ones")
            .field("index", &self.index)
            .field("current", &self.current)
            .finish_non_exhaustive()
    }
}

impl<I: From<u32>> Iterator for Ones<'_, I> {
    type Item = I;

    #[inline]
    fn next(&mut self) -> Option<I> {
        loop {
            if self.current != 0 {
                let bit = self.current.trailing_zeros();
                self.current &= self.current - 1;
                return Some(I::from(self.index as u32 * 64 + bit));
            }
            self.index += 1;
            self.current = *self.words.get(self.index)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ones_in_increasing_order_across_words() {
        let words = [0b1010, 0, 1 << 63, 1];
        let got: Vec<u32> = Ones::<u32>::new(&words).collect();
        assert_eq!(got, [1, 3, 191, 192]);
        assert_eq!(Ones::<u32>::new(&[]).count(), 0);
        assert_eq!(Ones::<u32>::new(&[0, 0]).count(), 0);
    }
}
