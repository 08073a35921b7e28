//! [`TerminalParser`]: the GLR runtime fed terminal ids directly, without a lexer.

use std::sync::Arc;

use munch_lexer::TerminalId;
use smallvec::SmallVec;

use super::rnglr;
use super::state::{CommitError, CommitErrorKind};
use super::{Parser, ShiftCache};
use crate::gss::GssNode;

/// A GLR parse over terminal ids: the frontier of the GSS after the terminals shifted so far.
/// `clone` is cheap (the GSS is shared).
#[derive(Clone, Debug)]
pub struct TerminalParser {
    parser: Arc<Parser>,
    frontier: SmallVec<[GssNode; 2]>,
    shifted: usize,
}

impl TerminalParser {
    /// The parse of the empty terminal string.
    pub fn new(parser: Arc<Parser>) -> Self {
        Self {
            parser,
            frontier: SmallVec::from_elem(GssNode::root(), 1),
            shifted: 0,
        }
    }

    /// Shifts `t` (after every reduction it allows); an ignored terminal is refused. On error the
    /// parse is unchanged.
    pub fn shift(&mut self, t: TerminalId) -> Result<(), CommitError> {
        let p = &*self.parser;
        let unexpected = || {
            CommitError::new(CommitErrorKind::UnexpectedTerminal {
                index: self.shifted,
                terminal: if t.as_usize() < p.terminal_len() {
                    p.terminal_name(t).to_string()
                } else {
                    format!("#{t}")
                },
            })
        };
        // Ignored terminals never reach the parser, as in a byte-level commit.
        if t.as_usize() >= p.cfg().terminal_len() || p.is_ignored(t) {
            return Err(unexpected());
        }
        let next = rnglr::shift(
            p.tables(),
            &self.frontier,
            &[t.as_u32()],
            &mut p.step_allowance(),
        )
        .map_err(|e| p.budget_error(e, self.shifted))?;
        if next.is_empty() {
            return Err(unexpected());
        }
        self.frontier = next;
        self.shifted += 1;
        Ok(())
    }

    /// Whether `t` can be shifted now.
    pub fn can_shift(&self, t: TerminalId, cache: &mut ShiftCache) -> bool {
        self.frontier
            .iter()
            .any(|n| self.parser.can_shift(n, t, cache))
    }

    /// Whether the terminals shifted so far form a sentence.
    pub fn is_accepting(&self) -> bool {
        let mut cache = ShiftCache::new();
        self.frontier
            .iter()
            .any(|n| self.parser.can_accept(n, &mut cache))
    }

    /// Whether the terminals shifted so far are a prefix of some sentence.
    pub fn is_live(&self) -> bool {
        let mut cache = ShiftCache::new();
        self.frontier
            .iter()
            .any(|n| self.parser.can_continue(n, &mut cache))
    }

    /// The frontier nodes (one per LR state).
    pub fn frontier(&self) -> &[GssNode] {
        &self.frontier
    }

    /// The number of terminals shifted.
    pub fn shifted_len(&self) -> usize {
        self.shifted
    }
}
