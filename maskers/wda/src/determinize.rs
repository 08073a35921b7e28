//! Weighted subset construction: the Parser DWA.
//!
//! A state of the automaton is a *weighted item set*: items are what a run still waits for
//! while the stack is read top-down, each with the classes whose tokens ride on it:
//!
//! - `(T, INIT, κ)`: control `(T, κ)` has not read anything yet (only in initial states, one
//!   per lexer point);
//! - `(T, A, r, κ)`: an exit of the [summaries](crate::template): pop `r` more states, then go
//!   to `goto(q, A)` from the state `q` exposed, and go on with control `(T, κ)`.
//!
//! Reading LR state `x` from a weighted item set `D`:
//!
//! - `(T, INIT, κ)` contributes the pre-shift exits `E(T, x) ⊗ κ` and the post-shift
//!   outcomes `P(T, κ, x)`;
//! - `(T, A, r ≥ 1, κ)` becomes `(T, A, r - 1, κ)`;
//! - `(T, A, 0, κ)` contributes the outcomes of `goto(x, A)` pushed on `x` under control
//!   `(T, κ)` ([`Templates::pre`] and [`Templates::post`]; nothing when the goto is
//!   undefined);
//!
//! each with the item's weight. The weights of the contributions that reach `SUCC` are unioned
//! into the transition's output (those classes are allowed, whatever lies below); the exits
//! collected (unioned per exit) form the next state, from whose weights the output classes are
//! removed (they are decided). An item whose weight becomes empty is dropped. So a state knows
//! only undecided classes, and the output of a path — the union of its transitions' outputs —
//! is exactly the set of classes for which some run of the parser succeeds on that stack.
//!
//! A state is stored as groups: per `(terminal, code)`, one interned map `κ → weight`
//! ([`KMaps`]). Everything before the terminal's shift is the same for every `κ` of a group,
//! so a countdown or a pre-shift exit moves the group's map as a whole; only the post-shift
//! outcomes are computed continuation by continuation.
//!
//! Exits are written in a canonical form: under terminal `T`, an exit's nonterminal is replaced
//! by the representative of the nonterminals whose exits run alike on every stack
//! ([`Templates::merge_exits`], computed before the construction). Item sets that differ only
//! by such exits are then one state, not several that minimisation would merge afterwards.
//!
//! Transitions are sparse: only `INIT` items (through their terminal's actions) and
//! `(_, A, 0, _)` items (through the states with a goto on `A`) depend on `x`; every other
//! `x` takes the state's *default* transition, where only the countdowns move. Items of one
//! `(terminal, code)` share all their work but the continuation's own.

use std::collections::VecDeque;

use ahash::AHashMap;
use munch_glr::cfg::NonterminalId;
use munch_glr::lr::{Action, LrState};
use smallvec::SmallVec;

use crate::bits::{Weight, Weights, EMPTY};
use crate::kmaps::{KMap, KMaps};
use crate::template::{Cont, Item, Pre, SummaryBudget, Templates, Top, INIT, SUCC};

/// A state id; state 0 is the empty item set (nothing left to decide).
pub(crate) type StateId = u32;
/// The empty state.
pub(crate) const DEAD: StateId = 0;

/// A transition: `(output weight, target state)`.
pub(crate) type Edge = (Weight, StateId);

/// The automaton before minimisation.
pub(crate) struct Dfa {
    /// Per state: the default transition (for states not listed in `edges`).
    pub(crate) default: Vec<Edge>,
    /// Per state: `(LR state, output, target)`, sorted by LR state; never equal to the default.
    pub(crate) edges: Vec<Vec<(u32, Weight, StateId)>>,
}

impl Dfa {
    pub(crate) fn state_len(&self) -> usize {
        self.default.len()
    }

    /// The automaton with each input `x` read as the inputs `members[x]` (disjoint, each
    /// list ascending): every edge on `x` becomes one edge per member, sorted.
    pub(crate) fn with_inputs(self, members: &[Vec<u32>]) -> Dfa {
        let edges = self
            .edges
            .into_iter()
            .map(|list| {
                let mut out: Vec<(u32, Weight, StateId)> = list
                    .iter()
                    .flat_map(|&(x, w, t)| members[x as usize].iter().map(move |&m| (m, w, t)))
                    .collect();
                out.sort_unstable_by_key(|&(m, _, _)| m);
                out
            })
            .collect();
        Dfa {
            default: self.default,
            edges,
        }
    }

    pub(crate) fn edge_len(&self) -> usize {
        self.edges.iter().map(Vec::len).sum::<usize>() + self.default.len()
    }

    /// Heap bytes of an automaton of `states` states and `edges` listed transitions: a default
    /// and an edge list per state, `(x, weight, target)` per edge.
    pub(crate) fn bytes_for(states: usize, edges: usize) -> usize {
        states.saturating_mul(8 + 24) + edges.saturating_mul(12)
    }
}

/// Which budget a construction exceeded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exceeded {
    States,
    Edges,
    Memory,
}

impl From<SummaryBudget> for Exceeded {
    fn from(_: SummaryBudget) -> Self {
        Exceeded::Memory
    }
}

/// Budgets of [`determinize`].
pub(crate) struct Limits {
    pub(crate) max_states: usize,
    pub(crate) max_edges: usize,
    /// The most heap bytes the construction may hold, `held` included.
    pub(crate) max_heap: usize,
    /// Bytes the caller holds throughout (the token spans, continuations, initial items).
    pub(crate) held: usize,
}

/// LR states with an action per terminal, with a goto per nonterminal, and the predecessors
/// of every state (the states with a transition into it: on a GSS path, the node below a node
/// in state `q` is in one of them).
struct Relevance {
    by_terminal: Vec<Vec<u32>>,
    by_nonterminal: Vec<Vec<u32>>,
    pred: Vec<Vec<u32>>,
    /// States a head's node can be in: the start state and the targets of shifts (a head's
    /// node is the GSS root or a node made by a shift).
    top: Vec<bool>,
}

impl Relevance {
    fn heap_bytes(&self) -> usize {
        let lists = |v: &Vec<Vec<u32>>| {
            v.capacity() * 24 + v.iter().map(|l| l.capacity() * 4).sum::<usize>()
        };
        lists(&self.by_terminal) + lists(&self.by_nonterminal) + lists(&self.pred) + self.top.len()
    }

    /// The lists of `tpl`'s tables, or [`Exceeded::Memory`] before allocating them if they
    /// would take more than `max_bytes`. A reduction's lookaheads are read as its set's
    /// words: a keyword set's states reduce on thousands of lookaheads each.
    fn new(tpl: &Templates, max_bytes: usize) -> Result<Self, Exceeded> {
        let tables = tpl.tables();
        let cfg = tables.cfg();
        let words = (tables.eof_index() as usize + 1).div_ceil(64);
        let states = || (0..tables.state_len()).map(|s| LrState::new(s).expect("LR state ids fit"));
        let mut acts = vec![0u64; words];
        // Count first: the terminal lists are states × lookaheads with an action.
        let mut entries = 0usize;
        for st in states() {
            acts.fill(0);
            tables.add_state_lookaheads(st, &mut acts);
            entries += acts.iter().map(|w| w.count_ones() as usize).sum::<usize>();
            entries += 2 * tables.state_shifts(st).count() + 2 * tables.state_gotos(st).count();
        }
        let lists = tables.eof_index() as usize + 1 + cfg.nonterminal_len() + tables.state_len();
        if entries.saturating_mul(4) + lists * 24 + tables.state_len() > max_bytes {
            return Err(Exceeded::Memory);
        }
        let mut by_terminal = vec![Vec::new(); tables.eof_index() as usize + 1];
        let mut by_nonterminal = vec![Vec::new(); cfg.nonterminal_len()];
        let mut pred = vec![Vec::new(); tables.state_len()];
        let mut top = vec![false; tables.state_len()];
        top[LrState::START.as_usize()] = true;
        for st in states() {
            let s = st.as_usize();
            acts.fill(0);
            tables.add_state_lookaheads(st, &mut acts);
            for (w, &word) in acts.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    by_terminal[w * 64 + bits.trailing_zeros() as usize].push(s as u32);
                    bits &= bits - 1;
                }
            }
            for (_, a) in tables.state_shifts(st) {
                if let Action::Shift(to) = a {
                    pred[to.as_usize()].push(s as u32);
                    top[to.as_usize()] = true;
                }
            }
            for (n, to) in tables.state_gotos(st) {
                by_nonterminal[n.as_usize()].push(s as u32);
                pred[to.as_usize()].push(s as u32);
            }
        }
        for p in &mut pred {
            p.sort_unstable();
            p.dedup();
        }
        Ok(Relevance {
            by_terminal,
            by_nonterminal,
            pred,
            top,
        })
    }
}

/// What the construction knows of one state besides its items.
#[derive(Default)]
struct Info {
    /// LR states it can be entered by (the last state read); `None`: any (initial states).
    lasts: Option<Vec<u32>>,
    /// LR states whose transition has been computed.
    done: Vec<u32>,
    /// Queued for (re)processing.
    queued: bool,
}

/// The weighted subset construction from `initial` item sets (one per lexer point; each a list
/// of `(item, weight)`, any order, duplicates allowed, and the classes already decided, which
/// are left out). Returns the automaton and the initial states, in order.
///
/// Only transitions a GSS can take are computed: an initial state reads a head's node, which
/// is the GSS root or was made by a shift, so its LR state is the start state or a shift
/// target; a state entered by reading `q` reads next a predecessor of `q`. Every other input takes the default
/// transition, whatever the items would say, which is harmless because no stack has that
/// input there (and minimisation only merges states that agree on every input, so a merged
/// state still answers each of its originals correctly on their valid inputs).
pub(crate) fn determinize(
    tpl: &mut Templates,
    weights: &mut Weights,
    initial: Vec<(Vec<(Item, Weight)>, Weight)>,
    limits: &Limits,
) -> Result<(Dfa, Vec<StateId>), Exceeded> {
    let t0 = std::time::Instant::now();
    let merged = tpl.merge_exits()?;
    if debug() {
        eprintln!(
            "wda: {merged} exits' nonterminals merged in {:.1} ms, summaries {:?}",
            t0.elapsed().as_secs_f64() * 1e3,
            tpl.counts()
        );
    }
    let rel = Relevance::new(tpl, limits.max_heap.saturating_sub(limits.held))?;
    // Held throughout, besides what grows: the caller's tables and the relevance lists.
    let held = limits.held + rel.heap_bytes();
    let over = |c: &Construction, tpl: &Templates, weights: &Weights, edges: usize| {
        held + c.heap_bytes(tpl, weights) + Dfa::bytes_for(c.b.len(), edges) > limits.max_heap
    };
    if over(&Construction::new(0), tpl, weights, 0) {
        return Err(Exceeded::Memory);
    }
    let mut c = Construction::new(weights.words());
    let mut starts = Vec::with_capacity(initial.len());
    for (items, decided) in initial {
        let s = c.initial(weights, &items, decided);
        c.b.info[s as usize].lasts = None;
        c.b.enqueue(s);
        starts.push(s);
    }
    let mut dfa = Dfa {
        default: Vec::new(),
        edges: Vec::new(),
    };
    let mut edge_count = 0usize;
    // Scratch: (x, group index) pairs of the current state; the groups read at one `x`.
    // Each pair is one word, `x` in the top half, so that sorting compares words.
    let mut keyed: Vec<u64> = Vec::new();
    let mut sel: Vec<usize> = Vec::new();
    let mut wanted: Vec<u32> = Vec::new();
    let mut rounds = 0usize;
    while let Some(d) = c.b.queue.pop_front() {
        let di = d as usize;
        c.b.info[di].queued = false;
        if c.b.len() > limits.max_states {
            return Err(Exceeded::States);
        }
        rounds += 1;
        if debug() && rounds.is_multiple_of(10000) {
            eprintln!(
                "wda: round {rounds}: {} states, {edge_count} edges, {} weights; heap states {} MB, maps {} MB, weights {} MB, summaries {} MB; summaries {:?}",
                c.b.len(),
                weights.len(),
                c.b.heap >> 20,
                c.km.heap >> 20,
                weights.heap >> 20,
                tpl.heap_bytes() >> 20,
                tpl.counts()
            );
        }
        while dfa.default.len() < c.b.len() {
            dfa.default.push((EMPTY, DEAD));
            dfa.edges.push(Vec::new());
        }
        let groups: Vec<(u32, KMap)> = c.b.state(d).to_vec();
        // The default transition: countdowns move (a group's map moves whole), everything
        // else dies.
        let base = countdowns(tpl, &groups);
        // The (input, group) pairs of this state: charged before they are listed (a state
        // holding every keyword of a large set reads each at thousands of LR states).
        let pairs: usize = groups
            .iter()
            .map(|&(key, _)| {
                let (t, code) = (key >> 16, key & 0xFFFF);
                if code == INIT {
                    rel.by_terminal[t as usize].len()
                } else {
                    match tpl.split(code) {
                        (a, 0) => rel.by_nonterminal[a as usize].len(),
                        _ => 0,
                    }
                }
            })
            .sum();
        let scratch = (pairs.max(keyed.capacity()) + wanted.capacity()) * 8;
        if held + c.heap_bytes(tpl, weights) + Dfa::bytes_for(c.b.len(), edge_count) + scratch
            > limits.max_heap
        {
            return Err(Exceeded::Memory);
        }
        keyed.clear();
        for (gi, &(key, _)) in groups.iter().enumerate() {
            let (t, code) = (key >> 16, key & 0xFFFF);
            if code == INIT {
                for &x in &rel.by_terminal[t as usize] {
                    keyed.push((x as u64) << 32 | gi as u64);
                }
            } else {
                let (a, r) = tpl.split(code);
                if r == 0 {
                    for &x in &rel.by_nonterminal[a as usize] {
                        keyed.push((x as u64) << 32 | gi as u64);
                    }
                }
            }
        }
        keyed.sort_unstable();
        // The inputs possible here and not yet computed.
        wanted.clear();
        match &c.b.info[di].lasts {
            None => wanted.extend(
                keyed
                    .iter()
                    .map(|&p| (p >> 32) as u32)
                    .filter(|&x| rel.top[x as usize]),
            ),
            Some(lasts) => {
                for &q in lasts {
                    wanted.extend_from_slice(&rel.pred[q as usize]);
                }
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        let (_, default_target) = c.transition(tpl, weights, &groups, &base, &[], 0)?;
        dfa.default[di] = (EMPTY, default_target);
        if over(&c, tpl, weights, edge_count) {
            return Err(Exceeded::Memory);
        }
        // The default target is entered by every wanted input without an edge of its own;
        // giving it all of them is a superset, which is safe.
        let all_wanted = wanted.clone();
        let done = std::mem::take(&mut c.b.info[di].done);
        let mut new_done = done.clone();
        let mut edges = std::mem::take(&mut dfa.edges[di]);
        let mut at = 0;
        for &x in &wanted {
            if done.binary_search(&x).is_ok() {
                continue;
            }
            new_done.push(x);
            while at < keyed.len() && ((keyed[at] >> 32) as u32) < x {
                at += 1;
            }
            if at >= keyed.len() || (keyed[at] >> 32) as u32 != x {
                continue;
            }
            sel.clear();
            while at < keyed.len() && (keyed[at] >> 32) as u32 == x {
                sel.push(keyed[at] as u32 as usize);
                at += 1;
            }
            let (yes, target) = c.transition(tpl, weights, &groups, &base, &sel, x)?;
            if (yes, target) != (EMPTY, default_target) {
                edges.push((x, yes, target));
                edge_count += 1;
            }
            c.b.enter(target, &[x]);
            if over(&c, tpl, weights, edge_count) {
                return Err(Exceeded::Memory);
            }
        }
        new_done.sort_unstable();
        new_done.dedup();
        c.b.heap += (new_done.len() - done.len()) * 4;
        c.b.info[di].done = new_done;
        dfa.edges[di] = edges;
        c.b.enter(default_target, &all_wanted);
        if edge_count + c.b.len() > limits.max_edges {
            return Err(Exceeded::Edges);
        }
    }
    while dfa.default.len() < c.b.len() {
        dfa.default.push((EMPTY, DEAD));
        dfa.edges.push(Vec::new());
    }
    for e in &mut dfa.edges {
        e.sort_unstable();
    }
    Ok((dfa, starts))
}

/// The groups of `groups` (a state's) that only count down, whatever LR state is read: those
/// with pops left, each moved whole to one pop less.
pub(crate) fn countdowns(tpl: &Templates, groups: &[(u32, KMap)]) -> Vec<(u32, KMap)> {
    let mut base = Vec::new();
    for &(key, m) in groups {
        let code = key & 0xFFFF;
        if code != INIT && tpl.split(code).1 > 0 {
            base.push((key - 1, m));
        }
    }
    base
}

/// The work of the subset construction, shared by the eager construction ([`determinize`])
/// and the on-demand automaton (`lazy`): the states found so far and the memos of the
/// transitions computed.
pub(crate) struct Construction {
    pub(crate) km: KMaps,
    pub(crate) b: Builder,
    asm: Assembler,
    outs: Vec<Item>,
    /// Post-shift outcomes per `(group key, key set, x)`, each with the index in the map of
    /// the continuation it comes from.
    post_memo: AHashMap<(u32, u32, u32), Span>,
    post: Outcomes,
    yes_bits: Vec<u64>,
}

/// Where a span of [`Outcomes`] lies: `(chunk, from, to)`, the chunk's top bit set for a
/// wide one.
type Span = (u32, u32, u32);

/// The top bit of a wide chunk's number in a [`Span`].
const WIDE: u32 = 1 << 31;

/// The post-shift outcomes of the memoised groups, the largest table of the construction:
/// `(index in the map, outcome)` in two arrays (pairs would pad every entry to 16 bytes), in
/// chunks that never move (one growing array would copy itself at each doubling, and the
/// copies it leaves behind stay in the process's memory). Indices take 16 bits, as a map of
/// at most 2^16 continuations needs (in practice every map); a span from a larger map is a
/// wide chunk of its own.
#[derive(Default)]
struct Outcomes {
    chunks: Vec<(Vec<u16>, Vec<Item>)>,
    wide: Vec<(Vec<u32>, Vec<Item>)>,
    /// The span being collected.
    index: Vec<u32>,
    outcome: Vec<Item>,
    /// Heap bytes of the chunks.
    heap: usize,
}

/// The indices of a span of [`Outcomes`].
enum Indices<'a> {
    Narrow(&'a [u16]),
    Wide(&'a [u32]),
}

impl Indices<'_> {
    #[inline]
    fn at(&self, j: usize) -> u32 {
        match self {
            Indices::Narrow(v) => v[j] as u32,
            Indices::Wide(v) => v[j],
        }
    }
}

impl Outcomes {
    /// Entries per chunk (a longer span gets a chunk of its own length).
    const CHUNK: usize = 1 << 18;

    /// Starts a span (dropping what a span left unfinished, by an error, had collected).
    fn begin(&mut self) {
        self.index.clear();
        self.outcome.clear();
    }

    /// Adds the outcomes of the continuation at index `i` to the span being collected.
    fn add(&mut self, i: u32, outs: &[Item]) {
        self.index.resize(self.index.len() + outs.len(), i);
        self.outcome.extend_from_slice(outs);
    }

    /// Stores the span collected.
    fn finish(&mut self) -> Span {
        let len = self.outcome.len();
        if len == 0 {
            return (0, 0, 0);
        }
        // Indices ascend: the last is the largest.
        if self.index.last().is_some_and(|&i| i > u16::MAX as u32) {
            self.heap += len * 12;
            let index = std::mem::take(&mut self.index);
            let outcome = std::mem::take(&mut self.outcome);
            self.wide.push((index, outcome));
            return (WIDE | (self.wide.len() - 1) as u32, 0, len as u32);
        }
        let fits = self
            .chunks
            .last()
            .is_some_and(|(_, outcome)| outcome.capacity() - outcome.len() >= len);
        if !fits {
            let cap = Self::CHUNK.max(len);
            self.chunks
                .push((Vec::with_capacity(cap), Vec::with_capacity(cap)));
            self.heap += cap * 10;
        }
        let c = self.chunks.len() - 1;
        let (index, outcome) = &mut self.chunks[c];
        let from = outcome.len();
        index.extend(self.index.iter().map(|&i| i as u16));
        outcome.append(&mut self.outcome);
        (c as u32, from as u32, outcome.len() as u32)
    }

    /// The indices and outcomes of a span.
    fn get(&self, (c, from, to): Span) -> (Indices<'_>, &[Item]) {
        let range = from as usize..to as usize;
        if from == to {
            (Indices::Narrow(&[]), &[])
        } else if c & WIDE != 0 {
            let (index, outcome) = &self.wide[(c & !WIDE) as usize];
            (Indices::Wide(&index[range.clone()]), &outcome[range])
        } else {
            let (index, outcome) = &self.chunks[c as usize];
            (Indices::Narrow(&index[range.clone()]), &outcome[range])
        }
    }

    /// Approximate heap bytes: the chunks and the span being collected.
    fn heap_bytes(&self) -> usize {
        self.heap + self.index.capacity() * 4 + self.outcome.capacity() * 8
    }
}

impl Construction {
    /// An empty construction over `words`-word weights; state 0 is [`DEAD`].
    pub(crate) fn new(words: usize) -> Self {
        let mut b = Builder {
            groups: Vec::new(),
            start: vec![0],
            index: AHashMap::new(),
            heap: 0,
            info: Vec::new(),
            queue: VecDeque::new(),
        };
        b.intern(Vec::new());
        Construction {
            km: KMaps::new(),
            b,
            asm: Assembler::default(),
            outs: Vec::new(),
            post_memo: AHashMap::new(),
            post: Outcomes::default(),
            yes_bits: vec![0; words],
        }
    }

    /// The state of an initial item set (`items`: any order, duplicates allowed), the classes
    /// of `decided` left out.
    pub(crate) fn initial(
        &mut self,
        weights: &mut Weights,
        items: &[(Item, Weight)],
        decided: Weight,
    ) -> StateId {
        self.asm.clear();
        for &(it, w) in items {
            self.asm.single(it, w);
        }
        let groups = self.asm.finish(weights, &mut self.km, decided);
        self.b.intern(groups)
    }

    /// Approximate heap bytes of the construction and the summaries.
    pub(crate) fn heap_bytes(&self, tpl: &Templates, weights: &Weights) -> usize {
        self.b.heap_bytes()
            + self.km.heap
            + weights.heap
            + tpl.heap_bytes()
            + self.post.heap_bytes()
            + self.post_memo.capacity() * 25
            + self.outs.capacity() * 8
    }

    /// The transition of the state of `groups` reading LR state `x`: `base` (its
    /// [`countdowns`]) moves whole, and the groups `sel` (indices into `groups`, those that
    /// read `x`: an `INIT` group whose terminal has an action at `x`, an exit with no pops
    /// left whose nonterminal has a goto from `x`) take their summaries. Returns the output
    /// (the classes decided) and the target state.
    pub(crate) fn transition(
        &mut self,
        tpl: &mut Templates,
        weights: &mut Weights,
        groups: &[(u32, KMap)],
        base: &[(u32, KMap)],
        sel: &[usize],
        x: u32,
    ) -> Result<(Weight, StateId), Exceeded> {
        let Construction {
            km,
            b,
            asm,
            outs,
            post_memo,
            post,
            yes_bits,
        } = self;
        asm.clear();
        for &(key, m) in base {
            asm.whole(key, m);
        }
        yes_bits.fill(0);
        // The weights unioned into `yes_bits` so far (the last, to skip its repeats).
        let mut last_yes = EMPTY;
        for &gi in sel {
            let (key, m) = groups[gi];
            let (t, code) = (key >> 16, key & 0xFFFF);
            // A stand-in read as its regex from the state where its control starts (`x`, or
            // the goto an exit lands in) is the regex there and in every state its run
            // reaches: the group shares the regex's summaries, memos and items.
            let start = match code {
                INIT => Some(x),
                _ => tpl.goto(x, tpl.split(code).0),
            };
            let t = start.map_or(t, |y| tpl.reading(t, y));
            let key = (t << 16) | code;
            // The continuation-independent part moves the whole map; only where the
            // terminal is shifted does each continuation do its own work.
            let shifts = if code == INIT {
                let top = tpl.top(t, x)?;
                for &c in top.codes.iter() {
                    asm.whole((t << 16) | tpl.canonical(t, c), m);
                }
                top.shifts().then_some(Shifted::Top(top))
            } else {
                let (a, _) = tpl.split(code);
                debug_assert!(tpl
                    .tables()
                    .goto(
                        LrState::new(x as usize).expect("LR state ids fit"),
                        NonterminalId::from_usize(a as usize)
                    )
                    .is_some());
                let pre = tpl.pre(t, a, x)?;
                for &c in tpl.pre_codes(pre) {
                    asm.whole((t << 16) | tpl.canonical(t, c), m);
                }
                (!tpl.pre_shift_at(pre).is_empty()).then_some(Shifted::Exit(pre))
            };
            let Some(shifts) = shifts else { continue };
            // Post-shift outcomes per continuation, memoised for the whole key set (maps
            // with the same continuations recur with other weights).
            let memo_key = (key, km.kset(m), x);
            let span = match post_memo.get(&memo_key) {
                Some(&span) => span,
                None => {
                    post.begin();
                    for i in 0..km.get(m).len() {
                        let k = km.get(m)[i].0;
                        outs.clear();
                        match &shifts {
                            Shifted::Top(top) => tpl.shifted(top, t, k, x, outs)?,
                            Shifted::Exit(pre) => tpl.post(*pre, t, k, x, outs)?,
                        }
                        for o in outs.iter_mut() {
                            *o = tpl.canonical_item(*o);
                        }
                        post.add(i as u32, outs);
                    }
                    let span = post.finish();
                    post_memo.insert(memo_key, span);
                    span
                }
            };
            let entries = km.get(m);
            let (index, outcome) = post.get(span);
            for (j, &o) in outcome.iter().enumerate() {
                let i = index.at(j);
                let w = entries[i as usize].1;
                if o == SUCC {
                    if w != last_yes {
                        last_yes = w;
                        let (lo, words) = weights.get_nonzero(w);
                        for (a, b) in yes_bits[lo..].iter_mut().zip(words) {
                            *a |= b;
                        }
                    }
                } else {
                    asm.single(o, w);
                }
            }
        }
        let yes = if last_yes != EMPTY {
            weights.intern_words(yes_bits)
        } else {
            EMPTY
        };
        let g = asm.finish(weights, km, yes);
        Ok((yes, b.intern(g)))
    }
}

/// Where a group's terminal is shifted: at the top (for `INIT` groups) or at states pushed by
/// the pre-shift run of an exit.
enum Shifted {
    Top(Top),
    Exit(Pre),
}

/// Collects one target state: whole maps and single `(κ, weight)` entries per group key,
/// merged, with the decided classes removed.
#[derive(Default)]
struct Assembler {
    wholes: Vec<(u32, KMap)>,
    /// `(item, weight)`: an item's top half is its group key.
    singles: Vec<(Item, Weight)>,
    pairs: Vec<(Cont, Weight)>,
}

impl Assembler {
    fn clear(&mut self) {
        self.wholes.clear();
        self.singles.clear();
    }

    fn whole(&mut self, key: u32, m: KMap) {
        self.wholes.push((key, m));
    }

    fn single(&mut self, it: Item, w: Weight) {
        self.singles.push((it, w));
    }

    /// The state: per key (sorted), the union of its maps and entries minus `decided`.
    fn finish(
        &mut self,
        weights: &mut Weights,
        km: &mut KMaps,
        decided: Weight,
    ) -> Vec<(u32, KMap)> {
        self.wholes.sort_unstable();
        self.wholes.dedup();
        // Sorted whole, by key, then continuation, then weight: each key's pairs are then in
        // the order `KMaps::intern_pairs` sorts them to (its sort only checks), and an item
        // compares as one word.
        self.singles.sort_unstable();
        let mut out: Vec<(u32, KMap)> = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < self.wholes.len() || j < self.singles.len() {
            let key = match (self.wholes.get(i), self.singles.get(j)) {
                (Some(a), Some(b)) => a.0.min((b.0 >> 32) as u32),
                (Some(a), None) => a.0,
                (None, Some(b)) => (b.0 >> 32) as u32,
                (None, None) => unreachable!("the loop runs while entries are left"),
            };
            let mut m: Option<KMap> = None;
            if j < self.singles.len() && (self.singles[j].0 >> 32) as u32 == key {
                self.pairs.clear();
                while j < self.singles.len() && (self.singles[j].0 >> 32) as u32 == key {
                    self.pairs
                        .push((self.singles[j].0 as Cont, self.singles[j].1));
                    j += 1;
                }
                m = km.intern_pairs(weights, &mut self.pairs);
            }
            while i < self.wholes.len() && self.wholes[i].0 == key {
                let w = self.wholes[i].1;
                m = Some(match m {
                    None => w,
                    Some(m) => km.union(weights, m, w),
                });
                i += 1;
            }
            if let Some(m) = m.and_then(|m| km.minus(weights, m, decided)) {
                out.push((key, m));
            }
        }
        out
    }
}

/// The states of the construction: group lists stored once, in an arena, found again by hash.
pub(crate) struct Builder {
    groups: Vec<(u32, KMap)>,
    /// State `s` is `groups[start[s]..start[s + 1]]`.
    start: Vec<usize>,
    index: AHashMap<u64, SmallVec<[StateId; 1]>>,
    heap: usize,
    info: Vec<Info>,
    queue: VecDeque<StateId>,
}

impl Builder {
    pub(crate) fn len(&self) -> usize {
        self.start.len() - 1
    }

    /// Approximate heap bytes: the group arena, the per-state tables and lists, the index.
    fn heap_bytes(&self) -> usize {
        self.heap
            + self.groups.capacity() * 8
            + self.start.capacity() * 8
            + self.info.capacity() * std::mem::size_of::<Info>()
            + self.index.capacity() * (8 + std::mem::size_of::<SmallVec<[StateId; 1]>>() + 1)
            + self.queue.capacity() * 4
    }

    pub(crate) fn state(&self, s: StateId) -> &[(u32, KMap)] {
        &self.groups[self.start[s as usize]..self.start[s as usize + 1]]
    }

    fn intern(&mut self, state: Vec<(u32, KMap)>) -> StateId {
        let mut h: u64 = 0x1234_5678_9abc_def1;
        for &(k, m) in &state {
            h = (h ^ ((k as u64) << 32 | m as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            h ^= h >> 29;
        }
        if let Some(ids) = self.index.get(&h) {
            for &id in ids {
                if self.state(id) == &state[..] {
                    return id;
                }
            }
        }
        let s = self.len() as StateId;
        self.groups.extend_from_slice(&state);
        self.start.push(self.groups.len());
        self.index.entry(h).or_default().push(s);
        self.info.push(Info {
            lasts: Some(Vec::new()),
            ..Info::default()
        });
        s
    }

    fn enqueue(&mut self, s: StateId) {
        if s != DEAD && !self.info[s as usize].queued {
            self.info[s as usize].queued = true;
            self.queue.push_back(s);
        }
    }

    /// Records that `s` can be entered by reading each of `xs`; (re)queues it if that makes
    /// new inputs possible there.
    fn enter(&mut self, s: StateId, xs: &[u32]) {
        if s == DEAD {
            return;
        }
        let info = &mut self.info[s as usize];
        let Some(lasts) = &mut info.lasts else {
            return;
        };
        let before = lasts.len();
        lasts.extend_from_slice(xs);
        lasts.sort_unstable();
        lasts.dedup();
        if lasts.len() != before {
            self.heap += (lasts.len() - before) * 4;
            self.enqueue(s);
        }
    }
}

/// Whether `MUNCH_WDA_DEBUG` asks for build progress on stderr.
pub(crate) fn debug() -> bool {
    std::env::var_os("MUNCH_WDA_DEBUG").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_keep_narrow_and_wide_spans() {
        let mut post = Outcomes::default();
        let mut spans = Vec::new();
        let cases: [&[(u32, &[Item])]; 4] = [
            &[(0, &[7]), (3, &[8, 9])],
            &[],
            &[(2, &[5]), (70_000, &[6])],
            &[(65_535, &[SUCC])],
        ];
        for case in cases {
            post.begin();
            for &(i, outs) in case {
                post.add(i, outs);
            }
            spans.push(post.finish());
        }
        for (case, &span) in cases.iter().zip(&spans) {
            let (index, outcome) = post.get(span);
            let got: Vec<(u32, Item)> = (0..outcome.len())
                .map(|j| (index.at(j), outcome[j]))
                .collect();
            let want: Vec<(u32, Item)> = case
                .iter()
                .flat_map(|&(i, outs)| outs.iter().map(move |&o| (i, o)))
                .collect();
            assert_eq!(got, want);
        }
        assert!(spans[2].0 & WIDE != 0 && spans[3].0 & WIDE == 0);
    }
}
