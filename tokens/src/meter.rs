//! [`Meter`]: the bytes a spans build holds, charged against
//! [`SpansConfig::max_bytes`](super::SpansConfig::max_bytes) before they are allocated.
//!
//! Every table of the build whose size depends on the input (the lexer, the vocabulary, the
//! behaviours a walk meets) is charged at its capacity before it is allocated or grown, and
//! released when it is freed, so what the build holds never exceeds the budget by more than a
//! few fixed-size buffers: a build that would need more stops with
//! [`SpansBudget::Bytes`](super::SpansBudget::Bytes) as soon as the charge fails, before the
//! memory is taken. The threads of one build share one meter.
//!
//! Growth follows `Vec`'s own doubling, made explicit so that the new capacity is known (and
//! charged) before the reallocation.

use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};

use ahash::AHashMap;

use super::error::{SpansBudget, SpansBuildError};

/// Bytes held by one build, and their limit.
#[derive(Debug)]
pub(crate) struct Meter {
    held: AtomicUsize,
    peak: AtomicUsize,
    limit: usize,
}

impl Meter {
    /// A meter with nothing held, refusing past `limit` bytes.
    pub(crate) const fn new(limit: usize) -> Self {
        Meter {
            held: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            limit,
        }
    }

    /// The error a failed charge returns.
    pub(crate) fn exceeded(&self) -> SpansBuildError {
        SpansBuildError::new(SpansBudget::Bytes, self.limit as u64)
    }

    /// Takes `bytes` more, or fails (taking nothing) if that would pass the limit.
    pub(crate) fn charge(&self, bytes: usize) -> Result<(), SpansBuildError> {
        if self.try_charge(bytes) {
            Ok(())
        } else {
            Err(self.exceeded())
        }
    }

    /// [`charge`](Meter::charge), answering whether it was taken.
    pub(crate) fn try_charge(&self, bytes: usize) -> bool {
        let before = self.held.fetch_add(bytes, Ordering::Relaxed);
        match before.checked_add(bytes) {
            Some(after) if after <= self.limit => {
                self.peak.fetch_max(after, Ordering::Relaxed);
                true
            }
            _ => {
                self.held.fetch_sub(bytes, Ordering::Relaxed);
                false
            }
        }
    }

    /// Gives back `bytes` taken earlier.
    pub(crate) fn release(&self, bytes: usize) {
        self.held.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// The most bytes held at once so far.
    pub(crate) fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// `n` copies of `value`, charged first.
    pub(crate) fn vec<T: Clone>(&self, n: usize, value: T) -> Result<Vec<T>, SpansBuildError> {
        self.charge(vec_bytes::<T>(n))?;
        Ok(vec![value; n])
    }

    /// An empty vector with room for `n`, charged first.
    pub(crate) fn with_capacity<T>(&self, n: usize) -> Result<Vec<T>, SpansBuildError> {
        self.charge(vec_bytes::<T>(n))?;
        Ok(Vec::with_capacity(n))
    }

    /// Makes room for `additional` more elements in `v`, charging the growth first (at least
    /// doubling, as `Vec` does, so pushes stay amortised O(1)).
    #[inline]
    pub(crate) fn reserve<T>(
        &self,
        v: &mut Vec<T>,
        additional: usize,
    ) -> Result<(), SpansBuildError> {
        if v.capacity() - v.len() >= additional {
            return Ok(());
        }
        self.grow(v, additional)
    }

    #[inline(never)]
    fn grow<T>(&self, v: &mut Vec<T>, additional: usize) -> Result<(), SpansBuildError> {
        let need = v.len().saturating_add(additional);
        let cap = need.max(v.capacity().saturating_mul(2)).max(4);
        self.charge(vec_bytes::<T>(cap - v.capacity()))?;
        v.reserve_exact(cap - v.len());
        Ok(())
    }

    /// Pushes `x` onto `v`, charging any growth first.
    #[inline]
    pub(crate) fn push<T>(&self, v: &mut Vec<T>, x: T) -> Result<(), SpansBuildError> {
        self.reserve(v, 1)?;
        v.push(x);
        Ok(())
    }

    /// Frees `v`, giving back its capacity.
    pub(crate) fn free<T>(&self, v: Vec<T>) {
        self.release(vec_bytes::<T>(v.capacity()));
    }

    /// Shrinks `v` to its length, giving back the rest.
    pub(crate) fn shrink<T>(&self, v: &mut Vec<T>) {
        let before = v.capacity();
        v.shrink_to_fit();
        self.release(vec_bytes::<T>(before - v.capacity()));
    }

    /// Makes room for `additional` more entries in `map`, charging the growth of its table
    /// first.
    #[inline]
    pub(crate) fn reserve_map<K: Eq + Hash, V>(
        &self,
        map: &mut AHashMap<K, V>,
        additional: usize,
    ) -> Result<(), SpansBuildError> {
        if map.capacity() - map.len() >= additional {
            return Ok(());
        }
        let before = map_bytes::<K, V>(map.capacity());
        let want = map.len().saturating_add(additional);
        let after = map_bytes::<K, V>(want.max(map.capacity().saturating_mul(2)));
        self.charge(after.saturating_sub(before))?;
        map.reserve(additional);
        // The table may round differently from the estimate: keep the charge exact.
        let now = map_bytes::<K, V>(map.capacity());
        if now > after {
            self.charge(now - after)?;
        } else {
            self.release(after - now);
        }
        Ok(())
    }

    /// Frees `map`, giving back its table.
    pub(crate) fn free_map<K, V>(&self, map: AHashMap<K, V>) {
        self.release(map_bytes::<K, V>(map.capacity()));
    }
}

/// The bytes of a vector with capacity `n`.
#[inline]
pub(crate) fn vec_bytes<T>(n: usize) -> usize {
    n.saturating_mul(std::mem::size_of::<T>())
}

/// The bytes of a hash table with room for `capacity` entries: buckets of the entry plus a
/// control byte, a power of two at most 8/7 of the capacity (as `hashbrown` lays them out).
pub(crate) fn map_bytes<K, V>(capacity: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 8 {
        (capacity + 1).next_power_of_two()
    } else {
        capacity
            .saturating_mul(8)
            .div_ceil(7)
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX)
    };
    buckets.saturating_mul(std::mem::size_of::<(K, V)>() + 1)
}

/// The bytes of `map`'s table.
pub(crate) fn map_heap_bytes<K, V>(map: &AHashMap<K, V>) -> usize {
    map_bytes::<K, V>(map.capacity())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_fail_past_the_limit_and_take_nothing() {
        let m = Meter::new(100);
        m.charge(60).unwrap();
        assert_eq!(m.charge(41).unwrap_err().budget(), SpansBudget::Bytes);
        m.charge(40).unwrap();
        m.release(50);
        assert_eq!(m.peak(), 100);
        m.charge(50).unwrap();
        assert!(!m.try_charge(1));
    }

    #[test]
    fn growth_is_charged_at_capacity() {
        let m = Meter::new(1 << 20);
        let mut v: Vec<u64> = Vec::new();
        for i in 0..1000 {
            m.push(&mut v, i).unwrap();
        }
        assert_eq!(m.held.load(Ordering::Relaxed), v.capacity() * 8);
        m.shrink(&mut v);
        assert_eq!(m.held.load(Ordering::Relaxed), v.capacity() * 8);
        m.free(v);
        assert_eq!(m.held.load(Ordering::Relaxed), 0);

        let mut map: AHashMap<u64, u32> = AHashMap::new();
        for i in 0..1000 {
            m.reserve_map(&mut map, 1).unwrap();
            map.insert(i, 0);
        }
        assert_eq!(m.held.load(Ordering::Relaxed), map_heap_bytes(&map));
        m.free_map(map);
        assert_eq!(m.held.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_vector_past_the_limit_is_never_allocated() {
        let m = Meter::new(1000);
        assert!(m.vec(1 << 40, 0u8).is_err());
        assert!(m.with_capacity::<u64>(126).is_err());
        assert!(m.with_capacity::<u64>(125).is_ok());
    }
}
