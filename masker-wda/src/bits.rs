//! Class sets as plain `u64` words, and the interner that gives every distinct set (a *weight*)
//! a small id so that automaton states and transitions carry `u32`s, not bitsets.

use ahash::AHashMap;

/// A set of token classes, `words` long (bit `c % 64` of word `c / 64` is class `c`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct Bits(pub(crate) Box<[u64]>);

impl Bits {
    pub(crate) fn new(words: usize) -> Self {
        Bits(vec![0; words].into_boxed_slice())
    }

    pub(crate) fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    pub(crate) fn contains(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    pub(crate) fn union_with(&mut self, o: &[u64]) {
        for (a, b) in self.0.iter_mut().zip(o) {
            *a |= b;
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(wi, &word)| {
            let mut w = word;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(wi * 64 + b)
            })
        })
    }
}

/// `a ⊆ b`, word by word.
#[inline]
pub(crate) fn is_subset(a: &[u64], b: &[u64]) -> bool {
    a.iter().zip(b).all(|(x, y)| x & !y == 0)
}

/// A weight: the id of an interned class set. Weight 0 is the empty set.
pub(crate) type Weight = u32;

/// The empty weight.
pub(crate) const EMPTY: Weight = 0;

/// Interned class sets with memoised union and difference.
pub(crate) struct Weights {
    words: usize,
    sets: Vec<Bits>,
    index: AHashMap<Bits, Weight>,
    unions: AHashMap<(Weight, Weight), Weight>,
    minus: AHashMap<(Weight, Weight), Weight>,
    /// Heap bytes held, approximately (sets, index, memo tables).
    pub(crate) heap: usize,
}

impl Weights {
    pub(crate) fn new(words: usize) -> Self {
        let mut w = Weights {
            words,
            sets: Vec::new(),
            index: AHashMap::new(),
            unions: AHashMap::new(),
            minus: AHashMap::new(),
            heap: 0,
        };
        w.intern(Bits::new(words));
        w
    }

    pub(crate) fn words(&self) -> usize {
        self.words
    }

    pub(crate) fn len(&self) -> usize {
        self.sets.len()
    }

    pub(crate) fn get(&self, w: Weight) -> &Bits {
        &self.sets[w as usize]
    }

    pub(crate) fn intern(&mut self, b: Bits) -> Weight {
        debug_assert_eq!(b.0.len(), self.words);
        if let Some(&w) = self.index.get(&b) {
            return w;
        }
        let w = self.sets.len() as Weight;
        // The set is stored twice (vector and key) plus the map's own slot.
        self.heap += 2 * (self.words * 8 + 16) + 24;
        self.sets.push(b.clone());
        self.index.insert(b, w);
        w
    }

    pub(crate) fn union(&mut self, a: Weight, b: Weight) -> Weight {
        if a == b || b == EMPTY {
            return a;
        }
        if a == EMPTY {
            return b;
        }
        let key = if a < b { (a, b) } else { (b, a) };
        if let Some(&w) = self.unions.get(&key) {
            return w;
        }
        let mut s = self.sets[a as usize].clone();
        s.union_with(&self.sets[b as usize].0);
        let w = self.intern(s);
        self.unions.insert(key, w);
        self.heap += 24;
        w
    }

    /// `a \ b`.
    pub(crate) fn minus(&mut self, a: Weight, b: Weight) -> Weight {
        if a == EMPTY || b == EMPTY {
            return a;
        }
        if a == b {
            return EMPTY;
        }
        if let Some(&w) = self.minus.get(&(a, b)) {
            return w;
        }
        let mut s = self.sets[a as usize].clone();
        let mut changed = false;
        for (x, y) in s.0.iter_mut().zip(self.sets[b as usize].0.iter()) {
            changed |= *x & y != 0;
            *x &= !y;
        }
        let w = if changed { self.intern(s) } else { a };
        self.minus.insert((a, b), w);
        self.heap += 24;
        w
    }

    pub(crate) fn into_sets(self) -> Vec<Bits> {
        self.sets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_union_and_difference() {
        let mut ws = Weights::new(2);
        let mut a = Bits::new(2);
        a.insert(3);
        a.insert(70);
        let mut b = Bits::new(2);
        b.insert(70);
        let (wa, wb) = (ws.intern(a.clone()), ws.intern(b));
        assert_eq!(ws.intern(a), wa);
        assert_eq!(ws.union(wa, wb), wa);
        let d = ws.minus(wa, wb);
        assert_eq!(ws.get(d).iter().collect::<Vec<_>>(), vec![3]);
        assert_eq!(ws.minus(wb, wa), EMPTY);
        assert_eq!(ws.union(d, wb), wa);
        assert!(is_subset(&ws.get(d).0, &ws.get(wa).0));
        assert!(!is_subset(&ws.get(wa).0, &ws.get(d).0));
    }
}
