//! Terminals that are intersections: the lexemes every one of some patterns matches and none of
//! others does.
//!
//! A front end writes one as reserved capture groups at the start of the terminal's pattern,
//! each holding a pattern that the whole lexeme must match (`all`) or must not (`none`), followed
//! by the terminal's own pattern (which the lexeme must match too):
//! `(?P<__munch_meet_all_1>X)(?P<__munch_meet_none_2>Y)Z` is the lexemes of `Z` that `X`
//! matches and `Y` does not. The groups are zero-width: they are not read in sequence with
//! `Z`. Only front ends that generate patterns write them (the JSON Schema compiler, where a
//! string's constraints meet and their product is too large to write back as a regex); the
//! Lark reader keeps the names only when its configuration says so, and refuses them otherwise
//! (read as plain groups, a schema's terminals loaded from its Lark text would take more).
//!
//! Each part is determinised on its own (a one-terminal [`Lexer`]), and the terminal's nodes are
//! the product of those DFAs over bytes, cut to the states from which some lexeme is accepted:
//! a state accepts where every `all` part and `Z` accept and no `none` part does. Parts may not
//! hold look-arounds, anchors or lazy repetitions.

use regex_syntax::hir::{Hir, HirKind};

use super::error::{LexerBuildError, LexerBuildErrorKind};
use super::{Lexer, LexerConfig, TerminalSpec};
use crate::{LexState, TerminalId};

/// The prefix of the reserved capture-group names of a meet's parts.
pub const MEET_PREFIX: &str = "__munch_meet_";

/// The capture-group name of the `n`-th part of a meet: a pattern the lexeme must match
/// (`all`) or must not.
pub fn meet_name(all: bool, n: usize) -> String {
    format!("{MEET_PREFIX}{}_{n}", if all { "all" } else { "none" })
}

/// The parts of a meet written as `hir`: the patterns the lexeme must match (the terminal's own
/// last) and those it must not; `None` when `hir` does not start with a meet's group.
pub(crate) fn parts(hir: &Hir) -> Option<(Vec<Hir>, Vec<Hir>)> {
    let HirKind::Concat(subs) = hir.kind() else {
        return None;
    };
    let mut all = Vec::new();
    let mut none = Vec::new();
    let mut rest = 0;
    for sub in subs {
        let HirKind::Capture(cap) = sub.kind() else {
            break;
        };
        let Some(kind) = cap
            .name
            .as_deref()
            .and_then(|n| n.strip_prefix(MEET_PREFIX))
        else {
            break;
        };
        match kind.split_once('_') {
            Some(("all", _)) => all.push((*cap.sub).clone()),
            Some(("none", _)) => none.push((*cap.sub).clone()),
            _ => break,
        }
        rest += 1;
    }
    if rest == 0 {
        return None;
    }
    all.push(Hir::concat(subs[rest..].to_vec()));
    Some((all, none))
}

/// A run of bytes `lo..=hi` and the product state they lead to.
pub(crate) type Run = (u8, u8, u32);

/// The product automaton of a meet: per state, its byte transitions (runs of bytes with the
/// same target, in byte order) and whether it accepts. State 0 is the start.
pub(crate) struct Product {
    pub states: Vec<(Vec<Run>, bool)>,
}

/// Builds the product of the parts of terminal `terminal` (`all`, then `none`), within the
/// lexer's state budget.
pub(crate) fn product(
    terminal: TerminalId,
    name: &str,
    all: &[Hir],
    none: &[Hir],
    config: &LexerConfig,
) -> Result<Product, LexerBuildError> {
    let unsupported = |what: String| {
        LexerBuildError::new(LexerBuildErrorKind::Unsupported {
            terminal,
            name: name.to_string(),
            what,
        })
    };
    let intersection = |source: LexerBuildError| {
        LexerBuildError::new(LexerBuildErrorKind::Intersection {
            terminal,
            name: name.to_string(),
            source: Box::new(source),
        })
    };
    let mut lexers = Vec::with_capacity(all.len() + none.len());
    for hir in all.iter().chain(none) {
        if parts(hir).is_some() || !hir.properties().look_set().is_empty() || has_look_around(hir) {
            return Err(unsupported(
                "an anchor, look-around or intersection inside a part of an intersection".into(),
            ));
        }
        let spec = TerminalSpec {
            name: name.to_string(),
            hir: Some(hir.clone()),
            is_literal: false,
            priority: 0,
            ignored: false,
        };
        let lexer = Lexer::new(std::slice::from_ref(&spec), config).map_err(&intersection)?;
        if lexer.is_lazy(TerminalId::from_usize(0)) {
            return Err(unsupported(
                "a lazy repetition inside a part of an intersection".into(),
            ));
        }
        lexers.push(lexer);
    }
    let includes = all.len();
    // Bytes that every part's DFA reads alike: each byte's class, and one byte per class.
    let mut reps: Vec<u8> = Vec::new();
    let mut class_of = [0usize; 256];
    let mut seen: ahash::AHashMap<Vec<u8>, usize> = ahash::AHashMap::new();
    for b in 0..=255u8 {
        let key: Vec<u8> = lexers.iter().map(|l| l.byte_class(b)).collect();
        class_of[b as usize] = *seen.entry(key).or_insert_with(|| {
            reps.push(b);
            reps.len() - 1
        });
    }
    let accepts = |tuple: &[LexState]| {
        tuple.iter().enumerate().all(|(i, &s)| {
            let matched = !lexers[i].is_dead(s) && !lexers[i].accepted(s).is_empty();
            matched == (i < includes)
        })
    };
    let start: Vec<LexState> = lexers.iter().map(|l| l.start()).collect();
    let mut index: ahash::AHashMap<Vec<LexState>, u32> = ahash::AHashMap::new();
    let mut tuples: Vec<Vec<LexState>> = vec![start.clone()];
    index.insert(start, 0);
    // Per state: the target of each byte class (`u32::MAX`: dead).
    let mut edges: Vec<Vec<u32>> = Vec::new();
    let mut i = 0;
    while i < tuples.len() {
        let mut row = vec![u32::MAX; reps.len()];
        for (c, &b) in reps.iter().enumerate() {
            let next: Vec<LexState> = tuples[i]
                .iter()
                .zip(&lexers)
                .map(|(&s, l)| if l.is_dead(s) { s } else { l.next(s, b) })
                .collect();
            if next[..includes]
                .iter()
                .zip(&lexers)
                .any(|(&s, l)| l.is_dead(s))
            {
                continue;
            }
            let id = match index.get(&next) {
                Some(&id) => id,
                None => {
                    // The tuples and the table of their transitions, within the memory budget.
                    let bytes = (tuples.len() + 1) * (lexers.len() + reps.len()) * 4;
                    if bytes > config.max_build_memory {
                        return Err(intersection(LexerBuildError::new(
                            LexerBuildErrorKind::TooMuchMemory {
                                limit: config.max_build_memory,
                            },
                        )));
                    }
                    if tuples.len() >= config.max_states {
                        return Err(intersection(LexerBuildError::new(
                            LexerBuildErrorKind::TooManyStates {
                                limit: config.max_states,
                            },
                        )));
                    }
                    let id = tuples.len() as u32;
                    index.insert(next.clone(), id);
                    tuples.push(next);
                    id
                }
            };
            row[c] = id;
        }
        edges.push(row);
        i += 1;
    }
    // Keep the states from which an accepting one is reached.
    let n = tuples.len();
    let accepting: Vec<bool> = tuples.iter().map(|t| accepts(t)).collect();
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (s, row) in edges.iter().enumerate() {
        for &t in row {
            if t != u32::MAX {
                preds[t as usize].push(s as u32);
            }
        }
    }
    let mut live = accepting.clone();
    let mut work: Vec<u32> = (0..n as u32).filter(|&s| live[s as usize]).collect();
    while let Some(t) = work.pop() {
        for &p in &preds[t as usize] {
            if !live[p as usize] {
                live[p as usize] = true;
                work.push(p);
            }
        }
    }
    // Renumber the live states (the start first, when live).
    let mut new_id = vec![u32::MAX; n];
    let mut kept = 0u32;
    for s in 0..n {
        if live[s] {
            new_id[s] = kept;
            kept += 1;
        }
    }
    let mut states = Vec::with_capacity(kept as usize);
    for s in 0..n {
        if !live[s] {
            continue;
        }
        let mut runs: Vec<Run> = Vec::new();
        for b in 0..=255u8 {
            let t = edges[s][class_of[b as usize]];
            if t == u32::MAX || !live[t as usize] {
                continue;
            }
            let to = new_id[t as usize];
            match runs.last_mut() {
                Some(r) if r.2 == to && r.1.wrapping_add(1) == b => r.1 = b,
                _ => runs.push((b, b, to)),
            }
        }
        states.push((runs, accepting[s]));
    }
    Ok(Product { states })
}

/// Whether `hir` holds a look-around's reserved group (see [`super::look`]); walked with an
/// explicit stack.
fn has_look_around(hir: &Hir) -> bool {
    let mut stack = vec![hir];
    while let Some(h) = stack.pop() {
        match h.kind() {
            HirKind::Capture(cap) => {
                if cap
                    .name
                    .as_deref()
                    .is_some_and(|n| n.starts_with(super::look::LOOK_AROUND_PREFIX))
                {
                    return true;
                }
                stack.push(&cap.sub);
            }
            HirKind::Repetition(rep) => stack.push(&rep.sub),
            HirKind::Concat(subs) | HirKind::Alternation(subs) => stack.extend(subs.iter()),
            HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) | HirKind::Look(_) => {}
        }
    }
    false
}
