//! [`Lexer`]: the compiled, immutable lexer DFA and its per-state facts.

use std::fmt;

use ahash::AHashMap;

use super::determinize::{determinize, Dfa, FailSet, DEAD};
use super::error::{LexerBuildError, LexerBuildErrorKind};
use super::minimize::{distinct_predecessors, merge_classes, minimize};
use super::nfa::Nfa;
use super::pending::{add_pending, WithPending, NO_ROW};
use super::set::TerminalSet;
use super::TerminalSpec;
use crate::{LexState, TerminalId};

/// Budgets and options for [`Lexer::new`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexerConfig {
    /// The most DFA states the subset construction may create (before minimisation).
    /// Default 100,000.
    pub max_states: usize,
    /// The most heap, in bytes, the construction may hold (NFAs, subset-construction keys,
    /// transition table; approximate). Default 512 MiB.
    pub max_build_memory: usize,
    /// The most heap, in bytes, one terminal's Thompson NFA may use (regex-automata's
    /// `nfa_size_limit`). Default 10 MiB.
    pub nfa_size_limit: usize,
    /// The deepest nesting of one terminal's HIR (a leaf is depth 1). The Thompson compiler
    /// recurses over the HIR, so this bounds its stack use. Default 250 (regex-syntax's parser
    /// default), which fits a 2 MiB thread stack even in an unoptimised build.
    pub nest_limit: usize,
    /// Go back to a lazy terminal's last match when the longer reading never matches again,
    /// through guarded pending states (see the
    /// [module docs](super#backtracking-to-a-lazy-match)): what Python's `re` does, so what
    /// Lark means, and what SynCode's python.lark needs (its `_NL` loop around docstrings).
    /// Default `true`; `false` keeps plain longest match with no backtracking to lazy matches
    /// either.
    pub backtrack_lazy: bool,
    /// Go back to a lexeme of literals when a longer reading that only literals could still
    /// complete never matches (see the [module docs](super#backtracking-to-a-literal)): with
    /// `"."` and `"..."`, `..x` is `.` `.` `x`, as in Lark's lexers (Python's `from .. import
    /// x`). Such a reading is bounded by the longest literal, so this adds few states. Default
    /// `true`; `false` keeps plain longest match there (`..x` is an error at `x`).
    pub backtrack_literals: bool,
    /// Go back to a lexeme that only `%ignore`d terminals match when a longer reading that only
    /// ignored terminals could still complete never matches (see the
    /// [module docs](super#backtracking-to-a-literal)): with `WS: / +/` and
    /// `COMMENT: /\s*\/\/[^\n]*/` both ignored (Lark's own lark.lark), ` /x/` is a space and
    /// then `/x/`. Neither reading reaches the parser, so this never changes the terminals it
    /// is handed, only whether the text lexes. Default `true`.
    pub backtrack_ignored: bool,
}

impl Default for LexerConfig {
    fn default() -> LexerConfig {
        LexerConfig {
            max_states: 100_000,
            max_build_memory: 512 << 20,
            nfa_size_limit: 10 << 20,
            nest_limit: 250,
            backtrack_lazy: true,
            backtrack_literals: true,
            backtrack_ignored: true,
        }
    }
}

/// The lexer DFA of a list of terminals. See the [module docs](super) for the semantics.
///
/// Immutable once built, cheap to share (`Send + Sync`) and `Clone`. States are [`LexState`]s
/// numbered `0..state_len()`; [`dead`](Lexer::dead) is always state 0 and every state that can
/// never accept again is that state.
///
/// Methods taking a [`LexState`] or [`TerminalId`] panic when it is not one of this lexer's
/// (out of range): ids come from the lexer itself, so a foreign one is a caller bug.
#[derive(Clone)]
pub struct Lexer {
    specs: Vec<TerminalSpec>,
    /// See [`Lexer::stand_ins`].
    stand_ins: Box<[StandIn]>,
    lazy: TerminalSet,
    classes: [u8; 256],
    class_len: usize,
    /// `table[s * class_len + class]`.
    table: Box<[u32]>,
    start: LexState,
    /// Per state: `accepted_pool[lo..hi]` (states share spans).
    accepted_span: Box<[(u32, u32)]>,
    accepted_pool: Box<[TerminalId]>,
    can_grow: Box<[bool]>,
    /// Per state: its lexemes end inside a UTF-8 character.
    inside_char: Box<[bool]>,
    /// Per state: a pending state whose guards still run (see `pending.rs`).
    guarded: Box<[bool]>,
    /// Some lazy terminal is gone back to ([`LexerConfig::backtrack_lazy`]).
    backtracks: bool,
    /// Per accepting state: its row of `inhibited` (rows are shared), else [`NO_ROW`].
    inhibited_row: Box<[u32]>,
    /// `inhibited[row * class_len + class]`: see [`Lexer::next_inhibited`].
    inhibited: Box<[u32]>,
    /// Per state: an index into `fail_sets`; 0 (the empty set) for states without look-ahead.
    fail_index: Box<[u32]>,
    fail_sets: Box<[FailSet]>,
    /// Per state: an index into `reachable_sets` (many states share a set).
    reachable_index: Box<[u32]>,
    reachable_sets: Box<[TerminalSet]>,
}

/// A literal accepted as a terminal of its own, which the parser reads as the literal where the
/// literal has an action and as the regex elsewhere (see [`Lexer::with_stand_ins`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StandIn {
    /// The stand-in's own id.
    pub terminal: TerminalId,
    /// The literal it stands for.
    pub literal: TerminalId,
    /// The one regex of the literal's priority that its lexeme also matches.
    pub regex: TerminalId,
}

/// Keeps the stand-ins that some state accepts against one regex throughout, numbered from
/// `base` in the order of `literals` (whose reserved ids were `base + i`), and turns the others
/// back into their literals; `specs` keeps the kept stand-ins' specs alone.
fn renumber_stand_ins(
    dfa: &mut Dfa,
    specs: &mut Vec<TerminalSpec>,
    base: usize,
    literals: &[TerminalId],
    stood_in: &[(TerminalId, TerminalId)],
) -> Vec<StandIn> {
    // Per reserved id: `None` unused, `Some(Some(r))` against regex `r` alone, `Some(None)`
    // against several.
    let mut regex_of: Vec<Option<Option<TerminalId>>> = vec![None; literals.len()];
    for &(v, r) in stood_in {
        let k = v.as_usize() - base;
        regex_of[k] = match regex_of[k] {
            None => Some(Some(r)),
            Some(Some(x)) if x == r => Some(Some(r)),
            _ => Some(None),
        };
    }
    let mut kept = Vec::new();
    let mut new_id: Vec<TerminalId> = Vec::with_capacity(literals.len());
    for (k, &literal) in literals.iter().enumerate() {
        match regex_of[k] {
            Some(Some(regex)) => {
                let terminal = TerminalId::from_usize(base + kept.len());
                kept.push(StandIn {
                    terminal,
                    literal,
                    regex,
                });
                new_id.push(terminal);
            }
            _ => new_id.push(literal),
        }
    }
    if !stood_in.is_empty() {
        for accepted in &mut dfa.accepted {
            if accepted.iter().any(|t| t.as_usize() >= base) {
                let mut ids: Vec<TerminalId> = accepted
                    .iter()
                    .map(|&t| match t.as_usize().checked_sub(base) {
                        Some(k) => new_id[k],
                        None => t,
                    })
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                *accepted = ids.into();
            }
        }
    }
    specs.truncate(base);
    for s in &kept {
        let spec = stand_in_spec(&specs[s.literal.as_usize()]);
        specs.push(spec);
    }
    kept
}

/// A stand-in's spec: its literal's name and priority, and no pattern (the lexer accepts it in
/// the literal's place; it matches nothing of its own).
fn stand_in_spec(literal: &TerminalSpec) -> TerminalSpec {
    TerminalSpec {
        hir: None,
        is_literal: false,
        ignored: false,
        ..literal.clone()
    }
}

impl Lexer {
    /// Compiles `specs` (index `i` is `TerminalId(i)`) into one DFA.
    ///
    /// Errors: a pattern with a look-around the lexer cannot honour exactly (see the
    /// [module docs](super#look-around); [`Unsupported`](LexerBuildErrorKind::Unsupported)),
    /// a pattern matching the empty string ([`EmptyMatch`](LexerBuildErrorKind::EmptyMatch)),
    /// and every budget of `config`, each with its own kind. Terminals with `hir: None` are kept
    /// (they have ids) but never match.
    pub fn new(specs: &[TerminalSpec], config: &LexerConfig) -> Result<Lexer, LexerBuildError> {
        Lexer::from_specs(specs.to_vec(), config)
    }

    /// [`Lexer::new`] keeping `specs` as they are, without copying their patterns.
    pub fn from_specs(
        specs: Vec<TerminalSpec>,
        config: &LexerConfig,
    ) -> Result<Lexer, LexerBuildError> {
        Lexer::with_stand_ins(specs, config, &[])
    }

    /// [`Lexer::from_specs`], where each literal of `literals` (plain string terminals, not
    /// ignored) that wins a tie on its lexeme against exactly one regex of its priority, by the
    /// rule that a literal beats a regex, is accepted as a *stand-in*: a terminal with no
    /// pattern of its own, numbered after `specs`, which the parser's tables read as the
    /// literal where the literal has an action and as the regex elsewhere (Lark's contextual
    /// lexer: `_` is a name where the `"_"` of a pattern cannot follow). See
    /// [`Lexer::stand_ins`]. A literal that never wins such a tie, or wins against different
    /// regexes in different states, is accepted as itself.
    pub fn with_stand_ins(
        mut specs: Vec<TerminalSpec>,
        config: &LexerConfig,
        literals: &[TerminalId],
    ) -> Result<Lexer, LexerBuildError> {
        let base = specs.len();
        let mut literals: Vec<TerminalId> = literals
            .iter()
            .copied()
            .filter(|t| {
                specs
                    .get(t.as_usize())
                    .is_some_and(|s| s.is_literal && !s.ignored)
            })
            .collect();
        literals.sort_unstable();
        literals.dedup();
        if base + literals.len() >= TerminalId::LIMIT {
            literals.clear();
        }
        // Reserved ids, one per literal; those used are renumbered after the build.
        let reserved: Vec<(TerminalId, TerminalId)> = literals
            .iter()
            .enumerate()
            .map(|(i, &l)| (l, TerminalId::from_usize(base + i)))
            .collect();
        for &(l, _) in &reserved {
            let spec = stand_in_spec(&specs[l.as_usize()]);
            specs.push(spec);
        }
        if specs.len() >= TerminalId::LIMIT {
            return Err(LexerBuildError::new(
                LexerBuildErrorKind::TooManyTerminals {
                    given: specs.len(),
                    limit: TerminalId::LIMIT - 1,
                },
            ));
        }
        let mut nfa = Nfa::build(&specs, config)?;
        let classes = nfa.byte_classes();
        nfa.ranges_to_classes(&classes);
        // The NFA's classes are byte ranges: each one's lowest byte says what kind of UTF-8
        // byte it is. Classes merged after determinising keep that (only ranges of one kind
        // merge).
        let mut class_lo = vec![0u8; classes.len()];
        for b in (0..=255u8).rev() {
            class_lo[classes.get(b) as usize] = b;
        }
        let (mut dfa, stood_in) = determinize(&nfa, &class_lo, &specs, config, &reserved)?;
        let stand_ins = renumber_stand_ins(&mut dfa, &mut specs, base, &literals, &stood_in);
        let mut byte_class = *classes.map();
        if let Some(merged) = merge_classes(&mut dfa, &mut class_lo) {
            byte_class = byte_class.map(|c| merged[c as usize]);
        }
        let mut lazy_flags = std::mem::take(&mut nfa.lazy);
        lazy_flags.truncate(base);
        lazy_flags.resize(specs.len(), false);
        // The terminals whose lexemes the lexer may go back to.
        let backtracking: Vec<bool> = lazy_flags
            .iter()
            .map(|&l| l && config.backtrack_lazy)
            .collect();
        let backtracks = backtracking.iter().any(|&b| b);
        // The terminals whose lexemes the lexer may go back to from a longer reading of
        // literals: literals, and the stand-ins that read as one.
        let mut literal: Vec<bool> = specs
            .iter()
            .map(|s| s.is_literal && config.backtrack_literals)
            .collect();
        for si in &stand_ins {
            literal[si.terminal.as_usize()] = config.backtrack_literals;
        }
        // And from a longer reading of ignored terminals: the ignored ones.
        let ignored: Vec<bool> = specs
            .iter()
            .map(|s| s.ignored && config.backtrack_ignored)
            .collect();
        drop(nfa);
        let WithPending {
            dfa,
            inside_char,
            guarded,
            row_of: inhibited_row,
            table: inhibited,
        } = add_pending(
            minimize(&dfa),
            &class_lo,
            &backtracking,
            &literal,
            &ignored,
            config.max_states,
            config.max_build_memory,
        )?;

        let lazy = lazy_flags
            .iter()
            .enumerate()
            .filter(|(_, &l)| l)
            .map(|(i, _)| TerminalId::from_usize(i))
            .collect();
        // Accepted sets repeat across states: store each once. The pool stays far below
        // `u32::MAX` entries (the build-memory budget counts every accepted set).
        let mut accepted_span = Vec::with_capacity(dfa.state_len());
        let mut accepted_pool = Vec::new();
        let mut spans: AHashMap<&[TerminalId], (u32, u32)> = AHashMap::new();
        for accepted in &dfa.accepted {
            let span = *spans.entry(accepted).or_insert_with(|| {
                let lo = accepted_pool.len() as u32;
                accepted_pool.extend_from_slice(accepted);
                (lo, accepted_pool.len() as u32)
            });
            accepted_span.push(span);
        }
        let can_grow = (0..dfa.state_len())
            .map(|s| {
                dfa.table[s * dfa.class_len..(s + 1) * dfa.class_len]
                    .iter()
                    .any(|&t| t != DEAD)
            })
            .collect();
        let (reachable_index, reachable_sets) = reachable(&dfa, specs.len());
        let mut fail_sets = vec![FailSet::EMPTY];
        let fail_index = dfa
            .fail
            .iter()
            .map(|f| match fail_sets.iter().position(|g| g == f) {
                Some(i) => i as u32,
                None => {
                    fail_sets.push(*f);
                    fail_sets.len() as u32 - 1
                }
            })
            .collect();
        Ok(Lexer {
            specs,
            stand_ins: stand_ins.into(),
            lazy,
            classes: byte_class,
            class_len: dfa.class_len,
            start: LexState::from(dfa.start),
            table: dfa.table.into_boxed_slice(),
            accepted_span: accepted_span.into_boxed_slice(),
            accepted_pool: accepted_pool.into_boxed_slice(),
            can_grow,
            inside_char: inside_char.into_boxed_slice(),
            guarded: guarded.into_boxed_slice(),
            backtracks,
            inhibited_row: inhibited_row.into_boxed_slice(),
            inhibited: inhibited.into_boxed_slice(),
            fail_index,
            fail_sets: fail_sets.into_boxed_slice(),
            reachable_index,
            reachable_sets,
        })
    }

    /// The stand-ins ([`Lexer::with_stand_ins`]) that some state accepts, in id order: each
    /// numbered after the terminals given, with the literal it stands for and the regex its
    /// lexeme also matches.
    pub fn stand_ins(&self) -> &[StandIn] {
        &self.stand_ins
    }

    /// The number of terminals (including those with no pattern).
    pub fn terminal_len(&self) -> usize {
        self.specs.len()
    }

    /// The terminal `id` as given to [`Lexer::new`].
    pub fn terminal(&self, id: TerminalId) -> &TerminalSpec {
        &self.specs[id.as_usize()]
    }

    /// Whether terminal `id` has a non-greedy repetition, and so matches what a leftmost-first
    /// (Python `re`) search of its pattern matches (see the [module docs](super#lexing-semantics)).
    pub fn is_lazy(&self, id: TerminalId) -> bool {
        self.lazy.contains(id)
    }

    /// The number of DFA states, dead state included.
    pub fn state_len(&self) -> usize {
        self.accepted_span.len()
    }

    /// The state before any byte of a lexeme. It accepts nothing (no pattern matches the empty
    /// string); it is [`dead`](Lexer::dead) only when no terminal can match anything.
    #[inline]
    pub fn start(&self) -> LexState {
        self.start
    }

    /// The dead state: nothing accepted, no growth, nothing reachable. Always state 0.
    #[inline]
    pub fn dead(&self) -> LexState {
        LexState::from(DEAD)
    }

    /// Whether `s` is the dead state.
    #[inline]
    pub fn is_dead(&self, s: LexState) -> bool {
        s.as_u32() == DEAD
    }

    /// The state after reading `byte` in state `s` (the dead state if the lexeme cannot go on).
    #[inline]
    pub fn next(&self, s: LexState, byte: u8) -> LexState {
        self.next_class(s, self.classes[byte as usize])
    }

    /// The state after reading all of `bytes` from `s` as one lexeme (no restart at the start
    /// state); the dead state as soon as the lexeme cannot go on.
    pub fn walk(&self, s: LexState, bytes: &[u8]) -> LexState {
        let mut s = s;
        for &b in bytes {
            if self.is_dead(s) {
                break;
            }
            s = self.next(s, b);
        }
        s
    }

    /// The state after reading a byte of class `class` in state `s`; for maskers that work on
    /// classes (see [`byte_class`](Lexer::byte_class)).
    #[inline]
    pub fn next_class(&self, s: LexState, class: u8) -> LexState {
        LexState::from(self.table[s.as_usize() * self.class_len + class as usize])
    }

    /// Whether reading `byte` in `s` extends the lexeme.
    #[inline]
    pub fn extends(&self, s: LexState, byte: u8) -> bool {
        !self.is_dead(self.next(s, byte))
    }

    /// The state of the branch that handed the lexeme of `s` to the parser (see the
    /// [module docs](super#inhibited-terminals)) after it reads `byte`, the first byte of its
    /// next lexeme:
    ///
    /// - the dead state if by longest match the lexeme of `s` does not end before `byte`
    ///   whatever follows (`byte` is a character that extends it, or begins only characters
    ///   that do), or the look-ahead of the terminals of `s` fails on `byte`, or no lexeme can
    ///   begin with `byte` (and what may follow) here;
    /// - `next(start, byte)` if `byte` does not extend the lexeme of `s`;
    /// - a pending state if `byte` begins a multi-byte character that may still extend it: the
    ///   branch reads the character in it, and dies if the complete character extends the
    ///   lexeme of `s` (see the [module docs](super#pending-states)).
    ///
    /// The dead state if `s` accepts nothing (no lexeme ends there). Maskers use this one
    /// function for every inhibited branch, so that they all agree with the parser.
    #[inline]
    pub fn next_inhibited(&self, s: LexState, byte: u8) -> LexState {
        self.next_inhibited_class(s, self.classes[byte as usize])
    }

    /// [`next_inhibited`](Lexer::next_inhibited) for a byte of class `class`.
    #[inline]
    pub fn next_inhibited_class(&self, s: LexState, class: u8) -> LexState {
        match self.inhibited_row[s.as_usize()] {
            NO_ROW => self.dead(),
            row => LexState::from(self.inhibited[row as usize * self.class_len + class as usize]),
        }
    }

    /// Whether the lexer goes back to lazy matches ([`LexerConfig::backtrack_lazy`] on a
    /// grammar with a lazy terminal): then some pending states accept and outlast a character
    /// (see the [module docs](super#backtracking-to-a-lazy-match)).
    pub fn backtracks(&self) -> bool {
        self.backtracks
    }

    /// Whether the lexemes that lead to `s` end inside a UTF-8 character: `s` accepts nothing
    /// and only continuation bytes (`0x80..=0xBF`) extend them. Pending states are inside a
    /// character too. The other states that are not dead are at a character boundary.
    #[inline]
    pub fn inside_char(&self, s: LexState) -> bool {
        self.inside_char[s.as_usize()]
    }

    /// Whether the look-ahead of the terminals of `s` fails on a next byte of class `class`
    /// (meaningful where that byte may end the lexeme).
    #[inline]
    pub(crate) fn look_ahead_fails(&self, s: LexState, byte: u8) -> bool {
        self.fail_sets[self.fail_index[s.as_usize()] as usize].contains(self.classes[byte as usize])
    }

    /// Whether the lexeme that led to `s` is handed to the parser inhibited by `s` (the next
    /// byte may kill that branch): `s` accepts something, and it can grow, or its accepted
    /// terminals have a look-ahead past the lexeme, or it is a pending state whose longer
    /// reading of an earlier lazy lexeme is still undecided (see the
    /// [module docs](super#backtracking-to-a-lazy-match)).
    #[inline]
    pub fn inhibits(&self, s: LexState) -> bool {
        !self.accepted(s).is_empty()
            && (self.can_grow(s) || self.has_look_ahead(s) || self.guarded[s.as_usize()])
    }

    /// Whether some next byte that does not extend the lexeme of `s` makes its accepted
    /// terminals' look-ahead fail.
    #[inline]
    pub fn has_look_ahead(&self, s: LexState) -> bool {
        self.fail_index[s.as_usize()] != 0
    }

    /// The terminals the lexeme that led to `s` completes, after tie-breaking; sorted, empty if
    /// none.
    #[inline]
    pub fn accepted(&self, s: LexState) -> &[TerminalId] {
        let (lo, hi) = self.accepted_span[s.as_usize()];
        &self.accepted_pool[lo as usize..hi as usize]
    }

    /// Whether some byte leads from `s` to a state that is not dead.
    #[inline]
    pub fn can_grow(&self, s: LexState) -> bool {
        self.can_grow[s.as_usize()]
    }

    /// The terminals `T` such that some byte string (possibly empty) leads from `s` to a state
    /// whose [`accepted`](Lexer::accepted) contains `T`. Empty exactly for the dead state.
    #[inline]
    pub fn reachable(&self, s: LexState) -> &TerminalSet {
        &self.reachable_sets[self.reachable_index[s.as_usize()] as usize]
    }

    /// The class of `byte`: bytes of one class lead every state to the same state.
    #[inline]
    pub fn byte_class(&self, byte: u8) -> u8 {
        self.classes[byte as usize]
    }

    /// The number of byte classes (1..=256); classes are `0..class_len()`.
    pub fn class_len(&self) -> usize {
        self.class_len
    }
}

/// Per state, the terminals accepted somewhere downstream, by a backward fixpoint: start from
/// each state's accepted set and push sets to predecessors until nothing changes. Returns
/// interned sets. The sets are worked on as rows of words in one buffer, so that a state's set
/// is pushed to its predecessors without a copy of its own.
fn reachable(dfa: &Dfa, terminal_len: usize) -> (Box<[u32]>, Box<[TerminalSet]>) {
    let n = dfa.state_len();
    let w = terminal_len.div_ceil(64).max(1);
    let preds = distinct_predecessors(dfa);
    let mut words = vec![0u64; n * w];
    for (row, accepted) in words.chunks_exact_mut(w).zip(&dfa.accepted) {
        for t in accepted.iter() {
            munch_vocab::bits::insert(row, t.as_usize());
        }
    }
    let mut queued = vec![true; n];
    let mut work: Vec<u32> = (0..n as u32).collect();
    let mut from = vec![0u64; w];
    while let Some(t) = work.pop() {
        queued[t as usize] = false;
        from.copy_from_slice(&words[t as usize * w..][..w]);
        for &p in preds.of(t) {
            let row = &mut words[p as usize * w..][..w];
            if munch_vocab::bits::union_with(row, &from) && !queued[p as usize] {
                queued[p as usize] = true;
                work.push(p);
            }
        }
    }

    let mut interned: AHashMap<&[u64], u32> = AHashMap::new();
    let mut unique = Vec::new();
    let index = words
        .chunks_exact(w)
        .map(|row| {
            *interned.entry(row).or_insert_with(|| {
                let mut set = TerminalSet::new(terminal_len);
                for i in 0..w * 64 {
                    if munch_vocab::bits::contains(row, i) {
                        set.insert(TerminalId::from_usize(i));
                    }
                }
                unique.push(set);
                unique.len() as u32 - 1
            })
        })
        .collect();
    (index, unique.into_boxed_slice())
}

impl fmt::Debug for Lexer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The tables are large; show their shape.
        f.debug_struct("Lexer")
            .field("terminals", &self.specs.len())
            .field("states", &self.state_len())
            .field("classes", &self.class_len)
            .field("start", &self.start)
            .field("lazy", &self.lazy)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexer_is_send_sync_clone() {
        fn check<T: Send + Sync + Clone>() {}
        check::<Lexer>();
    }
}
