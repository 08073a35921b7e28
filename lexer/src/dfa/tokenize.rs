//! Whole-input reference lexing: [`Lexer::tokenize`].

use smallvec::SmallVec;

use super::error::LexError;
use super::lexer::Lexer;
use crate::{LexState, TerminalId};

/// One lexeme found by [`Lexer::tokenize`]: the bytes `input[start..end]` and the terminals they
/// complete (after tie-breaking; sorted; never empty).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lexeme {
    /// Offset of the first byte.
    pub start: usize,
    /// Offset one past the last byte (`> start`).
    pub end: usize,
    /// The terminals still tied on this lexeme; the parser chooses among them.
    pub terminals: SmallVec<[TerminalId; 2]>,
}

impl Lexer {
    /// Splits all of `input` into lexemes by longest match with one character of lookahead.
    ///
    /// Reads bytes while the lexeme can go on. When the next character cannot extend it (or
    /// the input ends), the lexeme read so far is emitted if its state accepts something (and
    /// the look-ahead of its terminals holds on the next byte; it always holds at the end),
    /// and lexing restarts at [`start`](Lexer::start) with that character; otherwise lexing
    /// fails. It never backs up to an earlier, shorter match, except to the last character
    /// boundary: after a lexeme that accepts, a byte that begins a multi-byte character may
    /// extend the lexeme or not, which the rest of the character decides (at most three more
    /// bytes). This is what the streaming parser does with its two branches, the one that
    /// goes on and the inhibited one ([`next_inhibited`](Lexer::next_inhibited)).
    ///
    /// An error is at the first byte that neither branch can read (or at `input.len()`, with
    /// an incomplete lexeme or character there), in the lexeme the longest match was reading:
    /// the new one if the previous lexeme ended at that byte.
    ///
    /// Every lexeme is returned, including those of `%ignore`d terminals (see
    /// [`TerminalSpec::ignored`](super::TerminalSpec::ignored)); the caller filters them.
    pub fn tokenize(&self, input: &[u8]) -> Result<Vec<Lexeme>, LexError> {
        let mut lexemes = Vec::new();
        let mut state = self.start();
        let mut lexeme_start = 0;
        // A character that may or may not extend the lexeme: it began at `at`, where the
        // lexeme was complete in `ended`, and the branch that ended the lexeme there reads it
        // in `branch`.
        let mut fork: Option<(usize, LexState, LexState)> = None;
        for (i, &b) in input.iter().enumerate() {
            let next = self.next(state, b);
            let (at, ended, branch) = match fork {
                Some((at, ended, branch)) => (at, ended, self.next(branch, b)),
                None => (i, state, self.next_inhibited(state, b)),
            };
            match (self.is_dead(next), self.is_dead(branch)) {
                (false, false) => fork = Some((at, ended, branch)),
                (false, true) => fork = None,
                (true, false) => {
                    lexemes.push(Lexeme {
                        start: lexeme_start,
                        end: at,
                        terminals: SmallVec::from_slice(self.accepted(ended)),
                    });
                    lexeme_start = at;
                    fork = None;
                    state = branch;
                    continue;
                }
                (true, true) => {
                    // A complete lexeme that this byte ends: the error is in the next one.
                    let ended_here = fork.is_none()
                        && !self.accepted(state).is_empty()
                        && !self.look_ahead_fails(state, b);
                    return Err(LexError {
                        offset: i,
                        lexeme_start: if ended_here { i } else { lexeme_start },
                    });
                }
            }
            state = next;
        }
        if lexeme_start < input.len() {
            let accepted = self.accepted(state);
            if accepted.is_empty() {
                return Err(LexError {
                    offset: input.len(),
                    lexeme_start,
                });
            }
            lexemes.push(Lexeme {
                start: lexeme_start,
                end: input.len(),
                terminals: SmallVec::from_slice(accepted),
            });
        }
        Ok(lexemes)
    }
}
