//! The trie walk: for a block of points at once, which lexer configuration every trie prefix
//! leads each point to.
//!
//! A prefix `w` of the vocabulary trie, read from a block of points, leads each point to a
//! *configuration* `(q, e)`: `q` the open lexer state (0, the dead state, if `w` is dead from
//! that point; or a fork, inside a character that may or may not extend the last lexeme: see
//! [`LexTables`]) and `e` the emitted lexemes so far, as a hash-consed sequence ([`Seqs`]). The
//! vector of configurations over the block is the prefix's *behaviour* on the block; behaviours
//! are interned ([`BlockWalk::intern`]), and the behaviour of `w·b` depends only on that of `w`
//! and on `b`'s byte class. So the walk memoises (behaviour, byte class) → behaviour in a dense
//! table, and most trie nodes cost one table lookup: a block costs the number of trie nodes
//! plus the block width per distinct (behaviour, class) pair, not nodes × points. A wide
//! subtree none of whose bytes changes its root's behaviour (a string's content from inside
//! a string, a name's letters from inside a name) is given that behaviour without being
//! visited ([`TokenTrie::wide_subtrees`] lists the bytes below each); so is a subtree whose
//! nodes take one behaviour per UTF-8 decoder state (a string's characters of several bytes,
//! [`TokenTrie::utf8_subtrees`]), each token given its state's. Only steps already made say
//! so, so the steps and the behaviours are those of the full walk.
//!
//! A token's span from a point is its node's configuration for that point, and two tokens
//! realise the same spans from every point of the block iff their behaviours are equal: the
//! behaviour id is the exact key the class refinement needs.
//!
//! Written by hand: this is the transition monoid of the vocabulary under the lexer, restricted
//! to the prefixes the trie holds; no crate computes it.

use std::sync::atomic::{AtomicU64, Ordering};

use ahash::AHashMap;

use super::error::{SpansBudget, SpansBuildError};
use super::meter::{map_heap_bytes, vec_bytes, Meter};
use super::LexPoint;
use munch_lexer::{LexState, Lexer};
use munch_vocab::{utf8, TokenId, TokenTrie, TrieNode, Utf8Pairs, Vocabulary};

/// The behaviour of a dead prefix: dead from every point of the block.
pub(super) const DEAD: u32 = 0;
/// The behaviour of the empty prefix (the root). Never produced by interning: only the first
/// byte checks inhibitors, so the root behaves unlike any other node with the same vector.
const ROOT: u32 = 1;
const UNKNOWN: u32 = u32::MAX;
const NO_INHIBITOR: u32 = u32::MAX;
/// The widest block whose steps are memoised in a hash map rather than in a row per
/// behaviour (a [`PointSpanner`](crate::PointSpanner) walks one point at a time: most trie
/// nodes are then a behaviour of their own, and a row of every byte class for each is mostly
/// never read).
const SPARSE_WIDTH: usize = 4;
/// Steps a narrow block's memo has room for at first (a point's walk over a few thousand
/// tokens makes about as many).
const SPARSE_RESERVE: usize = 4096;
/// Behaviours the tables of a block reserve room for (real grammars with 128k-token
/// vocabularies make 4,000–8,000 per block): growing them copies megabytes.
const RESERVE: usize = 8192;

/// The lexemes a configuration has emitted, encoded in one word.
///
/// 0 is nothing emitted. Otherwise the low [`Seqs::shift`] bits hold the first lexeme (its
/// index in [`LexTables::lexemes`]) and the high bits the rest, a hash-consed sequence of
/// [`Seqs`]. After its first lexeme every point of a block restarts in the same state, so
/// the rest is the same for all points that emitted it at the same byte: splitting the first
/// lexeme off makes the sequences shared across points (on SynCode's Go grammar with Llama 3,
/// a one-thread build interns 2,177 of them; whole sequences hash-consed made 150,272).
pub(super) type Emitted = u32;

/// Hash-consed sequences of lexemes (the rest of an [`Emitted`] after its first lexeme): id
/// 0 is the empty sequence, and each other id is (its prefix, its last lexeme), so that
/// appending is one hash lookup and equal sequences have equal ids.
#[derive(Debug)]
pub(super) struct Seqs<'m> {
    parent: Vec<u32>,
    last: Vec<u32>,
    index: AHashMap<(u32, u32), u32>,
    /// Per lexeme: the id of the one-lexeme sequence, or `u32::MAX` (no hashing for them).
    single: Vec<u32>,
    /// A direct-mapped memo of `index` (`(seq << 32 | lexeme, id)`): the same few appends
    /// repeat across behaviours, and a hit costs a multiply instead of a hash lookup.
    recent: Vec<(u64, u32)>,
    /// Bits of an [`Emitted`] that hold its first lexeme.
    shift: u32,
    /// Set when a sequence id did not fit above `shift` bits, or the meter refused the
    /// tables' growth: the walk then gives up with this error.
    failed: Option<SpansBuildError>,
    /// What the tables are charged to.
    meter: &'m Meter,
}

/// Entries of [`Seqs::recent`] (a power of two).
const RECENT_SEQS: usize = 1 << 14;

impl<'m> Seqs<'m> {
    /// Sequences for the lexemes of `tables`, charged to `meter`.
    pub(super) fn new(
        tables: &LexTables<'_>,
        meter: &'m Meter,
    ) -> Result<Seqs<'m>, SpansBuildError> {
        let mut seqs = Seqs {
            parent: meter.vec(1, 0)?,
            last: meter.vec(1, 0)?,
            index: AHashMap::new(),
            single: Vec::new(),
            recent: meter.vec(RECENT_SEQS, (u64::MAX, 0))?,
            shift: tables.shift,
            failed: None,
            meter,
        };
        meter.reserve_map(&mut seqs.index, 1 << 12)?;
        Ok(seqs)
    }

    /// The most sequences an [`Emitted`] can refer to.
    pub(super) fn capacity(&self) -> u64 {
        1 << (32 - self.shift)
    }

    /// Why the walk must give up, if it must: some sequence did not fit in an [`Emitted`]
    /// ([`SpansBudget::Sequences`]), or the meter refused the tables' growth.
    pub(super) fn failed(&self) -> Option<&SpansBuildError> {
        self.failed.as_ref()
    }

    /// Heap bytes held (what is charged for them).
    pub(super) fn heap_bytes(&self) -> usize {
        vec_bytes::<u32>(self.parent.capacity() + self.last.capacity() + self.single.capacity())
            + vec_bytes::<(u64, u32)>(self.recent.capacity())
            + map_heap_bytes(&self.index)
    }

    /// Frees the tables, giving back what they were charged.
    pub(super) fn free(self) {
        self.meter.release(self.heap_bytes());
    }

    /// `e` followed by `lexeme`.
    #[inline]
    pub(super) fn append(&mut self, e: Emitted, lexeme: u32) -> Emitted {
        if e == 0 {
            return lexeme;
        }
        let rest = self.push(e >> self.shift, lexeme);
        self.encode(rest, e)
    }

    /// The [`Emitted`] with the first lexeme of `e` and the rest `rest`.
    #[inline]
    fn encode(&mut self, rest: u32, e: Emitted) -> Emitted {
        if u64::from(rest) >= self.capacity() {
            self.fail(SpansBuildError::new(
                SpansBudget::Sequences,
                self.capacity(),
            ));
            return 0;
        }
        rest << self.shift | e & ((1 << self.shift) - 1)
    }

    /// The id of `seq` followed by `lexeme`.
    #[inline]
    fn push(&mut self, seq: u32, lexeme: u32) -> u32 {
        if seq == 0 {
            if let Some(&id) = self.single.get(lexeme as usize) {
                if id != u32::MAX {
                    return id;
                }
            }
        } else {
            let key = u64::from(seq) << 32 | u64::from(lexeme);
            let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize % RECENT_SEQS;
            if self.recent[slot].0 == key {
                return self.recent[slot].1;
            }
        }
        self.push_slow(seq, lexeme)
    }

    /// Records why the walk must stop (the first reason wins).
    fn fail(&mut self, e: SpansBuildError) {
        self.failed.get_or_insert(e);
    }

    /// [`push`](Seqs::push) past its memos. Returns 0 (the empty sequence) after a failure,
    /// which [`failed`](Seqs::failed) reports.
    #[inline(never)]
    fn push_slow(&mut self, seq: u32, lexeme: u32) -> u32 {
        if let Err(e) = self.make_room(seq, lexeme) {
            self.fail(e);
            return 0;
        }
        let next = self.parent.len() as u32;
        let id = if seq == 0 {
            let i = lexeme as usize;
            if i >= self.single.len() {
                self.single.resize(i + 1, u32::MAX);
            }
            if self.single[i] == u32::MAX {
                self.single[i] = next;
            }
            self.single[i]
        } else {
            let key = u64::from(seq) << 32 | u64::from(lexeme);
            let slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize % RECENT_SEQS;
            let id = *self.index.entry((seq, lexeme)).or_insert(next);
            self.recent[slot] = (key, id);
            id
        };
        if id == next {
            self.parent.push(seq);
            self.last.push(lexeme);
        }
        id
    }

    /// Charges the growth a new sequence `seq · lexeme` may need, before it is made.
    fn make_room(&mut self, seq: u32, lexeme: u32) -> Result<(), SpansBuildError> {
        let meter = self.meter;
        if seq == 0 {
            let want = (lexeme as usize + 1).saturating_sub(self.single.len());
            meter.reserve(&mut self.single, want)?;
        } else {
            meter.reserve_map(&mut self.index, 1)?;
        }
        meter.reserve(&mut self.parent, 1)?;
        meter.reserve(&mut self.last, 1)
    }

    /// Adds every sequence of `other` to `self`; returns, per id of `other`, its id here.
    pub(super) fn merge(&mut self, other: &Seqs<'_>) -> Result<Vec<u32>, SpansBuildError> {
        let mut map = self.meter.vec(other.parent.len(), 0u32)?;
        // A sequence's prefix always has a smaller id than the sequence.
        for s in 1..other.parent.len() {
            map[s] = self.push(map[other.parent[s] as usize], other.last[s]);
            if let Some(e) = &self.failed {
                return Err(e.clone());
            }
        }
        Ok(map)
    }

    /// `e` of another [`Seqs`] whose sequences `map` ([`Seqs::merge`]) translates to these.
    pub(super) fn translate(&mut self, e: Emitted, map: &[u32]) -> Emitted {
        if e == 0 {
            0
        } else {
            self.encode(map[(e >> self.shift) as usize], e)
        }
    }

    /// Appends the lexemes of `e` to `out`, first to last, as the states `lexemes` names
    /// them by ([`LexTables::lexemes`]), charging `out`'s growth to `meter`.
    pub(super) fn collect(
        &self,
        e: Emitted,
        lexemes: &[LexState],
        out: &mut Vec<LexState>,
        meter: &Meter,
    ) -> Result<(), SpansBuildError> {
        if e == 0 {
            return Ok(());
        }
        meter.push(out, lexemes[(e & ((1 << self.shift) - 1)) as usize])?;
        let at = out.len();
        let mut s = (e >> self.shift) as usize;
        while s != 0 {
            meter.push(out, lexemes[self.last[s] as usize])?;
            s = self.parent[s] as usize;
        }
        out[at..].reverse();
        Ok(())
    }
}

/// What the lexer gives the walk, precomputed per state.
///
/// A configuration's open part `q` is a lexer state (`0..state_len`), or a *fork*
/// (`state_len..`): the token's bytes so far have several readings, each still alive. This
/// happens in two ways (see the [`dfa` docs](munch_lexer::dfa#pending-states)): the token is
/// inside a character that began right after a complete lexeme and may or may not extend it;
/// or the lexer goes back to lazy matches or literals and the branch that handed such a lexeme
/// over reads its next lexemes in guarded pending states while the longer reading is
/// undecided (then the branches may emit lexemes of their own, and split again where a
/// guarded state accepts).
/// A fork is its [`Branch`]es, each a state and the lexemes it has emitted since the
/// configuration's emitted lexemes (whatever all branches emitted is moved into those), sorted:
/// so equal readings are equal forks. Once every guard is decided one branch is left.
///
/// Every branch steps alike: in state `s` a byte of class `k` leads to `next(s, k)`, and if
/// `s` accepts, to `next_inhibited(s, k)` with the lexeme of `s` emitted; the live ones are
/// the readings after it. A fork's row is needed only while a token can still go on, so forks
/// first reached at the longest token's length get no row.
pub(super) struct LexTables<'a> {
    /// Borrowed for one build; owned by a [`PointSpanner`](crate::PointSpanner), which keeps
    /// the tables for many.
    pub(super) lexer: std::borrow::Cow<'a, Lexer>,
    /// Lexer states plus forks: the rows of `outcome`.
    pub(super) width: usize,
    /// `outcome[k * width + q]`: what a byte of class `k` does in `q`, folded into one word for
    /// the walk's inner loop: the next state or fork if nothing is emitted; else [`EMIT`] `|`
    /// the emitted lexeme's index in [`lexemes`](LexTables::lexemes) if the byte starts a new
    /// lexeme in `next(start, byte)` and that is all; else [`EMIT`] `|` [`SIDE`] `|` an index
    /// into [`side`](LexTables::side); else 0 (dead). Row 0 (dead) maps to 0.
    pub(super) outcome: Vec<u32>,
    /// Outcomes that emit otherwise: (the state or fork after, the emitted lexemes' indices).
    pub(super) side: Vec<(u32, Box<[u32]>)>,
    /// The forks, from `state_len`.
    pub(super) forks: Vec<Box<[Branch]>>,
    /// The lexemes, from index 1 (0 is unused): each is named by the lowest state whose
    /// accepted terminals have the same keys (its terminals are all the parser will ever see
    /// of it; by default each terminal is its own key).
    pub(super) lexemes: Vec<LexState>,
    /// Bits that hold a lexeme index (at least 1).
    pub(super) shift: u32,
}

/// One reading of a fork: its lexer state, and the lexemes (indices into
/// [`LexTables::lexemes`]) it has emitted past the configuration's.
pub(super) type Branch = (u32, Box<[u32]>);

/// What tells lexemes apart: a key per accepted terminal ([`TokenSpans::build_keyed`](super::TokenSpans::build_keyed)).
pub(super) type LexemeKey<'k> = dyn Fn(munch_lexer::TerminalId) -> u32 + Sync + 'k;

/// The flag of an [`LexTables::outcome`] that emits a lexeme (state ids stay below it).
pub(super) const EMIT: u32 = 1 << 31;
/// With [`EMIT`]: the state after and the lexemes are in [`LexTables::side`].
pub(super) const SIDE: u32 = 1 << 30;

/// Interned forks and side outcomes, charged to a [`Meter`] as they are found.
struct Forks<'m> {
    list: Vec<Box<[Branch]>>,
    /// Per fork: how many bytes from a lexer state first reach it.
    depth: Vec<usize>,
    ids: AHashMap<Box<[Branch]>, u32>,
    side: Vec<(u32, Box<[u32]>)>,
    side_ids: AHashMap<(u32, Box<[u32]>), u32>,
    state_len: usize,
    meter: &'m Meter,
}

impl Forks<'_> {
    /// The row of fork `key`, new or not; a new one is first reached after `depth` bytes.
    fn id(&mut self, key: Box<[Branch]>, depth: usize) -> Result<u32, SpansBuildError> {
        if let Some(&id) = self.ids.get(&key) {
            return Ok(id);
        }
        if self.state_len + self.list.len() >= SIDE as usize {
            // Ids stay below the flags; so many forks would hold far more than any byte budget.
            return Err(self.meter.exceeded());
        }
        let bytes: usize = key.iter().map(|(_, l)| vec_bytes::<u32>(l.len())).sum();
        self.meter
            .charge(2 * (bytes + vec_bytes::<Branch>(key.len())))?;
        self.meter.reserve_map(&mut self.ids, 1)?;
        self.meter.push(&mut self.list, key.clone())?;
        self.meter.push(&mut self.depth, depth)?;
        let id = (self.state_len + self.list.len() - 1) as u32;
        self.ids.insert(key, id);
        Ok(id)
    }

    /// The outcome of the readings `branches` (live, any order) after a byte of class `k`
    /// whose plain restart is `restart`, first reached after `depth` bytes: the lexemes
    /// every reading emitted go to the configuration, the rest is a state or a fork.
    fn outcome(
        &mut self,
        mut branches: Vec<Branch>,
        restart: u32,
        depth: usize,
    ) -> Result<u32, SpansBuildError> {
        if branches.is_empty() {
            return Ok(0);
        }
        branches.sort_unstable();
        branches.dedup();
        // The lexemes every reading emitted: a prefix of each.
        let first = branches[0].1.clone();
        let common = branches.iter().fold(first.len(), |n, (_, l)| {
            n.min(
                l.iter()
                    .zip(&first[..n])
                    .take_while(|(a, b)| a == b)
                    .count(),
            )
        });
        let after = if branches.len() == 1 {
            branches[0].0
        } else {
            let key: Box<[Branch]> = branches
                .into_iter()
                .map(|(s, l)| (s, l[common..].into()))
                .collect();
            self.id(key, depth)?
        };
        Ok(match &first[..common] {
            [] => after,
            &[lexeme] if after == restart => EMIT | lexeme,
            lexemes => {
                let key = (after, Box::<[u32]>::from(lexemes));
                if let Some(&id) = self.side_ids.get(&key) {
                    return Ok(EMIT | SIDE | id);
                }
                self.meter.charge(2 * vec_bytes::<u32>(lexemes.len()))?;
                self.meter.reserve_map(&mut self.side_ids, 1)?;
                self.meter.push(&mut self.side, key.clone())?;
                let id = self.side.len() as u32 - 1;
                self.side_ids.insert(key, id);
                EMIT | SIDE | id
            }
        })
    }
}

impl<'a> LexTables<'a> {
    /// The tables of `lexer` for tokens of at most `max_token_bytes` bytes, charged to
    /// `meter` (they live as long as the build). Two lexemes are one when their accepted
    /// terminals have the same `key`s. Each fork's row costs a lexer step per branch and byte
    /// class, counted against `max_fork_work`.
    pub(super) fn new(
        lexer: &'a Lexer,
        meter: &Meter,
        key: &LexemeKey<'_>,
        max_token_bytes: usize,
        max_fork_work: u64,
    ) -> Result<Self, SpansBuildError> {
        let state_len = lexer.state_len();
        let class_len = lexer.class_len();
        // At most one lexeme per state; the index and per-state lexemes are freed at the end.
        let key_words: usize = (0..state_len)
            .map(|s| lexer.accepted(LexState::from_usize(s)).len())
            .sum();
        let index_bytes =
            super::meter::map_bytes::<Box<[u32]>, u32>(state_len) + vec_bytes::<u32>(key_words);
        let emitted_bytes = vec_bytes::<Option<u32>>(state_len);
        meter.charge(index_bytes + emitted_bytes + vec_bytes::<LexState>(state_len + 1))?;
        let mut index: AHashMap<Box<[u32]>, u32> = AHashMap::new();
        let mut lexemes = Vec::with_capacity(state_len + 1);
        lexemes.push(LexState::default());
        let emitted = (0..lexer.state_len())
            .map(|s| {
                let s = LexState::from_usize(s);
                let accepted = lexer.accepted(s);
                if accepted.is_empty() {
                    None
                } else {
                    let mut keys: Vec<u32> = accepted.iter().map(|&t| key(t)).collect();
                    keys.sort_unstable();
                    keys.dedup();
                    Some(*index.entry(keys.into_boxed_slice()).or_insert_with(|| {
                        lexemes.push(s);
                        lexemes.len() as u32 - 1
                    }))
                }
            })
            .collect::<Vec<_>>();
        let shift = (u32::BITS - (lexemes.len() as u32 - 1).leading_zeros()).max(1);
        drop(index);
        meter.release(index_bytes);
        meter.shrink(&mut lexemes);
        // The live readings of `branches` after a byte of class `k`.
        let step = |branches: &[Branch], k: u8| -> Vec<Branch> {
            let mut out = Vec::new();
            for (s, l) in branches {
                let s = LexState::from(*s);
                let g = lexer.next_class(s, k);
                if !lexer.is_dead(g) {
                    out.push((g.as_u32(), l.clone()));
                }
                if let Some(lexeme) = emitted[s.as_usize()] {
                    let p = lexer.next_inhibited_class(s, k);
                    if !lexer.is_dead(p) {
                        let mut l = l.to_vec();
                        l.push(lexeme);
                        out.push((p.as_u32(), l.into()));
                    }
                }
            }
            out
        };
        // Rows per state, then per fork (found as the rows are filled).
        let mut rows: Vec<u32> = meter.vec(state_len.saturating_mul(class_len), 0)?;
        let mut forks = Forks {
            list: Vec::new(),
            depth: Vec::new(),
            ids: AHashMap::new(),
            side: Vec::new(),
            side_ids: AHashMap::new(),
            state_len,
            meter,
        };
        let restart: Vec<u32> = (0..class_len)
            .map(|k| lexer.next_class(lexer.start(), k as u8).as_u32())
            .collect();
        for s in 1..state_len {
            let state = LexState::from_usize(s);
            if lexer.is_dead(state) {
                continue;
            }
            let here: [Branch; 1] = [(s as u32, Box::default())];
            for (k, &restart) in restart.iter().enumerate() {
                // Most bytes leave one reading, which emits nothing or only the state's
                // lexeme before a plain restart: its outcome needs no branch lists.
                let g = lexer.next_class(state, k as u8);
                let handed = emitted[s]
                    .filter(|_| !lexer.is_dead(lexer.next_inhibited_class(state, k as u8)));
                rows[s * class_len + k] = match handed {
                    None if lexer.is_dead(g) => 0,
                    None => g.as_u32(),
                    Some(lexeme)
                        if lexer.is_dead(g)
                            && lexer.next_inhibited_class(state, k as u8).as_u32() == restart =>
                    {
                        EMIT | lexeme
                    }
                    Some(_) => forks.outcome(step(&here, k as u8), restart, 1)?,
                };
            }
        }
        let mut f = 0;
        let mut work = 0u64;
        while f < forks.list.len() {
            work += (forks.list[f].len() * class_len) as u64;
            if work > max_fork_work {
                return Err(SpansBuildError::new(SpansBudget::ForkWork, max_fork_work));
            }
            meter.reserve(&mut rows, class_len)?;
            let depth = forks.depth[f];
            if depth >= max_token_bytes {
                // Only a token's last byte reaches it: its row is never read.
                rows.extend(std::iter::repeat_n(0, class_len));
            } else {
                let branches = forks.list[f].clone();
                for (k, &restart) in restart.iter().enumerate() {
                    let o = forks.outcome(step(&branches, k as u8), restart, depth + 1)?;
                    rows.push(o);
                }
            }
            f += 1;
        }
        drop(emitted);
        meter.release(emitted_bytes);
        // Transpose to one row per class.
        let width = state_len + forks.list.len();
        let mut outcome = meter.vec(width.saturating_mul(class_len), 0u32)?;
        for (q, row) in rows.chunks(class_len).enumerate() {
            for (k, &o) in row.iter().enumerate() {
                outcome[k * width + q] = o;
            }
        }
        meter.free(rows);
        meter.free_map(forks.side_ids);
        meter.free_map(forks.ids);
        meter.free(forks.depth);
        Ok(LexTables {
            lexer: std::borrow::Cow::Borrowed(lexer),
            width,
            outcome,
            side: forks.side,
            forks: forks.list,
            lexemes,
            shift,
        })
    }

    /// The same tables with their own copy of the lexer.
    pub(super) fn into_owned(self) -> LexTables<'static> {
        LexTables {
            lexer: std::borrow::Cow::Owned(self.lexer.into_owned()),
            width: self.width,
            outcome: self.outcome,
            side: self.side,
            forks: self.forks,
            lexemes: self.lexemes,
            shift: self.shift,
        }
    }

    /// Heap bytes held (what is charged for them).
    pub(super) fn heap_bytes(&self) -> usize {
        let lists: usize = self
            .forks
            .iter()
            .flat_map(|f| f.iter())
            .map(|(_, l)| l.len())
            .sum();
        let side: usize = self.side.iter().map(|(_, l)| l.len()).sum();
        vec_bytes::<u32>(self.outcome.capacity() + lists + side)
            + vec_bytes::<LexState>(self.lexemes.capacity())
            + vec_bytes::<(u32, Box<[u32]>)>(self.side.capacity())
            + self
                .forks
                .iter()
                .map(|f| vec_bytes::<Branch>(f.len()))
                .sum::<usize>()
            + vec_bytes::<Box<[Branch]>>(self.forks.capacity())
    }

    /// The open part `q` of a configuration (a lexer state or a fork) as readings: the state of
    /// the reading that emitted nothing more (dead if there is none), and every other
    /// reading's state and lexemes (named like [`LexTables::lexemes`]).
    pub(super) fn open(&self, q: u32) -> (LexState, Vec<(LexState, Vec<LexState>)>) {
        let n = self.lexer.state_len();
        match (q as usize).checked_sub(n) {
            None => (LexState::from(q), Vec::new()),
            Some(f) => {
                let mut end = self.lexer.dead();
                let mut others = Vec::new();
                for (s, l) in self.forks[f].iter() {
                    let s = LexState::from(*s);
                    if l.is_empty() && self.lexer.is_dead(end) {
                        end = s;
                    } else {
                        let named = l.iter().map(|&i| self.lexemes[i as usize]).collect();
                        others.push((s, named));
                    }
                }
                (end, others)
            }
        }
    }
}

/// The text tokens of a vocabulary (the ids with bytes), numbered densely in the order of the
/// vocabulary's trie ([`TokenTrie::token_ids`]): the walk's per-token tables are indexed by
/// this number, so they take 4 bytes per text token however sparse the ids are (a tokenizer
/// file may name id 4,194,303 and hold ten tokens), and a walk of the trie writes them in one
/// sweep. [`TextIndex::id_order`] reads them in id order.
pub(super) struct TextIndex<'v> {
    vocab: &'v Vocabulary,
    /// Per number: the token id.
    pub(super) ids: &'v [TokenId],
}

impl<'v> TextIndex<'v> {
    /// The text tokens of `vocab`.
    pub(super) fn new(vocab: &'v Vocabulary) -> TextIndex<'v> {
        TextIndex {
            vocab,
            ids: vocab.trie().token_ids(),
        }
    }

    /// The number of text tokens.
    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    /// The trie whose order numbers the text tokens (the vocabulary's).
    pub(super) fn trie(&self) -> &'v TokenTrie {
        self.vocab.trie()
    }

    /// The numbers of the text tokens in ascending id order.
    pub(super) fn id_order(&self) -> &'v [u32] {
        self.vocab.trie_order()
    }

    /// Per token id: the class of its number in `class_of`, or `u32::MAX` for ids with no
    /// bytes; charged to `meter`.
    pub(super) fn class_of_ids(
        &self,
        class_of: &[u32],
        meter: &Meter,
    ) -> Result<Vec<u32>, SpansBuildError> {
        let mut out = meter.vec(self.vocab.len(), u32::MAX)?;
        for (&t, &c) in self.ids.iter().zip(class_of) {
            out[t.as_usize()] = c;
        }
        Ok(out)
    }
}

/// The walk's result for one block: every behaviour's configurations, and each token's
/// behaviour.
///
/// A behaviour keeps the configurations of its live chunks alone ([`Chunks`]: the others hold
/// dead points, with nothing emitted), one after the other: on grammars whose points keep
/// few tokens alive this is a fraction of a configuration per point, and the memory a block
/// writes is most of its walk's page faults.
pub(super) struct Block {
    /// Number of points in the block.
    pub(super) width: usize,
    chunks: Chunks,
    /// Per behaviour: its chunks that hold a live point.
    live: Vec<u64>,
    /// Per behaviour: where its live chunks' configurations start in `q` and `e`.
    at: Vec<usize>,
    /// The configurations of each behaviour's live chunks, state and emitted lexemes
    /// ([`Block::spread`] lays a behaviour's out over the block's points).
    pub(super) q: Vec<u32>,
    pub(super) e: Vec<Emitted>,
    /// Per text token ([`TextIndex`]): its behaviour (empty once [`compact`](Block::compact)ed).
    pub(super) token_behaviour: Vec<u32>,
    /// Trie nodes the walk gave their parent's behaviour without visiting them.
    #[cfg_attr(not(test), allow(dead_code))]
    skipped: u64,
    /// Of those, the nodes given the value of their UTF-8 state ([`BlockWalk::by_utf8`]).
    #[cfg_attr(not(test), allow(dead_code))]
    skipped_utf8: u64,
}

impl Block {
    pub(super) fn behaviour_len(&self) -> usize {
        self.live.len()
    }

    /// Behaviour `f`'s part of `packed` (the block's `q` or `e`) laid out over the block's
    /// points into `out` (of the block's width): 0 where the point is dead.
    pub(super) fn spread(&self, f: u32, packed: &[u32], out: &mut [u32]) {
        out.fill(0);
        let mut at = self.at[f as usize];
        for (_, run) in self.chunks.runs(self.live[f as usize]) {
            let n = run.len();
            out[run].copy_from_slice(&packed[at..at + n]);
            at += n;
        }
    }

    /// Keeps the configurations of the behaviours `keep` names alone, renumbering them in
    /// `keep` (in order of first mention), and frees the per-token behaviours: all given back
    /// to `meter`.
    pub(super) fn compact(
        &mut self,
        keep: &mut [u32],
        meter: &Meter,
    ) -> Result<(), SpansBuildError> {
        let mut new_id = meter.vec(self.behaviour_len(), u32::MAX)?;
        let mut old = Vec::new();
        for f in keep.iter_mut() {
            let id = &mut new_id[*f as usize];
            if *id == u32::MAX {
                *id = old.len() as u32;
                meter.push(&mut old, *f)?;
            }
            *f = *id;
        }
        let points: usize = old
            .iter()
            .map(|&f| self.chunks.points(self.live[f as usize]))
            .sum();
        let mut q = meter.with_capacity(points)?;
        let mut e = meter.with_capacity(points)?;
        let mut live = meter.with_capacity(old.len())?;
        let mut at = meter.with_capacity(old.len())?;
        for &f in &old {
            let (bits, from) = (self.live[f as usize], self.at[f as usize]);
            let rows = from..from + self.chunks.points(bits);
            live.push(bits);
            at.push(q.len());
            q.extend_from_slice(&self.q[rows.clone()]);
            e.extend_from_slice(&self.e[rows]);
        }
        meter.free(old);
        meter.free(new_id);
        meter.free(std::mem::replace(&mut self.q, q));
        meter.free(std::mem::replace(&mut self.e, e));
        meter.free(std::mem::replace(&mut self.live, live));
        meter.free(std::mem::replace(&mut self.at, at));
        meter.free(std::mem::take(&mut self.token_behaviour));
        Ok(())
    }

    /// Frees the block, giving everything back to `meter`.
    pub(super) fn free(self, meter: &Meter) {
        let token_behaviour = self.into_behaviours(meter);
        meter.free(token_behaviour);
    }

    /// The configurations freed (given back to `meter`), the tokens' behaviours kept.
    pub(super) fn into_behaviours(self, meter: &Meter) -> Vec<u32> {
        meter.free(self.q);
        meter.free(self.e);
        meter.free(self.live);
        meter.free(self.at);
        self.token_behaviour
    }
}

/// Which points each behaviour of a block keeps alive (not dead): what the classes need of a
/// walk, besides each token's behaviour.
pub(super) struct Liveness {
    /// Number of points in the block.
    pub(super) width: usize,
    /// `u64` words per behaviour.
    words: usize,
    /// `bits[f * words + j / 64]` bit `j % 64`: behaviour `f` keeps point `j` alive.
    bits: Vec<u64>,
}

impl Liveness {
    /// The liveness of `block`'s behaviours, charged to `meter`; with `only`, of the
    /// behaviours it names alone (the others' rows are left empty): a block's walk makes
    /// behaviours for prefixes that no token has, whose rows nothing reads.
    pub(super) fn of(
        block: &Block,
        only: Option<&[u32]>,
        meter: &Meter,
    ) -> Result<Liveness, SpansBuildError> {
        // Per behaviour row of `q`, its live points as bits.
        let words = block.width.div_ceil(64);
        let mut bits = meter.vec(block.behaviour_len() * words, 0u64)?;
        let wanted = match only {
            Some(behaviours) => {
                let mut wanted = meter.vec(block.behaviour_len(), false)?;
                for &f in behaviours {
                    wanted[f as usize] = true;
                }
                Some(wanted)
            }
            None => None,
        };
        if block.width > 0 {
            let mut row = meter.vec(block.width, 0u32)?;
            let rows = bits.chunks_mut(words).enumerate();
            let rows = rows.filter(|&(f, _)| wanted.as_ref().is_none_or(|w| w[f]));
            for (f, out) in rows {
                block.spread(f as u32, &block.q, &mut row);
                for (chunk, word) in row.chunks(64).zip(out) {
                    *word = live_word(chunk);
                }
            }
            meter.free(row);
        }
        if let Some(wanted) = wanted {
            meter.free(wanted);
        }
        Ok(Liveness {
            width: block.width,
            words,
            bits,
        })
    }

    /// Per behaviour, whether it keeps point `j` alive; charged to `meter`.
    pub(super) fn column(&self, j: usize, meter: &Meter) -> Result<Vec<bool>, SpansBuildError> {
        let len = self.bits.len().checked_div(self.words).unwrap_or(0);
        let mut out = meter.with_capacity(len)?;
        out.extend((0..len as u32).map(|f| self.alive(f, j)));
        Ok(out)
    }

    /// Whether behaviour `f` keeps point `j` alive.
    pub(super) fn alive(&self, f: u32, j: usize) -> bool {
        self.bits[f as usize * self.words + j / 64] >> (j % 64) & 1 != 0
    }

    /// Word `w` of the points behaviour `f` keeps alive: bit `j` for point `64 * w + j`.
    #[inline]
    pub(super) fn word(&self, f: u32, w: usize) -> u64 {
        self.bits[f as usize * self.words + w]
    }

    /// Frees the bits, giving them back to `meter`.
    pub(super) fn free(self, meter: &Meter) {
        meter.free(self.bits);
    }
}

/// Bit `j` set where `states[j]` is live (not dead), for up to 64 states.
#[inline]
fn live_word(states: &[u32]) -> u64 {
    // A byte per state first (the compares vectorise), then each 8 bytes' low bits gathered
    // into 8 bits by one multiply (byte `i`'s bit lands on bit `56 + i`): a third of the
    // instructions of a shift and an or per state.
    let mut bytes = [0u8; 64];
    for (b, &q) in bytes.iter_mut().zip(states) {
        *b = u8::from(q != 0);
    }
    let mut word = 0;
    for (i, eight) in bytes.chunks_exact(8).enumerate() {
        let eight = u64::from_le_bytes(eight.try_into().expect("chunks of 8"));
        word |= (eight.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * i);
    }
    word
}

/// One block's walk in progress.
struct BlockWalk<'t, 'a, 'm> {
    tables: &'t LexTables<'a>,
    meter: &'m Meter,
    width: usize,
    /// Per point of the block: its inhibitor's raw state, or [`NO_INHIBITOR`].
    inhibitor: Vec<u32>,
    /// The behaviours so far, as [`Block`] keeps them. A dead point stays dead after any
    /// byte, with nothing emitted, so a step reads only the live chunks.
    live: Vec<u64>,
    at: Vec<usize>,
    q: Vec<u32>,
    e: Vec<u32>,
    chunks: Chunks,
    /// Behaviour ids by hash, chained through `same_hash`.
    index: AHashMap<u64, u32>,
    same_hash: Vec<u32>,
    /// `trans[f * class_len + class]`: the behaviour after one more byte of that class.
    /// Empty in a narrow block, whose behaviours are most of its trie nodes (a row each would
    /// be written for a few lookups): `sparse` holds its steps instead.
    trans: Vec<u32>,
    /// By `f * class_len + class`, in a narrow block (see [`SPARSE_WIDTH`]).
    sparse: Option<AHashMap<u64, u32>>,
    class_len: usize,
    /// Per behaviour: how many entries of its row (or of `sparse`) are known.
    known: Vec<u32>,
    /// Per behaviour: the bytes whose known step leads back to it, and its `known` count
    /// when they were listed (`u32::MAX`: never).
    loops: Vec<([u64; 4], u32)>,
    /// Per byte class: its bytes, as 256 bits.
    class_bytes: Vec<[u64; 4]>,
    /// A step's result: its live chunks' configurations, as a behaviour keeps them (over
    /// every point, before its chunks are packed, for a step from the root).
    scratch_q: Vec<u32>,
    scratch_e: Vec<u32>,
}

/// Counts walk steps against [`SpansConfig::max_work`](super::SpansConfig::max_work), shared
/// by the threads of one build.
pub(super) struct Work<'a> {
    pub(super) done: &'a AtomicU64,
    pub(super) limit: u64,
}

impl Work<'_> {
    #[inline]
    fn add(&mut self, n: u64) -> Result<(), SpansBuildError> {
        let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
        if done > self.limit {
            Err(SpansBuildError::new(SpansBudget::Work, self.limit))
        } else {
            Ok(())
        }
    }
}

/// Walks `trie` from every point of `points` (one block) at once; every table it holds is
/// charged to `meter` before it is allocated or grown. With `skip`, the subtrees it can
/// describe whole are not visited (the builds); without, every node whose prefix is live is
/// (tests compare the two).
pub(super) fn walk_block(
    tables: &LexTables<'_>,
    text: &TextIndex,
    points: &[LexPoint],
    seqs: &mut Seqs<'_>,
    work: &mut Work<'_>,
    meter: &Meter,
    skip: bool,
) -> Result<Block, SpansBuildError> {
    let width = points.len();
    let class_len = tables.lexer.class_len();
    let sparse = width <= SPARSE_WIDTH;
    // Room for `RESERVE` behaviours where the budget has it (growing copies megabytes),
    // else for a few, grown as needed.
    let row = if sparse { 0 } else { class_len };
    // Its configurations, row, live chunks, offset, hash chain, known steps; the bytes it
    // loops on.
    let per_behaviour = vec_bytes::<u32>(2 * width + row + 6) + vec_bytes::<([u64; 4], u32)>(1);
    let reserve = if meter.try_charge(RESERVE * per_behaviour) {
        RESERVE
    } else {
        meter.charge(4 * per_behaviour)?;
        4
    };
    meter.charge(vec_bytes::<u32>(3 * width) + vec_bytes::<[u64; 4]>(class_len))?;
    let mut class_bytes = vec![[0u64; 4]; class_len];
    for b in 0..=255u8 {
        let c = tables.lexer.byte_class(b) as usize;
        class_bytes[c][b as usize / 64] |= 1 << (b % 64);
    }
    let mut w = BlockWalk {
        tables,
        meter,
        width,
        inhibitor: points
            .iter()
            .map(|p| p.inhibitor.map_or(NO_INHIBITOR, |i| i.as_u32()))
            .collect(),
        q: Vec::with_capacity(reserve * width),
        e: Vec::with_capacity(reserve * width),
        index: AHashMap::new(),
        same_hash: Vec::with_capacity(reserve),
        live: Vec::with_capacity(reserve),
        at: Vec::with_capacity(reserve),
        chunks: Chunks::new(width),
        trans: Vec::with_capacity(if sparse {
            2 * class_len
        } else {
            reserve * class_len
        }),
        sparse: sparse.then(AHashMap::new),
        class_len,
        known: Vec::with_capacity(reserve),
        loops: Vec::with_capacity(reserve),
        class_bytes,
        scratch_q: vec![0; width],
        scratch_e: vec![0; width],
    };
    meter.reserve_map(&mut w.index, reserve)?;
    if let Some(memo) = &mut w.sparse {
        meter.reserve_map(memo, SPARSE_RESERVE)?;
    }
    // DEAD: every point dead; ROOT: every point in its own state, nothing emitted (every
    // chunk kept).
    w.q.extend(points.iter().map(|p| p.state.as_u32()));
    w.e.resize(width, 0);
    w.same_hash.resize(2, u32::MAX);
    w.live.extend([0, w.chunks.all()]);
    w.at.extend([0, 0]);
    w.known.extend([0, 0]);
    w.loops.extend([([0; 4], u32::MAX); 2]);
    w.trans.resize(class_len, DEAD);
    w.trans.resize(2 * class_len, UNKNOWN);

    let mut token_behaviour = meter.vec(text.len(), DEAD)?;
    // The vocabulary's trie, whose order numbers the text tokens.
    let trie = text.trie();
    let node_len = trie.node_len() as u32;
    // The subtrees worth skipping whole, and the next of them not yet passed.
    let (wide, below) = trie.wide_subtrees();
    let (wide_utf8, token_utf8) = trie.utf8_subtrees();
    let mut next_wide = 0;
    let mut skipped = 0;
    let mut skipped_utf8 = 0;
    // (subtree end, behaviour) of the nodes on the path to the current one.
    let mut stack: Vec<(u32, u32)> = vec![(node_len, ROOT)];
    let mut node = 1u32;
    let mut steps = 0u64;
    while node < node_len {
        while stack.last().is_some_and(|&(end, _)| end <= node) {
            stack.pop();
        }
        let parent = stack.last().map_or(ROOT, |&(_, f)| f);
        let n = TrieNode::from(node);
        let class = tables.lexer.byte_class(trie.byte(n)) as usize;
        let slot = parent as usize * class_len + class;
        let mut f = match &w.sparse {
            Some(memo) if slot >= 2 * class_len => {
                memo.get(&(slot as u64)).copied().unwrap_or(UNKNOWN)
            }
            _ => w.trans[slot],
        };
        if f == UNKNOWN {
            // Counted with the nodes below: one shared atomic per new step was a quarter of
            // a one-point walk's time.
            steps += width as u64;
            f = w.step(parent, class, seqs)?;
            if let Some(e) = seqs.failed() {
                return Err(e.clone());
            }
            match &mut w.sparse {
                Some(memo) if slot >= 2 * class_len => {
                    meter.reserve_map(memo, 1)?;
                    memo.insert(slot as u64, f);
                }
                _ => w.trans[slot] = f,
            }
            w.known[parent as usize] += 1;
        }
        steps += 1;
        if steps >= 4096 {
            work.add(steps)?;
            steps = 0;
        }
        let end = trie.subtree_end(n).as_u32();
        if f == DEAD {
            node = end;
            continue;
        }
        // The tokens at `n` are numbered in a row (the trie's order), and so are its subtree's.
        let at = trie.token_offset(n);
        if skip && (end - node) as usize >= TokenTrie::WIDE_SUBTREE {
            // Forward only, as the walk: the wide nodes of the subtrees it skipped are passed.
            while wide.get(next_wide).is_some_and(|&m| m < node) {
                next_wide += 1;
            }
            // No byte below `n` changes its behaviour: every node below has it. Only known
            // steps are read, so the steps made, and the behaviours' ids, are the walk's own.
            let stop = || {
                if end < node_len {
                    trie.token_offset(TrieNode::from(end))
                } else {
                    text.len()
                }
            };
            let skip = if below.get(next_wide).is_some_and(|b| w.loops_on(f, b)) {
                token_behaviour[at..stop()].fill(f);
                true
            } else if let Some(by_state) = w.by_utf8(f, &below[next_wide], &wide_utf8[next_wide]) {
                // Every node below has the value of its UTF-8 state.
                let stop = stop();
                for (b, &d) in token_behaviour[at..stop]
                    .iter_mut()
                    .zip(&token_utf8[at..stop])
                {
                    *b = by_state[d as usize];
                }
                skipped_utf8 += u64::from(end - node - 1);
                true
            } else {
                false
            };
            if skip {
                // Counted as the walk would have counted the nodes.
                steps += u64::from(end - node - 1);
                skipped += u64::from(end - node - 1);
                node = end;
                continue;
            }
        }
        token_behaviour[at..at + trie.tokens_at(n).len()].fill(f);
        if end > node + 1 {
            stack.push((end, f));
        }
        node += 1;
    }
    work.add(steps)?;
    // What the block keeps: its configurations, not shrunk (a copy would write as much fresh
    // memory again, and every caller compacts or frees them at once).
    let BlockWalk {
        live,
        at,
        q,
        e,
        chunks,
        index,
        same_hash,
        trans,
        sparse,
        inhibitor,
        scratch_q,
        scratch_e,
        known,
        loops,
        class_bytes,
        ..
    } = w;
    meter.free(known);
    meter.free(loops);
    meter.free(class_bytes);
    meter.free_map(index);
    if let Some(memo) = sparse {
        meter.free_map(memo);
    }
    for v in [same_hash, trans, inhibitor, scratch_q, scratch_e] {
        meter.free(v);
    }
    Ok(Block {
        width,
        chunks,
        live,
        at,
        q,
        e,
        token_behaviour,
        skipped,
        skipped_utf8,
    })
}

/// The fewest points in a chunk of a block (see [`Chunks`]). A step reads the chunks that hold
/// a live point and skips the others: smaller chunks skip more dead points but cost more per
/// chunk, and on real grammars most chunks that hold a live point hold several.
const CHUNK: usize = 8;

/// A block's points cut into at most 64 chunks of the same length (the last one shorter), so
/// that the chunks holding a live point are one word per behaviour.
#[derive(Clone, Copy, Debug)]
struct Chunks {
    width: usize,
    /// Points per chunk.
    len: usize,
}

impl Chunks {
    fn new(width: usize) -> Chunks {
        Chunks {
            width,
            len: width.div_ceil(64).max(CHUNK),
        }
    }

    /// Every chunk's bit.
    fn all(self) -> u64 {
        match self.width.div_ceil(self.len) {
            64 => u64::MAX,
            n => (1 << n) - 1,
        }
    }

    /// The points of chunk `c`.
    #[inline]
    fn range(self, c: u32) -> std::ops::Range<usize> {
        let lo = c as usize * self.len;
        lo..(lo + self.len).min(self.width)
    }

    /// Each run of consecutive chunks whose bits `bits` sets, in order: its first chunk and
    /// its points.
    #[inline]
    fn runs(self, mut bits: u64) -> impl Iterator<Item = (u32, std::ops::Range<usize>)> {
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let first = bits.trailing_zeros();
            let last = first + (!(bits >> first)).trailing_zeros() - 1;
            // Clears the run: the carry runs through its bits.
            bits &= bits.wrapping_add(1 << first);
            Some((first, self.range(first).start..self.range(last).end))
        })
    }

    /// The points of the chunks whose bits `bits` sets.
    fn points(self, bits: u64) -> usize {
        self.runs(bits).map(|(_, run)| run.len()).sum()
    }

    /// The chunks of `states` (a behaviour's, over the block) that hold a live state.
    fn live(self, states: &[u32]) -> u64 {
        states
            .chunks(self.len)
            .enumerate()
            .fold(0, |bits, (c, chunk)| {
                bits | u64::from(chunk.iter().any(|&q| q != 0)) << c
            })
    }
}

/// One byte's step from the configurations `from_q`, `from_e` of some chunks of `len` points
/// into `to_q`, `to_e`, given the byte class's row of [`LexTables::outcome`]: `restart` is the
/// class's plain restart, `side` the tables' other outcomes. Returns bit `c` set where the
/// `c`-th chunk holds a live point after the step.
#[inline]
#[allow(clippy::too_many_arguments)] // The step's inputs, unpacked for its loop.
fn step_points(
    len: usize,
    outcome: &[u32],
    restart: u32,
    side: &[(u32, Box<[u32]>)],
    seqs: &mut Seqs<'_>,
    from_q: &[u32],
    from_e: &[u32],
    to_q: &mut [u32],
    to_e: &mut [u32],
) -> u64 {
    let mut live = 0;
    let from = from_q.chunks(len).zip(from_e.chunks(len));
    let to = to_q.chunks_mut(len).zip(to_e.chunks_mut(len));
    for (c, ((from_q, from_e), (to_q, to_e))) in from.zip(to).enumerate() {
        // The states after, ORed: nonzero where a point lives. Most bytes emit nothing
        // from most points: one pass without branches takes every outcome as a state, and
        // only a chunk where some point emits is read again for those points (in order, so
        // the sequences are interned as one pass would).
        let mut states = 0;
        for ((&q, &e), (nq, ne)) in from_q
            .iter()
            .zip(from_e)
            .zip(to_q.iter_mut().zip(to_e.iter_mut()))
        {
            let o = outcome[q as usize];
            // The sequence is kept where the point lives, cleared where it died.
            (*nq, *ne) = (o, e & u32::from(o != 0).wrapping_neg());
            states |= o;
        }
        if states & EMIT != 0 {
            states = 0;
            let points = from_e.iter().zip(to_q.iter_mut().zip(to_e.iter_mut()));
            for (&e, (nq, ne)) in points {
                let o = *nq;
                if o & EMIT != 0 {
                    (*nq, *ne) = if o & SIDE == 0 {
                        (restart, seqs.append(e, o & !EMIT))
                    } else {
                        // Rare: a fork resolved, or a guarded pending state after a lexeme.
                        let (after, lexemes) = &side[(o & !(EMIT | SIDE)) as usize];
                        (*after, lexemes.iter().fold(e, |e, &l| seqs.append(e, l)))
                    };
                }
                states |= *nq;
            }
        }
        live |= u64::from(states != 0) << c;
    }
    live
}

/// Moves the chunks `kept` sets, of configurations written in order from chunk `first` on
/// at `from` in `q` and `e`, down to `to`, in order; returns where they end.
fn pack(
    chunks: Chunks,
    q: &mut [u32],
    e: &mut [u32],
    first: u32,
    kept: u64,
    from: usize,
    mut to: usize,
) -> usize {
    let base = chunks.range(first).start;
    for (_, run) in chunks.runs(kept) {
        let at = from + run.start - base;
        let n = run.len();
        q.copy_within(at..at + n, to);
        e.copy_within(at..at + n, to);
        to += n;
    }
    to
}

impl BlockWalk<'_, '_, '_> {
    /// Whether every byte of `bytes` leads behaviour `f` back to itself by a step already
    /// known (a step not yet made counts as leading elsewhere).
    fn loops_on(&mut self, f: u32, bytes: &[u64; 4]) -> bool {
        let fi = f as usize;
        let known = self.known[fi];
        if self.loops[fi].1 != known {
            let mut bits = [0u64; 4];
            for (c, class_bytes) in self.class_bytes.iter().enumerate() {
                if self.known_step(f, c) == f {
                    for (b, c) in bits.iter_mut().zip(class_bytes) {
                        *b |= c;
                    }
                }
            }
            self.loops[fi] = (bits, known);
        }
        let loops = &self.loops[fi].0;
        bytes.iter().zip(loops).all(|(b, l)| b & !l == 0)
    }

    /// The behaviour after a byte of class `class` from behaviour `f` if that step is made,
    /// else [`UNKNOWN`].
    #[inline]
    fn known_step(&self, f: u32, class: usize) -> u32 {
        let slot = f as usize * self.class_len + class;
        match &self.sparse {
            Some(memo) if slot >= self.trans.len() => {
                memo.get(&(slot as u64)).copied().unwrap_or(UNKNOWN)
            }
            _ => self.trans[slot],
        }
    }

    /// Per [`utf8`] state, the behaviour of the nodes in that state below a subtree root of
    /// behaviour `f` whose bytes below are `bytes` and UTF-8 steps `pairs`, if the steps
    /// already known show that every node below has the value of its state: the root's state
    /// has `f`, and each step the subtree holds leads from its state's value to its next
    /// state's. A step not yet made counts as a mismatch, so the steps made, and the
    /// behaviours' ids, are the walk's own.
    fn by_utf8(
        &mut self,
        f: u32,
        bytes: &[u64; 4],
        pairs: &Utf8Pairs,
    ) -> Option<[u32; utf8::STATES]> {
        if pairs.root == utf8::INVALID || bytes[2] | bytes[3] == 0 {
            // Not UTF-8, or ASCII alone: only a loop describes it, and there is none.
            return None;
        }
        let mut value = [UNKNOWN; utf8::STATES];
        value[pairs.root as usize] = f;
        // States whose steps are checked.
        let mut done = 0u32;
        while let Some(d) = (0..utf8::STATES).find(|&d| value[d] != UNKNOWN && done & 1 << d == 0) {
            done |= 1 << d;
            let from = value[d];
            if d == utf8::BOUNDARY as usize {
                // ASCII stays at the boundary: it must loop. Lead bytes start characters.
                let ascii = [bytes[0], bytes[1], 0, 0];
                if ascii != [0; 4] && !self.loops_on(from, &ascii) {
                    return None;
                }
                let mut leads = bytes[3];
                while leads != 0 {
                    let b = 0xC0 + leads.trailing_zeros() as u8;
                    leads &= leads - 1;
                    self.follow(from, d as u8, b, &mut value)?;
                }
            } else {
                let mut cont = pairs.cont[d - 1];
                while cont != 0 {
                    let b = 0x80 + cont.trailing_zeros() as u8;
                    cont &= cont - 1;
                    self.follow(from, d as u8, b, &mut value)?;
                }
            }
        }
        // Every state some step below reads from was reached (ASCII and lead bytes are read
        // from the boundary, continuation bytes from the other states).
        let boundary_read = bytes[0] | bytes[1] | bytes[3] != 0;
        let reached = (0..utf8::STATES).all(|d| {
            let read = if d == 0 {
                boundary_read
            } else {
                pairs.cont[d - 1] != 0
            };
            !read || done & 1 << d != 0
        });
        reached.then_some(value)
    }

    /// [`by_utf8`](BlockWalk::by_utf8)'s check of one step: byte `b` from a node in UTF-8
    /// state `d` of behaviour `from`; `None` if the step is not made or gives the next state
    /// another value than it has.
    #[inline]
    fn follow(&self, from: u32, d: u8, b: u8, value: &mut [u32; utf8::STATES]) -> Option<()> {
        let to = self.known_step(from, self.tables.lexer.byte_class(b) as usize);
        let after = &mut value[utf8::next(d, b) as usize];
        if to == UNKNOWN || (*after != UNKNOWN && *after != to) {
            return None;
        }
        *after = to;
        Some(())
    }

    /// The behaviour after a byte of class `class` from behaviour `from`.
    ///
    /// The inner loop of the build (one iteration per point of `from`'s live chunks per new
    /// (behaviour, class) pair).
    fn step(
        &mut self,
        from: u32,
        class: usize,
        seqs: &mut Seqs<'_>,
    ) -> Result<u32, SpansBuildError> {
        let lexer = &*self.tables.lexer;
        let rows = self.tables.width;
        // One row per byte class: the inner loop indexes it by state alone.
        let outcome = &self.tables.outcome[class * rows..(class + 1) * rows];
        let side = &self.tables.side;
        let chunks = self.chunks;
        // Where a lexeme that cannot go on restarts: the same for every point.
        let restart = lexer.next_class(lexer.start(), class as u8).as_u32();
        let to_q = &mut self.scratch_q[..];
        let to_e = &mut self.scratch_e[..];
        // From the root every point is read and written in place: the inhibited points are
        // then stepped apart, and the chunks packed.
        let root = from == ROOT;
        // Only the chunks where `from` keeps a point alive can live on: the others stay dead,
        // with nothing emitted. A run of consecutive live chunks at a time: a behaviour alive
        // at most points is read in one loop, as the whole block would be.
        let mut at = self.at[from as usize];
        let mut len = 0;
        let mut live = 0u64;
        for (first, run) in chunks.runs(self.live[from as usize]) {
            let n = run.len();
            let kept = step_points(
                chunks.len,
                outcome,
                restart,
                side,
                seqs,
                &self.q[at..at + n],
                &self.e[at..at + n],
                &mut to_q[len..len + n],
                &mut to_e[len..len + n],
            ) << first;
            at += n;
            live |= kept;
            len = if root || kept.count_ones() as usize == n.div_ceil(chunks.len) {
                len + n
            } else {
                pack(chunks, to_q, to_e, first, kept, len, len)
            };
        }
        if root {
            // The first byte of an inhibited branch (nothing emitted yet: it is at the start).
            let class = class as u8;
            for ((&inh, nq), ne) in self
                .inhibitor
                .iter()
                .zip(to_q.iter_mut())
                .zip(to_e.iter_mut())
            {
                if inh != NO_INHIBITOR {
                    *nq = lexer
                        .next_inhibited_class(LexState::from(inh), class)
                        .as_u32();
                    *ne = 0;
                }
            }
            live = chunks.live(&to_q[..self.width]);
            len = pack(chunks, to_q, to_e, 0, live, 0, 0);
        }
        if live != 0 {
            self.intern(live, len)
        } else {
            Ok(DEAD)
        }
    }

    /// The id of the behaviour in the scratch vectors, whose live chunks are `live` and take
    /// their first `len` entries, new or existing; a new one's room is charged first.
    fn intern(&mut self, live: u64, len: usize) -> Result<u32, SpansBuildError> {
        let (q, e) = (&self.scratch_q[..len], &self.scratch_e[..len]);
        let hash = {
            use std::hash::{BuildHasher, Hash, Hasher};
            let mut h = ahash::RandomState::with_seeds(1, 2, 3, 4).build_hasher();
            h.write_u64(live);
            u32::hash_slice(q, &mut h);
            u32::hash_slice(e, &mut h);
            h.finish()
        };
        let head = self.index.get(&hash).copied().unwrap_or(u32::MAX);
        let mut f = head;
        while f != u32::MAX {
            // Equal live chunks: equal lengths.
            let at = self.at[f as usize];
            if self.live[f as usize] == live
                && self.q[at..at + len] == *q
                && self.e[at..at + len] == *e
            {
                return Ok(f);
            }
            f = self.same_hash[f as usize];
        }
        let meter = self.meter;
        meter.reserve(&mut self.q, len)?;
        meter.reserve(&mut self.e, len)?;
        meter.reserve(&mut self.same_hash, 1)?;
        meter.reserve(&mut self.live, 1)?;
        meter.reserve(&mut self.at, 1)?;
        meter.reserve(&mut self.known, 1)?;
        meter.reserve(&mut self.loops, 1)?;
        if self.sparse.is_none() {
            meter.reserve(&mut self.trans, self.class_len)?;
        }
        meter.reserve_map(&mut self.index, 1)?;
        let id = self.same_hash.len() as u32;
        self.at.push(self.q.len());
        self.q.extend_from_slice(q);
        self.e.extend_from_slice(e);
        self.same_hash.push(head);
        self.live.push(live);
        self.known.push(0);
        self.loops.push(([0; 4], u32::MAX));
        self.index.insert(hash, id);
        if self.sparse.is_none() {
            self.trans
                .resize(self.trans.len() + self.class_len, UNKNOWN);
        }
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use munch_lexer::dfa::LexerConfig;
    use munch_testkit::generate::XorShift;
    use munch_testkit::lexers;

    fn seqs(shift: u32, meter: &Meter) -> Seqs<'_> {
        Seqs {
            parent: vec![0],
            last: vec![0],
            index: AHashMap::new(),
            single: Vec::new(),
            recent: vec![(u64::MAX, 0); RECENT_SEQS],
            shift,
            failed: None,
            meter,
        }
    }

    #[test]
    fn live_words_set_the_bits_of_live_states() {
        for len in [0, 1, 7, 8, 9, 49, 63, 64] {
            let states: Vec<u32> = (0..len).map(|j| (j * 7 % 5) as u32 * j as u32).collect();
            let word = live_word(&states);
            for (j, &q) in states.iter().enumerate() {
                assert_eq!(word >> j & 1 == 1, q != 0, "state {j} of {len}");
            }
            if len < 64 {
                assert_eq!(word >> len, 0, "no bit past {len} states");
            }
        }
    }

    #[test]
    fn emitted_lexemes_decode_in_order_and_equal_sequences_share_a_word() {
        let lexemes: Vec<LexState> = (0..8).map(|i| LexState::from_usize(100 + i)).collect();
        let meter = Meter::new(1 << 20);
        let mut s = seqs(3, &meter);
        let mut emit = |lexemes: &[u32]| lexemes.iter().fold(0, |e, &l| s.append(e, l));
        let a = emit(&[5, 2, 7]);
        let b = emit(&[5, 2, 7]);
        let c = emit(&[2, 5, 7]);
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut out = Vec::new();
        s.collect(a, &lexemes, &mut out, &meter).unwrap();
        assert_eq!(out, [lexemes[5], lexemes[2], lexemes[7]]);
        out.clear();
        s.collect(c, &lexemes, &mut out, &meter).unwrap();
        assert_eq!(out, [lexemes[2], lexemes[5], lexemes[7]]);
        assert!(s.failed().is_none());
    }

    #[test]
    fn sequences_past_what_a_word_names_are_reported() {
        // One bit of sequence id: the empty rest and one more.
        let meter = Meter::new(1 << 20);
        let mut s = seqs(31, &meter);
        let first = s.append(0, 1);
        let one = s.append(first, 1);
        assert!(s.failed().is_none());
        assert_ne!(one, 0);
        s.append(first, 2);
        assert_eq!(s.failed().map(|e| e.budget()), Some(SpansBudget::Sequences));
        assert_eq!(s.capacity(), 2);
    }

    #[test]
    fn sequences_past_the_meter_are_reported() {
        let meter = Meter::new(0);
        let mut s = seqs(3, &meter);
        let first = s.append(0, 1);
        s.append(first, 2);
        assert_eq!(s.failed().map(|e| e.budget()), Some(SpansBudget::Bytes));
    }

    /// A lexer with many states, lexemes that end inside a token, characters of several bytes
    /// that may or may not extend a lexeme (`é` goes on in an identifier, `ü` is a lexeme of
    /// its own: forks) and a lazy comment (read back to its shortest match with
    /// `backtrack_lazy`: guarded states).
    fn many_states(backtrack_lazy: bool) -> Lexer {
        let mut specs: Vec<_> = [
            "func",
            "for",
            "fallthrough",
            "if",
            "import",
            "interface",
            "...",
            "ü",
        ]
        .iter()
        .enumerate()
        .map(|(i, w)| lexers::lit(&format!("K{i}"), w))
        .collect();
        for (name, pattern) in [
            ("ID", "[a-zé_][a-z0-9é_]*"),
            ("NUM", "[0-9]+|0x[0-9a-f]+"),
            ("STR", r#""([^"\\\n]|\\.)*""#),
            ("COMMENT", r"/\*(.|\n)*?\*/"),
            ("OP", r"[*/.]|\.\."),
        ] {
            specs.push(lexers::re(name, pattern));
        }
        let mut space = lexers::re("WS", "[ \n]+");
        space.ignored = true;
        specs.push(space);
        let config = LexerConfig {
            backtrack_lazy,
            ..LexerConfig::default()
        };
        lexers::build_with(&specs, &config)
    }

    /// Tokens of one to four pieces of the lexer's lexemes, with bytes inside characters.
    fn vocabulary(rng: &mut XorShift) -> Vocabulary {
        const PIECES: &[&[u8]] = &[
            b"f",
            b"func",
            b"fo",
            b"if",
            b"im",
            b"x",
            b"_1",
            b"0x",
            b"12",
            b" ",
            b"  ",
            b"\n",
            b"\"",
            b"\\",
            b"/*",
            b"*/",
            b"*",
            b"/",
            b".",
            b"..",
            "é".as_bytes(),
            "ü".as_bytes(),
            b"\xBC",
            b"\xC3",
            b"\xA9",
            b"a",
        ];
        random_vocabulary(rng, PIECES, 1500)
    }

    /// `len` tokens of one to four of `pieces` each, drawn by `rng`.
    fn random_vocabulary(rng: &mut XorShift, pieces: &[&[u8]], len: usize) -> Vocabulary {
        let tokens = (0..len)
            .map(|_| {
                let n = 1 + rng.below(4);
                Some(
                    (0..n)
                        .flat_map(|_| pieces[rng.below(pieces.len())].to_vec())
                        .collect(),
                )
            })
            .collect();
        Vocabulary::from_token_bytes(tokens, vec![]).unwrap()
    }

    /// The points of `points` that a letter leaves where they are (inside a string, a comment).
    fn looping_points(lexer: &Lexer, points: &[LexPoint]) -> Vec<LexPoint> {
        points
            .iter()
            .copied()
            .filter(|p| {
                p.inhibitor.is_none()
                    && lexer.next_class(p.state, lexer.byte_class(b'a')) == p.state
            })
            .collect()
    }

    /// The tables of `lexer` for `vocab`'s tokens, with no work budget.
    fn tables_for<'a>(lexer: &'a Lexer, vocab: &Vocabulary, meter: &Meter) -> LexTables<'a> {
        LexTables::new(
            lexer,
            meter,
            &|t| t.as_u32(),
            vocab.max_token_bytes(),
            u64::MAX,
        )
        .unwrap()
    }

    /// The block of `points` walked with no work budget (skipping subtrees if `skip`), and the
    /// sequences it emitted.
    fn walked<'m>(
        tables: &LexTables<'_>,
        text: &TextIndex,
        points: &[LexPoint],
        meter: &'m Meter,
        skip: bool,
    ) -> (Block, Seqs<'m>) {
        let mut seqs = Seqs::new(tables, meter).unwrap();
        let done = AtomicU64::new(0);
        let mut work = Work {
            done: &done,
            limit: u64::MAX,
        };
        let block = walk_block(tables, text, points, &mut seqs, &mut work, meter, skip).unwrap();
        (block, seqs)
    }

    /// `bytes` read from `point` one byte at a time through `tables`, no trie and no block.
    fn stepped(
        tables: &LexTables<'_>,
        seqs: &mut Seqs<'_>,
        point: LexPoint,
        bytes: &[u8],
    ) -> (u32, u32) {
        let lexer = &*tables.lexer;
        let (mut q, mut e) = (point.state.as_u32(), 0);
        for (i, &b) in bytes.iter().enumerate() {
            let k = lexer.byte_class(b);
            if let (0, Some(inh)) = (i, point.inhibitor) {
                q = lexer.next_inhibited_class(inh, k).as_u32();
                continue;
            }
            let o = tables.outcome[k as usize * tables.width + q as usize];
            (q, e) = if o & EMIT == 0 {
                (o, e)
            } else if o & SIDE == 0 {
                (
                    lexer.next_class(lexer.start(), k).as_u32(),
                    seqs.append(e, o & !EMIT),
                )
            } else {
                let (after, lexemes) = &tables.side[(o & !(EMIT | SIDE)) as usize];
                (*after, lexemes.iter().fold(e, |e, &l| seqs.append(e, l)))
            };
            if q == 0 {
                return (0, 0);
            }
        }
        (q, e)
    }

    #[test]
    fn a_blocks_configurations_are_each_tokens_steps_from_each_point() {
        // Subtrees skipped whole (every byte below them loops), over all blocks.
        let mut skipped = 0;
        let mut skipped_utf8 = 0;
        let mut rng = XorShift(0x6d75_6e63_685f_776b);
        let vocab = vocabulary(&mut rng);
        let text = TextIndex::new(&vocab);
        let meter = Meter::new(1 << 32);
        for backtrack_lazy in [false, true] {
            let lexer = many_states(backtrack_lazy);
            let tables = tables_for(&lexer, &vocab, &meter);
            let (points, ..) = crate::all_points(&lexer, &meter).unwrap();
            assert!(points.len() > 40, "{} points", points.len());
            assert!(!tables.side.is_empty(), "no side outcomes");
            // The points that a letter leaves where they are (inside a string, a comment):
            // their walks skip the subtrees whose bytes all loop.
            let looping = looping_points(&lexer, &points);
            assert!(!looping.is_empty(), "no point loops on a letter");
            // Blocks of every width around the chunks' bounds, in runs of one point, so that
            // whole chunks die and live; then blocks of looping points alone.
            let widths = [1, 3, 8, 9, 17, 63, 64, 65, 200, 512, 513, 700];
            let loops = [(1, true), (looping.len(), true)];
            for (width, only_looping) in widths.map(|w| (w, false)).into_iter().chain(loops) {
                let pool = if only_looping { &looping } else { &points };
                let mut block_points = Vec::new();
                while block_points.len() < width {
                    let p = pool[rng.below(pool.len())];
                    let run = 1 + rng.below(12);
                    block_points
                        .extend(std::iter::repeat_n(p, run.min(width - block_points.len())));
                }
                let (block, mut seqs) = walked(&tables, &text, &block_points, &meter, true);
                skipped += block.skipped;
                skipped_utf8 += block.skipped_utf8;
                let rows = rows(&block);
                // Each behaviour once (the root's configurations may be another's: it is
                // interned apart).
                let distinct: std::collections::HashSet<_> = rows
                    .iter()
                    .enumerate()
                    .filter(|&(f, _)| f as u32 != ROOT)
                    .map(|(_, r)| r)
                    .collect();
                assert_eq!(
                    distinct.len(),
                    rows.len() - 1,
                    "width {width}: a behaviour twice"
                );
                for (i, &t) in text.ids.iter().enumerate() {
                    let bytes = vocab.token_bytes(t).unwrap();
                    let (q, e) = &rows[block.token_behaviour[i] as usize];
                    for (j, &p) in block_points.iter().enumerate() {
                        assert_eq!(
                            (q[j], e[j]),
                            stepped(&tables, &mut seqs, p, bytes),
                            "width {width}, token {bytes:?} from point {j} {p:?}"
                        );
                    }
                }
            }
        }
        assert!(
            skipped_utf8 > 0,
            "{skipped_utf8} nodes skipped by their UTF-8 state"
        );
        assert!(
            skipped - skipped_utf8 > 300,
            "{skipped} nodes skipped, {skipped_utf8} by their UTF-8 state"
        );
    }

    /// Tokens of ASCII, whole characters of every length, characters cut anywhere and the
    /// lexer's quotes and comment ends: most subtrees hold several characters.
    fn utf8_vocabulary(rng: &mut XorShift) -> Vocabulary {
        let pieces: [&[u8]; 16] = [
            b"a",
            b"ab",
            b" ",
            b"\"",
            b"*/",
            b"\\",
            "é".as_bytes(),
            "ü".as_bytes(),
            "日本".as_bytes(),
            "🦀".as_bytes(),
            "\u{800}".as_bytes(),
            "\u{10ffff}".as_bytes(),
            b"\xE6\x97",
            b"\xED\x9F",
            b"\x80",
            b"\xBF\xBF",
        ];
        random_vocabulary(rng, &pieces, 3000)
    }

    #[test]
    fn skipping_subtrees_gives_the_walk_without_skipping() {
        let mut rng = XorShift(0x7574_6638_736b_6970);
        let vocab = utf8_vocabulary(&mut rng);
        let text = TextIndex::new(&vocab);
        let meter = Meter::new(1 << 32);
        let lexer = many_states(false);
        let tables = tables_for(&lexer, &vocab, &meter);
        let (points, ..) = crate::all_points(&lexer, &meter).unwrap();
        // Points inside a string or a comment (any character goes on), then every point.
        let inside = looping_points(&lexer, &points);
        let (mut skipped, mut by_utf8) = (0, 0);
        for (width, pool) in [
            (1, &inside),
            (3, &inside),
            (20, &inside),
            (9, &points),
            (200, &points),
        ] {
            let block_points: Vec<LexPoint> =
                (0..width).map(|_| pool[rng.below(pool.len())]).collect();
            let walk = |skip| walked(&tables, &text, &block_points, &meter, skip).0;
            let (fast, plain) = (walk(true), walk(false));
            assert_eq!(plain.skipped, 0);
            assert_eq!(fast.token_behaviour, plain.token_behaviour, "width {width}");
            assert_eq!(rows(&fast), rows(&plain), "width {width}");
            skipped += fast.skipped;
            by_utf8 += fast.skipped_utf8;
        }
        assert!(
            by_utf8 > 100,
            "{by_utf8} nodes skipped by their UTF-8 state"
        );
        assert!(skipped >= by_utf8, "{skipped} nodes skipped in all");
    }

    /// Every behaviour's configurations over the block's points.
    fn rows(block: &Block) -> Vec<(Vec<u32>, Vec<u32>)> {
        let w = block.width;
        (0..block.behaviour_len() as u32)
            .map(|f| {
                let (mut q, mut e) = (vec![0; w], vec![0; w]);
                block.spread(f, &block.q, &mut q);
                block.spread(f, &block.e, &mut e);
                (q, e)
            })
            .collect()
    }
}
