//! [`ClassSet`]: a bitset of token classes.

use std::fmt;

use munch_vocab::bits;

use super::ClassId;

/// A set of [`ClassId`]s below a fixed length, as `u64` words.
///
/// Bits at or past [`len`](ClassSet::len) are always clear, so two sets of the same length are
/// equal iff their words are. Binary operations take a set of the same length (they panic
/// otherwise: sets come from one [`TokenClasses`](super::TokenClasses)).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct ClassSet {
    words: Vec<u64>,
    len: usize,
}

impl ClassSet {
    /// The empty set over classes `0..len`.
    pub fn new(len: usize) -> ClassSet {
        ClassSet {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// The set over classes `0..len` whose words (in the layout of
    /// [`words`](ClassSet::words)) are `words`; bits past `len` must be clear.
    pub(crate) fn from_words(len: usize, words: &[u64]) -> ClassSet {
        debug_assert_eq!(words.len(), len.div_ceil(64));
        ClassSet {
            words: words.to_vec(),
            len,
        }
    }

    /// The set of every class `0..len`.
    pub fn full(len: usize) -> ClassSet {
        let mut set = ClassSet::new(len);
        set.fill();
        set
    }

    /// The number of classes the set ranges over (not the number of members: see
    /// [`count`](ClassSet::count)).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Adds `c`; returns whether it was absent. Panics if `c` is not below `len()`.
    #[inline]
    pub fn insert(&mut self, c: ClassId) -> bool {
        let i = self.index(c);
        bits::insert(&mut self.words, i)
    }

    /// Removes `c`; returns whether it was present. Panics if `c` is not below `len()`.
    #[inline]
    pub fn remove(&mut self, c: ClassId) -> bool {
        let i = self.index(c);
        bits::remove(&mut self.words, i)
    }

    /// Whether `c` is in the set (false for a class not below `len()`).
    #[inline]
    pub fn contains(&self, c: ClassId) -> bool {
        let i = c.as_usize();
        i < self.len && bits::contains(&self.words, i)
    }

    /// Adds every member of `other`; returns whether `self` changed.
    pub fn union_with(&mut self, other: &ClassSet) -> bool {
        self.check_len(other);
        bits::union_with(&mut self.words, &other.words)
    }

    /// Keeps only the members of `other`.
    pub fn intersect_with(&mut self, other: &ClassSet) {
        self.check_len(other);
        bits::intersect_with(&mut self.words, &other.words);
    }

    /// Removes every member of `other`.
    pub fn difference_with(&mut self, other: &ClassSet) {
        self.check_len(other);
        bits::difference_with(&mut self.words, &other.words);
    }

    /// Whether the two sets share a member.
    pub fn intersects(&self, other: &ClassSet) -> bool {
        self.check_len(other);
        bits::intersects(&self.words, &other.words)
    }

    /// Whether every member of `self` is in `other`.
    pub fn is_subset(&self, other: &ClassSet) -> bool {
        self.check_len(other);
        bits::is_subset(&self.words, &other.words)
    }

    /// Whether the set has no member.
    #[inline]
    pub fn is_empty(&self) -> bool {
        bits::is_empty(&self.words)
    }

    /// The number of members.
    #[inline]
    pub fn count(&self) -> usize {
        bits::count(&self.words)
    }

    /// Removes every member.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// Adds every class `0..len()`.
    pub fn fill(&mut self) {
        self.words.fill(u64::MAX);
        let rem = self.len % 64;
        if rem != 0 {
            if let Some(last) = self.words.last_mut() {
                *last = (1u64 << rem) - 1;
            }
        }
    }

    /// The members in ascending order.
    pub fn iter(&self) -> Iter<'_> {
        Iter::new(&self.words)
    }

    /// Makes the set exactly the classes whose bits are set in `words`, `u32` words in the
    /// token-mask layout (class `c` is bit `c % 32` of word `c / 32`), for walks that collect
    /// class ids in a mask. Bits at or past `len()` are ignored; missing words count as zero.
    pub fn copy_from_u32_words(&mut self, words: &[u32]) {
        for (i, w) in self.words.iter_mut().enumerate() {
            let lo = words.get(2 * i).copied().unwrap_or(0);
            let hi = words.get(2 * i + 1).copied().unwrap_or(0);
            *w = u64::from(lo) | (u64::from(hi) << 32);
        }
        let rem = self.len % 64;
        if rem != 0 {
            if let Some(last) = self.words.last_mut() {
                *last &= (1u64 << rem) - 1;
            }
        }
    }

    /// The words: class `c` is bit `c % 64` of word `c / 64`.
    #[inline]
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    #[inline]
    fn index(&self, c: ClassId) -> usize {
        let i = c.as_usize();
        assert!(
            i < self.len,
            "class {i} out of range for a set of {}",
            self.len
        );
        i
    }

    fn check_len(&self, other: &ClassSet) {
        assert_eq!(
            self.len, other.len,
            "class sets over different numbers of classes"
        );
    }
}

impl fmt::Debug for ClassSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.iter().map(|c| c.as_usize()))
            .finish()
    }
}

impl Extend<ClassId> for ClassSet {
    fn extend<I: IntoIterator<Item = ClassId>>(&mut self, iter: I) {
        for c in iter {
            self.insert(c);
        }
    }
}

/// The members of a [`ClassSet`] in ascending order: see [`ClassSet::iter`].
pub type Iter<'a> = munch_vocab::bits::Ones<'a, ClassId>;

#[cfg(test)]
mod tests {
    use super::*;

    fn set(len: usize, members: &[usize]) -> ClassSet {
        let mut s = ClassSet::new(len);
        s.extend(members.iter().map(|&i| ClassId::from_usize(i)));
        s
    }

    fn members(s: &ClassSet) -> Vec<usize> {
        s.iter().map(|c| c.as_usize()).collect()
    }

    #[test]
    fn insert_remove_contains() {
        let mut s = ClassSet::new(130);
        assert!(s.is_empty());
        assert!(s.insert(ClassId::from_usize(129)));
        assert!(!s.insert(ClassId::from_usize(129)));
        assert!(s.insert(ClassId::from_usize(0)));
        assert!(s.contains(ClassId::from_usize(129)));
        assert!(!s.contains(ClassId::from_usize(64)));
        assert!(!s.contains(ClassId::from_usize(500)));
        assert_eq!(s.count(), 2);
        assert_eq!(members(&s), [0, 129]);
        assert!(s.remove(ClassId::from_usize(0)));
        assert!(!s.remove(ClassId::from_usize(0)));
        assert_eq!(members(&s), [129]);
    }

    #[test]
    fn fill_keeps_bits_past_len_clear() {
        let mut s = ClassSet::new(70);
        s.fill();
        assert_eq!(s.count(), 70);
        assert_eq!(s, ClassSet::full(70));
        assert_eq!(s.words()[1], (1 << 6) - 1);
        s.clear();
        assert!(s.is_empty());
        assert_eq!(ClassSet::full(64).count(), 64);
        assert_eq!(ClassSet::full(0).count(), 0);
    }

    #[test]
    fn set_operations() {
        let a = set(100, &[1, 2, 65, 99]);
        let b = set(100, &[2, 3, 99]);
        let mut u = a.clone();
        assert!(u.union_with(&b));
        assert!(!u.union_with(&b));
        assert_eq!(members(&u), [1, 2, 3, 65, 99]);
        let mut i = a.clone();
        i.intersect_with(&b);
        assert_eq!(members(&i), [2, 99]);
        let mut d = a.clone();
        d.difference_with(&b);
        assert_eq!(members(&d), [1, 65]);
        assert!(a.intersects(&b));
        assert!(!d.intersects(&b));
        assert!(i.is_subset(&a) && i.is_subset(&b));
        assert!(!a.is_subset(&b));
        assert_eq!(format!("{i:?}"), "{2, 99}");
    }

    #[test]
    fn from_u32_words() {
        let mut s = ClassSet::new(70);
        s.copy_from_u32_words(&[0b101, 0, (1 << 3) | (1 << 5) | (1 << 9), u32::MAX, 7]);
        assert_eq!(members(&s), [0, 2, 67, 69]);
        s.copy_from_u32_words(&[2]);
        assert_eq!(members(&s), [1]);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn insert_out_of_range_panics() {
        ClassSet::new(3).insert(ClassId::from_usize(3));
    }
}
