//! HIR over characters → Lark regex text over the bytes that spell those characters, either as
//! themselves (`Encoding::Raw`, for `regex:` constraints) or inside a JSON string
//! (`Encoding::Json`).
//!
//! # The JSON string profile
//!
//! A constrained string (a `pattern`, `format`, `enum`, `const`, or a property name) must be
//! matched on the characters it denotes, but a JSON string can spell a character in several
//! ways (`a`, `\u0061`, `\u0041` for `A`...). munch accepts, for each character:
//! - `"`, `\` and the controls U+0000–U+001F: their short escape (`\"`, `\\`, `\n`, ...) where
//!   JSON has one, or `\u` with four hex digits of either case;
//! - `/`: itself or `\/`;
//! - every other character: itself only.
//!
//! So every text accepted denotes a valid string, and every string has a spelling accepted (the
//! one `JSON.stringify` and `serde_json` write); a needlessly escaped spelling like `\u0061` is
//! not accepted where the characters matter. Strings whose characters do not matter (plain
//! `"type": "string"`) take every spelling, and strings under `minLength`/`maxLength` only take
//! every spelling too (a surrogate pair counting as one character).
//!
//! The output uses only ASCII letters and digits, `\xHH`/`\uHHHH`/`\UHHHHHHHH` escapes and
//! regex operators, so it can sit between Lark's `/.../` delimiters as is. Repetitions are
//! always greedy: munch's lexer gives lazy ones a shortest-match meaning, and a constraint's
//! language is the set of strings the regex matches.

use regex_syntax::hir::{Class, Hir, HirKind};

/// How characters are spelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// As themselves (UTF-8).
    Raw,
    /// Inside a JSON string, per the module's profile.
    Json,
}

/// One character of a JSON string, in the profile's spellings (the module docs): itself, or
/// for `"`, `\`, `/` and the controls their escapes.
pub(crate) const PROFILE_CHAR: &str =
    r"(?:[^\x22\\\x00-\x1f]|\\[\x22\\\/bfnrt]|\\u00(?:[01][0-9a-fA-F]|22|5[cC]))";

/// One character of a JSON string, any spelling (the generic string content).
pub(crate) const JSON_CHAR: &str = r"(?:[^\x22\\\x00-\x1f]|\\[\x22\\\/bfnrt]|\\u[0-9a-fA-F]{4})";

/// One character of a JSON string, any spelling, where a surrogate pair counts as one character
/// and lone surrogates are not taken (for `minLength`/`maxLength`).
pub(crate) const JSON_CODE_POINT: &str = concat!(
    r"(?:[^\x22\\\x00-\x1f]|\\[\x22\\\/bfnrt]",
    r"|\\u(?:[0-9a-cA-Ce-fE-F][0-9a-fA-F]{3}|[dD][0-7][0-9a-fA-F]{2})",
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})"
);

/// The Lark regex text for the characters `hir` matches, spelled per `enc`.
///
/// The HIR must hold no look-around (callers strip the anchors they understand first).
pub(crate) fn emit(hir: &Hir, enc: Encoding) -> Result<String, String> {
    let mut out = String::new();
    emit_into(hir, enc, &mut out, 0)?;
    Ok(out)
}

/// Nesting is bounded by the parser's nest limit (100), so recursion is bounded too.
fn emit_into(hir: &Hir, enc: Encoding, out: &mut String, depth: usize) -> Result<(), String> {
    if depth > 256 {
        return Err("pattern nests too deeply".into());
    }
    match hir.kind() {
        HirKind::Empty => {}
        HirKind::Literal(lit) => {
            let s = std::str::from_utf8(&lit.0).map_err(|_| "pattern is not UTF-8")?;
            for c in s.chars() {
                push_spellings(out, c, enc);
            }
        }
        HirKind::Class(Class::Unicode(cls)) => {
            let ranges: Vec<(char, char)> =
                cls.ranges().iter().map(|r| (r.start(), r.end())).collect();
            out.push_str(&class(&ranges, enc));
        }
        HirKind::Class(Class::Bytes(cls)) => {
            let mut ranges = Vec::new();
            for r in cls.ranges() {
                if r.end() > 0x7F {
                    return Err("byte classes beyond ASCII are not supported".into());
                }
                ranges.push((char::from(r.start()), char::from(r.end())));
            }
            out.push_str(&class(&ranges, enc));
        }
        HirKind::Look(_) => {
            return Err("anchors and assertions are only supported at the pattern's ends".into())
        }
        HirKind::Repetition(rep) => {
            out.push_str("(?:");
            emit_into(&rep.sub, enc, out, depth + 1)?;
            out.push(')');
            match (rep.min, rep.max) {
                (0, None) => out.push('*'),
                (1, None) => out.push('+'),
                (0, Some(1)) => out.push('?'),
                (m, None) => out.push_str(&format!("{{{m},}}")),
                (m, Some(n)) if m == n => out.push_str(&format!("{{{m}}}")),
                (m, Some(n)) => out.push_str(&format!("{{{m},{n}}}")),
            }
        }
        HirKind::Capture(cap) => emit_into(&cap.sub, enc, out, depth + 1)?,
        HirKind::Concat(subs) => {
            for s in subs {
                out.push_str("(?:");
                emit_into(s, enc, out, depth + 1)?;
                out.push(')');
            }
        }
        HirKind::Alternation(subs) => {
            out.push_str("(?:");
            for (i, s) in subs.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                emit_into(s, enc, out, depth + 1)?;
            }
            out.push(')');
        }
    }
    Ok(())
}

/// A character as Lark regex text that means exactly that character, after Lark's own
/// unescaping of the literal (`\xHH`, `\uHHHH` become the raw character there, so they are only
/// used where the raw character is no regex operator).
///
/// - ASCII letters and digits: themselves.
/// - `\`: `\\`; `/`: `\/` (the literal's delimiter); `"` and `'`: `\x22`, `\x27` (Lark rewrites a
///   backslash before a quote); space: `\x20`.
/// - Other ASCII punctuation: a backslash before it.
/// - Controls and non-ASCII: `\xHH`, `\uHHHH`, `\UHHHHHHHH`.
pub(crate) fn lit(c: char) -> String {
    let mut out = String::new();
    push_lit(&mut out, c);
    out
}

/// [`lit`] of `c`, pushed onto `out`.
fn push_lit(out: &mut String, c: char) {
    let v = c as u32;
    match c {
        c if c.is_ascii_alphanumeric() => out.push(c),
        '\\' => out.push_str(r"\\"),
        '/' => out.push_str(r"\/"),
        // `\<` and `\>` are word boundaries to regex-syntax, which reads this text too.
        '"' | '\'' | ' ' | '<' | '>' => push_hex(out, 'x', v, 2),
        c if c.is_ascii_punctuation() => {
            out.push('\\');
            out.push(c);
        }
        _ if v < 0x100 => push_hex(out, 'x', v, 2),
        _ if v < 0x10000 => push_hex(out, 'u', v, 4),
        _ => push_hex(out, 'U', v, 8),
    }
}

/// `\`, `letter` and the low `digits` hex digits of `v` in lower case.
fn push_hex(out: &mut String, letter: char, v: u32, digits: u32) {
    out.push('\\');
    out.push(letter);
    for k in (0..digits).rev() {
        out.push(char::from(
            b"0123456789abcdef"[((v >> (4 * k)) & 0xF) as usize],
        ));
    }
}

/// `\u` and four hex digits of `v`, letters in either case.
fn u_escape(v: u32) -> String {
    let mut s = String::from(r"\\u");
    for d in format!("{v:04x}").chars() {
        if d.is_ascii_alphabetic() {
            s.push_str(&format!("[{}{}]", d, d.to_ascii_uppercase()));
        } else {
            s.push(d);
        }
    }
    s
}

fn short_escape(c: char) -> Option<char> {
    Some(match c {
        '"' => '"',
        '\\' => '\\',
        '\u{8}' => 'b',
        '\u{c}' => 'f',
        '\n' => 'n',
        '\r' => 'r',
        '\t' => 't',
        _ => return None,
    })
}

/// Whether JSON requires the character to be escaped.
fn must_escape(c: char) -> bool {
    c == '"' || c == '\\' || (c as u32) < 0x20
}

/// [`char_spellings`] of `c`, pushed onto `out`.
pub(crate) fn push_spellings(out: &mut String, c: char, enc: Encoding) {
    if enc != Encoding::Raw && (must_escape(c) || c == '/') {
        out.push_str(&char_spellings(c, enc));
    } else {
        push_lit(out, c);
    }
}

/// Every accepted spelling of `c`, as one regex.
pub(crate) fn char_spellings(c: char, enc: Encoding) -> String {
    if enc == Encoding::Raw {
        return lit(c);
    }
    if must_escape(c) {
        let mut alts = vec![u_escape(c as u32)];
        if let Some(s) = short_escape(c) {
            alts.push(format!(r"\\{}", lit(s)));
        }
        format!("(?:{})", alts.join("|"))
    } else if c == '/' {
        r"(?:\/|\\\/)".to_string()
    } else {
        lit(c)
    }
}

/// Every accepted spelling of the controls `controls` (below U+0020, none twice), as one regex:
/// `\u00` then the two hex digits, letters in either case, grouped by the first digit; and the
/// short escapes of those that have one. What [`char_spellings`] gives each, joined.
fn control_spellings(controls: &[u32]) -> String {
    let mut alts = Vec::new();
    let mut groups = Vec::new();
    for high in 0..2u32 {
        let low: Vec<u32> = controls
            .iter()
            .filter(|&&v| v >> 4 == high)
            .map(|&v| v & 0xF)
            .collect();
        if low.is_empty() {
            continue;
        }
        let mut digits = String::new();
        for d in low {
            let c = char::from_digit(d, 16).unwrap_or('0');
            digits.push(c);
            if c.is_ascii_alphabetic() {
                digits.push(c.to_ascii_uppercase());
            }
        }
        groups.push(format!("{high}[{digits}]"));
    }
    alts.push(format!(r"\\u00(?:{})", groups.join("|")));
    let short: String = controls
        .iter()
        .filter_map(|&v| short_escape(char::from_u32(v)?))
        .collect();
    if !short.is_empty() {
        alts.push(format!(r"\\[{short}]"));
    }
    format!("(?:{})", alts.join("|"))
}

/// A character class: the characters written as themselves in one `[...]`, and the ones that
/// need other spellings as alternatives beside it.
fn class(ranges: &[(char, char)], enc: Encoding) -> String {
    let mut plain: Vec<(u32, u32)> = Vec::new();
    let mut special: Vec<char> = Vec::new();
    for &(a, b) in ranges {
        let (a, b) = (a as u32, b as u32);
        if enc == Encoding::Raw {
            plain.push((a, b));
            continue;
        }
        // Split off `"` (0x22), `\` (0x5C), `/` (0x2F) and the controls.
        let mut lo = a;
        for cut in [0x22u32, 0x2F, 0x5C] {
            if lo <= cut && cut <= b {
                if lo < cut {
                    plain.push((lo, cut - 1));
                }
                special.push(char::from_u32(cut).unwrap_or('"'));
                lo = cut + 1;
            }
        }
        if lo <= b {
            plain.push((lo, b));
        }
    }
    if enc == Encoding::Json {
        // Controls are never written as themselves.
        let mut kept = Vec::new();
        for (a, b) in plain {
            if b < 0x20 {
                special.extend((a..=b).filter_map(char::from_u32));
            } else if a < 0x20 {
                special.extend((a..0x20).filter_map(char::from_u32));
                kept.push((0x20, b));
            } else {
                kept.push((a, b));
            }
        }
        plain = kept;
    }
    let mut alts = Vec::new();
    if !plain.is_empty() {
        let mut s = String::from("[");
        for (a, b) in plain {
            let (ca, cb) = (
                char::from_u32(a).unwrap_or('\0'),
                char::from_u32(b).unwrap_or('\0'),
            );
            push_lit(&mut s, ca);
            if b > a {
                s.push('-');
                push_lit(&mut s, cb);
            }
        }
        s.push(']');
        alts.push(s);
    }
    // The controls as one alternative: a negated class holds all 32, and one alternative each
    // would make property-name exclusions kilobytes of regex per character.
    let controls: Vec<u32> = special
        .iter()
        .map(|&c| c as u32)
        .filter(|&v| v < 0x20)
        .collect();
    if !controls.is_empty() {
        alts.push(control_spellings(&controls));
    }
    for c in special.into_iter().filter(|&c| c as u32 >= 0x20) {
        alts.push(char_spellings(c, enc));
    }
    match alts.len() {
        // An empty class matches nothing: a class that excludes every character.
        0 => r"[^\x00-\U0010ffff]".to_string(),
        1 => alts.pop().unwrap_or_default(),
        _ => format!("(?:{})", alts.join("|")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lit_spells_hex_with_fixed_digits() {
        for (c, expected) in [
            ('a', "a"),
            ('\\', r"\\"),
            ('/', r"\/"),
            ('"', r"\x22"),
            (' ', r"\x20"),
            ('.', r"\."),
            ('\0', r"\x00"),
            ('\n', r"\x0a"),
            ('é', r"\xe9"),
            ('\u{100}', r"\u0100"),
            ('\u{fffd}', r"\ufffd"),
            ('\u{1f600}', r"\U0001f600"),
            ('\u{10ffff}', r"\U0010ffff"),
        ] {
            assert_eq!(lit(c), expected, "{c:?}");
        }
    }

    fn json_matches(pattern: &str, text: &str) -> bool {
        let hir = crate::ecma::parse(pattern).unwrap();
        let re = emit(&hir, Encoding::Json).unwrap();
        // Python's \x/\u/\U escapes, written in regex-syntax's dialect for this check.
        let re = python_to_rust(&re);
        regex_automata::meta::Regex::new(&format!("^(?:{re})$"))
            .unwrap()
            .is_match(text)
    }

    pub(crate) fn python_to_rust(re: &str) -> String {
        let mut out = String::new();
        let b: Vec<char> = re.chars().collect();
        let mut i = 0;
        while i < b.len() {
            if b[i] == '\\' && i + 1 < b.len() {
                let n = match b[i + 1] {
                    'x' => 2,
                    'u' => 4,
                    'U' => 8,
                    _ => 0,
                };
                if n > 0 {
                    let h: String = b[i + 2..i + 2 + n].iter().collect();
                    out.push_str(&format!("\\x{{{h}}}"));
                    i += 2 + n;
                    continue;
                }
                if b[i + 1].is_ascii_punctuation() {
                    out.push_str(&format!("\\x{{{:X}}}", b[i + 1] as u32));
                } else {
                    out.push(b[i]);
                    out.push(b[i + 1]);
                }
                i += 2;
                continue;
            }
            out.push(b[i]);
            i += 1;
        }
        out
    }

    /// A class's controls are one alternative, with the same spellings as one per control.
    #[test]
    fn controls_of_a_class() {
        for v in 0..0x20u32 {
            for upper in [false, true] {
                let mut u = format!(r"\u{v:04x}");
                if upper {
                    u = u.to_ascii_uppercase().replacen('U', "u", 1);
                }
                assert!(json_matches("[^a]", &u), "{u}");
                let in_small = v <= 5 || v == 0x1a;
                assert_eq!(json_matches(r"[\x00-\x05\x1a]", &u), in_small, "{u}");
            }
        }
        for short in [r"\b", r"\f", r"\n", r"\r", r"\t"] {
            assert!(json_matches("[^a]", short), "{short}");
        }
        assert!(json_matches(r"[\n\t]+", r"\n\t\u000A\u0009"));
        assert!(!json_matches(r"[\n\t]", r"\r"));
        assert!(!json_matches(r"[\n\t]", r"\u000d"));
        assert!(!json_matches(r"[\x00-\x05\x1a]", r"\b"));
        assert!(!json_matches("[^a]", "\n"), "a raw newline");
        assert!(!json_matches("[^a]", r"\u0020"), "a needless escape");
    }

    #[test]
    fn json_spellings() {
        assert!(json_matches("a/b", "a/b"));
        assert!(json_matches("a/b", r"a\/b"));
        assert!(json_matches("\"", r#"\""#));
        assert!(json_matches("\"", r"\u0022"));
        assert!(!json_matches("\"", "\""));
        assert!(json_matches(r"\n", r"\n"));
        assert!(json_matches(r"\n", r"\u000A"));
        assert!(!json_matches(r"\n", "\n"));
        assert!(json_matches(r"[^a]", r"\\"));
        assert!(json_matches(r"[^a]", "é"));
        assert!(!json_matches(r"[^a]", "\""));
        assert!(json_matches(r"[\x00-\x7f]+", r#"x\"\t\u001f"#));
        assert!(!json_matches("a", r"\u0061"));
    }
}
