//! Literals read as copies of a shorter literal where the parser has no action on them
//! ([`crate::cfg::split`]): which pairs of the lexer's literals qualify, decided on the LR
//! tables of the grammar as written, and the grammar that reads them so.

use ahash::{AHashMap, AHashSet};
use munch_lexer::dfa::Lexer;
use munch_lexer::TerminalId;

use crate::cfg::split::{self, SplitLiteral};
use crate::cfg::{Cfg, NormalizeError};
use crate::lr::{Action, LrState, LrTables};

/// The pairs of `lexer`'s literals that the parser reads split, and `cfg` with them split
/// (`None` when there are none). A pair is split only where its copies may follow each other
/// in a derivation (else the grammar does not change) and no state that has an action on the
/// longer literal can shift all the copies: then on every stack at most one reading of its
/// lexeme survives it, the one Lark's contextual lexer takes.
pub(crate) fn split_literals(
    lexer: &Lexer,
    cfg: &Cfg,
    tables: &LrTables,
    max_symbols: usize,
) -> Result<(Vec<SplitLiteral>, Option<Cfg>), NormalizeError> {
    let mut splits = Vec::new();
    for s in candidates(lexer) {
        if split::split(cfg, &s, max_symbols)?.is_some() {
            splits.push(s);
        }
    }
    if splits.is_empty() {
        return Ok((splits, None));
    }
    let preds = predecessors(tables);
    splits.retain(|s| {
        let takes_long = (0..tables.state_len())
            .map(LrState::from_usize)
            .filter(|&x| !tables.actions_at(x, s.long.as_u32()).is_empty());
        !copies_may_shift(tables, &preds, takes_long, s)
    });
    let mut out: Option<Cfg> = None;
    for s in &splits {
        if let Some(next) = split::split(out.as_ref().unwrap_or(cfg), s, max_symbols)? {
            out = Some(next);
        }
    }
    Ok((splits, out))
}

/// The pairs of literal terminals the lexer produces (neither ignored nor stand-ins nor stood in
/// for) where
/// one spells `2..=split::MAX_COPIES` copies of the other, longest first.
fn candidates(lexer: &Lexer) -> Vec<SplitLiteral> {
    let stood_in = |t: TerminalId| {
        lexer
            .stand_ins()
            .iter()
            .any(|s| s.literal == t || s.terminal == t)
    };
    let literals: Vec<(TerminalId, &[u8])> = (0..lexer.terminal_len())
        .map(TerminalId::from_usize)
        .filter(|&t| !stood_in(t))
        .filter_map(|t| {
            let spec = lexer.terminal(t);
            if !spec.is_literal || spec.ignored {
                return None;
            }
            match spec.hir.as_ref()?.kind() {
                regex_syntax::hir::HirKind::Literal(l) => Some((t, &l.0[..])),
                _ => None,
            }
        })
        .collect();
    let by_text: AHashMap<&[u8], TerminalId> = literals.iter().map(|&(t, b)| (b, t)).collect();
    let mut out = Vec::new();
    for &(long, l) in &literals {
        // Each shorter literal that `l` repeats: its length divides `l`'s.
        for copies in 2..=usize::from(split::MAX_COPIES).min(l.len()) {
            if l.len() % copies != 0 {
                continue;
            }
            let unit = &l[..l.len() / copies];
            if !l.chunks(unit.len()).all(|c| c == unit) {
                continue;
            }
            if let Some(&short) = by_text.get(unit) {
                out.push(SplitLiteral {
                    long,
                    short,
                    copies: copies as u8,
                });
            }
        }
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.copies));
    out
}

/// Per LR state, the states with a shift or a goto to it.
fn predecessors(tables: &LrTables) -> Vec<Vec<LrState>> {
    let mut preds = vec![Vec::new(); tables.state_len()];
    for p in (0..tables.state_len()).map(LrState::from_usize) {
        let shifts = tables.state_shifts(p).filter_map(|(_, a)| match a {
            Action::Shift(to) => Some(to),
            _ => None,
        });
        for to in shifts.chain(tables.state_gotos(p).map(|(_, to)| to)) {
            preds[to.as_usize()].push(p);
        }
    }
    for p in &mut preds {
        p.sort_unstable();
        p.dedup();
    }
    preds
}

/// The most configurations [`copies_may_shift`] holds before answering yes.
const COPIES_SEARCH: usize = 200_000;

/// The most transitions [`copies_may_shift`] follows back from a stack's known bottom; past
/// it every state is taken to lie there.
const COPIES_BACK_STEPS: usize = 32;

/// The most states [`copies_may_shift`] knows of a stack: empty reductions may push states
/// without end (`a: b a |` with `b` empty), so the bottom ones are forgotten (which only adds
/// stacks), and the configurations repeat and are seen again.
const COPIES_KNOWN: usize = 16;

/// Pushes `to` onto the known part of a stack, forgetting its bottom past [`COPIES_KNOWN`].
fn push_known(stack: &mut Vec<LrState>, to: LrState) {
    stack.push(to);
    if stack.len() > COPIES_KNOWN {
        stack.remove(0);
    }
}

/// Whether the parser may shift `s.copies` copies of `s.short` from a stack whose top is one of
/// `tops`, reductions between them included. The states below the top are unknown: a
/// reduction that pops past the known part exposes every state with a path of transitions of
/// the right length to the part's bottom, so the answer is yes whenever some stack does it
/// (and yes when the search runs past its budget). One search from every top at once: what a
/// configuration leads to does not depend on where it was reached from.
fn copies_may_shift(
    tables: &LrTables,
    preds: &[Vec<LrState>],
    tops: impl Iterator<Item = LrState>,
    s: &SplitLiteral,
) -> bool {
    let short = s.short.as_u32();
    let mut seen: AHashSet<(Vec<LrState>, u8)> = AHashSet::new();
    let mut work: Vec<(Vec<LrState>, u8)> = tops.map(|x| (vec![x], 0)).collect();
    while let Some((stack, done)) = work.pop() {
        if done == s.copies || seen.len() + work.len() >= COPIES_SEARCH {
            return true;
        }
        if !seen.insert((stack.clone(), done)) {
            continue;
        }
        let top = stack[stack.len() - 1];
        for &action in tables.actions_at(top, short).iter() {
            match action {
                Action::Shift(to) => {
                    let mut next = stack.clone();
                    push_known(&mut next, to);
                    work.push((next, done + 1));
                }
                Action::Reduce { lhs, len, .. } => {
                    let len = len as usize;
                    if len < stack.len() {
                        let mut next = stack[..stack.len() - len].to_vec();
                        if let Some(to) = tables.goto(next[next.len() - 1], lhs) {
                            push_known(&mut next, to);
                            work.push((next, done));
                        }
                        continue;
                    }
                    let steps = len - stack.len() + 1;
                    let mut below = vec![stack[0]];
                    if steps > COPIES_BACK_STEPS {
                        // Far below: any state at all (more configurations, never fewer).
                        below = (0..tables.state_len()).map(LrState::from_usize).collect();
                    } else {
                        for _ in 0..steps {
                            below = below
                                .iter()
                                .flat_map(|&p| preds[p.as_usize()].iter().copied())
                                .collect();
                            below.sort_unstable();
                            below.dedup();
                        }
                    }
                    for p in below {
                        if let Some(to) = tables.goto(p, lhs) {
                            work.push((vec![p, to], done));
                        }
                    }
                }
                Action::Accept => {}
            }
        }
    }
    false
}
