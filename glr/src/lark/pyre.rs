//! Python `re` syntax → `regex-syntax` HIR.
//!
//! Lark regexes are Python regexes. `regex-syntax` reads a different dialect, so this module
//! rewrites the pattern first (one pass, no recursion: groups are tracked on a heap stack),
//! then parses the rewrite with [`regex_syntax::ParserBuilder`]. Every difference it handles:
//!
//! - **Escapes of punctuation.** Python reads `\` before any non-alphanumeric character as that
//!   character (`\/`, `\"`, `\<`, `\#`, `\ `); `regex-syntax` rejects some of these and reads
//!   `\<` and `\>` as word boundaries. Every literal character that is not ASCII alphanumeric is
//!   emitted as `\x{HEX}`, which both dialects read as that one character (also inside classes
//!   and under the `x` flag).
//! - **`\Z`** (end of text in Python) becomes `\z`. `\A`, `\b`, `\B`, `\d`, `\D`, `\s`, `\S`,
//!   `\w`, `\W` keep Python's meaning: `\d` is the same in both dialects, while `\w` and `\s`
//!   are spelled out as Python defines them (see `python_perl_class`).
//! - **Numeric escapes.** `\xhh`, `\uhhhh`, `\Uhhhhhhhh` (exact digit counts, as Python
//!   requires) and octal `\0`, `\ooo` become `\x{…}`; `[\b]` is a backspace. `\1`…`\99` are
//!   back-references.
//! - **Character classes** are re-emitted item by item, because `regex-syntax` reads `[` inside
//!   a class as a nested class and `&&`, `--`, `~~` as set operations, which Python reads as
//!   plain characters.
//! - **`{`** that does not start a valid repetition is a literal in Python and an error in
//!   `regex-syntax`; `{,n}` means `{0,n}` in Python.
//! - **Groups.** Capturing and named groups (`(?P<name>…)`) become non-capturing (a lexer needs
//!   no captures); `(?#…)` comments are dropped; inline flags `(?imsx)`, `(?i:…)`, `(?-i:…)`
//!   are kept (`x` is applied here: whitespace and `#` comments are dropped while it is on).
//! - **Look-around** `(?!…)`, `(?<=…)`, `(?<!…)` becomes the reserved capture group the
//!   lexer reads as that assertion ([`munch_lexer::dfa::look`]); the lexer honours it as
//!   Python does or refuses the terminal by name.
//! - **What a DFA cannot express** makes the terminal patternless
//!   ([`crate::grammar::NoPattern::Unsupported`]) instead of failing the grammar: positive
//!   look-ahead `(?=…)`, back-references, conditional groups, atomic groups and possessive
//!   quantifiers. The construct is replaced by a plain group so
//!   that the rest of the pattern is still checked.
//! - Not translated: `$` keeps `regex-syntax`'s meaning (end of text, or of a line under `m`);
//!   Python's `$` also matches before a final newline. `\N{NAME}` and the `a`/`L` inline flags
//!   are reported as errors.

use munch_lexer::dfa::{look_around_name, LookAroundKind, MEET_PREFIX};
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, Repetition};
use regex_syntax::ParserBuilder;

/// A translated regex: its HIR, and the first construct a DFA cannot express, if any.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub(crate) hir: Hir,
    pub(crate) unsupported: Option<String>,
}

/// Python's meaning of a Perl class escape, in `regex-syntax` text (`in_class`: as items inside
/// `[...]`, where the negated ones become nested classes).
///
/// The two dialects disagree on `\w` and `\s`: Python's `\w` is `str.isalnum()` plus `_`
/// (letters and numbers, `[\p{L}\p{N}_]`), while regex-syntax's also has combining marks,
/// connector punctuation and join controls; Python's `\s` also matches U+001C–U+001F. `\d` is
/// the decimal digits (`\p{Nd}`) in both. What remains is the Unicode version: regex-syntax's
/// tables may know characters newer than the Python that runs Lark.
fn python_perl_class(letter: char, in_class: bool) -> &'static str {
    match (letter, in_class) {
        ('w', false) => "[\\p{L}\\p{N}_]",
        ('w', true) => "\\p{L}\\p{N}_",
        ('W', _) => "[^\\p{L}\\p{N}_]",
        ('s', false) => "[\\s\\x1C-\\x1F]",
        ('s', true) => "\\s\\x1C-\\x1F",
        ('S', _) => "[^\\s\\x1C-\\x1F]",
        ('D', _) => "\\D",
        _ => "\\d",
    }
}

/// Compiles the Python regex `pattern` with Lark flags `flags` (a subset of `imslux`).
/// The error is a message for [`super::error::ErrorKind::BadRegex`].
///
/// `meets`: [`super::LoadConfig::meets`].
pub(crate) fn compile(
    pattern: &str,
    flags: &str,
    nest_limit: u32,
    meets: bool,
) -> Result<Compiled, String> {
    if flags.contains('l') {
        // Lark's grammar syntax takes `l`, but it writes flags inline (`(?l:…)`), which
        // Python's `re` refuses, so Lark cannot compile such a terminal.
        return Err("`l` is not a regex flag (Lark cannot compile `(?l:…)`)".to_string());
    }
    let (out, unsupported) = translate_with(pattern, flags.contains('x'), meets)?;
    if !flags.contains('i') && !flags.contains('x') {
        if let Some(hir) = simple(&out, nest_limit) {
            return Ok(Compiled { hir, unsupported });
        }
    }
    let hir = ParserBuilder::new()
        .case_insensitive(flags.contains('i'))
        .multi_line(flags.contains('m'))
        .dot_matches_new_line(flags.contains('s'))
        .ignore_whitespace(flags.contains('x'))
        .unicode(true)
        .utf8(true)
        .nest_limit(nest_limit)
        .build()
        .parse(&out)
        .map_err(|e| match e {
            regex_syntax::Error::Parse(e) => e.kind().to_string(),
            regex_syntax::Error::Translate(e) => e.kind().to_string(),
            other => other.to_string(),
        })?;
    Ok(Compiled { hir, unsupported })
}

/// The deepest group nesting [`simple`] reads itself (its recursion's bound); deeper patterns
/// take regex-syntax's parser.
const MAX_SIMPLE_GROUPS: u32 = 32;

/// The HIR regex-syntax makes of the translated pattern `out` (flags as [`compile`] sets them
/// without `i` and `x`), when `out` keeps to what the translation writes for most terminals:
/// ASCII letters and digits, `\x{…}` escapes, classes of those with ranges (negated or not),
/// non-capturing groups, alternations and the quantifiers `*`, `+`, `?`, `{m}`, `{m,}`,
/// `{m,n}` (lazy or not). Anything else (anchors, `.`, Perl and Unicode classes, look-around
/// groups, nesting near `nest_limit`, whatever regex-syntax refuses) is `None`, for the
/// parser.
///
/// Written by hand because regex-syntax parses to an AST and then translates it, and a JSON
/// schema's terminals (its strings and number ranges) arrive with every request, where that
/// was a large part of the time to the first mask (`bench/PERFORMANCE.md`). This reader builds
/// the HIR with the same smart constructors the translator uses (`Hir::concat` merges
/// literals, `Hir::alternation` makes classes of single characters, `Hir::class` literals of
/// one-character classes), so the HIR is the same value; the tests check it against the
/// parser on random patterns.
fn simple(out: &str, nest_limit: u32) -> Option<Hir> {
    // regex-syntax counts nesting per group (group, alternation, concatenation, repetition)
    // and at the innermost level (alternation, concatenation, repetition, class, class
    // items): staying 4 per group and 8 more below its limit never reaches it.
    let max_groups = (nest_limit.checked_sub(8)? / 4).min(MAX_SIMPLE_GROUPS);
    let mut reader = Simple {
        s: out.as_bytes(),
        i: 0,
        groups: 0,
        max_groups,
    };
    let hir = reader.alternation()?;
    (reader.i == reader.s.len()).then_some(hir)
}

struct Simple<'a> {
    s: &'a [u8],
    i: usize,
    /// Groups open around the position.
    groups: u32,
    max_groups: u32,
}

impl Simple<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let here = self.peek() == Some(b);
        self.i += usize::from(here);
        here
    }

    fn alternation(&mut self) -> Option<Hir> {
        let mut alternates = vec![self.concat()?];
        while self.eat(b'|') {
            alternates.push(self.concat()?);
        }
        Some(if alternates.len() == 1 {
            alternates.pop()?
        } else {
            Hir::alternation(alternates)
        })
    }

    fn concat(&mut self) -> Option<Hir> {
        let mut items = Vec::new();
        // Literal characters that no quantifier follows, gathered into one literal: the value
        // `Hir::concat` would merge them into, without a `Hir` per character.
        let mut run = Vec::new();
        while let Some(b) = self.peek() {
            let atom = match b {
                b'|' | b')' => break,
                b'(' => {
                    self.i += 1;
                    if !(self.eat(b'?') && self.eat(b':')) || self.groups >= self.max_groups {
                        return None;
                    }
                    self.groups += 1;
                    let inner = self.alternation()?;
                    self.groups -= 1;
                    if !self.eat(b')') {
                        return None;
                    }
                    inner
                }
                b'[' => self.class()?,
                _ => {
                    let c = self.char()?;
                    let mut utf8 = [0; 4];
                    let bytes = c.encode_utf8(&mut utf8).as_bytes();
                    if !matches!(self.peek(), Some(b'*' | b'+' | b'?' | b'{')) {
                        run.extend_from_slice(bytes);
                        continue;
                    }
                    Hir::literal(bytes)
                }
            };
            if !run.is_empty() {
                items.push(Hir::literal(std::mem::take(&mut run)));
            }
            let item = self.repetition(atom)?;
            // The translator leaves empty items out of a concatenation.
            if !matches!(item.kind(), regex_syntax::hir::HirKind::Empty) {
                items.push(item);
            }
        }
        if !run.is_empty() {
            items.push(Hir::literal(run));
        }
        // `Hir::concat` of one item rebuilds that item as it is (its literals are merged and
        // its concatenations flat already), so one item is returned without it: most items
        // are a group's only one.
        if items.len() == 1 {
            return items.pop();
        }
        Some(Hir::concat(items))
    }

    /// A literal character: an ASCII letter or digit, or `\x{HEX}`.
    fn char(&mut self) -> Option<char> {
        let b = self.peek()?;
        if b.is_ascii_alphanumeric() {
            self.i += 1;
            return Some(char::from(b));
        }
        if b != b'\\' || self.s.get(self.i + 1..self.i + 3) != Some(b"x{") {
            return None;
        }
        self.i += 3;
        let mut value = 0u32;
        let mut digits = 0;
        while !self.eat(b'}') {
            let d = char::from(self.peek()?).to_digit(16)?;
            digits += 1;
            if digits > 6 {
                return None;
            }
            value = value * 16 + d;
            self.i += 1;
        }
        if digits == 0 {
            return None;
        }
        char::from_u32(value)
    }

    /// `atom` under the quantifier that follows it, if any.
    fn repetition(&mut self, atom: Hir) -> Option<Hir> {
        let (min, max) = match self.peek() {
            Some(b'*') => (0, None),
            Some(b'+') => (1, None),
            Some(b'?') => (0, Some(1)),
            Some(b'{') => {
                self.i += 1;
                let min = self.number()?;
                let max = if self.eat(b',') {
                    if self.peek() == Some(b'}') {
                        None
                    } else {
                        Some(self.number()?)
                    }
                } else {
                    Some(min)
                };
                if self.peek() != Some(b'}') || max.is_some_and(|max| max < min) {
                    return None;
                }
                (min, max)
            }
            _ => return Some(atom),
        };
        self.i += 1;
        let greedy = !self.eat(b'?');
        if matches!(self.peek(), Some(b'*' | b'+' | b'?' | b'{')) {
            return None;
        }
        Some(Hir::repetition(Repetition {
            min,
            max,
            greedy,
            sub: Box::new(atom),
        }))
    }

    fn number(&mut self) -> Option<u32> {
        let from = self.i;
        let mut n = 0u32;
        while let Some(d) = self.peek().filter(u8::is_ascii_digit) {
            n = n.checked_mul(10)?.checked_add(u32::from(d - b'0'))?;
            self.i += 1;
        }
        (self.i > from).then_some(n)
    }

    /// `[…]`: characters and ranges of them, negated by a leading `^`.
    fn class(&mut self) -> Option<Hir> {
        self.i += 1;
        let negated = self.eat(b'^');
        let mut ranges = Vec::new();
        while !self.eat(b']') {
            let lo = self.char()?;
            let hi = if self.eat(b'-') { self.char()? } else { lo };
            if hi < lo {
                return None;
            }
            ranges.push(ClassUnicodeRange::new(lo, hi));
        }
        if ranges.is_empty() {
            return None;
        }
        // One canonicalisation for the class (`push` sorts and merges at every range).
        let mut class = ClassUnicode::new(ranges);
        if negated {
            class.negate();
        }
        Some(Hir::class(Class::Unicode(class)))
    }
}

/// [`translate_with`] for a hand-written grammar (no intersection groups).
#[cfg(test)]
pub(crate) fn translate(pattern: &str, verbose: bool) -> Result<(String, Option<String>), String> {
    translate_with(pattern, verbose, false)
}

/// The `regex-syntax` rewrite of a Python pattern, and the first unsupported construct; the
/// reserved intersection groups are kept where `meets` ([`super::LoadConfig::meets`]).
fn translate_with(
    pattern: &str,
    verbose: bool,
    meets: bool,
) -> Result<(String, Option<String>), String> {
    let mut t = Translator {
        chars: pattern.chars().collect(),
        i: 0,
        out: String::with_capacity(pattern.len() + 16),
        verbose,
        meets,
        stack: Vec::new(),
        prev: Prev::Start,
        groups: 0,
        names: Vec::new(),
        unsupported: None,
        looks: 0,
        at_start: true,
    };
    t.run()?;
    Ok((t.out, t.unsupported))
}

/// What came before, for Python's "nothing to repeat" / "multiple repeat" checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prev {
    /// Start of pattern, group or alternative.
    Start,
    /// An anchor (`^`, `$`, `\b`, …), which Python does not let a quantifier follow.
    Anchor,
    Atom,
    Quantifier,
}

/// One item of a character class.
enum ClassItem {
    Char(char),
    /// `\d`, `\D`, `\s`, `\S`, `\w`, `\W`.
    Perl(char),
}

struct Translator {
    chars: Vec<char>,
    i: usize,
    out: String,
    verbose: bool,
    /// Keep the reserved intersection groups ([`super::LoadConfig::meets`]).
    meets: bool,
    /// For each open group: `verbose` before it.
    stack: Vec<bool>,
    prev: Prev,
    /// Capturing groups opened so far.
    groups: u32,
    names: Vec<String>,
    unsupported: Option<String>,
    /// Look-around groups emitted so far (their reserved names are numbered).
    looks: usize,
    /// Nothing but global flags so far.
    at_start: bool,
}

/// `c` as the translation writes it: itself if ASCII alphanumeric, else `\x{HEX}`.
fn push_char(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() {
        out.push(c);
        return;
    }
    out.push_str("\\x{");
    let v = u32::from(c);
    // Upper-case hex digits without leading zeros (one for U+0000).
    let digits = (u32::BITS - (v | 1).leading_zeros()).div_ceil(4);
    for k in (0..digits).rev() {
        out.push(char::from(
            b"0123456789ABCDEF"[((v >> (4 * k)) & 0xF) as usize],
        ));
    }
    out.push('}');
}

impl Translator {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn unsupported(&mut self, what: &str) {
        if self.unsupported.is_none() {
            self.unsupported = Some(what.to_string());
        }
    }

    fn run(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek(0) {
            if self.verbose && matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c') {
                self.i += 1;
                continue;
            }
            if self.verbose && c == '#' {
                while let Some(c) = self.peek(0) {
                    self.i += 1;
                    if c == '\n' {
                        break;
                    }
                }
                continue;
            }
            let global_flags = c == '(' && self.is_global_flags();
            match c {
                '\\' => self.escape()?,
                '[' => self.class()?,
                '(' => self.open_group()?,
                ')' => {
                    let Some(verbose) = self.stack.pop() else {
                        return Err("unbalanced parenthesis".to_string());
                    };
                    self.verbose = verbose;
                    self.out.push(')');
                    self.i += 1;
                    self.prev = Prev::Atom;
                }
                '|' => {
                    self.out.push('|');
                    self.i += 1;
                    self.prev = Prev::Start;
                }
                '*' | '+' | '?' => {
                    self.i += 1;
                    self.quantifier(&c.to_string())?;
                }
                '{' => match self.counted_repetition()? {
                    Some((text, len)) => {
                        self.i += len;
                        self.quantifier(&text)?;
                    }
                    None => {
                        self.i += 1;
                        self.literal('{');
                    }
                },
                '.' => {
                    self.out.push('.');
                    self.i += 1;
                    self.prev = Prev::Atom;
                }
                '^' | '$' => {
                    self.out.push(c);
                    self.i += 1;
                    self.prev = Prev::Anchor;
                }
                _ => {
                    self.i += 1;
                    self.literal(c);
                }
            }
            if !global_flags {
                self.at_start = false;
            }
        }
        if !self.stack.is_empty() {
            return Err("missing ), unterminated subpattern".to_string());
        }
        Ok(())
    }

    fn literal(&mut self, c: char) {
        push_char(&mut self.out, c);
        self.prev = Prev::Atom;
    }

    /// Emits a quantifier (already consumed) and its lazy `?` or possessive `+` suffix.
    fn quantifier(&mut self, q: &str) -> Result<(), String> {
        match self.prev {
            Prev::Start | Prev::Anchor => return Err("nothing to repeat".to_string()),
            Prev::Quantifier => return Err("multiple repeat".to_string()),
            Prev::Atom => {}
        }
        self.out.push_str(q);
        match self.peek(0) {
            Some('?') => {
                self.out.push('?');
                self.i += 1;
            }
            Some('+') => {
                self.unsupported("possessive quantifier");
                self.i += 1;
            }
            _ => {}
        }
        self.prev = Prev::Quantifier;
        Ok(())
    }

    /// At `{`: Python's `{m}`, `{m,}`, `{,n}`, `{m,n}` as (regex-syntax text, length), or
    /// `None` when the brace is a literal.
    fn counted_repetition(&self) -> Result<Option<(String, usize)>, String> {
        let digits = |from: usize| -> usize {
            let mut k = from;
            while self.peek(k).is_some_and(|c| c.is_ascii_digit()) {
                k += 1;
            }
            k
        };
        if self.peek(1) == Some('}') {
            return Ok(None);
        }
        let lo_end = digits(1);
        let lo: String = self.chars[self.i + 1..self.i + lo_end].iter().collect();
        let (hi, comma, k) = if self.peek(lo_end) == Some(',') {
            let hi_end = digits(lo_end + 1);
            let hi: String = self.chars[self.i + lo_end + 1..self.i + hi_end]
                .iter()
                .collect();
            (hi, true, hi_end)
        } else {
            (lo.clone(), false, lo_end)
        };
        if self.peek(k) != Some('}') {
            return Ok(None);
        }
        // Python's MAXREPEAT is 2^32 - 1; counts must be below it.
        let parse = |s: &str| -> Result<Option<u32>, String> {
            if s.is_empty() {
                return Ok(None);
            }
            match s.parse::<u64>() {
                Ok(v) if v < u64::from(u32::MAX) => Ok(Some(v as u32)),
                _ => Err("the repetition number is too large".to_string()),
            }
        };
        let min = parse(&lo)?.unwrap_or(0);
        let max = parse(&hi)?;
        if let Some(max) = max {
            if max < min {
                return Err("min repeat greater than max repeat".to_string());
            }
        }
        let text = match (comma, max) {
            (false, _) => format!("{{{min}}}"),
            (true, None) => format!("{{{min},}}"),
            (true, Some(max)) => format!("{{{min},{max}}}"),
        };
        Ok(Some((text, k + 1)))
    }

    /// `count` hex digits after the escape letter at `self.i + 1`.
    fn hex(&self, letter: char, count: usize) -> Result<char, String> {
        let mut v: u32 = 0;
        for k in 0..count {
            match self.peek(2 + k).and_then(|c| c.to_digit(16)) {
                Some(d) => v = v * 16 + d,
                None => return Err(format!("incomplete escape \\{letter}")),
            }
        }
        char::from_u32(v).ok_or_else(|| format!("bad escape \\{letter}{v:X}"))
    }

    /// The escape `\x`, `\u` or `\U` (`letter`) at `self.i` and its 2, 4 or 8 hex digits,
    /// read past.
    fn hex_escape(&mut self, letter: char) -> Result<char, String> {
        let n = match letter {
            'x' => 2,
            'u' => 4,
            _ => 8,
        };
        let c = self.hex(letter, n)?;
        self.i += 2 + n;
        Ok(c)
    }

    /// Octal digits starting at `self.i + 1` (at most `max` of them): (char, digits used).
    fn octal(&self, max: usize) -> Result<(char, usize), String> {
        let mut v: u32 = 0;
        let mut n = 0;
        while n < max {
            match self.peek(1 + n).and_then(|c| c.to_digit(8)) {
                Some(d) => {
                    v = v * 8 + d;
                    n += 1;
                }
                None => break,
            }
        }
        if v > 0o377 {
            return Err(format!(
                "octal escape value \\{v:o} outside of range 0-0o377"
            ));
        }
        Ok((char::from_u32(v).unwrap_or('\0'), n))
    }

    /// An escape outside a class (`self.i` at the backslash).
    fn escape(&mut self) -> Result<(), String> {
        let Some(e) = self.peek(1) else {
            return Err("bad escape (end of pattern)".to_string());
        };
        match e {
            'd' | 'D' | 'w' | 'W' | 's' | 'S' => {
                self.out.push_str(python_perl_class(e, false));
                self.i += 2;
                self.prev = Prev::Atom;
            }
            'b' | 'B' | 'A' | 'Z' => {
                self.out.push_str(if e == 'Z' {
                    "\\z"
                } else if e == 'A' {
                    "\\A"
                } else if e == 'b' {
                    "\\b"
                } else {
                    "\\B"
                });
                self.i += 2;
                self.prev = Prev::Anchor;
            }
            'a' | 'f' | 'n' | 'r' | 't' | 'v' => {
                self.i += 2;
                self.literal(simple_escape(e));
            }
            'x' | 'u' | 'U' => {
                let c = self.hex_escape(e)?;
                self.literal(c);
            }
            'N' => return Err("named escapes \\N{...} are not supported".to_string()),
            '0' => {
                // `\0` and up to two more octal digits.
                let (c, n) = {
                    let mut v = 0u32;
                    let mut n = 0;
                    while n < 2 {
                        match self.peek(2 + n).and_then(|c| c.to_digit(8)) {
                            Some(d) => {
                                v = v * 8 + d;
                                n += 1;
                            }
                            None => break,
                        }
                    }
                    (char::from_u32(v).unwrap_or('\0'), n)
                };
                self.i += 2 + n;
                self.literal(c);
            }
            '1'..='9' => {
                // Three octal digits are an octal escape; otherwise a group reference.
                let d2 = self.peek(2);
                let d3 = self.peek(3);
                let is_oct = |c: Option<char>| c.is_some_and(|c| ('0'..='7').contains(&c));
                if is_oct(Some(e)) && is_oct(d2) && is_oct(d3) {
                    let (c, _) = self.octal(3)?;
                    self.i += 4;
                    self.literal(c);
                    return Ok(());
                }
                let (group, len) = match d2 {
                    Some(d) if d.is_ascii_digit() => (
                        e.to_digit(10).unwrap_or(0) * 10 + d.to_digit(10).unwrap_or(0),
                        3,
                    ),
                    _ => (e.to_digit(10).unwrap_or(0), 2),
                };
                if group == 0 || group > self.groups {
                    return Err(format!("invalid group reference {group}"));
                }
                self.unsupported(&format!("back-reference `\\{group}`"));
                self.out.push_str("(?:)");
                self.i += len;
                self.prev = Prev::Atom;
            }
            c if c.is_ascii_alphabetic() => return Err(format!("bad escape \\{c}")),
            c => {
                self.i += 2;
                self.literal(c);
            }
        }
        Ok(())
    }

    /// An escape inside a class (`self.i` at the backslash).
    fn class_escape(&mut self) -> Result<ClassItem, String> {
        let Some(e) = self.peek(1) else {
            return Err("unterminated character set".to_string());
        };
        let item = match e {
            'd' | 'D' | 'w' | 'W' | 's' | 'S' => {
                self.i += 2;
                ClassItem::Perl(e)
            }
            'a' | 'b' | 'f' | 'n' | 'r' | 't' | 'v' => {
                self.i += 2;
                ClassItem::Char(if e == 'b' { '\x08' } else { simple_escape(e) })
            }
            'x' | 'u' | 'U' => ClassItem::Char(self.hex_escape(e)?),
            'N' => return Err("named escapes \\N{...} are not supported".to_string()),
            '0'..='7' => {
                let (c, n) = self.octal(3)?;
                self.i += 1 + n;
                ClassItem::Char(c)
            }
            c if c.is_ascii_alphanumeric() => return Err(format!("bad escape \\{c}")),
            c => {
                self.i += 2;
                ClassItem::Char(c)
            }
        };
        Ok(item)
    }

    /// A class item: an escape or a character.
    fn class_item(&mut self) -> Result<ClassItem, String> {
        match self.peek(0) {
            None => Err("unterminated character set".to_string()),
            Some('\\') => self.class_escape(),
            Some(c) => {
                self.i += 1;
                Ok(ClassItem::Char(c))
            }
        }
    }

    /// `[…]` (`self.i` at the `[`).
    fn class(&mut self) -> Result<(), String> {
        self.i += 1;
        self.out.push('[');
        if self.peek(0) == Some('^') {
            self.out.push('^');
            self.i += 1;
        }
        let mut first = true;
        loop {
            match self.peek(0) {
                None => return Err("unterminated character set".to_string()),
                Some(']') if !first => {
                    self.i += 1;
                    break;
                }
                _ => {}
            }
            first = false;
            let lo = self.class_item()?;
            if self.peek(0) == Some('-') && self.peek(1).is_some_and(|c| c != ']') {
                self.i += 1;
                let hi = self.class_item()?;
                match (lo, hi) {
                    (ClassItem::Char(a), ClassItem::Char(b)) if a <= b => {
                        push_char(&mut self.out, a);
                        self.out.push('-');
                        push_char(&mut self.out, b);
                    }
                    _ => return Err("bad character range".to_string()),
                }
            } else {
                match lo {
                    ClassItem::Char(c) => push_char(&mut self.out, c),
                    ClassItem::Perl(p) => self.out.push_str(python_perl_class(p, true)),
                }
            }
        }
        self.out.push(']');
        self.prev = Prev::Atom;
        Ok(())
    }

    /// Whether `self.i` starts a global inline flag group such as `(?i)`.
    fn is_global_flags(&self) -> bool {
        if self.peek(1) != Some('?') {
            return false;
        }
        let mut k = 2;
        while self.peek(k).is_some_and(|c| "aiLmsux".contains(c)) {
            k += 1;
        }
        k > 2 && self.peek(k) == Some(')')
    }

    /// A group opening (`self.i` at the `(`).
    fn open_group(&mut self) -> Result<(), String> {
        if self.peek(1) != Some('?') {
            self.groups += 1;
            return self.push_group(1);
        }
        match self.peek(2) {
            Some(':') => self.push_group(3),
            Some('P') => match self.peek(3) {
                Some('<') => {
                    let name = self.group_name(4, '>')?;
                    let len = 4 + name.chars().count() + 1;
                    if !self.meets && name.starts_with(MEET_PREFIX) {
                        // A JSON Schema grammar's text loaded as a hand-written one: read as a
                        // plain group, its terminal would take more than the schema allows.
                        return Err(format!(
                            "the group name '{name}' is reserved for the intersections of \
                             munch's JSON Schema grammars (load the schema, not its Lark text)"
                        ));
                    }
                    if self.meets && name.starts_with(MEET_PREFIX) {
                        // Kept for the lexer, which reads it as a part of an intersection.
                        self.names.push(name.clone());
                        return self.reserved_group(&name, len);
                    }
                    self.named_group(name)?;
                    self.push_group(len)
                }
                Some('=') => {
                    let name = self.group_name(4, ')')?;
                    if !self.names.contains(&name) {
                        return Err(format!("unknown group name '{name}'"));
                    }
                    self.unsupported(&format!("back-reference `(?P={name})`"));
                    self.i += 4 + name.chars().count() + 1;
                    self.out.push_str("(?:)");
                    self.prev = Prev::Atom;
                    Ok(())
                }
                _ => Err("unknown extension ?P".to_string()),
            },
            Some('=') => {
                self.unsupported("look-ahead `(?=...)`");
                self.push_group(3)
            }
            Some('!') => self.look_group(LookAroundKind::NotAhead, 3),
            Some('<') => match self.peek(3) {
                Some('=') => self.look_group(LookAroundKind::Behind, 4),
                Some('!') => self.look_group(LookAroundKind::NotBehind, 4),
                _ => {
                    let name = self.group_name(3, '>')?;
                    let len = 3 + name.chars().count() + 1;
                    self.named_group(name)?;
                    self.push_group(len)
                }
            },
            Some('#') => {
                let mut k = 3;
                loop {
                    match self.peek(k) {
                        None => return Err("missing ), unterminated comment".to_string()),
                        Some(')') => break,
                        Some(_) => k += 1,
                    }
                }
                self.i += k + 1;
                Ok(())
            }
            Some('(') => {
                self.unsupported("conditional group `(?(...)...)`");
                let mut k = 3;
                loop {
                    match self.peek(k) {
                        None => return Err("missing ), unterminated name".to_string()),
                        Some(')') => break,
                        Some(_) => k += 1,
                    }
                }
                self.push_group(k + 1)
            }
            Some('>') => {
                self.unsupported("atomic group `(?>...)`");
                self.push_group(3)
            }
            Some(c) if "aiLmsux-".contains(c) => self.flag_group(),
            Some(c) => Err(format!("unknown extension ?{c}")),
            None => Err("unexpected end of pattern".to_string()),
        }
    }

    /// A look-around opening: the reserved capture group the lexer reads as that assertion.
    fn look_group(&mut self, kind: LookAroundKind, len: usize) -> Result<(), String> {
        self.looks += 1;
        self.reserved_group(&look_around_name(kind, self.looks), len)
    }

    /// Opens a group the lexer reads by its reserved `name` (`self.i` at the `(`; the opening
    /// is `len` characters).
    fn reserved_group(&mut self, name: &str, len: usize) -> Result<(), String> {
        self.stack.push(self.verbose);
        self.out.push_str(&format!("(?P<{name}>"));
        self.i += len;
        self.prev = Prev::Start;
        Ok(())
    }

    fn push_group(&mut self, len: usize) -> Result<(), String> {
        self.stack.push(self.verbose);
        self.out.push_str("(?:");
        self.i += len;
        self.prev = Prev::Start;
        Ok(())
    }

    /// The group name starting at `self.i + from`, up to `close`.
    fn group_name(&self, from: usize, close: char) -> Result<String, String> {
        let mut k = from;
        let mut name = String::new();
        loop {
            match self.peek(k) {
                None => return Err("missing group name terminator".to_string()),
                Some(c) if c == close => break,
                Some(c) => name.push(c),
            }
            k += 1;
        }
        let mut cs = name.chars();
        let ok = cs.next().is_some_and(|c| c == '_' || c.is_alphabetic())
            && cs.all(|c| c == '_' || c.is_alphanumeric());
        if !ok {
            return Err(format!("bad character in group name '{name}'"));
        }
        Ok(name)
    }

    fn named_group(&mut self, name: String) -> Result<(), String> {
        if self.names.contains(&name) {
            return Err(format!("redefinition of group name '{name}'"));
        }
        self.names.push(name);
        self.groups += 1;
        Ok(())
    }

    /// `(?flags)`, `(?flags:…)` or `(?flags-flags:…)` (`self.i` at the `(`).
    fn flag_group(&mut self) -> Result<(), String> {
        let mut k = 2;
        let mut on = String::new();
        let mut off = String::new();
        while let Some(c) = self.peek(k).filter(|c| "aiLmsux".contains(*c)) {
            on.push(c);
            k += 1;
        }
        if self.peek(k) == Some('-') {
            k += 1;
            while let Some(c) = self.peek(k).filter(|c| "imsx".contains(*c)) {
                off.push(c);
                k += 1;
            }
            if off.is_empty() {
                return Err("missing flag".to_string());
            }
        }
        if let Some(bad) = on.chars().find(|c| *c == 'a' || *c == 'L') {
            return Err(format!("the inline flag `{bad}` is not supported"));
        }
        let kept = |s: &str| s.chars().filter(|c| "ims".contains(*c)).collect::<String>();
        match self.peek(k) {
            Some(')') if off.is_empty() => {
                if !self.at_start {
                    return Err("global flags not at the start of the expression".to_string());
                }
                if on.contains('x') {
                    self.verbose = true;
                }
                let on = kept(&on);
                if !on.is_empty() {
                    self.out.push_str(&format!("(?{on})"));
                }
                self.i += k + 1;
                Ok(())
            }
            Some(':') => {
                self.stack.push(self.verbose);
                if on.contains('x') {
                    self.verbose = true;
                }
                if off.contains('x') {
                    self.verbose = false;
                }
                let (on, off) = (kept(&on), kept(&off));
                self.out.push_str("(?");
                self.out.push_str(&on);
                if !off.is_empty() {
                    self.out.push('-');
                    self.out.push_str(&off);
                }
                self.out.push(':');
                self.i += k + 1;
                self.prev = Prev::Start;
                Ok(())
            }
            _ => Err("missing -, : or )".to_string()),
        }
    }
}

fn simple_escape(e: char) -> char {
    match e {
        'a' => '\x07',
        'f' => '\x0c',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        _ => '\x0b',
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tr(p: &str) -> String {
        translate(p, false).expect("translates").0
    }

    /// What regex-syntax makes of a translated pattern, flags as `compile` sets them.
    fn parsed(out: &str) -> Option<Hir> {
        ParserBuilder::new()
            .unicode(true)
            .utf8(true)
            .build()
            .parse(out)
            .ok()
    }

    #[test]
    fn push_char_writes_upper_case_hex() {
        for c in [
            'a',
            'Z',
            '7',
            '\0',
            '\n',
            '.',
            '{',
            'é',
            '\u{FFFF}',
            '\u{10000}',
            '\u{10FFFF}',
        ] {
            let mut out = String::new();
            push_char(&mut out, c);
            let expected = if c.is_ascii_alphanumeric() {
                c.to_string()
            } else {
                format!("\\x{{{:X}}}", c as u32)
            };
            assert_eq!(out, expected);
        }
    }

    #[test]
    fn simple_patterns_skip_the_parser_with_the_same_hir() {
        for p in [
            r#"\"order\_id\""#,
            "abc",
            r"\x22caf\xe9\x22",
            "日本語",
            r"\.\-\+\(\)",
            r"\u00e9\U0001F600",
            "a\tb",
            r"\n",
            "a b",
            "",
            "a|b",
            "a|",
            "|",
            "(?:)",
            "a(?:)b",
            "a+",
            "a{0}",
            "a{1}",
            "(?:)*",
            "(?:a|b|c)d",
            "(?:ab|ac)",
            "[ab]",
            "[a]",
            "[^a]",
            r"[^\x00-\U0010FFFF]",
            "a{2}",
            "a{2,}b{1,3}?c*?d+?e??",
            r#""(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*""#,
            r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?",
            "[ \t\n\r]{1,16}",
        ] {
            let out = tr(p);
            let fast = simple(&out, 250).unwrap_or_else(|| panic!("{p} ({out}) is simple"));
            assert_eq!(Some(fast.clone()), parsed(&out), "{p}");
            assert_eq!(compile(p, "", 250, false).unwrap().hir, fast);
        }
        // Written as the translation writes (or would not): what regex-syntax means by them
        // differs, or it refuses them.
        for out in [
            r"\d",
            ".",
            "(?i)a",
            "^a",
            "a$",
            r"\ba",
            "[a-]",
            "[-a]",
            "[]a]",
            "a**",
            "a{2,1}",
            "(?P<x>a)",
            "(?:a",
            "a)",
            "[z-a]",
            "a{99999999999}",
            "é",
            r"\x{D800}",
            r"\x{}",
            "a{,2}",
            "a{ 2}",
        ] {
            assert!(simple(out, 250).is_none(), "{out} is for the parser");
        }
        for p in [r"\d+", ".a", "(?!a)b", "a(?<!b)", r"a\Z"] {
            let out = tr(p);
            assert!(simple(&out, 250).is_none(), "{p} ({out}) is for the parser");
            assert_eq!(
                compile(p, "", 250, false).map(|c| c.hir).ok(),
                parsed(&out),
                "{p}"
            );
        }
        // Flags that change a literal's meaning take the parser.
        let folded = compile("ab", "i", 250, false).unwrap().hir;
        assert_ne!(folded, Hir::literal(*b"ab"));
        // Nesting near the limit is the parser's to refuse.
        let deep = "(?:(?:(?:(?:a)b)c)d)";
        assert!(simple(deep, 12).is_none());
        assert_eq!(simple(deep, 250), parsed(deep));
        assert!(compile("((((a))))", "", 3, false).is_err());
    }

    /// Patterns in the translation's dialect, mostly within what [`simple`] reads, with some
    /// of what it leaves to the parser.
    fn patterns() -> impl Strategy<Value = String> {
        let atom = prop_oneof![
            4 => "[a-c0-2]".prop_map(|s| s.to_string()),
            2 => prop_oneof![Just(0x22u32), Just(0x5C), Just(0x2D), Just(0xE9), Just(0x65E5),
                Just(0x1F600), Just(0)]
                .prop_map(|c| format!("\\x{{{c:X}}}")),
            2 => ("\\^?", "[a-c0-2]", "(?:-[d-f3-5])?", "[x-z]?").prop_map(|(n, a, r, b)| {
                format!("[{}{a}{r}{b}]", if n.is_empty() { "" } else { "^" })
            }),
            1 => prop_oneof![Just("."), Just("^"), Just("$"), Just(r"\d"), Just("[a-]"),
                Just("[]"), Just("(?i:a)")]
                .prop_map(str::to_string),
        ];
        atom.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                3 => prop::collection::vec(inner.clone(), 0..4).prop_map(|v| v.concat()),
                2 => prop::collection::vec(inner.clone(), 1..4).prop_map(|v| v.join("|")),
                2 => inner.clone().prop_map(|p| format!("(?:{p})")),
                3 => (inner, prop_oneof![Just("*"), Just("+"), Just("?"), Just("{2}"),
                    Just("{0}"), Just("{1,}"), Just("{1,3}"), Just("{3,1}"), Just("**")],
                    any::<bool>())
                    .prop_map(|(p, q, lazy)| format!("(?:{p}){q}{}", if lazy { "?" } else { "" })),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]
        #[test]
        fn simple_reads_what_the_parser_reads(out in patterns()) {
            if let Some(fast) = simple(&out, 250) {
                prop_assert_eq!(Some(fast), parsed(&out), "{}", out);
            }
        }
    }

    #[test]
    fn punctuation_escapes_become_hex() {
        assert_eq!(tr(r"\/\<a"), r"\x{2F}\x{3C}a");
        assert_eq!(tr(r"a\Z"), r"a\z");
        assert_eq!(tr(r"[[a-z&&]"), r"[\x{5B}a-z\x{26}\x{26}]");
        assert_eq!(tr(r"a{,3}b{2}c{1,}d{"), r"a{0,3}b{2}c{1,}d\x{7B}");
        assert_eq!(tr(r"(?P<n>a)(b)"), r"(?:a)(?:b)");
        assert_eq!(tr(r"(?#note)a"), "a");
        assert_eq!(tr(r"[\b]\101\0"), r"[\x{8}]A\x{0}");
    }

    #[test]
    fn verbose_mode_drops_whitespace_and_comments() {
        let (out, _) = translate("a b # c\n [ ]", true).unwrap();
        assert_eq!(out, r"ab[\x{20}]");
        let (out, _) = translate("(?x) a \\  b", false).unwrap();
        assert_eq!(out, r"a\x{20}b");
    }

    #[test]
    fn unsupported_constructs_are_reported() {
        let un = |p: &str| translate(p, false).unwrap().1;
        assert_eq!(un("a(?=b)").as_deref(), Some("look-ahead `(?=...)`"));
        // The lexer takes the others (and refuses what it cannot do exactly, by terminal).
        assert_eq!(un("a(?!b)"), None);
        assert_eq!(un("(?<!a)b"), None);
        assert_eq!(un("(?<=a)b"), None);
        let (out, _) = translate(r#""(?!"")a(?<!\\)"#, false).unwrap();
        assert_eq!(
            out,
            r"\x{22}(?P<__munch_look_na_1>\x{22}\x{22})a(?P<__munch_look_nb_2>\x{5C})"
        );
        assert_eq!(un(r"(a)\1").as_deref(), Some("back-reference `\\1`"));
        assert_eq!(un("a*+").as_deref(), Some("possessive quantifier"));
        assert_eq!(un("(?>a)").as_deref(), Some("atomic group `(?>...)`"));
        assert_eq!(un("a"), None);
    }

    #[test]
    fn python_errors() {
        for bad in [
            "*a",
            "a**",
            "(a",
            "a)",
            "[a",
            r"\q",
            r"\x4",
            "a{3,2}",
            "[z-a]",
            r"[\d-z]",
            r"\2",
            "a(?i)",
            "(?a)",
            r"\N{DIGIT ONE}",
            "\\",
        ] {
            assert!(translate(bad, false).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn perl_classes_keep_pythons_meaning() {
        // Expected values from Python 3.11's `re.fullmatch`.
        let cases: &[(&str, &str, bool)] = &[
            (r"\w", "\u{301}", false), // a combining mark: a word character for regex-syntax
            (r"\w", "²", true),        // `No`: alphanumeric for Python
            (r"\w", "_", true),
            (r"\w", "\u{203f}", false), // connector punctuation other than `_`
            (r"\s", "\x1c", true),
            (r"\s", "\u{85}", true),
            (r"[^\W\d]", "a", true),
            (r"[^\W\d]", "5", false),
            (r"[\s]", "\x1f", true),
            (r"\S", "\x1c", false),
        ];
        for &(pattern, text, expected) in cases {
            let hir = compile(pattern, "", 250, false).unwrap().hir;
            // One-character patterns: check the class directly.
            let ch = text.chars().next().unwrap();
            let matched = match hir.kind() {
                regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(c)) => {
                    c.ranges().iter().any(|r| r.start() <= ch && ch <= r.end())
                }
                other => panic!("{pattern}: not a class: {other:?}"),
            };
            assert_eq!(matched, expected, "{pattern} on {text:?}");
        }
    }

    #[test]
    fn compile_applies_flags() {
        let c = compile("ab", "i", 250, false).unwrap();
        assert!(c.hir.properties().minimum_len() == Some(2));
        assert!(c.unsupported.is_none());
        assert!(compile("(", "", 250, false).is_err());
    }

    #[test]
    fn intersection_groups_are_kept_only_when_asked() {
        let name = munch_lexer::dfa::meet_name(true, 1);
        let p = format!("(?P<{name}>a+)a");
        let (kept, _) = translate_with(&p, false, true).unwrap();
        assert_eq!(kept, format!("(?P<{name}>a+)a"));
        // In a hand-written grammar the name is refused: read as a plain group, a schema's
        // terminal loaded from its Lark text would take more than the schema allows.
        assert!(translate(&p, false).is_err());
        // Other named groups are groups either way.
        assert_eq!(translate_with("(?P<x>a)", false, true).unwrap().0, "(?:a)");
    }
}
