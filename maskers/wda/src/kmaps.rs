//! Continuation maps: the weighted continuations of one group of items.
//!
//! Items of an automaton state come in groups that share a terminal and a code — `(T, A, r)`
//! with many continuations `κ` — and until the terminal is shifted a group's items all move
//! alike. So a state stores, per group, one interned *map* `κ → weight`, and moving a group
//! (a countdown, a pre-shift exit) moves the map's id, not its entries. Unions of maps and the
//! removal of decided classes are memoised.

use ahash::AHashMap;
use smallvec::SmallVec;

use crate::bits::{Weight, Weights, EMPTY};
use crate::template::Cont;

/// A map id.
pub(crate) type KMap = u32;

/// Interned maps (each a nonempty list of `(κ, weight)` sorted by `κ`, weights nonempty).
pub(crate) struct KMaps {
    entries: Vec<(Cont, Weight)>,
    start: Vec<usize>,
    /// Per map: its key set (the continuations without their weights), interned.
    kset_of: Vec<u32>,
    kset_index: AHashMap<u64, SmallVec<[u32; 1]>>,
    /// Per key set: its first map (whose continuations it is).
    kset_map: Vec<KMap>,
    index: AHashMap<u64, SmallVec<[KMap; 1]>>,
    unions: AHashMap<(KMap, KMap), KMap>,
    minus: AHashMap<(KMap, Weight), Option<KMap>>,
    scratch: Vec<(Cont, Weight)>,
    /// Heap bytes held, approximately.
    pub(crate) heap: usize,
}

impl KMaps {
    pub(crate) fn new() -> Self {
        KMaps {
            entries: Vec::new(),
            start: vec![0],
            kset_of: Vec::new(),
            kset_index: AHashMap::new(),
            kset_map: Vec::new(),
            index: AHashMap::new(),
            unions: AHashMap::new(),
            minus: AHashMap::new(),
            scratch: Vec::new(),
            heap: 0,
        }
    }

    pub(crate) fn get(&self, m: KMap) -> &[(Cont, Weight)] {
        &self.entries[self.start[m as usize]..self.start[m as usize + 1]]
    }

    /// The map of `v` (sorted by `κ`, no duplicate `κ`, no empty weight, not empty).
    pub(crate) fn intern(&mut self, v: &[(Cont, Weight)]) -> KMap {
        debug_assert!(!v.is_empty() && v.windows(2).all(|w| w[0].0 < w[1].0));
        let mut h: u64 = 0x5851_f42d_4c95_7f2d;
        for &(k, w) in v {
            h = (h ^ ((k as u64) << 32 | w as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            h ^= h >> 31;
        }
        if let Some(ids) = self.index.get(&h) {
            for &id in ids {
                if self.get(id) == v {
                    return id;
                }
            }
        }
        let id = (self.start.len() - 1) as KMap;
        self.entries.extend_from_slice(v);
        self.start.push(self.entries.len());
        self.index.entry(h).or_default().push(id);
        self.heap += v.len() * 8 + 56;
        // The key set: maps with the same continuations share one.
        let mut hk: u64 = 0x2545_f491_4f6c_dd1d;
        for &(k, _) in v {
            hk = (hk ^ k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            hk ^= hk >> 31;
        }
        let mut kset = None;
        if let Some(ids) = self.kset_index.get(&hk) {
            for &ks in ids {
                let other = self.get(self.kset_map[ks as usize]);
                if other.len() == v.len() && other.iter().zip(v).all(|(a, b)| a.0 == b.0) {
                    kset = Some(ks);
                    break;
                }
            }
        }
        let kset = kset.unwrap_or_else(|| {
            let ks = self.kset_map.len() as u32;
            self.kset_map.push(id);
            self.kset_index.entry(hk).or_default().push(ks);
            ks
        });
        self.kset_of.push(kset);
        id
    }

    /// The key set of `m`: maps with the same continuations (in the same order) have the same.
    pub(crate) fn kset(&self, m: KMap) -> u32 {
        self.kset_of[m as usize]
    }

    /// The map of arbitrary `(κ, weight)` pairs (any order, duplicates unioned); `None` when
    /// every weight is empty.
    pub(crate) fn intern_pairs(
        &mut self,
        weights: &mut Weights,
        pairs: &mut [(Cont, Weight)],
    ) -> Option<KMap> {
        pairs.sort_unstable();
        let mut v = std::mem::take(&mut self.scratch);
        v.clear();
        for &(k, w) in pairs.iter() {
            if w == EMPTY {
                continue;
            }
            match v.last_mut() {
                Some((lk, lw)) if *lk == k => *lw = weights.union(*lw, w),
                _ => v.push((k, w)),
            }
        }
        let r = (!v.is_empty()).then(|| self.intern(&v));
        self.scratch = v;
        r
    }

    /// `a ∪ b` (weights of a common `κ` unioned).
    pub(crate) fn union(&mut self, weights: &mut Weights, a: KMap, b: KMap) -> KMap {
        if a == b {
            return a;
        }
        let key = if a < b { (a, b) } else { (b, a) };
        if let Some(&m) = self.unions.get(&key) {
            return m;
        }
        let mut v = std::mem::take(&mut self.scratch);
        v.clear();
        let (mut i, mut j) = (self.start[a as usize], self.start[b as usize]);
        let (ie, je) = (self.start[a as usize + 1], self.start[b as usize + 1]);
        while i < ie || j < je {
            let x = (i < ie).then(|| self.entries[i]);
            let y = (j < je).then(|| self.entries[j]);
            match (x, y) {
                (Some(x), Some(y)) if x.0 == y.0 => {
                    v.push((x.0, weights.union(x.1, y.1)));
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x.0 < y.0 => {
                    v.push(x);
                    i += 1;
                }
                (Some(x), None) => {
                    v.push(x);
                    i += 1;
                }
                (_, Some(y)) => {
                    v.push(y);
                    j += 1;
                }
                (None, None) => unreachable!("the loop runs while one side has entries"),
            }
        }
        let m = self.intern(&v);
        self.scratch = v;
        self.unions.insert(key, m);
        self.heap += 24;
        m
    }

    /// `a` with the classes of `decided` removed from every weight; `None` when nothing is
    /// left.
    pub(crate) fn minus(
        &mut self,
        weights: &mut Weights,
        a: KMap,
        decided: Weight,
    ) -> Option<KMap> {
        if decided == EMPTY {
            return Some(a);
        }
        if let Some(&m) = self.minus.get(&(a, decided)) {
            return m;
        }
        let mut v = std::mem::take(&mut self.scratch);
        v.clear();
        let mut changed = false;
        for i in self.start[a as usize]..self.start[a as usize + 1] {
            let (k, w) = self.entries[i];
            let w2 = weights.minus(w, decided);
            changed |= w2 != w;
            if w2 != EMPTY {
                v.push((k, w2));
            }
        }
        let m = if !changed {
            Some(a)
        } else if v.is_empty() {
            None
        } else {
            Some(self.intern(&v))
        };
        self.scratch = v;
        self.minus.insert((a, decided), m);
        self.heap += 24;
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bits::Bits;

    fn weight(ws: &mut Weights, classes: &[usize]) -> Weight {
        let mut b = Bits::new(1);
        for &c in classes {
            b.insert(c);
        }
        ws.intern(b)
    }

    #[test]
    fn union_and_minus() {
        let mut ws = Weights::new(1);
        let (a, b, ab) = (
            weight(&mut ws, &[0]),
            weight(&mut ws, &[1]),
            weight(&mut ws, &[0, 1]),
        );
        let mut km = KMaps::new();
        let m1 = km.intern(&[(3, a), (5, b)]);
        let m2 = km.intern(&[(3, b), (7, a)]);
        let u = km.union(&mut ws, m1, m2);
        assert_eq!(km.get(u), &[(3, ab), (5, b), (7, a)]);
        assert_eq!(km.union(&mut ws, m2, m1), u);
        let left = km.minus(&mut ws, u, a).unwrap();
        assert_eq!(km.get(left), &[(3, b), (5, b)]);
        assert_eq!(km.minus(&mut ws, m1, ab), None);
        assert_eq!(km.minus(&mut ws, m1, EMPTY), Some(m1));
        let p = km
            .intern_pairs(&mut ws, &mut [(5, b), (3, a), (5, a), (9, EMPTY)])
            .unwrap();
        assert_eq!(km.get(p), &[(3, a), (5, ab)]);
        // Same continuations, other weights: one key set.
        let q = km.intern(&[(3, b), (5, b)]);
        assert_eq!(km.kset(p), km.kset(q));
        assert_eq!(km.kset(p), km.kset(m1));
        assert_ne!(km.kset(p), km.kset(m2));
    }
}
