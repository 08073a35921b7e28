//! Random [`Re`]s (the testkit's regex syntax tree, written out for munch and the `regex` crate
//! with the pattern of its viable prefixes), random strings of their languages, and their
//! reproductions.
//!
//! Regexes are built over [`CHARS`] (ASCII, a space, a newline that `.` does not match, and 2-,
//! 3- and 4-byte UTF-8) with sets, negated sets, `.`, concatenation, alternation and greedy or
//! lazy repetition. Every sub-pattern matches at least one string, which [`Re::prefix`] relies
//! on.

use arbitrary::{Result, Unstructured};
pub use munch_testkit::re::Re;
use munch_testkit::re::BOUNDS;

use crate::repro::{call, Repro};

/// The characters patterns are made of.
pub const CHARS: &[char] = &['a', 'b', 'c', ' ', '\n', 'é', '€', '𐍈'];

/// Pieces random inputs are made of: the pattern characters, a byte no pattern character
/// contains, a lone UTF-8 lead byte, two bytes of a three-byte character, a stray continuation
/// byte, and a byte that is never UTF-8.
pub const PIECES: &[&[u8]] = &[
    b"a",
    b"b",
    b"c",
    b" ",
    b"\n",
    "é".as_bytes(),
    "€".as_bytes(),
    "𐍈".as_bytes(),
    b"x",
    b"\xc3",
    b"\xe2\x82",
    b"\x80",
    b"\xff",
];

/// A random regex at most `depth` operators deep (3 for a terminal's).
pub fn arbitrary(u: &mut Unstructured<'_>, depth: u32) -> Result<Re> {
    let choice = if depth == 0 {
        u.int_in_range(0..=3)?
    } else {
        u.int_in_range(0..=9)?
    };
    let chars = |u: &mut Unstructured<'_>| -> Result<Vec<char>> {
        let n = u.int_in_range(1..=3)?;
        (0..n).map(|_| u.choose(CHARS).copied()).collect()
    };
    let subs = |u: &mut Unstructured<'_>| -> Result<Vec<Re>> {
        let n = u.int_in_range(2..=3)?;
        (0..n).map(|_| arbitrary(u, depth - 1)).collect()
    };
    Ok(match choice {
        0 => Re::Char(*u.choose(CHARS)?),
        1 => Re::Set(chars(u)?),
        2 => Re::NotSet(chars(u)?),
        3 => Re::Dot,
        4 | 5 => Re::Cat(subs(u)?),
        6 | 7 => Re::Alt(subs(u)?),
        _ => {
            let (min, max) = *u.choose(BOUNDS)?;
            Re::Rep {
                sub: Box::new(arbitrary(u, depth - 1)?),
                min,
                max,
                lazy: u.ratio(1, 3)?,
            }
        }
    })
}

/// A random string of `re`'s language; unbounded repetitions get at most 2 extra copies.
/// `pick(n)` returns a number below `n`.
pub fn sample(re: &Re, pick: &mut dyn FnMut(usize) -> usize, out: &mut Vec<u8>) {
    let mut buf = [0; 4];
    match re {
        Re::Char(c) => out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
        Re::Set(cs) => {
            let c = cs[pick(cs.len())];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        Re::NotSet(_) | Re::Dot => {
            let excluded: &[char] = match re {
                Re::NotSet(cs) => cs,
                _ => &['\n'],
            };
            let allowed: Vec<char> = CHARS
                .iter()
                .copied()
                .chain(['x', 'ß'])
                .filter(|c| !excluded.contains(c))
                .collect();
            let c = allowed[pick(allowed.len())];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        Re::Cat(rs) => rs.iter().for_each(|r| sample(r, pick, out)),
        Re::Alt(rs) => sample(&rs[pick(rs.len())], pick, out),
        Re::Rep { sub, min, max, .. } => {
            let max = max.unwrap_or(min + 2);
            let n = min + pick((max - min + 1) as usize) as u32;
            (0..n).for_each(|_| sample(sub, pick, out));
        }
    }
}

impl Repro for Re {
    fn repro(&self, out: &mut String) {
        match self {
            Re::Char(c) => call(out, "Re::Char", &[c]),
            Re::Set(cs) => call(out, "Re::Set", &[cs]),
            Re::NotSet(cs) => call(out, "Re::NotSet", &[cs]),
            Re::Dot => out.push_str("Re::Dot"),
            Re::Cat(rs) => call(out, "Re::Cat", &[rs]),
            Re::Alt(rs) => call(out, "Re::Alt", &[rs]),
            Re::Rep {
                sub,
                min,
                max,
                lazy,
            } => {
                out.push_str("Re::Rep { sub: ");
                sub.repro(out);
                out.push_str(&format!(", min: {min}, max: {max:?}, lazy: {lazy} }}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::bytes::Regex;

    fn full(p: &str) -> Regex {
        Regex::new(&format!("^(?:{p})$")).unwrap()
    }

    #[test]
    fn prefix_pattern_accepts_exactly_the_completable_prefixes() {
        let re = Re::Cat(vec![
            Re::Char('é'),
            Re::Rep {
                sub: Box::new(Re::Set(vec!['a', '€'])),
                min: 1,
                max: Some(2),
                lazy: false,
            },
        ]);
        let prefix = full(&re.prefix());
        for ok in [
            &b""[..],
            b"\xc3",
            "é".as_bytes(),
            "é€".as_bytes(),
            b"\xc3\xa9a\xe2\x82",
        ] {
            assert!(prefix.is_match(ok), "{ok:?}");
        }
        for bad in [&b"a"[..], b"\xc3a", "éaaa".as_bytes(), "é€a€".as_bytes()] {
            assert!(!prefix.is_match(bad), "{bad:?}");
        }
    }

    #[test]
    fn samples_match_their_pattern() {
        let mut state = 12345u64;
        let mut pick = |n: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % n as u64) as usize
        };
        for seed in 0..200u32 {
            let bytes: Vec<u8> = (0..64).map(|i| (seed * 31 + i * 7) as u8).collect();
            let re = arbitrary(&mut Unstructured::new(&bytes), 3).unwrap();
            let mut out = Vec::new();
            sample(&re, &mut pick, &mut out);
            assert!(full(&re.pattern()).is_match(&out), "{re:?} {out:?}");
        }
    }

    #[test]
    fn repro_rebuilds_the_value() {
        let re = Re::Rep {
            sub: Box::new(Re::Alt(vec![Re::Dot, Re::NotSet(vec!['\n'])])),
            min: 0,
            max: None,
            lazy: true,
        };
        assert_eq!(
            re.to_repro(),
            "Re::Rep { sub: Box::new(Re::Alt(vec![Re::Dot, Re::NotSet(vec!['\\n'])])), min: 0, \
             max: None, lazy: true }"
        );
    }
}
