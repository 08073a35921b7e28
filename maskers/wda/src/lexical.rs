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
//!   (that branch leaves the stack alone).
//!
//! A span with forks `(f1 … fj, p)` (other readings of a token whose bytes are read several
//! ways until more bytes decide: one that ends inside a character that may or may not extend
//! the last complete lexeme, or while a lazy lexeme's longer reading is undecided) ends in
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

use ahash::AHashMap;
use munch_glr::lr::{Action, LrState};
use munch_glr::parser::Parser;
use munch_lexer::{LexState, TerminalId};
use munch_tokens::{ClassId, LexPoint, PointId, SpanId, TokenSpans};

use crate::bits::{Weight, Weights, EMPTY};
use crate::template::{item, Cont, Conts, Item, FIN, INIT, NEVER};
use munch_glr::lr::ClassTables;

/// More continuations than the budget allows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TooManyControls;

/// The initial weighted item sets of every point, and the continuations they use.
pub(crate) struct Lexical {
    pub(crate) conts: std::sync::Arc<Conts>,
    pub(crate) points: Vec<LexPoint>,
    /// Per point: its items and the classes allowed before reading any stack.
    pub(crate) initial: Vec<(Vec<(Item, Weight)>, Weight)>,
}

struct ContBuilder<'a> {
    parser: &'a Parser,
    lr: &'a ClassTables,
    /// Per terminal class: whether some state has an action on it.
    usable: Vec<bool>,
    /// Per terminal class `T`: the classes some state reached by shifting `T` has an action on.
    follow: Follow,
    conts: Conts,
    end_memo: AHashMap<LexState, Cont>,
    lex_memo: AHashMap<(LexState, Cont), Cont>,
    after_memo: AHashMap<(u32, Cont), Cont>,
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

impl ContBuilder<'_> {
    fn end(&mut self, end: LexState) -> Cont {
        if let Some(&k) = self.end_memo.get(&end) {
            return k;
        }
        let lexer = self.parser.lexer();
        let mut ctrls = Vec::new();
        let mut succ = false;
        for t in lexer.reachable(end).iter() {
            if self.parser.is_ignored(t) {
                succ = true;
            } else if let Some(t) = self.usable(t) {
                ctrls.push((t, FIN));
            }
        }
        let k = self.conts.intern(ctrls, succ);
        self.end_memo.insert(end, k);
        k
    }

    fn lex(&mut self, e: LexState, then: Cont) -> Cont {
        if then == NEVER {
            return NEVER;
        }
        if let Some(&k) = self.lex_memo.get(&(e, then)) {
            return k;
        }
        let lexer = self.parser.lexer();
        let mut ctrls: Vec<(u32, Cont)> = Vec::new();
        let mut ignored = false;
        for &t in lexer.accepted(e) {
            if self.parser.is_ignored(t) {
                ignored = true;
            } else if let Some(t) = self.usable(t) {
                let after = self.after(t, then);
                if after != NEVER {
                    ctrls.push((t, after));
                }
            }
        }
        if ignored {
            ctrls.extend_from_slice(self.conts.offers(then));
        }
        let succ = ignored && self.conts.succeeds(then);
        let k = self.conts.intern(ctrls, succ);
        self.lex_memo.insert((e, then), k);
        k
    }

    /// `κ` as seen right after shifting `t`: without the controls whose terminal has no action
    /// in any state a shift of `t` leads to (the parser would reject it at once, on every
    /// stack), so continuations that differ only in such controls become one.
    fn after(&mut self, t: u32, k: Cont) -> Cont {
        if k == FIN || k == NEVER {
            return k;
        }
        if let Some(&a) = self.after_memo.get(&(t, k)) {
            return a;
        }
        let follow = &self.follow;
        let kept: Vec<(u32, Cont)> = self
            .conts
            .offers(k)
            .iter()
            .copied()
            .filter(|&(t2, _)| follow.contains(t, t2))
            .collect();
        let succ = self.conts.succeeds(k);
        let a = self.conts.intern(kept, succ);
        self.after_memo.insert((t, k), a);
        a
    }

    /// What `a` or `b` offers: a span with two readings succeeds if either does.
    fn either(&mut self, a: Cont, b: Cont) -> Cont {
        if a == NEVER || a == b {
            return b;
        }
        if b == NEVER {
            return a;
        }
        let mut ctrls = self.conts.offers(a).to_vec();
        ctrls.extend_from_slice(self.conts.offers(b));
        let succ = self.conts.succeeds(a) || self.conts.succeeds(b);
        self.conts.intern(ctrls, succ)
    }

    /// The class of the parser's terminal `t` if it can reach the parser somewhere (ignored
    /// terminals never do).
    fn usable(&self, t: TerminalId) -> Option<u32> {
        if self.parser.is_ignored(t) {
            return None;
        }
        let c = self.lr.terminal(t)?;
        self.usable[c as usize].then_some(c)
    }
}

impl Lexical {
    /// Continuations of every span used from some point, and every point's initial items.
    pub(crate) fn build(
        lr: &ClassTables,
        spans: &TokenSpans,
        weights: &mut Weights,
        max_continuations: usize,
    ) -> Result<Lexical, TooManyControls> {
        let parser = &**lr.parser();
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
        for st in states {
            for (k, a) in tables.state_shifts(st) {
                if let (Action::Shift(to), true) = (a, (k as usize) < terminal_len) {
                    let row = &mut follow.bits[k as usize * words..(k as usize + 1) * words];
                    tables.add_state_lookaheads(to, row);
                }
            }
        }
        let mut cb = ContBuilder {
            parser,
            lr,
            usable,
            follow,
            conts: Conts::new(),
            end_memo: AHashMap::new(),
            lex_memo: AHashMap::new(),
            after_memo: AHashMap::new(),
        };
        const UNSET: u32 = u32::MAX;
        let mut root_of: Vec<u32> = vec![UNSET; spans.span_len()];
        let class_len = spans.classes().len();
        let words = weights.words();
        let mut initial = Vec::with_capacity(spans.points().len());
        // Per point, the classes grouped by the continuation their span starts: group `g` is
        // `bits[g * words..]`, `slot[k]` the group of continuation `k` (reset after each
        // point), so the loop over every (point, class) hashes nothing.
        let mut slot: Vec<u32> = Vec::new();
        let mut group_conts: Vec<Cont> = Vec::new();
        let mut bits: Vec<u64> = Vec::new();
        for p in 0..spans.points().len() {
            let pid = PointId::from_usize(p);
            for c in 0..class_len {
                let Some(s) = spans.span_of(pid, ClassId::from_usize(c)) else {
                    continue;
                };
                let mut k = root_of[s.as_usize()];
                if k == UNSET {
                    k = span_root(&mut cb, spans, s);
                    root_of[s.as_usize()] = k;
                }
                if k == NEVER {
                    continue;
                }
                if slot.len() <= k as usize {
                    slot.resize(k as usize + 1, UNSET);
                }
                let mut g = slot[k as usize];
                if g == UNSET {
                    g = group_conts.len() as u32;
                    slot[k as usize] = g;
                    group_conts.push(k);
                    bits.resize(bits.len() + words, 0);
                }
                bits[g as usize * words + c / 64] |= 1 << (c % 64);
            }
            let mut items: Vec<(Item, Weight)> = Vec::new();
            let mut yes = EMPTY;
            let mut order: Vec<u32> = (0..group_conts.len() as u32).collect();
            order.sort_unstable_by_key(|&g| group_conts[g as usize]);
            for g in order {
                let k = group_conts[g as usize];
                let w = weights.intern_words(&bits[g as usize * words..(g as usize + 1) * words]);
                if cb.conts.succeeds(k) {
                    yes = weights.union(yes, w);
                }
                for &(t, k2) in cb.conts.offers(k) {
                    items.push((item(t, INIT, k2), w));
                }
            }
            for &k in &group_conts {
                slot[k as usize] = UNSET;
            }
            group_conts.clear();
            bits.clear();
            initial.push((items, yes));
            if cb.conts.len() > max_continuations {
                return Err(TooManyControls);
            }
        }
        Ok(Lexical {
            conts: std::sync::Arc::new(cb.conts),
            points: spans.points().to_vec(),
            initial,
        })
    }
}

fn span_root(cb: &mut ContBuilder<'_>, spans: &TokenSpans, s: SpanId) -> Cont {
    let span = spans.span(s);
    let mut k = cb.end(span.end);
    for fork in span.forks {
        // Another reading: more lexemes, then a pending state.
        let mut other = cb.end(fork.state);
        for &e in fork.lexemes.iter().rev() {
            other = cb.lex(e, other);
        }
        k = cb.either(k, other);
    }
    for &e in span.emitted.iter().rev() {
        k = cb.lex(e, k);
    }
    k
}
