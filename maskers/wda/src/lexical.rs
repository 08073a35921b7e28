//! The terminal side: spans of [`TokenSpans`] turned into continuations, and each lexer
//! point's initial weighted item set.
//!
//! A span `(e1 … ek, end)` becomes the continuation chain `Lex(e1, Lex(e2, … End(end)))`:
//!
//! - `End(end)` offers `(T, FIN)` for every terminal `T` the open lexeme can still complete
//!   ([`Lexer::reachable`]) that the parser can shift somewhere, and succeeds outright if it
//!   can complete an `%ignore`d terminal (the head stays live whatever its stack);
//! - `Lex(e, κ)` offers `(T, κ)` for every terminal of the lexeme (`accepted(e)`, ties all
//!   kept: the GLR parser follows each) and, if one of them is ignored, everything `κ` offers
//!   (that branch leaves the stack alone). After `T`, `κ` is read as the states `T`'s shift
//!   pushes see it: controls that none of them can take are dropped, and a stand-in that all
//!   of them read as its regex ([`munch_glr::lr::RegexReadings`]) is the regex.
//!
//! A span with forks `(f1 … fj, p)` (other readings of a token whose bytes are read several
//! ways until more bytes decide: one that ends inside a character that may or may not extend
//! the last complete lexeme, or while the longer reading of a lexeme the lexer may go back
//! to, a lazy one or one of literals, is undecided) ends in
//! `End(end)` or any `Lex(f1, … Lex(fj, End(p)))`: the continuation offering what any offers.
//!
//! This is the commit's semantics for one head: lexemes completed inside the token are shifted
//! (or skipped when ignored) in order, and after the last byte the head is live iff its open
//! lexeme can complete a terminal the stack can shift or an ignored one (a stack that has just
//! shifted a terminal can always go on: its LR states spell a viable prefix).
//!
//! Per point, the classes are grouped by the continuation their span starts (many spans share
//! one: they differ only in states with the same reachable terminals), and each group's
//! classes become one weight.

use std::sync::Arc;

use ahash::AHashMap;
use munch_glr::lr::{Action, LrState};
use munch_lexer::{LexState, TerminalId};
use munch_tokens::{ClassId, LexPoint, PointId, Span, SpanId, SpanIds, TokenSpans};

use crate::bits::{Weight, Weights, EMPTY};
use crate::template::{item, Cont, Conts, Item, FIN, INIT, NEVER};
use munch_glr::lr::ClassTables;

/// More continuations than the budget allows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TooManyControls;

/// The initial weighted item sets of every point, and the continuations they use.
pub(crate) struct Lexical {
    pub(crate) conts: Arc<Conts>,
    pub(crate) points: Vec<LexPoint>,
    /// Per point: its items and the classes allowed before reading any stack.
    pub(crate) initial: Vec<(Vec<(Item, Weight)>, Weight)>,
}

/// Builds continuations: the tables they are built from, and memos of what was built. The
/// continuations themselves live in a [`Conts`] passed to each call, so that the on-demand
/// automaton can keep them in its summaries' tables and add to them as points come.
pub(crate) struct ContBuilder {
    lr: Arc<ClassTables>,
    /// Per terminal class: whether some state has an action on it.
    usable: Vec<bool>,
    /// Per terminal class `T`: the classes some state reached by shifting `T` has an action on.
    follow: Follow,
    end_memo: AHashMap<LexState, Cont>,
    lex_memo: AHashMap<(LexState, Cont), Cont>,
    after_memo: AHashMap<(u32, Cont), Cont>,
    /// Per terminal class `T`: the states a shift of `T` pushes, where the controls that
    /// follow it start ([`ContBuilder::read_after`]).
    targets: Vec<Vec<u32>>,
    /// Per `(T, T2)`: the class control `T2` is read as in every state a shift of `T` pushes.
    read_memo: AHashMap<(u32, u32), u32>,
}

/// Per terminal class `T`, a bitset over lookahead classes: those some state reached by
/// shifting `T` has an action on.
struct Follow {
    words: usize,
    bits: Vec<u64>,
}

impl Follow {
    /// Whether class `t2` is in class `t`'s row.
    fn contains(&self, t: u32, t2: u32) -> bool {
        self.bits[t as usize * self.words + t2 as usize / 64] >> (t2 % 64) & 1 != 0
    }
}

impl ContBuilder {
    fn end(&mut self, conts: &mut Conts, end: LexState) -> Cont {
        if let Some(&k) = self.end_memo.get(&end) {
            return k;
        }
        let parser = &**self.lr.parser();
        let lexer = parser.lexer();
        let mut ctrls = Vec::new();
        let mut succ = false;
        for t in lexer.reachable(end).iter() {
            if parser.is_ignored(t) {
                succ = true;
            } else if let Some(t) = self.usable(t) {
                ctrls.push((t, FIN));
            }
        }
        let k = conts.intern(ctrls, succ);
        self.end_memo.insert(end, k);
        k
    }

    fn lex(&mut self, conts: &mut Conts, e: LexState, then: Cont) -> Cont {
        if then == NEVER {
            return NEVER;
        }
        if let Some(&k) = self.lex_memo.get(&(e, then)) {
            return k;
        }
        let lr = Arc::clone(&self.lr);
        let parser = &**lr.parser();
        let lexer = parser.lexer();
        let mut ctrls: Vec<(u32, Cont)> = Vec::new();
        let mut ignored = false;
        for &t in lexer.accepted(e) {
            if parser.is_ignored(t) {
                ignored = true;
            } else if let Some(t) = self.usable(t) {
                let after = self.after(conts, t, then);
                if after != NEVER {
                    ctrls.push((t, after));
                }
            }
        }
        if ignored {
            ctrls.extend_from_slice(conts.offers(then));
        }
        let succ = ignored && conts.succeeds(then);
        let k = conts.intern(ctrls, succ);
        self.lex_memo.insert((e, then), k);
        k
    }

    /// `κ` as seen right after shifting `t`: without the controls whose terminal has no action
    /// in any state a shift of `t` leads to (the parser would reject it at once, on every
    /// stack), and with each stand-in read as its regex where it is so in all those states
    /// ([`ContBuilder::read_after`]), so that continuations that differ only there become one.
    fn after(&mut self, conts: &mut Conts, t: u32, k: Cont) -> Cont {
        if k == FIN || k == NEVER {
            return k;
        }
        if let Some(&a) = self.after_memo.get(&(t, k)) {
            return a;
        }
        let mut kept: Vec<(u32, Cont)> = conts
            .offers(k)
            .iter()
            .copied()
            .filter(|&(t2, _)| self.follow.contains(t, t2))
            .collect();
        for c in &mut kept {
            c.0 = self.read_after(t, c.0);
        }
        let succ = conts.succeeds(k);
        let a = conts.intern(kept, succ);
        self.after_memo.insert((t, k), a);
        a
    }

    /// The class control `t2` is read as right after a shift of `t`: a stand-in's class is its
    /// regex's when it is so in every state such a shift pushes (a keyword after `.`), so that
    /// tokens that differ only there share their continuations.
    fn read_after(&mut self, t: u32, t2: u32) -> u32 {
        let readings = self.lr.regex_readings();
        if readings.is_empty() {
            return t2;
        }
        if let Some(&r) = self.read_memo.get(&(t, t2)) {
            return r;
        }
        let targets = &self.targets[t as usize];
        let first = targets.first().map_or(t2, |&to| readings.reading(t2, to));
        let r = if targets.iter().all(|&to| readings.reading(t2, to) == first) {
            first
        } else {
            t2
        };
        self.read_memo.insert((t, t2), r);
        r
    }

    /// What `a` or `b` offers: a span with two readings succeeds if either does.
    fn either(conts: &mut Conts, a: Cont, b: Cont) -> Cont {
        if a == NEVER || a == b {
            return b;
        }
        if b == NEVER {
            return a;
        }
        let mut ctrls = conts.offers(a).to_vec();
        ctrls.extend_from_slice(conts.offers(b));
        let succ = conts.succeeds(a) || conts.succeeds(b);
        conts.intern(ctrls, succ)
    }

    /// The class of the parser's terminal `t` if it can reach the parser somewhere (ignored
    /// terminals never do).
    fn usable(&self, t: TerminalId) -> Option<u32> {
        if self.lr.parser().is_ignored(t) {
            return None;
        }
        let c = self.lr.terminal(t)?;
        self.usable[c as usize].then_some(c)
    }
}

impl ContBuilder {
    /// The builder for `lr`'s grammar (the LR tables' usable terminals and follow sets).
    pub(crate) fn new(lr: Arc<ClassTables>) -> ContBuilder {
        // Terminals and states are the classes of `lr`.
        let tables = lr.tables();
        let terminal_len = tables.eof_index() as usize;
        // Lookahead bitsets, a whole state's at once (a keyword set's reductions hold
        // thousands of lookaheads each, in one shared set).
        let words = (tables.eof_index() as usize + 1).div_ceil(64);
        let states = (0..tables.state_len()).map(|s| LrState::new(s).expect("LR state ids fit"));
        // A terminal is usable if the parser can take it somewhere: some state has an action
        // on it (ignored terminals never reach the parser).
        let mut any = vec![0u64; words];
        for st in states.clone() {
            tables.add_state_lookaheads(st, &mut any);
        }
        let usable = (0..terminal_len)
            .map(|t| any[t / 64] >> (t % 64) & 1 != 0)
            .collect();
        let mut follow = Follow {
            words,
            bits: vec![0u64; terminal_len * words],
        };
        let mut targets: Vec<Vec<u32>> = vec![Vec::new(); terminal_len];
        for st in states {
            for (k, a) in tables.state_shifts(st) {
                if let (Action::Shift(to), true) = (a, (k as usize) < terminal_len) {
                    let row = &mut follow.bits[k as usize * words..(k as usize + 1) * words];
                    tables.add_state_lookaheads(to, row);
                    targets[k as usize].push(to.as_u32());
                }
            }
        }
        for t in &mut targets {
            t.sort_unstable();
            t.dedup();
        }
        ContBuilder {
            lr,
            usable,
            follow,
            end_memo: AHashMap::new(),
            lex_memo: AHashMap::new(),
            after_memo: AHashMap::new(),
            targets,
            read_memo: AHashMap::new(),
        }
    }
}

/// Makes one point's initial items at a time, remembering each span's continuation: what the
/// eager build runs over every point, and the on-demand automaton at a point's first use. In
/// two steps: each class's continuation at the point ([`PointBuilder::conts_of`], the work,
/// which needs only the continuations), then the items of the groups of classes sharing one
/// ([`Groups::items`], which needs the weights).
pub(crate) struct PointBuilder {
    cb: ContBuilder,
    /// Per span of the eager build's spans: the continuation it starts, or [`UNSET`]. Span
    /// ids are the table's, the same at every point (the spans are interned by content), so
    /// what it holds stays true for the whole build.
    root_of: Vec<u32>,
    groups: Groups,
}

/// Groups a point's classes by their continuation, each group one weight: the scratch of
/// [`Groups::items`].
#[derive(Default)]
pub(crate) struct Groups {
    /// Per continuation: its group at the current point (reset after each point), so that the
    /// loop over every class hashes nothing.
    slot: Vec<u32>,
    group_conts: Vec<Cont>,
    /// Group `g`'s classes: `bits[g * words..]`.
    bits: Vec<u64>,
    /// The classes of the groups that succeed outright.
    yes: Vec<u64>,
}

/// A span whose continuation is not known yet (see [`PointBuilder::conts_of`]).
pub(crate) const UNSET: u32 = u32::MAX;

impl PointBuilder {
    pub(crate) fn new(lr: Arc<ClassTables>) -> PointBuilder {
        PointBuilder {
            cb: ContBuilder::new(lr),
            root_of: Vec::new(),
            groups: Groups::default(),
        }
    }

    /// Into `out`, per class, the continuation its span at point `p` starts, or [`NEVER`].
    fn row(&mut self, conts: &mut Conts, spans: &TokenSpans, p: PointId, out: &mut Vec<Cont>) {
        let mut root_of = std::mem::take(&mut self.root_of);
        root_of.resize(spans.span_len(), UNSET);
        out.clear();
        let span_of = |c| spans.span_of(p, c);
        self.conts_of(
            conts,
            spans,
            0..spans.classes().len(),
            span_of,
            &mut root_of,
            out,
        );
        self.root_of = root_of;
    }

    /// Appends to `out`, per class of `classes`, the continuation its span at the point starts
    /// (`span_of` gives the spans, of `spans`; `None`: dead there), or [`NEVER`]. `root_of`
    /// remembers each span's, per span of `spans` ([`UNSET`] when not known yet); a span id
    /// names one content, so the caller keeps it across points and calls.
    pub(crate) fn conts_of(
        &mut self,
        conts: &mut Conts,
        spans: &impl SpanTable,
        classes: std::ops::Range<usize>,
        span_of: impl Fn(ClassId) -> Option<SpanId>,
        root_of: &mut [u32],
        out: &mut Vec<Cont>,
    ) {
        out.reserve(classes.len());
        for c in classes {
            let Some(s) = span_of(ClassId::from_usize(c)) else {
                out.push(NEVER);
                continue;
            };
            let mut k = root_of[s.as_usize()];
            if k == UNSET {
                k = span_root(&mut self.cb, conts, spans, s);
                root_of[s.as_usize()] = k;
            }
            out.push(k);
        }
    }

    /// Approximate heap bytes of the memos.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.root_of.capacity() * 4
            + self.groups.heap_bytes()
            + (self.cb.end_memo.capacity()
                + self.cb.lex_memo.capacity() * 2
                + self.cb.after_memo.capacity() * 2
                + self.cb.read_memo.capacity())
                * 12
            + self
                .cb
                .targets
                .iter()
                .map(|t| t.capacity() * 4 + 24)
                .sum::<usize>()
    }
}

impl Groups {
    /// The initial items of a point whose classes start the continuations `cont_of` (class
    /// `c`'s at `c`, [`NEVER`] where dead), and the classes allowed before reading any stack,
    /// as weights of `weights` (class sets, bit `c` for class `c`): the classes are grouped by
    /// continuation (many spans share one: they differ only in states with the same reachable
    /// terminals), each group one weight.
    pub(crate) fn items(
        &mut self,
        conts: &Conts,
        cont_of: &[Cont],
        weights: &mut Weights,
    ) -> (Vec<(Item, Weight)>, Weight) {
        let words = weights.words();
        for (c, &k) in cont_of.iter().enumerate() {
            if k == NEVER {
                continue;
            }
            if self.slot.len() <= k as usize {
                self.slot.resize(k as usize + 1, UNSET);
            }
            let mut g = self.slot[k as usize];
            if g == UNSET {
                g = self.group_conts.len() as u32;
                self.slot[k as usize] = g;
                self.group_conts.push(k);
                self.bits.resize(self.bits.len() + words, 0);
            }
            self.bits[g as usize * words + c / 64] |= 1 << (c % 64);
        }
        let mut items: Vec<(Item, Weight)> = Vec::new();
        // The classes allowed outright, interned once (not each partial union).
        self.yes.clear();
        self.yes.resize(words, 0);
        let mut order: Vec<u32> = (0..self.group_conts.len() as u32).collect();
        order.sort_unstable_by_key(|&g| self.group_conts[g as usize]);
        for g in order {
            let k = self.group_conts[g as usize];
            let bits = &self.bits[g as usize * words..(g as usize + 1) * words];
            if conts.succeeds(k) {
                for (y, b) in self.yes.iter_mut().zip(bits) {
                    *y |= b;
                }
            }
            if conts.offers(k).is_empty() {
                continue;
            }
            let w = weights.intern_words(bits);
            for &(t, k2) in conts.offers(k) {
                items.push((item(t, INIT, k2), w));
            }
        }
        let yes = if self.yes.iter().all(|&y| y == 0) {
            EMPTY
        } else {
            weights.intern_words(&self.yes)
        };
        for &k in &self.group_conts {
            self.slot[k as usize] = UNSET;
        }
        self.group_conts.clear();
        self.bits.clear();
        (items, yes)
    }

    /// Approximate heap bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.slot.capacity() * 4 + self.bits.capacity() * 8
    }
}

impl Lexical {
    /// Continuations of every span used from some point, and every point's initial items.
    pub(crate) fn build(
        lr: &Arc<ClassTables>,
        spans: &TokenSpans,
        weights: &mut Weights,
        max_continuations: usize,
    ) -> Result<Lexical, TooManyControls> {
        let mut pb = PointBuilder::new(Arc::clone(lr));
        let mut conts = Conts::new();
        let mut initial: Vec<(Vec<(Item, Weight)>, Weight)> =
            Vec::with_capacity(spans.points().len());
        // Points whose classes start the same continuations have the same items (inhibited
        // points often end their lexeme alike): the points made so far by the hash of their
        // rows, a row compared whole (made again, all its spans' continuations known) before
        // its items are taken. A point's items are its classes grouped by the continuation
        // their span starts (many spans share one: they differ only in states with the same
        // reachable terminals), each group one weight.
        let mut by_row: AHashMap<u64, Vec<usize>> = AHashMap::new();
        let (mut row, mut other) = (Vec::new(), Vec::new());
        let hasher = ahash::RandomState::with_seeds(1, 2, 3, 4);
        for p in 0..spans.points().len() {
            pb.row(&mut conts, spans, PointId::from_usize(p), &mut row);
            let h = hasher.hash_one(&row);
            let same = by_row.get(&h).and_then(|earlier| {
                earlier.iter().copied().find(|&q| {
                    pb.row(&mut conts, spans, PointId::from_usize(q), &mut other);
                    other == row
                })
            });
            let made = match same {
                Some(q) => initial[q].clone(),
                None => {
                    by_row.entry(h).or_default().push(p);
                    pb.groups.items(&conts, &row, weights)
                }
            };
            initial.push(made);
            if conts.len() > max_continuations {
                return Err(TooManyControls);
            }
        }
        Ok(Lexical {
            conts: Arc::new(conts),
            points: spans.points().to_vec(),
            initial,
        })
    }
}

/// Where a point's spans are read: every point's ([`TokenSpans`]) or those of the points walked
/// one at a time ([`SpanIds`]).
pub(crate) trait SpanTable {
    fn span(&self, id: SpanId) -> Span<'_>;
}

impl SpanTable for TokenSpans {
    fn span(&self, id: SpanId) -> Span<'_> {
        TokenSpans::span(self, id)
    }
}

impl SpanTable for SpanIds {
    fn span(&self, id: SpanId) -> Span<'_> {
        SpanIds::span(self, id)
    }
}

fn span_root(cb: &mut ContBuilder, conts: &mut Conts, spans: &impl SpanTable, s: SpanId) -> Cont {
    let span = spans.span(s);
    let mut k = cb.end(conts, span.end);
    for fork in span.forks {
        // Another reading: more lexemes, then a pending state.
        let mut other = cb.end(conts, fork.state);
        for &e in fork.lexemes.iter().rev() {
            other = cb.lex(conts, e, other);
        }
        k = ContBuilder::either(conts, k, other);
    }
    for &e in span.emitted.iter().rev() {
        k = cb.lex(conts, e, k);
    }
    k
}
