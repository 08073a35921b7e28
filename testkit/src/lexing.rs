//! The longest-match loop of munch's lexing semantics, written once for the reference lexers
//! that the lexer's property tests and the fuzz harness compare [`munch_lexer`]'s DFA with.

/// A lexeme of [`longest_match`]: `(start, end, what it completes)`.
pub type Lexeme<T> = (usize, usize, T);

/// Longest match with one character of lookahead over all of `input`: read while `alive` holds
/// of the bytes read (some terminal can still complete a lexeme starting with them); if that
/// stops inside a character, back up to the last character boundary (at most three bytes) and
/// emit there what `accepted` says the lexeme completes. An empty answer is an error `(offset,
/// lexeme start)`: where the reading stopped, or, after backing up, where the longer reading
/// stopped if the next lexeme fails no later.
pub fn longest_match<T: IsEmpty>(
    input: &[u8],
    alive: impl Fn(&[u8]) -> bool,
    accepted: impl Fn(&[u8]) -> T,
) -> Result<Vec<Lexeme<T>>, (usize, usize)> {
    longest_match_lazy(input, alive, accepted, |_, _| false)
}

/// [`longest_match`], and where the reading ends on no match: back up to its last match if
/// `backs_up(completed, longer)` says so of what that match completes and of the bytes the
/// longer reading went on with (the match and one more byte). munch's lexer goes back to a
/// lazy terminal's last match when the longer reading never matches again, and to a lexeme
/// of literals when only literals could have completed the longer reading.
pub fn longest_match_lazy<T: IsEmpty>(
    input: &[u8],
    alive: impl Fn(&[u8]) -> bool,
    accepted: impl Fn(&[u8]) -> T,
    backs_up: impl Fn(&T, &[u8]) -> bool,
) -> Result<Vec<Lexeme<T>>, (usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    // Where the reading that backed up to the current lexeme's start stopped.
    let mut backed_up: Option<(usize, usize)> = None;
    while i < input.len() {
        let rest = &input[i..];
        let mut l = 0;
        while l < rest.len() && alive(&rest[..l + 1]) {
            l += 1;
        }
        let mut m = char_boundary(&rest[..l]);
        let mut completed = accepted(&rest[..m]);
        if completed.is_empty() {
            if let Some(q) = (1..m).rev().find(|&q| !accepted(&rest[..q]).is_empty()) {
                let last = accepted(&rest[..q]);
                if backs_up(&last, &rest[..q + 1]) {
                    (m, completed) = (q, last);
                }
            }
        }
        if completed.is_empty() {
            let err = (i + l, i);
            return Err(match backed_up {
                Some(b) if b.0 >= err.0 => b,
                _ => err,
            });
        }
        // The oldest reading that went past this lexeme's end stays the error's lexeme while
        // the lexemes that follow end before where it stopped.
        if backed_up.is_some_and(|b| b.0 <= i + m) {
            backed_up = None;
        }
        if m < l && backed_up.is_none() {
            backed_up = Some((i + l, i));
        }
        out.push((i, i + m, completed));
        i += m;
    }
    Ok(out)
}

/// What a lexeme completes, empty when nothing.
pub trait IsEmpty {
    /// Whether it completes nothing.
    fn is_empty(&self) -> bool;
}

impl<T> IsEmpty for Vec<T> {
    fn is_empty(&self) -> bool {
        Vec::is_empty(self)
    }
}

/// The end of the last whole character of `bytes`, a viable lexeme (whole characters, then
/// perhaps the first bytes of one).
pub fn char_boundary(bytes: &[u8]) -> usize {
    // The last byte that is no continuation byte begins the last character.
    let Some(q) = bytes.iter().rposition(|&b| !(0x80..=0xBF).contains(&b)) else {
        return bytes.len();
    };
    let len = match bytes[q] {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    };
    if q + len <= bytes.len() {
        bytes.len()
    } else {
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backs_up_to_the_last_whole_character() {
        assert_eq!(char_boundary(b"ab"), 2);
        assert_eq!(char_boundary("é".as_bytes()), 2);
        assert_eq!(char_boundary(&"é→".as_bytes()[..3]), 2);
        assert_eq!(char_boundary(&"→".as_bytes()[..2]), 0);
        // `[a-z]+` over "ab→x": the reading stops at `→`, a whole lexeme "ab" is emitted.
        let lower = |b: &[u8]| b.iter().all(u8::is_ascii_lowercase);
        let arrow = "→".as_bytes();
        let alive = |b: &[u8]| lower(b) || arrow.starts_with(b);
        let accepted = |b: &[u8]| {
            if !b.is_empty() && (lower(b) || b == arrow) {
                vec![b.len()]
            } else {
                Vec::new()
            }
        };
        let text = "ab→x".as_bytes();
        let lexemes = longest_match(text, alive, accepted).unwrap();
        assert_eq!(
            lexemes,
            vec![(0, 2, vec![2]), (2, 5, vec![3]), (5, 6, vec![1])]
        );
        assert_eq!(longest_match(b"a1", alive, accepted), Err((1, 1)));
    }
}
