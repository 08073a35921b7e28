//! Whole-input reference lexing: [`Lexer::tokenize`].

use smallvec::SmallVec;

use super::error::LexError;
use super::lexer::Lexer;
use crate::TerminalId;

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
    /// Splits all of `input` into lexemes by longest match with one byte of lookahead.
    ///
    /// Reads bytes while the next state is not dead. When the next byte would kill the lexeme
    /// (or the input ends), the lexeme read so far is emitted if its state accepts something
    /// (and the look-ahead of its terminals holds on that byte; it always holds at the end),
    /// and lexing restarts at [`start`](Lexer::start) with that byte; otherwise lexing fails at
    /// that byte (or at `input.len()`). It never backs up to an earlier, shorter match.
    ///
    /// Every lexeme is returned, including those of `%ignore`d terminals (see
    /// [`TerminalSpec::ignored`](super::TerminalSpec::ignored)); the caller filters them.
    pub fn tokenize(&self, input: &[u8]) -> Result<Vec<Lexeme>, LexError> {
        let mut lexemes = Vec::new();
        let mut state = self.start();
        let mut lexeme_start = 0;
        let mut i = 0;
        while i < input.len() {
            let next = self.next(state, input[i]);
            if !self.is_dead(next) {
                state = next;
                i += 1;
                continue;
            }
            // `state == start` means no byte was read yet, and the start accepts nothing.
            // A look-ahead that fails on this byte: the lexeme matches nothing here.
            let accepted = self.accepted(state);
            if accepted.is_empty() || self.kills(state, input[i]) {
                return Err(LexError {
                    offset: i,
                    lexeme_start,
                });
            }
            lexemes.push(Lexeme {
                start: lexeme_start,
                end: i,
                terminals: SmallVec::from_slice(accepted),
            });
            state = self.start();
            lexeme_start = i;
            // Byte `i` is read again from the start state.
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
