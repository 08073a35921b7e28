//! ECMA-262 patterns (JSON Schema's `pattern`, munch's `regex:` constraints) → `regex-syntax`
//! HIR over Unicode scalar values.
//!
//! The pattern is rewritten into `regex-syntax`'s dialect in one pass, then parsed. Where the
//! dialects differ, ECMA's meaning is kept: `\d` `\w` are ASCII, `\s` is ECMA's white space and
//! line terminators, `.` excludes the four line terminators, `[` inside a class is a literal,
//! `{` that does not start a quantifier is a literal, `\uXXXX` surrogate pairs are one
//! character. What a finite automaton cannot do (back-references, look-around, word
//! boundaries) is an error.

use std::sync::OnceLock;

use regex_syntax::hir::Hir;
use regex_syntax::ParserBuilder;

/// ECMA's `\s`: white space and line terminators.
const ECMA_SPACE: &str = r"\t\n\x0B\x0C\r\x20\xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
const WORD: &str = "A-Za-z0-9_";

/// The deepest nesting of groups a pattern may have.
const NEST_LIMIT: u32 = 100;

/// Reads an ECMA-262 pattern; the error says which construct is not supported. The built-in
/// formats' patterns are parsed once per process.
pub(crate) fn parse(pattern: &str) -> Result<Hir, String> {
    match format_patterns().iter().position(|p| p == pattern) {
        Some(i) => format_hir(i).clone(),
        None => parse_text(pattern),
    }
}

/// The pattern of each of [`FORMATS`](crate::format::FORMATS), made once per process.
fn format_patterns() -> &'static [String] {
    static PATTERNS: OnceLock<Vec<String>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        crate::format::FORMATS
            .iter()
            .map(|f| crate::format::pattern(f).unwrap_or_default())
            .collect()
    })
}

static FORMAT_HIRS: OnceLock<Vec<OnceLock<Result<Hir, String>>>> = OnceLock::new();

/// The parse of format `i`'s pattern, made once per process: the formats' patterns are
/// constants, and the longest (`ipv6`, `uri-reference`) take regex-syntax hundreds of
/// microseconds, a large part of a schema's compile.
fn format_hir(i: usize) -> &'static Result<Hir, String> {
    let hirs = FORMAT_HIRS.get_or_init(|| {
        (0..crate::format::FORMATS.len())
            .map(|_| OnceLock::new())
            .collect()
    });
    hirs[i].get_or_init(|| parse_text(&format_patterns()[i]))
}

fn parse_text(pattern: &str) -> Result<Hir, String> {
    let text = translate(pattern)?;
    ParserBuilder::new()
        .utf8(true)
        .unicode(true)
        .nest_limit(NEST_LIMIT)
        .build()
        .parse(&text)
        .map_err(|e| {
            // regex-syntax's message spans several lines with a caret; its last line says why.
            let msg = e.to_string();
            msg.lines()
                .last()
                .unwrap_or("invalid regex")
                .trim()
                .to_string()
        })
}

/// A pattern with look-arounds where they test the whole string, as patterns without them:
/// a string matches the pattern iff it matches every one of `all` and none of `none` (each
/// read as a `pattern` keyword is, unanchored where it is not anchored).
#[derive(Debug, PartialEq)]
pub(crate) struct Split {
    pub all: Vec<String>,
    pub none: Vec<String>,
}

/// `p` split where its look-arounds test the whole string (`None` when it has no such
/// look-around, when another look-around remains, or when a part is not a pattern munch reads):
///
/// - look-aheads at the start of an anchored pattern, `^(?!aws:)(?=.{3})REST`: each tests the
///   string from its first character, so `(?=X)` is the pattern `^(?:X)` and `(?!X)` its
///   negation; `REST` is `^(?:REST)`. A first look-ahead `(?=^X)` anchors an unanchored
///   pattern alike. Not with a top-level `|` after them (they would test one alternative);
/// - at the end, `(?![\s\S])` (no character follows: the end, `$`), and `(?<!X)$`, `(?<=X)$`
///   (the string does not end, or ends, with a match of `X`: the pattern `(?:X)$`).
pub(crate) fn split_look_arounds(p: &str) -> Option<Split> {
    let chars: Vec<char> = p.chars().collect();
    let mut all = Vec::new();
    let mut none = Vec::new();
    let caret = usize::from(chars.first() == Some(&'^'));
    let mut i = caret;
    let mut anchored = caret == 1;
    while chars.get(i) == Some(&'(')
        && chars.get(i + 1) == Some(&'?')
        && matches!(chars.get(i + 2), Some('=' | '!'))
    {
        let end = group_end(&chars, i)?;
        let body: String = chars[i + 3..end].iter().collect();
        let positive = chars[i + 2] == '=';
        if !anchored {
            // Unanchored, a look-ahead tests wherever a match starts; only `(?=^X)` pins that
            // to the first character.
            if !(positive && body.starts_with('^')) {
                return None;
            }
            anchored = true;
        }
        let part = format!("^(?:{body})");
        if positive {
            all.push(part);
        } else {
            none.push(part);
        }
        i = end + 1;
    }
    let led = i > caret;
    let mut rest: Vec<char> = chars[i..].to_vec();
    let (groups, bar) = top_level(&rest)?;
    if led && bar {
        return None;
    }
    let mut trailed = false;
    if !bar {
        if let Some(&(start, end)) = groups.last() {
            let group: String = rest[start..=end].iter().collect();
            let dollar = rest.last() == Some(&'$') && end + 2 == rest.len();
            if end + 1 == rest.len() && (group == r"(?![\s\S])" || group == "(?![^])") {
                rest.truncate(start);
                rest.push('$');
                trailed = true;
            } else if dollar && (group.starts_with("(?<!") || group.starts_with("(?<=")) {
                let part = format!("(?:{})$", &group[4..group.len() - 1]);
                if group.starts_with("(?<=") {
                    all.push(part);
                } else {
                    none.push(part);
                }
                rest.truncate(start);
                rest.push('$');
                trailed = true;
            }
        }
    }
    if !led && !trailed {
        return None;
    }
    let rest: String = rest.into_iter().collect();
    if anchored {
        if !rest.is_empty() {
            all.push(format!("^(?:{rest})"));
        }
    } else {
        all.push(rest);
    }
    let split = Split { all, none };
    split
        .all
        .iter()
        .chain(&split.none)
        .all(|q| parse(q).is_ok())
        .then_some(split)
}

/// The index of the `)` closing the group that opens at `chars[open]`, skipping escapes and
/// character classes.
fn group_end(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut j = open;
    while j < chars.len() {
        match chars[j] {
            '\\' => j += 1,
            '[' => j = class_end(chars, j)?,
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// The index of the `]` closing the class that opens at `chars[open]` (ECMA: `[]` and `[^]`
/// are whole classes, and `[` inside one is a literal).
fn class_end(chars: &[char], open: usize) -> Option<usize> {
    let mut j = open + 1;
    if chars.get(j) == Some(&'^') {
        j += 1;
    }
    while j < chars.len() {
        match chars[j] {
            '\\' => j += 1,
            ']' => return Some(j),
            _ => {}
        }
        j += 1;
    }
    None
}

/// The top-level groups of `chars` (first and last index), and whether a top-level `|`
/// separates alternatives; `None` when a group or class is not closed.
fn top_level(chars: &[char]) -> Option<(Vec<(usize, usize)>, bool)> {
    let mut groups = Vec::new();
    let mut bar = false;
    let mut j = 0;
    while j < chars.len() {
        match chars[j] {
            '\\' => j += 1,
            '[' => j = class_end(chars, j)?,
            '(' => {
                let end = group_end(chars, j)?;
                groups.push((j, end));
                j = end;
            }
            '|' => bar = true,
            _ => {}
        }
        j += 1;
    }
    Some((groups, bar))
}

fn hex(c: char) -> String {
    format!("\\x{{{:X}}}", c as u32)
}

fn translate(p: &str) -> Result<String, String> {
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len() * 2);
    let mut i = 0;
    let mut in_class = false;
    // Whether the class just opened (so `]` right after `[` or `[^` is... ECMA's empty class).
    let mut class_start = false;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if in_class {
            let first = class_start;
            class_start = false;
            match c {
                ']' => {
                    if first {
                        // `[]` matches nothing, `[^]` anything (ECMA); `out` ends with `[` or `[^`.
                        out.push_str(r"\x{0}&&\x{1}]");
                    } else {
                        out.push(']');
                    }
                    in_class = false;
                }
                '\\' => {
                    let (text, next) = escape(&chars, i, true)?;
                    out.push_str(&text);
                    i = next;
                }
                '-' => out.push('-'),
                c if c.is_ascii_alphanumeric() || !c.is_ascii() => out.push(c),
                c => out.push_str(&hex(c)),
            }
            continue;
        }
        match c {
            '\\' => {
                let (text, next) = escape(&chars, i, false)?;
                out.push_str(&text);
                i = next;
            }
            '.' => out.push_str(r"[^\n\r\x{2028}\x{2029}]"),
            '[' => {
                out.push('[');
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                in_class = true;
                class_start = true;
            }
            '(' => {
                if chars.get(i) == Some(&'?') {
                    match (chars.get(i + 1), chars.get(i + 2)) {
                        (Some(':'), _) => {
                            out.push_str("(?:");
                            i += 2;
                        }
                        (Some('<'), Some(n)) if *n != '=' && *n != '!' => {
                            // A named group: its name is of no use to a lexer.
                            let close = chars[i..]
                                .iter()
                                .position(|&c| c == '>')
                                .ok_or("unterminated group name")?;
                            out.push_str("(?:");
                            i += close + 1;
                        }
                        (Some('=' | '!'), _) | (Some('<'), Some('=' | '!')) => {
                            return Err("look-around assertions are not supported".into())
                        }
                        _ => return Err("unsupported group syntax `(?`".into()),
                    }
                } else {
                    out.push_str("(?:");
                }
            }
            '{' => {
                // A quantifier `{n}`, `{n,}`, `{n,m}` is copied whole; any other `{` is a
                // literal brace (Annex B), and so is a `}` that ends no quantifier.
                let rest: String = chars[i..].iter().take(24).collect();
                let quant = rest.find('}').filter(|&end| {
                    let body = &rest[..end];
                    let mut parts = body.splitn(2, ',');
                    let a = parts.next().unwrap_or("");
                    let b = parts.next();
                    !a.is_empty()
                        && a.bytes().all(|x| x.is_ascii_digit())
                        && b.is_none_or(|b| b.bytes().all(|x| x.is_ascii_digit()))
                });
                match quant {
                    Some(end) => {
                        out.push('{');
                        out.push_str(&rest[..=end]);
                        i += end + 1;
                    }
                    None => out.push_str(&hex('{')),
                }
            }
            '}' => out.push_str(&hex('}')),
            '|' | '*' | '+' | '?' | ')' | '^' | '$' => out.push(c),
            c if c.is_ascii_alphanumeric() || !c.is_ascii() => out.push(c),
            c => out.push_str(&hex(c)),
        }
    }
    if in_class {
        return Err("unterminated character class".into());
    }
    Ok(out)
}

/// The escape starting after a backslash at `chars[i]`: its translation and the index after it.
fn escape(chars: &[char], i: usize, in_class: bool) -> Result<(String, usize), String> {
    let Some(&c) = chars.get(i) else {
        return Err("pattern ends with a backslash".into());
    };
    let i = i + 1;
    let class = |body: &str, negated: bool| -> String {
        match (in_class, negated) {
            (true, false) => body.to_string(),
            (_, true) => format!("[^{body}]"),
            (false, false) => format!("[{body}]"),
        }
    };
    let text = match c {
        'd' => class("0-9", false),
        'D' => class("0-9", true),
        'w' => class(WORD, false),
        'W' => class(WORD, true),
        's' => class(ECMA_SPACE, false),
        'S' => class(ECMA_SPACE, true),
        'b' if in_class => hex('\u{8}'),
        'b' | 'B' => return Err("word boundaries (\\b, \\B) are not supported".into()),
        '1'..='9' => return Err("back-references are not supported".into()),
        'k' => return Err("named back-references are not supported".into()),
        '0' => {
            if chars.get(i).is_some_and(|d| d.is_ascii_digit()) {
                return Err("octal escapes are not supported".into());
            }
            hex('\0')
        }
        'n' => hex('\n'),
        'r' => hex('\r'),
        't' => hex('\t'),
        'f' => hex('\u{C}'),
        'v' => hex('\u{B}'),
        'c' => match chars.get(i) {
            Some(l) if l.is_ascii_alphabetic() => {
                return Ok((hex(char::from(*l as u8 % 32)), i + 1));
            }
            _ => return Err("invalid control escape \\c".into()),
        },
        'x' => {
            let v = hex_digits(chars, i, 2, "short \\x escape", "invalid \\x escape")?;
            return Ok((format!("\\x{{{v:X}}}"), i + 2));
        }
        'u' => {
            let (v, next) = unicode_escape(chars, i)?;
            if (0xD800..0xDC00).contains(&v) {
                // A surrogate pair written as two escapes is one character.
                if chars.get(next) == Some(&'\\') && chars.get(next + 1) == Some(&'u') {
                    let (lo, after) = unicode_escape(chars, next + 2)?;
                    if (0xDC00..0xE000).contains(&lo) {
                        let cp = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
                        return Ok((format!("\\x{{{cp:X}}}"), after));
                    }
                }
                return Err("lone surrogate escapes are not supported".into());
            }
            if (0xDC00..0xE000).contains(&v) {
                return Err("lone surrogate escapes are not supported".into());
            }
            return Ok((format!("\\x{{{v:X}}}"), next));
        }
        'p' | 'P' => {
            // `\p{...}`: Unicode properties read alike in both dialects.
            if chars.get(i) != Some(&'{') {
                return Err("\\p needs a {property}".into());
            }
            let close = chars[i..]
                .iter()
                .position(|&c| c == '}')
                .ok_or("unterminated \\p{")?;
            let body: String = chars[i..i + close + 1].iter().collect();
            return Ok((format!("\\{c}{body}"), i + close + 1));
        }
        c if c.is_ascii_alphanumeric() => return Err(format!("unknown escape \\{c}")),
        c => hex(c),
    };
    Ok((text, i))
}

/// `XXXX` or `{X…}` after `\u`: the code point and the index after it.
fn unicode_escape(chars: &[char], i: usize) -> Result<(u32, usize), String> {
    if chars.get(i) == Some(&'{') {
        let close = chars[i..]
            .iter()
            .position(|&c| c == '}')
            .ok_or("unterminated \\u{")?;
        let h: String = chars[i + 1..i + close].iter().collect();
        let v = u32::from_str_radix(&h, 16).map_err(|_| "invalid \\u{} escape")?;
        return Ok((v, i + close + 1));
    }
    let v = hex_digits(chars, i, 4, "short \\u escape", "invalid \\u escape")?;
    Ok((v, i + 4))
}

/// The `n` hex digits at `i`, as a number: `short` when there are fewer characters, `invalid`
/// when they are not hex digits.
fn hex_digits(
    chars: &[char],
    i: usize,
    n: usize,
    short: &str,
    invalid: &str,
) -> Result<u32, String> {
    let h: String = chars.get(i..i + n).ok_or(short)?.iter().collect();
    u32::from_str_radix(&h, 16).map_err(|_| invalid.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_patterns_are_parsed_once_and_alike() {
        for (i, f) in crate::format::FORMATS.iter().enumerate() {
            let p = crate::format::pattern(f).unwrap();
            let fresh = parse_text(&p).unwrap();
            assert_eq!(parse(&p).unwrap(), fresh, "{f}");
            let kept = FORMAT_HIRS.get().and_then(|h| h[i].get());
            assert!(kept.is_some(), "{f}: kept after the first parse");
            assert_eq!(parse(&p).unwrap(), fresh, "{f}, kept");
        }
        // Any other pattern is parsed as given.
        assert_eq!(parse("^a+$").unwrap(), parse_text("^a+$").unwrap());
    }

    fn matches(pattern: &str, s: &str) -> bool {
        let hir = parse(pattern).unwrap();
        let re = regex_automata::meta::Regex::builder()
            .build_from_hir(&hir)
            .unwrap();
        re.is_match(s)
    }

    #[test]
    fn ecma_meanings() {
        assert!(matches(r"^\d+$", "123"));
        assert!(!matches(r"^\d+$", "١٢٣"));
        assert!(!matches(r"^.$", "\n"));
        assert!(!matches(r"^.$", "\u{2028}"));
        assert!(matches(r"^[[a]+$", "[a["));
        assert!(matches(r"^a{$", "a{"));
        assert!(matches(r"^a{2}$", "aa"));
        assert!(matches(r"^\/\-$", "/-"));
        assert!(matches(r"^\uD83D\uDE00$", "😀"));
        assert!(matches(r"^(?<year>\d{4})$", "2024"));
        assert!(matches(r"^[^]$", "\n"));
        assert!(!matches(r"^[]$", "a"));
        assert!(matches(r"^\p{L}+$", "été"));
        assert!(matches(r"^[\w-]+$", "a_b-c"));
    }

    #[test]
    fn look_arounds_split_where_they_test_the_whole_string() {
        let split = |p: &str| split_look_arounds(p).map(|s| (s.all, s.none));
        let v = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            split("^(?!aws:)(?=a)[a-z:]+$"),
            Some((v(&["^(?:a)", "^(?:[a-z:]+$)"]), v(&["^(?:aws:)"])))
        );
        assert_eq!(
            split(r"^[a-z.]*(?<!\.)$"),
            Some((v(&["^(?:[a-z.]*$)"]), v(&[r"(?:\.)$"])))
        );
        assert_eq!(split(r"a(?![\s\S])"), Some((v(&["a$"]), v(&[]))));
        // Classes and escapes do not open or close groups.
        assert_eq!(
            split(r"^(?![(\)])[)]"),
            Some((v(&["^(?:[)])"]), v(&[r"^(?:[(\)])"])))
        );
        // Not where the look-around tests one alternative or one position, nor without one.
        for p in [
            "^(?!a)b|c",
            "^a(?!b)",
            "(?!a)b",
            "^a(?=b)c$",
            "^ab$",
            "^(?!a",
        ] {
            assert_eq!(split(p), None, "{p}");
        }
    }

    #[test]
    fn unsupported_constructs_are_errors() {
        for p in [r"(a)\1", r"(?=a)", r"(?<!a)b", r"\bword", r"[a-", r"(?i)a"] {
            assert!(parse(p).is_err(), "{p}");
        }
    }
}
