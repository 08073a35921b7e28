//! [`ParserState`]: heads over the persistent GSS, each with its lexer configuration.
//!
//! A *head* is (GSS node, lexer state, inhibitor, whether the current lexeme is empty). Per
//! committed byte `b` every head:
//!
//! 1. reads `b`: lexer state `s' = next(s, b)`, or [`next_inhibited`]`(i, b)` if it is
//!    inhibited by `i` (dead if by longest match the lexeme it handed to the parser went on, or
//!    the look-ahead of its terminals fails on `b`; a pending state while `b`'s character is
//!    incomplete and may or may not extend that lexeme); dead → the head dies;
//! 2. if `s'` can grow, keeps lexing (`s'`, not inhibited);
//! 3. if `accepted(s')` is non-empty, hands every terminal of it to the parser now (ignored
//!    terminals just end the lexeme), restarts the lexer and is inhibited by `s'` when
//!    [`Lexer::inhibits`]`(s')` (no inhibitor when `s'` can neither grow nor wait on a
//!    look-ahead: the lexeme had to end there).
//!
//! Heads completing a lexeme in the same lexer state at the same byte are parsed together
//! (their GSS nodes merge per LR state), and heads equal in all four parts merge. After each
//! commit, heads that are not live are dropped (these checks spend from the commit's work
//! budget, so a commit's whole work is bounded); a commit that leaves none, or runs out of
//! budget, is refused and the state is unchanged. The history of states is kept (persistently) so that
//! [`ParserState::rollback`] restores exactly the state before the last `n` commits, for the
//! last [`super::ParserConfig::max_rollback`] commits at least: when a state's chain of
//! snapshots reaches twice that, the commit copies its last `max_rollback` snapshots onto a new
//! chain (sharing their heads) and lets the older ones go, so memory per state stays bounded on
//! long texts at O(1) amortised cost per commit.
//!
//! [`next_inhibited`]: munch_lexer::Lexer::next_inhibited
//! [`Lexer::inhibits`]: munch_lexer::Lexer::inhibits

use std::cell::RefCell;
use std::fmt;
use std::sync::{Arc, OnceLock};

use munch_lexer::LexState;
use munch_vocab::{TokenId, Vocabulary};
use smallvec::SmallVec;

use super::indent::{Bracket, IndentCtx, NlAction};
use super::rnglr;
use super::{Parser, ShiftCache};
use crate::gss::{GssNode, GssNodeId};

/// Why a commit was refused (the state is unchanged).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitError {
    kind: CommitErrorKind,
}

/// The reason behind a [`CommitError`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommitErrorKind {
    /// Every head died at byte `offset` of the committed bytes (`byte` is that byte), or, with
    /// `byte: None`, after the last byte no head could go on. `expected` names the terminals
    /// that could have come next before that byte (sorted, at most 32).
    Rejected {
        /// Offset in the committed bytes.
        offset: usize,
        /// The byte that killed the last heads, if one did.
        byte: Option<u8>,
        /// Terminals that could have come next.
        expected: Vec<String>,
    },
    /// A [`super::TerminalParser`] could not shift terminal number `index` of its input.
    UnexpectedTerminal {
        /// Position in the terminal input.
        index: usize,
        /// The terminal's name.
        terminal: String,
    },
    /// A budget of [`super::ParserConfig`] was exceeded at byte `offset`.
    Budget {
        /// The budget's field name (`max_heads`, `max_nodes_per_step`, `max_work_per_commit`).
        name: &'static str,
        /// Its value.
        limit: usize,
        /// Offset in the committed bytes.
        offset: usize,
    },
    /// The token has no bytes in the vocabulary (a special token, or an id out of range).
    NotText(TokenId),
}

impl CommitError {
    pub(crate) fn new(kind: CommitErrorKind) -> Self {
        Self { kind }
    }

    /// Why.
    pub fn kind(&self) -> &CommitErrorKind {
        &self.kind
    }
}

impl fmt::Display for CommitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            CommitErrorKind::Rejected {
                offset,
                byte,
                expected,
            } => {
                match byte {
                    Some(b) => write!(
                        f,
                        "byte {offset} ({:?}) cannot continue the text",
                        *b as char
                    )?,
                    None => write!(f, "the text cannot continue after byte {offset}")?,
                }
                if !expected.is_empty() {
                    write!(f, "; expected one of: {}", expected.join(", "))?;
                }
                Ok(())
            }
            CommitErrorKind::UnexpectedTerminal { index, terminal } => {
                write!(f, "terminal {index} (`{terminal}`) cannot be shifted")
            }
            CommitErrorKind::Budget {
                name,
                limit,
                offset,
            } => write!(f, "budget `{name}` ({limit}) exceeded at byte {offset}"),
            CommitErrorKind::NotText(t) => write!(f, "token {t} has no text bytes"),
        }
    }
}

impl std::error::Error for CommitError {}

/// Rolling back more commits than the state keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RollbackError {
    /// Commits asked to undo.
    pub requested: usize,
    /// Commits the state can undo ([`ParserState::rollback_len`]).
    pub available: usize,
    /// The budget [`super::ParserConfig::max_rollback`], when it is why `available` is below
    /// the commits made ([`ParserState::commit_len`]) and `requested` is not.
    pub limit: Option<usize>,
}

impl fmt::Display for RollbackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.limit {
            Some(limit) => write!(
                f,
                "cannot roll back {} commits: the state keeps the last {} (budget \
                 `max_rollback` ({limit}))",
                self.requested, self.available
            ),
            None => write!(
                f,
                "cannot roll back {} commits: the state has {}",
                self.requested, self.available
            ),
        }
    }
}

impl std::error::Error for RollbackError {}

#[derive(Clone)]
pub(crate) struct HeadData {
    node: GssNode,
    lex: LexState,
    inhibitor: Option<LexState>,
    empty: bool,
    /// The indenter's context (always the default without a post-lexer).
    indent: IndentCtx,
}

impl HeadData {
    fn same(&self, o: &HeadData) -> bool {
        self.lex == o.lex
            && self.inhibitor == o.inhibitor
            && self.empty == o.empty
            && self.node.id() == o.node.id()
            && self.indent == o.indent
    }
}

/// One live head: a GSS node with its lexer configuration (see the [module docs](self)).
#[derive(Clone, Copy)]
pub struct Head<'a> {
    data: &'a HeadData,
}

impl<'a> Head<'a> {
    /// The GSS node (its LR state is [`GssNode::state`]).
    pub fn node(&self) -> &'a GssNode {
        &self.data.node
    }
    /// The lexer state ([`munch_lexer::Lexer::start`] when the lexeme is empty).
    pub fn lex_state(&self) -> LexState {
        self.data.lex
    }
    /// The state whose lexeme was just handed to the parser, if the next character must not
    /// extend it (then the lexeme is empty: the head reads its next byte with
    /// [`munch_lexer::Lexer::next_inhibited`]).
    pub fn inhibitor(&self) -> Option<LexState> {
        self.data.inhibitor
    }
    /// Whether no byte of the current lexeme has been read.
    pub fn lexeme_is_empty(&self) -> bool {
        self.data.empty
    }
    /// The indenter's context: indentation stack, bracket depth, width of the lexeme being
    /// read (the default without a post-lexer).
    pub fn indent(&self) -> &'a IndentCtx {
        &self.data.indent
    }
}

impl fmt::Debug for Head<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Head")
            .field("node", &self.data.node)
            .field("lex", &self.data.lex)
            .field("inhibitor", &self.data.inhibitor)
            .field("empty", &self.data.empty)
            .field("indent", &self.data.indent)
            .finish()
    }
}

type Heads = SmallVec<[HeadData; 2]>;

/// One remembered shift: the nodes of a group of heads that completed a lexeme in lexer state
/// `lex`, and the frontier the shift of its terminals built from them.
///
/// Inside a long lexeme that completes a terminal at every byte (a comment that is also an
/// end-of-statement terminal, a run of newlines), every byte hands the same terminals to the
/// same nodes, and the shift is a function of those immutable nodes: reusing its frontier
/// instead of rebuilding an identical one makes such bytes cost a lexer step. The memo travels
/// from snapshot to snapshot, so the next token of the comment hits it too.
#[derive(Clone)]
struct ShiftMemo {
    lex: LexState,
    /// Which part of the lexeme's terminals was shifted, and the indenter's action on a newline
    /// (0 without a post-lexer; see `shift_group`).
    tag: u32,
    from: SmallVec<[GssNodeId; 2]>,
    /// What the shift spent: a step with at least this much left builds the same frontier (the
    /// budget checks are monotone) and is charged the same; one with less recomputes.
    spent: rnglr::Allowance,
    to: SmallVec<[GssNode; 2]>,
}

/// The most shifts a state remembers (the most recently built first).
const SHIFT_MEMO_LEN: usize = 4;

struct Snapshot {
    heads: Heads,
    /// The state one commit before, `None` at the oldest snapshot kept.
    prev: Option<Arc<Snapshot>>,
    /// Commits since [`ParserState::new`].
    depth: usize,
    /// The depth of the oldest snapshot in this one's `prev` chain.
    floor: usize,
    accepting: OnceLock<bool>,
    /// Shared by the snapshots of commits that add nothing to it (most commits).
    memo: Arc<[ShiftMemo]>,
}

impl Snapshot {
    /// A snapshot with no history: commit 0 of its own chain.
    fn root(heads: Heads, memo: Arc<[ShiftMemo]>) -> Arc<Snapshot> {
        Arc::new(Snapshot {
            heads,
            prev: None,
            depth: 0,
            floor: 0,
            accepting: OnceLock::new(),
            memo,
        })
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        // Unlink the history iteratively: a long history must not recurse when freed.
        let mut prev = self.prev.take();
        while let Some(p) = prev {
            match Arc::try_unwrap(p) {
                Ok(mut s) => prev = s.prev.take(),
                Err(_) => break,
            }
        }
    }
}

/// An incremental parse: the heads over a persistent GSS, and the history for rollback.
///
/// `clone` is O(1) (one reference count); states are `Send + Sync`.
#[derive(Clone)]
pub struct ParserState {
    parser: Arc<Parser>,
    snap: Arc<Snapshot>,
}

impl fmt::Debug for ParserState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParserState")
            .field("commits", &self.snap.depth)
            .field("heads", &self.snap.heads.len())
            .finish()
    }
}

impl ParserState {
    /// The state before any text: one head at the GSS root with an empty lexeme (no head at all
    /// when the grammar's language is empty).
    pub fn new(parser: Arc<Parser>) -> Self {
        let head = HeadData {
            node: GssNode::root(),
            lex: parser.lexer().start(),
            inhibitor: None,
            empty: true,
            indent: IndentCtx::default(),
        };
        let mut heads: Heads = SmallVec::from_elem(head, 1);
        let mut cache = ShiftCache::new();
        let unlimited = &mut rnglr::Allowance::unlimited();
        heads.retain(|h| is_head_live(&parser, h, &mut cache, unlimited).unwrap_or(false));
        Self {
            parser,
            snap: Snapshot::root(heads, Arc::new([])),
        }
    }

    /// The compiled parser.
    pub fn parser(&self) -> &Arc<Parser> {
        &self.parser
    }

    /// The number of commits since [`ParserState::new`] (net of rollbacks).
    pub fn commit_len(&self) -> usize {
        self.snap.depth
    }

    /// Appends `bytes` to the text. On error the state is unchanged.
    pub fn commit_bytes(&mut self, bytes: &[u8]) -> Result<(), CommitError> {
        self.commit_inner(bytes, true)
    }

    /// Whether appending `bytes` succeeds and leaves the state live (the mask contract for one
    /// token), without naming the expected terminals on a rejection (brute-force maskers ask
    /// this for many tokens, most of them refused).
    pub(crate) fn allows(&self, bytes: &[u8]) -> bool {
        self.after(bytes).is_some_and(|next| next.is_live())
    }

    /// This state after appending `bytes`, when that succeeds (no expected terminals named on a
    /// rejection).
    pub(crate) fn after(&self, bytes: &[u8]) -> Option<ParserState> {
        let mut next = self.clone();
        next.commit_inner(bytes, false).ok().map(|()| next)
    }

    /// `explain`: name the expected terminals on a rejection, and keep the rollback history
    /// within `max_rollback` (a speculative commit, whose state is dropped, does neither: at the
    /// history's limit every token of a brute-force mask would otherwise copy it).
    fn commit_inner(&mut self, bytes: &[u8], explain: bool) -> Result<(), CommitError> {
        match self.commit_with(bytes, explain, true) {
            // The shortcut drops heads that die on the next byte, whose expected terminals
            // the rejection names: a rejection to explain is made again without it (the state
            // is unchanged on error).
            Err(e) if explain && matches!(e.kind(), CommitErrorKind::Rejected { .. }) => {
                self.commit_with(bytes, explain, false)
            }
            result => result,
        }
    }

    /// [`ParserState::commit_inner`]; `shortcut`: a lexeme that the next byte of `bytes`
    /// extends is not shifted.
    fn commit_with(
        &mut self,
        bytes: &[u8],
        explain: bool,
        shortcut: bool,
    ) -> Result<(), CommitError> {
        let p = &*self.parser;
        let lexer = p.lexer();
        let mut heads: Heads = self.snap.heads.clone();
        let mut next: Heads = SmallVec::new();
        // Copied only when a shift is added to it.
        let mut memo: Option<Vec<ShiftMemo>> = None;
        let mut work_left = p.max_work_per_commit;
        let indenting = p.indenter().is_some();
        for (offset, &b) in bytes.iter().enumerate() {
            let mut left = rnglr::Allowance {
                nodes: p.max_nodes_per_step,
                work: work_left,
            };
            // Heads completing a lexeme, grouped by the lexer state they completed it in (and
            // their indenter context).
            let mut groups: SmallVec<[Group; 2]> = SmallVec::new();
            for h in &heads {
                // An inhibited head is at the start of its lexeme; its first byte decides
                // whether the lexeme it handed over really ended (a pending state while that
                // byte's character is incomplete).
                let s = match h.inhibitor {
                    Some(inh) => lexer.next_inhibited(inh, b),
                    None => lexer.next(h.lex, b),
                };
                if lexer.is_dead(s) {
                    continue;
                }
                let indent = if indenting {
                    h.indent.read(b, h.empty)
                } else {
                    h.indent.clone()
                };
                if !lexer.accepted(s).is_empty() {
                    match groups.iter_mut().find(|g| g.lex == s && g.indent == indent) {
                        Some(g) => g.nodes.push(h.node.clone()),
                        None => groups.push(Group {
                            lex: s,
                            indent: indent.clone(),
                            nodes: SmallVec::from_elem(h.node.clone(), 1),
                        }),
                    }
                }
                if lexer.can_grow(s) {
                    push_head(
                        &mut next,
                        HeadData {
                            node: h.node.clone(),
                            lex: s,
                            inhibitor: None,
                            empty: false,
                            indent,
                        },
                    );
                }
            }
            // A lexeme that the commit's next byte extends (or whose look-ahead that byte
            // fails) did not end here: its inhibited heads would die on that byte, so they are
            // not made, unless nothing else goes on (then they carry the rejection to the byte
            // that kills them, as without this shortcut).
            if let Some(&after) = bytes.get(offset + 1).filter(|_| shortcut) {
                if !next.is_empty() && !groups.is_empty() {
                    groups.retain(|g| !lexer.is_dead(lexer.next_inhibited(g.lex, after)));
                }
            }
            for g in groups {
                let inhibitor = lexer.inhibits(g.lex).then_some(g.lex);
                let mut memos = Memos {
                    known: &self.snap.memo,
                    new: &mut memo,
                };
                for (node, indent) in shift_group(p, &g, &mut memos, &mut left)
                    .map_err(|e| p.budget_error(e, offset))?
                {
                    push_head(
                        &mut next,
                        HeadData {
                            node,
                            lex: lexer.start(),
                            inhibitor,
                            empty: true,
                            indent,
                        },
                    );
                }
            }
            if next.is_empty() {
                return Err(CommitError::new(CommitErrorKind::Rejected {
                    offset,
                    byte: Some(b),
                    expected: if explain {
                        expected(p, &heads)
                    } else {
                        Vec::new()
                    },
                }));
            }
            if next.len() > p.max_heads {
                return Err(CommitError::new(CommitErrorKind::Budget {
                    name: "max_heads",
                    limit: p.max_heads,
                    offset,
                }));
            }
            work_left = left.work;
            std::mem::swap(&mut heads, &mut next);
            next.clear();
        }
        let before = if explain { heads.clone() } else { Heads::new() };
        // The liveness checks spend what the bytes left of the commit's work budget.
        let mut left = rnglr::Allowance {
            nodes: usize::MAX,
            work: work_left,
        };
        let mut exceeded = None;
        with_cache(|cache| {
            heads.retain(|h| {
                exceeded.is_none()
                    && match is_head_live(p, h, cache, &mut left) {
                        Ok(live) => live,
                        Err(e) => {
                            exceeded = Some(e);
                            false
                        }
                    }
            })
        });
        if let Some(e) = exceeded {
            return Err(p.budget_error(e, bytes.len()));
        }
        if heads.is_empty() {
            return Err(CommitError::new(CommitErrorKind::Rejected {
                offset: bytes.len(),
                byte: None,
                expected: if explain {
                    expected(p, &before)
                } else {
                    Vec::new()
                },
            }));
        }
        self.snap = Arc::new(Snapshot {
            heads,
            prev: Some(self.snap.clone()),
            depth: self.snap.depth + 1,
            floor: self.snap.floor,
            accepting: OnceLock::new(),
            memo: match memo {
                Some(memo) => memo.into(),
                None => self.snap.memo.clone(),
            },
        });
        if explain && self.snap.depth - self.snap.floor > p.max_rollback.saturating_mul(2) {
            self.snap = rebase(&self.snap, p.max_rollback);
        }
        Ok(())
    }

    /// Appends the bytes of token `t` of `vocab`. On error the state is unchanged.
    pub fn commit_token(&mut self, vocab: &Vocabulary, t: TokenId) -> Result<(), CommitError> {
        let bytes = vocab
            .token_bytes(t)
            .ok_or_else(|| CommitError::new(CommitErrorKind::NotText(t)))?;
        self.commit_bytes(bytes)
    }

    /// Whether the text can still be continued: some head's lexeme can be completed to a
    /// terminal the parser can shift (or an ignored one), or its lexeme is empty and some
    /// terminal can be shifted or the input can end. This is the mask contract's liveness.
    pub fn is_live(&self) -> bool {
        // Heads that are not live are dropped at every commit.
        !self.snap.heads.is_empty()
    }

    /// Whether the text may end here: some head has an empty lexeme (any lexeme just completed
    /// was handed to the parser) and the parser accepts at the end of input.
    pub fn is_accepting(&self) -> bool {
        *self.snap.accepting.get_or_init(|| {
            with_cache(|cache| {
                self.snap
                    .heads
                    .iter()
                    .any(|h| h.empty && head_accepts(&self.parser, h, cache))
            })
        })
    }

    /// The terminals that can come next, by name (sorted, at most 32): those reachable from
    /// some head's lexeme that the parser can shift there, and the ignored ones. Error messages
    /// list them.
    pub fn expected(&self) -> Vec<String> {
        expected(&self.parser, &self.snap.heads)
    }

    /// The number of commits [`ParserState::rollback`] can undo: all of them up to
    /// [`super::ParserConfig::max_rollback`], and at times (history is dropped in batches) up to
    /// twice that.
    pub fn rollback_len(&self) -> usize {
        self.snap.depth - self.snap.floor
    }

    /// Restores exactly the state before the last `n` commits (at most
    /// [`ParserState::rollback_len`]).
    pub fn rollback(&mut self, n: usize) -> Result<(), RollbackError> {
        if n > self.rollback_len() {
            return Err(RollbackError {
                requested: n,
                available: self.rollback_len(),
                limit: (n <= self.snap.depth).then_some(self.parser.max_rollback),
            });
        }
        let mut s = self.snap.clone();
        for _ in 0..n {
            s = s.prev.clone().expect("depth counts the history");
        }
        self.snap = s;
        Ok(())
    }

    /// The live heads, for maskers.
    pub fn heads(&self) -> impl Iterator<Item = Head<'_>> {
        self.snap.heads.iter().map(|data| Head { data })
    }

    /// The same text with only the heads `keep` selects (no history: it cannot be rolled
    /// back). Masks of the whole state are unions over its heads; the indentation fix asks a
    /// masker about some of them.
    pub(crate) fn restricted(&self, mut keep: impl FnMut(Head<'_>) -> bool) -> ParserState {
        let heads: Heads = self
            .snap
            .heads
            .iter()
            .filter(|data| keep(Head { data }))
            .cloned()
            .collect();
        self.detached(heads)
    }

    /// The same heads with no inhibitor (as if the lexeme just completed could not be
    /// extended): the indentation fix reads a token's leading spaces from there.
    pub(crate) fn without_inhibitors(&self) -> ParserState {
        let heads: Heads = self
            .snap
            .heads
            .iter()
            .map(|h| HeadData {
                inhibitor: None,
                ..h.clone()
            })
            .collect();
        self.detached(heads)
    }

    /// The same state with no rollback history, for speculative commits whose state is
    /// dropped (a draft's validation, forced bytes): they neither copy nor trim the history.
    pub fn without_history(&self) -> ParserState {
        self.detached(self.snap.heads.clone())
    }

    /// A state of the same parser and shift memo with `heads` and no history.
    fn detached(&self, heads: Heads) -> ParserState {
        ParserState {
            parser: Arc::clone(&self.parser),
            snap: Snapshot::root(heads, self.snap.memo.clone()),
        }
    }

    /// The number of live heads.
    pub fn head_len(&self) -> usize {
        self.snap.heads.len()
    }
}

/// The snapshot `snap` with only its last `keep` commits of history: copies of those
/// snapshots (their heads and memos are shared, not copied) over a chain that ends there. The
/// old chain is freed once no other state holds it. A commit calls this when its chain has grown
/// to `2 * keep + 1` commits, so the copies cost O(1) per commit, amortised.
fn rebase(snap: &Arc<Snapshot>, keep: usize) -> Arc<Snapshot> {
    let mut kept: Vec<&Snapshot> = Vec::with_capacity(keep + 1);
    let mut at: &Snapshot = snap;
    kept.push(at);
    while kept.len() <= keep {
        at = at.prev.as_deref().expect("the chain is longer than `keep`");
        kept.push(at);
    }
    let floor = at.depth;
    let mut prev: Option<Arc<Snapshot>> = None;
    for s in kept.into_iter().rev() {
        let accepting = OnceLock::new();
        if let Some(&a) = s.accepting.get() {
            let _ = accepting.set(a);
        }
        prev = Some(Arc::new(Snapshot {
            heads: s.heads.clone(),
            prev,
            depth: s.depth,
            floor,
            accepting,
            memo: s.memo.clone(),
        }));
    }
    prev.expect("at least one snapshot")
}

/// The most entries the per-thread cache keeps before it starts over.
const THREAD_CACHE_LEN: usize = 1 << 14;

thread_local! {
    /// Liveness and acceptance answers shared by the commits and `is_accepting` calls of one
    /// thread. Its keys are node ids, never reused, so answers never go stale (whatever the
    /// parser or the state); it only has to be bounded. Successive commits ask about the same
    /// nodes (a lexing head keeps its node; the stack below the top rarely changes).
    static CACHE: RefCell<ShiftCache> = RefCell::new(ShiftCache::new());
}

/// Runs `f` with this thread's [`CACHE`].
fn with_cache<R>(f: impl FnOnce(&mut ShiftCache) -> R) -> R {
    CACHE.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.len() > THREAD_CACHE_LEN {
            cache.clear();
        }
        f(&mut cache)
    })
}

/// Whether the input may end at empty head `h`: with an indenter, after one `_DEDENT` per
/// open level (Lark's indenter emits them at the end of the input).
fn head_accepts(p: &Parser, h: &HeadData, cache: &mut ShiftCache) -> bool {
    let Some(ind) = p.indenter() else {
        return p.can_accept(&h.node, cache);
    };
    // The first `_DEDENT` is the lookahead of the reductions from the head's top state: a
    // state with no action on it shifts nothing (the common case: after a name, whose
    // statement needs its newline first), and the GSS need not be read.
    if !h.indent.levels().is_empty()
        && p.tables()
            .actions_at(h.node.state(), ind.dedent().as_u32())
            .is_empty()
    {
        return false;
    }
    let mut frontier: SmallVec<[GssNode; 2]> = SmallVec::from_elem(h.node.clone(), 1);
    for _ in h.indent.levels() {
        frontier = match p.shift_frontier(&frontier, ind.dedent()) {
            Ok(f) if !f.is_empty() => f,
            _ => return false,
        };
    }
    frontier.iter().any(|n| p.can_accept(n, cache))
}

/// Heads that completed a lexeme in lexer state `lex` at the same byte with the same
/// indenter context: they are parsed together.
struct Group {
    lex: LexState,
    indent: IndentCtx,
    nodes: SmallVec<[GssNode; 2]>,
}

/// The shift memo of the snapshot, and this commit's copy once it has added to it.
struct Memos<'a> {
    known: &'a Arc<[ShiftMemo]>,
    new: &'a mut Option<Vec<ShiftMemo>>,
}

impl Memos<'_> {
    /// `seq` (terminal sets shifted one after the other) onto `nodes`, or the remembered
    /// frontier of the same shift.
    fn shift(
        &mut self,
        p: &Parser,
        lex: LexState,
        tag: u32,
        nodes: &[GssNode],
        seq: &[&[u32]],
        left: &mut rnglr::Allowance,
    ) -> Result<SmallVec<[GssNode; 2]>, rnglr::Exceeded> {
        let from: SmallVec<[GssNodeId; 2]> = nodes.iter().map(GssNode::id).collect();
        let known: &[ShiftMemo] = self.new.as_deref().unwrap_or(self.known);
        if let Some(m) = known
            .iter()
            .find(|m| m.lex == lex && m.tag == tag && m.from == from && left.covers(&m.spent))
        {
            left.charge(&m.spent);
            return Ok(m.to.clone());
        }
        let before = *left;
        let mut frontier: SmallVec<[GssNode; 2]> = SmallVec::from(nodes);
        for ks in seq {
            if frontier.is_empty() {
                break;
            }
            frontier = rnglr::shift(p.tables(), &frontier, ks, left)?;
        }
        let memo = self.new.get_or_insert_with(|| self.known.to_vec());
        memo.truncate(SHIFT_MEMO_LEN - 1);
        memo.insert(
            0,
            ShiftMemo {
                lex,
                tag,
                from,
                spent: before.minus(left),
                to: frontier.clone(),
            },
        );
        Ok(frontier)
    }
}

/// The heads (nodes with their indenter contexts, lexemes empty) that a group's completed
/// lexeme leads to: ignored terminals keep the nodes; the others are shifted, each bracket
/// kind apart (it changes the bracket depth) and the newline terminal through the indenter's
/// action (see the `indent` module).
fn shift_group(
    p: &Parser,
    g: &Group,
    memos: &mut Memos<'_>,
    left: &mut rnglr::Allowance,
) -> Result<SmallVec<[(GssNode, IndentCtx); 2]>, rnglr::Exceeded> {
    let ind = p.indenter();
    let at_start = g.indent.at_lexeme_start();
    let mut out: SmallVec<[(GssNode, IndentCtx); 2]> = SmallVec::new();
    // Non-bracket, open and close terminals (without an indenter: every terminal is plain).
    let mut parts: [SmallVec<[u32; 4]>; 3] = Default::default();
    let mut ignored = false;
    let mut newline = false;
    for &t in p.lexer().accepted(g.lex) {
        if p.is_ignored(t) {
            ignored = true;
            continue;
        }
        match ind {
            None => parts[0].push(t.as_u32()),
            Some(i) if t == i.newline() => newline = true,
            Some(i) => match i.bracket(t) {
                Bracket::None => parts[0].push(t.as_u32()),
                Bracket::Open => parts[1].push(t.as_u32()),
                Bracket::Close => parts[2].push(t.as_u32()),
            },
        }
    }
    if ignored {
        out.extend(g.nodes.iter().map(|n| (n.clone(), at_start.clone())));
    }
    for (tag, (ks, bracket)) in parts
        .iter()
        .zip([Bracket::None, Bracket::Open, Bracket::Close])
        .enumerate()
    {
        if ks.is_empty() {
            continue;
        }
        let shifted = memos.shift(p, g.lex, tag as u32, &g.nodes, &[&ks[..]], left)?;
        let ctx = g.indent.after_bracket(bracket);
        out.extend(shifted.into_iter().map(|n| (n, ctx.clone())));
    }
    if let (true, Some(i)) = (newline, ind) {
        let action = g.indent.nl_action();
        let nl = [i.newline().as_u32()];
        let indent = [i.indent().as_u32()];
        let dedent = [i.dedent().as_u32()];
        let tag = 8 + action.tag();
        let shifted = match action {
            NlAction::Error => SmallVec::new(),
            NlAction::Drop => g.nodes.clone(),
            NlAction::Indent => memos.shift(p, g.lex, tag, &g.nodes, &[&nl, &indent], left)?,
            NlAction::Dedent(k) => {
                let mut seq: SmallVec<[&[u32]; 4]> = SmallVec::from_elem(&nl[..], 1);
                seq.extend((0..k).map(|_| &dedent[..]));
                memos.shift(p, g.lex, tag, &g.nodes, &seq, left)?
            }
        };
        let ctx = g.indent.after_nl(action);
        out.extend(shifted.into_iter().map(|n| (n, ctx.clone())));
    }
    Ok(out)
}

fn push_head(heads: &mut Heads, h: HeadData) {
    if !heads.iter().any(|x| x.same(&h)) {
        heads.push(h);
    }
}

/// The mask contract's liveness for one head, spending from `left` a unit per terminal tried
/// and the parser's work to answer for it.
///
/// With an indenter, a lexeme that may still become the newline terminal keeps a head inside
/// brackets live (the newline will be dropped); elsewhere the context plays no part.
fn is_head_live(
    p: &Parser,
    h: &HeadData,
    cache: &mut ShiftCache,
    left: &mut rnglr::Allowance,
) -> Result<bool, rnglr::Exceeded> {
    if h.empty {
        if p.can_continue_within(&h.node, cache, left)? {
            return Ok(true);
        }
        // With an indenter the text may also end here: the final DEDENTs (one per level, which
        // `can_continue` does not try: they follow no newline) and then the end of input.
        return Ok(match p.indenter() {
            Some(_) => {
                left.spend(1 + h.indent.levels().len())?;
                head_accepts(p, h, cache)
            }
            None => false,
        });
    }
    let dropped_nl = match p.indenter() {
        Some(i) if h.indent.paren_level() > 0 => Some(i.newline()),
        _ => None,
    };
    for t in p.lexer().reachable(h.lex).iter() {
        left.spend(1)?;
        if p.is_ignored(t)
            || Some(t) == dropped_nl
            || p.can_shift_within(&h.node, t, cache, left)?
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The names of the terminals some head could have completed next.
fn expected(p: &Parser, heads: &[HeadData]) -> Vec<String> {
    let mut cache = ShiftCache::new();
    let mut names: Vec<String> = Vec::new();
    for h in heads {
        for t in p.lexer().reachable(h.lex).iter() {
            if p.is_ignored(t) || p.can_shift(&h.node, t, &mut cache) {
                // A stand-in is named as what it is read as here: its literal where that
                // shifts, else its regex.
                let named = match p.lexer().stand_ins().iter().find(|s| s.terminal == t) {
                    Some(s) if p.can_shift(&h.node, s.literal, &mut cache) => s.literal,
                    Some(s) => s.regex,
                    None => t,
                };
                names.push(p.terminal_name(named).to_string());
            }
        }
    }
    names.sort();
    names.dedup();
    names.truncate(32);
    names
}

// Compile-time checks of the thread-safety promises.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ParserState>();
    assert_send_sync::<Parser>();
    assert_send_sync::<GssNode>();
};
