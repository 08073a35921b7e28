//! Bit sets as `u64` words, for every set over ids in munch (the lexer's terminal sets and byte
//! classes, the token classes' class sets, the weighted automaton's weights): [`Ones`], the
//! iterator over the members, and the word-level operations each set type is built on (bit `b`
//! of word `w` is member `64 w + b`). The set types differ in how they size their words (the
//! terminal sets grow, the class sets have a fixed length); the operations take slices and read
//! a word past the end of the shorter operand as zero.

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

/// Whether `i` is a member (false past the words).
#[inline]
pub fn contains(words: &[u64], i: usize) -> bool {
    words
        .get(i / 64)
        .is_some_and(|w| w & (1u64 << (i % 64)) != 0)
}

/// Adds `i`; returns whether it was absent. Panics when `i` is past the words.
#[inline]
pub fn insert(words: &mut [u64], i: usize) -> bool {
    let bit = 1u64 << (i % 64);
    let word = &mut words[i / 64];
    let absent = *word & bit == 0;
    *word |= bit;
    absent
}

/// Removes `i`; returns whether it was present (false past the words).
#[inline]
pub fn remove(words: &mut [u64], i: usize) -> bool {
    let bit = 1u64 << (i % 64);
    match words.get_mut(i / 64) {
        Some(word) if *word & bit != 0 => {
            *word &= !bit;
            true
        }
        _ => false,
    }
}

/// `a ∪= b`; returns whether `a` changed. `b` must have no member past `a`'s words.
#[inline]
pub fn union_with(a: &mut [u64], b: &[u64]) -> bool {
    debug_assert!(b.iter().skip(a.len()).all(|&w| w == 0));
    let mut changed = 0;
    for (x, &y) in a.iter_mut().zip(b) {
        changed |= y & !*x;
        *x |= y;
    }
    changed != 0
}

/// `a ∩= b`.
#[inline]
pub fn intersect_with(a: &mut [u64], b: &[u64]) {
    let (head, tail) = a.split_at_mut(b.len().min(a.len()));
    for (x, &y) in head.iter_mut().zip(b) {
        *x &= y;
    }
    tail.fill(0);
}

/// `a ∖= b`.
#[inline]
pub fn difference_with(a: &mut [u64], b: &[u64]) {
    for (x, &y) in a.iter_mut().zip(b) {
        *x &= !y;
    }
}

/// `a ∩ b ≠ ∅`.
#[inline]
pub fn intersects(a: &[u64], b: &[u64]) -> bool {
    a.iter().zip(b).any(|(x, y)| x & y != 0)
}

/// `a ⊆ b`.
#[inline]
pub fn is_subset(a: &[u64], b: &[u64]) -> bool {
    let (head, tail) = a.split_at(b.len().min(a.len()));
    head.iter().zip(b).all(|(x, y)| x & !y == 0) && tail.iter().all(|&x| x == 0)
}

/// The number of members.
#[inline]
pub fn count(words: &[u64]) -> usize {
    words.iter().map(|w| w.count_ones() as usize).sum()
}

/// Whether there is no member.
#[inline]
pub fn is_empty(words: &[u64]) -> bool {
    words.iter().all(|&w| w == 0)
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

    #[test]
    fn word_operations_read_missing_words_as_zero() {
        let mut a = vec![0u64; 2];
        assert!(insert(&mut a, 3) && !insert(&mut a, 3) && insert(&mut a, 70));
        assert!(contains(&a, 70) && !contains(&a, 71) && !contains(&a, 500));
        let b = [1u64 << 3];
        assert!(intersects(&a, &b) && is_subset(&b, &a) && !is_subset(&a, &b));
        assert!(!union_with(&mut a, &b) && count(&a) == 2);
        let mut c = a.clone();
        intersect_with(&mut c, &b);
        assert_eq!(c, [1 << 3, 0]);
        difference_with(&mut a, &b);
        assert_eq!(a, [0, 1 << 6]);
        assert!(remove(&mut a, 70) && !remove(&mut a, 70) && !remove(&mut a, 900));
        assert!(is_empty(&a));
    }
}
