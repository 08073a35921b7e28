//! The `lexer` target: munch's lexer DFA against the [`RefLexer`](crate::reference::RefLexer).
//!
//! A case is a few terminals (literals and small regexes, priorities, lazy repetitions) and an
//! input made of [`PIECES`] (pattern characters, broken UTF-8, stray bytes). The check:
//!
//! - [`Lexer::new`] fails with [`LexerBuildErrorKind::EmptyMatch`] exactly when some terminal
//!   matches the empty string, and otherwise builds;
//! - [`Lexer::is_lazy`] agrees with the HIR;
//! - along every prefix of the input, the DFA state is dead exactly when no terminal is viable,
//!   and [`Lexer::accepted`] is the reference tie-break of the full matches;
//! - [`Lexer::tokenize`] equals [`RefLexer::tokenize`], lexemes and errors alike.

use std::fmt;

use arbitrary::{Arbitrary, Result, Unstructured};
use munch_lexer::dfa::{Lexer, LexerBuildErrorKind, LexerConfig};
use munch_lexer::TerminalId;

use crate::re::{CHARS, PIECES};
use crate::reference::{Pattern, RefLexer, Term};
use crate::repro::{repro_struct, test_text, Bytes};

/// Longest input, in pieces.
pub const MAX_PIECES: usize = 16;

/// One `lexer` case.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct LexerCase {
    /// The terminals; index `i` is `TerminalId(i)`.
    pub terms: Vec<Term>,
    /// The text to lex.
    pub input: Bytes,
}

/// A random terminal: mostly priority 0 and short literals over few characters, so that ties
/// between literals and regexes are common.
pub fn arbitrary_term(u: &mut Unstructured<'_>) -> Result<Term> {
    let pattern = if u.ratio(1, 3)? {
        let n = u.int_in_range(1..=3)?;
        let s = (0..n)
            .map(|_| u.choose(&CHARS[..6]).copied())
            .collect::<Result<String>>()?;
        Pattern::Literal(s)
    } else {
        Pattern::Regex(crate::re::arbitrary(u, 3)?)
    };
    let priority = if u.ratio(3, 4)? {
        0
    } else {
        u.int_in_range(-1..=2)?
    };
    Ok(Term {
        pattern,
        priority,
        ignored: u.ratio(1, 5)?,
    })
}

/// A random input of at most `max` pieces.
pub fn arbitrary_input(u: &mut Unstructured<'_>, max: usize) -> Result<Vec<u8>> {
    let n = u.int_in_range(0..=max)?;
    let mut out = Vec::new();
    for _ in 0..n {
        out.extend_from_slice(u.choose(PIECES)?);
    }
    Ok(out)
}

impl<'a> Arbitrary<'a> for LexerCase {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let n = u.int_in_range(1..=5)?;
        let terms = (0..n)
            .map(|_| arbitrary_term(u))
            .collect::<Result<Vec<_>>>()?;
        let input = arbitrary_input(u, MAX_PIECES)?;
        Ok(LexerCase {
            terms,
            input: Bytes(input),
        })
    }
}

repro_struct!(LexerCase { terms, input });

impl fmt::Debug for LexerCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let comment: Vec<String> = self
            .terms
            .iter()
            .enumerate()
            .map(|(i, t)| {
                format!(
                    "T{i}.{}: {}{}",
                    t.priority,
                    t.pattern.lark(),
                    if t.ignored { "  (ignored)" } else { "" }
                )
            })
            .chain([format!("input: {:?}", self.input)])
            .collect();
        f.write_str(&test_text(
            "lexer_regression",
            "lexer::check",
            self,
            &comment,
        ))
    }
}

/// Runs the `lexer` check; `Err` describes the first disagreement.
pub fn check(case: &LexerCase) -> std::result::Result<(), String> {
    let reference = RefLexer::new(&case.terms);
    let specs: Vec<_> = case
        .terms
        .iter()
        .enumerate()
        .map(|(i, t)| t.spec(i))
        .collect();
    let built = Lexer::new(&specs, &LexerConfig::default());
    let empty: Vec<usize> = (0..case.terms.len())
        .filter(|&t| reference.matches_empty(t))
        .collect();
    let lexer = match (built, empty.is_empty()) {
        (Ok(lexer), true) => lexer,
        (Err(e), false) => {
            return match e.kind() {
                LexerBuildErrorKind::EmptyMatch { terminal, .. }
                    if empty.contains(&terminal.as_usize()) =>
                {
                    Ok(())
                }
                other => Err(format!(
                    "terminals {empty:?} match the empty string; expected an EmptyMatch error, \
                     got {other:?}"
                )),
            };
        }
        (Ok(_), false) => {
            return Err(format!(
                "terminals {empty:?} match the empty string but the lexer was built"
            ))
        }
        // Going back to a lazy or ignored lexeme keeps the shorter reading's continuations
        // beside the longer one's, which nests: two small lazy ignored terminals can pass the
        // state budget (`/.|(.aa){1,2}?/` beside `/€é*?(.[^𐍈][^𐍈]){2,3}?a*?𐍈{1,2}?/`). A
        // budget is a typed refusal, allowed there.
        (Err(e), true)
            if matches!(
                e.kind(),
                LexerBuildErrorKind::TooManyStates { .. }
                    | LexerBuildErrorKind::TooMuchMemory { .. }
            ) && (0..case.terms.len())
                .any(|t| reference.is_lazy(t) || case.terms[t].ignored) =>
        {
            return Ok(())
        }
        (Err(e), true) => return Err(format!("the lexer failed to build: {e}")),
    };
    for t in 0..case.terms.len() {
        if lexer.is_lazy(TerminalId::from_usize(t)) != reference.is_lazy(t) {
            return Err(format!(
                "T{t}: is_lazy is {}, the HIR says {}",
                lexer.is_lazy(TerminalId::from_usize(t)),
                reference.is_lazy(t)
            ));
        }
    }

    let input = &case.input.0;
    // Every lexeme starting at 0 along the input: the DFA's per-state facts.
    let mut s = lexer.start();
    for l in 1..=input.len() {
        s = lexer.next(s, input[l - 1]);
        let alive = reference.alive(&input[..l]);
        if lexer.is_dead(s) == alive {
            return Err(format!(
                "after {:?}: the DFA is {} but the reference says {}",
                Bytes(input[..l].to_vec()),
                if lexer.is_dead(s) { "dead" } else { "alive" },
                if alive { "alive" } else { "dead" }
            ));
        }
        if lexer.is_dead(s) {
            break;
        }
        let expected: Vec<TerminalId> = reference
            .accepted(&input[..l])
            .into_iter()
            .map(TerminalId::from_usize)
            .collect();
        if lexer.accepted(s) != expected.as_slice() {
            return Err(format!(
                "after {:?}: accepted {:?}, the reference says {:?}",
                Bytes(input[..l].to_vec()),
                lexer.accepted(s),
                expected
            ));
        }
    }

    let expected = reference.tokenize(input);
    let got = lexer
        .tokenize(input)
        .map(|ls| {
            ls.into_iter()
                .map(|l| {
                    (
                        l.start,
                        l.end,
                        l.terminals.iter().map(|t| t.as_usize()).collect(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .map_err(|e| (e.offset, e.lexeme_start));
    if got != expected {
        return Err(format!(
            "tokenize {:?}:\n  munch:     {got:?}\n  reference: {expected:?}",
            case.input
        ));
    }
    Ok(())
}
