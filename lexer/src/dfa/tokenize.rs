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
    /// boundary (after a lexeme that accepts, a byte that begins a multi-byte character may
    /// extend the lexeme or not, which the rest of the character decides) and, with
    /// [`LexerConfig::backtrack_lazy`](super::LexerConfig::backtrack_lazy), to the last match of
    /// a lazy terminal that a longer reading never matched (see the
    /// [module docs](super#backtracking-to-a-lazy-match)). This is what the streaming parser
    /// does with its branches, the ones that go on and the inhibited ones
    /// ([`next_inhibited`](Lexer::next_inhibited)), and this function simulates them.
    ///
    /// An error is at the first byte that neither branch can read (or at `input.len()`, with
    /// an incomplete lexeme or character there), in the lexeme the longest match was reading:
    /// the new one if the previous lexeme ended at that byte.
    ///
    /// Every lexeme is returned, including those of `%ignore`d terminals (see
    /// [`TerminalSpec::ignored`](super::TerminalSpec::ignored)); the caller filters them.
    pub fn tokenize(&self, input: &[u8]) -> Result<Vec<Lexeme>, LexError> {
        // The branches the streaming parser would keep, oldest (the longest reading) first;
        // the lexemes they emitted form a tree (each entry points to the one before it).
        let mut emitted: Vec<(Lexeme, Option<usize>)> = Vec::new();
        let mut branches = vec![Branch {
            start: 0,
            state: self.start(),
            inhibitor: None,
            last: None,
        }];
        let mut next_branches: Vec<Branch> = Vec::new();
        for (i, &b) in input.iter().enumerate() {
            next_branches.clear();
            for br in &branches {
                let s = match br.inhibitor {
                    Some(inh) => self.next_inhibited(inh, b),
                    None => self.next(br.state, b),
                };
                if self.is_dead(s) {
                    continue;
                }
                if self.can_grow(s) {
                    push_branch(
                        &mut next_branches,
                        Branch {
                            start: br.start,
                            state: s,
                            inhibitor: None,
                            last: br.last,
                        },
                    );
                }
                if !self.accepted(s).is_empty() {
                    emitted.push((
                        Lexeme {
                            start: br.start,
                            end: i + 1,
                            terminals: SmallVec::from_slice(self.accepted(s)),
                        },
                        br.last,
                    ));
                    push_branch(
                        &mut next_branches,
                        Branch {
                            start: i + 1,
                            state: self.start(),
                            inhibitor: self.inhibits(s).then_some(s),
                            last: Some(emitted.len() - 1),
                        },
                    );
                }
            }
            if next_branches.is_empty() {
                // The longest reading's lexeme: the new one if it was complete before this
                // byte and the byte ends it. A longest reading that never matched past a lazy
                // lexeme is gone back from: then the new one too if the lexemes read after
                // that lazy one end here.
                let ends_here = |br: &Branch| {
                    br.inhibitor.is_none()
                        && !self.accepted(br.state).is_empty()
                        && !self.look_ahead_fails(br.state, b)
                };
                // A lexeme handed over just before this byte (its branch is at its next
                // lexeme's start) ended here unless its look-ahead fails on the byte.
                let ended_before = |br: &Branch| {
                    br.start == i && br.inhibitor.is_none_or(|s| !self.look_ahead_fails(s, b))
                };
                let main = &branches[0];
                let ended_here = ends_here(main)
                    || self.accepted(main.state).is_empty()
                        && branches[1..]
                            .iter()
                            .any(|br| br.start > main.start && (ends_here(br) || ended_before(br)));
                return Err(LexError {
                    offset: i,
                    lexeme_start: if ended_here { i } else { main.start },
                });
            }
            std::mem::swap(&mut branches, &mut next_branches);
        }
        // The first branch whose lexeme is complete at the end (or empty: the input ended
        // with a lexeme it emitted).
        let done = branches
            .iter()
            .find(|br| br.start == input.len() || !self.accepted(br.state).is_empty());
        let Some(done) = done else {
            return Err(LexError {
                offset: input.len(),
                lexeme_start: branches[0].start,
            });
        };
        let mut out = Vec::new();
        if done.start < input.len() {
            out.push(Lexeme {
                start: done.start,
                end: input.len(),
                terminals: SmallVec::from_slice(self.accepted(done.state)),
            });
        }
        let mut at = done.last;
        while let Some(e) = at {
            out.push(emitted[e].0.clone());
            at = emitted[e].1;
        }
        out.reverse();
        Ok(out)
    }
}

/// One branch of [`Lexer::tokenize`].
struct Branch {
    /// Where its current lexeme starts.
    start: usize,
    state: LexState,
    /// The state that inhibits it, before its first byte.
    inhibitor: Option<LexState>,
    /// Its last emitted lexeme (an index into the tree of emitted lexemes).
    last: Option<usize>,
}

/// Adds `branch` unless a branch in the same state and inhibition is there already: from
/// there on they behave alike, and the older one is kept.
fn push_branch(branches: &mut Vec<Branch>, branch: Branch) {
    if !branches
        .iter()
        .any(|b| b.state == branch.state && b.inhibitor == branch.inhibitor)
    {
        branches.push(branch);
    }
}
