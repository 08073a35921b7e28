//! # munch-masker-spanner
//!
//! The GreatGramma masker (Park, Zhou, D'Antoni, ICML 2025) on munch's GLR parser: most of a
//! mask is precomputed per (lexer point, LR state), and only the tokens whose fate depends on
//! what lies below the top of the stack are checked against the real stack at mask time.
//!
//! ## Offline
//!
//! 1. **Lexical spans** ([`munch_tokens::TokenSpans`]): from each lexer point `q` (a
//!    head's lexer state and inhibitor), each token class is dead or realises one span: the
//!    lexemes it completes and the lexeme it leaves open (GreatGramma's token-level lexing
//!    transducer; its inverse per point is `T_inv`). A token whose bytes are read several
//!    ways until more bytes decide (one that ends inside a character that may or may not
//!    extend a complete lexeme, or while the longer reading of a lexeme the lexer may go
//!    back to, a lazy one or one of literals, is undecided) has
//!    several readings (the span's forks): its class belongs to each one's terminal span
//!    below, and is allowed if any is.
//! 2. **Terminal spans** (`tau`): what the parser sees of a span: per completed lexeme its
//!    accepted terminals (ties fork; ignored terminals leave the stack as it is), and the
//!    terminals the open lexeme can still complete (ignored ones, or shiftable ones, keep the
//!    stack live). Many spans are one terminal span; they form one trie by their completed
//!    lexemes, and each point has its part of it in preorder (`points`).
//! 3. **Classification** (`classify`, `sim`): per LR state `s`, one walk of the trie with the
//!    *bare* stack `s` (nothing below) marks the terminal spans it accepts: those are accepted
//!    whatever lies below. Where the bare stack dies (a reduction reaches below `s`, or the
//!    span is rejected) the walk stops; the trie nodes it got through are kept, each marked
//!    when its whole subtree is accepted. Conflicting actions are all followed: the simulator is
//!    the runtime's RNGLR reducer over an arena.
//! 4. **Tables**: per point `q` and LR state `s`, the classes of the always-accepted spans as
//!    one set `A(q, s)` (interned; a list or a bitset, whichever is smaller). The
//!    context-dependent spans `D(q, s)` are not listed: they are the rest of the point's trie,
//!    which the online walk visits minus the subtrees the bare stack accepts whole, and minus
//!    first lexemes none of whose terminals has an action in `s` (the stack-free
//!    over-approximation: no stack with top `s` takes them).
//!
//! Steps 2 to 4 read the LR tables' quotient ([`ClassTables`]): terminals and states as their
//! classes, which no run of the parser tells apart (8,000 keywords under `(…)*` are one
//! terminal and a few states), and the online walk reads a node's state as its class.
//!
//! ## Online
//!
//! For each head of the [`ParserState`] (GSS node with LR state `s`, point `q`): `A(q, s)`,
//! plus what a walk of the point's trie finds against the real stacks below the head (`online`):
//! per lexeme, the frontier of the real stacks after it (simulated over the real GSS, which is
//! read, never written), and per span ending there, whether the frontier can shift a terminal
//! the open lexeme can complete. Frontiers, their steps and their shift answers are memoised
//! across heads and masks. Real GSS nodes and the simulator's nodes are named alike, by
//! structure (LR state and the names of the nodes below): a lexeme emitted again gives an equal
//! node, and the frontier a walk simulated after a lexeme is the head that committing the
//! lexeme makes, so the next mask starts from memoised steps. A head's answer is memoised by
//! (stacks, point). The union of classes is expanded to token ids (from the nearest recent
//! expansion), and EOS is set iff the state accepts.
//!
//! ```
//! use std::sync::Arc;
//! use munch_glr::lark::{load, LoadConfig};
//! use munch_glr::mask::{Masker, Oracle};
//! use munch_glr::parser::{Parser, ParserConfig, ParserState};
//! use munch_masker_spanner::{SpannerConfig, SpannerMasker};
//! use munch_vocab::{TokenId, Vocabulary};
//!
//! let grammar = load(br#"start: "(" start ")" | "x""#, &LoadConfig::default()).unwrap();
//! let parser = Arc::new(Parser::new(&grammar, &ParserConfig::default()).unwrap());
//! let tokens = ["(", ")", "x", "x)", "((", "))"].map(|t| Some(t.as_bytes().to_vec()));
//! let mut tokens = tokens.to_vec();
//! tokens.push(None); // EOS
//! let vocab = Arc::new(Vocabulary::from_token_bytes(tokens, vec![TokenId::from(6)]).unwrap());
//! let config = SpannerConfig::default();
//! let spanner = SpannerMasker::new(Arc::clone(&parser), Arc::clone(&vocab), &config).unwrap();
//! let mut state = ParserState::new(parser);
//! state.commit_bytes(b"((x").unwrap();
//! let mask = spanner.mask(&mut spanner.create_cache(), &state);
//! let oracle = Oracle::new(vocab);
//! assert_eq!(mask, oracle.mask(&mut oracle.create_cache(), &state));
//! assert!(mask.contains(TokenId::from(5)) && !mask.contains(TokenId::from(2)));
//! ```

// All APIs need docs: the masker's contract and budgets are what the engine programs against.
#![deny(missing_docs)]

mod build;
mod classify;
mod online;
mod points;
mod sim;
mod tau;

use std::fmt;
use std::sync::Arc;

use munch_glr::lr::ClassTables;
use munch_glr::mask::{set_eos, IndentFix, MaskCache, MaskMut, Masker};
use munch_glr::parser::{Parser, ParserState};
use munch_tokens::{
    ClassId, ClassSet, ExpandCache, LexPoint, SpansBuildError, SpansConfig, TokenSpans,
};
use munch_vocab::Vocabulary;

use crate::online::Online;
use crate::points::PointTries;
use crate::tau::Taus;

/// Budgets of [`SpannerMasker::new`]. The defaults fit the SynCode grammars with real
/// 128k–262k vocabularies with a wide margin and stop a pathological grammar in seconds.
#[derive(Clone, Debug)]
pub struct SpannerConfig {
    /// Budgets of the lexical spans.
    pub spans: SpansConfig,
    /// The most simulation nodes alive at once while classifying (one LR state's walk of the
    /// terminal-span trie). Default 4,000,000.
    pub max_sim_nodes: usize,
    /// The most reduction closures the whole classification may run (its work). Default
    /// 100,000,000.
    pub max_closures: u64,
    /// The most bytes the build may hold at once: the lexical spans' build (every table it
    /// allocates, charged before it is allocated; held to the lower of this and
    /// [`SpansConfig::max_bytes`]), then every table it keeps (the lexical spans included) and
    /// its scratch (the simulator's arena, the classification's rows), charged as they grow;
    /// [`SpannerStats::heap_bytes`] never exceeds it. Default 4 GiB.
    pub max_table_bytes: usize,
}

impl Default for SpannerConfig {
    fn default() -> Self {
        SpannerConfig {
            spans: SpansConfig::default(),
            max_sim_nodes: 4_000_000,
            max_closures: 100_000_000,
            max_table_bytes: 4 << 30,
        }
    }
}

/// Why a [`SpannerMasker`] could not be built.
#[derive(Debug)]
pub struct SpannerBuildError {
    kind: SpannerBuildErrorKind,
}

/// The reason behind a [`SpannerBuildError`].
#[derive(Debug)]
#[non_exhaustive]
pub enum SpannerBuildErrorKind {
    /// The lexical spans exceeded one of their budgets.
    Spans(SpansBuildError),
    /// A budget of [`SpannerConfig`] was exceeded.
    Budget {
        /// The field's name (`max_sim_nodes`, `max_closures`, `max_table_bytes`).
        name: &'static str,
        /// Its value.
        limit: u64,
    },
}

impl SpannerBuildError {
    pub(crate) fn budget(name: &'static str, limit: u64) -> Self {
        SpannerBuildError {
            kind: SpannerBuildErrorKind::Budget { name, limit },
        }
    }

    /// Why.
    pub fn kind(&self) -> &SpannerBuildErrorKind {
        &self.kind
    }

    /// The name of the budget that was exceeded, whichever stage it belongs to.
    pub fn budget_name(&self) -> &'static str {
        match &self.kind {
            SpannerBuildErrorKind::Spans(e) => e.budget().name(),
            SpannerBuildErrorKind::Budget { name, .. } => name,
        }
    }
}

impl fmt::Display for SpannerBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            SpannerBuildErrorKind::Spans(e) => write!(f, "spanner: {e}"),
            SpannerBuildErrorKind::Budget { name, limit } => {
                write!(f, "spanner: budget `{name}` ({limit}) exceeded")
            }
        }
    }
}

impl std::error::Error for SpannerBuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            SpannerBuildErrorKind::Spans(e) => Some(e),
            SpannerBuildErrorKind::Budget { .. } => None,
        }
    }
}

/// Sizes and cost of a built [`SpannerMasker`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpannerStats {
    /// Lexer points (where a token can start).
    pub points: usize,
    /// LR states.
    pub lr_states: usize,
    /// Token classes.
    pub token_classes: usize,
    /// Distinct lexical spans over all points (|Re|).
    pub realisable_spans: usize,
    /// Distinct terminal spans (lexical spans as the parser sees them).
    pub terminal_spans: usize,
    /// Nodes of the terminal-span trie.
    pub trie_nodes: usize,
    /// Nodes of the per-point tries, over all points.
    pub point_trie_nodes: usize,
    /// (LR state, terminal span) pairs that every stack with that top accepts.
    pub always_pairs: usize,
    /// (point, LR state) pairs with a non-empty always-accepted set `A(q, s)`.
    pub table_entries: usize,
    /// Distinct always-accepted sets stored.
    pub always_sets: usize,
    /// Reduction closures run by the classification.
    pub closures: u64,
    /// Heap held by the masker's tables (the lexical spans included).
    pub heap_bytes: usize,
    /// The most bytes the build held at once, as charged to
    /// [`SpannerConfig::max_table_bytes`]: the tables above and the build's scratch
    /// (at least `heap_bytes`), and the lexical spans' build before them
    /// ([`TokenSpans::build_bytes`]). A budget of this many bytes or more builds these tables
    /// (with one thread for the spans: with more, how their walks interleave moves the
    /// spans' peak a little from run to run).
    pub peak_bytes: usize,
    /// Wall-clock build time, in seconds.
    pub build_s: f64,
}

/// Build progress, for [`SpannerMasker::with_progress`].
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// The stage (`spans`, `terminal spans`, `classify`, `tables`).
    pub stage: &'static str,
    /// Units done in this stage.
    pub done: usize,
    /// Units in this stage.
    pub total: usize,
}

impl Progress {
    pub(crate) const fn at(stage: &'static str, done: usize, total: usize) -> Progress {
        Progress { stage, done, total }
    }
}

/// A set of classes in the tables: a list when that is smaller than a bitset.
#[derive(Clone, Copy, Debug)]
enum ClassList {
    /// `pool[lo..hi]`.
    Sparse { lo: u32, hi: u32 },
    /// `dense[i]`.
    Dense(u32),
}

/// The GreatGramma masker. Immutable, `Send + Sync`; see the [crate docs](crate).
pub struct SpannerMasker {
    /// Exact answers for the tokens the indentation context decides (`postlex = python`).
    indent: Option<Arc<IndentFix>>,
    /// The parser, and the LR tables the tables and walks read: a node's state is read as its
    /// class, a lexeme's terminals as theirs.
    lr: Arc<ClassTables>,
    vocab: Arc<Vocabulary>,
    spans: TokenSpans,
    taus: Taus,
    /// Classes of LR states.
    lr_states: usize,
    tries: PointTries,
    /// Per (LR state, trie node), for the nodes the bare stack gets through: whether every span
    /// below is always accepted.
    alive: classify::Alive,
    /// Per class of LR states, `act_words` words: bit `k` iff it has an action on lookahead
    /// class `k`.
    act_words: usize,
    acts: Vec<u64>,
    /// `entry_of[q * lr_states + s]`: `A(q, s)` (for class `s`) as an index into `sets` plus
    /// one (0: empty).
    entry_of: Vec<u32>,
    sets: Vec<ClassList>,
    pool: Vec<ClassId>,
    dense: Vec<ClassSet>,
    stats: SpannerStats,
}

impl fmt::Debug for SpannerMasker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpannerMasker")
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl SpannerMasker {
    /// Builds the tables for `parser`'s grammar over `vocab` within the budgets of `config`.
    pub fn new(
        parser: Arc<Parser>,
        vocab: Arc<Vocabulary>,
        config: &SpannerConfig,
    ) -> Result<SpannerMasker, SpannerBuildError> {
        Self::with_progress(parser, vocab, config, &mut |_| {})
    }

    /// [`SpannerMasker::new`], reporting progress to `progress` now and then.
    pub fn with_progress(
        parser: Arc<Parser>,
        vocab: Arc<Vocabulary>,
        config: &SpannerConfig,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<SpannerMasker, SpannerBuildError> {
        build::build(parser, vocab, config, progress)
    }

    /// Sizes and cost of the tables.
    pub fn stats(&self) -> SpannerStats {
        self.stats.clone()
    }

    fn add(&self, list: ClassList, acc: &mut ClassSet) {
        match list {
            ClassList::Sparse { lo, hi } => {
                for &c in &self.pool[lo as usize..hi as usize] {
                    acc.insert(c);
                }
            }
            ClassList::Dense(i) => {
                acc.union_with(&self.dense[i as usize]);
            }
        }
    }
}

/// Scratch space of [`SpannerMasker`].
struct Cache {
    acc: ClassSet,
    head_acc: ClassSet,
    online: Online,
    /// (head node, point) → the head's allowed classes, across masks (bounded by
    /// [`HEAD_MEMO`]).
    heads: ahash::AHashMap<(online::NodeRef, u32), ClassSet>,
    /// Recent expansions: masks along a text repeat or differ in a few classes.
    expand: ExpandCache,
}

/// The most heads whose answers a cache keeps.
const HEAD_MEMO: usize = 1024;

impl Masker for SpannerMasker {
    fn name(&self) -> &str {
        "spanner"
    }

    fn vocabulary(&self) -> &Vocabulary {
        &self.vocab
    }

    fn create_cache(&self) -> MaskCache {
        MaskCache::new(Cache {
            acc: self.spans.classes().empty_set(),
            head_acc: self.spans.classes().empty_set(),
            online: Online::new(&self.lr, self.taus.lookahead_words()),
            heads: ahash::AHashMap::new(),
            expand: ExpandCache::new(),
        })
    }

    fn fill_into(&self, cache: &mut MaskCache, state: &ParserState, mask: MaskMut<'_>) {
        IndentFix::fill_or_plain(self.indent.as_deref(), &self.vocab, state, mask, |s, m| {
            self.fill_plain(cache, s, m)
        })
    }
}

impl SpannerMasker {
    /// The mask of `state` with the newline terminal read as any other (exact without a
    /// post-lexer; see [`IndentFix`]).
    fn fill_plain(&self, cache: &mut MaskCache, state: &ParserState, mut mask: MaskMut<'_>) {
        let cache: &mut Cache = cache.get_mut();
        cache.acc.clear();
        if cache.online.start_mask() {
            cache.heads.clear();
        }
        for head in state.heads() {
            let point = LexPoint {
                state: head.lex_state(),
                inhibitor: head.inhibitor(),
            };
            // Every live head's configuration is a point (heads are not dead); a state of
            // another parser would be a caller bug, and it allows nothing here.
            let Some(q) = self.spans.point(point) else {
                continue;
            };
            let node = head.node();
            // A head's classes depend only on its stacks and point: heads recur from mask to
            // mask (an ignored lexeme leaves the node as it is; a lexeme emitted again makes an
            // equal node), and the simulator's refs name stacks for as long as its memos live.
            let key = (cache.online.real(node), q.as_u32());
            if let Some(known) = cache.heads.get(&key) {
                cache.acc.union_with(known);
                continue;
            }
            let head_acc = &mut cache.head_acc;
            head_acc.clear();
            let s = self.lr.state(node.state()).as_usize();
            let e = self.entry_of[q.as_usize() * self.lr_states + s];
            if e != 0 {
                self.add(self.sets[e as usize - 1], head_acc);
            }
            let complete = self.walk(&mut cache.online, head_acc, &cache.acc, q.as_usize(), node);
            cache.acc.union_with(head_acc);
            if complete {
                if cache.heads.len() >= HEAD_MEMO {
                    cache.heads.clear();
                }
                cache.heads.insert(key, head_acc.clone());
            }
        }
        self.spans
            .classes()
            .expand_cached(&mut cache.expand, &cache.acc, mask.words_mut());
        set_eos(&self.vocab, state, &mut mask);
    }
}

// Compile-time check of the thread-safety promise.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SpannerMasker>();
};
