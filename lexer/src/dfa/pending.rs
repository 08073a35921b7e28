//! Pending states: the branch that handed a lexeme to the parser while the next character is
//! still incomplete.
//!
//! Lookahead is a whole character (see the [module docs](super#inhibited-terminals)). After a
//! lexeme that ends in an accepting state `e`, the branch that handed it to the parser reads
//! the next bytes from the start state. A byte `b` that begins a multi-byte character may or
//! may not extend the lexeme of `e`: that is known only when the character is complete. Until
//! then the branch is in a *pending state* `(t, u)`: `t` the state of its new lexeme (the part
//! of the character read so far, from the start state) and `u` the state the lexeme of `e`
//! would be in had it gone on (`e` followed by the same bytes), which is inside a character.
//! On the next byte `c`:
//!
//! - `next(u, c)` dead: the character does not extend the lexeme of `e`, which ended there;
//!   the branch goes on in `next(t, c)`;
//! - `next(u, c)` at a character boundary: the character extends it, so by longest match the
//!   lexeme did not end at `e`: the branch dies;
//! - `next(u, c)` still inside the character: still pending, `(next(t, c), next(u, c))`.
//!
//! These are transitions like any other, so a pending state is a state of the lexer's DFA: it
//! accepts nothing, its reachable terminals are those its continuations complete, and a head or
//! a masker reads bytes in it with [`Lexer::next`](super::Lexer::next). Only the first byte
//! after the lexeme needs its own table, [`Lexer::next_inhibited`](super::Lexer::next_inhibited),
//! built here for every accepting state. The DFA with the pending states is minimised again, so
//! a pending state that behaves like a lexeme state is that state.
//!
//! Every terminal matches only valid UTF-8 (checked when the NFA is built), so every live state
//! is either at a character boundary (its lexeme is whole characters; it may accept, and every
//! byte that extends it begins a character) or inside one (every byte that extends it is a
//! continuation byte `0x80..=0xBF`, and it accepts nothing): the lexemes of one state have the
//! same continuations, and a continuation of a whole lexeme cannot begin with a continuation
//! byte, nor one of a partial character with anything else.

use ahash::AHashMap;

use super::determinize::{Dfa, FailSet, DEAD};
use super::error::{LexerBuildError, LexerBuildErrorKind};
use super::minimize::minimize_with_roots;

/// A row of [`Inhibited::table`] for states that accept nothing.
pub(crate) const NO_ROW: u32 = u32::MAX;

/// What [`add_pending`] returns: the DFA with its pending states, per state whether it is
/// inside a character, and the first-byte table of the inhibited branches.
pub(crate) struct WithPending {
    pub dfa: Dfa,
    pub inside_char: Vec<bool>,
    /// Per state: the row of `table` for its inhibited branch, or [`NO_ROW`].
    pub row_of: Vec<u32>,
    /// Rows of `dfa.class_len` states.
    pub table: Vec<u32>,
}

/// The pending states being made.
struct Pending {
    /// By (t, u).
    ids: AHashMap<(u32, u32), u32>,
    /// Made, their rows still to fill: (id, t, u).
    queue: Vec<(u32, u32, u32)>,
    /// The budget on all states, lexeme states (`base` of them) and pending ones.
    max_states: usize,
    base: usize,
}

impl Pending {
    /// The pending state `(t, u)`, added to `ext` (with an empty row) if new.
    fn state(&mut self, ext: &mut Dfa, t: u32, u: u32) -> Result<u32, LexerBuildError> {
        if let Some(&id) = self.ids.get(&(t, u)) {
            return Ok(id);
        }
        if self.base + self.ids.len() >= self.max_states {
            return Err(LexerBuildError::new(LexerBuildErrorKind::TooManyStates {
                limit: self.max_states,
            }));
        }
        let id = ext.state_len() as u32;
        self.ids.insert((t, u), id);
        ext.table.resize(ext.table.len() + ext.class_len, DEAD);
        ext.accepted.push(Box::new([]));
        ext.fail.push(FailSet::EMPTY);
        self.queue.push((id, t, u));
        Ok(id)
    }
}

/// Per state of `dfa` (minimal: every state but [`DEAD`] can still accept): whether its
/// lexemes end inside a character. `class_lo[c]` is the lowest byte of class `c` (classes are
/// ranges that never straddle `0x80` or `0xC0` where a transition uses them).
fn inside_char(dfa: &Dfa, class_lo: &[u8]) -> Vec<bool> {
    let k = dfa.class_len;
    (0..dfa.state_len())
        .map(|s| {
            s as u32 != DEAD
                && dfa.accepted[s].is_empty()
                && (0..k)
                    .any(|c| dfa.table[s * k + c] != DEAD && (0x80..=0xBF).contains(&class_lo[c]))
        })
        .collect()
}

/// Adds the pending states to `dfa` (minimal, all its patterns UTF-8) and builds the table of
/// [`Lexer::next_inhibited`](super::Lexer::next_inhibited); minimises the result. The pending
/// states count against `max_states`.
pub(crate) fn add_pending(
    dfa: Dfa,
    class_lo: &[u8],
    max_states: usize,
) -> Result<WithPending, LexerBuildError> {
    let k = dfa.class_len;
    let n = dfa.state_len();
    let inside = inside_char(&dfa, class_lo);
    let start = dfa.start;
    let mut ext = dfa;
    let mut new = Pending {
        ids: AHashMap::new(),
        queue: Vec::new(),
        max_states,
        base: n,
    };

    // The first byte after each accepting state's lexeme.
    let mut rows: Vec<(u32, Vec<u32>)> = Vec::new();
    for e in 0..n {
        if ext.accepted[e].is_empty() {
            continue;
        }
        let mut row = vec![DEAD; k];
        for (c, slot) in row.iter_mut().enumerate() {
            if ext.fail[e].contains(c as u8) {
                continue; // The look-ahead fails: the terminals do not match here.
            }
            let g = ext.table[e * k + c];
            let t = ext.table[start as usize * k + c];
            *slot = if g == DEAD {
                t
            } else if !inside[g as usize] || t == DEAD {
                DEAD
            } else {
                new.state(&mut ext, t, g)?
            };
        }
        rows.push((e as u32, row));
    }
    // The pending states' rows.
    while let Some((id, t, u)) = new.queue.pop() {
        for c in 0..k {
            let u2 = ext.table[u as usize * k + c];
            let t2 = ext.table[t as usize * k + c];
            let to = if u2 == DEAD {
                t2
            } else if !inside[u2 as usize] || t2 == DEAD {
                DEAD
            } else {
                new.state(&mut ext, t2, u2)?
            };
            ext.table[id as usize * k + c] = to;
        }
    }

    let roots: Vec<u32> = (n as u32..ext.state_len() as u32).collect();
    let (dfa, map) = if roots.is_empty() {
        let map = (0..n as u32).collect();
        (ext, map)
    } else {
        minimize_with_roots(&ext, &roots)
    };
    let inside_char = {
        let mut v = vec![false; dfa.state_len()];
        for (old, &new) in map.iter().enumerate() {
            // Pending states are inside a character by construction.
            v[new as usize] |= if old < n { inside[old] } else { new != DEAD };
        }
        v
    };
    let mut row_of = vec![NO_ROW; dfa.state_len()];
    let mut table = Vec::new();
    let mut interned: AHashMap<Vec<u32>, u32> = AHashMap::new();
    for (e, row) in rows {
        let row: Vec<u32> = row.iter().map(|&s| map[s as usize]).collect();
        let next = interned.len() as u32;
        let r = *interned.entry(row).or_insert_with_key(|row| {
            table.extend_from_slice(row);
            next
        });
        row_of[map[e as usize] as usize] = r;
    }
    Ok(WithPending {
        dfa,
        inside_char,
        row_of,
        table,
    })
}
