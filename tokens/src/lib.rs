//! # munch-tokens
//!
//! What the maskers share on the token side: token masks, and token spans and classes (what
//! each vocabulary token does to the lexer, from every lexer configuration, computed once per
//! (lexer, vocabulary)) with the one expansion of class sets into mask words.
//!
//! # Principal types
//!
//! - [`TokenMask`], [`MaskMut`]: a set of token ids in the bitmask layout logits kernels take
//!   (bit `id % 32` of word `id / 32`), owned or over words the caller owns.
//! - [`TokenSpans`]: built by [`TokenSpans::build`]; the [`LexPoint`]s, the distinct
//!   [`Span`]s tokens realise from them, [`span_of`](TokenSpans::span_of) per (point, class)
//!   and its inverse per point.
//! - [`TokenClasses`]: the partition of the text tokens into classes of tokens that realise
//!   the same span from every point; [`expand`](TokenClasses::expand) turns a [`ClassSet`]
//!   into token-mask words; [`ExpandCache`] keeps recent expansions so that
//!   [`expand_cached`](TokenClasses::expand_cached) can start from the nearest one.
//! - [`Expander`]: the expansion engine itself, over any classes given by their members (the
//!   weighted automaton's blocks, say), with [`Tables`] to price it for warm or cold tables
//!   and [`Expanded`] to say how a mask was written.
//! - [`PointSpanner`]: the spans of one point at a time (for a masker that computes a point's
//!   spans when it first reaches the point), interned in a [`SpanIds`] whose ids hold across
//!   points.
//! - [`ClassSet`]: a bitset of [`ClassId`]s. [`PointId`], [`SpanId`], [`ClassId`]: indices.
//! - [`SpansConfig`], [`SpansBuildError`]: the build's budgets and the error naming the one
//!   exceeded.
//!
//! # Points and spans
//!
//! A *point* is where a token can start: `(s, None)` for every state `s` that is not dead (the
//! open lexeme read so far leads to `s`; pending states included), and `(start, Some(inh))`
//! for every state `inh` that
//! [`inhibits`](Lexer::inhibits) (a lexeme was just handed to the parser inhibited by `inh`; see the
//! [`dfa` docs](munch_lexer::dfa#inhibited-terminals)). Reading a token's bytes from a point
//! `(s, i)`:
//!
//! - first byte `b`: if `i = Some(inh)`, the token goes on in
//!   [`Lexer::next_inhibited`]`(inh, b)` (dead if the byte's character extends that lexeme, or
//!   its terminals' look-ahead fails on it; a pending state if the character may or may not);
//! - each byte `b`, on each reading of the token so far, in state `s`: with `g = next(s, b)`
//!   and, if [`Lexer::accepted`]`(s)` is not empty, `p = next_inhibited(s, b)`: the reading
//!   goes on in `g`, and in `p` with the lexeme ending in `s` *emitted* (`b` starts a new
//!   lexeme), each where it is not dead. Both live where `b` begins a character that may or
//!   may not extend the lexeme, until the character is complete; and after a lexeme the lexer
//!   may go back to (a lazy one,
//!   [`LexerConfig::backtrack_lazy`](munch_lexer::dfa::LexerConfig::backtrack_lazy), or one of
//!   literals whose longer reading only literals could complete,
//!   [`LexerConfig::backtrack_literals`](munch_lexer::dfa::LexerConfig::backtrack_literals)),
//!   while its longer reading is undecided: then `p` is a guarded pending state
//!   that may accept and emit lexemes of its own, so a token may have several readings at
//!   once. With no reading left the token is dead;
//! - after the last byte each reading is in a state that is not dead (the open lexeme; it
//!   may accept already, the parser decides what that means): the reading that goes on with
//!   the open lexeme ends in `end`, the others in pending states after more lexemes
//!   ([`Span::forks`]).
//!
//! So from each point a token is either dead or realises exactly one [`Span`]: the lexemes
//! every reading emitted, `end` and the forks. An emitted lexeme is named by a state whose
//! accepted terminals are the lexeme's: the lowest such state ([`Span::emitted`]), so lexemes
//! that differ only in the
//! state they ended in (`0x1F` and `12` as one number terminal) give one span. Ignored
//! terminals are emitted like any other; tied terminals all stay in the accepted set.
//!
//! # Classes
//!
//! Two text tokens are in one class iff from every point they are both dead or realise the same
//! span. A masker that decides one member of a class decides the whole class, so tables can be
//! kept per class ([`ClassSet`]s) and expanded to token ids at the end.
//!
//! # How it is computed
//!
//! Points are taken in blocks of [`BLOCK`]; each block walks the vocabulary trie once, with
//! every point of the block at once, interning the vector of lexer configurations each prefix
//! leads to (see `walk.rs`); a dense memo of (vector, byte class) → vector makes most trie nodes
//! one table lookup. Blocks are independent and walked on [`SpansConfig::threads`] threads.
//! Each block's vectors then refine the partition of the tokens. No per-token simulation, no
//! per-token hashing except where a class splits. SynCode's Go grammar (678 lexer states, 819
//! points) with Llama 3 (128k tokens, 274k trie nodes) builds in about 0.17 s on two threads.
//!
//! [`TokenClasses::build`] computes the same partition without the span tables, for a masker
//! that needs only the classes: it walks the points `(s, None)` alone (the inhibitor points
//! become one more refinement key, but for those whose first byte may leave a pending state,
//! walked too: lexers where a character may or may not extend a lexeme, or that go back to
//! lazy matches or to literals) in one wide block per
//! thread (see `class_blocks`; `bench/PERFORMANCE.md` has its time on Go and on schemas).
//!
//! Per-token tables are indexed by the text tokens' dense numbers, not by id, so a tokenizer
//! with sparse ids costs its text tokens. Both builds charge every table to
//! [`SpansConfig::max_bytes`] before allocating it (see `meter.rs`): what they hold never
//! exceeds the budget, refused or not.
//!
//! # Example
//!
//! ```
//! use munch_lexer::dfa::{Lexer, LexerConfig, TerminalSpec};
//! use munch_tokens::{LexPoint, SpansConfig, TokenSpans};
//! use munch_vocab::{TokenId, Vocabulary};
//!
//! let spec = |name: &str, re: &str| TerminalSpec {
//!     name: name.to_string(),
//!     hir: Some(regex_syntax::parse(re).unwrap()),
//!     is_literal: false,
//!     priority: 0,
//!     ignored: false,
//! };
//! let lexer = Lexer::new(&[spec("A", "a+"), spec("B", "b")], &LexerConfig::default()).unwrap();
//! let tokens = ["a", "aa", "b", "ab", "c"].map(|t| Some(t.as_bytes().to_vec()));
//! let vocab = Vocabulary::from_token_bytes(tokens.to_vec(), vec![]).unwrap();
//! let spans = TokenSpans::build(&lexer, &vocab, &SpansConfig::default()).unwrap();
//! let classes = spans.classes();
//! // "a" and "aa" behave alike from every lexer state; "c" is dead everywhere.
//! assert_eq!(classes.class_of(TokenId::from(0)), classes.class_of(TokenId::from(1)));
//! assert_eq!(classes.len(), 4);
//! // From the start state, "ab" emits an `a+` lexeme and ends in the state after "b".
//! let start = spans.point(LexPoint { state: lexer.start(), inhibitor: None }).unwrap();
//! let ab = classes.class_of(TokenId::from(3)).unwrap();
//! let span = spans.span(spans.span_of(start, ab).unwrap());
//! assert_eq!(span.emitted.len(), 1);
//! assert_eq!(span.end, lexer.next(lexer.start(), b'b'));
//! ```

// All APIs need docs: every masker builds on this crate.
#![deny(missing_docs)]
// Unsafe code lives in the `x86_64` module alone (its kernels), where every unsafe operation
// sits in an `unsafe` block with its own `SAFETY:` comment, also inside an `unsafe fn` (whose
// `# Safety` section states what its callers guarantee).
#![deny(
    unsafe_code,
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks
)]

mod classes;
pub mod deposit;
mod error;
mod expand;
mod kernels;
mod mask;
mod meter;
mod point;
mod set;
pub mod unions;
mod walk;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use ahash::AHashMap;

pub use classes::TokenClasses;
pub use error::{SpansBudget, SpansBuildError};
pub use expand::{ExpandCache, Expanded, Expander, Tables};
pub use kernels::{count_in, Words};
pub use mask::{MaskMut, TokenMask};
pub use point::{PointSpanner, PointSpans, SpanIds};
pub use set::{ClassSet, Iter as ClassSetIter};

use meter::{vec_bytes, Meter};
use munch_lexer::{LexState, Lexer};
use munch_vocab::Vocabulary;
use walk::{Emitted, LexTables, Liveness, Seqs, TextIndex, Work};

/// Points per trie walk: a walk interns vectors of this many configurations.
pub const BLOCK: usize = 64;

munch_vocab::define_id!(
    /// A point of a [`TokenSpans`]: an index into [`TokenSpans::points`].
    PointId
);
munch_vocab::define_id!(
    /// A distinct span of a [`TokenSpans`]: `0..span_len()`.
    SpanId
);
munch_vocab::define_id!(
    /// A token class of a [`TokenClasses`]: `0..len()`.
    ClassId
);

/// Where a token can start: the lexer state of the open lexeme, and the state that inhibits
/// the lexeme just handed to the parser, if any (then `state` is the lexer's start state).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LexPoint {
    /// The open lexeme's state (the start state when the lexeme is empty).
    pub state: LexState,
    /// The state whose lexeme was just emitted inhibited: the token's first byte is read by
    /// [`Lexer::next_inhibited`].
    pub inhibitor: Option<LexState>,
}

/// What a token does from a point: the lexemes it completes, and the state it leaves open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span<'a> {
    /// The lexemes completed inside the token (on every reading, see [`Span::forks`]), in
    /// order, each named by the lowest state whose [`Lexer::accepted`] equals the lexeme's
    /// terminals (use only `accepted` of it), or with [`TokenSpans::build_keyed`] whose
    /// terminals have the same keys.
    pub emitted: &'a [LexState],
    /// The state after the last byte: the open lexeme. Never dead when `forks` is empty; dead
    /// only if every reading of the token emits more than `emitted` (the lexer never makes
    /// such a span: some reading always goes on with the lexeme the others ended).
    pub end: LexState,
    /// The other readings of the token, sorted, when its bytes may be read several ways until
    /// more bytes decide: a token that ends inside a character that began right after a
    /// complete lexeme and may or may not extend it, or (with
    /// [`LexerConfig::backtrack_lazy`](munch_lexer::dfa::LexerConfig::backtrack_lazy) and
    /// [`LexerConfig::backtrack_literals`](munch_lexer::dfa::LexerConfig::backtrack_literals))
    /// one that ends while the longer reading of a lexeme the lexer may go back to (a lazy
    /// one, or one of literals) is undecided. `end` is the reading that
    /// goes on with the open lexeme.
    pub forks: &'a [Fork],
}

/// Another reading of a token (see [`Span::forks`]): after the span's emitted lexemes, more
/// lexemes end, and the rest of the token is read in a pending state (see the
/// [`dfa` docs](munch_lexer::dfa#pending-states)). Which reading is right, the bytes after the
/// token decide; a masker allows a token if some reading leaves the parser live.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fork {
    /// The lexemes that end past the span's emitted ones, in order, named like
    /// [`Span::emitted`]'s; never empty.
    pub lexemes: Box<[LexState]>,
    /// The state after the last byte, never dead.
    pub state: LexState,
}

/// Budgets of [`TokenSpans::build`]; the defaults fit every real grammar and vocabulary with a
/// wide margin and stop a pathological one within seconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpansConfig {
    /// The most token classes. Default 1,000,000.
    pub max_classes: usize,
    /// The most distinct spans over all points. Default 10,000,000.
    pub max_spans: usize,
    /// The most walk steps: trie nodes visited per block plus lexer steps where a new
    /// configuration vector is computed. Default 2,000,000,000.
    pub max_work: u64,
    /// The most lexer steps that fill the rows of forks (bytes a token's several readings
    /// read at once, each fork found over every byte string as long as the longest token).
    /// Real grammars need few; one whose readings multiply with every byte (lazy strings and
    /// regexes that may end at each quote or slash, as in Lark's lark.lark) stops here instead
    /// of taking minutes and gigabytes. Default 10,000,000.
    pub max_fork_work: u64,
    /// The most heap bytes the build holds at once: every table it allocates (the lexer's
    /// per-state tables, each walk's configurations, sequences and behaviour per text token,
    /// what each walked block keeps until the spans are made, the classes, the spans) is
    /// charged before it is allocated, so a build past the budget stops before it takes the
    /// memory. Default 4 GiB.
    pub max_bytes: usize,
    /// The most threads the build uses (blocks of points are walked in parallel). Default 2.
    pub threads: usize,
}

impl Default for SpansConfig {
    fn default() -> Self {
        SpansConfig {
            max_classes: 1_000_000,
            max_spans: 10_000_000,
            max_work: 2_000_000_000,
            max_fork_work: 10_000_000,
            max_bytes: 4 << 30,
            threads: 2,
        }
    }
}

const NONE: u32 = u32::MAX;

/// Per block of points: each class's row of spans.
#[derive(Clone, Debug)]
struct BlockSpans {
    width: usize,
    /// Per class: its row.
    class_row: Vec<u32>,
    /// `rows[r * width + j]`: the span of point `j` of the block, or [`NONE`] (dead).
    rows: Vec<u32>,
}

/// What every text token does to the lexer from every point, by class. See the
/// [module docs](self).
///
/// Immutable once built (the per-point inverse is computed on first use, thread-safely),
/// `Send + Sync`.
#[derive(Debug)]
pub struct TokenSpans {
    points: Vec<LexPoint>,
    /// Per state: the point `(s, None)`, or [`NONE`].
    state_point: Vec<u32>,
    /// Per state: the point `(start, Some(s))`, or [`NONE`].
    inhibitor_point: Vec<u32>,
    classes: Arc<TokenClasses>,
    table: SpanTable,
    blocks: Vec<BlockSpans>,
    inverse: Vec<OnceLock<Inverse>>,
    /// The most bytes the build held at once.
    build_bytes: usize,
}

/// The spans realisable from one point, with their classes (see [`TokenSpans::inverse`]).
type Inverse = Box<[(SpanId, ClassSet)]>;

// Compiled maskers share these tables, and the on-demand wda its point spanner, across threads.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<TokenSpans>();
    assert_send_sync::<PointSpanner>();
};

impl TokenSpans {
    /// Computes the points, classes and spans of `vocab` under `lexer`.
    ///
    /// Everything the build holds is charged to [`SpansConfig::max_bytes`] before it is
    /// allocated ([`build_bytes`](TokenSpans::build_bytes) is the most it held at once).
    ///
    /// Errors: a budget of `config` exceeded ([`SpansBuildError`] names it).
    pub fn build(
        lexer: &Lexer,
        vocab: &Vocabulary,
        config: &SpansConfig,
    ) -> Result<TokenSpans, SpansBuildError> {
        Self::build_keyed(lexer, vocab, config, &|t| t.as_u32())
    }

    /// [`TokenSpans::build`], with completed lexemes told apart by the `key`s of their
    /// accepted terminals instead of by the terminals: two lexemes whose terminals have the
    /// same keys are one, named by the lowest state among them ([`Span::emitted`]). A masker
    /// that reads terminals as classes (of the LR tables' quotient, say) passes them, and its
    /// spans are fewer: after any of 8,000 keywords of one class a token `k7` realises one
    /// span, not one per keyword. Keys must keep apart what the masker tells apart (an
    /// ignored terminal from a shifted one).
    pub fn build_keyed(
        lexer: &Lexer,
        vocab: &Vocabulary,
        config: &SpansConfig,
        key: &(dyn Fn(munch_lexer::TerminalId) -> u32 + Sync),
    ) -> Result<TokenSpans, SpansBuildError> {
        let meter = Meter::new(config.max_bytes);
        let (points, state_point, inhibitor_point) = all_points(lexer, &meter)?;
        let block_len = points.len().div_ceil(BLOCK);
        meter.charge(vec_bytes::<&[LexPoint]>(block_len))?;
        let point_blocks: Vec<&[LexPoint]> = points.chunks(BLOCK).collect();
        let text = TextIndex::new(vocab);
        let forks = config.max_fork_work;
        let tables = LexTables::new(lexer, &meter, key, vocab.max_token_bytes(), forks)?;
        let (tables, text) = (&tables, &text);
        // Each block refines the classes as soon as it is walked, and keeps each class's
        // behaviour instead of each token's (classes made later behave as the class they split
        // from), and the configurations of those behaviours alone: what a block keeps grows
        // with the classes, not with the vocabulary.
        let refiner = Mutex::new(classes::Refiner::new(
            text.len(),
            config.max_classes,
            &meter,
        )?);
        let (walked, seqs) =
            walk_configurations(tables, text, &point_blocks, config, &meter, |mut b| {
                let mut keys = lock(&refiner).refine_keyed(&b.token_behaviour)?;
                b.compact(&mut keys, &meter)?;
                Ok((b, keys))
            })?;
        meter.free(point_blocks);
        let refiner = refiner.into_inner().unwrap_or_else(|p| p.into_inner());
        let renumber = refiner.renumbering(text.id_order())?;
        let mut scratch = Vec::new();
        let mut class_behaviours = meter.with_capacity(walked.len())?;
        for (_, keys) in &walked {
            class_behaviours.push(refiner.final_keys(&renumber, keys, &mut scratch)?);
        }
        meter.free(scratch);
        meter.free(renumber);
        let (class_of, class_len) = refiner.finish(text.id_order())?;
        let walked: Vec<walk::Block> = walked
            .into_iter()
            .map(|(b, keys)| {
                meter.free(keys);
                b
            })
            .collect();
        // The expansion's tables.
        let state_points = state_point.iter().filter(|&&p| p != NONE).count();
        let liveness = walked
            .iter()
            .map(|b| Liveness::of(b, None, &meter))
            .collect::<Result<Vec<_>, _>>()?;
        let alive = alive_sets(
            &liveness,
            &class_behaviours,
            state_points,
            class_len,
            &meter,
        )?;
        for l in liveness {
            l.free(&meter);
        }
        let classes = Arc::new(TokenClasses::from_class_of(
            vocab.len(),
            text.class_of_ids(&class_of, &meter)?,
            class_len,
            Some(&alive),
            &meter,
        )?);
        meter.free(class_of);
        free_sets(alive, &meter);

        // Each block's behaviours, translated to spans once per behaviour a class uses.
        let mut spans = SpanInterner::new(config.max_spans, tables, &meter)?;
        let mut blocks = meter.with_capacity(walked.len())?;
        for (b, behaviours) in walked.into_iter().zip(class_behaviours) {
            let mut row_of = meter.vec(b.behaviour_len(), NONE)?;
            let mut rows = Vec::new();
            let mut class_row = meter.with_capacity(class_len)?;
            let (mut q, mut e) = (meter.vec(b.width, 0)?, meter.vec(b.width, 0)?);
            for &f in &behaviours {
                if row_of[f as usize] == NONE {
                    row_of[f as usize] = (rows.len() / b.width.max(1)) as u32;
                    meter.reserve(&mut rows, b.width)?;
                    b.spread(f, &b.q, &mut q);
                    b.spread(f, &b.e, &mut e);
                    for (&q, &e) in q.iter().zip(&e) {
                        rows.push(if q == 0 {
                            NONE
                        } else {
                            spans.intern(&seqs, tables, e, q)?
                        });
                    }
                }
                class_row.push(row_of[f as usize]);
            }
            meter.free(q);
            meter.free(e);
            meter.free(row_of);
            meter.free(behaviours);
            meter.shrink(&mut rows);
            let width = b.width;
            b.free(&meter);
            blocks.push(BlockSpans {
                width,
                class_row,
                rows,
            });
        }
        spans.free_index();
        seqs.free();
        meter.release(tables.heap_bytes());

        meter.charge(vec_bytes::<OnceLock<Inverse>>(points.len()))?;
        let inverse = (0..points.len()).map(|_| OnceLock::new()).collect();
        Ok(TokenSpans {
            points,
            state_point,
            inhibitor_point,
            classes,
            table: spans.table,
            blocks,
            inverse,
            build_bytes: meter.peak(),
        })
    }

    /// Every point of `lexer`, in the order of [`TokenSpans::points`].
    pub fn lexer_points(lexer: &Lexer) -> Vec<LexPoint> {
        let meter = Meter::new(usize::MAX);
        all_points(lexer, &meter).map(|p| p.0).unwrap_or_default()
    }

    /// The most bytes the build held at once, as charged to [`SpansConfig::max_bytes`]
    /// (never more than it).
    pub fn build_bytes(&self) -> usize {
        self.build_bytes
    }

    /// The token classes.
    #[inline]
    pub fn classes(&self) -> &TokenClasses {
        &self.classes
    }

    /// The token classes, shared: a masker that needs only the classes keeps these.
    #[inline]
    pub fn shared_classes(&self) -> &Arc<TokenClasses> {
        &self.classes
    }

    /// Every point: `(s, None)` for the states that are not dead, ascending, then
    /// `(start, Some(inh))` for the states that [`inhibit`](Lexer::inhibits), ascending.
    #[inline]
    pub fn points(&self) -> &[LexPoint] {
        &self.points
    }

    /// The id of `p`, or `None` if it is not a point (a dead state, an inhibitor that does not
    /// accept or cannot grow, an inhibitor with a state other than the start state, a state
    /// of another lexer).
    pub fn point(&self, p: LexPoint) -> Option<PointId> {
        let id = match p.inhibitor {
            None => *self.state_point.get(p.state.as_usize())?,
            Some(inh) => {
                if p.state.as_usize() >= self.state_point.len()
                    || self
                        .points
                        .get(*self.inhibitor_point.get(inh.as_usize())? as usize)?
                        .state
                        != p.state
                {
                    return None;
                }
                self.inhibitor_point[inh.as_usize()]
            }
        };
        (id != NONE).then_some(PointId(id))
    }

    /// The point `p`. Panics if `p` is out of range.
    #[inline]
    pub fn point_at(&self, p: PointId) -> LexPoint {
        self.points[p.as_usize()]
    }

    /// The number of distinct spans realised by some token from some point.
    #[inline]
    pub fn span_len(&self) -> usize {
        self.table.len()
    }

    /// The span `id`. Panics if `id` is out of range.
    #[inline]
    pub fn span(&self, id: SpanId) -> Span<'_> {
        self.table.span(id.as_usize())
    }

    /// The span the tokens of class `c` realise from point `p`; `None` if they are dead there.
    /// Panics if `p` or `c` is out of range.
    #[inline]
    pub fn span_of(&self, p: PointId, c: ClassId) -> Option<SpanId> {
        let (b, j) = (p.as_usize() / BLOCK, p.as_usize() % BLOCK);
        let block = &self.blocks[b];
        let s = block.rows[block.class_row[c.as_usize()] as usize * block.width + j];
        (s != NONE).then_some(SpanId(s))
    }

    /// Every span realisable from `p`, ascending, with the classes that realise it (the
    /// spanner's `T_inv`). Computed on first use per point. Panics if `p` is out of range.
    pub fn inverse(&self, p: PointId) -> &[(SpanId, ClassSet)] {
        self.inverse[p.as_usize()].get_or_init(|| {
            let mut by_span: AHashMap<u32, ClassSet> = AHashMap::new();
            for c in 0..self.classes.len() {
                let c = ClassId::from_usize(c);
                if let Some(s) = self.span_of(p, c) {
                    by_span
                        .entry(s.0)
                        .or_insert_with(|| self.classes.empty_set())
                        .insert(c);
                }
            }
            let mut out: Vec<(SpanId, ClassSet)> = by_span
                .into_iter()
                .map(|(s, set)| (SpanId(s), set))
                .collect();
            out.sort_unstable_by_key(|(s, _)| *s);
            out.into_boxed_slice()
        })
    }

    /// Heap bytes held (the per-point inverses computed so far included).
    pub fn heap_bytes(&self) -> usize {
        let blocks: usize = self
            .blocks
            .iter()
            .map(|b| b.class_row.capacity() * 4 + b.rows.capacity() * 4)
            .sum();
        let inverse: usize = self
            .inverse
            .iter()
            .filter_map(|i| i.get())
            .map(|v| {
                v.len() * std::mem::size_of::<(SpanId, ClassSet)>()
                    + v.iter().map(|(_, s)| s.words().len() * 8).sum::<usize>()
            })
            .sum();
        self.points.capacity() * std::mem::size_of::<LexPoint>()
            + (self.state_point.capacity() + self.inhibitor_point.capacity()) * 4
            + self.classes.heap_bytes()
            + self.table.heap_bytes()
            + blocks
            + self.inverse.capacity() * std::mem::size_of::<OnceLock<Inverse>>()
            + inverse
    }
}

/// Every point of `lexer` (see [`TokenSpans::points`]), and per state its point `(s, None)` and
/// its point `(start, Some(s))`, or [`NONE`]; charged to `meter`.
fn all_points(lexer: &Lexer, meter: &Meter) -> Result<AllPoints, SpansBuildError> {
    let n = lexer.state_len();
    let is_point = |s: usize| !lexer.is_dead(LexState::from_usize(s));
    let is_inhibitor =
        |s: usize| lexer.inhibits(LexState::from_usize(s)) && !lexer.is_dead(lexer.start());
    let len = (0..n).filter(|&s| is_point(s)).count() + (0..n).filter(|&s| is_inhibitor(s)).count();
    meter.charge(vec_bytes::<LexPoint>(len) + vec_bytes::<u32>(2 * n))?;
    let mut points = Vec::with_capacity(len);
    let mut state_point = vec![NONE; n];
    let mut inhibitor_point = vec![NONE; n];
    for (s, point) in state_point.iter_mut().enumerate() {
        if is_point(s) {
            *point = points.len() as u32;
            points.push(LexPoint {
                state: LexState::from_usize(s),
                inhibitor: None,
            });
        }
    }
    for (s, point) in inhibitor_point.iter_mut().enumerate() {
        if is_inhibitor(s) {
            *point = points.len() as u32;
            points.push(LexPoint {
                state: lexer.start(),
                inhibitor: Some(LexState::from_usize(s)),
            });
        }
    }
    Ok((points, state_point, inhibitor_point))
}

/// What [`all_points`] returns: the points, and per state its point `(s, None)` and its point
/// `(start, Some(s))`.
type AllPoints = (Vec<LexPoint>, Vec<u32>, Vec<u32>);

/// The classes of `vocab` under `lexer` without their spans ([`TokenClasses::build`]).
///
/// A token read from an inhibitor point `(start, Some(inh))` whose first byte's class `k` has
/// [`Lexer::next_inhibited`]`(inh, k)` dead or `next(start, k)` (the byte does or does not
/// extend the lexeme of `inh`) is dead, or does exactly what it does from `(start, None)`. So
/// the points `(s, None)` are walked, and the inhibitor points of that kind refine the classes
/// by one key per token: nothing for tokens dead from the start state (dead from every
/// inhibitor point too), otherwise the set of those inhibitors its first byte's class kills.
/// The other inhibitor points (a first byte may leave a pending state: it begins a character
/// that may or may not extend the lexeme, or the lexeme is a lazy one whose longer reading the
/// lexer may give up) are walked too. The
/// partition is the one [`TokenSpans::build`] computes from all points; on SynCode's grammars
/// the inhibitor points are a fifth to two fifths of them.
///
/// Everything it holds is charged to [`SpansConfig::max_bytes`] before it is allocated.
pub(crate) fn build_classes(
    lexer: &Lexer,
    vocab: &Vocabulary,
    config: &SpansConfig,
) -> Result<TokenClasses, SpansBuildError> {
    let meter = Meter::new(config.max_bytes);
    let (points, state_point, inhibitor_point) = all_points(lexer, &meter)?;
    let state_points = state_point.iter().filter(|&&p| p != NONE).count();
    let tables = LexTables::new(
        lexer,
        &meter,
        &|t| t.as_u32(),
        vocab.max_token_bytes(),
        config.max_fork_work,
    )?;
    let start = lexer.start();
    let keyed = |inh: LexState| {
        (0..lexer.class_len() as u8).all(|k| {
            let after = lexer.next_inhibited_class(inh, k);
            lexer.is_dead(after) || after == lexer.next_class(start, k)
        })
    };
    meter.charge(vec_bytes::<usize>(2 * points.len() + 2))?;
    let (order, mut bounds) = class_blocks(&tables, &points[..state_points], config.threads);
    let pending: Vec<LexPoint> = points[state_points..]
        .iter()
        .filter(|p| p.inhibitor.is_some_and(|inh| !keyed(inh)))
        .copied()
        .collect();
    for chunk in pending.chunks(MAX_CLASS_BLOCK) {
        bounds.push(bounds.last().copied().unwrap_or(0) + chunk.len());
    }
    // Every block's behaviour per text token lives until the classes are made: refuse at once
    // a build that cannot hold them.
    let text_len = vocab.trie().token_len();
    let behaviours = ((bounds.len() - 1) as u64).saturating_mul(text_len as u64 * 4);
    if behaviours > config.max_bytes as u64 {
        return Err(meter.exceeded());
    }
    meter.charge(vec_bytes::<LexPoint>(points.len()) + vec_bytes::<&[LexPoint]>(bounds.len()))?;
    let mut ordered: Vec<LexPoint> = order.iter().map(|&i| points[i]).collect();
    ordered.extend_from_slice(&pending);
    let blocks: Vec<&[LexPoint]> = bounds.windows(2).map(|b| &ordered[b[0]..b[1]]).collect();
    let text = TextIndex::new(vocab);
    // Each thread keeps only what the classes need of its blocks: their configurations take
    // tens of megabytes, freed as soon as a block is walked. Each refines a partition of its
    // own by the blocks it walks, while the other threads still walk theirs.
    let (walked, all_seqs, refiners) = walk_blocks(
        &tables,
        &text,
        &blocks,
        config,
        &meter,
        || classes::Refiner::new(text.len(), config.max_classes, &meter),
        |refiner, b| {
            refiner.refine(&b.token_behaviour)?;
            // The classes read the liveness of the tokens' behaviours alone.
            let liveness = Liveness::of(&b, Some(&b.token_behaviour), &meter)?;
            Ok((liveness, b.into_behaviours(&meter)))
        },
    )?;
    for seqs in all_seqs {
        seqs.free();
    }
    let (liveness, behaviours): (Vec<Liveness>, Vec<Vec<u32>>) =
        walked.into_iter().map(|(b, _)| b).unzip();
    // The classes: the threads' partitions intersected.
    let mut refiners = refiners.into_iter();
    let mut refiner = refiners.next().expect("at least one thread walked");
    for other in refiners {
        refiner.refine(other.classes())?;
        other.free();
    }

    let inhibitors: Vec<LexState> = (0..lexer.state_len())
        .filter(|&s| inhibitor_point[s] != NONE)
        .map(LexState::from_usize)
        .filter(|&inh| keyed(inh))
        .collect();
    let start_point = state_point[lexer.start().as_usize()];
    if !inhibitors.is_empty() && start_point != NONE {
        // Per byte class: which inhibitors it kills, interned (0 is kept for "dead").
        let mut pattern_id: AHashMap<Vec<bool>, u32> = AHashMap::new();
        let class_key: Vec<u32> = (0..lexer.class_len())
            .map(|k| {
                let pattern: Vec<bool> = inhibitors
                    .iter()
                    .map(|&inh| lexer.is_dead(lexer.next_inhibited_class(inh, k as u8)))
                    .collect();
                let next = pattern_id.len() as u32 + 1;
                *pattern_id.entry(pattern).or_insert(next)
            })
            .collect();
        let at = order
            .iter()
            .position(|&i| i == start_point as usize)
            .expect("the start state is a point");
        let b = bounds.partition_point(|&bound| bound <= at) - 1;
        let (block, block_behaviours) = (&liveness[b], &behaviours[b]);
        let column = at - bounds[b];
        let live = block.column(column, &meter)?;
        let mut key = meter.with_capacity(text.len())?;
        // Tokens come in the trie's order: those below one child of the root share their
        // first byte, and every text token is below one.
        let trie = text.trie();
        for &(first, child, end) in trie.first_children() {
            let first = class_key[lexer.byte_class(first) as usize];
            let stop = match end.as_usize() {
                e if e < trie.node_len() => trie.token_offset(end),
                _ => text.len(),
            };
            let behaviours = &block_behaviours[trie.token_offset(child)..stop];
            key.extend(
                behaviours
                    .iter()
                    .map(|&f| if live[f as usize] { first } else { 0 }),
            );
        }
        refiner.refine(&key)?;
        meter.free(key);
        meter.free(live);
    }
    let partition = refiner.finish_ids(text.ids, vocab.len())?;
    let class_len = partition.representative.len();
    // Each block's behaviour per class: its lowest member's.
    let mut class_behaviours = meter.with_capacity(behaviours.len())?;
    for b in behaviours {
        let mut per_class = meter.with_capacity(class_len)?;
        per_class.extend(partition.representative.iter().map(|&t| b[t as usize]));
        class_behaviours.push(per_class);
        meter.free(b);
    }
    let alive = alive_sets(
        &liveness,
        &class_behaviours,
        state_points,
        class_len,
        &meter,
    )?;
    TokenClasses::from_partition(vocab.len(), partition, Some(&alive), &meter)
}

/// The distinct sets of classes alive (not dead) from the first `points` points of `walked`,
/// given each block's liveness and each class's behaviour in it; charged to `meter`. The
/// expansion precomputes masks for some of them, since a mask at a lexer point holds only
/// classes alive there.
fn alive_sets(
    walked: &[Liveness],
    class_behaviours: &[Vec<u32>],
    points: usize,
    class_len: usize,
    meter: &Meter,
) -> Result<Vec<ClassSet>, SpansBuildError> {
    let words = class_len.div_ceil(64);
    let mut seen: AHashMap<Vec<u64>, ()> = AHashMap::new();
    let mut out = Vec::new();
    let mut at = 0;
    for (b, behaviours) in walked.iter().zip(class_behaviours) {
        if at >= points {
            break;
        }
        let width = b.width.min(points - at);
        // Per point: its set's words. A square of 64 classes' liveness words over 64 points,
        // transposed, is those points' words for the 64 classes: a bit matrix transposed a
        // square at a time, not a bit per (class, live point).
        let mut sets = meter.vec(width * words, 0u64)?;
        let mut square = [0u64; 64];
        for (cw, chunk) in behaviours.chunks(64).enumerate() {
            for pw in 0..width.div_ceil(64) {
                for (row, &f) in square.iter_mut().zip(chunk) {
                    *row = b.word(f, pw);
                }
                square[chunk.len()..].fill(0);
                transpose(&mut square);
                for (j, &set_word) in square.iter().enumerate().take(width - 64 * pw) {
                    sets[(64 * pw + j) * words + cw] = set_word;
                }
            }
        }
        for set in sets.chunks(words.max(1)).take(width) {
            if !seen.contains_key(set) {
                // The key and the set kept.
                meter.charge(2 * set_bytes(words))?;
                meter.reserve_map(&mut seen, 1)?;
                meter.reserve(&mut out, 1)?;
                seen.insert(set.to_vec(), ());
                out.push(ClassSet::from_words(class_len, set));
            }
        }
        meter.free(sets);
        at += b.width;
    }
    meter.release(seen.len() * set_bytes(words));
    meter.free_map(seen);
    Ok(out)
}

/// Transposes the 64 × 64 bit matrix whose row `i` is `m[i]` (column `j` its bit `j`): bit
/// `j` of `m[i]` becomes bit `i` of `m[j]`. Swaps the off-diagonal halves of every block of
/// side 64, 32, …, 2 at once (a word holds a row of each block), six rounds of 32 swaps.
fn transpose(m: &mut [u64; 64]) {
    let mut side = 32;
    // The low `side` columns of every block of side `2 * side`.
    let mut low: u64 = 0x0000_0000_FFFF_FFFF;
    while side != 0 {
        let mut i = 0;
        while i < 64 {
            // Row `i` of a block's upper half and row `i + side` of its lower half: the upper
            // row's high columns trade places with the lower row's low ones.
            let t = ((m[i] >> side) ^ m[i + side]) & low;
            m[i] ^= t << side;
            m[i + side] ^= t;
            // The next upper row: skip the lower half once past the upper one.
            i = (i + side + 1) & !side;
        }
        side >>= 1;
        low ^= low << side;
    }
}

/// The bytes a set of `words` words holds on the heap.
fn set_bytes(words: usize) -> usize {
    vec_bytes::<u64>(words)
}

/// Frees `sets` made by [`alive_sets`], giving them back to `meter`.
fn free_sets(sets: Vec<ClassSet>, meter: &Meter) {
    let words: usize = sets.iter().map(|s| s.words().len()).sum();
    meter.release(set_bytes(words));
    meter.free(sets);
}

/// The blocks of the classes-only build: an order of `points` and the bounds of the blocks in
/// it.
///
/// A block costs one trie walk plus, per new (behaviour, byte class) pair, one lexer step per
/// point; real vocabularies make about the same number of pairs per block whatever its width,
/// from points that keep most tokens alive. So the fewer blocks the better, as long as every
/// thread has one: the heavy points are split evenly into `threads` blocks (more if a block
/// would exceed [`MAX_CLASS_BLOCK`] points), and the light ones (from which most byte classes
/// are dead: the middle of a UTF-8 sequence, of an escape), which cost little, share blocks
/// of their own, one per thread. On SynCode's Go grammar with Llama 3 this walks the trie 4
/// times instead of 11, and the build takes about a fifth less time.
fn class_blocks(
    tables: &LexTables<'_>,
    points: &[LexPoint],
    threads: usize,
) -> (Vec<usize>, Vec<usize>) {
    let class_len = tables.lexer.class_len();
    let width = tables.width;
    let live = |p: &LexPoint| {
        (0..class_len)
            .filter(|&k| tables.outcome[k * width + p.state.as_usize()] != 0)
            .count()
    };
    let (light, mut order): (Vec<usize>, Vec<usize>) =
        (0..points.len()).partition(|&i| live(&points[i]) * 8 < class_len);
    // The heavy blocks first: the threads take blocks in order, and the light ones fill in
    // after them.
    let threads = threads.max(1);
    let heavy = order.len();
    let heavy_blocks = (heavy.div_ceil(threads * MAX_CLASS_BLOCK) * threads).min(heavy);
    let mut bounds = vec![0];
    for b in 1..=heavy_blocks {
        bounds.push(heavy * b / heavy_blocks);
    }
    // The light points last, split so that every thread gets a share: they run after the
    // heavy blocks, which end at about the same time.
    let light_blocks = light
        .len()
        .div_ceil(MAX_CLASS_BLOCK)
        .max(threads)
        .min(light.len());
    for b in 1..=light_blocks {
        bounds.push(heavy + light.len() * b / light_blocks);
    }
    order.extend(light);
    (order, bounds)
}

/// The most points in one block of the classes-only build (its behaviours keep a state and a
/// sequence per point: real grammars make about 10^4 behaviours per block).
const MAX_CLASS_BLOCK: usize = 512;

/// Walks the trie for every block of `blocks`, on up to `config.threads` threads (blocks are
/// independent; each thread interns emitted sequences in its own table) and hands each walked
/// block to `finish` on the thread that walked it, with a state of that thread's (made by
/// `init`). Returns the results in block order, with per block the index of the sequence
/// table its configurations refer to; the tables; the threads' states, in the tables' order.
/// Everything the walks hold is charged to `meter`.
fn walk_blocks<'m, S: Send, T: Send>(
    tables: &LexTables<'_>,
    text: &TextIndex,
    blocks: &[&[LexPoint]],
    config: &SpansConfig,
    meter: &'m Meter,
    init: impl Fn() -> Result<S, SpansBuildError> + Sync,
    finish: impl Fn(&mut S, walk::Block) -> Result<T, SpansBuildError> + Sync,
) -> Result<WalkedBlocks<'m, S, T>, SpansBuildError> {
    let done = AtomicU64::new(0);
    let threads = config.threads.clamp(1, blocks.len().max(1));
    // Blocks differ in cost: each thread takes the next block not yet taken.
    let next = AtomicUsize::new(0);
    // A thread that fails stops the others at their next block.
    let failed = AtomicBool::new(false);
    type Walked<'m, S, T> = (Vec<(usize, T)>, Seqs<'m>, S);
    let run = || -> Result<Walked<'m, S, T>, SpansBuildError> {
        let result = (|| {
            let mut seqs = Seqs::new(tables, meter)?;
            let mut state = init()?;
            let mut work = Work {
                done: &done,
                limit: config.max_work,
            };
            let mut out = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(block) = blocks.get(i) else {
                    break;
                };
                if failed.load(Ordering::Relaxed) {
                    break;
                }
                let walked =
                    walk::walk_block(tables, text, block, &mut seqs, &mut work, meter, true)?;
                meter.reserve(&mut out, 1)?;
                out.push((i, finish(&mut state, walked)?));
            }
            Ok((out, seqs, state))
        })();
        if result.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        result
    };
    let results: Vec<Result<Walked<'m, S, T>, SpansBuildError>> = if threads == 1 {
        vec![run()]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (1..threads).map(|_| scope.spawn(run)).collect();
            let mut results = vec![run()];
            for h in handles {
                // A panic in a walk is a bug: pass it on.
                results.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            }
            results
        })
    };
    meter.charge(vec_bytes::<Option<(T, usize)>>(blocks.len()))?;
    let mut walked: Vec<Option<(T, usize)>> = (0..blocks.len()).map(|_| None).collect();
    let mut all_seqs = Vec::with_capacity(results.len());
    let mut states = Vec::with_capacity(results.len());
    for result in results {
        let (blocks, seqs, state) = result?;
        for (i, b) in blocks {
            walked[i] = Some((b, all_seqs.len()));
        }
        all_seqs.push(seqs);
        states.push(state);
    }
    let walked = walked
        .into_iter()
        .map(|b| b.expect("every block was walked"))
        .collect();
    Ok((walked, all_seqs, states))
}

/// What [`walk_blocks`] returns: per block, `finish`'s result and the index of its sequence
/// table; the tables; the threads' states.
type WalkedBlocks<'m, S, T> = (Vec<(T, usize)>, Vec<Seqs<'m>>, Vec<S>);

/// [`walk_blocks`] keeping the configurations of each block (as `finish` leaves them, with
/// what it adds), the emitted sequences merged into one table.
fn walk_configurations<'m, T: Send>(
    tables: &LexTables<'_>,
    text: &TextIndex,
    blocks: &[&[LexPoint]],
    config: &SpansConfig,
    meter: &'m Meter,
    finish: impl Fn(walk::Block) -> Result<(walk::Block, T), SpansBuildError> + Sync,
) -> Result<(Vec<(walk::Block, T)>, Seqs<'m>), SpansBuildError> {
    let (walked, mut all_seqs, _) = walk_blocks(
        tables,
        text,
        blocks,
        config,
        meter,
        || Ok(()),
        |_, b| finish(b),
    )?;
    let mut rest = all_seqs.split_off(1);
    let mut seqs = all_seqs.pop().expect("at least one thread walked");
    let maps = rest
        .iter_mut()
        .map(|other| seqs.merge(other))
        .collect::<Result<Vec<Vec<u32>>, _>>()?;
    for other in rest {
        other.free();
    }
    let mut out = meter.with_capacity(walked.len())?;
    for ((mut b, extra), k) in walked {
        if k > 0 {
            for e in &mut b.e {
                *e = seqs.translate(*e, &maps[k - 1]);
            }
        }
        out.push((b, extra));
    }
    for map in maps {
        meter.free(map);
    }
    if let Some(e) = seqs.failed() {
        return Err(e.clone());
    }
    Ok((out, seqs))
}

/// Locks `m`: a panic while it was held is a bug already passed on, so poisoning is ignored.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Distinct spans, numbered in order of first appearance; charged to a [`Meter`].
struct SpanInterner<'m> {
    /// By (emitted sequence id, open part: a state or a fork of [`LexTables`]): sequence ids
    /// are hash-consed, so equal ids are equal sequences.
    index: AHashMap<(u32, u32), u32>,
    /// By open part, the spans that emit nothing: no hashing.
    by_end: Vec<u32>,
    /// Per lexeme (an [`Emitted`] of one lexeme is its index), by open part, the spans that
    /// emit that lexeme alone (most of the others; a row is made at its lexeme's first span).
    by_lexeme: Vec<Vec<u32>>,
    /// The open parts: the rows' width.
    width: usize,
    /// Bits of an [`Emitted`] that hold its first lexeme.
    shift: u32,
    table: SpanTable,
    /// Per fork of [`LexTables`]: its index in `fork_start`, once a span has it.
    fork_index: AHashMap<u32, u32>,
    limit: usize,
    meter: &'m Meter,
}

impl<'m> SpanInterner<'m> {
    /// Heap bytes held, the index included.
    fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
            + vec_bytes::<Vec<u32>>(self.by_lexeme.capacity())
            + self
                .by_lexeme
                .iter()
                .map(|r| r.capacity() * 4)
                .sum::<usize>()
            + meter::map_heap_bytes(&self.index)
            + meter::map_heap_bytes(&self.fork_index)
            + self.by_end.capacity() * 4
    }

    /// Frees the index (the spans' tables are kept), giving it back to the meter.
    fn free_index(&mut self) {
        self.meter.free(std::mem::take(&mut self.by_end));
        for row in std::mem::take(&mut self.by_lexeme) {
            self.meter.free(row);
        }
        self.meter.free_map(std::mem::take(&mut self.index));
        self.meter.free_map(std::mem::take(&mut self.fork_index));
    }

    fn new(
        limit: usize,
        tables: &LexTables<'_>,
        meter: &'m Meter,
    ) -> Result<Self, SpansBuildError> {
        let width = tables.width;
        Ok(SpanInterner {
            index: AHashMap::new(),
            by_end: meter.vec(width, NONE)?,
            by_lexeme: Vec::new(),
            width,
            shift: tables.shift,
            table: SpanTable {
                emitted_start: meter.vec(1, 0)?,
                emitted: Vec::new(),
                end: Vec::new(),
                fork: Vec::new(),
                fork_start: meter.vec(1, 0)?,
                forks: Vec::new(),
            },
            fork_index: AHashMap::new(),
            limit,
            meter,
        })
    }

    fn intern(
        &mut self,
        seqs: &Seqs<'_>,
        tables: &LexTables<'_>,
        seq: Emitted,
        open: u32,
    ) -> Result<u32, SpansBuildError> {
        let next = self.table.len() as u32;
        // The slot of the span, found without hashing where it emits one lexeme or none.
        let slot = if seq == 0 {
            Some(&mut self.by_end[open as usize])
        } else if seq >> self.shift == 0 {
            let lexeme = seq as usize;
            if self.by_lexeme.len() <= lexeme {
                let more = lexeme + 1 - self.by_lexeme.len();
                self.meter.reserve(&mut self.by_lexeme, more)?;
                self.by_lexeme.resize(lexeme + 1, Vec::new());
            }
            if self.by_lexeme[lexeme].is_empty() {
                self.by_lexeme[lexeme] = self.meter.vec(self.width, NONE)?;
            }
            Some(&mut self.by_lexeme[lexeme][open as usize])
        } else {
            None
        };
        // A new span is checked before it is recorded anywhere, so that the interner stays
        // whole after a refusal.
        let full = self.table.len() >= self.limit;
        let refused = || SpansBuildError::new(SpansBudget::Spans, self.limit as u64);
        match slot {
            Some(&mut id) if id != NONE => return Ok(id),
            Some(_) if full => return Err(refused()),
            Some(id) => *id = next,
            None => {
                // One probe: most spans of more lexemes are new where a point is first walked.
                self.meter.reserve_map(&mut self.index, 1)?;
                match self.index.entry((seq, open)) {
                    std::collections::hash_map::Entry::Occupied(e) => return Ok(*e.get()),
                    std::collections::hash_map::Entry::Vacant(_) if full => return Err(refused()),
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(next);
                    }
                }
            }
        }
        seqs.collect(seq, &tables.lexemes, &mut self.table.emitted, self.meter)?;
        self.meter.push(
            &mut self.table.emitted_start,
            self.table.emitted.len() as u32,
        )?;
        let (end, others) = tables.open(open);
        self.meter.push(&mut self.table.end, end)?;
        let fork = if others.is_empty() {
            NONE
        } else if let Some(&f) = self.fork_index.get(&open) {
            f
        } else {
            let bytes: usize = others
                .iter()
                .map(|(_, l)| vec_bytes::<LexState>(l.len()))
                .sum();
            self.meter.charge(bytes)?;
            self.meter.reserve_map(&mut self.fork_index, 1)?;
            self.meter.reserve(&mut self.table.forks, others.len())?;
            let mut others: Vec<Fork> = others
                .into_iter()
                .map(|(state, lexemes)| Fork {
                    lexemes: lexemes.into_boxed_slice(),
                    state,
                })
                .collect();
            others.sort_unstable();
            self.table.forks.extend(others);
            let f = self.table.fork_start.len() as u32 - 1;
            self.meter
                .push(&mut self.table.fork_start, self.table.forks.len() as u32)?;
            self.fork_index.insert(open, f);
            f
        };
        self.meter.push(&mut self.table.fork, fork)?;
        Ok(next)
    }
}

/// The distinct spans, by [`SpanId`]: span `i` emits
/// `emitted[emitted_start[i]..emitted_start[i + 1]]` and ends in `end[i]`; its forks are
/// `forks[fork_start[fork[i]]..fork_start[fork[i] + 1]]`, or none if `fork[i]` is [`NONE`].
#[derive(Debug)]
struct SpanTable {
    emitted_start: Vec<u32>,
    emitted: Vec<LexState>,
    end: Vec<LexState>,
    fork: Vec<u32>,
    fork_start: Vec<u32>,
    forks: Vec<Fork>,
}

impl SpanTable {
    /// The number of spans.
    #[inline]
    fn len(&self) -> usize {
        self.end.len()
    }

    /// Span `i`. Panics if `i` is out of range.
    #[inline]
    fn span(&self, i: usize) -> Span<'_> {
        Span {
            emitted: &self.emitted
                [self.emitted_start[i] as usize..self.emitted_start[i + 1] as usize],
            end: self.end[i],
            forks: match self.fork[i] {
                NONE => &[],
                f => {
                    let f = f as usize;
                    &self.forks[self.fork_start[f] as usize..self.fork_start[f + 1] as usize]
                }
            },
        }
    }

    /// Heap bytes held.
    fn heap_bytes(&self) -> usize {
        self.emitted_start.capacity() * 4
            + (self.emitted.capacity() + self.end.capacity() + self.fork.capacity()) * 4
            + self.fork_start.capacity() * 4
            + self.forks.capacity() * std::mem::size_of::<Fork>()
            + self
                .forks
                .iter()
                .map(|f| f.lexemes.len() * std::mem::size_of::<LexState>())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::transpose;

    #[test]
    fn a_square_transposed_moves_every_bit_across_the_diagonal() {
        // A seeded mix of bit densities, so that every block's swap sees both values.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut m = [0u64; 64];
        for (i, row) in m.iter_mut().enumerate() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *row = if i % 3 == 0 { x & x.rotate_left(9) } else { x };
        }
        let mut t = m;
        transpose(&mut t);
        for (i, row) in m.iter().enumerate() {
            for (j, column) in t.iter().enumerate() {
                assert_eq!(column >> i & 1, row >> j & 1, "row {i}, column {j}");
            }
        }
        transpose(&mut t);
        assert_eq!(t, m);
    }
}
