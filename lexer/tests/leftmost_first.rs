//! Lazy terminals match what Python's `re` matches (leftmost-first priority), and the lexer
//! goes back to a lazy terminal's last match when the longer reading never matches. Expected
//! lexemes were checked with `python3 -c 'import re; print(re.match(P, text))'` on the
//! patterns Lark 1.3.1 compiles for SynCode's python.lark.

use munch_lexer::dfa::{look_around_name, Lexer, LexerConfig, LookAroundKind, TerminalSpec};

mod common;
use common::{build, lit, walk};

/// A regex terminal; `(?!` and `(?<!` are rewritten to the reserved groups a front end emits.
fn re(name: &str, pattern: &str) -> TerminalSpec {
    let mut n = 0;
    let mut out = String::new();
    let mut rest = pattern;
    loop {
        let next = [
            ("(?!", LookAroundKind::NotAhead),
            ("(?<!", LookAroundKind::NotBehind),
        ]
        .into_iter()
        .filter_map(|(p, k)| rest.find(p).map(|i| (i, p, k)))
        .min_by_key(|x| x.0);
        let Some((i, p, kind)) = next else { break };
        n += 1;
        out.push_str(&rest[..i]);
        out.push_str(&format!("(?P<{}>", look_around_name(kind, n)));
        rest = &rest[i + p.len()..];
    }
    out.push_str(rest);
    common::re(name, &out)
}

const LONG_STRING: &str = r#"(?s:(?i:[ubf]?r?("""(?<!\\).*?"""|'''(?<!\\).*?''')))"#;
const STRING: &str = r#"(?s:(?i:[ubf]?r?("(?!"").*?"|'(?!'').*?')))"#;

/// SynCode's python.lark terminals that matter here, as Lark joins them, in a lexer that goes
/// back to lazy matches.
fn python() -> Lexer {
    python_with(true)
}

fn python_with(backtrack: bool) -> Lexer {
    let comment = format!(r"(?:{LONG_STRING}|#.*(\n[\t ]*)+)");
    let nl = format!(r"(?:(?:{comment}|(\r?\n[\t ]*)+))+");
    let config = LexerConfig {
        backtrack_lazy: backtrack,
        ..LexerConfig::default()
    };
    let specs = [
        re("_NL", &nl),
        re("COMMENT", &comment),
        re("LONG_STRING", LONG_STRING),
        re("STRING", STRING),
        re("NAME", "[a-zA-Z_][a-zA-Z0-9_]*"),
        lit("FROM", "from"),
        re("WS_INLINE", "[ \t]+"),
        lit("COLON", ":"),
        lit("COMMA", ","),
    ];
    Lexer::new(&specs, &config).unwrap()
}

/// The lexemes of `text` as `text:NAME` (the first tied terminal).
fn lex(lexer: &Lexer, text: &str) -> Vec<String> {
    match lexer.tokenize(text.as_bytes()) {
        Ok(lexemes) => lexemes
            .iter()
            .map(|l| {
                let name = &lexer.terminal(l.terminals[0]).name;
                format!("{:?}:{name}", &text[l.start..l.end])
            })
            .collect(),
        Err(e) => vec![format!("error: {e}")],
    }
}

#[test]
fn a_greedy_loop_around_a_lazy_part_keeps_iterating() {
    let lexer = python();
    // re.match(_NL, "\n    x") is "\n    ": the indentation belongs to the newline.
    assert_eq!(lex(&lexer, "\n    x"), [r#""\n    ":_NL"#, r#""x":NAME"#]);
    let s = walk(&lexer, b"\n ");
    assert!(lexer
        .accepted(s)
        .iter()
        .any(|&t| lexer.terminal(t).name == "_NL"));
    assert!(lexer.can_grow(s));
    // A comment and docstrings: Python gives '\n# c\n  """a"""'.
    let text = "\n# c\n  \"\"\"a\"\"\" \"\"\"b\"\"\"\n x";
    assert_eq!(
        lex(&lexer, text),
        [
            r#""\n# c\n  \"\"\"a\"\"\"":_NL"#,
            r#"" ":WS_INLINE"#,
            r#""\"\"\"b\"\"\"\n ":_NL"#,
            r#""x":NAME"#,
        ]
    );
}

#[test]
fn the_lexer_goes_back_to_a_lazy_match_the_longer_reading_never_extends() {
    let lexer = python();
    // "fr" may begin a string that would continue the newline: it does not, so the newline
    // ends after "\n" (Python backtracks the same way).
    assert_eq!(
        lex(&lexer, "\nfrom x"),
        [
            r#""\n":_NL"#,
            r#""from":FROM"#,
            r#"" ":WS_INLINE"#,
            r#""x":NAME"#
        ]
    );
    assert_eq!(
        lex(&lexer, "\nb:"),
        [r#""\n":_NL"#, r#""b":NAME"#, r#"":":COLON"#]
    );
    // "\n" then a docstring: one newline lexeme, the longer reading matched.
    assert_eq!(
        lex(&lexer, "\nr\"\"\"d\"\"\"\nx")[0],
        r#""\nr\"\"\"d\"\"\"\n":_NL"#
    );
    // Streaming: after "\n", the inhibited branch lives through "fr" and on at "o".
    let nl = walk(&lexer, b"\n");
    let f = lexer.next_inhibited(nl, b'f');
    assert!(!lexer.is_dead(f));
    let fr = lexer.next(f, b'r');
    assert!(
        lexer.inhibits(fr),
        "NAME `fr`, guarded by the longer reading"
    );
    assert!(!lexer.is_dead(lexer.next(fr, b'o')));
    // The longer reading matching kills it: `"\n"""` ... `"""`.
    let q = b"\"\"\"a\"\""
        .iter()
        .fold(lexer.next_inhibited(nl, b'"'), |s, &b| lexer.next(s, b));
    assert!(lexer.is_dead(lexer.next(q, b'"')));
    // By default the lexer never goes back: "fr" runs into `o` with nothing matched.
    let plain = python_with(false);
    assert_eq!(
        lex(&plain, "\nfrom x"),
        ["error: no terminal matches at byte 3"]
    );
    assert!(lexer.state_len() > plain.state_len());
    // Where the longer reading matches or dies at once, both agree.
    assert_eq!(lex(&plain, "\n    x"), lex(&lexer, "\n    x"));
}

#[test]
fn python_strings() {
    let lexer = python();
    // re.match(STRING, '"a" "b"') is '"a"'; '""' before a space is a STRING; '"""a"""' is a
    // LONG_STRING and no STRING; "'a\\'b'" is "'a\\'" (no escape handling in this STRING).
    assert_eq!(
        lex(&lexer, r#""a" "b""#),
        [r#""\"a\"":STRING"#, r#"" ":WS_INLINE"#, r#""\"b\"":STRING"#]
    );
    assert_eq!(lex(&lexer, r#""" x"#)[0], r#""\"\"":STRING"#);
    assert_eq!(lex(&lexer, r#""""a""""#), [r#""\"\"\"a\"\"\"":_NL"#]);
    assert_eq!(lex(&lexer, r"'a\'b 'c'")[0], r#""'a\\'":STRING"#);
}

#[test]
fn priority_inside_a_lazy_terminal() {
    // Leftmost-first for the whole pattern of a lazy terminal: re.match('(a|ab)c*?', 'ab')
    // is 'a'; re.match('(?:ü{2,3}?|.)', 'üü') is 'üü'. A greedy-only terminal keeps every
    // lexeme its pattern spells: /a|ab/ matches "ab".
    let lazy = build(&[re("L", "(a|ab)c*?"), re("B", "b")]);
    assert_eq!(lex(&lazy, "ab"), [r#""a":L"#, r#""b":B"#]);
    let first = build(&[re("U", "(?:ü{2,3}?|.)")]);
    assert_eq!(lex(&first, "üü"), [r#""üü":U"#]);
    let greedy = build(&[re("G", "a|ab"), re("B", "b")]);
    assert_eq!(lex(&greedy, "ab"), [r#""ab":G"#]);
    // A greedy loop with a lazy inside, as in the module docs.
    let nl = build(&[re("NL", r"(\n[ ]*|#.*?\n)+"), re("X", "x")]);
    assert_eq!(lex(&nl, "\n  x"), [r#""\n  ":NL"#, r#""x":X"#]);
    assert_eq!(lex(&nl, "\n#a\n#b\nx"), [r#""\n#a\n#b\n":NL"#, r#""x":X"#]);
}

/// Fuzz regression (the `lexer` target, once its reference went back to lazy matches too):
/// `b` is a lazy match whose longer reading `bé` (of `T1`) dies on the stray byte `0x80`, the
/// same byte that follows the lexeme `é` read after going back. The error belongs to the new
/// lexeme at `0x80`, as for a lexeme that ends where the text fails, not to the longer
/// reading the lexer went back from (it reported `lexeme_start` 1).
#[test]
fn an_error_after_going_back_belongs_to_the_lexeme_that_ends_there() {
    let specs = [
        common::re("T0", "(?:.aa)*?(?:.aa|aaa|.)"),
        common::re("T1", ".[^c]aa."),
    ];
    let lexer = Lexer::new(&specs, &LexerConfig::default()).unwrap();
    let e = lexer.tokenize(b"bb\xc3\xa9\x80").unwrap_err();
    assert_eq!((e.offset, e.lexeme_start), (4, 4));
    // The same text without the stray byte lexes as `b`, `b`, `é`.
    let lexemes = lexer.tokenize("bbé".as_bytes()).unwrap();
    let spans: Vec<(usize, usize)> = lexemes.iter().map(|l| (l.start, l.end)).collect();
    assert_eq!(spans, [(0, 1), (1, 2), (2, 4)]);
}
