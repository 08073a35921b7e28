//! Blocks: token classes the automaton never tells apart.
//!
//! Token classes come from lexical behaviour at every lexer point; the automaton's weights only
//! distinguish the classes some stack treats differently. Two classes that belong to exactly
//! the same weights are allowed or refused together on every stack, so the compiled tables
//! work on *blocks* of such classes: fewer bits per set, and far fewer runs to expand (the
//! members of a block that share a mask word are one run). Classes in no weight at all are in
//! no block: they are never allowed.
//!
//! The partition is computed by refinement, one weight at a time, like the classes themselves.

use crate::bits::iter_bits;

/// The partition of the classes into blocks.
pub(crate) struct Blocks {
    /// Per class: its block, or `u32::MAX` when no weight holds it.
    pub(crate) block_of: Vec<u32>,
    /// Number of blocks.
    pub(crate) len: usize,
}

const NONE: u32 = u32::MAX;

/// Refines the classes by membership in every weight (`weights`: `words`-word class sets).
pub(crate) fn partition(class_len: usize, words: usize, weights: &[u64]) -> Blocks {
    // Block 0: not seen in any weight yet. Every class a weight holds moves to a fresh id per
    // (weight, old block), so classes keep sharing an id iff they were in the same weights.
    let mut block_of: Vec<u32> = vec![0; class_len];
    let mut next = 1u32;
    // Per old block: the weight that last moved it (`seen`), and where to (`to`). Blocks only
    // grow in number (at most one per class and weight), so both grow as they are made.
    let mut seen: Vec<u32> = vec![NONE];
    let mut to: Vec<u32> = vec![0];
    for (i, w) in weights.chunks(words.max(1)).enumerate() {
        let i = i as u32;
        for c in iter_bits(w) {
            if c >= class_len {
                break;
            }
            let old = block_of[c] as usize;
            if seen[old] != i {
                seen[old] = i;
                to[old] = next;
                seen.push(NONE);
                to.push(0);
                next += 1;
            }
            block_of[c] = to[old];
        }
    }
    // Renumber densely in order of first class; block 0 (in no weight) goes away.
    let mut renum: Vec<u32> = vec![NONE; next as usize];
    let mut len = 0u32;
    for b in block_of.iter_mut() {
        if *b == 0 {
            *b = NONE;
            continue;
        }
        if renum[*b as usize] == NONE {
            renum[*b as usize] = len;
            len += 1;
        }
        *b = renum[*b as usize];
    }
    Blocks {
        block_of,
        len: len as usize,
    }
}

impl Blocks {
    /// `weights` (class sets of `words` words) as block sets.
    pub(crate) fn remap(&self, words: usize, weights: &[u64]) -> Vec<u64> {
        let bwords = self.len.div_ceil(64).max(1);
        let mut out = Vec::with_capacity(weights.len() / words.max(1) * bwords);
        for w in weights.chunks(words.max(1)) {
            let at = out.len();
            out.resize(at + bwords, 0);
            for c in iter_bits(w) {
                let b = self.block_of.get(c).copied().unwrap_or(NONE);
                if b != NONE {
                    out[at + b as usize / 64] |= 1 << (b % 64);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_in_the_same_weights_share_a_block() {
        // Classes 0..6; weights {0,1,2}, {1,2,3}, {5}: blocks {0}, {1,2}, {3}, {5}; 4 in none.
        let weights: Vec<u64> = vec![0b000111, 0b001110, 0b100000];
        let b = partition(6, 1, &weights);
        assert_eq!(b.len, 4);
        assert_eq!(b.block_of[1], b.block_of[2]);
        assert_ne!(b.block_of[0], b.block_of[1]);
        assert_ne!(b.block_of[3], b.block_of[1]);
        assert_eq!(b.block_of[4], NONE);
        let remapped = b.remap(1, &weights);
        let bits = |w: u64| (0..4).filter(|i| w >> i & 1 != 0).count();
        assert_eq!(
            remapped.iter().map(|&w| bits(w)).collect::<Vec<_>>(),
            vec![2, 2, 1]
        );
    }
}
