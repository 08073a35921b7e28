//! One lexer point's spans at a time: [`PointSpanner`], with span ids that hold across
//! points ([`SpanIds`]).
//!
//! [`TokenSpans::build`](crate::TokenSpans::build) walks the vocabulary trie for 64 points at
//! once, interning each trie prefix's vector of configurations so that most nodes are one
//! table lookup. From one point a vector is one configuration `(q, e)`, and a node's is its
//! parent's stepped by one byte: a lookup in the lexer's outcome table. So a point's walk
//! here is a depth-first pass over the trie with the configuration of each node on the path
//! kept on a stack; no prefix is interned, and a token's span is looked up by its
//! configuration (an array read for the spans that emit nothing, most of them; a hash lookup
//! for the others).
//!
//! The emitted sequences and the spans are interned in a [`SpanIds`] kept by the caller across
//! walks, so a span has one [`SpanId`] however many points realise it: a masker can remember
//! what it derived from a span in an array indexed by that id, and meet it again for the price
//! of a read.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use munch_lexer::Lexer;
use munch_vocab::{TokenId, TrieNode, Vocabulary};

use super::error::{SpansBudget, SpansBuildError};
use super::meter::Meter;
use super::walk::{LexTables, Seqs, EMIT, SIDE};
use super::{LexPoint, Span, SpanId, SpanInterner, SpansConfig};

/// What the interners of a [`SpanIds`] charge: nothing is refused by it (they grow with the
/// spans met, which [`SpansConfig::max_spans`] and [`SpansConfig::max_bytes`] bound after each
/// walk).
static UNMETERED: Meter = Meter::new(usize::MAX);

/// Tells the spanners apart, so that a [`SpanIds`] is only used with its own.
static NEXT_SPANNER: AtomicU64 = AtomicU64::new(0);

/// The spans of one point at a time over one vocabulary, with the lexer's tables made once:
/// for a masker that computes a point's spans the first time it reaches the point, over a
/// small vocabulary (one token per class of [`TokenClasses::build`](crate::TokenClasses::build),
/// say): a point's walk is one pass over the trie, each node stepped from its parent's
/// configuration by one table lookup. `Send + Sync`: the tables are read-only, and each
/// caller keeps its own [`SpanIds`], where the spans of its walks are interned.
pub struct PointSpanner {
    tables: LexTables<'static>,
    vocab: Arc<Vocabulary>,
    /// Per byte class: the state a lexeme that cannot go on restarts in.
    restart: Vec<u32>,
    /// Per trie node: its byte's class (the root's is unused).
    node_class: Vec<u8>,
    config: SpansConfig,
    id: u64,
}

/// Spans interned across the walks of one [`PointSpanner`] ([`PointSpanner::span_ids`]): a
/// span has the same [`SpanId`] from every point.
pub struct SpanIds {
    seqs: Seqs<'static>,
    spans: SpanInterner<'static>,
    /// The walk's path: per node on it, `(subtree end, open part, emitted)`.
    stack: Vec<(u32, u32, u32)>,
    spanner: u64,
}

/// The spans of every token from one point ([`PointSpanner::spans_at`]), with ids of their own.
pub struct PointSpans {
    ids: SpanIds,
    of: Vec<Option<SpanId>>,
}

impl PointSpanner {
    /// The lexer's tables for `vocab`, lexemes told apart by `key` (see
    /// [`TokenSpans::build_keyed`](crate::TokenSpans::build_keyed)); charged to `config`'s
    /// [`max_bytes`](SpansConfig::max_bytes), as the spans each [`SpanIds`] holds are.
    pub fn new(
        lexer: &Lexer,
        vocab: Arc<Vocabulary>,
        config: &SpansConfig,
        key: &(dyn Fn(munch_lexer::TerminalId) -> u32 + Sync),
    ) -> Result<PointSpanner, SpansBuildError> {
        let meter = Meter::new(config.max_bytes);
        let forks = config.max_fork_work;
        let tables = LexTables::new(lexer, &meter, key, vocab.max_token_bytes(), forks)?;
        let restart = (0..lexer.class_len())
            .map(|k| lexer.next_class(lexer.start(), k as u8).as_u32())
            .collect();
        let trie = vocab.trie();
        meter.charge(trie.node_len())?;
        let node_class = (0..trie.node_len())
            .map(|n| lexer.byte_class(trie.byte(TrieNode::from_usize(n))))
            .collect();
        Ok(PointSpanner {
            tables: tables.into_owned(),
            vocab,
            restart,
            node_class,
            config: config.clone(),
            id: NEXT_SPANNER.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// An empty table of spans for this spanner's walks.
    pub fn span_ids(&self) -> SpanIds {
        SpanIds {
            seqs: Seqs::new(&self.tables, &UNMETERED).expect("an unmetered table is never refused"),
            spans: SpanInterner::new(self.config.max_spans, &self.tables, &UNMETERED)
                .expect("an unmetered table is never refused"),
            stack: Vec::new(),
            spanner: self.id,
        }
    }

    /// Per token of the vocabulary (`out[t]`), the span it realises from `at` in `ids`, or
    /// `None` where it is dead (or has no bytes). `false`: `at` is not a point of the lexer
    /// (`out` is then left empty).
    ///
    /// Errors: the spans `ids` holds past [`SpansConfig::max_spans`] or their bytes past
    /// [`SpansConfig::max_bytes`], or sequences of lexemes past what a configuration names.
    /// Panics if `ids` is another spanner's.
    pub fn walk(
        &self,
        at: LexPoint,
        ids: &mut SpanIds,
        out: &mut Vec<Option<SpanId>>,
    ) -> Result<bool, SpansBuildError> {
        assert_eq!(ids.spanner, self.id, "span ids of another point spanner");
        out.clear();
        let lexer = &*self.tables.lexer;
        let is_point = match at.inhibitor {
            None => at.state.as_usize() < lexer.state_len() && !lexer.is_dead(at.state),
            Some(inh) => {
                inh.as_usize() < lexer.state_len()
                    && at.state == lexer.start()
                    && lexer.inhibits(inh)
                    && !lexer.is_dead(lexer.start())
            }
        };
        if !is_point {
            return Ok(false);
        }
        out.resize(self.vocab.len(), None);
        let tables = &self.tables;
        let width = tables.width;
        let trie = self.vocab.trie();
        let node_len = trie.node_len() as u32;
        let SpanIds {
            seqs, spans, stack, ..
        } = ids;
        stack.clear();
        stack.push((node_len, at.state.as_u32(), 0));
        let mut node = 1u32;
        while node < node_len {
            while stack.last().is_some_and(|&(end, _, _)| end <= node) {
                stack.pop();
            }
            let &(_, q, e) = stack.last().expect("the root's entry spans the trie");
            let n = TrieNode::from(node);
            let class = self.node_class[node as usize];
            let (q2, e2) = match at.inhibitor {
                // The first byte after a lexeme emitted inhibited.
                Some(inh) if stack.len() == 1 => {
                    (lexer.next_inhibited_class(inh, class).as_u32(), 0)
                }
                _ => {
                    let o = tables.outcome[class as usize * width + q as usize];
                    if o & EMIT == 0 {
                        (o, e)
                    } else if o & SIDE == 0 {
                        (self.restart[class as usize], seqs.append(e, o & !EMIT))
                    } else {
                        // Rare: a fork resolved, or a guarded pending state after a lexeme.
                        let (after, lexemes) = &tables.side[(o & !(EMIT | SIDE)) as usize];
                        (*after, lexemes.iter().fold(e, |e, &l| seqs.append(e, l)))
                    }
                }
            };
            if let Some(e) = seqs.failed() {
                return Err(e.clone());
            }
            let end = trie.subtree_end(n).as_u32();
            if q2 == 0 {
                node = end;
                continue;
            }
            for &t in trie.tokens_at(n) {
                let s = spans.intern(seqs, tables, e2, q2)?;
                out[t.as_usize()] = Some(SpanId(s));
            }
            if end > node + 1 {
                stack.push((end, q2, e2));
            }
            node += 1;
        }
        let bytes = ids.heap_bytes();
        if bytes > self.config.max_bytes {
            return Err(SpansBuildError::new(
                SpansBudget::Bytes,
                self.config.max_bytes as u64,
            ));
        }
        Ok(true)
    }

    /// The spans from point `at` alone, what [`TokenSpans::build_keyed`](crate::TokenSpans::build_keyed)
    /// computes for it, with ids of their own; `None` if `at` is not a point of the lexer.
    pub fn spans_at(&self, at: LexPoint) -> Result<Option<PointSpans>, SpansBuildError> {
        let mut ids = self.span_ids();
        let mut of = Vec::new();
        Ok(self
            .walk(at, &mut ids, &mut of)?
            .then_some(PointSpans { ids, of }))
    }

    /// Heap bytes held (the lexer's copy apart).
    pub fn heap_bytes(&self) -> usize {
        self.tables.heap_bytes() + self.node_class.capacity() + self.restart.capacity() * 4
    }

    /// The lexer whose points this spanner walks.
    pub fn lexer(&self) -> &Lexer {
        &self.tables.lexer
    }
}

impl SpanIds {
    /// The span `id`. Panics if `id` is out of range.
    #[inline]
    pub fn span(&self, id: SpanId) -> Span<'_> {
        self.spans.table.span(id.as_usize())
    }

    /// The number of spans interned so far: ids are `0..span_len()`.
    #[inline]
    pub fn span_len(&self) -> usize {
        self.spans.table.len()
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.seqs.heap_bytes() + self.spans.heap_bytes() + self.stack.capacity() * 12
    }
}

impl PointSpans {
    /// The span token `t` realises from the point; `None` if it is dead there or is not a
    /// text token.
    pub fn span_of(&self, t: TokenId) -> Option<SpanId> {
        self.of.get(t.as_usize()).copied().flatten()
    }

    /// The span `id`. Panics if `id` is out of range.
    pub fn span(&self, id: SpanId) -> Span<'_> {
        self.ids.span(id)
    }

    /// The number of distinct spans from the point.
    pub fn span_len(&self) -> usize {
        self.ids.span_len()
    }
}

impl std::fmt::Debug for PointSpans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PointSpans")
            .field("span_len", &self.span_len())
            .finish_non_exhaustive()
    }
}

// Each thread that walks keeps its own span ids, and may hand them to another.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SpanIds>();
};
