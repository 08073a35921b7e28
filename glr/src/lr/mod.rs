//! The LALR(1) automaton that keeps every conflict, as compact tables for the GLR parser.
//!
//! # Principal types
//!
//! - [`LrTables`]: built from a normalised [`Cfg`] by [`LrTables::build`]: LR(0) item sets
//!   ([`lr0`]), LALR(1) lookaheads by DeRemer–Pennello with right-nulled reductions ([`lalr`]).
//!   Per state, a sorted list of `(lookahead, action)` and a sorted goto list. Immutable,
//!   `Send + Sync`.
//! - [`Action`]: shift, (right-nulled) reduce, accept. A state may have several actions on one
//!   lookahead: that is a conflict, and the GLR parser follows all of them.
//! - [`Conflict`]: a conflict of the plain LALR(1) table (right-nulled reductions are left out:
//!   they duplicate ε-reductions by design), with the competing items; rendered by
//!   [`LrTables::render_conflict`].
//!
//! The grammar is augmented with `S' -> S $`; the state holding `S' -> S · $` accepts on `$`
//! (no state is built after `$`).

mod conflict;
mod lalr;
mod lr0;

use std::fmt;

use munch_lexer::TerminalId;

use crate::cfg::analysis::Analysis;
use crate::cfg::{Cfg, NonterminalId};

pub use conflict::{Conflict, LrItem};

/// A state of the LR automaton; state 0 is the start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LrState(u32);

impl LrState {
    /// The start state.
    pub const START: LrState = LrState(0);

    /// The id for `index`, or `None` past `u32::MAX`.
    pub fn new(index: usize) -> Option<Self> {
        u32::try_from(index).ok().map(Self)
    }
    /// The id as an index.
    pub fn as_usize(self) -> usize {
        self.0 as usize
    }
    /// The id as a raw `u32`.
    pub fn as_u32(self) -> u32 {
        self.0
    }
}

impl fmt::Display for LrState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
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
    /// The most actions (shifts, reductions per lookahead, accepts) in the tables, checked
    /// before they are built. A reduction is stored once per lookahead, so a state reducing on
    /// every terminal costs as many actions as there are terminals: keyword sets of thousands
    /// multiply (8,000 keywords under `*`: 64 M actions).
    pub max_actions: usize,
}

impl Default for LrConfig {
    fn default() -> Self {
        Self {
            max_states: 100_000,
            max_actions: 8_000_000,
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
#[derive(Clone, Debug)]
pub struct LrTables {
    cfg: Cfg,
    terminal_len: u32,
    /// Per state, `actions[action_start[s]..action_start[s + 1]]`, sorted by lookahead.
    action_start: Vec<u32>,
    action_keys: Vec<u32>,
    actions: Vec<Action>,
    /// `dense[s * (terminal_len + 1) + k]`: the `actions` range of state `s` on lookahead `k`,
    /// when the table is small enough to index directly (else empty, and lookups search).
    dense: Vec<(u32, u32)>,
    /// Per state, `gotos[goto_start[s]..goto_start[s + 1]]`, sorted by nonterminal.
    goto_start: Vec<u32>,
    gotos: Vec<(u32, LrState)>,
    /// Kernel items per state and the symbol path to each state, for diagnostics.
    kernels: Vec<Vec<LrItem>>,
    conflicts: Vec<Conflict>,
}

impl LrTables {
    /// Builds the tables of `cfg`.
    pub fn build(cfg: &Cfg, config: &LrConfig) -> Result<LrTables, LrBuildError> {
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
        let reduces = lalr::reductions(&g, &automaton, reduce_budget)
            .ok_or_else(|| LrBuildError::too_many_actions(config.max_actions))?;

        let state_len = automaton.states.len();
        let mut per_state: Vec<Vec<(u32, Action)>> = vec![Vec::new(); state_len];
        let mut goto_start = Vec::with_capacity(state_len + 1);
        let mut gotos = Vec::new();
        for (s, st) in automaton.states.iter().enumerate() {
            goto_start.push(gotos.len() as u32);
            for &(sym, to) in &st.transitions {
                if g.is_nonterminal(sym) {
                    gotos.push((sym - g.nt_base, LrState(to)));
                } else {
                    per_state[s].push((sym, Action::Shift(LrState(to))));
                }
            }
            if st.accepting {
                per_state[s].push((g.eof(), Action::Accept));
            }
        }
        goto_start.push(gotos.len() as u32);
        for r in &reduces {
            per_state[r.state as usize].push((
                r.lookahead,
                Action::Reduce {
                    lhs: cfg.productions()[r.prod as usize].lhs,
                    production: r.prod,
                    len: r.len,
                },
            ));
        }
        let mut action_start = Vec::with_capacity(state_len + 1);
        let mut action_keys = Vec::new();
        let mut actions = Vec::new();
        for list in &mut per_state {
            list.sort_unstable();
            list.dedup();
            action_start.push(actions.len() as u32);
            for &(k, a) in list.iter() {
                action_keys.push(k);
                actions.push(a);
            }
        }
        action_start.push(actions.len() as u32);
        let dense = dense_index(&action_start, &action_keys, g.terminal_len + 1);

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
            action_start,
            action_keys,
            actions,
            dense,
            goto_start,
            gotos,
            kernels,
            conflicts: Vec::new(),
        };
        tables.conflicts = conflict::find(&tables, &g);
        Ok(tables)
    }

    /// The CFG the tables were built from.
    pub fn cfg(&self) -> &Cfg {
        &self.cfg
    }

    /// The number of LR states.
    pub fn state_len(&self) -> usize {
        self.action_start.len() - 1
    }

    /// The lookahead index of `$` in [`LrTables::actions_at`]: one past the last terminal.
    pub fn eof_index(&self) -> u32 {
        self.terminal_len
    }

    /// The actions of `state` on `lookahead` (empty: error).
    pub fn actions(&self, state: LrState, lookahead: Lookahead) -> &[Action] {
        let k = match lookahead {
            Lookahead::Terminal(t) => t.as_u32(),
            Lookahead::Eof => self.terminal_len,
        };
        self.actions_at(state, k)
    }

    /// The actions of `state` on lookahead index `k` (a terminal id, or
    /// [`LrTables::eof_index`]).
    #[inline]
    pub fn actions_at(&self, state: LrState, k: u32) -> &[Action] {
        let width = self.terminal_len as usize + 1;
        if !self.dense.is_empty() && (k as usize) < width {
            let (lo, hi) = self.dense[state.as_usize() * width + k as usize];
            return &self.actions[lo as usize..hi as usize];
        }
        let lo = self.action_start[state.as_usize()] as usize;
        let hi = self.action_start[state.as_usize() + 1] as usize;
        let keys = &self.action_keys[lo..hi];
        let first = keys.partition_point(|&x| x < k);
        let last = first + keys[first..].partition_point(|&x| x == k);
        &self.actions[lo + first..lo + last]
    }

    /// The number of entries of the direct index, 0 when lookups search instead.
    pub fn dense_len(&self) -> usize {
        self.dense.len()
    }

    /// All `(lookahead index, action)` pairs of `state`, sorted by lookahead.
    pub fn state_actions(&self, state: LrState) -> impl Iterator<Item = (u32, Action)> + '_ {
        let lo = self.action_start[state.as_usize()] as usize;
        let hi = self.action_start[state.as_usize() + 1] as usize;
        self.action_keys[lo..hi]
            .iter()
            .copied()
            .zip(self.actions[lo..hi].iter().copied())
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
        &self.conflicts
    }
}

/// The most entries (states × lookaheads) of the direct action index: 4M entries, 32 MiB.
/// Past it the tables search each state's sorted row instead, which is slower but small.
const MAX_DENSE_ENTRIES: usize = 1 << 22;

/// The direct index of the action rows (see [`LrTables::dense`]), or an empty vector when it
/// would exceed [`MAX_DENSE_ENTRIES`]. Lookups are the commit's hottest operation.
fn dense_index(action_start: &[u32], action_keys: &[u32], width: u32) -> Vec<(u32, u32)> {
    let states = action_start.len() - 1;
    let width = width as usize;
    if states.saturating_mul(width) > MAX_DENSE_ENTRIES {
        return Vec::new();
    }
    let mut dense = vec![(0u32, 0u32); states * width];
    for s in 0..states {
        let (lo, hi) = (action_start[s] as usize, action_start[s + 1] as usize);
        let mut i = lo;
        while i < hi {
            let k = action_keys[i];
            let mut j = i;
            while j < hi && action_keys[j] == k {
                j += 1;
            }
            if (k as usize) < width {
                dense[s * width + k as usize] = (i as u32, j as u32);
            }
            i = j;
        }
    }
    dense
}
