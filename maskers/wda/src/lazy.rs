//! The on-demand automaton: [`LazyWdaMasker`].
//!
//! The eager build ([`WdaMasker::new`](crate::WdaMasker::new)) runs the whole subset
//! construction before the first mask — every state any stack could reach, then
//! minimisation — which takes seconds on a programming language. Most of those states are
//! never read: a text visits a few hundred, and a few of its lexer points (Go with Llama 3:
//! about a hundred of 819 over 76 files). So this masker builds only the token classes up
//! front (tokens that do the same from every lexer point, [`TokenClasses::build`]); a lexer
//! point's spans (what one token of each class does from there, [`PointSpanner`]), its
//! continuations and initial items are made the first time a mask starts there; and a state
//! of the automaton, a transition and its output weight the first time a mask reads them —
//! the same [`Construction::transition`] the eager build runs, on one input. That is the
//! hybrid DFA of regex-automata applied to the parser DWA: lazy determinisation into a cache
//! with a capacity, cleared and refilled when full, with a clear count, and giving up to a
//! fallback masker when it thrashes.
//!
//! The price of a point made on demand: its walk (one pass over the representatives' trie,
//! [`PointSpanner::walk`]), each class's continuation (read by span id, the same from every
//! point, and derived once per new span) and its items (the classes grouped by continuation):
//! what the up-front build no longer spends on the points no mask reaches. So after the build
//! a thread of its own, at the lowest priority, prepares the points (their walks and
//! continuations, [`crate::points`]): those the start point leads to first (the first mask
//! makes the start point itself), then those the prepared ones lead to; a mask that finds its point prepared only groups its
//! classes (a tenth of the cost), and one that does not makes the point itself, without
//! waiting for the thread ([`WdaConfig::prepare_in_background`]). The thread uses what
//! the CPU leaves idle between masks (a model's forward pass); on a busy CPU it gets little.
//!
//! # Why the masks are the eager automaton's
//!
//! Its weights are sets of token classes, where the eager automaton's are sets of lexical
//! blocks (classes that no point's items tell apart: knowing them takes every point's items);
//! the one is the image of the other, class by class.
//!
//! A state is the same weighted item set the eager construction would make, and a transition
//! the same [`Construction::transition`] on the same input, so every path outputs the same
//! classes. Two differences, neither visible in a mask: the automaton is not minimised (only
//! the eager tables' size depends on that), and the eager construction gives inputs no GSS can
//! produce the default transition, while this one computes the transition of whatever LR state
//! a node holds (every node's state is such an input). The run stops reading below a pair once
//! the classes its state can still output are in the mask; the eager build knows that set
//! exactly (a fixpoint over the whole automaton), this one uses a superset — the classes riding
//! on the state's items, since weights only shrink along a path — so it may read a node more,
//! whose outputs are then already in the mask.
//!
//! # Threads
//!
//! The masker is `Send + Sync` and the cache is shared by every thread, behind a [`RwLock`]: a
//! mask takes the read lock once and reads the cached transitions with it (hash lookups, no
//! writes to shared memory but the lock's reader count); only a mask that meets a transition
//! not yet computed drops it, takes the write lock and runs again, computing what is missing.
//! After a warm-up almost every mask is a read, so threads rarely wait on each other, and work
//! done for one sequence serves all the others (a per-thread cache would compute every state
//! once per thread, and a batch of 64 sequences would pay 64 cold starts). The price is one
//! atomic read-modify-write per mask on a shared cache line. A point a mask makes is walked
//! under the write lock too, into the cache's own table of spans (the span ids by which the
//! cache remembers continuations). The preparing thread shares no lock with the masks (see
//! [`crate::points`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockWriteGuard};
use std::time::Instant;

use ahash::AHashMap;
use munch_glr::cfg::NonterminalId;
use munch_glr::lr::LrState;
use munch_glr::mask::{IndentFix, MaskCache, MaskMut, Masker, Oracle};
use munch_glr::parser::{Parser, ParserState};
use munch_lexer::LexState;
use munch_vocab::Vocabulary;

use munch_tokens::{ClassId, PointSpanner, SpanId, SpanIds, TokenClasses, TokenSpans};

use crate::bits::{is_subset, Bits, Weight, Weights, EMPTY};
use crate::build::{block_runs, class_tables, spans_config, spans_error};
use crate::determinize::{countdowns, Construction, StateId, DEAD};
use crate::dwa::{Dwa, RunCache};
use crate::error::WdaBuildError;
use crate::lexical::{Groups, PointBuilder, UNSET};
use crate::points::{Points, Translation};
use crate::template::{item, Conts, Templates, FIN, INIT};
use crate::WdaConfig;
use munch_glr::lr::ClassTables;

/// No start state yet.
const NONE: u32 = u32::MAX;

/// The summaries one mask may compute however small the cache (beyond that, and beyond the
/// capacity, the masker gives up).
const MIN_MASK_BYTES: usize = 4 << 20;

/// Size and history of a [`LazyWdaMasker`]'s cache.
#[derive(Clone, Debug, PartialEq)]
pub struct LazyStats {
    /// Automaton states in the cache now (the dead state included).
    pub states: usize,
    /// Transitions in the cache now.
    pub transitions: usize,
    /// Approximate heap bytes of the cache now.
    pub cache_bytes: usize,
    /// The cache's capacity: [`WdaConfig::cache_capacity`], or less where
    /// [`WdaConfig::max_memory`] leaves less (see [`LazyWdaMasker::new`]).
    pub cache_capacity: usize,
    /// Heap bytes of the tables built up front and kept for the masker's lifetime (the token
    /// spans, the LR classes, the expansion tables).
    pub table_bytes: usize,
    /// Times the cache was cleared because it reached its capacity.
    pub clears: u64,
    /// Transitions computed since the masker was built (across clears).
    pub computed: u64,
    /// Whether the masker gave up (thrashing or a state too large for the cache) and now
    /// answers with its fallback.
    pub gave_up: bool,
    /// Seconds the up-front part of the build took.
    pub build_s: f64,
    /// Token classes (text tokens grouped by identical lexical behaviour).
    pub token_classes: usize,
    /// Bits of a weight: the token classes and end of sequence (the eager automaton's
    /// weights are over lexical blocks, which this one cannot know before every point).
    pub blocks: usize,
    /// Lexer points prepared (their spans and continuations made), of
    /// [`lexer_points`](LazyStats::lexer_points).
    pub prepared_points: usize,
    /// The lexer's points.
    pub lexer_points: usize,
}

/// The weighted-automaton masker, determinised on demand: builds in the time of the token
/// classes, then computes each lexer point's spans and items, and each state and transition,
/// the first time a mask reads them. Masks equal
/// [`WdaMasker`](crate::WdaMasker)'s. `Send + Sync`; share it with `Arc`.
///
/// Threads share one cache behind a read-write lock: a mask reads the cached transitions under
/// the read lock (one atomic operation per mask on a shared line), and only a mask that meets
/// a transition not yet computed takes the write lock and computes it. Work done for one
/// sequence serves every other, which a cache per thread would repeat once per thread.
///
/// Budgets from [`WdaConfig`]: [`max_memory`](WdaConfig::max_memory) for the whole masker,
/// [`cache_capacity`](WdaConfig::cache_capacity) (clear when reached),
/// [`min_clears`](WdaConfig::min_clears) and
/// [`min_masks_per_clear`](WdaConfig::min_masks_per_clear) (when to give up to the
/// fallback), and the lexical side's own ([`spans`](WdaConfig::spans),
/// [`max_continuations`](WdaConfig::max_continuations)).
pub struct LazyWdaMasker {
    /// Exact answers for the tokens the indentation context decides (`postlex = python`).
    indent: Option<Arc<IndentFix>>,
    parser: Arc<Parser>,
    /// The LR tables the automaton reads: a node's state is read as its class.
    lr: Arc<ClassTables>,
    vocab: Arc<Vocabulary>,
    /// Every lexer point ([`TokenSpans::lexer_points`]; a start is an index here), prepared
    /// once each: the spans of one token per class (token `c` of class `c`) from there and
    /// their continuations, by the preparing thread or the first mask that needs it.
    points: Arc<Points>,
    /// Starts: every lexer point, then end of sequence.
    start_len: usize,
    /// Per lexer state: the start of point `(s, None)` and of point `(lexer start, Some(s))`.
    plain: Vec<u32>,
    inhibited: Vec<u32>,
    lex_start: u32,
    /// Words per weight: a weight is a set of token classes, the last bit end of sequence.
    words: usize,
    /// The expansion tables (classes → mask words); its automaton is empty.
    expand: Dwa,
    engine: RwLock<Engine>,
    fallback: Arc<dyn Masker>,
    gave_up: AtomicBool,
    /// Masks answered, as flushed by the threads' caches.
    masks: AtomicU64,
    capacity: usize,
    /// Heap bytes of the tables held up front.
    table_bytes: usize,
    min_clears: u64,
    min_masks_per_clear: u64,
    build_s: f64,
    token_classes: usize,
}

/// The cache: the construction's states, summaries and weights, and the transitions computed.
struct Engine {
    tpl: Templates,
    weights: Weights,
    c: Construction,
    /// Per state: the classes its items still carry (a superset of what it can output).
    und: Vec<Weight>,
    /// `(state << 32 | x)` → `(output << 32 | target)`.
    trans: AHashMap<u64, u64>,
    /// Per start: its state, or [`NONE`], and the classes it allows outright.
    starts: Vec<StateId>,
    yes: Vec<Weight>,
    /// Derives the continuations of the points a mask makes itself (kept across clears, as
    /// the continuations are, in `tpl`).
    pb: PointBuilder,
    /// The spans of the points masks made, ids shared across points, and per span the
    /// continuation it starts in `tpl`, or [`UNSET`] (kept across clears too).
    span_ids: SpanIds,
    root_of: Vec<u32>,
    /// Per class, its span at the point being made.
    span_of: Vec<Option<SpanId>>,
    /// The continuations of the points the preparing thread made, in `tpl`'s ids.
    translation: Translation,
    /// Groups a point's classes by continuation into its initial items.
    groups: Groups,
    /// Per class, its continuation at the point being started.
    cont_of: Vec<u32>,
    max_continuations: usize,
    clears: u64,
    /// `LazyWdaMasker::masks` at the last clear.
    masks_at_clear: u64,
    computed: u64,
    scratch: Vec<u64>,
}

/// Why a run stopped.
enum Stop {
    /// A transition or start not in the cache (read-only runs).
    Miss,
    /// The construction exceeded what the cache may hold (or the continuations their
    /// budget).
    Full,
}

/// The scratch of one thread (or one sequence).
struct LazyCache {
    run: RunCache,
    fallback: Option<MaskCache>,
    /// Masks answered since the last flush into `LazyWdaMasker::masks`.
    masks: u64,
}

impl LazyWdaMasker {
    /// Builds the token classes of `parser`'s lexer over `vocab`; the rest comes on demand. Falls back to the [`Oracle`] if it ever gives up (see
    /// [`LazyWdaMasker::with_fallback`]).
    ///
    /// Memory: [`WdaConfig::max_memory`] bounds the whole masker. The token classes' build is
    /// held to it (as the eager build's spans are), then the tables kept (the classes, one
    /// token per class and the lexer's tables for their spans, the expansion tables) are
    /// charged to it, and the cache gets half of what is left, up to [`WdaConfig::cache_capacity`] (one mask may take the cache past
    /// its capacity by at most the capacity before it is cleared, see
    /// [`LazyStats::cache_capacity`]).
    ///
    /// The continuations the points' first uses make are kept across clears; past
    /// [`WdaConfig::max_continuations`] the masker gives up to its fallback.
    ///
    /// Errors: the token classes' budgets, `max_memory` when
    /// the tables kept up front leave the cache less than 8 MiB, or a grammar too large for the
    /// automaton's encoding.
    pub fn new(
        parser: Arc<Parser>,
        vocab: Arc<Vocabulary>,
        config: &WdaConfig,
    ) -> Result<LazyWdaMasker, WdaBuildError> {
        let t0 = Instant::now();
        // The classes up front (the classes-only build, about half the spans' time); a
        // point's spans are computed at its first use, over one member per class: a
        // vocabulary of a few thousand tokens instead of the whole one. The LR side's tables
        // need no classes: they are made on a thread meanwhile, in the classes' serial parts.
        let spans_config = spans_config(config);
        let (lr, classes) = std::thread::scope(|scope| {
            let lr = scope.spawn(|| class_tables(&parser));
            let classes = TokenClasses::build(parser.lexer(), &vocab, &spans_config);
            (join(lr), classes)
        });
        let lr = lr?;
        let classes = classes.map_err(|e| spans_error(config, e))?;
        let t_classes = t0.elapsed().as_secs_f64();
        let class_len = classes.len();
        // The expansion's tables and the representatives' lexer tables both need the classes
        // alone: one is made on a thread while the other is.
        let (expand, spanner) = std::thread::scope(|scope| {
            let expand = scope.spawn(|| {
                // The weights are sets of classes (the eager build's blocks would need every
                // point's items first); class `class_len` is end of sequence, a block with no
                // tokens.
                let words = (class_len + 1).div_ceil(64);
                let mut all = Bits::new(words);
                for c in 0..=class_len {
                    all.insert(c);
                }
                let (run_start, runs, every) =
                    block_runs(&classes, vocab.len(), class_len + 1, |c| Some(c as u32));
                Dwa::for_expansion(
                    class_len + 1,
                    words,
                    class_len,
                    all.0.to_vec(),
                    class_len as u32,
                    vocab.len(),
                    run_start,
                    runs,
                    every,
                )
            });
            let spanner = (|| {
                let representatives: Vec<Option<Vec<u8>>> = (0..class_len)
                    .map(|c| {
                        let t = classes.representative(ClassId::from_usize(c));
                        Some(vocab.token_bytes(t).unwrap_or_default().to_vec())
                    })
                    .collect();
                // Tokens of a vocabulary already, so none is empty or too long.
                let reps = Vocabulary::from_token_bytes(representatives, Vec::new())
                    .map_err(|_| WdaBuildError::too_large("token classes"))?;
                let key = |t| lr.lexeme_key(t);
                PointSpanner::new(parser.lexer(), Arc::new(reps), &spans_config, &key)
                    .map_err(|e| spans_error(config, e))
            })();
            (join(expand), spanner)
        });
        let spanner = spanner?;
        let words = (class_len + 1).div_ceil(64);
        let points = TokenSpans::lexer_points(parser.lexer());
        let t_tables = t0.elapsed().as_secs_f64();
        let lexer = parser.lexer();
        let mut plain = vec![NONE; lexer.state_len()];
        let mut inhibited = vec![NONE; lexer.state_len()];
        for (i, point) in points.iter().enumerate() {
            match point.inhibitor {
                None => plain[point.state.as_usize()] = i as u32,
                Some(inh) => inhibited[inh.as_usize()] = i as u32,
            }
        }
        let start_len = points.len() + 1;
        let points = Points::new(
            spanner,
            points,
            plain.clone(),
            class_len,
            config.max_continuations,
            PointBuilder::new(Arc::clone(&lr)),
        );
        let translation = Translation::new(&points);
        let table_bytes = classes.heap_bytes()
            + class_len * 64 // the representatives, their bytes and trie
            + points.max_heap_bytes()
            + lr.heap_bytes()
            + expand.heap_bytes()
            + (plain.len() + inhibited.len()) * 4;
        let capacity = cache_capacity(config, table_bytes)?;
        let lex_start = lexer.start().as_u32();
        let engine = Engine::new(
            &lr,
            translation,
            points.span_ids(),
            config.max_continuations,
            words,
            start_len,
            capacity,
        );
        let mut m = LazyWdaMasker {
            indent: IndentFix::new(&parser).map(Arc::new),
            fallback: Arc::new(Oracle::new(Arc::clone(&vocab))),
            engine: RwLock::new(engine),
            parser,
            lr,
            vocab,
            points: Arc::new(points),
            start_len,
            plain,
            inhibited,
            lex_start,
            words,
            expand,
            gave_up: AtomicBool::new(false),
            masks: AtomicU64::new(0),
            capacity,
            table_bytes,
            min_clears: config.min_clears as u64,
            min_masks_per_clear: config.min_masks_per_clear as u64,
            build_s: 0.0,
            token_classes: class_len,
        };
        m.build_s = t0.elapsed().as_secs_f64();
        if config.prepare_in_background {
            let points = Arc::clone(&m.points);
            let first = m.point(m.parser.lexer().start(), None);
            // Without the thread (none could be spawned), masks prepare their points.
            let _ = std::thread::Builder::new()
                .name("munch-wda-points".into())
                .spawn(move || {
                    crate::points::lower_priority();
                    points.prepare_all(first)
                });
        }
        if crate::determinize::debug() {
            eprintln!(
                "wda-lazy: token classes {t_classes:.3} s ({class_len}), one token per class and its lexer tables beside the expansion tables {:.3} s, the rest {:.3} s",
                t_tables - t_classes,
                m.build_s - t_tables
            );
        }
        Ok(m)
    }

    /// The masker that answers once this one gives up (a cache that thrashes, or a state too
    /// large for the cache). Its masks must be exact too: the trie masker is the usual choice.
    pub fn with_fallback(mut self, fallback: Arc<dyn Masker>) -> LazyWdaMasker {
        self.fallback = fallback;
        self
    }

    /// The cache's size and history.
    pub fn stats(&self) -> LazyStats {
        let eng = self.read();
        LazyStats {
            states: eng.c.b.len(),
            transitions: eng.trans.len(),
            cache_bytes: eng.heap_bytes(),
            cache_capacity: self.capacity,
            table_bytes: self.table_bytes,
            clears: eng.clears,
            computed: eng.computed,
            gave_up: self.gave_up.load(Ordering::Relaxed),
            build_s: self.build_s,
            token_classes: self.token_classes,
            blocks: self.expand.class_len as usize,
            prepared_points: self.points.prepared(),
            lexer_points: self.points.len(),
        }
    }

    /// Prepares every lexer point not prepared yet on the calling thread, in the preparing
    /// thread's order (see [`WdaConfig::prepare_in_background`]): afterwards no mask pays a
    /// point's first use but for grouping its classes. Safe beside masks and that thread (each
    /// point is made once; one made twice at the same time is kept once).
    pub fn prepare_points(&self) {
        self.points
            .prepare_all(self.point(self.parser.lexer().start(), None));
    }

    /// The grammar this masker was built for.
    pub fn parser(&self) -> &Arc<Parser> {
        &self.parser
    }

    /// The cache for statistics (a poisoned one too: its counts are only reported).
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Engine> {
        self.engine.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Engine> {
        match self.engine.write() {
            Ok(g) => g,
            Err(poisoned) => {
                let mut g = poisoned.into_inner();
                self.clear(&mut g);
                self.engine.clear_poison();
                g
            }
        }
    }

    /// Empties the cache: only the lexical side (the continuations and their memos) is kept.
    fn clear(&self, eng: &mut Engine) {
        eng.clears += 1;
        eng.masks_at_clear = self.masks.load(Ordering::Relaxed);
        let conts = eng.tpl.conts();
        // The old summaries go (and with them their share of the continuations).
        eng.tpl = Templates::new(
            Arc::clone(&self.lr),
            conts,
            self.capacity.max(MIN_MASK_BYTES) / 40,
        );
        eng.weights = Weights::new(self.words);
        eng.c = Construction::new(self.words);
        eng.und.clear();
        eng.trans = AHashMap::new();
        eng.starts.fill(NONE);
        eng.yes.fill(EMPTY);
        eng.note_states();
    }

    /// The start of a head's lexer configuration, if the lexical side has that point.
    fn point(&self, lex: LexState, inhibitor: Option<LexState>) -> Option<usize> {
        let p = match inhibitor {
            None => self.plain.get(lex.as_usize()).copied(),
            Some(i) if lex.as_u32() == self.lex_start => self.inhibited.get(i.as_usize()).copied(),
            Some(_) => None,
        }?;
        (p != NONE).then_some(p as usize)
    }

    /// The allowed blocks of `state` into `cache.acc` (the eager run, `Dwa::run`, over
    /// transitions `steps` gives).
    fn run<S: Steps>(
        &self,
        steps: &mut S,
        cache: &mut RunCache,
        state: &ParserState,
    ) -> Result<(), Stop> {
        cache.begin();
        let eos = self.start_len - 1;
        for h in state.heads() {
            if let Some(p) = self.point(h.lex_state(), h.inhibitor()) {
                let (s, yes) = steps.start(self, p)?;
                if yes != EMPTY && !cache.used.contains(&yes) {
                    cache.used.push(yes);
                    or_into(&mut cache.acc, steps.weight(yes));
                }
                if s != DEAD {
                    cache.stack.push((s, h.node().clone()));
                }
            }
            // End of sequence: the pseudo-class read from every head whose lexeme is empty.
            if h.lexeme_is_empty() {
                let (s, _) = steps.start(self, eos)?;
                if s != DEAD {
                    cache.stack.push((s, h.node().clone()));
                }
            }
        }
        while let Some((s, node)) = cache.stack.pop() {
            if !cache.first_visit((s, node.id())) {
                continue;
            }
            cache.pairs += 1;
            let (out, t) = steps.step(s, self.lr.state(node.state()).as_u32())?;
            if out != EMPTY && !cache.used.contains(&out) {
                cache.used.push(out);
                or_into(&mut cache.acc, steps.weight(out));
            }
            if t == DEAD || is_subset(steps.weight(steps.undecided(t)), &cache.acc) {
                continue;
            }
            for m in node.predecessors() {
                cache.stack.push((t, m));
            }
        }
        Ok(())
    }

    /// Fills `cache.run.acc` for `state`: from the cache if it has every transition needed,
    /// else computing them. `false`: gave up (the fallback answers).
    fn classes(&self, cache: &mut LazyCache, state: &ParserState) -> bool {
        // A poisoned lock (a panic while the cache was written) is not read: the writer below
        // clears it first.
        if let Ok(eng) = self.engine.read() {
            if self.run(&mut Reader(&eng), &mut cache.run, state).is_ok() {
                return true;
            }
        }
        let mut eng = self.write();
        self.masks.fetch_add(cache.masks, Ordering::Relaxed);
        cache.masks = 0;
        if self.gave_up.load(Ordering::Relaxed) {
            return false;
        }
        if eng.heap_bytes() > self.capacity && !self.clear_or_give_up(&mut eng) {
            return false;
        }
        for attempt in 0..2 {
            let mut writer = Writer { eng: &mut eng };
            match self.run(&mut writer, &mut cache.run, state) {
                Ok(()) => return true,
                Err(Stop::Miss) => unreachable!("a writer computes what it misses"),
                // This mask alone needs more than the cache holds, even from empty: give up.
                Err(Stop::Full) if attempt == 1 => break,
                Err(Stop::Full) => {
                    if !self.clear_or_give_up(&mut eng) {
                        return false;
                    }
                }
            }
        }
        self.gave_up.store(true, Ordering::Relaxed);
        self.clear(&mut eng);
        false
    }

    /// Clears a full cache; gives up instead when it has been cleared often and few masks
    /// were answered since the last clear (the cache thrashes). `false`: gave up. The masks
    /// counted are those the threads have reported, which each does when it next misses: a
    /// lower bound, so that no thread pays an atomic write per mask.
    fn clear_or_give_up(&self, eng: &mut Engine) -> bool {
        let since = self.masks.load(Ordering::Relaxed) - eng.masks_at_clear;
        if eng.clears >= self.min_clears && since < self.min_masks_per_clear {
            self.gave_up.store(true, Ordering::Relaxed);
            self.clear(eng);
            return false;
        }
        self.clear(eng);
        true
    }
}

/// The result of a build's scoped thread; a panic there is a bug, passed on.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// The cache's capacity: half of what `table_bytes` leave of [`WdaConfig::max_memory`] (a mask
/// may take the cache past its capacity by as much again, or by [`MIN_MASK_BYTES`], before it
/// is cleared), at most [`WdaConfig::cache_capacity`]; a
/// [`WdaBudget::Memory`](crate::WdaBudget::Memory) error when that half is below what one mask
/// may need.
fn cache_capacity(config: &WdaConfig, table_bytes: usize) -> Result<usize, WdaBuildError> {
    let room = config.max_memory.saturating_sub(table_bytes) / 2;
    if room < MIN_MASK_BYTES {
        return Err(WdaBuildError::budget(
            crate::WdaBudget::Memory,
            config.max_memory as u64,
        ));
    }
    Ok(room.min(config.cache_capacity))
}

fn or_into(acc: &mut [u64], w: &[u64]) {
    for (a, b) in acc.iter_mut().zip(w) {
        *a |= b;
    }
}

impl Engine {
    fn new(
        lr: &Arc<ClassTables>,
        translation: Translation,
        span_ids: SpanIds,
        max_continuations: usize,
        words: usize,
        starts: usize,
        capacity: usize,
    ) -> Engine {
        let mut eng = Engine {
            // The summaries' entries are counted at about 40 bytes each. One mask may take the
            // cache past its capacity (it is cleared before the next), up to this limit.
            tpl: Templates::new(
                Arc::clone(lr),
                Arc::new(Conts::new()),
                capacity.max(MIN_MASK_BYTES) / 40,
            ),
            weights: Weights::new(words),
            c: Construction::new(words),
            und: Vec::new(),
            trans: AHashMap::new(),
            starts: vec![NONE; starts],
            yes: vec![EMPTY; starts],
            pb: PointBuilder::new(Arc::clone(lr)),
            span_ids,
            root_of: Vec::new(),
            span_of: Vec::new(),
            translation,
            groups: Groups::default(),
            cont_of: Vec::new(),
            max_continuations,
            clears: 0,
            masks_at_clear: 0,
            computed: 0,
            scratch: vec![0; words],
        };
        eng.note_states();
        eng
    }

    fn heap_bytes(&self) -> usize {
        self.c.heap_bytes(&self.tpl, &self.weights)
            + self.trans.len() * 24
            + self.und.len() * 4
            + self.groups.heap_bytes()
            + self.translation.heap_bytes()
            + self.pb.heap_bytes()
            + self.span_ids.heap_bytes()
            + (self.root_of.capacity() + self.span_of.capacity()) * 4
            + self.cont_of.capacity() * 4
    }

    /// The undecided classes of states created since the last call.
    fn note_states(&mut self) {
        while self.und.len() < self.c.b.len() {
            let s = self.und.len() as StateId;
            self.scratch.fill(0);
            for &(_, m) in self.c.b.state(s) {
                for &(_, w) in self.c.km.get(m) {
                    or_into(&mut self.scratch, self.weights.get(w));
                }
            }
            let u = self.weights.intern_words(&self.scratch);
            self.und.push(u);
        }
    }
}

/// Where a run gets its transitions: the cache as it is, or the cache filled as needed.
trait Steps {
    fn start(&mut self, m: &LazyWdaMasker, start: usize) -> Result<(StateId, Weight), Stop>;
    fn step(&mut self, s: StateId, x: u32) -> Result<(Weight, StateId), Stop>;
    fn weight(&self, w: Weight) -> &[u64];
    fn undecided(&self, s: StateId) -> Weight;
}

#[inline]
fn key(s: StateId, x: u32) -> u64 {
    (s as u64) << 32 | x as u64
}

struct Reader<'a>(&'a Engine);

impl Steps for Reader<'_> {
    fn start(&mut self, _: &LazyWdaMasker, start: usize) -> Result<(StateId, Weight), Stop> {
        match self.0.starts[start] {
            NONE => Err(Stop::Miss),
            s => Ok((s, self.0.yes[start])),
        }
    }

    #[inline]
    fn step(&mut self, s: StateId, x: u32) -> Result<(Weight, StateId), Stop> {
        match self.0.trans.get(&key(s, x)) {
            Some(&v) => Ok(((v >> 32) as Weight, v as StateId)),
            None => Err(Stop::Miss),
        }
    }

    fn weight(&self, w: Weight) -> &[u64] {
        self.0.weights.get(w)
    }

    fn undecided(&self, s: StateId) -> Weight {
        self.0.und[s as usize]
    }
}

struct Writer<'a> {
    eng: &'a mut Engine,
}

impl Steps for Writer<'_> {
    fn start(&mut self, m: &LazyWdaMasker, start: usize) -> Result<(StateId, Weight), Stop> {
        let eng = &mut *self.eng;
        if eng.starts[start] == NONE {
            let (items, yes) = if start + 1 == m.start_len {
                // End of sequence: the control `($, FIN)` for the pseudo-class alone.
                let mut eos = Bits::new(m.words);
                eos.insert(m.token_classes);
                let eof = m.lr.tables().eof_index();
                (vec![(item(eof, INIT, FIN), eng.weights.intern(eos))], EMPTY)
            } else {
                let t0 = Instant::now();
                let mut t_walk = 0.0;
                let mut cont_of = std::mem::take(&mut eng.cont_of);
                cont_of.clear();
                let conts = eng.tpl.conts_mut();
                let by = match m.points.ready(start) {
                    // Prepared ahead: its continuations translated into the cache's table.
                    Some(Some(prep)) => {
                        eng.translation.upto(conts, prep.max_cont);
                        let tr = &eng.translation;
                        cont_of.extend(prep.cont_of.iter().map(|&k| tr.get(k)));
                        "ahead"
                    }
                    Some(None) => return Err(Stop::Full),
                    // Made here: spans walked, continuations derived into the cache's table.
                    None => {
                        match m
                            .points
                            .walk_for_mask(start, &mut eng.span_ids, &mut eng.span_of)
                        {
                            Ok(true) => {}
                            // Every start is a point of the lexer; a budget exceeded gives up.
                            Ok(false) | Err(_) => return Err(Stop::Full),
                        }
                        t_walk = t0.elapsed().as_secs_f64();
                        eng.root_of.resize(eng.span_ids.span_len(), UNSET);
                        let of = &eng.span_of;
                        let span_of = |c: ClassId| of[c.as_usize()];
                        let classes = 0..m.token_classes;
                        eng.pb.conts_of(
                            conts,
                            &eng.span_ids,
                            classes,
                            span_of,
                            &mut eng.root_of,
                            &mut cont_of,
                        );
                        "here"
                    }
                };
                if conts.len() > eng.max_continuations {
                    return Err(Stop::Full);
                }
                let t_conts = t0.elapsed().as_secs_f64();
                let made = eng.groups.items(conts, &cont_of, &mut eng.weights);
                eng.cont_of = cont_of;
                if crate::determinize::debug() {
                    eprintln!(
                        "wda-lazy: point {start} made {by}: walk {:.0} µs, continuations {:.0} µs, items {:.0} µs ({} items)",
                        t_walk * 1e6,
                        (t_conts - t_walk) * 1e6,
                        (t0.elapsed().as_secs_f64() - t_conts) * 1e6,
                        made.0.len()
                    );
                }
                made
            };
            let s = eng.c.initial(&mut eng.weights, &items, yes);
            eng.starts[start] = s;
            eng.yes[start] = yes;
            eng.note_states();
        }
        Ok((eng.starts[start], eng.yes[start]))
    }

    fn step(&mut self, s: StateId, x: u32) -> Result<(Weight, StateId), Stop> {
        if let Ok(v) = Reader(&*self.eng).step(s, x) {
            return Ok(v);
        }
        let eng = &mut *self.eng;
        let groups = eng.c.b.state(s).to_vec();
        let base = countdowns(&eng.tpl, &groups);
        // The groups that read `x`: the eager construction lists them per input (`keyed`).
        let tables = eng.tpl.tables();
        let xs = LrState::new(x as usize).expect("a GSS node's LR state is a valid id");
        let sel: Vec<usize> = groups
            .iter()
            .enumerate()
            .filter(|&(_, &(key, _))| {
                let (t, code) = (key >> 16, key & 0xFFFF);
                if code == INIT {
                    return !tables.actions_at(xs, t).is_empty();
                }
                let (a, r) = eng.tpl.split(code);
                r == 0
                    && tables
                        .goto(xs, NonterminalId::from_usize(a as usize))
                        .is_some()
            })
            .map(|(i, _)| i)
            .collect();
        let (out, t) = eng
            .c
            .transition(&mut eng.tpl, &mut eng.weights, &groups, &base, &sel, x)
            .map_err(|_| Stop::Full)?;
        eng.note_states();
        eng.trans.insert(key(s, x), (out as u64) << 32 | t as u64);
        eng.computed += 1;
        Ok((out, t))
    }

    fn weight(&self, w: Weight) -> &[u64] {
        self.eng.weights.get(w)
    }

    fn undecided(&self, s: StateId) -> Weight {
        self.eng.und[s as usize]
    }
}

impl Masker for LazyWdaMasker {
    fn name(&self) -> &str {
        "wda-lazy"
    }

    fn vocabulary(&self) -> &Vocabulary {
        &self.vocab
    }

    fn create_cache(&self) -> MaskCache {
        MaskCache::new(LazyCache {
            run: self.expand.create_cache(),
            fallback: None,
            masks: 0,
        })
    }

    fn fill_into(&self, cache: &mut MaskCache, state: &ParserState, mask: MaskMut<'_>) {
        IndentFix::fill_or_plain(self.indent.as_deref(), &self.vocab, state, mask, |s, m| {
            self.fill_plain(cache, s, m)
        })
    }
}

impl LazyWdaMasker {
    /// The mask of `state` with the newline terminal read as any other (exact without a
    /// post-lexer; see [`IndentFix`]).
    fn fill_plain(&self, cache: &mut MaskCache, state: &ParserState, mut mask: MaskMut<'_>) {
        let cache: &mut LazyCache = cache.get_mut();
        cache.masks += 1;
        if self.gave_up.load(Ordering::Relaxed) || !self.classes(cache, state) {
            let fallback = cache
                .fallback
                .get_or_insert_with(|| self.fallback.create_cache());
            self.fallback.fill_into(fallback, state, mask);
            return;
        }
        self.expand
            .write_mask(&mut cache.run, &self.vocab, &mut mask);
    }
}

impl Drop for LazyWdaMasker {
    fn drop(&mut self) {
        // The preparing thread holds the points alone; it stops at its next point.
        self.points.stop();
    }
}

// Compiled maskers are shared across threads.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<LazyWdaMasker>();
};
