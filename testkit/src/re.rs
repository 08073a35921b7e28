//! [`Re`]: small regex syntax trees, written out for munch's lexer (through regex-syntax) and for
//! the `regex` crate, with the pattern of their viable prefixes: the reference that the lexer's
//! property tests and the fuzz harness check the lexer against.
//!
//! Every sub-pattern must match at least one string (the generators ensure it), which
//! [`Re::prefix`] relies on, and a negated set excludes at most three characters.

/// Proper non-empty prefixes of the UTF-8 encoding of any scalar value (no surrogates, no
/// overlongs), as a byte pattern: where a lexeme under `.` or a negated set may stop
/// mid-character and still be completed.
pub const UTF8_PARTIAL: &str = r"(?-u:[\xC2-\xDF]|\xE0[\xA0-\xBF]?|[\xE1-\xEC\xEE\xEF][\x80-\xBF]?|\xED[\x80-\x9F]?|\xF0(?:[\x90-\xBF][\x80-\xBF]?)?|[\xF1-\xF3](?:[\x80-\xBF][\x80-\xBF]?)?|\xF4(?:[\x80-\x8F][\x80-\xBF]?)?)";

/// A regex syntax tree (as the generators draw them).
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

/// The repetition bounds `(min, max)` generators draw from (`{1,1}` and `{0,0}` are left out:
/// the regex parser rewrites them away, laziness included).
pub const BOUNDS: &[(u32, Option<u32>)] = &[
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

    /// Whether the regex matches the empty string.
    pub fn nullable(&self) -> bool {
        match self {
            Re::Char(_) | Re::Set(_) | Re::NotSet(_) | Re::Dot => false,
            Re::Cat(rs) => rs.iter().all(Re::nullable),
            Re::Alt(rs) => rs.iter().any(Re::nullable),
            Re::Rep { sub, min, .. } => *min == 0 || sub.nullable(),
        }
    }

    /// Whether a repetition in the regex is lazy (what makes a terminal lazy).
    pub fn is_lazy(&self) -> bool {
        match self {
            Re::Char(_) | Re::Set(_) | Re::NotSet(_) | Re::Dot => false,
            Re::Cat(rs) | Re::Alt(rs) => rs.iter().any(Re::is_lazy),
            Re::Rep { sub, lazy, .. } => *lazy || sub.is_lazy(),
        }
    }
}

/// What a leftmost-first (backtracking, Python `re`) search of a pattern meets first, in its
/// order of alternatives, on a text that may go on: [`Re::first_event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstEvent {
    /// A match ending here: the search's answer whatever follows the text.
    Match(usize),
    /// A path that ran out of text: the answer is longer than the text, if the text goes on
    /// in a way that completes that path (every sub-pattern matches some string, so one does).
    MoreText,
    /// No path matches, whatever follows.
    NoMatch,
}

/// The backtracking search of [`Re::first_event`].
struct Search<'t> {
    text: &'t [u8],
    /// Steps left; the search gives up at zero.
    steps: std::cell::Cell<u64>,
}

/// The first event on one path and the ones after it (`None`: that path fails).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ev {
    Match(usize),
    MoreText,
    OutOfSteps,
}

impl Search<'_> {
    /// The character at `pos`: `Ok(Some((c, len)))`, `Ok(None)` at the end of the text or on
    /// a character the text stops inside (its bytes so far in `Err`), `Err(&[])` if invalid.
    fn char_at(&self, pos: usize) -> Result<Option<(char, usize)>, &[u8]> {
        let chunk = &self.text[pos..(pos + 4).min(self.text.len())];
        if chunk.is_empty() {
            return Ok(None);
        }
        let valid = match std::str::from_utf8(chunk) {
            Ok(s) => s,
            Err(e) if e.valid_up_to() > 0 => {
                std::str::from_utf8(&chunk[..e.valid_up_to()]).unwrap()
            }
            Err(e) if e.error_len().is_none() => return Err(chunk),
            Err(_) => return Err(&[]),
        };
        let c = valid.chars().next().unwrap();
        Ok(Some((c, c.len_utf8())))
    }

    fn atom(&self, re: &Re, pos: usize, k: &dyn Fn(usize) -> Option<Ev>) -> Option<Ev> {
        let takes = |c: char| match re {
            Re::Char(d) => c == *d,
            Re::Set(cs) => cs.contains(&c),
            Re::NotSet(cs) => !cs.contains(&c),
            Re::Dot => c != '\n',
            _ => unreachable!("atoms only"),
        };
        match self.char_at(pos) {
            Ok(Some((c, len))) => takes(c).then(|| k(pos + len)).flatten(),
            Ok(None) => Some(Ev::MoreText),
            // Text that stops inside a character: more text if the atom takes a character
            // beginning so (a negated set or `.` takes some of every such prefix).
            Err(partial) if !partial.is_empty() => {
                let begins = |c: &char| c.to_string().as_bytes().starts_with(partial);
                let some = match re {
                    Re::Char(d) => begins(d),
                    Re::Set(cs) => cs.iter().any(begins),
                    _ => true,
                };
                some.then_some(Ev::MoreText)
            }
            Err(_) => None,
        }
    }

    fn go(&self, re: &Re, pos: usize, k: &dyn Fn(usize) -> Option<Ev>) -> Option<Ev> {
        let left = self.steps.get();
        if left == 0 {
            return Some(Ev::OutOfSteps);
        }
        self.steps.set(left - 1);
        match re {
            Re::Char(_) | Re::Set(_) | Re::NotSet(_) | Re::Dot => self.atom(re, pos, k),
            Re::Cat(rs) => self.cat(rs, pos, k),
            Re::Alt(rs) => rs.iter().find_map(|r| self.go(r, pos, k)),
            Re::Rep {
                sub,
                min,
                max,
                lazy,
            } => self.rep(sub, *min, *max, *lazy, 0, pos, k),
        }
    }

    fn cat(&self, rs: &[Re], pos: usize, k: &dyn Fn(usize) -> Option<Ev>) -> Option<Ev> {
        match rs.split_first() {
            None => k(pos),
            Some((r, rest)) => self.go(r, pos, &|p| self.cat(rest, p, k)),
        }
    }

    /// `sub` repeated, `count` copies read so far.
    ///
    /// The paths are ordered as regex-automata's Thompson NFA orders them (the NFA the `regex`
    /// crate and munch's lexer run): `x{n,m}` is `n` copies and then `m - n` optional ones,
    /// each a copy of its own, so a copy that reads nothing goes on to the next; `x{n,}` is
    /// `n - 1` copies and then a loop `x+` (`x*` is `(x+)?`), and a copy in the loop that reads
    /// nothing leaves it, since going round again would revisit the copy's first node at the
    /// same position, which a PikeVM drops.
    #[allow(clippy::too_many_arguments)]
    fn rep(
        &self,
        sub: &Re,
        min: u32,
        max: Option<u32>,
        lazy: bool,
        count: u32,
        pos: usize,
        k: &dyn Fn(usize) -> Option<Ev>,
    ) -> Option<Ev> {
        let may_stop = count >= min;
        let may_go = max.is_none_or(|m| count < m);
        let more = || {
            self.go(sub, pos, &|p| {
                let in_loop = max.is_none() && count + 1 >= min.max(1);
                if in_loop && p == pos {
                    k(pos)
                } else {
                    self.rep(sub, min, max, lazy, count + 1, p, k)
                }
            })
        };
        let (first, second): (Option<Ev>, bool) = if lazy {
            (if may_stop { k(pos) } else { None }, may_go)
        } else {
            (if may_go { more() } else { None }, may_stop)
        };
        if first.is_some() || !second {
            return first;
        }
        if lazy {
            more()
        } else {
            k(pos)
        }
    }
}

impl Re {
    /// What a leftmost-first search of the regex at the start of `text` meets first: a match
    /// (its end), a path that needs more text, or nothing. `None` if the search took more
    /// than `steps` steps. Paths are tried in the `regex` crate's priority order, a copy of a
    /// repetition that reads nothing included (see `Search::rep`).
    pub fn first_event(&self, text: &[u8], steps: u64) -> Option<FirstEvent> {
        let search = Search {
            text,
            steps: std::cell::Cell::new(steps),
        };
        match search.go(self, 0, &|p| Some(Ev::Match(p))) {
            Some(Ev::Match(p)) => Some(FirstEvent::Match(p)),
            Some(Ev::MoreText) => Some(FirstEvent::MoreText),
            Some(Ev::OutOfSteps) => None,
            None => Some(FirstEvent::NoMatch),
        }
    }
}

impl std::fmt::Debug for Re {
    /// The pattern, as written for the regex parsers.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "/{}/", self.pattern())
    }
}
