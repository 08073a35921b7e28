//! [`Re`]: small generated regexes, written out for both munch (as HIR) and the `regex` crate,
//! with the pattern of their viable prefixes that the reference lexer needs.
//!
//! Regexes are built over [`CHARS`] (ASCII, a space, a newline that `.` does not match, and 2-,
//! 3- and 4-byte UTF-8) with sets, negated sets, `.`, concatenation, alternation and greedy or
//! lazy repetition. Every sub-pattern matches at least one string, which [`Re::prefix`] relies
//! on.

use arbitrary::{Arbitrary, Result, Unstructured};

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

/// Proper non-empty prefixes of the UTF-8 encoding of any scalar value (no surrogates, no
/// overlongs), as a byte pattern: where a lexeme under `.` or a negated set may stop
/// mid-character and still be completed.
const UTF8_PARTIAL: &str = r"(?-u:[\xC2-\xDF]|\xE0[\xA0-\xBF]?|[\xE1-\xEC\xEE\xEF][\x80-\xBF]?|\xED[\x80-\x9F]?|\xF0(?:[\x90-\xBF][\x80-\xBF]?)?|[\xF1-\xF3](?:[\x80-\xBF][\x80-\xBF]?)?|\xF4(?:[\x80-\x8F][\x80-\xBF]?)?)";

/// A generated regex.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Re {
    /// One character.
    Char(char),
    /// `[...]`: one of the characters (non-empty).
    Set(Vec<char>),
    /// `[^...]`: any character but these (non-empty).
    NotSet(Vec<char>),
    /// `.`: any character but `\n`.
    Dot,
    /// The items in order (at least one).
    Cat(Vec<Re>),
    /// One of the items (at least one).
    Alt(Vec<Re>),
    /// `sub{min,max}`, lazy (`{min,max}?`) or greedy; `max >= 1`.
    Rep {
        /// The repeated regex.
        sub: Box<Re>,
        /// Fewest copies.
        min: u32,
        /// Most copies (`None`: unbounded).
        max: Option<u32>,
        /// Non-greedy.
        lazy: bool,
    },
}

/// The repetition bounds the generator picks from (`{1,1}` and `{0,0}` are left out: the
/// regex parser rewrites them away, laziness included).
const BOUNDS: &[(u32, Option<u32>)] = &[
    (0, None),
    (1, None),
    (0, Some(1)),
    (0, Some(2)),
    (1, Some(2)),
    (2, Some(3)),
    (2, None),
    (2, Some(2)),
];

fn esc(c: char) -> String {
    format!(r"\x{{{:x}}}", c as u32)
}

/// The proper non-empty byte prefixes of `c`, as a byte alternation (`None` for ASCII).
fn partial(c: char) -> Option<String> {
    let mut buf = [0; 4];
    let bytes = c.encode_utf8(&mut buf).as_bytes();
    if bytes.len() == 1 {
        return None;
    }
    let prefixes: Vec<String> = (1..bytes.len())
        .map(|n| bytes[..n].iter().map(|b| format!(r"\x{b:02X}")).collect())
        .collect();
    Some(format!("(?-u:{})", prefixes.join("|")))
}

impl Re {
    /// A random regex at most `depth` operators deep.
    pub fn arbitrary_depth(u: &mut Unstructured<'_>, depth: u32) -> Result<Re> {
        let choice = if depth == 0 {
            u.int_in_range(0..=3)?
        } else {
            u.int_in_range(0..=9)?
        };
        let chars = |u: &mut Unstructured<'_>| -> Result<Vec<char>> {
            let n = u.int_in_range(1..=3)?;
            (0..n).map(|_| u.choose(CHARS).copied()).collect()
        };
        Ok(match choice {
            0 => Re::Char(*u.choose(CHARS)?),
            1 => Re::Set(chars(u)?),
            2 => Re::NotSet(chars(u)?),
            3 => Re::Dot,
            4 | 5 => {
                let n = u.int_in_range(2..=3)?;
                Re::Cat(
                    (0..n)
                        .map(|_| Re::arbitrary_depth(u, depth - 1))
                        .collect::<Result<_>>()?,
                )
            }
            6 | 7 => {
                let n = u.int_in_range(2..=3)?;
                Re::Alt(
                    (0..n)
                        .map(|_| Re::arbitrary_depth(u, depth - 1))
                        .collect::<Result<_>>()?,
                )
            }
            _ => {
                let (min, max) = *u.choose(BOUNDS)?;
                Re::Rep {
                    sub: Box::new(Re::arbitrary_depth(u, depth - 1)?),
                    min,
                    max,
                    lazy: u.ratio(1, 3)?,
                }
            }
        })
    }

    /// The regex in the syntax both `regex-syntax` and the `regex` crate read.
    pub fn pattern(&self) -> String {
        match self {
            Re::Char(c) => esc(*c),
            Re::Set(cs) => format!("[{}]", cs.iter().map(|&c| esc(c)).collect::<String>()),
            Re::NotSet(cs) => format!("[^{}]", cs.iter().map(|&c| esc(c)).collect::<String>()),
            Re::Dot => ".".to_string(),
            Re::Cat(rs) => rs.iter().map(|r| format!("(?:{})", r.pattern())).collect(),
            Re::Alt(rs) => {
                let alts: Vec<String> = rs.iter().map(Re::pattern).collect();
                format!("(?:{})", alts.join("|"))
            }
            Re::Rep {
                sub,
                min,
                max,
                lazy,
            } => {
                let op = match (min, max) {
                    (0, None) => "*".to_string(),
                    (1, None) => "+".to_string(),
                    (0, Some(1)) => "?".to_string(),
                    (m, None) => format!("{{{m},}}"),
                    (m, Some(n)) if m == n => format!("{{{m}}}"),
                    (m, Some(n)) => format!("{{{m},{n}}}"),
                };
                format!("(?:{}){op}{}", sub.pattern(), if *lazy { "?" } else { "" })
            }
        }
    }

    /// A pattern matching exactly the byte strings that some byte string extends to a full
    /// match (every sub-pattern matches something, so each piece below is completable).
    pub fn prefix(&self) -> String {
        match self {
            Re::Char(c) => {
                let mut alts = vec![String::new(), esc(*c)];
                alts.extend(partial(*c));
                format!("(?:{})", alts.join("|"))
            }
            Re::Set(cs) => {
                let mut alts = vec![String::new(), self.pattern()];
                alts.extend(cs.iter().filter_map(|&c| partial(c)));
                format!("(?:{})", alts.join("|"))
            }
            // Excluding at most three characters leaves every multi-byte prefix completable.
            Re::NotSet(_) | Re::Dot => format!("(?:|{}|{UTF8_PARTIAL})", self.pattern()),
            // A prefix of the first item, or all of it and a prefix of the rest.
            Re::Cat(rs) => match rs.split_first() {
                None => String::new(),
                Some((first, [])) => first.prefix(),
                Some((first, rest)) => format!(
                    "(?:{}|(?:{}){})",
                    first.prefix(),
                    first.pattern(),
                    Re::Cat(rest.to_vec()).prefix()
                ),
            },
            Re::Alt(rs) => {
                let alts: Vec<String> = rs.iter().map(Re::prefix).collect();
                format!("(?:{})", alts.join("|"))
            }
            // Up to max-1 whole copies, then a prefix of one more (fewer than `min` copies can
            // always be topped up).
            Re::Rep { sub, max, .. } => {
                let copies = match max {
                    None => "*".to_string(),
                    Some(n) => format!("{{0,{}}}", n - 1),
                };
                format!("(?:(?:{}){copies}{})", sub.pattern(), sub.prefix())
            }
        }
    }

    /// A random string of the regex's language; unbounded repetitions get at most 2 extra
    /// copies. `pick(n)` returns a number below `n`.
    pub fn sample(&self, pick: &mut dyn FnMut(usize) -> usize, out: &mut Vec<u8>) {
        let mut buf = [0; 4];
        match self {
            Re::Char(c) => out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
            Re::Set(cs) => {
                let c = cs[pick(cs.len())];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            Re::NotSet(_) | Re::Dot => {
                let excluded: &[char] = match self {
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
            Re::Cat(rs) => rs.iter().for_each(|r| r.sample(pick, out)),
            Re::Alt(rs) => rs[pick(rs.len())].sample(pick, out),
            Re::Rep { sub, min, max, .. } => {
                let max = max.unwrap_or(min + 2);
                let n = min + pick((max - min + 1) as usize) as u32;
                (0..n).for_each(|_| sub.sample(pick, out));
            }
        }
    }
}

impl<'a> Arbitrary<'a> for Re {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Re::arbitrary_depth(u, 3)
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

impl std::fmt::Debug for Re {
    /// The pattern, as written for the regex parsers.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "/{}/", self.pattern())
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
            let re = Re::arbitrary(&mut Unstructured::new(&bytes)).unwrap();
            let mut out = Vec::new();
            re.sample(&mut pick, &mut out);
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
