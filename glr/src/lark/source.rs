//! Byte offsets → [`Span`]s (1-based line, column in characters), and source lines for
//! diagnostics.
//!
//! A grammar can be one megabyte on a single line, and every kept rule and terminal gets a
//! span, so a column lookup must not scan the line from its start: the index keeps a
//! checkpoint (offset, line, column) every [`CHECKPOINT`] bytes and a lookup scans at most that
//! far.

use crate::span::Span;

/// Bytes between two checkpoints (rounded up to the next character boundary): a lookup per
/// definition scans 64 on average, and the index takes an eighth of the text's size.
const CHECKPOINT: usize = 128;

/// Line and column lookup over one source text.
#[derive(Debug)]
pub(crate) struct LineIndex {
    /// (byte offset, line, column) at character boundaries, increasing.
    checkpoints: Vec<(usize, u32, u32)>,
}

impl LineIndex {
    pub(crate) fn new(src: &str) -> Self {
        let mut checkpoints = vec![(0, 1, 1)];
        let (mut line, mut column) = (1u32, 1u32);
        let mut next = CHECKPOINT;
        for (offset, &b) in src.as_bytes().iter().enumerate() {
            // A character starts at each byte that is not a UTF-8 continuation byte.
            if b & 0xC0 == 0x80 {
                continue;
            }
            if offset >= next {
                checkpoints.push((offset, line, column));
                next = offset + CHECKPOINT;
            }
            if b == b'\n' {
                line = line.saturating_add(1);
                column = 1;
            } else {
                column = column.saturating_add(1);
            }
        }
        Self { checkpoints }
    }

    /// The span of bytes `start..end` of `src` (the text this index was built from). Offsets
    /// inside a character count as that character.
    pub(crate) fn span(&self, src: &str, start: usize, end: usize) -> Span {
        let start = start.min(src.len());
        let end = end.clamp(start, src.len());
        let at = self.checkpoints.partition_point(|c| c.0 <= start) - 1;
        let (offset, mut line, mut column) = self.checkpoints[at];
        // Every character that starts before `start` moves the column: its first byte is the
        // one byte of it that is not a UTF-8 continuation byte (`0b10xx_xxxx`).
        for &b in &src.as_bytes()[offset..start] {
            if b == b'\n' {
                line = line.saturating_add(1);
                column = 1;
            } else if b & 0xC0 != 0x80 {
                column = column.saturating_add(1);
            }
        }
        Span {
            start,
            end,
            line,
            column,
        }
    }
}

/// The line of `src` holding byte `offset`, as (line start offset, line text without its line
/// terminator).
pub(crate) fn line_at(src: &[u8], offset: usize) -> (usize, &[u8]) {
    let offset = offset.min(src.len());
    let start = src[..offset]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let end = src[offset..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(src.len(), |i| offset + i);
    let mut line = &src[start..end];
    if let [rest @ .., b'\r'] = line {
        line = rest;
    }
    (start, line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_count_lines_and_characters() {
        let src = "ab\ncé d\n\nx";
        let idx = LineIndex::new(src);
        let s = idx.span(src, 0, 1);
        assert_eq!((s.line, s.column), (1, 1));
        let s = idx.span(src, 3, 4);
        assert_eq!((s.line, s.column), (2, 1));
        // 'd' is after the two-byte 'é': byte 7, column 4.
        let d = src.find('d').unwrap();
        let s = idx.span(src, d, d + 1);
        assert_eq!((s.line, s.column), (2, 4));
        // An offset inside 'é' counts as that character.
        let s = idx.span(src, 5, 5);
        assert_eq!((s.line, s.column), (2, 3));
        let x = src.find('x').unwrap();
        let s = idx.span(src, x, x + 1);
        assert_eq!((s.line, s.column), (4, 1));
    }

    #[test]
    fn checkpoints_agree_with_a_full_scan() {
        let mut src = String::new();
        for i in 0..5000 {
            src.push_str(if i % 7 == 0 { "é\n" } else { "ab" });
        }
        let idx = LineIndex::new(&src);
        let (mut line, mut column) = (1, 1);
        for (offset, c) in src.char_indices() {
            let s = idx.span(&src, offset, offset);
            assert_eq!((s.line, s.column), (line, column), "at {offset}");
            if c == '\n' {
                line += 1;
                column = 1;
            } else {
                column += 1;
            }
        }
    }

    #[test]
    fn line_at_strips_terminators() {
        let src = b"one\r\ntwo\nthree";
        assert_eq!(line_at(src, 1), (0, &b"one"[..]));
        assert_eq!(line_at(src, 6), (5, &b"two"[..]));
        assert_eq!(line_at(src, 14), (9, &b"three"[..]));
    }
}
