//! Parsing whole texts from scratch, as `munch parse` and the conformance suite do.

use std::sync::Arc;

use munch_glr::parser::{CommitErrorKind, Parser, ParserState};

/// Where and why a text was rejected.
#[derive(Clone, Debug)]
pub struct Rejection {
    /// Byte offset where the text stopped being a prefix of a sentence (its length when only
    /// the end was missing).
    pub offset: usize,
    /// Why.
    pub message: String,
}

/// Parses `text` from scratch: `Ok(())` if the whole text is a sentence of the grammar.
pub fn parse_text(parser: &Arc<Parser>, text: &[u8]) -> Result<(), Rejection> {
    let mut state = ParserState::new(Arc::clone(parser));
    if let Err(e) = state.commit_bytes(text) {
        let offset = match e.kind() {
            CommitErrorKind::Rejected { offset, .. } | CommitErrorKind::Budget { offset, .. } => {
                *offset
            }
            _ => 0,
        };
        return Err(Rejection {
            offset,
            message: e.to_string(),
        });
    }
    if state.is_accepting() {
        Ok(())
    } else {
        Err(Rejection {
            offset: text.len(),
            message: "unexpected end of input".to_string(),
        })
    }
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
pub fn line_column(text: &[u8], offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::line_column;

    #[test]
    fn line_column_counts_lines_and_characters() {
        let text = "ab\ncδe\nf".as_bytes();
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 3), (2, 1));
        // 'δ' is two bytes: byte 6 ('e') is the third character of line 2.
        assert_eq!(line_column(text, 6), (2, 3));
        assert_eq!(line_column(text, 100), (3, 2));
    }
}
