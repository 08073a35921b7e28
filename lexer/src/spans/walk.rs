//! The trie walk: for a block of points at once, which lexer configuration every trie prefix
//! leads each point to.
//!
//! A prefix `w` of the vocabulary trie, read from a block of points, leads each point to a
//! *configuration* `(q, e)`: `q` the open lexer state (0, the dead state, if `w` is dead from
//! that point) and `e` the emitted lexemes so far, as a hash-consed sequence ([`Seqs`]). The
//! vector of configurations over the block is the prefix's *behaviour* on the block; behaviours
//! are interned ([`BlockWalk::intern`]), and the behaviour of `w·b` depends only on that of `w`
//! and on `b`'s byte class. So the walk memoises (behaviour, byte class) → behaviour in a dense
//! table, and most trie nodes cost one table lookup: a block costs the number of trie nodes
//! plus the block width per distinct (behaviour, class) pair, not nodes × points.
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
use super::LexPoint;
use crate::vocab::{TokenTrie, TrieNode};
use crate::{LexState, Lexer};

/// The behaviour of a dead prefix: dead from every point of the block.
pub(super) const DEAD: u32 = 0;
/// The behaviour of the empty prefix (the root). Never produced by interning: only the first
/// byte checks inhibitors, so the root behaves unlike any other node with the same vector.
const ROOT: u32 = 1;
const UNKNOWN: u32 = u32::MAX;
const NO_INHIBITOR: u32 = u32::MAX;

/// Hash-consed sequences of emitted lexemes: id 0 is the empty sequence, and each other id is
/// (its prefix, its last lexeme), so that appending is one hash lookup and equal sequences have
/// equal ids.
#[derive(Debug)]
pub(super) struct Seqs {
    parent: Vec<u32>,
    last: Vec<LexState>,
    index: AHashMap<(u32, u32), u32>,
}

impl Seqs {
    pub(super) fn new() -> Seqs {
        Seqs {
            parent: vec![0],
            last: vec![LexState::default()],
            index: AHashMap::new(),
        }
    }

    /// The id of `seq` followed by `state`.
    #[inline]
    pub(super) fn push(&mut self, seq: u32, state: LexState) -> u32 {
        let next = self.parent.len() as u32;
        let id = *self.index.entry((seq, state.as_u32())).or_insert(next);
        if id == next {
            self.parent.push(seq);
            self.last.push(state);
        }
        id
    }

    /// Adds every sequence of `other` to `self`; returns, per id of `other`, its id here.
    pub(super) fn merge(&mut self, other: &Seqs) -> Vec<u32> {
        let mut map = vec![0u32; other.parent.len()];
        // A sequence's prefix always has a smaller id than the sequence.
        for s in 1..other.parent.len() {
            map[s] = self.push(map[other.parent[s] as usize], other.last[s]);
        }
        map
    }

    /// Appends the lexemes of `seq` to `out`, first to last.
    pub(super) fn collect(&self, seq: u32, out: &mut Vec<LexState>) {
        let at = out.len();
        let mut s = seq as usize;
        while s != 0 {
            out.push(self.last[s]);
            s = self.parent[s] as usize;
        }
        out[at..].reverse();
    }
}

/// What the lexer gives the walk, precomputed per state.
pub(super) struct LexTables<'a> {
    pub(super) lexer: &'a Lexer,
    /// Per state: the lowest state with the same accepted terminals, the canonical name of a
    /// lexeme that ends there (its terminals are all the parser will ever see of it); `None`
    /// if the state accepts nothing.
    pub(super) emitted: Vec<Option<LexState>>,
}

impl<'a> LexTables<'a> {
    pub(super) fn new(lexer: &'a Lexer) -> Self {
        let mut first: AHashMap<&[crate::TerminalId], LexState> = AHashMap::new();
        let emitted = (0..lexer.state_len())
            .map(|s| {
                let s = LexState::from_usize(s);
                let accepted = lexer.accepted(s);
                if accepted.is_empty() {
                    None
                } else {
                    Some(*first.entry(accepted).or_insert(s))
                }
            })
            .collect();
        LexTables { lexer, emitted }
    }
}

/// The walk's result for one block: every behaviour's configurations, and each token's
/// behaviour.
pub(super) struct Block {
    /// Number of points in the block.
    pub(super) width: usize,
    /// `q[f * width + j]`, `e[f * width + j]`: the configuration behaviour `f` gives point `j`.
    pub(super) q: Vec<u32>,
    pub(super) e: Vec<u32>,
    /// Per token id: its behaviour ([`DEAD`] for tokens with no bytes).
    pub(super) token_behaviour: Vec<u32>,
}

impl Block {
    pub(super) fn behaviour_len(&self) -> usize {
        self.q.len() / self.width.max(1)
    }
}

/// One block's walk in progress.
struct BlockWalk<'t, 'a> {
    tables: &'t LexTables<'a>,
    width: usize,
    /// Per point of the block: its inhibitor's raw state, or [`NO_INHIBITOR`].
    inhibitor: Vec<u32>,
    q: Vec<u32>,
    e: Vec<u32>,
    /// Behaviour ids by hash, chained through `same_hash`.
    index: AHashMap<u64, u32>,
    same_hash: Vec<u32>,
    /// `trans[f * class_len + class]`: the behaviour after one more byte of that class.
    trans: Vec<u32>,
    class_len: usize,
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

/// Walks `trie` from every point of `points` (one block) at once.
pub(super) fn walk_block(
    tables: &LexTables<'_>,
    trie: &TokenTrie,
    vocab_len: usize,
    points: &[LexPoint],
    seqs: &mut Seqs,
    work: &mut Work<'_>,
) -> Result<Block, SpansBuildError> {
    let width = points.len();
    let class_len = tables.lexer.class_len();
    let mut w = BlockWalk {
        tables,
        width,
        inhibitor: points
            .iter()
            .map(|p| p.inhibitor.map_or(NO_INHIBITOR, |i| i.as_u32()))
            .collect(),
        q: vec![0; 2 * width],
        e: vec![0; 2 * width],
        index: AHashMap::new(),
        same_hash: vec![u32::MAX; 2],
        trans: vec![DEAD; class_len],
        class_len,
        scratch_q: Vec::with_capacity(width),
        scratch_e: Vec::with_capacity(width),
    };
    // The root: every point in its own state, nothing emitted.
    for (j, p) in points.iter().enumerate() {
        w.q[width + j] = p.state.as_u32();
    }
    w.trans.resize(2 * class_len, UNKNOWN);

    let mut token_behaviour = vec![DEAD; vocab_len];
    let node_len = trie.node_len() as u32;
    // (subtree end, behaviour) of the nodes on the path to the current one.
    let mut stack: Vec<(u32, u32)> = vec![(node_len, ROOT)];
    let mut node = 1u32;
    let mut steps = 0u64;
    while node < node_len {
        while stack.last().is_some_and(|&(end, _)| end <= node) {
            stack.pop();
        }
        let parent = stack.last().map_or(ROOT, |&(_, f)| f);
        let n = TrieNode::new(node);
        let class = tables.lexer.byte_class(trie.byte(n)) as usize;
        let slot = parent as usize * class_len + class;
        let mut f = w.trans[slot];
        if f == UNKNOWN {
            work.add(width as u64)?;
            f = w.step(parent, class, seqs);
            w.trans[slot] = f;
        }
        steps += 1;
        if steps & 4095 == 0 {
            work.add(4096)?;
        }
        let end = trie.subtree_end(n).as_u32();
        if f == DEAD {
            node = end;
            continue;
        }
        for &t in trie.tokens_at(n) {
            token_behaviour[t.as_usize()] = f;
        }
        if end > node + 1 {
            stack.push((end, f));
        }
        node += 1;
    }
    work.add(steps & 4095)?;
    Ok(Block {
        width,
        q: w.q,
        e: w.e,
        token_behaviour,
    })
}

impl BlockWalk<'_, '_> {
    /// The behaviour after a byte of class `class` from behaviour `from`.
    fn step(&mut self, from: u32, class: usize, seqs: &mut Seqs) -> u32 {
        let lexer = self.tables.lexer;
        let start = lexer.start();
        let first_byte = from == ROOT;
        let base = from as usize * self.width;
        self.scratch_q.clear();
        self.scratch_e.clear();
        let mut live = false;
        for j in 0..self.width {
            let q = LexState::from(self.q[base + j]);
            let e = self.e[base + j];
            let (nq, ne) = if lexer.is_dead(q) {
                (0, 0)
            } else if first_byte
                && self.inhibitor[j] != NO_INHIBITOR
                && !lexer.is_dead(lexer.next_class(LexState::from(self.inhibitor[j]), class as u8))
            {
                // The byte extends the inhibiting lexeme: this fork of the lexer is wrong.
                (0, 0)
            } else {
                let g = lexer.next_class(q, class as u8);
                if !lexer.is_dead(g) {
                    (g.as_u32(), e)
                } else {
                    match self.tables.emitted[q.as_usize()] {
                        None => (0, 0),
                        Some(lexeme) => {
                            let f = lexer.next_class(start, class as u8);
                            if lexer.is_dead(f) {
                                (0, 0)
                            } else {
                                (f.as_u32(), seqs.push(e, lexeme))
                            }
                        }
                    }
                }
            };
            live |= nq != 0;
            self.scratch_q.push(nq);
            self.scratch_e.push(ne);
        }
        if live {
            self.intern()
        } else {
            DEAD
        }
    }

    /// The id of the behaviour in the scratch vectors, new or existing.
    fn intern(&mut self) -> u32 {
        let hash = {
            use std::hash::{BuildHasher, Hash, Hasher};
            let mut h = ahash::RandomState::with_seeds(1, 2, 3, 4).build_hasher();
            self.scratch_q.hash(&mut h);
            self.scratch_e.hash(&mut h);
            h.finish()
        };
        let w = self.width;
        let head = self.index.get(&hash).copied().unwrap_or(u32::MAX);
        let mut f = head;
        while f != u32::MAX {
            let base = f as usize * w;
            if self.q[base..base + w] == self.scratch_q[..]
                && self.e[base..base + w] == self.scratch_e[..]
            {
                return f;
            }
            f = self.same_hash[f as usize];
        }
        let id = self.same_hash.len() as u32;
        self.q.extend_from_slice(&self.scratch_q);
        self.e.extend_from_slice(&self.scratch_e);
        self.same_hash.push(head);
        self.index.insert(hash, id);
        self.trans
            .resize(self.trans.len() + self.class_len, UNKNOWN);
        id
    }
}
