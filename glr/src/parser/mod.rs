//! The GLR parser: a compiled [`Parser`] (lexer + LALR(1) tables) and the incremental
//! [`ParserState`] every masker shares.
//!
//! # Principal types
//!
//! - [`Parser`]: built once per grammar by [`Parser::new`] (normalise, check patterns, build the
//!   lexer DFA and the tables). Immutable, `Send + Sync`, shared by `Arc`. For maskers it answers
//!   without mutating anything whether a GSS node can shift a terminal
//!   ([`Parser::can_shift`]) or accept ([`Parser::can_accept`]), memoised in a caller-owned
//!   [`ShiftCache`].
//! - [`ParserState`]: a set of *heads* over a persistent GSS, advanced byte by byte by
//!   [`ParserState::commit_bytes`]; O(1) `clone`, exact [`ParserState::rollback`].
//! - [`TerminalParser`]: the same GLR runtime fed terminal ids directly, without a lexer (for
//!   tests, sentence checking and tools).
//!
//! The GLR algorithm is RNGLR (see the `rnglr` module); the lexing semantics (longest match,
//! ties, inhibited terminals) are the lexer's, described in [`munch_lexer::dfa`].

#[cfg(test)]
mod accept_tests;
#[cfg(test)]
pub(crate) mod chain_tests;
mod contextual;
#[cfg(test)]
mod decide_tests;
mod indent;
#[cfg(test)]
pub(crate) mod indent_tests;
mod rnglr;
mod state;
mod terminal;

use std::fmt;

use ahash::AHashMap;
use munch_lexer::dfa::{Lexer, LexerBuildError, LexerConfig, StandIn};
use munch_lexer::TerminalId;
use smallvec::SmallVec;

use crate::cfg::patterns::{self, MissingPatterns};
use crate::cfg::split::SplitLiteral;
use crate::cfg::{normalize, Cfg, NormalizeConfig, NormalizeError};
use crate::grammar::Grammar;
use crate::gss::{Edge, GssNode, GssNodeId, Level, NodeData, NodeRef};
use crate::lr::{Action, Conflict, LrBuildError, LrConfig, LrState, LrTables};
use crate::span::Span;

pub(crate) use indent::indent_bracket_delta;
pub use indent::{IndentCtx, Indenter, NlAction, Postlex, PostlexError, TAB_LEN};
pub use state::{CommitError, CommitErrorKind, Head, ParserState, RollbackError};
pub use terminal::TerminalParser;

/// Budgets for building a [`Parser`] and for each commit step.
#[derive(Clone, Debug)]
pub struct ParserConfig {
    /// The most LR states the automaton may have (build error past it).
    pub max_lr_states: usize,
    /// The most entries the LR tables may store (build error past it, before they are built):
    /// shifts, gotos, accepts, reductions and their shared lookahead sets, as counted by
    /// [`LrTables::stored_len`].
    pub max_lr_actions: usize,
    /// The most live heads (GSS node × lexer configuration) after any byte of a commit.
    pub max_heads: usize,
    /// The most GSS nodes one byte of a commit may build.
    pub max_nodes_per_step: usize,
    /// The most work one commit may do, in units of one reduction item or one GSS edge walked:
    /// its bytes and the liveness checks of its heads after the last byte (one unit per
    /// terminal tried, and the reductions that answer for it). Recognition is polynomial
    /// on every grammar — at worst cubic in the text on ambiguous ones, one unit costing about
    /// 10 ns — and this bounds a commit's time: exceeding it is a typed error.
    pub max_work_per_commit: usize,
    /// The most commits a [`ParserState`] keeps for [`ParserState::rollback`] (4,096 by
    /// default, as inference engines cap rollback): older history is dropped, so a long parse
    /// holds at most twice this many snapshots, and rolling back further is a
    /// [`RollbackError`] naming this budget.
    pub max_rollback: usize,
    /// Budgets of the lexer DFA build.
    pub lexer: LexerConfig,
    /// Budgets of normalisation.
    pub normalize: NormalizeConfig,
    /// The post-lexer between the lexer and the tables (Lark's `postlex=`): none, or Python's
    /// indenter (see [`Indenter`]).
    pub postlex: Postlex,
    /// Read literals as Lark's contextual lexer does where the parser has no action on them:
    /// a literal that wins a tie against one regex (a keyword against `NAME`) as the regex
    /// (`_` is a name outside Python's patterns; see
    /// [`munch_lexer::dfa::Lexer::with_stand_ins`]), and a literal that spells copies of a
    /// shorter literal as those copies (`from ... import x`), where no state that has an action
    /// on the longer literal can take all the copies ([`Parser::split_literals`]). Default
    /// `true`.
    pub contextual_literals: bool,
    /// Resolve every shift/reduce conflict of the LR tables by shifting, as Lark's LALR parser
    /// does (a text that needs the reduction is refused), instead of keeping both for the GLR
    /// parser ([`crate::lr::LrConfig::prefer_shift`]). Reduce/reduce conflicts stay. Default
    /// `false`.
    pub prefer_shift: bool,
}

impl Default for ParserConfig {
    fn default() -> Self {
        Self {
            max_lr_states: 100_000,
            max_lr_actions: 8_000_000,
            max_heads: 1_000,
            max_nodes_per_step: 100_000,
            max_work_per_commit: 300_000_000,
            max_rollback: 4_096,
            lexer: LexerConfig::default(),
            normalize: NormalizeConfig::default(),
            postlex: Postlex::None,
            contextual_literals: true,
            prefer_shift: false,
        }
    }
}

/// Why a [`Parser`] could not be built.
#[derive(Debug)]
pub struct ParserBuildError {
    kind: ParserBuildErrorKind,
    /// Where the terminal a lexer error names is defined, and the grammar file's name once a
    /// caller that knows it has given it ([`ParserBuildError::in_file`]).
    at: Option<(Span, Option<String>)>,
}

/// The reason behind a [`ParserBuildError`].
#[derive(Debug)]
pub enum ParserBuildErrorKind {
    /// Normalisation failed (size or nesting budget, bad ids).
    Normalize(NormalizeError),
    /// Reachable rules use terminals the lexer cannot produce.
    MissingPatterns(MissingPatterns),
    /// The lexer DFA could not be built.
    Lexer(LexerBuildError),
    /// The LR automaton could not be built (state budget).
    Lr(LrBuildError),
    /// The post-lexer asked for needs terminals the grammar lacks.
    Postlex(PostlexError),
}

impl ParserBuildError {
    /// Why.
    pub fn kind(&self) -> &ParserBuildErrorKind {
        &self.kind
    }

    /// Where the terminal that the error names is defined (a lexer error about one terminal's
    /// pattern, such as an anchor the lexer does not support).
    pub fn span(&self) -> Option<Span> {
        self.at.as_ref().map(|(span, _)| *span)
    }

    /// The same error, its location rendered as `file:line:column` with `file` the name of the
    /// grammar file (the grammar model does not keep it).
    pub fn in_file(mut self, file: &str) -> Self {
        if let Some((_, name)) = &mut self.at {
            *name = Some(file.to_string());
        }
        self
    }
}

impl fmt::Display for ParserBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.at {
            Some((span, Some(file))) => write!(f, "{file}:{}:{}: ", span.line, span.column)?,
            Some((span, None)) => write!(f, "{}:{}: ", span.line, span.column)?,
            None => {}
        }
        match &self.kind {
            ParserBuildErrorKind::Normalize(e) => e.fmt(f),
            ParserBuildErrorKind::MissingPatterns(e) => e.fmt(f),
            ParserBuildErrorKind::Lexer(e) => write!(f, "lexer: {e}"),
            ParserBuildErrorKind::Lr(e) => e.fmt(f),
            ParserBuildErrorKind::Postlex(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ParserBuildError {}

impl From<ParserBuildErrorKind> for ParserBuildError {
    fn from(kind: ParserBuildErrorKind) -> Self {
        Self { kind, at: None }
    }
}

/// A compiled grammar: lexer DFA + LALR(1) tables with every conflict kept.
///
/// Immutable and `Send + Sync`; share it with `Arc`.
#[derive(Clone)]
pub struct Parser {
    lexer: Lexer,
    /// See [`Parser::split_literals`].
    split_literals: Vec<SplitLiteral>,
    tables: LrTables,
    ignored: Vec<bool>,
    /// The post-lexer (Python's indenter), if any.
    indenter: Option<Indenter>,
    /// Per LR state, whether its ε-closure under `$` accepts (see `rnglr::accepts`).
    closure_accepts: Vec<bool>,
    max_heads: usize,
    max_nodes_per_step: usize,
    max_work_per_commit: usize,
    max_rollback: usize,
}

impl fmt::Debug for Parser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parser")
            .field("terminals", &self.lexer.terminal_len())
            .field("lexer_states", &self.lexer.state_len())
            .field("lr_states", &self.tables.state_len())
            .field("conflicts", &self.tables.conflict_len())
            .finish()
    }
}

impl Parser {
    /// Normalises `grammar`, checks that every terminal it uses has a pattern, and builds the
    /// lexer and the tables within the budgets of `config`.
    pub fn new(grammar: &Grammar, config: &ParserConfig) -> Result<Parser, ParserBuildError> {
        let indenter =
            Indenter::new(grammar, config.postlex).map_err(ParserBuildErrorKind::Postlex)?;
        let cfg = normalize(grammar, &config.normalize).map_err(ParserBuildErrorKind::Normalize)?;
        patterns::check(grammar, &cfg, |t| {
            indenter.as_ref().is_some_and(|i| i.emits(t))
        })
        .map_err(ParserBuildErrorKind::MissingPatterns)?;
        let specs = grammar.terminal_specs();
        // The lexer keeps the literals among them.
        let literals: Vec<TerminalId> = if config.contextual_literals {
            (0..specs.len()).map(TerminalId::from_usize).collect()
        } else {
            Vec::new()
        };
        let lexer = Lexer::with_stand_ins(specs, &config.lexer, &literals).map_err(|e| {
            let at = e
                .terminal()
                .and_then(|t| grammar.terminals.get(t.as_usize()))
                .map(|t| (t.span, None));
            ParserBuildError {
                kind: ParserBuildErrorKind::Lexer(e),
                at,
            }
        })?;
        let mut cfg = cfg;
        let stand_ins: Vec<StandIn> = lexer
            .stand_ins()
            .iter()
            .map(|s| {
                let name = cfg.terminal_name(s.literal).to_string();
                StandIn {
                    terminal: cfg.add_terminal(name),
                    literal: s.literal,
                    regex: s.regex,
                }
            })
            .collect();
        debug_assert!(stand_ins.iter().zip(lexer.stand_ins()).all(|(a, b)| a == b));
        let lr_config = LrConfig {
            max_states: config.max_lr_states,
            max_actions: config.max_lr_actions,
            prefer_shift: config.prefer_shift,
        };
        let mut tables = LrTables::build_with_stand_ins(&cfg, &lr_config, &stand_ins)
            .map_err(ParserBuildErrorKind::Lr)?;
        let mut split_literals = Vec::new();
        if config.contextual_literals {
            let (splits, split_cfg) =
                contextual::split_literals(&lexer, &cfg, &tables, config.normalize.max_cfg_symbols)
                    .map_err(ParserBuildErrorKind::Normalize)?;
            if let Some(split_cfg) = split_cfg {
                cfg = split_cfg;
                tables = LrTables::build_with_stand_ins(&cfg, &lr_config, &stand_ins)
                    .map_err(ParserBuildErrorKind::Lr)?;
            }
            split_literals = splits;
        }
        let closure_accepts = rnglr::eof_closure_accepts(&tables);
        let ignored = (0..lexer.terminal_len())
            .map(|t| grammar.terminals.get(t).is_some_and(|t| t.ignored))
            .collect();
        Ok(Parser {
            lexer,
            split_literals,
            closure_accepts,
            tables,
            ignored,
            indenter,
            max_heads: config.max_heads,
            max_nodes_per_step: config.max_nodes_per_step,
            max_work_per_commit: config.max_work_per_commit,
            max_rollback: config.max_rollback,
        })
    }

    /// The post-lexer's indenter (`postlex = python`), if any.
    pub fn indenter(&self) -> Option<&Indenter> {
        self.indenter.as_ref()
    }

    /// The lexer DFA (terminal ids are the grammar's).
    pub fn lexer(&self) -> &Lexer {
        &self.lexer
    }

    /// The literals read as copies of a shorter literal where the parser has no action on
    /// them (`from ... import x`: see [`crate::cfg::split`]; [`ParserConfig::contextual_literals`]).
    pub fn split_literals(&self) -> &[SplitLiteral] {
        &self.split_literals
    }

    /// The LR tables.
    pub fn tables(&self) -> &LrTables {
        &self.tables
    }

    /// The normalised grammar.
    pub fn cfg(&self) -> &Cfg {
        self.tables.cfg()
    }

    /// The number of LR states.
    pub fn lr_state_len(&self) -> usize {
        self.tables.state_len()
    }

    /// The conflicts of the LALR(1) table (kept: the GLR parser follows every action).
    pub fn conflicts(&self) -> &[Conflict] {
        self.tables.conflicts()
    }

    /// The number of [`Parser::conflicts`], counted without listing them.
    pub fn conflict_len(&self) -> usize {
        self.tables.conflict_len()
    }

    /// The number of terminals.
    pub fn terminal_len(&self) -> usize {
        self.lexer.terminal_len()
    }

    /// The name of terminal `t`.
    pub fn terminal_name(&self, t: TerminalId) -> &str {
        &self.lexer.terminal(t).name
    }

    /// Whether `t` is `%ignore`d (it separates lexemes and never reaches the parser).
    pub fn is_ignored(&self, t: TerminalId) -> bool {
        self.ignored.get(t.as_usize()).copied().unwrap_or(false)
    }

    /// The most commits a [`ParserState`] keeps for rollback ([`ParserConfig::max_rollback`]).
    pub fn max_rollback(&self) -> usize {
        self.max_rollback
    }

    /// Whether the parser, with the stacks of `node` below it, can shift `t` (after any
    /// reductions). Ignored terminals are never shifted. Memoised in `cache`.
    pub fn can_shift(&self, node: &GssNode, t: TerminalId, cache: &mut ShiftCache) -> bool {
        self.can_shift_within(node, t, cache, &mut rnglr::Allowance::unlimited())
            .unwrap_or(false)
    }

    /// [`Parser::can_shift`] without the memo, for a node no later question names (a masker's
    /// speculative node, made for one mask): remembering its answers would only cost the
    /// memo's lookups and grow it.
    pub fn can_shift_once(&self, node: &GssNode, t: TerminalId) -> bool {
        let k = t.as_u32();
        if t.as_usize() >= self.cfg().terminal_len() || self.is_ignored(t) {
            return false;
        }
        self.decide_with(node, k, None, &mut rnglr::Allowance::unlimited())
            .unwrap_or(false)
    }

    /// [`Parser::can_shift`], spending from `left` (a commit's liveness checks).
    pub(crate) fn can_shift_within(
        &self,
        node: &GssNode,
        t: TerminalId,
        cache: &mut ShiftCache,
        left: &mut rnglr::Allowance,
    ) -> Result<bool, rnglr::Exceeded> {
        let k = t.as_u32();
        // The tables may shift an ignored terminal (a rule can use it), but the byte-level
        // parser never hands one to them.
        if t.as_usize() >= self.cfg().terminal_len() || self.is_ignored(t) {
            return Ok(false);
        }
        self.decide(node, k, cache, left)
    }

    /// The frontier after shifting `t` (after every reduction it allows) onto the stacks of
    /// `node`: empty when `t` cannot be shifted there (ignored terminals never are). Nothing is
    /// mutated — the new nodes are speculative — so maskers use this to look past a lexeme
    /// boundary without committing. Fails only when the shift would build more than
    /// `max_nodes_per_step` nodes, the budget a commit has too.
    pub fn shift_from(
        &self,
        node: &GssNode,
        t: TerminalId,
    ) -> Result<SmallVec<[GssNode; 2]>, CommitError> {
        self.shift_frontier(std::slice::from_ref(node), t)
    }

    /// [`Parser::shift_from`] for a whole frontier at once: the stacks of every node of
    /// `frontier` shift `t` together, so the new nodes merge per LR state as in a commit and the
    /// result has at most one node per LR state (shifting node by node would multiply the
    /// frontier on ambiguous grammars).
    pub fn shift_frontier(
        &self,
        frontier: &[GssNode],
        t: TerminalId,
    ) -> Result<SmallVec<[GssNode; 2]>, CommitError> {
        if t.as_usize() >= self.cfg().terminal_len() || self.is_ignored(t) {
            return Ok(SmallVec::new());
        }
        if let [node] = frontier {
            if let Some(shifted) = self.shift_linear(node, t.as_u32()) {
                return Ok(shifted);
            }
        }
        rnglr::shift(
            &self.tables,
            frontier,
            &[t.as_u32()],
            &mut self.step_allowance(),
        )
        .map_err(|e| self.budget_error(e, 0))
    }

    /// The LR states from which the stacks of `node` shift `t` after the reductions it
    /// allows (each once; empty when `t` cannot be shifted there). `None` when the reductions
    /// exceed a commit's step budget.
    pub(crate) fn shift_tops(
        &self,
        node: &GssNode,
        t: TerminalId,
    ) -> Option<SmallVec<[LrState; 4]>> {
        if t.as_usize() >= self.cfg().terminal_len() || self.is_ignored(t) {
            return Some(SmallVec::new());
        }
        let k = t.as_u32();
        let actions = self.tables.actions_at(node.state(), k);
        if actions.iter().all(|a| matches!(a, Action::Shift(_))) {
            // Nothing to reduce first: the node's own state shifts, or nothing does.
            return Some(if actions.is_empty() {
                SmallVec::new()
            } else {
                smallvec::smallvec![node.state()]
            });
        }
        let reduced = rnglr::reduce(
            &self.tables,
            std::slice::from_ref(node),
            k,
            &mut self.step_allowance(),
            rnglr::Stop::Never,
        )
        .ok()?;
        let mut tops: SmallVec<[LrState; 4]> = reduced.shift_tops().collect();
        tops.sort_unstable();
        tops.dedup();
        Some(tops)
    }

    /// What one parser step may spend, as the first byte of a commit.
    fn step_allowance(&self) -> rnglr::Allowance {
        rnglr::Allowance {
            nodes: self.max_nodes_per_step,
            work: self.max_work_per_commit,
        }
    }

    /// The commit error for an exceeded step budget at `offset`.
    fn budget_error(&self, e: rnglr::Exceeded, offset: usize) -> CommitError {
        let (name, limit) = match e {
            rnglr::Exceeded::Nodes => ("max_nodes_per_step", self.max_nodes_per_step),
            rnglr::Exceeded::Work => ("max_work_per_commit", self.max_work_per_commit),
        };
        CommitError::new(CommitErrorKind::Budget {
            name,
            limit,
            offset,
        })
    }

    /// Whether the input may end with the stacks of `node` (after any reductions on `$`).
    pub fn can_accept(&self, node: &GssNode, cache: &mut ShiftCache) -> bool {
        self.can_accept_within(node, cache, &mut rnglr::Allowance::unlimited())
            .unwrap_or(false)
    }

    /// [`Parser::can_accept`], spending from `left`.
    fn can_accept_within(
        &self,
        node: &GssNode,
        cache: &mut ShiftCache,
        left: &mut rnglr::Allowance,
    ) -> Result<bool, rnglr::Exceeded> {
        rnglr::accepts(
            &self.tables,
            &self.closure_accepts,
            node,
            &mut cache.accept,
            left,
        )
    }

    /// Whether some terminal (not an ignored one) can be shifted from `node`, or the input may
    /// end there.
    pub fn can_continue(&self, node: &GssNode, cache: &mut ShiftCache) -> bool {
        self.can_continue_within(node, cache, &mut rnglr::Allowance::unlimited())
            .unwrap_or(false)
    }

    /// [`Parser::can_continue`], spending from `left`: a unit per lookahead tried, and the
    /// reductions and searches that answer for it.
    pub(crate) fn can_continue_within(
        &self,
        node: &GssNode,
        cache: &mut ShiftCache,
        left: &mut rnglr::Allowance,
    ) -> Result<bool, rnglr::Exceeded> {
        let eof = self.tables.eof_index();
        for k in self.tables.state_lookaheads(node.state()) {
            left.spend(1)?;
            // Ignored terminals never reach the tables; a post-lexer's `_INDENT`/`_DEDENT`
            // never come from the lexer (they follow a newline, which is tried itself).
            if k != eof
                && (self.is_ignored(TerminalId::from(k))
                    || self
                        .indenter
                        .as_ref()
                        .is_some_and(|i| i.emits(TerminalId::from(k))))
            {
                continue;
            }
            let can = if k == eof {
                self.can_accept_within(node, cache, left)?
            } else {
                self.decide(node, k, cache, left)?
            };
            if can {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether `node` can shift lookahead `k` (after any reductions), spending from `left` the
    /// reduction's work (a memoised answer costs nothing). Only answers found are memoised.
    fn decide(
        &self,
        node: &GssNode,
        k: u32,
        cache: &mut ShiftCache,
        left: &mut rnglr::Allowance,
    ) -> Result<bool, rnglr::Exceeded> {
        self.decide_with(node, k, Some(cache), left)
    }

    /// [`Parser::decide`], memoised in `cache` when there is one.
    fn decide_with(
        &self,
        node: &GssNode,
        k: u32,
        mut cache: Option<&mut ShiftCache>,
        left: &mut rnglr::Allowance,
    ) -> Result<bool, rnglr::Exceeded> {
        let actions = self.tables.actions_at(node.state(), k);
        if actions.is_empty() {
            return Ok(false);
        }
        if actions.iter().any(|a| matches!(a, Action::Shift(_))) {
            return Ok(true);
        }
        let key = (node.id(), k);
        if let Some(&v) = cache.as_ref().and_then(|c| c.map.get(&key)) {
            return Ok(v);
        }
        if let Some(v) = self.decide_linear(node, k) {
            if let Some(cache) = cache {
                cache.map.insert(key, v);
            }
            return Ok(v);
        }
        // A single-node reduction has at most one scratch node per LR state: no node budget.
        let mut allowance = rnglr::Allowance {
            nodes: usize::MAX,
            work: left.work,
        };
        let result = rnglr::reduce(
            &self.tables,
            std::slice::from_ref(node),
            k,
            &mut allowance,
            rnglr::Stop::AtShift,
        );
        left.work = allowance.work;
        let v = !result?.shifts.is_empty();
        if let Some(cache) = cache.as_mut() {
            cache.map.insert(key, v);
        }
        Ok(v)
    }
}

/// Where [`Parser::run_linear`] stopped: a state with no action on the lookahead, or one that
/// shifts it, with the states the reductions pushed (bottom first) above the node they popped
/// down to.
enum Linear<'a> {
    Error,
    Shift {
        base: NodeRef<'a>,
        pushed: SmallVec<[LrState; 8]>,
        to: LrState,
        alone: bool,
    },
}

impl Parser {
    /// The reductions on `k` below `node` where they follow one path: they run on a copy of the
    /// top LR states, without building GSS nodes, while every node they pop below `node` has
    /// one predecessor and every state reached has one action on `k` (or a shift among others,
    /// `alone` false then). That is the LR automaton's own run, so it goes where the GLR
    /// reducer would; `None` (the reducer decides) where a node forks, a state has a conflict
    /// on `k` between reductions, or more than [`MAX_LINEAR_REDUCTIONS`] reductions run (a
    /// cycle of unit rules). Unlike the reducer, it builds no scratch nodes, which would be
    /// most of the cost of a question the trie masker asks at every lexeme boundary.
    fn run_linear<'a>(&self, node: &'a GssNode, k: u32) -> Option<Linear<'a>> {
        let mut pushed: SmallVec<[LrState; 8]> = SmallVec::new();
        let mut base = node.as_ref();
        for _ in 0..MAX_LINEAR_REDUCTIONS {
            let top = pushed.last().copied().unwrap_or_else(|| base.state());
            let mut actions = self.tables.actions_at(top, k);
            let (lhs, len) = match (actions.next(), actions.next()) {
                (None, _) => return Some(Linear::Error),
                (Some(&Action::Shift(to)), other) => {
                    return Some(Linear::Shift {
                        base,
                        pushed,
                        to,
                        alone: other.is_none(),
                    })
                }
                (Some(&Action::Reduce { lhs, len, .. }), None) => (lhs, len as usize),
                _ => return None,
            };
            let from_pushed = len.min(pushed.len());
            pushed.truncate(pushed.len() - from_pushed);
            for _ in from_pushed..len {
                let [e] = base.edges() else { return None };
                base = base.follow(e);
            }
            let under = pushed.last().copied().unwrap_or_else(|| base.state());
            pushed.push(self.tables.goto(under, lhs)?);
        }
        None
    }

    /// [`Parser::decide`] by [`Parser::run_linear`].
    fn decide_linear(&self, node: &GssNode, k: u32) -> Option<bool> {
        Some(matches!(self.run_linear(node, k)?, Linear::Shift { .. }))
    }

    /// [`Parser::shift_frontier`] of one node by [`Parser::run_linear`]: the states the
    /// reductions push become one new level of nodes above the node they popped down to, and
    /// the shift one node above them (or above the node itself when nothing is reduced). The
    /// stacks are the reducer's; only the GSS's layout may differ (no scratch copy of the
    /// node). `None` (the reducer shifts) where the run gives up, the shift comes with another
    /// action, or its nodes would pass the step's node budget.
    fn shift_linear(&self, node: &GssNode, k: u32) -> Option<SmallVec<[GssNode; 2]>> {
        match self.run_linear(node, k)? {
            Linear::Error => Some(SmallVec::new()),
            Linear::Shift {
                base,
                pushed,
                to,
                alone,
            } => (alone && pushed.len() < self.max_nodes_per_step)
                .then(|| SmallVec::from_elem(self.push_run(base, &pushed, to), 1)),
        }
    }

    /// The node of state `to` above the states `pushed` (bottom first) above `base`: the
    /// pushed states in one level, each on the one before (the first on `base`), and `to` in
    /// a level of its own.
    fn push_run(&self, base: NodeRef<'_>, pushed: &[LrState], to: LrState) -> GssNode {
        let below = if pushed.is_empty() {
            base.to_node()
        } else {
            let nodes = pushed
                .iter()
                .enumerate()
                .map(|(i, &state)| NodeData {
                    state,
                    edges: SmallVec::from_elem(
                        match i.checked_sub(1) {
                            None => Edge::Down(base.to_node()),
                            Some(j) => Edge::Same(j as u32),
                        },
                        1,
                    ),
                })
                .collect();
            GssNode {
                level: Level::new(nodes),
                index: pushed.len() as u32 - 1,
            }
        };
        GssNode {
            level: Level::new(vec![NodeData {
                state: to,
                edges: SmallVec::from_elem(Edge::Down(below), 1),
            }]),
            index: 0,
        }
    }
}

/// The most reductions [`Parser::run_linear`] runs before it leaves the question to the GLR
/// reducer.
const MAX_LINEAR_REDUCTIONS: usize = 256;

/// A caller-owned memo for [`Parser::can_shift`] and [`Parser::can_accept`], keyed by
/// (node identity, lookahead) and, for acceptance, by (node identity, LR state reduced onto
/// it). Node ids are never reused, so entries never go stale; clear it when it grows too large.
#[derive(Clone, Debug)]
pub struct ShiftCache {
    map: AHashMap<(GssNodeId, u32), bool>,
    accept: rnglr::AcceptMemo,
}

impl Default for ShiftCache {
    fn default() -> Self {
        // Fixed seeds: commits make a cache each, and a fresh random state costs more than the
        // lookups it serves (node ids are not attacker-chosen).
        ShiftCache {
            map: AHashMap::with_hasher(ahash::RandomState::with_seeds(1, 2, 3, 4)),
            accept: AHashMap::with_hasher(ahash::RandomState::with_seeds(1, 2, 3, 4)),
        }
    }
}

impl ShiftCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }
    /// The number of memoised answers.
    pub fn len(&self) -> usize {
        self.map.len() + self.accept.len()
    }
    /// Whether nothing is memoised.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty() && self.accept.is_empty()
    }
    /// Forgets everything.
    pub fn clear(&mut self) {
        self.map.clear();
        self.accept.clear();
    }
}
