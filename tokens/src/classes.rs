//! [`TokenClasses`]: the partition of a vocabulary's text tokens into lexically equivalent
//! classes, its refinement, and the expansion of a [`ClassSet`] into token-mask words.

use std::sync::OnceLock;

use ahash::AHashMap;

use super::error::{SpansBudget, SpansBuildError};
use super::expand::{ExpandCache, Expander};
use super::meter::{vec_bytes, Meter};
use super::{ClassId, ClassSet, SpansConfig};
use munch_lexer::Lexer;
use munch_vocab::TokenId;
use munch_vocab::Vocabulary;

const NONE: u32 = u32::MAX;

/// The classes of a vocabulary's text tokens: tokens that realise the same span from every
/// lexer point (see the [module docs](super)). Special tokens and ids with no bytes are in no
/// class.
///
/// Classes are numbered by their lowest member: class 0 holds the lowest text token id, and
/// `representative(c) < representative(c + 1)`.
#[derive(Clone, Debug)]
pub struct TokenClasses {
    vocab_len: usize,
    /// Per token id: its class, or [`NONE`].
    class_of: Vec<u32>,
    /// `members[member_start[c]..member_start[c + 1]]`, ascending.
    member_start: Vec<u32>,
    members: Vec<TokenId>,
    /// The expansion engine, built at the first expansion: a masker that expands through
    /// tables of its own (the wda, over its blocks) never pays for it.
    patterns: OnceLock<Expander>,
    /// The sets of classes alive at lexer points, the expansion's hints (`None`: the classes
    /// are never expanded, no tables).
    alive: Option<Vec<ClassSet>>,
}

impl TokenClasses {
    /// The classes given each token's class (`NONE` for tokens in none), numbered by lowest
    /// member already, and the distinct sets of classes alive from some lexer point; every
    /// table charged to `meter`. The expansion's tables are built at the first expansion,
    /// after the build: what they may take ([`Expander::bound_bytes`]) is charged now.
    pub(super) fn from_class_of(
        vocab_len: usize,
        class_of: Vec<u32>,
        len: usize,
        alive: Option<&[ClassSet]>,
        meter: &Meter,
    ) -> Result<Self, SpansBuildError> {
        let token_len = class_of.iter().filter(|&&c| c != NONE).count();
        meter.charge(vec_bytes::<u32>(2 * (len + 1) + token_len))?;
        let mut member_start = vec![0u32; len + 1];
        for &c in &class_of {
            if c != NONE {
                member_start[c as usize + 1] += 1;
            }
        }
        for c in 0..len {
            member_start[c + 1] += member_start[c];
        }
        let mut fill = member_start.clone();
        let mut members = vec![TokenId::default(); member_start[len] as usize];
        for (t, &c) in class_of.iter().enumerate() {
            if c != NONE {
                members[fill[c as usize] as usize] = TokenId::from_usize(t);
                fill[c as usize] += 1;
            }
        }
        meter.release(vec_bytes::<u32>(len + 1));
        let partition = Partition {
            class_of,
            member_start,
            members,
            representative: Vec::new(),
        };
        TokenClasses::from_partition(vocab_len, partition, alive, meter)
    }

    /// The classes of `partition` (its tables already charged to `meter`), with the distinct
    /// sets of classes alive from some lexer point; what the expansion may take
    /// ([`Expander::bound_bytes`]) is charged now.
    pub(super) fn from_partition(
        vocab_len: usize,
        partition: Partition,
        alive: Option<&[ClassSet]>,
        meter: &Meter,
    ) -> Result<Self, SpansBuildError> {
        let Partition {
            class_of,
            member_start,
            members,
            representative,
        } = partition;
        meter.free(representative);
        let len = member_start.len() - 1;
        let expansion = alive.map_or(0, |alive| {
            let hints: usize = alive
                .iter()
                .map(|a| vec_bytes::<u64>(a.words().len()))
                .sum();
            hints + Expander::bound_bytes(vocab_len, members.len(), len, alive.len())
        });
        meter.charge(expansion)?;
        Ok(TokenClasses {
            vocab_len,
            class_of,
            member_start,
            members,
            patterns: OnceLock::new(),
            alive: alive.map(<[ClassSet]>::to_vec),
        })
    }

    /// Builds the expansion tables now rather than at the first
    /// [`expand`](TokenClasses::expand): for a masker that expands every mask, so that its
    /// first mask does not pay for them (a few milliseconds on SynCode's Go with Llama 3). A
    /// masker with tables of its own (the wda) never calls it and never pays.
    pub fn prepare_expansion(&self) {
        self.patterns();
    }

    /// The expansion engine, built now if no expansion has been asked for yet.
    fn patterns(&self) -> &Expander {
        self.patterns.get_or_init(|| match &self.alive {
            Some(alive) => Expander::new(self.vocab_len, &self.member_start, &self.members, alive),
            None => Expander::default(),
        })
    }

    /// The classes of `vocab`'s text tokens under `lexer`: the same partition as
    /// [`TokenSpans::build`](super::TokenSpans::build)'s, without the span tables (for a
    /// masker that needs only the classes; about half the time).
    ///
    /// Errors: a budget of `config` exceeded ([`SpansBuildError`] names it; `max_spans` is not
    /// used).
    pub fn build(
        lexer: &Lexer,
        vocab: &Vocabulary,
        config: &SpansConfig,
    ) -> Result<TokenClasses, SpansBuildError> {
        super::build_classes(lexer, vocab, config)
    }

    /// The number of classes.
    #[inline]
    pub fn len(&self) -> usize {
        self.member_start.len() - 1
    }

    /// Whether there is no class (the vocabulary has no text token).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of token ids the classes were built for ([`Vocabulary::len`]).
    #[inline]
    pub fn vocab_len(&self) -> usize {
        self.vocab_len
    }

    /// The number of tokens in some class (the vocabulary's text tokens).
    #[inline]
    pub fn token_len(&self) -> usize {
        self.members.len()
    }

    /// The class of `t`; `None` for special tokens, ids with no bytes and ids out of range.
    #[inline]
    pub fn class_of(&self, t: TokenId) -> Option<ClassId> {
        match self.class_of.get(t.as_usize()) {
            Some(&c) if c != NONE => Some(ClassId::from_usize(c as usize)),
            _ => None,
        }
    }

    /// The members of `c`, ascending. Panics if `c` is out of range.
    #[inline]
    pub fn members(&self, c: ClassId) -> &[TokenId] {
        let i = c.as_usize();
        &self.members[self.member_start[i] as usize..self.member_start[i + 1] as usize]
    }

    /// The lowest member of `c`. Panics if `c` is out of range.
    #[inline]
    pub fn representative(&self, c: ClassId) -> TokenId {
        self.members(c)[0]
    }

    /// An empty set over these classes.
    pub fn empty_set(&self) -> ClassSet {
        ClassSet::new(self.len())
    }

    /// The number of `u32` words of a token mask over [`vocab_len`](TokenClasses::vocab_len)
    /// ids.
    #[inline]
    pub fn word_len(&self) -> usize {
        self.vocab_len.div_ceil(32)
    }

    /// Writes the token mask of `classes` into `words`: exactly the members' bits set, every
    /// other bit cleared (special tokens and EOS too: the caller sets EOS afterwards). Token
    /// `t` is bit `t % 32` of word `t / 32`, the layout of `munch_glr::mask::TokenMask`.
    ///
    /// Costs about one vectorised pass over the words, ORing or clearing the precomputed
    /// masks of the few largest classes (at most one mask per group of 4 of them), plus one
    /// store per word of each smaller class in the set or, when that is cheaper, of each
    /// smaller class not in it (see `spans/expand.rs`).
    ///
    /// # Panics
    /// If `words.len()` is not [`word_len`](TokenClasses::word_len) or `classes` is not over
    /// [`len`](TokenClasses::len) classes.
    pub fn expand(&self, classes: &ClassSet, words: &mut [u32]) {
        assert_eq!(
            words.len(),
            self.word_len(),
            "mask words for another vocabulary"
        );
        assert_eq!(classes.len(), self.len(), "class set for other classes");
        self.patterns().expand(classes.words(), words);
    }

    /// [`expand`](TokenClasses::expand), starting from the nearest of the recent expansions
    /// in `cache` when that is cheaper (a repeated set costs one copy of the words), and
    /// remembering this one. Same result, same panics.
    pub fn expand_cached(&self, cache: &mut ExpandCache, classes: &ClassSet, words: &mut [u32]) {
        assert_eq!(
            words.len(),
            self.word_len(),
            "mask words for another vocabulary"
        );
        assert_eq!(classes.len(), self.len(), "class set for other classes");
        self.patterns().expand_cached(cache, classes.words(), words);
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.class_of.capacity() * 4
            + self.member_start.capacity() * 4
            + self.members.capacity() * 4
            + self.patterns.get().map_or(0, Expander::heap_bytes)
            + self
                .alive
                .iter()
                .flatten()
                .map(|a| a.words().len() * 8)
                .sum::<usize>()
    }
}

/// A refinement's final classes by token id ([`Refiner::finish_ids`]), numbered by lowest
/// member.
pub(super) struct Partition {
    /// Per token id: its class, or [`NONE`] for ids with no bytes.
    pub(super) class_of: Vec<u32>,
    /// `members[member_start[c]..member_start[c + 1]]`: the members of class `c`, ascending.
    pub(super) member_start: Vec<u32>,
    pub(super) members: Vec<TokenId>,
    /// Per class: its lowest member's token number.
    pub(super) representative: Vec<u32>,
}

/// Partition refinement of the text tokens: starts with one class and splits classes by a key
/// per token, one key vector (one block of points) at a time. Tokens are numbered densely in
/// id order (the walk's [`TextIndex`](super::walk::TextIndex)), so classes numbered by their
/// lowest number are numbered by their lowest id.
pub(super) struct Refiner<'m> {
    /// Per token number: its current class.
    class_of: Vec<u32>,
    len: usize,
    max_classes: usize,
    /// Per class: the round it was last seen in and the key its first member had then; that
    /// key keeps the class's id and other keys split off, so a class that does not split
    /// costs no hashing.
    seen: Vec<(u32, u32)>,
    round: u32,
    split: AHashMap<(u32, u32), u32>,
    /// Per class: the class it split from (itself for the first): a class made after a
    /// refinement round behaves in that round as its ancestor made before it.
    parent: Vec<u32>,
    meter: &'m Meter,
}

impl<'m> Refiner<'m> {
    /// One class of `text_len` tokens (none if there are no tokens), charged to `meter`.
    pub(super) fn new(
        text_len: usize,
        max_classes: usize,
        meter: &'m Meter,
    ) -> Result<Refiner<'m>, SpansBuildError> {
        let len = usize::from(text_len > 0);
        if len > max_classes {
            return Err(SpansBuildError::new(
                SpansBudget::Classes,
                max_classes as u64,
            ));
        }
        Ok(Refiner {
            class_of: meter.vec(text_len, 0)?,
            len,
            max_classes,
            seen: meter.vec(len, (u32::MAX, 0))?,
            round: 0,
            split: AHashMap::new(),
            parent: meter.vec(len, 0)?,
            meter,
        })
    }

    /// Splits every class by `key[t]` (indexed by token number).
    pub(super) fn refine(&mut self, key: &[u32]) -> Result<(), SpansBuildError> {
        self.split.clear();
        let round = self.round;
        self.round += 1;
        // The last token's class and key, and where they went: tokens come in the trie's
        // order, where neighbours mostly share both (a subtree the walk gave one behaviour), and
        // a repeated pair goes where it went before.
        let mut last = (u32::MAX, 0, 0);
        for (c, &k) in self.class_of.iter_mut().zip(key) {
            if (*c, k) == (last.0, last.1) {
                *c = last.2;
                continue;
            }
            let from = *c;
            let seen = &mut self.seen[*c as usize];
            if seen.0 != round {
                *seen = (round, k);
            } else if seen.1 != k {
                // One probe for a split already made (most tokens of a split class).
                *c = match self.split.get(&(*c, k)) {
                    Some(&new) => new,
                    None => {
                        let next = self.len as u32;
                        self.meter.reserve_map(&mut self.split, 1)?;
                        self.split.insert((*c, k), next);
                        self.len += 1;
                        if self.len > self.max_classes {
                            return Err(SpansBuildError::new(
                                SpansBudget::Classes,
                                self.max_classes as u64,
                            ));
                        }
                        self.meter.push(&mut self.seen, (round, k))?;
                        self.meter.push(&mut self.parent, *c)?;
                        next
                    }
                };
            }
            last = (from, k, *c);
        }
        Ok(())
    }

    /// Per token number: its current class (a key for another refiner).
    pub(super) fn classes(&self) -> &[u32] {
        &self.class_of
    }

    /// [`refine`](Refiner::refine) by `key`, then each class's key (all its members have
    /// the same one now), charged to the meter.
    pub(super) fn refine_keyed(&mut self, key: &[u32]) -> Result<Vec<u32>, SpansBuildError> {
        self.refine(key)?;
        let mut keys = self.meter.vec(self.len, 0u32)?;
        for (&c, &k) in self.class_of.iter().zip(key) {
            keys[c as usize] = k;
        }
        Ok(keys)
    }

    /// Per class of the final partition (numbered as [`finish`](Refiner::finish) numbers
    /// them), its key in a round of [`refine_keyed`](Refiner::refine_keyed) that returned
    /// `keys` (one per class then). `scratch` is the caller's (kept across calls).
    pub(super) fn final_keys(
        &self,
        renumber: &[u32],
        keys: &[u32],
        scratch: &mut Vec<u32>,
    ) -> Result<Vec<u32>, SpansBuildError> {
        let meter = self.meter;
        meter.reserve(scratch, self.len.saturating_sub(scratch.len()))?;
        scratch.clear();
        // A class's parent has a lower id, so one pass in id order resolves every class.
        for c in 0..self.len {
            let k = match keys.get(c) {
                Some(&k) => k,
                None => scratch[self.parent[c] as usize],
            };
            scratch.push(k);
        }
        let mut out = meter.vec(self.len, 0u32)?;
        for (&k, &r) in scratch.iter().zip(renumber) {
            out[r as usize] = k;
        }
        Ok(out)
    }

    /// The final numbering: per class, its number by lowest member ([`finish`](Refiner::finish)'s),
    /// charged to the meter. `id_order` lists the token numbers in ascending id order.
    pub(super) fn renumbering(&self, id_order: &[u32]) -> Result<Vec<u32>, SpansBuildError> {
        let mut renumber = self.meter.vec(self.len, NONE)?;
        let mut next = 0u32;
        for &t in id_order {
            let r = &mut renumber[self.class_of[t as usize] as usize];
            if *r == NONE {
                *r = next;
                next += 1;
            }
        }
        Ok(renumber)
    }

    /// The final partition by token id, classes numbered by lowest member as
    /// [`finish`](Refiner::finish) numbers them: `ids` gives each token number's id, over
    /// `vocab_len` ids. One pass in number order lays the classes out by id and finds their
    /// lowest members, one in id order numbers and counts them, and a third fills the members;
    /// the refiner's tables are given back to the meter.
    pub(super) fn finish_ids(
        self,
        ids: &[TokenId],
        vocab_len: usize,
    ) -> Result<Partition, SpansBuildError> {
        let meter = self.meter;
        // Per class as the refiner numbers it: its lowest member's id and number. The tokens
        // are read in their numbers' order and laid out by id (one scattered write each).
        let mut lowest = meter.vec(self.len, (u32::MAX, 0u32))?;
        let mut class_of = meter.vec(vocab_len, NONE)?;
        for (t, (&c, &id)) in self.class_of.iter().zip(ids).enumerate() {
            class_of[id.as_usize()] = c;
            let low = &mut lowest[c as usize];
            if id.as_u32() < low.0 {
                *low = (id.as_u32(), t as u32);
            }
        }
        // In id order: the classes numbered by lowest member, and counted.
        let mut renumber = meter.vec(self.len, NONE)?;
        let mut representative = meter.with_capacity(self.len)?;
        let mut member_start = meter.vec(self.len + 1, 0u32)?;
        for c in class_of.iter_mut().filter(|c| **c != NONE) {
            let r = &mut renumber[*c as usize];
            if *r == NONE {
                *r = representative.len() as u32;
                representative.push(lowest[*c as usize].1);
            }
            *c = *r;
            member_start[*r as usize + 1] += 1;
        }
        for c in 0..self.len {
            member_start[c + 1] += member_start[c];
        }
        let mut fill = meter.vec(self.len, 0u32)?;
        fill.copy_from_slice(&member_start[..self.len]);
        let mut members = meter.vec(ids.len(), TokenId::default())?;
        for (id, &c) in class_of.iter().enumerate() {
            if c != NONE {
                members[fill[c as usize] as usize] = TokenId::from_usize(id);
                fill[c as usize] += 1;
            }
        }
        meter.free(fill);
        meter.free(renumber);
        meter.free(lowest);
        self.free();
        Ok(Partition {
            class_of,
            member_start,
            members,
            representative,
        })
    }

    /// Frees the refiner, giving its tables back to the meter.
    pub(super) fn free(self) {
        self.meter.free(self.class_of);
        self.meter.free(self.seen);
        self.meter.free(self.parent);
        self.meter.free_map(self.split);
    }

    /// The final partition, classes renumbered by lowest member (`id_order`: the token
    /// numbers in ascending id order): (class per token number, number of classes). The
    /// refiner's other tables are given back to the meter.
    pub(super) fn finish(self, id_order: &[u32]) -> Result<(Vec<u32>, usize), SpansBuildError> {
        let renumber = self.renumbering(id_order)?;
        let meter = self.meter;
        let mut class_of = self.class_of;
        for c in class_of.iter_mut() {
            *c = renumber[*c as usize];
        }
        meter.free(renumber);
        meter.free(self.seen);
        meter.free(self.parent);
        meter.free_map(self.split);
        Ok((class_of, self.len))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use munch_testkit::generate::XorShift;

    use super::*;

    /// The refinement as stated: per round, in token order, a class keeps its id for the key
    /// its first token has, and each other key of it gets the next id at its first token.
    fn refined(len: usize, rounds: &[Vec<u32>]) -> Vec<u32> {
        let mut class_of = vec![0u32; len];
        let mut classes = u32::from(len > 0);
        for key in rounds {
            let mut first: HashMap<u32, u32> = HashMap::new();
            let mut split: HashMap<(u32, u32), u32> = HashMap::new();
            for (c, &k) in class_of.iter_mut().zip(key) {
                let kept = *first.entry(*c).or_insert(k);
                if kept != k {
                    *c = *split.entry((*c, k)).or_insert_with(|| {
                        classes += 1;
                        classes - 1
                    });
                }
            }
        }
        class_of
    }

    #[test]
    fn refining_numbers_classes_as_the_rounds_state_them() {
        let mut rng = XorShift(0x7265_6669_6e65_7231);
        let meter = Meter::new(1 << 30);
        for len in [0, 1, 7, 300, 2000] {
            // Keys in runs, as a walk's behaviours come in the trie's order, and sometimes a
            // class's first key again after a run of others.
            let rounds: Vec<Vec<u32>> = (0..4)
                .map(|_| {
                    let mut key = Vec::with_capacity(len);
                    while key.len() < len {
                        let k = rng.below(5) as u32;
                        let run = 1 + rng.below(9);
                        key.extend(std::iter::repeat_n(k, run.min(len - key.len())));
                    }
                    key
                })
                .collect();
            let mut refiner = Refiner::new(len, usize::MAX, &meter).unwrap();
            for key in &rounds {
                refiner.refine(key).unwrap();
            }
            assert_eq!(refiner.classes(), refined(len, &rounds), "{len} tokens");
        }
    }

    #[test]
    fn the_partition_by_id_is_the_finished_partition_laid_out_by_id() {
        let mut rng = XorShift(0x6669_6e69_7368_6964);
        let meter = Meter::new(1 << 30);
        for len in [0, 1, 9, 500] {
            let rounds: Vec<Vec<u32>> = (0..3)
                .map(|_| (0..len).map(|_| rng.below(4) as u32).collect())
                .collect();
            // Token numbers in some order other than ids', and ids with gaps between them.
            let mut ids: Vec<TokenId> = (0..len).map(|t| TokenId::from_usize(3 * t + 1)).collect();
            for i in (1..len).rev() {
                ids.swap(i, rng.below(i + 1));
            }
            let mut id_order: Vec<u32> = (0..len as u32).collect();
            id_order.sort_by_key(|&t| ids[t as usize]);
            let vocab_len = 3 * len + 2;
            let refined = || {
                let mut refiner = Refiner::new(len, usize::MAX, &meter).unwrap();
                for key in &rounds {
                    refiner.refine(key).unwrap();
                }
                refiner
            };
            let (class_of, class_len) = refined().finish(&id_order).unwrap();
            let mut by_id = vec![NONE; vocab_len];
            for (t, &c) in class_of.iter().enumerate() {
                by_id[ids[t].as_usize()] = c;
            }
            let plain =
                TokenClasses::from_class_of(vocab_len, by_id, class_len, None, &meter).unwrap();
            let got = refined().finish_ids(&ids, vocab_len).unwrap();
            assert_eq!(got.class_of, plain.class_of, "{len} tokens");
            assert_eq!(got.member_start, plain.member_start, "{len} tokens");
            assert_eq!(got.members, plain.members, "{len} tokens");
            let lowest: Vec<u32> = (0..class_len)
                .map(|c| {
                    let first = plain.members(ClassId::from_usize(c))[0];
                    ids.iter().position(|&t| t == first).unwrap() as u32
                })
                .collect();
            assert_eq!(got.representative, lowest, "{len} tokens");
        }
    }
}
