//! Terminal patterns → one byte-level DFA; streaming longest-match lexing.
//!
//! # Principal types
//!
//! - [`TerminalSpec`]: one terminal — name, pattern (as `regex-syntax` HIR), literal-ness,
//!   priority, `%ignore`. Index `i` of the list is `TerminalId(i)`.
//! - [`Lexer`]: all terminals compiled into one minimal DFA over byte classes. Immutable,
//!   `Send + Sync`; built by [`Lexer::new`] within the budgets of a [`LexerConfig`].
//!   Per state: [`accepted`](Lexer::accepted), [`can_grow`](Lexer::can_grow),
//!   [`reachable`](Lexer::reachable); transitions by [`next`](Lexer::next) (one table lookup),
//!   and for the branch that has just handed a lexeme to the parser by
//!   [`next_inhibited`](Lexer::next_inhibited).
//! - [`TerminalSet`]: a bitset of terminals (also the parser's lookahead sets).
//! - [`Lexeme`], [`LexError`]: the output of [`Lexer::tokenize`], the whole-input reference
//!   lexer; [`LexerBuildError`]: why a build failed.
//!
//! # Lexing semantics
//!
//! A state is reached by reading a lexeme `w` from [`Lexer::start`]. Let `M(w)` be the terminals
//! whose pattern matches all of `w`.
//!
//! - **Tie-breaking.** [`Lexer::accepted`] is `M(w)` reduced to the terminals of the highest
//!   priority and then, if any of those is a literal ([`TerminalSpec::is_literal`]), to the
//!   literals among them. Whatever is still tied is kept, sorted: the GLR parser keeps the ones
//!   that parse. Ignored terminals take part in tie-breaking like any other.
//! - **Lazy terminals.** A terminal whose pattern has a non-greedy repetition (`*?`, `+?`, `??`,
//!   `{n,m}?`) follows Python's `re` ([`Lexer::is_lazy`]): it matches `w` iff a leftmost-first
//!   (backtracking-priority) search of its pattern, on a text starting with `w`, records a
//!   match at the end of `w`; a match drops the threads of lower priority and keeps the higher
//!   ones going. So `".*?"` and `/\*[\s\S]*?\*/` end at the first close, and a greedy loop
//!   around a lazy part keeps iterating: `/(\n[ ]*|#.*?\n)+/` on `"\n  x"` matches `"\n  "`.
//!   Leftmost-first applies to the whole pattern of such a terminal, its greedy alternations
//!   included (`/(a|ab)c*?/` matches `a` and not `ab`); a terminal with no lazy repetition keeps
//!   the plain reading (it matches every lexeme its pattern spells: `/a|ab/` matches `ab`).
//! - **Growth and reachability.** [`Lexer::can_grow`]: some byte leads to a state that is not
//!   dead. [`Lexer::reachable`]: the terminals some continuation (possibly empty) completes.
//!   The dead state accepts nothing, cannot grow and reaches nothing; every state with nothing
//!   reachable is the dead state (the DFA is minimal).
//! - **Unsupported patterns.** A pattern matching the empty string, a pattern that can match
//!   invalid UTF-8 (a byte-mode class or literal such as `(?-u:\xFF)`: lookahead is a whole
//!   character, so every lexeme must be whole characters), the anchors and word boundaries
//!   (`^ $ \b \B \A \z`), and the look-arounds of the next section that cannot be exact are
//!   build errors naming the terminal. A terminal with no pattern (`hir: None`, a `%declare`d
//!   one) never matches.
//! - **Longest match with one character of lookahead, no backtracking but to lazy matches and
//!   literals.** A
//!   lexer reads bytes while the next state is not dead. When the next character cannot extend
//!   the lexeme (or the input ends), the lexeme read so far is emitted if its state accepts
//!   something, and lexing restarts at the start state with that character; otherwise it is an
//!   error. It never goes back to an earlier accepting state, except to a lazy terminal's last
//!   match (see [below](#backtracking-to-a-lazy-match); [`LexerConfig::backtrack_lazy`]) and to
//!   a lexeme of literals (of ignored terminals) whose longer reading only literals (ignored
//!   terminals) could complete ([below](#backtracking-to-a-literal);
//!   [`LexerConfig::backtrack_literals`], [`LexerConfig::backtrack_ignored`]). The
//!   lookahead is a character, not a byte: after
//!   `é` with `KEY: /[a-zé]+/` and `VAL: /[^\x00-\x7f;→ ]+/`, the first byte of `→` could begin
//!   a `VAL` character, but `→` is not one, so `é` ends there (as in Lark, whose `re` matches
//!   characters). [`Lexer::tokenize`] does exactly this on a whole input.
//!
//! # Inhibited terminals
//!
//! A streaming lexer cannot see the next character when the current byte arrives, so the parser
//! (which drives the lexer) forks instead of waiting. After reading a byte into state `s` with
//! `accepted(s)` non-empty and `can_grow(s)`:
//!
//! 1. one branch hands `accepted(s)` to the parser now, marked *inhibited by `s`*, and restarts
//!    the lexer at [`Lexer::start`];
//! 2. the other branch keeps lexing at `s`.
//!
//! On the next byte `b`, the inhibited branch goes on in [`Lexer::next_inhibited`]`(s, b)`
//! instead of `next(start, b)`, which is dead where by longest match the lexeme did not end at
//! `s`: `b` is a character that extends it, or the look-ahead of `s`'s terminals fails on `b`
//! (see look-around below). When `b` begins a multi-byte character that might extend the
//! lexeme, both branches read it: branch 1 in a *pending state*, which dies if the complete
//! character extends the lexeme of `s` and goes on as an ordinary state if it does not; branch 2
//! dies in the second case. Once the character is complete, exactly one branch is left (or
//! none), and together they give the same lexemes as [`Lexer::tokenize`]. [`Lexer::inhibits`]
//! says which states fork this way: those that accept and can grow or have a look-ahead; when
//! `accepted(s)` is non-empty and `s` does neither, there is nothing to fork: the lexeme ends at
//! `s`.
//!
//! # Pending states
//!
//! A pending state is a state of the DFA like any other (reached only through
//! [`Lexer::next_inhibited`], never from the start state): one waiting on a character accepts
//! nothing and is [`inside_char`](Lexer::inside_char); one guarded by the longer reading of a
//! lazy match (next section) accepts what its own lexeme accepts. Its
//! [`reachable`](Lexer::reachable) terminals are those its continuations complete while the
//! branch lives, and [`Lexer::next`] moves it. So a parser head or a masker in a pending state
//! needs nothing beyond its lexer state, and a head's inhibitor is only ever read by its first
//! byte. The pending states are built from the minimal DFA (see `pending.rs`) and minimised
//! with it; a lexer whose terminals are all ASCII and greedy has none.
//!
//! # Backtracking to a lazy match
//!
//! Python's `re` gives a lazy terminal its last match before its threads die, which may lie
//! several bytes back: SynCode's `_NL: (/(\r?\n[\t ]*)+/ | COMMENT)+`, where `COMMENT` may be a
//! `LONG_STRING` (`/[ubf]?r?""".*?"""/`), matches `"\n"` in `"\nfrom"` only once `o` shows that
//! `fr` does not begin a string. The lexer goes back to it (with
//! [`LexerConfig::backtrack_lazy`], the default; turned off, `"\nfrom"` is an error at `o`):
//! after a lexeme `s` that a lazy terminal matches,
//! the inhibited branch lives on while the longer reading is undecided: it reads its next lexemes
//! in *guarded* pending states that also run the longer reading, and dies as soon as that
//! reading matches (longest match: the longer lexeme wins); once the longer reading dies the
//! guard is gone. The other branch reads on as usual and dies with the longer reading. A
//! guarded state accepts what its own lexeme accepts, and hands it over inhibited even where
//! it cannot grow ([`Lexer::inhibits`]), so that the guard goes on in its inhibited branch.
//! Exactly one branch is left once every guard is decided, and [`Lexer::tokenize`] gives the
//! same lexemes. Lexemes that no lazy terminal matches are never backtracked to.
//!
//! Everything that reads the lexer follows these states through the same API: the parser, the
//! oracle and the trie masker step it byte by byte; the token tables of the spanner and wda
//! maskers (`munch-tokens`) read a token's bytes on every reading at once, so a token may leave
//! several (the longer reading, and the guarded branch after one or more lexemes).
//!
//! # Backtracking to a literal
//!
//! With `"."` and `"..."`, the second byte of `..x` extends the lexeme `.` toward `...`, so by
//! longest match alone the first `.` is not a lexeme, and `..x` is an error at `x`. Lark's
//! lexers read `.` `.` `x` (its regexes try the longer literal, then the shorter), and Python's
//! `from .. import x` needs it. So the lexer also goes back to a lexeme that only literals (or
//! their stand-ins) match, when only literals could complete the longer reading
//! ([`LexerConfig::backtrack_literals`], the default): the inhibited branch lives on in guarded
//! pending states as after a lazy match, and dies if the longer reading matches (`...` is one
//! lexeme). Whether only literals can complete a reading is a property of its DFA state (no
//! state it leads to matches a terminal that is not a literal, before ties are broken: the
//! determiniser's `Dfa::kinds`, kept apart by minimisation). Such a reading lasts at most as
//! long as the longest literal, so its pending states are few. A longer reading that a regex
//! could complete (a block comment after `/`) is never gone back from: going back from every
//! failed reading, as Lark's regexes do, would multiply the states of a lexer with a division
//! beside its block comments (`bench/PERFORMANCE.md` has the figures).
//!
//! The same holds between `%ignore`d terminals ([`LexerConfig::backtrack_ignored`]): a lexeme
//! that only ignored terminals match is gone back to when only ignored terminals could
//! complete the longer reading. Lark's lark.lark ignores `WS_INLINE` and
//! `COMMENT: /\s*\/\/[^\n]*/`, whose reading goes on from any space: ` /x/` is a space and
//! then a regex there only this way. Neither reading reaches the parser, so this only decides
//! whether the text lexes, never the terminals the parser is handed.
//!
//! # Look-around
//!
//! A pattern may hold Python's look-arounds, written as reserved capture groups (see
//! [`look`]): `(?!X)`, `(?<!Y)`, `(?<=Y)`. They mean what Python's `re` means when Lark
//! matches the terminal at the lexeme's first byte of the whole text: a terminal matches the
//! lexeme `w` iff some match of its pattern spans exactly `w` with every assertion on its way
//! true of the text around it.
//!
//! - **Look-behind** `(?<=Y)`, `(?<!Y)`: `Y` must be bounded and never reach before the
//!   lexeme's first byte (its longest match is no longer than the fewest bytes read before the
//!   assertion), so the lexeme decides it; the DFA tracks the look-behind patterns' matches
//!   ending at each position (Lark's `(?<!\\)` after an opening quote).
//! - **Negative look-ahead** `(?!X)`: the threads that passed it run `X` alongside and die when
//!   it matches, inside the lexeme or after it. Where a terminal's match still waits on such a
//!   look-ahead, the state's [`Lexer::has_look_ahead`] holds and the next byte decides: on the
//!   bytes where the look-ahead fails (and the lexeme may end) the terminal does not match,
//!   which [`Lexer::next_inhibited`] folds into the inhibition. At the end of the text it holds.
//!   Lark's `(?!"")` after an opening quote and `/(?![1-9])/` after a zero are of this kind.
//! - **Refused** (build errors naming the terminal): positive look-ahead `(?=X)`; a look-around
//!   inside another; a look-ahead that the one byte after the lexeme does not decide; a lexeme
//!   whose tied terminals' look-aheads differ on some next byte, or whose conditional terminal
//!   beats another by priority (where the look-ahead fails the other would win, and a state
//!   accepts one set); a lazy repetition whose end the next byte does not decide.
//! - A lazy terminal that matches subject to a look-ahead keeps its lower-priority threads on
//!   the bytes where the look-ahead fails (Python's `.*?` would go on) and drops them on the
//!   others.
//!
//! # Intersections
//!
//! A terminal whose pattern starts with reserved groups named by [`meet_name`] is the lexemes
//! of the rest of its pattern that each `all` group's pattern matches too and no `none`
//! group's does (the groups are zero-width): the JSON Schema compiler writes one where a
//! string's constraints meet and their product is too large to write back as a regex. Each
//! part is determinised alone and the terminal's NFA is their product, trimmed to the states
//! from which a lexeme is accepted, within the state and memory budgets
//! ([`LexerBuildErrorKind::Intersection`] names the terminal). Parts may not hold anchors,
//! look-arounds or lazy repetitions.
//!
//! # Example
//!
//! ```
//! use munch_lexer::dfa::{Lexer, LexerConfig, TerminalSpec};
//! use regex_syntax::hir::Hir;
//!
//! let spec = |name: &str, hir: Hir, is_literal: bool| TerminalSpec {
//!     name: name.to_string(),
//!     hir: Some(hir),
//!     is_literal,
//!     priority: 0,
//!     ignored: false,
//! };
//! let specs = [
//!     spec("IF", Hir::literal(*b"if"), true),
//!     spec("NAME", regex_syntax::parse("[a-z]+").unwrap(), false),
//!     spec("WS", regex_syntax::parse(" +").unwrap(), false),
//! ];
//! let lexer = Lexer::new(&specs, &LexerConfig::default()).unwrap();
//! let lexemes = lexer.tokenize(b"if iffy").unwrap();
//! let names: Vec<&str> = lexemes
//!     .iter()
//!     .map(|l| lexer.terminal(l.terminals[0]).name.as_str())
//!     .collect();
//! assert_eq!(names, ["IF", "WS", "NAME"]);
//!
//! // Streaming: after "if" the lexeme is complete but can grow, so the parser would fork.
//! let s = lexer.next(lexer.next(lexer.start(), b'i'), b'f');
//! assert_eq!(lexer.accepted(s).len(), 1);
//! assert!(lexer.can_grow(s));
//! assert!(lexer.extends(s, b'f')); // "iff": the inhibited IF branch dies
//! assert!(lexer.is_dead(lexer.next_inhibited(s, b'f')));
//! assert!(!lexer.extends(s, b' ')); // "if ": the IF branch lives on
//! assert_eq!(lexer.next_inhibited(s, b' '), lexer.next(lexer.start(), b' '));
//! ```

mod determinize;
mod error;
mod lexer;
pub mod look;
mod meet;
mod minimize;
mod nfa;
mod pending;
mod set;
mod tokenize;

pub use error::{LexError, LexerBuildError, LexerBuildErrorKind};
pub use lexer::{Lexer, LexerConfig, StandIn};
pub use look::{look_around_name, LookAroundKind, LOOK_AROUND_PREFIX};
pub use meet::{meet_name, MEET_PREFIX};
pub use set::{Iter as TerminalSetIter, TerminalSet};
pub use tokenize::Lexeme;

use regex_syntax::hir::Hir;

/// One terminal as the lexer sees it. Index `i` of the list handed to the builder is
/// `TerminalId(i)`.
#[derive(Clone, Debug)]
pub struct TerminalSpec {
    /// Name, for diagnostics.
    pub name: String,
    /// The pattern over Unicode text; `None` for a terminal the lexer never produces
    /// (a `%declare`d one).
    pub hir: Option<Hir>,
    /// A plain string literal: beats a regex on a tie of the same lexeme.
    pub is_literal: bool,
    /// Higher priority wins a tie of the same lexeme.
    pub priority: i32,
    /// `%ignore`d: separates lexemes, never reaches the parser.
    pub ignored: bool,
}
