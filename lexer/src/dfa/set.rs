//! [`TerminalSet`]: a bitset over [`TerminalId`]s.

use std::fmt;
use std::hash::{Hash, Hasher};

use munch_vocab::bits;

use crate::TerminalId;

/// A set of terminals, stored as a bitset in `u64` words.
///
/// The lexer uses it for [`Lexer::reachable`](super::Lexer::reachable); the parser uses it for
/// lookahead sets. The set grows as needed: [`TerminalSet::new`] only sizes it up front, and
/// [`insert`](TerminalSet::insert) of a larger id extends it. Equality and hashing depend on the
/// members only, never on the capacity, so two sets built with different `new(len)` that hold
/// the same terminals are equal.
#[derive(Default)]
pub struct TerminalSet {
    words: Vec<u64>,
}

impl Clone for TerminalSet {
    fn clone(&self) -> TerminalSet {
        TerminalSet {
            words: self.words.clone(),
        }
    }

    /// Reuses `self`'s buffer (the derived `clone_from` would allocate a new one).
    fn clone_from(&mut self, source: &TerminalSet) {
        self.words.clone_from(&source.words);
    }
}

impl TerminalSet {
    /// An empty set with room for the ids `0..len` without reallocating.
    pub fn new(len: usize) -> TerminalSet {
        TerminalSet {
            words: vec![0; len.div_ceil(64)],
        }
    }

    /// Adds `id`; returns whether it was new.
    pub fn insert(&mut self, id: TerminalId) -> bool {
        let i = id.as_usize();
        if i / 64 >= self.words.len() {
            self.words.resize(i / 64 + 1, 0);
        }
        bits::insert(&mut self.words, i)
    }

    /// Removes `id`; returns whether it was present.
    pub fn remove(&mut self, id: TerminalId) -> bool {
        bits::remove(&mut self.words, id.as_usize())
    }

    /// Whether `id` is a member.
    #[inline]
    pub fn contains(&self, id: TerminalId) -> bool {
        bits::contains(&self.words, id.as_usize())
    }

    /// The members in increasing order.
    pub fn iter(&self) -> Iter<'_> {
        Iter::new(&self.words)
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        bits::count(&self.words)
    }

    /// Whether the set has no member.
    pub fn is_empty(&self) -> bool {
        bits::is_empty(&self.words)
    }

    /// Removes every member (keeps the capacity).
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }

    /// Adds every member of `other`; returns whether `self` changed (handy for fixpoints).
    pub fn union_with(&mut self, other: &TerminalSet) -> bool {
        if other.words.len() > self.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        bits::union_with(&mut self.words, &other.words)
    }

    /// Keeps only the members that are also in `other`.
    pub fn intersect_with(&mut self, other: &TerminalSet) {
        bits::intersect_with(&mut self.words, &other.words);
    }

    /// Removes every member of `other`.
    pub fn difference_with(&mut self, other: &TerminalSet) {
        bits::difference_with(&mut self.words, &other.words);
    }

    /// Whether the two sets share a member.
    pub fn intersects(&self, other: &TerminalSet) -> bool {
        bits::intersects(&self.words, &other.words)
    }

    /// Whether every member of `self` is in `other`.
    pub fn is_subset(&self, other: &TerminalSet) -> bool {
        bits::is_subset(&self.words, &other.words)
    }

    /// The words without trailing zero words: what equality and hashing look at.
    fn trimmed(&self) -> &[u64] {
        let end = self
            .words
            .iter()
            .rposition(|&w| w != 0)
            .map_or(0, |i| i + 1);
        &self.words[..end]
    }
}

impl PartialEq for TerminalSet {
    fn eq(&self, other: &TerminalSet) -> bool {
        self.trimmed() == other.trimmed()
    }
}

impl Eq for TerminalSet {}

impl Hash for TerminalSet {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.trimmed().hash(state);
    }
}

impl fmt::Debug for TerminalSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.iter().map(|t| t.as_u32()))
            .finish()
    }
}

impl FromIterator<TerminalId> for TerminalSet {
    fn from_iter<I: IntoIterator<Item = TerminalId>>(iter: I) -> TerminalSet {
        let mut set = TerminalSet::default();
        set.extend(iter);
        set
    }
}

impl Extend<TerminalId> for TerminalSet {
    fn extend<I: IntoIterator<Item = TerminalId>>(&mut self, iter: I) {
        for id in iter {
            self.insert(id);
        }
    }
}

impl<'a> IntoIterator for &'a TerminalSet {
    type Item = TerminalId;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The members of a [`TerminalSet`] in increasing order.
pub type Iter<'a> = munch_vocab::bits::Ones<'a, TerminalId>;

#[cfg(test)]
mod tests {
    use super::*;

    fn t(i: u32) -> TerminalId {
        TerminalId::from(i)
    }

    #[test]
    fn clone_from_copies_the_members_whatever_the_sizes() {
        let small: TerminalSet = [t(1), t(3)].into_iter().collect();
        let large: TerminalSet = [t(2), t(200)].into_iter().collect();
        let mut s = large.clone();
        s.clone_from(&small);
        assert_eq!(s, small);
        assert!(!s.contains(t(200)) && !s.contains(t(2)));
        s.clone_from(&large);
        assert_eq!(s, large);
        assert!(!s.contains(t(1)));
    }

    #[test]
    fn insert_contains_iter() {
        let mut s = TerminalSet::new(10);
        assert!(s.is_empty());
        assert!(s.insert(t(3)));
        assert!(!s.insert(t(3)));
        assert!(s.insert(t(200)));
        assert!(s.insert(t(64)));
        assert!(s.contains(t(3)) && s.contains(t(64)) && s.contains(t(200)));
        assert!(!s.contains(t(4)) && !s.contains(t(10_000)));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![t(3), t(64), t(200)]);
        assert_eq!(s.len(), 3);
        assert!(s.remove(t(64)));
        assert!(!s.remove(t(64)));
        assert!(!s.remove(t(10_000)));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![t(3), t(200)]);
    }

    #[test]
    fn equality_ignores_capacity() {
        use std::collections::hash_map::DefaultHasher;
        let mut a = TerminalSet::new(1000);
        let mut b = TerminalSet::new(1);
        a.insert(t(5));
        b.insert(t(5));
        assert_eq!(a, b);
        let hash = |s: &TerminalSet| {
            let mut h = DefaultHasher::new();
            s.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(&a), hash(&b));
        b.insert(t(6));
        assert_ne!(a, b);
        assert_eq!(TerminalSet::new(500), TerminalSet::default());
    }

    #[test]
    fn set_algebra() {
        let a: TerminalSet = [1, 2, 70].into_iter().map(t).collect();
        let b: TerminalSet = [2, 130].into_iter().map(t).collect();
        let c: TerminalSet = [3].into_iter().map(t).collect();
        assert!(a.intersects(&b) && !a.intersects(&c));
        let mut u = a.clone();
        assert!(u.union_with(&b));
        assert!(!u.union_with(&b));
        assert_eq!(
            u.iter().map(|x| x.as_u32()).collect::<Vec<_>>(),
            [1, 2, 70, 130]
        );
        assert!(a.is_subset(&u) && b.is_subset(&u) && !u.is_subset(&a));
        let mut i = u.clone();
        i.intersect_with(&b);
        assert_eq!(i, b);
        let mut d = u.clone();
        d.difference_with(&b);
        assert_eq!(d.iter().map(|x| x.as_u32()).collect::<Vec<_>>(), [1, 70]);
        d.clear();
        assert!(d.is_empty());
        assert_eq!(d.len(), 0);
        assert_eq!(format!("{a:?}"), "{1, 2, 70}");
    }
}
