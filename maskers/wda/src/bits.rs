//! Class sets as plain `u64` words, and the interner that gives every distinct set (a *weight*)
//! a small id so that automaton states and transitions carry `u32`s, not bitsets.
//!
//! The interner stores each set once, in one arena, and finds it again by a 64-bit hash; the
//! construction computes unions and differences in scratch bitsets and interns only the sets
//! that end up in a state or on a transition, so intermediate sets cost nothing.

use ahash::AHashMap;
use smallvec::SmallVec;

/// A set of token classes, `words` long (bit `c % 64` of word `c / 64` is class `c`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct Bits(pub(crate) Box<[u64]>);

impl Bits {
    pub(crate) fn new(words: usize) -> Self {
        Bits(vec![0; words].into_boxed_slice())
    }

    pub(crate) fn insert(&mut self, i: usize) {
        munch_vocab::bits::insert(&mut self.0, i);
    }
}

/// The set bits of a bitset, ascending.
pub(crate) fn iter_bits(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    munch_vocab::bits::Ones::<u32>::new(words).map(|b| b as usize)
}

pub(crate) use munch_vocab::bits::{intersects, is_subset};

/// A weight: the id of an interned class set. Weight 0 is the empty set.
pub(crate) type Weight = u32;

/// The empty weight.
pub(crate) const EMPTY: Weight = 0;

/// Interned class sets.
#[derive(Clone)]
pub(crate) struct Weights {
    words: usize,
    /// Weight `w` is `arena[w * words..(w + 1) * words]`.
    arena: Vec<u64>,
    /// Per weight: its words from the first nonzero one to the last (`0..0` for the empty
    /// set). Most weights hold a few classes, and a union over their span reads a few words
    /// instead of all of them.
    spans: Vec<(u32, u32)>,
    index: AHashMap<u64, SmallVec<[Weight; 1]>>,
    /// `a ∪ b` by `(a, b)`, `a < b`: the construction unions the same weights over and over
    /// (a continuation's weights meeting in many transitions), and looking one up is cheaper
    /// than hashing the set again.
    unions: AHashMap<(Weight, Weight), Weight>,
    /// The words of a set being made.
    scratch: Vec<u64>,
    /// Heap bytes held, approximately.
    pub(crate) heap: usize,
}

/// A 64-bit hash of a set's words, for the interner's index. Four lanes, each a chain of
/// multiplications, so that the processor runs them side by side: a set spans dozens of words
/// and one chain would wait on every multiplication in turn.
fn hash_words(words: &[u64]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mix = |h: u64, w: u64| {
        let h = (h ^ w).wrapping_mul(K);
        h ^ (h >> 32)
    };
    let mut lanes: [u64; 4] = [
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    ];
    let mut chunks = words.chunks_exact(4);
    for chunk in &mut chunks {
        for (lane, &w) in lanes.iter_mut().zip(chunk) {
            *lane = mix(*lane, w);
        }
    }
    let mut h = lanes
        .iter()
        .fold(words.len() as u64, |h, &lane| mix(h.rotate_left(17), lane));
    for &w in chunks.remainder() {
        h = mix(h, w);
    }
    h
}

impl Weights {
    pub(crate) fn new(words: usize) -> Self {
        let mut w = Weights {
            words,
            arena: Vec::new(),
            spans: Vec::new(),
            index: AHashMap::new(),
            unions: AHashMap::new(),
            scratch: Vec::with_capacity(words),
            heap: words * 8,
        };
        w.intern_words(&vec![0; words]);
        w
    }

    pub(crate) fn words(&self) -> usize {
        self.words
    }

    pub(crate) fn len(&self) -> usize {
        self.arena.len() / self.words.max(1)
    }

    pub(crate) fn get(&self, w: Weight) -> &[u64] {
        &self.arena[w as usize * self.words..(w as usize + 1) * self.words]
    }

    /// The words of `w` from its first nonzero one, and that one's index (see `spans`).
    #[inline]
    pub(crate) fn get_nonzero(&self, w: Weight) -> (usize, &[u64]) {
        let (lo, hi) = self.spans[w as usize];
        let at = w as usize * self.words;
        (lo as usize, &self.arena[at + lo as usize..at + hi as usize])
    }

    pub(crate) fn intern(&mut self, b: Bits) -> Weight {
        self.intern_words(&b.0)
    }

    pub(crate) fn intern_words(&mut self, b: &[u64]) -> Weight {
        debug_assert_eq!(b.len(), self.words);
        let h = hash_words(b);
        if let Some(ids) = self.index.get(&h) {
            for &id in ids {
                if self.get(id) == b {
                    return id;
                }
            }
        }
        let id = self.len() as Weight;
        self.arena.extend_from_slice(b);
        let lo = b.iter().position(|&x| x != 0).unwrap_or(0);
        let hi = b.iter().rposition(|&x| x != 0).map_or(lo, |i| i + 1);
        self.spans.push((lo as u32, hi as u32));
        self.index.entry(h).or_default().push(id);
        self.heap += self.words * 8 + 40;
        id
    }

    /// `a ∪ b` (interned).
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
        let mut s = std::mem::take(&mut self.scratch);
        s.clear();
        s.extend(self.get(a).iter().zip(self.get(b)).map(|(x, y)| x | y));
        let w = self.intern_words(&s);
        self.scratch = s;
        self.unions.insert(key, w);
        self.heap += 24;
        w
    }

    /// `a \ b` (interned).
    pub(crate) fn minus(&mut self, a: Weight, b: Weight) -> Weight {
        if a == EMPTY || b == EMPTY {
            return a;
        }
        if !intersects(self.get(a), self.get(b)) {
            return a;
        }
        let s: Vec<u64> = self
            .get(a)
            .iter()
            .zip(self.get(b))
            .map(|(x, y)| x & !y)
            .collect();
        self.intern_words(&s)
    }

    /// The sets, weight by weight, in one slice.
    pub(crate) fn arena(&self) -> &[u64] {
        &self.arena
    }

    /// The sets, weight by weight, in one vector.
    pub(crate) fn into_arena(self) -> Vec<u64> {
        self.arena
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonzero_words_are_a_weights_span() {
        let mut ws = Weights::new(5);
        assert_eq!(ws.get_nonzero(EMPTY), (0, &[][..]));
        for classes in [&[70usize][..], &[3, 200], &[130, 131, 190], &[0, 319]] {
            let mut b = Bits::new(5);
            for &c in classes {
                b.insert(c);
            }
            let w = ws.intern(b.clone());
            let (lo, words) = ws.get_nonzero(w);
            let (first, last) = (classes[0] / 64, classes[classes.len() - 1] / 64);
            assert_eq!((lo, words), (first, &b.0[first..=last]), "{classes:?}");
        }
    }

    #[test]
    fn interning_and_union() {
        let mut ws = Weights::new(2);
        let mut a = Bits::new(2);
        a.insert(3);
        a.insert(70);
        let mut b = Bits::new(2);
        b.insert(70);
        let (wa, wb) = (ws.intern(a.clone()), ws.intern(b));
        assert_ne!(wa, wb);
        assert_eq!(ws.intern(a), wa);
        assert_eq!(ws.union(wa, wb), wa);
        assert_eq!(ws.union(EMPTY, wb), wb);
        assert!(ws.get(EMPTY).iter().all(|&w| w == 0));
        assert!(is_subset(ws.get(wb), ws.get(wa)));
        assert!(!is_subset(ws.get(wa), ws.get(wb)));
        assert!(intersects(ws.get(wa), ws.get(wb)));
        assert_eq!(ws.len(), 3);
        let d = ws.minus(wa, wb);
        assert!(ws.get(d)[0] == 1 << 3 && ws.get(d)[1] == 0);
        assert_eq!(ws.minus(wb, wa), EMPTY);
        assert_eq!(ws.minus(d, wb), d);
    }
}
