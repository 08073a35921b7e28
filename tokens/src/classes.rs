//! [`TokenClasses`]: the partition of a vocabulary's text tokens into lexically equivalent
//! classes, its refinement, and the expansion of a [`ClassSet`] into token-mask words.

use ahash::AHashMap;

use super::error::{SpansBudget, SpansBuildError};
use super::expand::{ExpandCache, Expander};
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
    patterns: Expander,
}

impl TokenClasses {
    /// The classes given each token's class (`NONE` for tokens in none), numbered by lowest
    /// member already, and the distinct sets of classes alive from some lexer point.
    pub(super) fn from_class_of(
        vocab_len: usize,
        class_of: Vec<u32>,
        len: usize,
        alive: &[ClassSet],
    ) -> Self {
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
        let patterns = Expander::new(vocab_len, &member_start, &members, alive);
        TokenClasses {
            vocab_len,
            class_of,
            member_start,
            members,
            patterns,
        }
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
        self.patterns.expand(classes.words(), words);
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
        self.patterns.expand_cached(cache, classes.words(), words);
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.class_of.capacity() * 4
            + self.member_start.capacity() * 4
            + self.members.capacity() * 4
            + self.patterns.heap_bytes()
    }
}

/// Partition refinement of the text tokens: starts with one class and splits classes by a key
/// per token, one key vector (one block of points) at a time.
pub(super) struct Refiner {
    /// Per token id: its current class, or [`NONE`].
    class_of: Vec<u32>,
    len: usize,
    max_classes: usize,
    /// Per class: the round it was last seen in and the key its first member had then; that
    /// key keeps the class's id and other keys split off, so a class that does not split
    /// costs no hashing.
    seen: Vec<(u32, u32)>,
    round: u32,
    split: AHashMap<(u32, u32), u32>,
}

impl Refiner {
    pub(super) fn new(vocab: &Vocabulary, max_classes: usize) -> Result<Refiner, SpansBuildError> {
        let class_of: Vec<u32> = (0..vocab.len())
            .map(|t| match vocab.token_bytes(TokenId::from_usize(t)) {
                Some(b) if !b.is_empty() => 0,
                _ => NONE,
            })
            .collect();
        let len = usize::from(class_of.iter().any(|&c| c != NONE));
        if len > max_classes {
            return Err(SpansBuildError::new(
                SpansBudget::Classes,
                max_classes as u64,
            ));
        }
        Ok(Refiner {
            class_of,
            len,
            max_classes,
            seen: vec![(u32::MAX, 0); len],
            round: 0,
            split: AHashMap::new(),
        })
    }

    /// Splits every class by `key[t]` (indexed by token id).
    pub(super) fn refine(&mut self, key: &[u32]) -> Result<(), SpansBuildError> {
        self.split.clear();
        let round = self.round;
        self.round += 1;
        for (c, &k) in self.class_of.iter_mut().zip(key) {
            if *c == NONE {
                continue;
            }
            let seen = &mut self.seen[*c as usize];
            if seen.0 != round {
                *seen = (round, k);
            } else if seen.1 != k {
                let next = self.len as u32;
                let new = *self.split.entry((*c, k)).or_insert(next);
                if new == next {
                    self.len += 1;
                    if self.len > self.max_classes {
                        return Err(SpansBuildError::new(
                            SpansBudget::Classes,
                            self.max_classes as u64,
                        ));
                    }
                    self.seen.push((round, k));
                }
                *c = new;
            }
        }
        Ok(())
    }

    /// Per token id: its current class, or [`NONE`] (a key for another refiner).
    pub(super) fn classes(&self) -> &[u32] {
        &self.class_of
    }

    /// The final partition, classes renumbered by lowest member: (class per token id, number
    /// of classes).
    pub(super) fn finish(self) -> (Vec<u32>, usize) {
        let mut renumber = vec![NONE; self.len];
        let mut next = 0u32;
        let mut class_of = self.class_of;
        for c in class_of.iter_mut() {
            if *c != NONE {
                let r = &mut renumber[*c as usize];
                if *r == NONE {
                    *r = next;
                    next += 1;
                }
                *c = *r;
            }
        }
        (class_of, next as usize)
    }
}
