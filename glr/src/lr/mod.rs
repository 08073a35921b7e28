//! The LALR(1) automaton that keeps every conflict, as compact tables for the GLR parser.
//!
//! # Principal types
//!
//! - [`LrTables`]: built from a normalised [`Cfg`] by [`LrTables::build`]: LR(0) item sets
//!   ([`lr0`]), LALR(1) lookaheads by DeRemer–Pennello with right-nulled reductions ([`lalr`]).
//!   Per state, its shifts by terminal, its reductions each with a shared lookahead set, and a
//!   sorted goto list; [`LrTables::actions_at`] answers per (state, lookahead) as
//!   [`Actions`]. Immutable, `Send + Sync`.
//! - [`Action`]: shift, (right-nulled) reduce, accept. A state may have several actions on one
//!   lookahead: that is a conflict, and the GLR parser follows all of them.
//! - [`Quotient`]: the tables with the states and terminals no run of the parser tells apart
//!   merged, for the maskers (a keyword set's thousands of terminals become one);
//!   [`ClassTables`] is what a masker holds: a parser's quotient, or its own tables when
//!   nothing merges.
//! - [`Conflict`]: a conflict of the plain LALR(1) table (right-nulled reductions are left out:
//!   they duplicate ε-reductions by design), with the competing items; rendered by
//!   [`LrTables::render_conflict`].
//!
//! The grammar is augmented with `S' -> S $`; the state holding `S' -> S · $` accepts on `$`
//! (no state is built after `$`).

mod conflict;
mod lalr;
mod lr0;
mod quotient;

use std::fmt;

use munch_lexer::dfa::StandIn;
use munch_lexer::TerminalId;
use munch_vocab::bits;

use crate::cfg::analysis::Analysis;
use crate::cfg::{Cfg, NonterminalId};

pub use conflict::{Conflict, LrItem};
pub use quotient::{ClassTables, Quotient, RegexReadings};

munch_vocab::define_id!(
    /// A state of the LR automaton; state 0 is the start.
    LrState
);

impl LrState {
    /// The start state.
    pub const START: LrState = LrState(0);
}

/// What the parser may see next: a terminal or the end of input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lookahead {
    /// A terminal.
    Terminal(TerminalId),
    /// The end of input (`$`).
    Eof,
}

/// One parser action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// Shift the lookahead and go to the state.
    Shift(LrState),
    /// Pop `len` symbols and go to `goto(top, lhs)`. `len` is below the production's length for
    /// a right-nulled reduction (the rest of the right-hand side derives ε).
    Reduce {
        /// The nonterminal reduced to.
        lhs: NonterminalId,
        /// Index into [`Cfg::productions`].
        production: u32,
        /// Symbols popped.
        len: u32,
    },
    /// Accept (only on `$`).
    Accept,
}

/// Budgets for [`LrTables::build`].
#[derive(Clone, Debug)]
pub struct LrConfig {
    /// The most LR(0) states.
    pub max_states: usize,
    /// The most entries the tables may store ([`LrTables::stored_len`]: shifts, gotos, accepts,
    /// reductions, and one per 64 lookaheads of each distinct reduction lookahead set), checked
    /// before they are built.
    pub max_actions: usize,
    /// Resolve every shift/reduce conflict by shifting, as Lark's LALR parser does: a
    /// reduction loses the lookaheads its state shifts. Off: the GLR parser keeps both.
    pub prefer_shift: bool,
}

impl Default for LrConfig {
    fn default() -> Self {
        Self {
            max_states: 100_000,
            max_actions: 8_000_000,
            prefer_shift: false,
        }
    }
}

/// Why tables could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LrBuildError {
    kind: LrBuildErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum LrBuildErrorKind {
    TooManyStates { limit: usize },
    TooManyActions { limit: usize },
}

impl LrBuildError {
    pub(crate) fn too_many_states(limit: usize) -> Self {
        Self {
            kind: LrBuildErrorKind::TooManyStates { limit },
        }
    }

    pub(crate) fn too_many_actions(limit: usize) -> Self {
        Self {
            kind: LrBuildErrorKind::TooManyActions { limit },
        }
    }

    /// The state budget that was exceeded, if that is the reason.
    pub fn state_limit(&self) -> Option<usize> {
        match self.kind {
            LrBuildErrorKind::TooManyStates { limit } => Some(limit),
            LrBuildErrorKind::TooManyActions { .. } => None,
        }
    }

    /// The action budget that was exceeded, if that is the reason.
    pub fn action_limit(&self) -> Option<usize> {
        match self.kind {
            LrBuildErrorKind::TooManyActions { limit } => Some(limit),
            LrBuildErrorKind::TooManyStates { .. } => None,
        }
    }
}

impl fmt::Display for LrBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            LrBuildErrorKind::TooManyStates { limit } => write!(
                f,
                "the LR automaton needs more than {limit} states (budget `max_lr_states`)"
            ),
            LrBuildErrorKind::TooManyActions { limit } => write!(
                f,
                "the LR tables need more than {limit} actions (budget `max_lr_actions`)"
            ),
        }
    }
}

impl std::error::Error for LrBuildError {}

/// LALR(1) tables with every conflict kept, and right-nulled reductions for RNGLR.
///
/// A state's actions on a lookahead are at most one shift (the LR(0) automaton is
/// deterministic), its reductions whose lookahead set holds the lookahead, and accept on `$`.
/// Shifts are stored per (state, terminal); a reduction is stored once per state, with the id
/// of its lookahead set, and each distinct set once (a bitset over lookaheads). Sharing the
/// sets keeps the tables proportional to the automaton, not to states × terminals: in a
/// keyword set `("k0" | … | "k7999")*` every state after a keyword reduces on the same 8,001
/// lookaheads. Tables small enough (most grammars: up to 4 M (state, lookahead) pairs and 1 M
/// actions) also keep each pair's actions expanded in one slice, so that the lookup on the
/// commit's and the maskers' hot paths is an index and a slice.
#[derive(Clone, Debug)]
pub struct LrTables {
    cfg: Cfg,
    terminal_len: u32,
    /// Per state, `shifts[shift_start[s]..shift_start[s + 1]]`, sorted by terminal.
    shift_start: Vec<u32>,
    shift_keys: Vec<u32>,
    shifts: Vec<Action>,
    /// `dense[s * terminal_len + t]`: the index in `shifts` of state `s`'s shift on `t`, or
    /// `NO_SHIFT`, when the table is small enough to index directly (else empty, and lookups
    /// search the sorted row).
    dense: Vec<u32>,
    /// Per state, `reduces[reduce_start[s]..reduce_start[s + 1]]`, sorted, with the lookahead
    /// set of each in `reduce_sets`.
    reduce_start: Vec<u32>,
    reduces: Vec<Action>,
    reduce_sets: Vec<u32>,
    /// Lookahead set `i` is `lookahead_sets[i * set_words..(i + 1) * set_words]`.
    lookahead_sets: Vec<u64>,
    set_words: usize,
    /// Whether each state accepts on `$`.
    accepting: Vec<bool>,
    /// For tables small enough ([`MAX_DENSE_ENTRIES`], [`MAX_EXPANDED_ACTIONS`]): every
    /// state's actions on every lookahead, `expanded[lo..hi]` with `(lo, hi) =
    /// expanded_index[s * (terminal_len + 1) + k]`, so that a lookup is one slice (the
    /// commit's and the maskers' hottest operation). Empty otherwise.
    expanded: Vec<Action>,
    expanded_index: Vec<(u32, u32)>,
    /// With `expanded`, each state's row `expanded[expanded_start[s]..expanded_start[s + 1]]`
    /// is sorted by lookahead, with the lookaheads in `expanded_keys`.
    expanded_start: Vec<u32>,
    expanded_keys: Vec<u32>,
    /// Per state, `gotos[goto_start[s]..goto_start[s + 1]]`, sorted by nonterminal.
    goto_start: Vec<u32>,
    gotos: Vec<(u32, LrState)>,
    /// Kernel items per state and the symbol path to each state, for diagnostics.
    kernels: Vec<Vec<LrItem>>,
    /// Found the first time they are asked for (diagnostics only: on a grammar with thousands
    /// of conflicts, each with its shortest prefix, they cost more than the tables).
    conflicts: std::sync::OnceLock<Vec<Conflict>>,
}

/// Takes from each reduction's lookaheads the terminals its state shifts (a reduction left with
/// none is dropped): every shift/reduce conflict resolved by shifting, as Lark's LALR parser
/// resolves it ([`LrConfig::prefer_shift`]). Reduce/reduce conflicts stay.
fn prefer_shift(automaton: &lr0::Lr0, g: &lr0::Grammar0, found: &mut lalr::Reductions) {
    let words = found.words;
    let mut shifted = vec![0u64; words];
    let mut index = found.set_index();
    let mut kept = Vec::with_capacity(found.reduces.len());
    let mut reduces = std::mem::take(&mut found.reduces);
    reduces.sort_by_key(|r| r.state);
    let mut at = usize::MAX;
    for r in reduces {
        if r.state as usize != at {
            at = r.state as usize;
            shifted.fill(0);
            for &(sym, _) in &automaton.states[at].transitions {
                if !g.is_nonterminal(sym) {
                    shifted[(sym / 64) as usize] |= 1 << (sym % 64);
                }
            }
        }
        let old = &found.sets[r.set as usize * words..(r.set as usize + 1) * words];
        if old.iter().zip(&shifted).all(|(o, s)| o & s == 0) {
            kept.push(r);
            continue;
        }
        let left: Vec<u64> = old.iter().zip(&shifted).map(|(o, s)| o & !s).collect();
        if left.iter().all(|&w| w == 0) {
            continue;
        }
        let set = found.intern_set(&mut index, left);
        kept.push(lalr::Reduce { set, ..r });
    }
    found.reduces = kept;
}

/// Gives each stand-in, in every state, the shift and the reductions of its literal where the
/// state has an action on the literal, else those of its regex (see
/// [`LrTables::build_with_stand_ins`]). A reduction's lookahead set is shared between states,
/// so a changed set is interned as a new one.
fn add_stand_ins(automaton: &mut lr0::Lr0, found: &mut lalr::Reductions, stand_ins: &[StandIn]) {
    if stand_ins.is_empty() {
        return;
    }
    let words = found.words;
    let has = |sets: &[u64], set: u32, t: u32| {
        sets[set as usize * words + (t / 64) as usize] >> (t % 64) & 1 == 1
    };
    let mut by_state: Vec<Vec<usize>> = vec![Vec::new(); automaton.states.len()];
    for (i, r) in found.reduces.iter().enumerate() {
        by_state[r.state as usize].push(i);
    }
    // Per reduction: the stand-ins added to its set; per state: the shifts added.
    let mut added: Vec<Vec<u32>> = vec![Vec::new(); found.reduces.len()];
    for (s, st) in automaton.states.iter_mut().enumerate() {
        let shift_on = |t: u32| {
            st.transitions
                .binary_search_by_key(&t, |&(sym, _)| sym)
                .ok()
                .map(|k| st.transitions[k].1)
        };
        let reduces_on = |t: u32| {
            by_state[s]
                .iter()
                .any(|&i| has(&found.sets, found.reduces[i].set, t))
        };
        let mut shifts = Vec::new();
        for si in stand_ins {
            let literal = si.literal.as_u32();
            let from = if shift_on(literal).is_some() || reduces_on(literal) {
                literal
            } else {
                si.regex.as_u32()
            };
            if let Some(to) = shift_on(from) {
                shifts.push((si.terminal.as_u32(), to));
            }
            for &i in &by_state[s] {
                if has(&found.sets, found.reduces[i].set, from) {
                    added[i].push(si.terminal.as_u32());
                }
            }
        }
        if !shifts.is_empty() {
            st.transitions.extend(shifts);
            st.transitions.sort_unstable();
        }
    }
    let mut index = found.set_index();
    let mut reduces = std::mem::take(&mut found.reduces);
    for (r, add) in reduces.iter_mut().zip(&added) {
        if add.is_empty() {
            continue;
        }
        let at = r.set as usize * words;
        let mut set = found.sets[at..at + words].to_vec();
        for &t in add {
            set[(t / 64) as usize] |= 1 << (t % 64);
        }
        r.set = found.intern_set(&mut index, set);
    }
    found.reduces = reduces;
}

/// No shift, in [`LrTables::dense`].
const NO_SHIFT: u32 = u32::MAX;

/// The accept action, lent out by [`Actions`].
static ACCEPT: Action = Action::Accept;

impl LrTables {
    /// Builds the tables of `cfg`.
    pub fn build(cfg: &Cfg, config: &LrConfig) -> Result<LrTables, LrBuildError> {
        LrTables::build_with_stand_ins(cfg, config, &[])
    }

    /// [`LrTables::build`], where each stand-in (a terminal of `cfg` that no production holds)
    /// takes, in every state, the actions of its literal where the state has one on the
    /// literal, and else its regex's: how Lark's contextual lexer reads a keyword that the
    /// parser cannot take as a name.
    pub fn build_with_stand_ins(
        cfg: &Cfg,
        config: &LrConfig,
        stand_ins: &[StandIn],
    ) -> Result<LrTables, LrBuildError> {
        let analysis = Analysis::new(cfg);
        let g = lr0::Grammar0::new(cfg, |n| analysis.is_nullable(NonterminalId::from_usize(n)));
        let automaton = lr0::Lr0::build(&g, config.max_states)?;
        let others: usize = automaton
            .states
            .iter()
            .map(|st| st.transitions.len() + usize::from(st.accepting))
            .sum();
        let reduce_budget = config
            .max_actions
            .checked_sub(others)
            .ok_or_else(|| LrBuildError::too_many_actions(config.max_actions))?;
        let mut found = lalr::reductions(&g, &automaton, reduce_budget)
            .ok_or_else(|| LrBuildError::too_many_actions(config.max_actions))?;
        let mut automaton = automaton;
        add_stand_ins(&mut automaton, &mut found, stand_ins);
        if config.prefer_shift {
            prefer_shift(&automaton, &g, &mut found);
            if others + found.reduces.len() + found.sets.len() / found.words.max(1)
                > config.max_actions
            {
                return Err(LrBuildError::too_many_actions(config.max_actions));
            }
        }

        let state_len = automaton.states.len();
        let mut shift_start = Vec::with_capacity(state_len + 1);
        let mut shift_keys = Vec::new();
        let mut shifts = Vec::new();
        let mut goto_start = Vec::with_capacity(state_len + 1);
        let mut gotos = Vec::new();
        let mut accepting = Vec::with_capacity(state_len);
        for st in &automaton.states {
            goto_start.push(gotos.len() as u32);
            shift_start.push(shifts.len() as u32);
            // Transitions are sorted by symbol, terminals first.
            for &(sym, to) in &st.transitions {
                if g.is_nonterminal(sym) {
                    gotos.push((sym - g.nt_base, LrState(to)));
                } else {
                    shift_keys.push(sym);
                    shifts.push(Action::Shift(LrState(to)));
                }
            }
            accepting.push(st.accepting);
        }
        goto_start.push(gotos.len() as u32);
        shift_start.push(shifts.len() as u32);

        let mut per_state: Vec<Vec<(Action, u32)>> = vec![Vec::new(); state_len];
        for r in &found.reduces {
            per_state[r.state as usize].push((
                Action::Reduce {
                    lhs: cfg.productions()[r.prod as usize].lhs,
                    production: r.prod,
                    len: r.len,
                },
                r.set,
            ));
        }
        let mut reduce_start = Vec::with_capacity(state_len + 1);
        let mut reduces = Vec::with_capacity(found.reduces.len());
        let mut reduce_sets = Vec::with_capacity(found.reduces.len());
        for list in &mut per_state {
            list.sort_unstable();
            reduce_start.push(reduces.len() as u32);
            for &(a, set) in list.iter() {
                reduces.push(a);
                reduce_sets.push(set);
            }
        }
        reduce_start.push(reduces.len() as u32);
        let dense = dense_index(&shift_start, &shift_keys, g.terminal_len);
        let stored_compact = others + reduces.len() + found.sets.len();

        let kernels = automaton
            .states
            .iter()
            .map(|st| {
                st.kernel
                    .iter()
                    .map(|i| LrItem {
                        production: i.prod as usize,
                        dot: i.dot as usize,
                    })
                    .collect()
            })
            .collect();
        let mut tables = LrTables {
            cfg: cfg.clone(),
            terminal_len: g.terminal_len,
            shift_start,
            shift_keys,
            shifts,
            dense,
            reduce_start,
            reduces,
            reduce_sets,
            lookahead_sets: found.sets,
            set_words: found.words,
            accepting,
            expanded: Vec::new(),
            expanded_index: Vec::new(),
            expanded_start: Vec::new(),
            expanded_keys: Vec::new(),
            goto_start,
            gotos,
            kernels,
            conflicts: std::sync::OnceLock::new(),
        };
        tables.expand(config.max_actions.saturating_sub(stored_compact));
        Ok(tables)
    }

    /// Builds the expanded action index when it has at most [`MAX_DENSE_ENTRIES`] entries and
    /// at most [`MAX_EXPANDED_ACTIONS`] and `budget` actions.
    fn expand(&mut self, budget: usize) {
        let width = self.terminal_len as usize + 1;
        if self.state_len().saturating_mul(width) > MAX_DENSE_ENTRIES {
            return;
        }
        let mut count = self.shifts.len() + self.accepting.iter().filter(|&&a| a).count();
        for s in 0..self.state_len() {
            for (_, set) in self.state_reductions(LrState(s as u32)) {
                count += set.len();
            }
        }
        if count > MAX_EXPANDED_ACTIONS.min(budget) {
            return;
        }
        let mut expanded = Vec::with_capacity(count);
        let mut keys = Vec::with_capacity(count);
        let mut start = Vec::with_capacity(self.state_len() + 1);
        let mut index = vec![(0u32, 0u32); self.state_len() * width];
        for s in 0..self.state_len() {
            let state = LrState(s as u32);
            start.push(expanded.len() as u32);
            for k in self.state_lookaheads(state) {
                let lo = expanded.len() as u32;
                expanded.extend(self.actions_at(state, k).copied());
                keys.resize(expanded.len(), k);
                index[s * width + k as usize] = (lo, expanded.len() as u32);
            }
        }
        start.push(expanded.len() as u32);
        self.expanded = expanded;
        self.expanded_index = index;
        self.expanded_start = start;
        self.expanded_keys = keys;
    }

    /// The CFG the tables were built from.
    pub fn cfg(&self) -> &Cfg {
        &self.cfg
    }

    /// The number of LR states.
    pub fn state_len(&self) -> usize {
        self.accepting.len()
    }

    /// The lookahead index of `$` in [`LrTables::actions_at`]: one past the last terminal.
    pub fn eof_index(&self) -> u32 {
        self.terminal_len
    }

    /// The actions of `state` on `lookahead` (empty: error).
    pub fn actions(&self, state: LrState, lookahead: Lookahead) -> Actions<'_> {
        let k = match lookahead {
            Lookahead::Terminal(t) => t.as_u32(),
            Lookahead::Eof => self.terminal_len,
        };
        self.actions_at(state, k)
    }

    /// The actions of `state` on lookahead index `k` (a terminal id, or
    /// [`LrTables::eof_index`]): the shift, then the reductions, then accept, each in
    /// [`Action`]'s order.
    #[inline]
    pub fn actions_at(&self, state: LrState, k: u32) -> Actions<'_> {
        let s = state.as_usize();
        let width = self.terminal_len as usize + 1;
        if !self.expanded_index.is_empty() && (k as usize) < width {
            let (lo, hi) = self.expanded_index[s * width + k as usize];
            return Actions {
                explicit: &self.expanded[lo as usize..hi as usize],
                shift: None,
                reduces: &[],
                reduce_sets: &[],
                tables: self,
                k,
                accept: false,
            };
        }
        // An index past the end of input has no actions (no set holds it).
        let (lo, hi) = if (k as usize) < width {
            (
                self.reduce_start[s] as usize,
                self.reduce_start[s + 1] as usize,
            )
        } else {
            (0, 0)
        };
        Actions {
            explicit: &[],
            shift: self.shift_at(s, k),
            reduces: &self.reduces[lo..hi],
            reduce_sets: &self.reduce_sets[lo..hi],
            tables: self,
            k,
            accept: k == self.terminal_len && self.accepting[s],
        }
    }

    #[inline]
    fn shift_at(&self, s: usize, k: u32) -> Option<&Action> {
        if k >= self.terminal_len {
            return None;
        }
        if !self.dense.is_empty() {
            let i = self.dense[s * self.terminal_len as usize + k as usize];
            return (i != NO_SHIFT).then(|| &self.shifts[i as usize]);
        }
        let lo = self.shift_start[s] as usize;
        let hi = self.shift_start[s + 1] as usize;
        let i = self.shift_keys[lo..hi].binary_search(&k).ok()?;
        Some(&self.shifts[lo + i])
    }

    /// Whether lookahead set `set` holds lookahead index `k`.
    #[inline]
    fn set_has(&self, set: u32, k: u32) -> bool {
        let set = set as usize * self.set_words;
        bits::contains(&self.lookahead_sets[set..set + self.set_words], k as usize)
    }

    /// The number of entries of the direct shift index, 0 when lookups search instead.
    pub fn dense_len(&self) -> usize {
        self.dense.len()
    }

    /// What the tables store, in the units of [`LrConfig::max_actions`]: shifts, gotos,
    /// accepts, reductions (one per state and production, whatever its lookaheads) and the
    /// 64-bit words of the distinct lookahead sets.
    pub fn stored_len(&self) -> usize {
        self.shifts.len()
            + self.gotos.len()
            + self.accepting.iter().filter(|&&a| a).count()
            + self.reduces.len()
            + self.lookahead_sets.len()
            + self.expanded.len()
    }

    /// Heap bytes of the tables (the grammar they were built from and the diagnostics left
    /// out).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        (self.shift_start.capacity()
            + self.shift_keys.capacity()
            + self.dense.capacity()
            + self.reduce_start.capacity()
            + self.reduce_sets.capacity()
            + self.expanded_start.capacity()
            + self.expanded_keys.capacity()
            + self.goto_start.capacity())
            * 4
            + (self.shifts.capacity() + self.reduces.capacity() + self.expanded.capacity())
                * size_of::<Action>()
            + self.lookahead_sets.capacity() * 8
            + self.accepting.capacity()
            + self.expanded_index.capacity() * 8
            + self.gotos.capacity() * size_of::<(u32, LrState)>()
    }

    /// The number of distinct reduction lookahead sets.
    pub fn lookahead_set_len(&self) -> usize {
        self.lookahead_sets.len() / self.set_words
    }

    /// The lookahead indices on which `state` has some action, ascending, each once.
    pub fn state_lookaheads(&self, state: LrState) -> Lookaheads<'_> {
        let s = state.as_usize();
        if !self.expanded_start.is_empty() {
            let (lo, hi) = (self.expanded_start[s], self.expanded_start[s + 1]);
            return Lookaheads {
                tables: self,
                keys: &self.expanded_keys[lo as usize..hi as usize],
                shift_keys: &[],
                reduce_sets: &[],
                accept: false,
                next: 0,
            };
        }
        self.compact_lookaheads(s)
    }

    /// [`LrTables::state_lookaheads`] from the shared form.
    fn compact_lookaheads(&self, s: usize) -> Lookaheads<'_> {
        let lo = self.shift_start[s] as usize;
        let hi = self.shift_start[s + 1] as usize;
        let rlo = self.reduce_start[s] as usize;
        let rhi = self.reduce_start[s + 1] as usize;
        Lookaheads {
            tables: self,
            keys: &[],
            shift_keys: &self.shift_keys[lo..hi],
            reduce_sets: &self.reduce_sets[rlo..rhi],
            accept: self.accepting[s],
            next: 0,
        }
    }

    /// ORs into `out` the lookaheads on which `state` has some action, as a bitset (bit `k % 64`
    /// of word `k / 64` for lookahead index `k`; `out` holds at least
    /// `(eof_index() + 1).div_ceil(64)` words): its shifts, its reductions' lookahead sets, and
    /// `$` if it accepts. Costs the state's shifts plus one pass over the words of each
    /// reduction's set, however many lookaheads they hold (where
    /// [`LrTables::state_lookaheads`] visits each).
    pub fn add_state_lookaheads(&self, state: LrState, out: &mut [u64]) {
        let s = state.as_usize();
        for &k in &self.shift_keys[self.shift_start[s] as usize..self.shift_start[s + 1] as usize] {
            bits::insert(out, k as usize);
        }
        let (lo, hi) = (
            self.reduce_start[s] as usize,
            self.reduce_start[s + 1] as usize,
        );
        for &set in &self.reduce_sets[lo..hi] {
            let words = &self.lookahead_sets
                [set as usize * self.set_words..(set as usize + 1) * self.set_words];
            bits::union_with(out, words);
        }
        if self.accepting[s] {
            bits::insert(out, self.terminal_len as usize);
        }
    }

    /// All `(lookahead index, action)` pairs of `state`, sorted by lookahead, then as in
    /// [`LrTables::actions_at`]. A reduction appears once per lookahead of its set: callers
    /// that can work on whole sets use [`LrTables::state_reductions`].
    pub fn state_actions(&self, state: LrState) -> impl Iterator<Item = (u32, Action)> + '_ {
        let s = state.as_usize();
        let (expanded, compact) = if self.expanded_start.is_empty() {
            ((0, 0), Some(self.compact_lookaheads(s)))
        } else {
            let (lo, hi) = (self.expanded_start[s], self.expanded_start[s + 1]);
            ((lo as usize, hi as usize), None)
        };
        let (lo, hi) = expanded;
        self.expanded_keys[lo..hi]
            .iter()
            .copied()
            .zip(self.expanded[lo..hi].iter().copied())
            .chain(
                compact
                    .into_iter()
                    .flatten()
                    .flat_map(move |k| self.actions_at(state, k).map(move |&a| (k, a))),
            )
    }

    /// The shifts of `state`: `(terminal index, action)`, sorted by terminal.
    pub fn state_shifts(&self, state: LrState) -> impl Iterator<Item = (u32, Action)> + '_ {
        let lo = self.shift_start[state.as_usize()] as usize;
        let hi = self.shift_start[state.as_usize() + 1] as usize;
        self.shift_keys[lo..hi]
            .iter()
            .copied()
            .zip(self.shifts[lo..hi].iter().copied())
    }

    /// The reductions of `state`, each with its lookahead set.
    pub fn state_reductions(
        &self,
        state: LrState,
    ) -> impl Iterator<Item = (Action, LookaheadSet<'_>)> + '_ {
        let lo = self.reduce_start[state.as_usize()] as usize;
        let hi = self.reduce_start[state.as_usize() + 1] as usize;
        self.reduces[lo..hi]
            .iter()
            .zip(&self.reduce_sets[lo..hi])
            .map(move |(&a, &set)| {
                let w = set as usize * self.set_words;
                (
                    a,
                    LookaheadSet {
                        words: &self.lookahead_sets[w..w + self.set_words],
                    },
                )
            })
    }

    /// Whether `state` accepts on `$`.
    pub fn is_accepting(&self, state: LrState) -> bool {
        self.accepting[state.as_usize()]
    }

    /// The state after `state` on nonterminal `n`, if any.
    #[inline]
    pub fn goto(&self, state: LrState, n: NonterminalId) -> Option<LrState> {
        let lo = self.goto_start[state.as_usize()] as usize;
        let hi = self.goto_start[state.as_usize() + 1] as usize;
        let list = &self.gotos[lo..hi];
        list.binary_search_by_key(&(n.as_usize() as u32), |&(k, _)| k)
            .ok()
            .map(|i| list[i].1)
    }

    /// The gotos of `state`: `(nonterminal, target)`, sorted by nonterminal.
    pub fn state_gotos(
        &self,
        state: LrState,
    ) -> impl Iterator<Item = (NonterminalId, LrState)> + '_ {
        let lo = self.goto_start[state.as_usize()] as usize;
        let hi = self.goto_start[state.as_usize() + 1] as usize;
        self.gotos[lo..hi]
            .iter()
            .map(|&(n, s)| (NonterminalId::from_usize(n as usize), s))
    }

    /// The kernel items of `state`.
    pub fn kernel(&self, state: LrState) -> &[LrItem] {
        &self.kernels[state.as_usize()]
    }

    /// The conflicts of the plain LALR(1) table, sorted by state and lookahead.
    pub fn conflicts(&self) -> &[Conflict] {
        self.conflicts
            .get_or_init(|| conflict::find(self, &self.grammar0()))
    }

    /// The number of [`LrTables::conflicts`], counted without finding each one's items and
    /// shortest prefix.
    pub fn conflict_len(&self) -> usize {
        match self.conflicts.get() {
            Some(found) => found.len(),
            None => conflict::count(self, &self.grammar0()),
        }
    }

    /// The numbered grammar the tables were built from (for diagnostics).
    fn grammar0(&self) -> lr0::Grammar0 {
        let analysis = Analysis::new(&self.cfg);
        lr0::Grammar0::new(&self.cfg, |n| {
            analysis.is_nullable(NonterminalId::from_usize(n))
        })
    }
}

/// The most entries (states × terminals) of the direct shift index: 4M entries, 16 MiB. Past
/// it the tables search each state's sorted row instead, which is slower but small.
const MAX_DENSE_ENTRIES: usize = 1 << 22;

/// The most actions of the expanded action index (16 MiB).
const MAX_EXPANDED_ACTIONS: usize = 1 << 20;

/// The direct index of the shift rows (see [`LrTables::dense`]), or an empty vector when it
/// would exceed [`MAX_DENSE_ENTRIES`]. Lookups are the commit's hottest operation.
fn dense_index(shift_start: &[u32], shift_keys: &[u32], width: u32) -> Vec<u32> {
    let states = shift_start.len() - 1;
    let width = width as usize;
    if states.saturating_mul(width) > MAX_DENSE_ENTRIES {
        return Vec::new();
    }
    let mut dense = vec![NO_SHIFT; states * width];
    for s in 0..states {
        for i in shift_start[s] as usize..shift_start[s + 1] as usize {
            dense[s * width + shift_keys[i] as usize] = i as u32;
        }
    }
    dense
}

/// The actions of one state on one lookahead ([`LrTables::actions_at`]), in order.
#[derive(Clone, Debug)]
pub struct Actions<'a> {
    /// All the actions, from the expanded index (then the rest is empty).
    explicit: &'a [Action],
    shift: Option<&'a Action>,
    reduces: &'a [Action],
    reduce_sets: &'a [u32],
    tables: &'a LrTables,
    k: u32,
    accept: bool,
}

impl<'a> Actions<'a> {
    /// Whether there is no action (a parse error on this lookahead).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.explicit.is_empty()
            && self.shift.is_none()
            && !self.accept
            && !self
                .reduce_sets
                .iter()
                .any(|&set| self.tables.set_has(set, self.k))
    }

    /// The number of actions.
    pub fn len(&self) -> usize {
        self.clone().count()
    }

    /// The actions, as an iterator (they are one already).
    #[inline]
    pub fn iter(&self) -> Actions<'a> {
        self.clone()
    }
}

impl<'a> Iterator for Actions<'a> {
    type Item = &'a Action;

    #[inline]
    fn next(&mut self) -> Option<&'a Action> {
        if let Some((a, rest)) = self.explicit.split_first() {
            self.explicit = rest;
            return Some(a);
        }
        if let Some(a) = self.shift.take() {
            return Some(a);
        }
        while let Some((a, rest)) = self.reduces.split_first() {
            let set = self.reduce_sets[0];
            self.reduces = rest;
            self.reduce_sets = &self.reduce_sets[1..];
            if self.tables.set_has(set, self.k) {
                return Some(a);
            }
        }
        if self.accept {
            self.accept = false;
            return Some(&ACCEPT);
        }
        None
    }
}

/// The lookaheads with some action in one state ([`LrTables::state_lookaheads`]), ascending.
#[derive(Clone, Debug)]
pub struct Lookaheads<'a> {
    tables: &'a LrTables,
    /// The expanded row's lookaheads (repeated per action), read first.
    keys: &'a [u32],
    shift_keys: &'a [u32],
    reduce_sets: &'a [u32],
    accept: bool,
    /// The least lookahead not yet considered.
    next: u32,
}

impl Iterator for Lookaheads<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if let Some(&k) = self.keys.first() {
            let same = self.keys.iter().take_while(|&&x| x == k).count();
            self.keys = &self.keys[same..];
            return Some(k);
        }
        let eof = self.tables.terminal_len;
        if self.next > eof {
            return None;
        }
        let mut best = self.shift_keys.first().copied().unwrap_or(u32::MAX);
        if self.accept {
            best = best.min(eof);
        }
        let words = self.tables.set_words;
        for &set in self.reduce_sets {
            let row = &self.tables.lookahead_sets[set as usize * words..(set as usize + 1) * words];
            if let Some(k) = (LookaheadSet { words: row }).next_from(self.next) {
                best = best.min(k);
            }
        }
        if best > eof {
            self.next = eof + 1;
            return None;
        }
        self.next = best + 1;
        if self.shift_keys.first() == Some(&best) {
            self.shift_keys = &self.shift_keys[1..];
        }
        Some(best)
    }
}

/// The lookahead set of a reduction ([`LrTables::state_reductions`]): lookahead indices, `$`
/// being [`LrTables::eof_index`].
#[derive(Clone, Copy, Debug)]
pub struct LookaheadSet<'a> {
    words: &'a [u64],
}

impl<'a> LookaheadSet<'a> {
    /// The set as words: bit `k % 64` of word `k / 64` for lookahead index `k`.
    pub fn words(&self) -> &'a [u64] {
        self.words
    }

    /// Whether the set holds lookahead index `k`.
    pub fn contains(&self, k: u32) -> bool {
        bits::contains(self.words, k as usize)
    }

    /// The number of lookaheads in the set.
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty (a stored reduction's never is).
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// The lookaheads, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut bits = w;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros();
                    bits &= bits - 1;
                    i as u32 * 64 + b
                })
            })
        })
    }

    /// The least lookahead in the set at or past `k`.
    fn next_from(&self, k: u32) -> Option<u32> {
        let mut w = k as usize / 64;
        let mut word = *self.words.get(w)? & (u64::MAX << (k % 64));
        loop {
            if word != 0 {
                return Some(w as u32 * 64 + word.trailing_zeros());
            }
            w += 1;
            word = *self.words.get(w)?;
        }
    }
}
