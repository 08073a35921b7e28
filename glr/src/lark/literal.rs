//! Literal text → the string Lark gives its lexer.
//!
//! Lark unescapes a literal's body in two steps (its `eval_escaping`): it doubles every
//! backslash except those before `U u x n f t r` and before another backslash, turns `\"` into
//! `"`, then evaluates the result as a Python string literal. So `\n`, `\t`, `\x41`, `\u00e9`
//! become the characters they name, while `\d`, `\.` and `\\` reach the regex engine as written.
//! A string literal then has each `\\` turned into `\`. This module reproduces that, including
//! its quirks (documented at each step), without Python.

use super::ast::{LitKind, Literal};

/// Lark's `eval_escaping`: the body of a literal as Lark's next stage sees it.
pub(crate) fn eval_escaping(body: &str) -> Result<String, String> {
    // Most literals hold neither a backslash nor a quote: every step leaves them as they are.
    if !body.contains(['\\', '\'']) {
        return Ok(body.to_string());
    }
    match plain_escapes(body) {
        Some(value) => Ok(value),
        None => lark_steps(body),
    }
}

/// Lark's three steps of `eval_escaping`, one after the other.
fn lark_steps(body: &str) -> Result<String, String> {
    // Step 1: double backslashes that Python must keep.
    let mut w = String::with_capacity(body.len() + 8);
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        w.push(c);
        if c == '\\' {
            let Some(c2) = chars.next() else {
                return Err("the literal ends with a lone backslash".to_string());
            };
            if c2 == '\\' {
                w.push_str("\\\\");
            } else if !"Uuxnftr".contains(c2) {
                w.push('\\');
            }
            w.push(c2);
        }
    }
    // Step 2: Lark's two `str.replace` calls. The first can eat the second backslash of an
    // escaped backslash before a quote (`\\"` ends up as `\"`): that is Lark's behaviour.
    let w = w.replace("\\\"", "\"").replace('\'', "\\'");
    // Step 3: evaluate as the body of a Python `'''…'''` literal.
    python_unescape(&w)
}

/// What [`eval_escaping`] makes of `body` in one pass, when it holds no `'`: `\"` becomes
/// `"`; `\n`, `\f`, `\t`, `\r` and `\x`, `\u`, `\U` with their exact hex digits become the
/// characters they name (step 1 keeps their backslash single, step 3 evaluates them); every
/// other escape, `\\` included, stays as written (step 1 doubles the backslashes, step 3
/// halves them again). `None` for a body with `'` or an escape step 3 refuses: those take the
/// three steps.
fn plain_escapes(body: &str) -> Option<String> {
    if body.contains('\'') {
        return None;
    }
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let next = rest[at + 1..].chars().next()?;
        rest = &rest[at + 1 + next.len_utf8()..];
        let digits = match next {
            '\\' => {
                // Step 1 makes four backslashes of the two and step 3 two again; before a
                // quote, step 2 takes one of the four and step 3 reads `\\\"` as `\"`
                // (Lark's quirk).
                if let Some(after) = rest.strip_prefix('"') {
                    out.push_str("\\\"");
                    rest = after;
                } else {
                    out.push_str("\\\\");
                }
                continue;
            }
            '"' | 'n' | 'f' | 't' | 'r' => {
                out.push(match next {
                    'n' => '\n',
                    'f' => '\x0c',
                    't' => '\t',
                    'r' => '\r',
                    _ => '"',
                });
                continue;
            }
            'x' => 2,
            'u' => 4,
            'U' => 8,
            _ => {
                out.push('\\');
                out.push(next);
                continue;
            }
        };
        let hex = rest.get(..digits)?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        out.push(char::from_u32(u32::from_str_radix(hex, 16).ok()?)?);
        rest = &rest[digits..];
    }
    out.push_str(rest);
    Some(out)
}

/// Evaluates the escape sequences of a (non-raw) Python string literal body.
fn python_unescape(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = it.next() else {
            return Err("the literal ends with a lone backslash".to_string());
        };
        match e {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(e),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match it.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            it.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' => {
                let n = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v: u32 = 0;
                for _ in 0..n {
                    match it.peek().and_then(|d| d.to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            it.next();
                        }
                        None => {
                            return Err(format!("`\\{e}` needs exactly {n} hex digits"));
                        }
                    }
                }
                match char::from_u32(v) {
                    Some(ch) => out.push(ch),
                    None if (0xD800..0xE000).contains(&v) => {
                        return Err(format!("`\\{e}{v:0n$x}` is a lone surrogate"));
                    }
                    None => return Err(format!("`\\{e}{v:0n$x}` is not a Unicode scalar value")),
                }
            }
            'N' => return Err("named escapes `\\N{…}` are not supported".to_string()),
            other => {
                // Python keeps unknown escapes as written.
                out.push('\\');
                out.push(other);
            }
        }
    }
    Ok(out)
}

/// Lark's meaning of a literal: the string (for `"…"`) or Python regex source (for `/…/`),
/// and its flags.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct LiteralValue {
    pub(crate) kind: LitKind,
    pub(crate) value: String,
    /// Flags as a sorted, deduplicated string (`"is"`); Lark compares flag sets.
    pub(crate) flags: String,
}

/// Why a literal is bad.
#[derive(Debug)]
pub(crate) enum LiteralError {
    Escape(String),
    Empty,
}

/// Evaluates a string or regex literal as Lark does.
pub(crate) fn literal_value(lit: &Literal) -> Result<LiteralValue, LiteralError> {
    let mut value = eval_escaping(lit.body()).map_err(LiteralError::Escape)?;
    if value.is_empty() {
        return Err(LiteralError::Empty);
    }
    if lit.kind == LitKind::Str && value.contains("\\\\") {
        value = value.replace("\\\\", "\\");
    }
    let mut flags: Vec<char> = lit.flags().chars().collect();
    flags.sort_unstable();
    flags.dedup();
    Ok(LiteralValue {
        kind: lit.kind,
        value,
        flags: flags.into_iter().collect(),
    })
}

/// The two ends of a `"a".."z"` range, or what is wrong with it.
pub(crate) fn range_ends(from: &Literal, to: &Literal) -> Result<(char, char), String> {
    let end = |lit: &Literal| -> Result<char, String> {
        if !lit.flags().is_empty() {
            return Err(format!("flags are not allowed on range ends ({})", lit.raw));
        }
        let v = eval_escaping(lit.body())?;
        let mut chars = v.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(format!("{} is not a single character", lit.raw)),
        }
    };
    let (a, b) = (end(from)?, end(to)?);
    if a > b {
        return Err(format!("{} comes after {}", from.raw, to.raw));
    }
    Ok((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lark::ast::Pos;

    fn lit(raw: &str) -> Literal {
        Literal {
            kind: if raw.starts_with('"') {
                LitKind::Str
            } else {
                LitKind::Regex
            },
            raw: raw.to_string(),
            pos: Pos::default(),
        }
    }

    fn value(raw: &str) -> String {
        literal_value(&lit(raw)).expect("valid literal").value
    }

    // Expected values were checked against Lark 1.3.1's `_literal_to_pattern`.
    #[test]
    fn strings_unescape_like_lark() {
        assert_eq!(value(r#""a\nb""#), "a\nb");
        assert_eq!(value(r#""\x41\u00e9\U0001F600""#), "Aé😀");
        assert_eq!(value(r#""\"""#), "\"");
        assert_eq!(value(r#""\\""#), "\\");
        assert_eq!(value(r#""\d""#), "\\d");
        assert_eq!(value(r#""it's""#), "it's");
        assert_eq!(value(r#""\t\f\r""#), "\t\x0c\r");
    }

    #[test]
    fn regexes_keep_regex_escapes() {
        assert_eq!(value(r"/\d+\.\//"), r"\d+\.\/");
        assert_eq!(value(r"/\\/"), r"\\");
        assert_eq!(value(r"/a\nb/"), "a\nb");
        assert_eq!(value(r"/\x2e/"), ".");
        assert_eq!(value(r#"/\"/"#), "\"");
        // Lark's quirk: an escaped backslash before a quote loses a backslash.
        assert_eq!(value(r#"/\\"/"#), "\\\"");
    }

    #[test]
    fn plain_escapes_agree_with_the_three_steps() {
        let alphabet = ['\\', '"', '\'', 'd', 'n', 'x', 'u', 'f', '2', '\n', 'é'];
        let mut bodies = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = bodies
                .iter()
                .flat_map(|b| alphabet.iter().map(move |c| format!("{b}{c}")))
                .collect();
            bodies.extend(longer);
        }
        for body in &bodies {
            if let Some(fast) = plain_escapes(body) {
                assert_eq!(Ok(fast), lark_steps(body), "{body:?}");
            }
        }
        for body in [
            r"\x22a\u00e9\U0001F600\t",
            r"\U0010FFFF",
            r"\x2",
            r"\ud800",
            r"\U00110000",
        ] {
            if let Some(fast) = plain_escapes(body) {
                assert_eq!(Ok(fast), lark_steps(body), "{body:?}");
            }
        }
        assert_eq!(
            plain_escapes(r"\x22\u00e9\U0001F600").as_deref(),
            Some("\"é😀")
        );
    }

    #[test]
    fn flags_are_a_sorted_set() {
        let v = literal_value(&lit("/a/si")).unwrap();
        assert_eq!(v.flags, "is");
        let v = literal_value(&lit("\"a\"i")).unwrap();
        assert_eq!((v.value.as_str(), v.flags.as_str()), ("a", "i"));
    }

    #[test]
    fn bad_literals() {
        assert!(matches!(
            literal_value(&lit(r#""""#)),
            Err(LiteralError::Empty)
        ));
        assert!(matches!(
            literal_value(&lit(r#""\x4""#)),
            Err(LiteralError::Escape(_))
        ));
        assert!(matches!(
            literal_value(&lit(r#""\ud800""#)),
            Err(LiteralError::Escape(_))
        ));
        assert!(matches!(
            literal_value(&lit(r#""\U00110000""#)),
            Err(LiteralError::Escape(_))
        ));
    }

    #[test]
    fn ranges() {
        assert_eq!(range_ends(&lit("\"a\""), &lit("\"z\"")), Ok(('a', 'z')));
        assert_eq!(
            range_ends(&lit(r#""\x00""#), &lit(r#""\x1f""#)),
            Ok(('\0', '\x1f'))
        );
        assert!(range_ends(&lit("\"z\""), &lit("\"a\"")).is_err());
        assert!(range_ends(&lit("\"ab\""), &lit("\"z\"")).is_err());
        assert!(range_ends(&lit("\"a\"i"), &lit("\"z\"")).is_err());
    }
}
