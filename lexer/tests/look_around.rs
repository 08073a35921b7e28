//! Look-around in terminals: what each assertion means (Python `re`'s meaning; the expected
//! lexemes were checked with `python3 -c 'import re; print(re.match(P, text))'`), the
//! streaming consequences (a look-ahead past the lexeme inhibits it), and what stays an error.

use munch_lexer::dfa::{
    look_around_name, LexError, Lexer, LexerBuildErrorKind, LookAroundKind, TerminalSpec,
};

mod common;
use common::{build, build_err, walk, with_priority};

/// A regex terminal; `(?!` `(?<!` `(?<=` `(?=` in `pattern` are rewritten to the reserved
/// groups a front end emits.
fn re(name: &str, pattern: &str) -> TerminalSpec {
    let mut out = String::new();
    let mut n = 0;
    let mut rest = pattern;
    while let Some(i) = rest.find("(?") {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let kind = [
            ("(?!", LookAroundKind::NotAhead),
            ("(?=", LookAroundKind::Ahead),
            ("(?<!", LookAroundKind::NotBehind),
            ("(?<=", LookAroundKind::Behind),
        ]
        .into_iter()
        .find(|(p, _)| tail.starts_with(p));
        match kind {
            Some((p, kind)) => {
                n += 1;
                out.push_str(&format!("(?P<{}>", look_around_name(kind, n)));
                rest = &tail[p.len()..];
            }
            None => {
                out.push_str("(?");
                rest = &tail[2..];
            }
        }
    }
    out.push_str(rest);
    common::re(name, &out)
}

/// The lexemes of `text` as (text, first terminal's name).
fn lex(lexer: &Lexer, text: &str) -> Result<Vec<(String, String)>, LexError> {
    Ok(lexer
        .tokenize(text.as_bytes())?
        .into_iter()
        .map(|l| {
            (
                text[l.start..l.end].to_string(),
                lexer.terminal(l.terminals[0]).name.clone(),
            )
        })
        .collect())
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn negative_look_ahead_past_the_lexeme_inhibits_it() {
    // Lark's python.lark: `"0" ("_"? "0")* /(?![1-9])/`.
    let lexer = build(&[re("DEC", "[1-9][0-9]*|0(_?0)*(?![1-9])"), re("WS", " +")]);
    assert_eq!(
        lex(&lexer, "0 10 00").unwrap(),
        pairs(&[
            ("0", "DEC"),
            (" ", "WS"),
            ("10", "DEC"),
            (" ", "WS"),
            ("00", "DEC")
        ])
    );
    // `re.match('0(?![1-9])', '01')` is None: no terminal matches `0` before `1`.
    assert_eq!(lex(&lexer, "01").unwrap_err().offset, 1);
    let zero = walk(&lexer, b"0");
    assert!(!lexer.accepted(zero).is_empty());
    assert!(lexer.has_look_ahead(zero));
    assert!(lexer.inhibits(zero));
    let dies = |b: u8| lexer.is_dead(lexer.next_inhibited(zero, b));
    assert!(dies(b'1') && !lexer.extends(zero, b'1'));
    assert!(dies(b'0') && lexer.extends(zero, b'0'));
    assert!(!dies(b' '));
    // Without look-ahead nothing changes: `1` inhibits because it grows.
    let one = walk(&lexer, b"1");
    assert!(!lexer.has_look_ahead(one) && lexer.inhibits(one));
}

#[test]
fn look_ahead_inside_and_past_the_lexeme() {
    // SynCode's python.lark STRING and LONG_STRING.
    let lexer = build(&[
        re("STRING", r#"[ubf]?r?("(?!"").*?"|'(?!'').*?')"#),
        re("LONG_STRING", r#"[ubf]?r?(""".*?"""|'''.*?''')"#),
        re("WS", " +"),
    ]);
    assert_eq!(
        lex(&lexer, r#""" "a" """x""" "a""#).unwrap(),
        pairs(&[
            (r#""""#, "STRING"),
            (" ", "WS"),
            (r#""a""#, "STRING"),
            (" ", "WS"),
            (r#""""x""""#, "LONG_STRING"),
            (" ", "WS"),
            (r#""a""#, "STRING"),
        ])
    );
    // `""` followed by `"` is no STRING (the look-ahead sees `""`), and it grows anyway.
    let empty = walk(&lexer, br#""""#);
    assert!(lexer.is_dead(lexer.next_inhibited(empty, b'"')));
    assert!(!lexer.is_dead(lexer.next_inhibited(empty, b' ')));
}

#[test]
fn look_behind_inside_the_lexeme() {
    // Lark's python.lark STRING: an escaped quote does not end the string.
    let lexer = build(&[
        re("STRING", r#""(?!"").*?(?<!\\)(\\\\)*?""#),
        re("WS", " +"),
    ]);
    assert_eq!(
        lex(&lexer, r#""a\"b" "c\\" """#).unwrap(),
        pairs(&[
            (r#""a\"b""#, "STRING"),
            (" ", "WS"),
            (r#""c\\""#, "STRING"),
            (" ", "WS"),
            (r#""""#, "STRING"),
        ])
    );
    let positive = build(&[re("X", "a.(?<=b)c"), re("WS", " ")]);
    assert_eq!(lex(&positive, "abc").unwrap(), pairs(&[("abc", "X")]));
    assert!(lex(&positive, "aac").is_err());
}

#[test]
fn look_around_that_cannot_be_exact_is_a_typed_error() {
    for (pattern, what) in [
        (
            "(?<!a)b",
            "look-behind `(?<!...)` that can reach before the start of the lexeme",
        ),
        (
            "b(?<!ab)",
            "look-behind `(?<!...)` that can reach before the start of the lexeme",
        ),
        ("a(?<=a+)", "look-behind `(?<=...)` of unbounded length"),
        ("a(?=b)", "look-ahead `(?=...)`"),
        (
            "a(?!bc)",
            "a look-ahead reaching more than one byte past the end of the lexeme",
        ),
        ("a(?!b(?!c))", "look-ahead `(?!...)` inside a look-around"),
    ] {
        let err = build_err(&[re("OK", "[a-z]"), re("BAD", pattern)]);
        match err.kind() {
            LexerBuildErrorKind::Unsupported { name, what: w, .. } => {
                assert_eq!((name.as_str(), w.as_str()), ("BAD", what), "{pattern}")
            }
            other => panic!("{pattern}: {other:?}"),
        }
    }
    // `(?!b)` decides on one byte even where the lexeme could go on: fine.
    build(&[re("A", "a(?!b)"), re("AB", "abc")]);
    // A keyword that must not run into a name: where the look-ahead fails, the name goes on.
    let lexer = build(&[
        with_priority(re("IF", "if(?![a-z])"), 2),
        re("NAME", "[a-z]+"),
    ]);
    let if_ = walk(&lexer, b"if");
    assert_eq!(lexer.terminal(lexer.accepted(if_)[0]).name, "IF");
    assert!(!lexer.has_look_ahead(if_));
    // A look-ahead tie with a terminal that has none is refused: on `a` before `b` the
    // winner would change.
    let err = build_err(&[re("A", "a(?!b)"), re("B", "a")]);
    assert!(
        matches!(err.kind(), LexerBuildErrorKind::Unsupported { .. }),
        "{err}"
    );
}
