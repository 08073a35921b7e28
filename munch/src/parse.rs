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
///
/// A rejection's offset is the first byte after which the text is no longer a prefix of a
/// sentence. The parser, committing the text at once, notices some dead ends only where a
/// lexeme ends (after `→ ∃` where the grammar takes no quantifier, at the last byte of `∃`),
/// so a rejection is narrowed down to that byte by committing shorter prefixes (a binary
/// search: a prefix of a viable prefix is viable).
pub fn parse_text(parser: &Arc<Parser>, text: &[u8]) -> Result<(), Rejection> {
    let mut state = ParserState::new(Arc::clone(parser));
    if let Err(e) = state.commit_bytes(text) {
        return Err(match e.kind() {
            CommitErrorKind::Rejected { offset, .. } => first_failing_byte(parser, text, *offset),
            CommitErrorKind::Budget { offset, .. } => Rejection {
                offset: *offset,
                message: e.to_string(),
            },
            _ => Rejection {
                offset: 0,
                message: e.to_string(),
            },
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

/// The rejection of `text`, whose commit failed at byte `failed`: the first byte `b` such that
/// `text[..=b]` is not a viable prefix (at or before `failed`), and why.
fn first_failing_byte(parser: &Arc<Parser>, text: &[u8], failed: usize) -> Rejection {
    if text.is_empty() {
        // Not for a loaded grammar (its start rule derives some text), but never a panic.
        return Rejection {
            offset: 0,
            message: "no text can start here".to_string(),
        };
    }
    let viable = |len: usize| ParserState::new(Arc::clone(parser)).commit_bytes(&text[..len]);
    // `text[..lo]` is viable and `text[..hi]` is not.
    let (mut lo, mut hi) = (0, (failed + 1).min(text.len()));
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if viable(mid).is_ok() {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // The last `LEXEME_WINDOW` bytes committed one at a time, noting where a lexeme could begin
    // (some head at the start of one), to name the lexeme the byte does not continue.
    let from = lo.saturating_sub(LEXEME_WINDOW);
    let mut state = ParserState::new(Arc::clone(parser));
    let mut read_ok = state.commit_bytes(&text[..from]).is_ok();
    let mut boundary = vec![from == 0 || state.heads().any(|h| h.lexeme_is_empty())];
    for i in from..lo {
        if !read_ok || state.commit_bytes(&text[i..=i]).is_err() {
            read_ok = false;
            break;
        }
        boundary.push(state.heads().any(|h| h.lexeme_is_empty()));
    }
    let expected = if read_ok {
        state.expected()
    } else {
        Vec::new()
    };
    let at = hi - 1;
    let mut message = format!("byte {at} ({}) cannot continue ", describe_byte(text, at));
    match read_ok
        .then(|| lexeme_start(parser, &state, &boundary, &text[from..lo]))
        .flatten()
        .map(|start| from + start)
    {
        // Every head is inside a lexeme that the byte does not continue: by longest match the
        // lexer read on past where a shorter lexeme could have ended, and does not go back.
        Some(start) => {
            message.push_str(&format!(
                "the lexeme {:?} read from byte {start}",
                String::from_utf8_lossy(&text[start..lo])
            ));
            if !expected.is_empty() {
                message.push_str(&format!(
                    ", which only {} could complete",
                    expected.join(", ")
                ));
            }
        }
        None => {
            message.push_str("the text");
            if !expected.is_empty() {
                message.push_str(&format!("; expected one of: {}", expected.join(", ")));
            }
        }
    }
    Rejection {
        offset: at,
        message,
    }
}

/// The most bytes before a rejection where [`lexeme_start`] looks for the lexeme's start.
const LEXEME_WINDOW: usize = 256;

/// Where, in `read` (the text's last bytes before the rejection), the lexeme that every head
/// of `state` is inside began: the earliest place a lexeme could begin (`boundary`, per
/// prefix length of `read`) from which the lexer reaches a head's state over the rest of
/// `read`. `None` when some head is between lexemes, or no such place is found.
fn lexeme_start(
    parser: &Parser,
    state: &ParserState,
    boundary: &[bool],
    read: &[u8],
) -> Option<usize> {
    if state.heads().any(|h| h.lexeme_is_empty()) {
        return None;
    }
    let lexer = parser.lexer();
    let ends: Vec<_> = state.heads().map(|h| h.lex_state()).collect();
    (0..read.len()).filter(|&p| boundary[p]).find(|&p| {
        let mut s = lexer.start();
        for &b in &read[p..] {
            s = lexer.next(s, b);
            if lexer.is_dead(s) {
                return false;
            }
        }
        ends.contains(&s)
    })
}

/// Byte `at` of `text` for a person: the character if it is ASCII, else which byte of which
/// UTF-8 character it is, else its value.
fn describe_byte(text: &[u8], at: usize) -> String {
    let b = text[at];
    if b.is_ascii() {
        return format!("{:?}", b as char);
    }
    // The character holding it starts at most 3 bytes before.
    for start in (at.saturating_sub(3)..=at).rev() {
        let end = (start + 4).min(text.len());
        let ch = match std::str::from_utf8(&text[start..end]) {
            Ok(s) => s.chars().next(),
            Err(e) if e.valid_up_to() > 0 => {
                std::str::from_utf8(&text[start..start + e.valid_up_to()])
                    .ok()
                    .and_then(|s| s.chars().next())
            }
            Err(_) => None,
        };
        if let Some(c) = ch.filter(|c| start + c.len_utf8() > at) {
            return format!("byte {} of {:?}", at - start + 1, c);
        }
    }
    format!("{b:#04x}")
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
    use super::*;

    use munch_testkit::grammar::parser;

    /// `b` starts the lexeme `bq`, which the lexer can read but the parser cannot take after
    /// `a`: the commit of the whole text fails where `bq` ends, and the rejection is moved
    /// back to the `b`.
    #[test]
    fn a_rejection_is_at_the_first_byte_that_cannot_continue() {
        let p = parser("start: A C | B\nA: \"a\"\nB: \"bq\"\nC: \"c\"\n");
        assert!(parse_text(&p, b"ac").is_ok());
        let r = parse_text(&p, b"abq").unwrap_err();
        assert_eq!(r.offset, 1, "{}", r.message);
        assert_eq!(
            r.message,
            "byte 1 ('b') cannot continue the text; expected one of: C"
        );
        // Inside a lexeme: the message names it.
        let inside = parse_text(&p, b"bz").unwrap_err();
        assert_eq!(
            (inside.offset, inside.message.as_str()),
            (
                1,
                "byte 1 ('z') cannot continue the lexeme \"b\" read from byte 0, which only B \
                 could complete"
            )
        );
        // Far into a text: the lexeme is found in the last bytes read.
        let far = parser("start: (A \";\")* B\nA: \"a\"\nB: \"bq\"\n");
        let text = format!("{}bz", "a;".repeat(300));
        let r = parse_text(&far, text.as_bytes()).unwrap_err();
        assert_eq!(
            (r.offset, r.message.as_str()),
            (
                601,
                "byte 601 ('z') cannot continue the lexeme \"b\" read from byte 600, which only \
                 B could complete"
            )
        );
        // Cut inside the lexeme, and with a byte the lexer cannot read at all.
        assert_eq!(parse_text(&p, b"ab").unwrap_err().offset, 1);
        assert_eq!(parse_text(&p, b"az").unwrap_err().offset, 1);
        // A viable prefix that is not a sentence: the end.
        let end = parse_text(&p, b"a").unwrap_err();
        assert_eq!(
            (end.offset, end.message.as_str()),
            (1, "unexpected end of input")
        );
    }

    #[test]
    fn bytes_are_described_with_their_character() {
        let text = "x∃".as_bytes();
        assert_eq!(describe_byte(text, 0), "'x'");
        assert_eq!(describe_byte(text, 1), "byte 1 of '∃'");
        assert_eq!(describe_byte(text, 3), "byte 3 of '∃'");
        assert_eq!(describe_byte(&text[..3], 1), "0xe2");
        assert_eq!(describe_byte(&[0xff], 0), "0xff");
    }

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
