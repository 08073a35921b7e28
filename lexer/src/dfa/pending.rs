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
//! These are transitions like any other, so a pending state is a state of the lexer's DFA (this
//! one accepts nothing), its reachable terminals are those its continuations complete, and a head or
//! a masker reads bytes in it with [`Lexer::next`](super::Lexer::next). Only the first byte
//! after the lexeme needs its own table, [`Lexer::next_inhibited`](super::Lexer::next_inhibited),
//! built here for every accepting state.
//!
//! # Guards
//!
//! In general a pending state is `(t, guards)`: `t` the state of the branch's own lexeme and
//! each guard a longer reading of an earlier lexeme that the branch handed over, with what
//! kills the branch: a *character* guard (`u` above) dies with the branch once the character
//! that extends its lexeme is complete, and is dropped when it is dead; an *accept* guard
//! (after a lexeme that a lazy terminal matches, see the
//! [module docs](super#backtracking-to-a-lazy-match)) kills the branch when the longer reading
//! matches, and is dropped when it dies. With no guard left the state is `t`. A guarded state
//! accepts what `t` accepts; its inhibited branch keeps the guards and adds one for the lexeme
//! of `t`. Guards run only on lexeme states (the DFA before this step), so there are finitely
//! many pending states; they count against the state budget and their guards against the
//! memory budget.
//!
//! The DFA with the pending states is minimised again, so a pending state that behaves like a
//! lexeme state is that state. Where a pending state accepts, its inhibited row depends on its
//! guards, which its own row may not show; then the minimisation reads each state's inhibited
//! row as a second set of byte classes, so that only states whose inhibited branches behave
//! alike merge.
//!
//! Every terminal matches only valid UTF-8 (checked when the NFA is built), so every live state
//! is either at a character boundary (its lexeme is whole characters; it may accept, and every
//! byte that extends it begins a character) or inside one (every byte that extends it is a
//! continuation byte `0x80..=0xBF`, and it accepts nothing): the lexemes of one state have the
//! same continuations, and a continuation of a whole lexeme cannot begin with a continuation
//! byte, nor one of a partial character with anything else.

use ahash::AHashMap;

use super::determinize::{Dfa, DEAD, KEPT, NONLITERAL};
use super::error::{LexerBuildError, LexerBuildErrorKind};
use super::minimize::minimize_with_roots;

/// A row of [`WithPending::table`] for states that accept nothing.
pub(crate) const NO_ROW: u32 = u32::MAX;

/// What [`add_pending`] returns: the DFA with its pending states, per state whether it is
/// inside a character and whether it carries guards, and the first-byte table of the
/// inhibited branches.
pub(crate) struct WithPending {
    pub dfa: Dfa,
    pub inside_char: Vec<bool>,
    /// Per state: a pending state with guards still running (its lexeme, if it accepts one,
    /// is handed over inhibited even where it cannot grow: the guards go on).
    pub guarded: Vec<bool>,
    /// Per state: the row of `table` for its inhibited branch, or [`NO_ROW`].
    pub row_of: Vec<u32>,
    /// Rows of `dfa.class_len` states.
    pub table: Vec<u32>,
}

/// A guard: the state the lexeme of an earlier accepting state would be in had it gone on,
/// and what kills the branch: `ACCEPT` (the longer lexeme matches) or `CHAR` (the character
/// that extends it is complete).
type Guard = (u32, bool);
const ACCEPT: bool = true;
const CHAR: bool = false;

/// The pending states being made.
struct Pending<'a> {
    base: &'a Dfa,
    inside: &'a [bool],
    /// Per base state: a lazy terminal matches its lexeme (it may be backtracked to).
    backtracks: &'a [bool],
    /// Going back to a lexeme of literals from a longer reading of literals.
    literals: &'a Within,
    /// Going back to an ignored lexeme from a longer reading of ignored terminals.
    ignored: &'a Within,
    /// By (t, guards).
    ids: AHashMap<(u32, Box<[Guard]>), u32>,
    /// Per pending state (id − base len): its lexeme state and guards.
    keys: Vec<(u32, Box<[Guard]>)>,
    /// Pending states whose rows are still to fill.
    queue: Vec<u32>,
    /// The budgets: all states, lexeme states and pending ones; guard memory.
    max_states: usize,
    max_memory: usize,
    memory: usize,
}

impl Pending<'_> {
    fn n(&self) -> usize {
        self.base.state_len()
    }

    /// Whether the branch that handed the lexeme of `t` over goes on, guarded, when the next
    /// byte leads the longer reading to `g` (not dead): `t`'s lexeme is lazy, or it is of
    /// literals (of ignored terminals) and only literals (ignored terminals) could complete
    /// the longer reading.
    fn backtracks_to(&self, t: u32, g: u32) -> bool {
        self.backtracks[t as usize] || self.literals.applies(t, g) || self.ignored.applies(t, g)
    }

    /// The guards after a byte of class `c`, `None` if one of them kills the branch.
    fn step_guards(&self, guards: &[Guard], c: usize) -> Option<Vec<Guard>> {
        let k = self.base.class_len;
        // Most branches carry no guard: their steps allocate nothing.
        let mut out = Vec::new();
        for &(g, kind) in guards {
            let g2 = self.base.table[g as usize * k + c];
            if g2 == DEAD {
                continue;
            }
            let kills = match kind {
                ACCEPT => !self.base.accepted[g2 as usize].is_empty(),
                CHAR => !self.inside[g2 as usize],
            };
            if kills {
                return None;
            }
            out.push((g2, kind));
        }
        Some(out)
    }

    /// The state whose lexeme state is `t`, guarded by `guards`: `t` itself if there are none.
    fn state(&mut self, t: u32, mut guards: Vec<Guard>) -> Result<u32, LexerBuildError> {
        if t == DEAD || guards.is_empty() {
            return Ok(t);
        }
        guards.sort_unstable();
        guards.dedup();
        let key = (t, guards.into_boxed_slice());
        if let Some(&id) = self.ids.get(&key) {
            return Ok(id);
        }
        if self.n() + self.keys.len() >= self.max_states {
            return Err(LexerBuildError::new(LexerBuildErrorKind::TooManyStates {
                limit: self.max_states,
            }));
        }
        self.memory += 3 * key.1.len() * std::mem::size_of::<Guard>() + 64;
        if self.memory > self.max_memory {
            return Err(LexerBuildError::new(LexerBuildErrorKind::TooMuchMemory {
                limit: self.max_memory,
            }));
        }
        let id = (self.n() + self.keys.len()) as u32;
        self.ids.insert(key.clone(), id);
        self.keys.push(key);
        self.queue.push(id);
        Ok(id)
    }

    /// `(t, guards)` (an accepting lexeme state and its guards) followed by a byte of class
    /// `c` on the branch that handed the lexeme of `t` over.
    fn inhibited(&mut self, t: u32, guards: &[Guard], c: usize) -> Result<u32, LexerBuildError> {
        let k = self.base.class_len;
        if self.base.fail[t as usize].contains(c as u8) {
            return Ok(DEAD); // The look-ahead fails: the terminals do not match here.
        }
        let Some(mut guards) = self.step_guards(guards, c) else {
            return Ok(DEAD);
        };
        let g = self.base.table[t as usize * k + c];
        if g != DEAD {
            if self.backtracks_to(t, g) {
                if !self.base.accepted[g as usize].is_empty() {
                    return Ok(DEAD);
                }
                guards.push((g, ACCEPT));
            } else if self.inside[g as usize] {
                guards.push((g, CHAR));
            } else {
                return Ok(DEAD);
            }
        }
        let t2 = self.base.table[self.base.start as usize * k + c];
        self.state(t2, guards)
    }

    /// The inhibited row of lexeme state `t` (accepting, no guards): [`Pending::inhibited`]
    /// for every class. Most bytes either extend the lexeme by a whole character (the branch
    /// dies) or begin the next lexeme (the start state's row); only those that go inside a
    /// character, or on with a lexeme the lexer may go back to, make pending states.
    fn lexeme_inhibited(&mut self, t: u32) -> Result<Vec<u32>, LexerBuildError> {
        let k = self.base.class_len;
        let (row, start) = (t as usize * k, self.base.start as usize * k);
        let mut out = Vec::with_capacity(k);
        for c in 0..k {
            let g = self.base.table[row + c];
            let next = if self.base.fail[t as usize].contains(c as u8) {
                DEAD
            } else if g == DEAD {
                self.base.table[start + c]
            } else if self.backtracks_to(t, g) || self.inside[g as usize] {
                self.inhibited(t, &[], c)?
            } else {
                DEAD
            };
            out.push(next);
        }
        Ok(out)
    }

    /// Pending state `(t, guards)` after a byte of class `c`.
    fn next(&mut self, t: u32, guards: &[Guard], c: usize) -> Result<u32, LexerBuildError> {
        let k = self.base.class_len;
        let t2 = self.base.table[t as usize * k + c];
        if t2 == DEAD {
            return Ok(DEAD);
        }
        match self.step_guards(guards, c) {
            Some(guards) => self.state(t2, guards),
            None => Ok(DEAD),
        }
    }
}

/// One rule of going back to a lexeme whose terminals are all of a kind (literals, ignored
/// terminals) from a longer reading that only terminals of that kind could complete.
struct Within {
    /// Per state: only terminals of the kind match its lexeme.
    lexeme: Vec<bool>,
    /// Per state: [`within`].
    only: Vec<bool>,
}

impl Within {
    /// The rule over `dfa` for the terminals `of_kind` flags; `outside` is the bit of
    /// [`Dfa::kinds`] that says some other terminal matches.
    fn new(dfa: &Dfa, of_kind: &[bool], outside: u8) -> Within {
        let lexeme: Vec<bool> = dfa
            .accepted
            .iter()
            .map(|a| !a.is_empty() && a.iter().all(|t| of_kind[t.as_usize()]))
            .collect();
        let only = within(dfa, &lexeme, outside);
        Within { lexeme, only }
    }

    /// Whether the lexeme of `t` is gone back to from the longer reading in `g`.
    fn applies(&self, t: u32, g: u32) -> bool {
        self.lexeme[t as usize] && self.only[g as usize]
    }
}

/// Per state of `dfa`: it is not dead and no byte string leads it to a state whose
/// [`Dfa::kinds`] hold `outside`: only terminals of the kind can complete its lexemes (a
/// reading of literals lasts at most as long as the longest literal). All `false` (nothing
/// computed) when no lexeme of the kind (`lexeme`) can go on into a state that accepts nothing,
/// the only place it is read, or when the kinds were not computed (the rule is off).
fn within(dfa: &Dfa, lexeme: &[bool], outside: u8) -> Vec<bool> {
    let (n, k) = (dfa.state_len(), dfa.class_len);
    let read = (0..n).any(|t| {
        lexeme[t]
            && dfa.table[t * k..(t + 1) * k]
                .iter()
                .any(|&g| g != DEAD && dfa.accepted[g as usize].is_empty())
    });
    if !read || dfa.kinds.len() != n {
        return vec![false; n];
    }
    // Backwards from the states where a terminal not of the kind matches.
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    for s in 0..n {
        for &t in &dfa.table[s * k..(s + 1) * k] {
            if t != DEAD && preds[t as usize].last() != Some(&(s as u32)) {
                preds[t as usize].push(s as u32);
            }
        }
    }
    let mut only = vec![true; n];
    only[DEAD as usize] = false;
    let mut stack: Vec<u32> = (0..n as u32)
        .filter(|&s| dfa.kinds[s as usize] & outside != 0)
        .collect();
    for &s in &stack {
        only[s as usize] = false;
    }
    while let Some(s) = stack.pop() {
        for &p in &preds[s as usize] {
            if only[p as usize] {
                only[p as usize] = false;
                stack.push(p);
            }
        }
    }
    only
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
/// [`Lexer::next_inhibited`](super::Lexer::next_inhibited); minimises the result. `lazy` says
/// per terminal whether the lexer may go back to its lexemes (a lazy terminal, with
/// [`LexerConfig::backtrack_lazy`](super::LexerConfig::backtrack_lazy)), `literal` whether it
/// may go back to them from a longer reading of literals (a literal or a stand-in, with
/// [`LexerConfig::backtrack_literals`](super::LexerConfig::backtrack_literals)), `ignored`
/// from a longer reading of ignored terminals (with
/// [`LexerConfig::backtrack_ignored`](super::LexerConfig::backtrack_ignored)). The pending
/// states count against `max_states`, their guards against `max_memory`.
pub(crate) fn add_pending(
    mut dfa: Dfa,
    class_lo: &[u8],
    lazy: &[bool],
    literal: &[bool],
    ignored: &[bool],
    max_states: usize,
    max_memory: usize,
) -> Result<WithPending, LexerBuildError> {
    let k = dfa.class_len;
    let n = dfa.state_len();
    let inside = inside_char(&dfa, class_lo);
    let backtracks: Vec<bool> = dfa
        .accepted
        .iter()
        .map(|a| a.iter().any(|t| lazy[t.as_usize()]))
        .collect();
    let literals = Within::new(&dfa, literal, NONLITERAL);
    let ignored = Within::new(&dfa, ignored, KEPT);
    // Read here only: the second minimisation below need not keep them apart.
    dfa.kinds = Vec::new();
    let mut new = Pending {
        base: &dfa,
        inside: &inside,
        backtracks: &backtracks,
        literals: &literals,
        ignored: &ignored,
        ids: AHashMap::new(),
        keys: Vec::new(),
        queue: Vec::new(),
        max_states,
        max_memory,
        memory: 0,
    };

    // Per state (lexeme states, then pending ones): its row and its inhibited row (empty
    // where it accepts nothing). Lexeme states keep their rows.
    let mut inhibited: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (e, row) in inhibited.iter_mut().enumerate() {
        if dfa.accepted[e].is_empty() {
            continue;
        }
        *row = new.lexeme_inhibited(e as u32)?;
    }
    let mut rows: Vec<Vec<u32>> = Vec::new();
    let mut pending_inhibited: Vec<Vec<u32>> = Vec::new();
    while let Some(id) = new.queue.pop() {
        let i = id as usize - n;
        if rows.len() <= i {
            rows.resize(i + 1, Vec::new());
            pending_inhibited.resize(i + 1, Vec::new());
        }
        let (t, guards) = new.keys[i].clone();
        rows[i] = (0..k)
            .map(|c| new.next(t, &guards, c))
            .collect::<Result<_, _>>()?;
        if !dfa.accepted[t as usize].is_empty() {
            pending_inhibited[i] = (0..k)
                .map(|c| new.inhibited(t, &guards, c))
                .collect::<Result<_, _>>()?;
        }
    }
    let keys = std::mem::take(&mut new.keys);
    rows.resize(keys.len(), Vec::new());
    pending_inhibited.resize(keys.len(), Vec::new());
    inhibited.extend(pending_inhibited);
    let total = n + keys.len();
    let guarded: Vec<bool> = (0..total).map(|s| s >= n).collect();
    let inside_old: Vec<bool> = (0..total)
        .map(|s| match s.checked_sub(n) {
            None => inside[s],
            Some(i) => {
                let (t, guards) = &keys[i];
                inside[*t as usize] || guards.iter().any(|g| g.1 == CHAR)
            }
        })
        .collect();

    // The DFA over the classes and, when a pending state accepts, their inhibited twins (a
    // pending state's inhibited row depends on its guards, which its rows alone may not show).
    let wide = keys
        .iter()
        .any(|(t, _)| !dfa.accepted[*t as usize].is_empty());
    let width = if wide { 2 * k } else { k };
    let (mut min, map) = if keys.is_empty() {
        // No pending state: the DFA is minimal already, and each state is its own.
        (dfa, (0..n as u32).collect())
    } else {
        let mut ext = Dfa {
            class_len: width,
            table: Vec::with_capacity(total * width),
            accepted: dfa.accepted.clone(),
            fail: dfa.fail.clone(),
            start: dfa.start,
            kinds: Vec::new(),
        };
        for s in 0..total {
            match s.checked_sub(n) {
                None => ext.table.extend_from_slice(&dfa.table[s * k..(s + 1) * k]),
                Some(i) => ext.table.extend_from_slice(&rows[i]),
            }
            if wide {
                if inhibited[s].is_empty() {
                    ext.table.extend(std::iter::repeat_n(DEAD, k));
                } else {
                    ext.table.extend_from_slice(&inhibited[s]);
                }
            }
            if s >= n {
                let t = keys[s - n].0 as usize;
                ext.accepted.push(dfa.accepted[t].clone());
                ext.fail.push(dfa.fail[t]);
            }
        }
        let roots: Vec<u32> = (n as u32..total as u32).collect();
        minimize_with_roots(&ext, &roots)
    };
    let m = min.state_len();
    let mut inside_char = vec![false; m];
    let mut guarded_new = vec![false; m];
    for (old, &new) in map.iter().enumerate() {
        if new != DEAD {
            inside_char[new as usize] |= inside_old[old];
            guarded_new[new as usize] |= guarded[old];
        }
    }
    // The inhibited rows, shared where equal.
    let mut row_of = vec![NO_ROW; m];
    let mut table = Vec::new();
    let mut interned: AHashMap<Vec<u32>, u32> = AHashMap::new();
    let mut intern = |s: usize, row: Vec<u32>, row_of: &mut Vec<u32>| {
        let next = interned.len() as u32;
        let r = *interned.entry(row).or_insert_with_key(|row| {
            table.extend_from_slice(row);
            next
        });
        row_of[s] = r;
    };
    if wide {
        for s in 0..m {
            if !min.accepted[s].is_empty() {
                let row = min.table[s * width + k..(s + 1) * width].to_vec();
                intern(s, row, &mut row_of);
            }
        }
        let narrow: Vec<u32> = (0..m)
            .flat_map(|s| min.table[s * width..s * width + k].iter().copied())
            .collect();
        min.table = narrow;
        min.class_len = k;
    } else {
        for (e, row) in inhibited.into_iter().enumerate() {
            if row.is_empty() {
                continue;
            }
            let row: Vec<u32> = row.iter().map(|&s| map[s as usize]).collect();
            intern(map[e] as usize, row, &mut row_of);
        }
    }
    Ok(WithPending {
        dfa: min,
        inside_char,
        guarded: guarded_new,
        row_of,
        table,
    })
}
