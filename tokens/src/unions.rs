//! [`Unions`]: the unions of precomputed masks that expansions read together, learned from the
//! sets expanded and shared by every caller of one [`TokenClasses`](super::TokenClasses) (or
//! of one weighted automaton, whose expansion has groups of its own).
//!
//! A set's big classes are one precomputed mask per group (see `expand.rs`), so a set with big
//! classes in several groups reads several masks of the vocabulary's words in its pass. Most of
//! the trie masker's masks along Go files with Llama 3 read three (48 KiB), about a quarter of
//! the pass. But real masks meet few combinations of the groups' subsets (a dozen or so along
//! those 15 files, out of thousands possible), and which ones cannot be told from the sets
//! alive at lexer points. So a combination met a second time gets its union computed once (one
//! more pass over its masks, in that call) and every later pass reads that one mask instead:
//! on those masks `expand` takes 0.83–0.86 µs at p50 with the unions and 1.01–1.02 without
//! (`EXPAND_SETS`, see `benches/expand.rs`; without: [`MAX_UNION_BYTES`] set to 0).
//!
//! The table is fixed in size (at most [`MAX_UNION_BYTES`] of masks) and a slot, once filled,
//! keeps its union for good: no eviction, so readers need no lock, only the acquire load of a
//! [`OnceLock`]. Which combinations get slots depends on the order sets are met; the masks
//! written never do.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use super::kernels::combine;

/// The most bytes of learned unions per [`Unions`]: 64 masks at Llama 3's 128k tokens, 32 at
/// Gemma 3's 262k.
pub const MAX_UNION_BYTES: usize = 1 << 20;
/// The most slots (small vocabularies would otherwise get thousands).
const MAX_SLOTS: usize = 64;
/// Slots tried per key (open addressing) before giving up.
const PROBES: usize = 8;
/// Keys remembered as met once: [`WAYS`] per bucket of their hash, so that a few keys met in
/// turn that hash alike are all remembered (with one per bucket, two would evict each other
/// for good).
const SEEN: usize = 256;
const WAYS: usize = 4;

/// Learned unions of precomputed masks, keyed by which masks they are the OR of (see
/// [`Unions::get`]). `Clone`, `Default` and `PartialEq` treat it as the cache it is: a clone
/// and the default have learned nothing (the default has no room either), and any two are
/// equal.
pub struct Unions {
    /// A power of two of slots (or none).
    slots: Box<[OnceLock<Union>]>,
    /// Per bucket of [`WAYS`] entries, the fingerprints of keys met once and not yet given a
    /// slot (0: none; two keys of one fingerprint only share their admission).
    seen: Box<[AtomicU64]>,
}

struct Union {
    key: u128,
    mask: Box<[u32]>,
}

impl Unions {
    /// A table for masks of `word_len` words.
    pub fn new(word_len: usize) -> Unions {
        let fit = MAX_UNION_BYTES / word_len.saturating_mul(4).max(1);
        let slots = match fit.min(MAX_SLOTS) {
            0 => 0,
            n => 1 << n.ilog2(),
        };
        Unions {
            slots: (0..slots).map(|_| OnceLock::new()).collect(),
            seen: (0..SEEN).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// The OR of `sources` (at least two masks of the same length), if learned: `key` must
    /// name exactly that OR, whatever the order of `sources` (the caller's encoding, say a
    /// few bits per group of masks). The second call with a key learns it when a slot is
    /// free, computing the OR here.
    #[inline]
    pub fn get(&self, key: u128, sources: &[&[u32]]) -> Option<&[u32]> {
        debug_assert!(sources.len() >= 2);
        if self.slots.is_empty() {
            return None;
        }
        let (at, seen, print) = places(key);
        let mask = self.slots.len() - 1;
        for i in 0..PROBES.min(self.slots.len()) {
            let slot = &self.slots[(at + i) & mask];
            match slot.get() {
                Some(u) if u.key == key => return Some(&u.mask),
                Some(_) => continue,
                None => {
                    if !self.seen_before(seen, print) {
                        return None;
                    }
                    // Another thread may fill the slot first, maybe with another key.
                    let u = slot.get_or_init(|| {
                        let mut mask = vec![0u32; sources[0].len()].into_boxed_slice();
                        combine(&mut mask, sources, &[]);
                        Union { key, mask }
                    });
                    return (u.key == key).then_some(&u.mask);
                }
            }
        }
        None
    }

    /// Whether a key of fingerprint `print` was met before (then forgotten: it is given a
    /// slot), else remembers it in bucket `bucket`: in an empty entry, or over the one the
    /// fingerprint picks.
    fn seen_before(&self, bucket: usize, print: u64) -> bool {
        let ways = &self.seen[bucket * WAYS..(bucket + 1) * WAYS];
        if let Some(w) = ways.iter().find(|w| w.load(Ordering::Relaxed) == print) {
            // Another thread may have taken it already: either way the key is learned now.
            let _ = w.compare_exchange(print, 0, Ordering::Relaxed, Ordering::Relaxed);
            return true;
        }
        let empty = ways.iter().find(|w| w.load(Ordering::Relaxed) == 0);
        let w = empty.unwrap_or(&ways[(print >> 62) as usize % WAYS]);
        w.store(print, Ordering::Relaxed);
        false
    }

    /// How many unions are learned.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.get().is_some()).count()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes it holds on the heap (its learned masks included).
    pub fn heap_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<OnceLock<Union>>()
            + self.seen.len() * 8
            + self
                .slots
                .iter()
                .filter_map(|s| s.get())
                .map(|u| u.mask.len() * 4)
                .sum::<usize>()
    }
}

/// Where `key` is looked for: its first slot (modulo the slots), its bucket of `seen` and its
/// fingerprint there (never 0). Fibonacci hashing: each from other bits of one product, of
/// the key's halves folded.
#[inline]
fn places(key: u128) -> (usize, usize, u64) {
    let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
    let h = folded.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (
        (h >> 40) as usize,
        (h >> 20) as usize % (SEEN / WAYS),
        h | 1,
    )
}

/// A clone starts with nothing learned (what it learns is a cache).
impl Clone for Unions {
    fn clone(&self) -> Unions {
        Unions {
            slots: (0..self.slots.len()).map(|_| OnceLock::new()).collect(),
            seen: (0..SEEN).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl Default for Unions {
    fn default() -> Unions {
        Unions::new(usize::MAX)
    }
}

impl PartialEq for Unions {
    fn eq(&self, _: &Unions) -> bool {
        true
    }
}

impl Eq for Unions {}

impl std::fmt::Debug for Unions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unions")
            .field("slots", &self.slots.len())
            .field("learned", &self.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn or(sources: &[&[u32]]) -> Vec<u32> {
        (0..sources[0].len())
            .map(|i| sources.iter().fold(0, |v, s| v | s[i]))
            .collect()
    }

    #[test]
    fn a_key_is_learned_the_second_time_and_then_read() {
        let u = Unions::new(4);
        let (a, b, c) = ([1, 0, 4, 0], [2, 0, 0, 8], [0, 16, 0, 0]);
        assert_eq!(u.get(7, &[&a, &b]), None);
        assert_eq!(u.len(), 0);
        // Another key between the two does not stop it.
        assert_eq!(u.get(9, &[&a, &c]), None);
        assert_eq!(u.get(7, &[&a, &b]), Some(&or(&[&a, &b])[..]));
        assert_eq!(u.len(), 1);
        // Learned: read back without computing (the sources are not looked at).
        assert_eq!(u.get(7, &[&c, &c]), Some(&[3, 0, 4, 8][..]));
        assert_eq!(u.get(9, &[&a, &b, &c]), Some(&or(&[&a, &b, &c])[..]));
        assert_eq!(u.len(), 2);
        assert!(u.heap_bytes() >= 2 * 4 * 4);
        // A clone has learned nothing.
        assert_eq!(u.clone().len(), 0);
        assert_eq!(u.clone().get(7, &[&a, &b]), None);
    }

    /// Keys of one bucket met in turn are all learned the second time round (up to the
    /// bucket's ways), and leave the bucket for others.
    #[test]
    fn keys_that_hash_alike_are_learned_in_turn() {
        let u = Unions::new(4);
        let (a, b) = ([1u32; 4], [2u32; 4]);
        let bucket = places(1).1;
        let alike: Vec<u128> = (2..)
            .filter(|&k| places(k).1 == bucket)
            .take(WAYS)
            .collect();
        let keys: Vec<u128> = std::iter::once(1).chain(alike).collect();
        for k in &keys[..WAYS] {
            assert_eq!(u.get(*k, &[&a, &b]), None);
        }
        for k in &keys[..WAYS] {
            assert_eq!(u.get(*k, &[&a, &b]), Some(&[3u32; 4][..]), "key {k}");
        }
        assert_eq!(u.len(), WAYS);
        // The bucket is empty again (learned keys are forgotten there): a fifth key is
        // remembered and learned.
        let k = keys[WAYS];
        assert_eq!(u.get(k, &[&a, &b]), None);
        assert!(u
            .seen
            .iter()
            .any(|w| w.load(Ordering::Relaxed) == places(k).2));
        assert_eq!(u.get(k, &[&a, &b]), Some(&[3u32; 4][..]));
        assert!(u.seen.iter().all(|w| w.load(Ordering::Relaxed) == 0));
    }

    #[test]
    fn the_table_holds_at_most_its_budget() {
        // Masks of a quarter of the budget: four slots.
        let word_len = MAX_UNION_BYTES / 16;
        let u = Unions::new(word_len);
        assert_eq!(u.slots.len(), 4);
        let (a, b) = (vec![1u32; word_len], vec![2u32; word_len]);
        for key in 1..=40u128 {
            let _ = u.get(key, &[&a, &b]);
            let _ = u.get(key, &[&a, &b]);
        }
        assert_eq!(u.len(), 4);
        assert!(u.heap_bytes() <= MAX_UNION_BYTES + 4096);
        let learned = (1..=40u64)
            .filter(|&k| u.get(k as u128, &[&a, &b]).is_some())
            .count();
        assert_eq!(learned, 4);
        // Masks bigger than the budget: no slots, nothing learned.
        let u = Unions::new(MAX_UNION_BYTES);
        assert_eq!(u.slots.len(), 0);
        assert_eq!(u.get(1, &[&[1], &[2]]), None);
        assert_eq!(u.get(1, &[&[1], &[2]]), None);
        let u = Unions::default();
        assert_eq!(u.slots.len(), 0);
        assert_eq!(u.get(1, &[&[1], &[2]]), None);
        assert_eq!(u.get(1, &[&[1], &[2]]), None);
        assert!(u.is_empty());
    }

    #[test]
    fn threads_share_what_is_learned() {
        let u = Unions::new(8);
        let (a, b) = ([1u32; 8], [6u32; 8]);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..100 {
                        if let Some(m) = u.get(5, &[&a, &b]) {
                            assert_eq!(m, &[7u32; 8]);
                        }
                    }
                });
            }
        });
        assert_eq!(u.len(), 1);
        assert_eq!(u.get(5, &[&a, &b]), Some(&[7u32; 8][..]));
    }
}
