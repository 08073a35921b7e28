//! Templates: what the GLR parser does to a stack while it takes one terminal, read top-down,
//! summarised per (terminal, LR state) so that unbounded reduction chains stay finite.
//!
//! # Controls and continuations
//!
//! A token realises a *span* from a lexer point: lexemes it completes, then an open lexeme. On
//! the parser side a span is a chain of *continuations* ([`Conts`]): a continuation offers
//! *controls* and may *succeed* outright. A control `(T, κ)` is "take terminal `T` (reductions
//! under lookahead `T`, then the shift of `T`), then go on with continuation `κ`". A lexeme
//! whose tied terminals are `{T1, T2}` offers both controls; an `%ignore`d one among them
//! offers the continuation's own controls too (the stack is left alone). The open lexeme at the
//! end offers `(T, FIN)` for every terminal it can still complete ([`FIN`] succeeds at once),
//! and succeeds outright if it can complete an ignored terminal. Continuations are interned by
//! what they offer, so spans that end alike share them.
//!
//! # Reading the stack
//!
//! The stack is read top-down. What a run still waits for after the states read so far is an
//! *exit* `(T, A, r, κ)`: a reduction under lookahead `T` popped everything read, `r` more
//! states must be popped, then the parser goes to `goto(q, A)` on the state `q` it exposes and
//! goes on with control `(T, κ)`. Items and outcomes pack `(T, code, κ)` into a `u64`
//! ([`item`]), with `code = A · stride + r`.
//!
//! # Summaries
//!
//! For a control `c = (T, κ)` and a state `x` on top with nothing known below, the outcomes of
//! every run (every action, conflicts included) are `SUCC` (the span succeeds without popping
//! `x`) and exits below `x`. They split in two:
//!
//! - **before the shift of `T`** the run does not depend on `κ`: `E(T, x)` is the set of
//!   codes `(A, r)` of the reductions that pop `x` (plus a mark `SH` when `T` can be shifted
//!   without popping `x`). It is the least solution of
//!   ```text
//!   E(T, x) ∋ (A, m-1)                 reduce A → α, |α| = m ≥ 1, in actions(x, T)
//!   E(T, x) ∋ SH                       shift in actions(x, T)
//!   E(T, x) ⊇ map_x E(T, goto(x, A))   reduce A → ε in actions(x, T)
//!   map_x: (B, r ≥ 1) ↦ (B, r-1);  (B, 0) ↦ map_x E(T, goto(x, B));  SH ↦ SH
//!   ```
//!   ("state `g` pushed on `x`": its outcomes that pop `g` continue on `x`).
//! - **after the shift**, `P(T, κ, x)` (only where `SH ∈ E(T, x)`): the shift of `T` at `x`
//!   pushes `t`, and every control `(T2, κ2)` `κ` offers runs on `t` pushed on `x`; a shift at a
//!   state `g` pushed on `x` by the pre-shift run is `P(T, κ, g)` mapped through `x`:
//!   ```text
//!   P(T, κ, x) ⊇ CONF_x(T2, κ2, t)         shift t in actions(x, T), (T2, κ2) offered by κ
//!   P(T, κ, x) ∋ SUCC                      shift in actions(x, T) and κ succeeds
//!   P(T, κ, x) ⊇ map_x P(T, κ, g)          g pushed on x in E(T, x)'s closure, SH ∈ E(T, g)
//!   CONF_x(T2, κ2, y) = map_x (E(T2, y) ⊗ κ2) ∪ map_x P(T2, κ2, y)
//!   map_x on exits: (T', B, r ≥ 1, κ') ↦ (T', B, r-1, κ');  (T', B, 0, κ') ↦ CONF_x(T', κ', goto(x, B))
//!   ```
//!
//! End of input is the terminal `$` (the control `($, FIN)` decides end of sequence): an
//! accept action on `$` at `x` counts as a shift that pushes nothing, so `SH ∈ E($, x)` and
//! `P($, FIN, x) ∋ SUCC` there.
//!
//! The unknowns range over finite sets (terminals × LR states, and controls × LR states), the
//! outcomes too (terminals × codes × continuations), and the equations are monotone, so the
//! worklists below reach the least fixpoints. This is exact for every grammar shape: a
//! right-recursive chain is a sequence of exits read one stack state at a time; an ε-rule, a
//! unit cycle or hidden left recursion is a cycle among unknowns over the same `x`, which the
//! fixpoint closes instead of unrolling; and what was pushed above `x` never needs to be
//! remembered, because once a reduction pops below it the rest of the run depends only on the
//! state `goto(q, A)` it reaches. Nothing is truncated.
//!
//! Factoring the pre-shift run out of the continuation matters for size: thousands of
//! continuations share a terminal, and before its shift they all behave alike.
//!
//! Summaries are computed lazily (only those asked for), and a completed unknown never changes:
//! adding unknowns later only adds equations for them.
//!
//! A stand-in's terminal (a literal tied with a regex) is read as the regex's wherever a control
//! starts at a known state from which that is exact on every stack ([`Templates::reading`],
//! [`RegexReadings`]): at the top, at a state a shift pushes, at the goto an exit lands in. The
//! regex's summaries and items then serve both, and a keyword costs nothing where the parser
//! cannot take it.

use std::sync::Arc;

use std::collections::{HashMap, HashSet};

use ahash::{AHashMap, AHashSet};
use munch_glr::cfg::NonterminalId;
use munch_glr::lr::{Action, LrState, LrTables};
use munch_glr::lr::{ClassTables, RegexReadings};
use smallvec::SmallVec;

/// A continuation: an index into [`Conts`].
pub(crate) type Cont = u32;
/// An item or outcome: `(terminal, code, continuation)` packed by [`item`], or [`SUCC`].
pub(crate) type Item = u64;

/// The outcome "the span succeeds".
pub(crate) const SUCC: Item = u64::MAX;
/// The code of an item that has not read anything yet (control `(T, κ)` at the top).
pub(crate) const INIT: u32 = 0xFFFF;
/// The mark in `E(T, x)`: `T` is shifted without popping `x`.
const SH: u32 = 0xFFFE;
/// Codes below this are `A · stride + r`.
pub(crate) const CODE_LIMIT: u32 = 0xFFFE;
/// Terminals below this fit an item.
pub(crate) const TERMINAL_LIMIT: u32 = 0xFFFF;
/// The continuation that succeeds at once.
pub(crate) const FIN: Cont = 0;
/// The continuation that never succeeds.
pub(crate) const NEVER: Cont = 1;

/// The most key words [`Templates::merge_exits`] builds for one terminal's refinement.
const MERGE_WORK: usize = 1 << 26;

/// Packs `(terminal, code, continuation)`.
#[inline]
pub(crate) fn item(t: u32, code: u32, k: Cont) -> Item {
    ((t as u64) << 48) | ((code as u64) << 32) | k as u64
}

/// Unpacks an item (not [`SUCC`]).
#[inline]
pub(crate) fn parts(i: Item) -> (u32, u32, Cont) {
    ((i >> 48) as u32, ((i >> 32) & 0xFFFF) as u32, i as u32)
}

/// LR state `x` (the ids the summaries store fit an `LrState`).
fn lr_state(x: u32) -> LrState {
    LrState::new(x as usize).expect("LR state ids fit")
}

/// What a continuation offers: the controls `(terminal, continuation)` (sorted) and whether it
/// succeeds outright.
pub(crate) type Offer = (Box<[(u32, Cont)]>, bool);

/// Interned continuations (see the [module docs](self)).
#[derive(Clone, Debug)]
pub(crate) struct Conts {
    /// Per continuation: the controls `(terminal, continuation)` it offers (sorted) and
    /// whether it succeeds outright.
    offers: Vec<Offer>,
    index: AHashMap<Offer, Cont>,
    heap: usize,
}

impl Conts {
    pub(crate) fn new() -> Self {
        let mut c = Conts {
            offers: Vec::new(),
            index: AHashMap::new(),
            heap: 0,
        };
        let fin = c.intern(Vec::new(), true);
        let never = c.intern(Vec::new(), false);
        debug_assert_eq!((fin, never), (FIN, NEVER));
        c
    }

    /// The continuation offering `ctrls` (any order, duplicates allowed), succeeding outright
    /// iff `succ`.
    pub(crate) fn intern(&mut self, mut ctrls: Vec<(u32, Cont)>, succ: bool) -> Cont {
        ctrls.sort_unstable();
        ctrls.dedup();
        let key = (ctrls.into_boxed_slice(), succ);
        if let Some(&k) = self.index.get(&key) {
            return k;
        }
        let k = self.offers.len() as Cont;
        self.heap += key.0.len() * 16 + 64;
        self.offers.push(key.clone());
        self.index.insert(key, k);
        k
    }

    /// The controls `k` offers.
    pub(crate) fn offers(&self, k: Cont) -> &[(u32, Cont)] {
        &self.offers[k as usize].0
    }

    /// Whether `k` succeeds outright.
    pub(crate) fn succeeds(&self, k: Cont) -> bool {
        self.offers[k as usize].1
    }

    pub(crate) fn len(&self) -> usize {
        self.offers.len()
    }

    /// The continuations interned from id `from` on, in order: what another table
    /// translating this one's ids lacks once it has the first `from`.
    pub(crate) fn since(&self, from: usize) -> Box<[Offer]> {
        self.offers[from.min(self.offers.len())..].into()
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.heap
    }
}

/// A summary budget was exceeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SummaryBudget;

/// Terminal `T` at the top `x` (see [`Templates::top`]).
#[derive(Clone, Debug)]
pub(crate) struct Top {
    pub(crate) codes: Box<[u32]>,
    pub(crate) shift: Option<u32>,
    /// `x` accepts the terminal (only `$`): end of input taken at `x`, nothing pushed.
    pub(crate) accept: bool,
    pub(crate) pushed: Box<[u32]>,
}

impl Top {
    /// Whether the terminal can be shifted without popping `x`.
    pub(crate) fn shifts(&self) -> bool {
        self.shift.is_some() || self.accept || !self.pushed.is_empty()
    }
}

/// The pre-shift closure of "`goto(x, A)` pushed on `x`" under a terminal, as
/// [`Templates::pre`] memoises it: the codes of the exits below `x`
/// ([`Templates::pre_codes`]), and the pushed states where the terminal can be shifted
/// ([`Templates::pre_shift_at`]), two ranges of one arena.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pre {
    start: u32,
    mid: u32,
    end: u32,
}

enum ETask {
    Eval(u32),
    Apply(u32, u32),
}

enum PTask {
    Eval(u32),
    Apply(u32, Item),
    Conf(u32, u32, Cont, u32),
}

/// An unknown's outcomes or links: most have two at most, kept inline (no allocation, and no
/// second cache miss when the closures read them).
type Few<T> = SmallVec<[T; 2]>;

/// The unknowns of one system of set equations, solved by propagation (`E` and `P` are two):
/// each unknown has outcomes, and a link `src → dst` says that every outcome of `src` flows
/// into `dst`, through the rewrite the system's `Apply` task makes. Adding an outcome or a link
/// queues that task for each pair it newly joins.
#[derive(Default)]
struct Flow<O> {
    out: Vec<Few<O>>,
    deps: Vec<Few<u32>>,
    seen: AHashSet<(u32, O)>,
    edges: AHashSet<(u32, u32)>,
}

impl<O: Copy + Eq + std::hash::Hash> Flow<O> {
    /// A new unknown with no outcomes and no links.
    fn push(&mut self) {
        self.out.push(Few::new());
        self.deps.push(Few::new());
    }

    /// Adds outcome `o` to `u`, queueing `apply(v, o)` for every `v` that `u` flows into;
    /// whether it is new.
    fn add<T>(&mut self, u: u32, o: O, tasks: &mut Vec<T>, apply: fn(u32, O) -> T) -> bool {
        if !self.seen.insert((u, o)) {
            return false;
        }
        self.out[u as usize].push(o);
        tasks.extend(self.deps[u as usize].iter().map(|&v| apply(v, o)));
        true
    }

    /// Makes `src` flow into `dst`, queueing `apply(dst, o)` for every outcome `o` of `src`;
    /// whether the link is new.
    fn link<T>(&mut self, src: u32, dst: u32, tasks: &mut Vec<T>, apply: fn(u32, O) -> T) -> bool {
        if !self.edges.insert((src, dst)) {
            return false;
        }
        self.deps[src as usize].push(dst);
        tasks.extend(self.out[src as usize].iter().map(|&o| apply(dst, o)));
        true
    }

    /// Heap bytes at capacity (see [`Templates::heap_bytes`]).
    fn heap_bytes(&self) -> usize {
        let vecs = (self.out.capacity() + self.deps.capacity()) * std::mem::size_of::<Few<u32>>();
        let pair = std::mem::size_of::<(u32, O)>() + 1;
        vecs + self.seen.capacity() * pair + self.edges.capacity() * 9
    }
}

/// An empty set whose hasher is seeded without drawing randomness.
fn fixed_set() -> HashSet<(u32, Cont, u32), ahash::RandomState> {
    HashSet::with_hasher(ahash::RandomState::with_seeds(1, 2, 3, 4))
}

/// Lazily computed summaries (see the [module docs](self)). They own their grammar and
/// continuations (shared), so that an on-demand automaton can keep them between masks.
pub(crate) struct Templates {
    lr: Arc<ClassTables>,
    conts: Arc<Conts>,
    /// One more than the most pops an exit can have left (the longest production).
    stride: u32,
    /// `⌈2^32 / stride⌉`: [`Templates::split`] divides by multiplying, exact for the 16-bit
    /// codes (a division on this path is expensive).
    reciprocal: u64,
    /// `goto(x, A)` at `x * nt_len + A` (`u32::MAX`: none), when the table is small enough.
    gotos: Vec<u32>,
    nt_len: usize,
    state_len: usize,
    // E(T, x): by `T * state_len + x` when small enough, else hashed.
    e_dense: Vec<u32>,
    e_index: AHashMap<(u32, u32), u32>,
    e_key: Vec<(u32, u32)>,
    e: Flow<u32>,
    e_sh: Vec<bool>,
    /// The states pushed on `x` whose `E` flows into `E(T, x)`.
    e_srcs: Vec<Vec<u32>>,
    e_tasks: Vec<ETask>,
    /// P(T, κ, x) by `κ`, one small table per `E(T, x)` unknown: a closure asks for one
    /// `(T, x)` under every continuation of a group in turn, and finds its table in cache.
    p_index: Vec<HashMap<Cont, u32, ahash::RandomState>>,
    /// The slots of the `p_index` tables, all together (kept as they grow).
    p_index_slots: usize,
    p_key: Vec<(u32, Cont, u32)>,
    p: Flow<Item>,
    /// The configurations `(P unknown, T, κ, y)` taken in the current run of the P tasks.
    p_confs: AHashSet<(u32, u32, Cont, u32)>,
    p_tasks: Vec<PTask>,
    // Closures the determiniser asks for.
    /// By `(T, A, x)` in one word (terminals and nonterminals fit 16 bits, see [`item`]).
    pre_memo: AHashMap<u64, Pre>,
    pre_arena: Vec<u32>,
    scratch_entries: Vec<(u32, Cont, u32, bool)>,
    scratch_seen: Vec<(u32, Cont, u32)>,
    /// [`Templates::over`]'s visited set past the short list, used in place (taking it out
    /// would build a hasher with fixed seeds from a global table at every call).
    scratch_big: HashSet<(u32, Cont, u32), ahash::RandomState>,
    /// Entries (unknowns + outcomes + links + memo entries) allowed before [`SummaryBudget`].
    max_entries: usize,
    entries: usize,
    /// Where a stand-in's class is read as its regex's ([`Templates::reading`]): `lr`'s, copied
    /// so that the lookups of every unknown skip the `OnceLock` that holds them there.
    readings: RegexReadings,
    /// Per `(T, A)` at `T * nt_len + A`, the nonterminal whose exits under `T` stand for `A`'s
    /// ([`Templates::merge_exits`]); empty: each its own.
    exit_rep: Vec<u16>,
}

impl Templates {
    /// Summaries over `lr`'s tables (states and terminals are its classes).
    pub(crate) fn new(lr: Arc<ClassTables>, conts: Arc<Conts>, max_entries: usize) -> Self {
        let tables = lr.tables();
        let stride = tables
            .cfg()
            .productions()
            .iter()
            .map(|p| p.rhs.len())
            .max()
            .unwrap_or(0)
            .max(1) as u32;
        // Dense tables when they stay under 16 M entries each.
        const DENSE: usize = 1 << 24;
        let state_len = tables.state_len();
        let nt_len = tables.cfg().nonterminal_len();
        let mut gotos = Vec::new();
        if state_len.saturating_mul(nt_len) <= DENSE {
            gotos = vec![u32::MAX; state_len * nt_len];
            for s in 0..state_len {
                let st = LrState::new(s).expect("LR state ids fit");
                for (n, to) in tables.state_gotos(st) {
                    gotos[s * nt_len + n.as_usize()] = to.as_u32();
                }
            }
        }
        let terminal_len = tables.eof_index() as usize + 1;
        let e_dense = if terminal_len.saturating_mul(state_len) <= DENSE {
            vec![u32::MAX; terminal_len * state_len]
        } else {
            Vec::new()
        };
        Templates {
            readings: lr.regex_readings().clone(),
            lr,
            conts,
            stride,
            reciprocal: (1u64 << 32).div_ceil(stride as u64),
            gotos,
            nt_len,
            state_len,
            e_dense,
            e_index: AHashMap::new(),
            e_key: Vec::new(),
            e: Flow::default(),
            e_sh: Vec::new(),
            e_srcs: Vec::new(),
            e_tasks: Vec::new(),
            p_index: Vec::new(),
            p_index_slots: 0,
            p_key: Vec::new(),
            p: Flow::default(),
            p_confs: AHashSet::new(),
            p_tasks: Vec::new(),
            pre_memo: AHashMap::new(),
            pre_arena: Vec::new(),
            scratch_entries: Vec::new(),
            scratch_seen: Vec::new(),
            scratch_big: fixed_set(),
            max_entries,
            entries: 0,
            exit_rep: Vec::new(),
        }
    }

    /// Terminal `t` as a control read from state `x` takes it: a stand-in's class is its
    /// regex's where that is exact ([`RegexReadings`]), so that the two share their summaries
    /// and their items.
    #[inline]
    pub(crate) fn reading(&self, t: u32, x: u32) -> u32 {
        self.readings.reading(t, x)
    }

    /// Whether every code `A · stride + r` fits an item.
    pub(crate) fn codes_fit(tables: &LrTables) -> bool {
        let stride = tables
            .cfg()
            .productions()
            .iter()
            .map(|p| p.rhs.len())
            .max()
            .unwrap_or(0)
            .max(1);
        tables.cfg().nonterminal_len().saturating_mul(stride) < CODE_LIMIT as usize
    }

    pub(crate) fn tables(&self) -> &LrTables {
        self.lr.tables()
    }

    pub(crate) fn conts(&self) -> Arc<Conts> {
        Arc::clone(&self.conts)
    }

    /// The continuations, to add to (the on-demand automaton makes a point's continuations
    /// at its first use). Adding never changes a continuation already made, so nothing
    /// computed from them goes stale. Clones them if they are shared.
    pub(crate) fn conts_mut(&mut self) -> &mut Conts {
        Arc::make_mut(&mut self.conts)
    }

    /// `(nonterminal, pops left)` of a code.
    #[inline]
    pub(crate) fn split(&self, code: u32) -> (u32, u32) {
        // With `code, stride < 2^16`, `code · ⌈2^32 / stride⌉` errs by less than `code` units
        // of `2^-32`, too little to cross the next multiple of `stride`.
        debug_assert!(code <= 0xFFFF && self.stride <= 0xFFFF);
        let a = ((code as u64 * self.reciprocal) >> 32) as u32;
        (a, code - a * self.stride)
    }

    /// The code standing for exit code `code` under terminal `t` (an `INIT` passes): the same
    /// pops, then the goto on the representative of the nonterminal's class
    /// ([`Templates::merge_exits`]).
    #[inline]
    pub(crate) fn canonical(&self, t: u32, code: u32) -> u32 {
        if self.exit_rep.is_empty() || code >= CODE_LIMIT {
            return code;
        }
        let (a, r) = self.split(code);
        self.exit_rep[t as usize * self.nt_len + a as usize] as u32 * self.stride + r
    }

    /// [`Templates::canonical`] of an outcome's code (`SUCC` passes).
    #[inline]
    pub(crate) fn canonical_item(&self, o: Item) -> Item {
        if o == SUCC || self.exit_rep.is_empty() {
            return o;
        }
        let (t, code, k) = parts(o);
        item(t, self.canonical(t, code), k)
    }

    /// Merges exits that behave alike on every stack, so that the subset construction makes
    /// one item of them (and one state where item sets differ by them alone).
    ///
    /// Under terminal `T`, an exit `(T, A, 0, κ)` reading `x` does exactly this: push
    /// `goto(x, A)` on `x`, close it under `T` ([`Templates::pre`]: the exits it leaves below
    /// `x` and the pushed states where `T` is shifted), then run `κ` after each shift (which
    /// depends on those states, `T`, `κ` and `x` alone, [`Templates::post`]). So `A` and `A'`
    /// may stand for each other under `T` when at every `x` their closures shift at the same
    /// states and leave exits that stand for each other; then so may `(T, A, r, κ)` and
    /// `(T, A', r, κ)` for every `r` (the same pops first). The coarsest such partition is
    /// found by refinement, per terminal, over the nonterminals it reduces (an exit's
    /// nonterminal is one a reduction under its terminal made): start from one block, split
    /// by the closures with their exits named by block, until no block splits. Returns the
    /// nonterminals merged away.
    ///
    /// Computes every closure of a reduced nonterminal's gotos (the construction would ask
    /// for most of them anyway); the on-demand automaton does without.
    pub(crate) fn merge_exits(&mut self) -> Result<usize, SummaryBudget> {
        self.merge_exits_within(MERGE_WORK)
    }

    /// [`Templates::merge_exits`], a terminal's refinement given up past `max_work` key words.
    pub(crate) fn merge_exits_within(&mut self, max_work: usize) -> Result<usize, SummaryBudget> {
        let lr = Arc::clone(&self.lr);
        let tables = lr.tables();
        let terminal_len = tables.eof_index() as usize + 1;
        let nt_len = self.nt_len;
        if terminal_len.saturating_mul(nt_len) > 1 << 22 || nt_len > u16::MAX as usize {
            return Ok(0);
        }
        let mut reduced: Vec<Vec<u32>> = vec![Vec::new(); terminal_len];
        let mut goto_from: Vec<Vec<u32>> = vec![Vec::new(); nt_len];
        for s in 0..self.state_len {
            let st = lr_state(s as u32);
            for (a, set) in tables.state_reductions(st) {
                if let Action::Reduce { lhs, len, .. } = a {
                    if len >= 1 {
                        for k in set.iter() {
                            reduced[k as usize].push(lhs.as_usize() as u32);
                        }
                    }
                }
            }
            for (n, _) in tables.state_gotos(st) {
                goto_from[n.as_usize()].push(s as u32);
            }
        }
        for cand in reduced.iter_mut() {
            cand.sort_unstable();
            cand.dedup();
        }
        // The closures this asks for, against what the summaries' budget has left: merging is
        // an optimisation, never the reason a build runs out.
        let closures_wanted: usize = reduced
            .iter()
            .filter(|cand| cand.len() >= 2)
            .flat_map(|cand| cand.iter().map(|&a| goto_from[a as usize].len()))
            .sum();
        if closures_wanted.saturating_mul(4) > self.max_entries.saturating_sub(self.entries) / 2 {
            return Ok(0);
        }
        let mut rep: Vec<u16> = Vec::with_capacity(terminal_len * nt_len);
        for _ in 0..terminal_len {
            rep.extend(0..nt_len as u16);
        }
        let mut merged = 0;
        // Per nonterminal: its block (meaningful for the candidates; every other one is
        // alone in a block of its own number).
        let mut block: Vec<u32> = (0..nt_len as u32).collect();
        let mut closures: Vec<(u32, Vec<u32>, Vec<u32>)> = Vec::new();
        let mut starts: Vec<usize> = Vec::new();
        let mut key: Vec<u64> = Vec::new();
        let mut ids: AHashMap<Vec<u64>, u32> = AHashMap::new();
        for (t, cand) in reduced.iter().enumerate() {
            if cand.len() < 2 {
                continue;
            }
            let t = t as u32;
            // Each candidate's closures, the empty ones left out (as no goto).
            closures.clear();
            starts.clear();
            for &a in cand.iter() {
                starts.push(closures.len());
                for &x in &goto_from[a as usize] {
                    let pre = self.pre(t, a, x)?;
                    if pre.start == pre.end {
                        continue;
                    }
                    closures.push((
                        x,
                        self.pre_codes(pre).to_vec(),
                        self.pre_shift_at(pre).to_vec(),
                    ));
                }
            }
            starts.push(closures.len());
            // Block numbers past every nonterminal's own: one block to start with.
            let first = nt_len as u32;
            for &a in cand.iter() {
                block[a as usize] = first;
            }
            // Rounds end when no block splits; a terminal whose refinement would take more
            // than `max_work` key words keeps its exits apart (a partition short of the
            // fixpoint could merge exits that differ).
            let mut count = 1;
            let mut work = 0usize;
            let mut settled = true;
            loop {
                ids.clear();
                let mut next: Vec<u32> = Vec::with_capacity(cand.len());
                for (i, &a) in cand.iter().enumerate() {
                    key.clear();
                    key.push(block[a as usize] as u64);
                    for (x, codes, shift_at) in &closures[starts[i]..starts[i + 1]] {
                        key.push(*x as u64);
                        let from = key.len();
                        key.push(0);
                        let at = key.len();
                        for &code in codes {
                            let (b, r) = self.split(code);
                            key.push((block[b as usize] as u64) << 32 | r as u64);
                        }
                        key[at..].sort_unstable();
                        let mut n = at;
                        for j in at..key.len() {
                            if j == at || key[j] != key[n - 1] {
                                key[n] = key[j];
                                n += 1;
                            }
                        }
                        key.truncate(n);
                        key[from] = (key.len() - at) as u64;
                        key.push(shift_at.len() as u64);
                        key.extend(shift_at.iter().map(|&g| g as u64));
                    }
                    work += key.len();
                    let id = ids.len() as u32;
                    next.push(*ids.entry(key.clone()).or_insert(id));
                }
                for (&a, &b) in cand.iter().zip(&next) {
                    block[a as usize] = first + b;
                }
                if ids.len() == count {
                    break;
                }
                count = ids.len();
                if work > max_work {
                    settled = false;
                    break;
                }
            }
            if !settled {
                for &a in cand.iter() {
                    block[a as usize] = a;
                }
                continue;
            }
            // The smallest member of each block stands for it (candidates ascend).
            let mut first_of: AHashMap<u32, u16> = AHashMap::new();
            for &a in cand.iter() {
                let r = *first_of.entry(block[a as usize]).or_insert(a as u16);
                rep[t as usize * nt_len + a as usize] = r;
            }
            merged += cand.len() - count;
            for &a in cand.iter() {
                block[a as usize] = a;
            }
        }
        self.exit_rep = rep;
        Ok(merged)
    }

    /// (E unknowns, P unknowns, P outcomes, pre-shift closures), for `MUNCH_WDA_DEBUG`.
    pub(crate) fn counts(&self) -> [usize; 4] {
        [
            self.e_key.len(),
            self.p_key.len(),
            self.p.seen.len(),
            self.pre_memo.len(),
        ]
    }

    /// Approximate heap bytes held: the dense tables, every table's slots at its capacity (a
    /// hash table's with a control byte), and 16 bytes per entry of the lists they hold.
    pub(crate) fn heap_bytes(&self) -> usize {
        fn map<K, V>(m: &std::collections::HashMap<K, V, ahash::RandomState>) -> usize {
            m.capacity() * (std::mem::size_of::<(K, V)>() + 1)
        }
        fn set<K>(m: &HashSet<K, ahash::RandomState>) -> usize {
            m.capacity() * (std::mem::size_of::<K>() + 1)
        }
        fn vec<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        (self.gotos.capacity() + self.e_dense.capacity()) * 4
            + self.entries * 16
            + map(&self.e_index)
            + vec(&self.e_key)
            + self.e.heap_bytes()
            + vec(&self.e_sh)
            + vec(&self.e_srcs)
            + vec(&self.e_tasks)
            + self.p_index.capacity()
                * std::mem::size_of::<HashMap<Cont, u32, ahash::RandomState>>()
            + self.p_index_slots * (std::mem::size_of::<(Cont, u32)>() + 1)
            + vec(&self.p_key)
            + self.p.heap_bytes()
            + set(&self.p_confs)
            + vec(&self.p_tasks)
            + map(&self.pre_memo)
            + vec(&self.pre_arena)
            + vec(&self.scratch_entries)
            + vec(&self.scratch_seen)
            + set(&self.scratch_big)
            + vec(&self.exit_rep)
    }

    fn count(&mut self, n: usize) -> Result<(), SummaryBudget> {
        self.entries += n;
        if self.entries > self.max_entries {
            Err(SummaryBudget)
        } else {
            Ok(())
        }
    }

    #[inline]
    pub(crate) fn goto(&self, x: u32, nt: u32) -> Option<u32> {
        if !self.gotos.is_empty() {
            let g = self.gotos[x as usize * self.nt_len + nt as usize];
            return (g != u32::MAX).then_some(g);
        }
        self.tables()
            .goto(lr_state(x), NonterminalId::from_usize(nt as usize))
            .map(|g| g.as_u32())
    }

    // ---- E(T, x) ----

    /// The unknown `E(T, x)`, made if new. The closures ask for known ones millions of times,
    /// so the dense table's hit is inlined and everything else is a call.
    #[inline]
    fn e_unknown(&mut self, t: u32, x: u32) -> Result<u32, SummaryBudget> {
        let t = self.reading(t, x);
        if let Some(&u) = self.e_dense.get(t as usize * self.state_len + x as usize) {
            if u != u32::MAX {
                return Ok(u);
            }
        }
        self.e_unknown_slow(t, x)
    }

    /// [`Templates::e_unknown`] past the dense table's hit.
    #[inline(never)]
    fn e_unknown_slow(&mut self, t: u32, x: u32) -> Result<u32, SummaryBudget> {
        let dense = (!self.e_dense.is_empty()).then(|| t as usize * self.state_len + x as usize);
        if dense.is_none() {
            if let Some(&u) = self.e_index.get(&(t, x)) {
                return Ok(u);
            }
        }
        let u = self.e_key.len() as u32;
        match dense {
            Some(i) => self.e_dense[i] = u,
            None => {
                self.e_index.insert((t, x), u);
            }
        }
        self.e_key.push((t, x));
        self.e.push();
        self.e_sh.push(false);
        self.e_srcs.push(Vec::new());
        // Seeded without drawing randomness, which would cost more than most tables hold.
        self.p_index
            .push(HashMap::with_hasher(ahash::RandomState::with_seeds(
                1, 2, 3, 4,
            )));
        self.e_tasks.push(ETask::Eval(u));
        self.count(1)?;
        Ok(u)
    }

    fn e_add(&mut self, u: u32, code: u32) -> Result<(), SummaryBudget> {
        if self.e.add(u, code, &mut self.e_tasks, ETask::Apply) {
            if code == SH {
                self.e_sh[u as usize] = true;
            }
            self.count(1)?;
        }
        Ok(())
    }

    fn e_link(&mut self, g: u32, dst: u32) -> Result<(), SummaryBudget> {
        let t = self.e_key[dst as usize].0;
        let src = self.e_unknown(t, g)?;
        if self.e.link(src, dst, &mut self.e_tasks, ETask::Apply) {
            self.e_srcs[dst as usize].push(g);
            self.count(1)?;
        }
        Ok(())
    }

    fn e_run(&mut self) -> Result<(), SummaryBudget> {
        if self.e_tasks.is_empty() {
            return Ok(());
        }
        let lr = Arc::clone(&self.lr);
        let tables = lr.tables();
        while let Some(task) = self.e_tasks.pop() {
            match task {
                ETask::Eval(u) => {
                    let (t, x) = self.e_key[u as usize];
                    let xs = lr_state(x);
                    for &a in tables.actions_at(xs, t) {
                        match a {
                            Action::Shift(_) => self.e_add(u, SH)?,
                            Action::Reduce { lhs, len: 0, .. } => {
                                if let Some(g) = tables.goto(xs, lhs) {
                                    self.e_link(g.as_u32(), u)?;
                                }
                            }
                            Action::Reduce { lhs, len, .. } => {
                                let code = lhs.as_usize() as u32 * self.stride + len - 1;
                                self.e_add(u, code)?;
                            }
                            // Only on `$`: end of input is taken like a shift at `x`
                            // (the EOS control's summary; see `Top::accept`).
                            Action::Accept => self.e_add(u, SH)?,
                        }
                    }
                }
                ETask::Apply(dst, code) => {
                    if code == SH {
                        self.e_add(dst, SH)?;
                        continue;
                    }
                    let (a, r) = self.split(code);
                    if r > 0 {
                        self.e_add(dst, code - 1)?;
                    } else if let Some(g) = self.goto(self.e_key[dst as usize].1, a) {
                        self.e_link(g, dst)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// `E(T, x)`, complete.
    #[inline(always)]
    fn e(&mut self, t: u32, x: u32) -> Result<u32, SummaryBudget> {
        let u = self.e_unknown(t, x)?;
        if !self.e_tasks.is_empty() {
            self.e_run()?;
        }
        Ok(u)
    }

    /// The `i`-th state pushed on `x` by ε-reductions, where `ex` is `E(T, x)`, if `T` can
    /// be shifted there.
    fn pushed_at(&mut self, t: u32, ex: u32, i: usize) -> Result<Option<u32>, SummaryBudget> {
        let g = self.e_srcs[ex as usize][i];
        let eg = self.e(t, g)?;
        Ok(self.e_sh[eg as usize].then_some(g))
    }

    // ---- P(T, κ, x) ----

    /// The unknown `P(T, κ, x)`, made if new; the hit inlined, as for `E`.
    #[inline(always)]
    fn p_unknown(&mut self, t: u32, k: Cont, x: u32) -> Result<u32, SummaryBudget> {
        let ex = self.e_unknown(t, x)? as usize;
        // `t` as `E(T, x)` read it.
        let t = self.e_key[ex].0;
        if let Some(&u) = self.p_index[ex].get(&k) {
            return Ok(u);
        }
        self.p_unknown_new(ex, t, k, x)
    }

    /// Makes `P(T, κ, x)`, where `ex` is `E(T, x)`.
    #[inline(never)]
    fn p_unknown_new(&mut self, ex: usize, t: u32, k: Cont, x: u32) -> Result<u32, SummaryBudget> {
        let u = self.p_key.len() as u32;
        let table = &mut self.p_index[ex];
        self.p_index_slots -= table.capacity();
        table.insert(k, u);
        self.p_index_slots += table.capacity();
        self.p_key.push((t, k, x));
        self.p.push();
        self.p_tasks.push(PTask::Eval(u));
        self.count(1)?;
        Ok(u)
    }

    fn p_add(&mut self, u: u32, o: Item) -> Result<(), SummaryBudget> {
        if self.p.add(u, o, &mut self.p_tasks, PTask::Apply) {
            self.count(1)?;
        }
        Ok(())
    }

    fn p_link(&mut self, t: u32, k: Cont, y: u32, dst: u32) -> Result<(), SummaryBudget> {
        let src = self.p_unknown(t, k, y)?;
        if self.p.link(src, dst, &mut self.p_tasks, PTask::Apply) {
            self.count(1)?;
        }
        Ok(())
    }

    /// Control `(T, κ)` of `P(dst)` exits with reduction `code` below the top: one symbol
    /// fewer to pop, or the goto it lands in, read as a configuration of `dst`.
    fn p_exit(&mut self, dst: u32, t: u32, code: u32, k: Cont) -> Result<(), SummaryBudget> {
        let (a, r) = self.split(code);
        if r > 0 {
            self.p_add(dst, item(t, code - 1, k))?;
        } else if let Some(g) = self.goto(self.p_key[dst as usize].2, a) {
            let t = self.reading(t, g);
            self.p_tasks.push(PTask::Conf(dst, t, k, g));
        }
        Ok(())
    }

    /// Runs the P tasks queued, if any (inlined: the closures call it after every lookup, and
    /// it seldom has work).
    #[inline]
    fn p_run(&mut self) -> Result<(), SummaryBudget> {
        if self.p_tasks.is_empty() {
            return Ok(());
        }
        self.p_solve()
    }

    #[inline(never)]
    fn p_solve(&mut self) -> Result<(), SummaryBudget> {
        let lr = Arc::clone(&self.lr);
        let tables = lr.tables();
        let conts = Arc::clone(&self.conts);
        while let Some(task) = self.p_tasks.pop() {
            match task {
                PTask::Eval(u) => {
                    let (t, k, x) = self.p_key[u as usize];
                    let xs = lr_state(x);
                    for &a in tables.actions_at(xs, t) {
                        match a {
                            Action::Shift(to) => {
                                for &(t2, k2) in conts.offers(k) {
                                    let t2 = self.reading(t2, to.as_u32());
                                    self.p_tasks.push(PTask::Conf(u, t2, k2, to.as_u32()));
                                }
                                if conts.succeeds(k) {
                                    self.p_add(u, SUCC)?;
                                }
                            }
                            // Nothing follows the end of input: the control succeeds iff its
                            // continuation does.
                            Action::Accept if conts.succeeds(k) => self.p_add(u, SUCC)?,
                            _ => {}
                        }
                    }
                    let ex = self.e(t, x)?;
                    for i in 0..self.e_srcs[ex as usize].len() {
                        if let Some(g) = self.pushed_at(t, ex, i)? {
                            self.p_link(t, k, g, u)?;
                        }
                    }
                }
                PTask::Apply(dst, o) => {
                    if o == SUCC {
                        self.p_add(dst, SUCC)?;
                        continue;
                    }
                    let (t, code, k) = parts(o);
                    self.p_exit(dst, t, code, k)?;
                }
                PTask::Conf(dst, t, k, y) => {
                    if !self.p_confs.insert((dst, t, k, y)) {
                        continue;
                    }
                    self.count(1)?;
                    let ey = self.e(t, y)?;
                    for i in 0..self.e.out[ey as usize].len() {
                        let code = self.e.out[ey as usize][i];
                        if code != SH {
                            self.p_exit(dst, t, code, k)?;
                        }
                    }
                    if self.e_sh[ey as usize] {
                        self.p_link(t, k, y, dst)?;
                    }
                }
            }
        }
        // The tasks ran out, so every unknown is complete, and a complete unknown is never
        // given a configuration again: the set serves one run. A large one is let go (the
        // largest table of the summaries otherwise), a small one cleared.
        if self.p_confs.capacity() > 1024 {
            self.p_confs = AHashSet::new();
        } else {
            self.p_confs.clear();
        }
        Ok(())
    }

    // ---- What the determiniser asks ----

    /// Terminal `T` reading `x` at the top, before any continuation: the codes of its
    /// pre-shift exits below `x`, the state its shift at `x` itself pushes (if it has one), and
    /// the states pushed on `x` (by ε-reductions) where it can be shifted.
    pub(crate) fn top(&mut self, t: u32, x: u32) -> Result<Top, SummaryBudget> {
        let ex = self.e(t, x)?;
        let codes = self.e.out[ex as usize]
            .iter()
            .copied()
            .filter(|&c| c != SH)
            .collect();
        let xs = lr_state(x);
        let tables = self.lr.tables();
        let shift = tables.actions_at(xs, t).iter().find_map(|a| match a {
            Action::Shift(to) => Some(to.as_u32()),
            _ => None,
        });
        let accept = tables
            .actions_at(xs, t)
            .iter()
            .any(|a| matches!(a, Action::Accept));
        let mut pushed = Vec::new();
        for i in 0..self.e_srcs[ex as usize].len() {
            if let Some(g) = self.pushed_at(t, ex, i)? {
                pushed.push(g);
            }
        }
        Ok(Top {
            codes,
            shift,
            accept,
            pushed: pushed.into(),
        })
    }

    /// The post-shift outcomes below `x` of control `(T, κ)` having read `x` at the top (the
    /// `P(T, κ, x)` of the [module docs](self), mapped here through `x` rather than kept as an
    /// unknown per top state, which would multiply the controls by the LR states). Not
    /// memoised here: the construction keeps a whole group's outcomes, and a `(T, κ, x)` seldom
    /// recurs outside its group, so a memo would cost more memory than it saves time.
    pub(crate) fn shifted(
        &mut self,
        top: &Top,
        t: u32,
        k: Cont,
        x: u32,
        out: &mut Vec<Item>,
    ) -> Result<(), SummaryBudget> {
        let mut entries = std::mem::take(&mut self.scratch_entries);
        entries.clear();
        if let Some(to) = top.shift {
            for &(t2, k2) in self.conts.offers(k) {
                entries.push((self.reading(t2, to), k2, to, true));
            }
            if self.conts.succeeds(k) {
                out.push(SUCC);
            }
        } else if top.accept && self.conts.succeeds(k) {
            out.push(SUCC);
        }
        entries.extend(top.pushed.iter().map(|&g| (t, k, g, false)));
        let r = self.over(x, &mut entries, out);
        self.scratch_entries = entries;
        r
    }

    /// The pre-shift closure of `goto(x, A)` pushed on `x` under terminal `T`.
    pub(crate) fn pre(&mut self, t: u32, a: u32, x: u32) -> Result<Pre, SummaryBudget> {
        let key = (t as u64) << 48 | (a as u64) << 32 | x as u64;
        if let Some(&pre) = self.pre_memo.get(&key) {
            return Ok(pre);
        }
        let mut codes: Vec<u32> = Vec::new();
        let mut shift_at: Vec<u32> = Vec::new();
        let mut seen: Vec<u32> = Vec::new();
        let mut stack: Vec<u32> = Vec::new();
        if let Some(g) = self.goto(x, a) {
            stack.push(g);
            seen.push(g);
        }
        while let Some(g) = stack.pop() {
            let eg = self.e(t, g)?;
            if self.e_sh[eg as usize] {
                shift_at.push(g);
            }
            for i in 0..self.e.out[eg as usize].len() {
                let code = self.e.out[eg as usize][i];
                if code == SH {
                    continue;
                }
                let (b, r) = self.split(code);
                if r > 0 {
                    codes.push(code - 1);
                } else if let Some(g2) = self.goto(x, b) {
                    if !seen.contains(&g2) {
                        seen.push(g2);
                        stack.push(g2);
                    }
                }
            }
        }
        codes.sort_unstable();
        codes.dedup();
        shift_at.sort_unstable();
        self.count(1 + codes.len() + shift_at.len())?;
        let start = self.pre_arena.len();
        self.pre_arena.extend_from_slice(&codes);
        let mid = self.pre_arena.len();
        self.pre_arena.extend_from_slice(&shift_at);
        let pre = Pre {
            start: start as u32,
            mid: mid as u32,
            end: self.pre_arena.len() as u32,
        };
        self.pre_memo.insert(key, pre);
        Ok(pre)
    }

    /// The codes of the exits below `x` of a [`Templates::pre`] closure.
    pub(crate) fn pre_codes(&self, pre: Pre) -> &[u32] {
        &self.pre_arena[pre.start as usize..pre.mid as usize]
    }

    /// The pushed states where a [`Templates::pre`] closure's terminal can be shifted.
    pub(crate) fn pre_shift_at(&self, pre: Pre) -> &[u32] {
        &self.pre_arena[pre.mid as usize..pre.end as usize]
    }

    /// The post-shift outcomes below `x` of control `(T, κ)` with `goto(x, A)` pushed on `x`:
    /// the shifts at the states of [`Templates::pre_shift_at`]`(pre)`, each continuation
    /// run and mapped through `x`.
    pub(crate) fn post(
        &mut self,
        pre: Pre,
        t: u32,
        k: Cont,
        x: u32,
        out: &mut Vec<Item>,
    ) -> Result<(), SummaryBudget> {
        // Most runs pass every outcome below `x` without a goto to push on it: those are
        // mapped here, in the order `over` gives them (its stack pops the last state first),
        // without its stack and visited set. At the first goto, `over` starts again from the
        // beginning; what was looked up here is what it looks up first, in the same order.
        let from = out.len();
        'direct: {
            for j in (pre.mid as usize..pre.end as usize).rev() {
                let u = self.p_unknown(t, k, self.pre_arena[j])?;
                self.p_run()?;
                for i in 0..self.p.out[u as usize].len() {
                    if self.below(x, self.p.out[u as usize][i], out).is_some() {
                        break 'direct;
                    }
                }
            }
            return Ok(());
        }
        out.truncate(from);
        let mut entries = std::mem::take(&mut self.scratch_entries);
        entries.clear();
        let shift_at = &self.pre_arena[pre.mid as usize..pre.end as usize];
        entries.extend(shift_at.iter().map(|&g| (t, k, g, false)));
        let r = self.over(x, &mut entries, out);
        self.scratch_entries = entries;
        r
    }

    /// Where outcome `o` of a state pushed on `x` goes once it pops that state: `SUCC` and
    /// exits with pops left pass below `x` (into `out`); an exit with none left is the
    /// configuration `(T', κ', goto(x, B))` pushed on `x`, returned (nothing without the goto).
    #[inline(always)]
    fn below(&self, x: u32, o: Item, out: &mut Vec<Item>) -> Option<(u32, Cont, u32)> {
        if o == SUCC {
            out.push(SUCC);
            return None;
        }
        let (t2, code, k2) = parts(o);
        let (b, r) = self.split(code);
        if r > 0 {
            out.push(item(t2, code - 1, k2));
            return None;
        }
        self.goto(x, b).map(|g| (t2, k2, g))
    }

    /// Whether `c` is seen for the first time: a short list while small (the common case), a
    /// set past that, so that a closure with many configurations stays linear.
    fn first_visit(
        seen: &mut Vec<(u32, Cont, u32)>,
        big: &mut HashSet<(u32, Cont, u32), ahash::RandomState>,
        c: (u32, Cont, u32),
    ) -> bool {
        if seen.len() < 32 {
            if seen.contains(&c) {
                return false;
            }
            seen.push(c);
            return true;
        }
        if big.is_empty() {
            big.extend(seen.iter().copied());
        }
        big.insert(c)
    }

    /// The outcomes below `x` of configurations pushed on `x`: `(T', κ', y, with_pre)` is
    /// control `(T', κ')` running with `y` pushed on `x` (only its post-shift part unless
    /// `with_pre`). Exits that pop `y` continue on `x`: with pops left they pass below `x`,
    /// otherwise `goto(x, B)` is pushed on `x` and expanded in turn.
    fn over(
        &mut self,
        x: u32,
        stack: &mut Vec<(u32, Cont, u32, bool)>,
        out: &mut Vec<Item>,
    ) -> Result<(), SummaryBudget> {
        let mut seen = std::mem::take(&mut self.scratch_seen);
        seen.clear();
        // Reused, and seeded once: a fresh `AHashSet` draws a random seed, which costs more
        // than most closures. Clearing an empty set costs nothing.
        self.scratch_big.clear();
        let r = (|| {
            while let Some((t1, k1, y, with_pre)) = stack.pop() {
                // A configuration without its pre-shift part is only ever made where its
                // terminal shifts (`E(T', y)` complete, with `SH`): only `P` is looked up.
                if with_pre {
                    let ey = self.e(t1, y)?;
                    for i in 0..self.e.out[ey as usize].len() {
                        let code = self.e.out[ey as usize][i];
                        if code == SH {
                            continue;
                        }
                        let (b, r) = self.split(code);
                        if r > 0 {
                            out.push(item(t1, code - 1, k1));
                        } else if let Some(g) = self.goto(x, b) {
                            let t1 = self.reading(t1, g);
                            if Self::first_visit(&mut seen, &mut self.scratch_big, (t1, k1, g)) {
                                stack.push((t1, k1, g, true));
                            }
                        }
                    }
                    if !self.e_sh[ey as usize] {
                        continue;
                    }
                }
                let u = self.p_unknown(t1, k1, y)?;
                self.p_run()?;
                for i in 0..self.p.out[u as usize].len() {
                    if let Some(c) = self.below(x, self.p.out[u as usize][i], out) {
                        let c = (self.reading(c.0, c.2), c.1, c.2);
                        if Self::first_visit(&mut seen, &mut self.scratch_big, c) {
                            stack.push((c.0, c.1, c.2, true));
                        }
                    }
                }
            }
            Ok(())
        })();
        self.scratch_seen = seen;
        r
    }
}
