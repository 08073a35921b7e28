//! Terminal patterns: the HIR munch builds has the same language as the Python regex Lark
//! builds for the same definition.
//!
//! Each table pairs a pool of sample strings with, per terminal, the samples Python's
//! `re.fullmatch` accepts on the pattern Lark 1.3.1 compiles (`terminal.pattern.to_regexp()`);
//! every other sample of the pool is rejected. The tables were generated with Lark and pasted.

use munch_glr::grammar::Grammar;
use munch_glr::lark::{load, LoadConfig};
use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};
use regex_syntax::hir::{Hir, Look};

/// The grammar of the `SYNTH` table: one terminal per translation concern.
const SYNTH_GRAMMAR: &str = r#"
start: a_ | b_ | c_ | d_ | e_ | f_ | g_ | h_ | i_ | j_ | k_ | l_ | m_ | n_
a_: A
b_: B
c_: C
d_: D
e_: E
f_: F
g_: G
h_: H
i_: I
j_: J
k_: K
l_: L
m_: M
n_: N
// escaped slashes
A: /\/\*[^*]*\*+\//
// a quote and escapes in a regex
B: /"(?:[^"\\]|\\.)*"/
// a case-insensitive literal
C: "if"i
// flags apply to their own part only
D: "a"i "b"
// `s`: the dot matches a newline
E: /a.b/s
// `x`: whitespace and comments are ignored
F: /x # a comment
     y+/x
// a range, repeated
G: ("0".."9")~2..3
// a Python named group
H: /(?P<q>['"])[a-z]+/
// `[` and `]` inside a class
I: /[[\]-]+/
// Python's `{,n}` and a literal `{`
J: /a{,2}b{2}c{/
// numeric escapes: Lark's `\x41`, `\u00e9`, and the regex's octal `\101`
K: /\x41\u00e9\101/
// a global inline flag (and Unicode case folding: the Kelvin sign)
L: /(?i)k/
// negated Perl classes in a negated class
M: /[^\s\d]+/
// Python's `\Z`
N: /ab\Z/
"#;

#[rustfmt::skip]
const SYNTH_POOL: &[&str] = &[
    "/**/", "/* a */", "/* a */ */", "/*a", "\"\"", "\"a\\\"b\"", "\"a\"b\"", "\"a\\\"", "if",
    "IF", "iF", "If", "ab", "Ab", "AB", "aB", "a\nb", "aXb", "ab\n", "xy", "xyy", "x y", "xy\n",
    "00", "123", "1234", "1", "'abc'", "\"abc", "'ABC'", "[", "]-[", "-", "a]", "bbc{", "abbc{",
    "aabbc{", "aaabbc{", "bbc", "A\u{e9}A", "k", "K", "\u{212a}", "abc", "a b", "a1", "\u{e9}",
];
#[rustfmt::skip]
const SYNTH: &[(&str, &[&str])] = &[
    ("A", &["/**/", "/* a */"]),
    ("B", &["\"\"", "\"a\\\"b\""]),
    ("C", &["if", "IF", "iF", "If"]),
    ("D", &["ab", "Ab"]),
    ("E", &["a\nb", "aXb", "a b"]),
    ("F", &["xy", "xyy"]),
    ("G", &["00", "123"]),
    ("H", &["\"abc"]),
    ("I", &["[", "]-[", "-"]),
    ("J", &["bbc{", "abbc{", "aabbc{"]),
    ("K", &["A\u{e9}A"]),
    ("L", &["k", "K", "\u{212a}"]),
    ("M", &["/**/", "/*a", "\"\"", "\"a\\\"b\"", "\"a\"b\"", "\"a\\\"", "if", "IF", "iF", "If",
        "ab", "Ab", "AB", "aB", "aXb", "xy", "xyy", "'abc'", "\"abc", "'ABC'", "[", "]-[", "-",
        "a]", "bbc{", "abbc{", "aabbc{", "aaabbc{", "bbc", "A\u{e9}A", "k", "K", "\u{212a}",
        "abc", "\u{e9}"]),
    ("N", &["ab"]),
];
#[rustfmt::skip]
const COMMON_POOL: &[&str] = &[
    "", "0", "7", "12", "007", "1.5", ".5", "5.", "1e5", "1E-3", "1.5e+3", ".5e2", "e5", "1e",
    "-3", "+4", "+1.5", "-.5e-2", "--1", "0x1F", "a", "F", "g", "z", "Z", "\u{e9}", "aB", "ab12",
    "_x", "_", "1a", "a_1", "\"abc\"", "\"\"", "\"a\\\"b\"", "\"a\\\\\"", "\"a\\\\\\\"b\"",
    "\"a\\\"", "\"a\"b\"", "\"a\nb\"", "\"\\n\"", "\"\u{e9}\"", "'a'", " ", "\t", " \t", "\n",
    "\r", "\r\n", "\n\n", "\r\r\n", " \n", "\x0c", "\x0b", "# c", "#", "#\n", "// c", "//", "/ c",
    "/* c */", "/**/", "/* a\n b */", "/* a */ b */", "/*", "-- c", "--", "- c",
];
#[rustfmt::skip]
const COMMON: &[(&str, &[&str])] = &[
    ("CNAME", &["e5", "a", "F", "g", "z", "Z", "aB", "ab12", "_x", "_", "a_1"]),
    ("CPP_COMMENT", &["// c", "//"]),
    ("CR", &["\r"]),
    ("C_COMMENT", &["/* c */", "/**/", "/* a\n b */", "/* a */ b */"]),
    ("DECIMAL", &["1.5", ".5", "5."]),
    ("DIGIT", &["0", "7"]),
    ("ESCAPED_STRING", &["\"abc\"", "\"\"", "\"a\\\"b\"", "\"a\\\\\"", "\"a\\\\\\\"b\"",
        "\"a\"b\"", "\"\\n\"", "\"\u{e9}\""]),
    ("FLOAT", &["1.5", ".5", "5.", "1e5", "1E-3", "1.5e+3", ".5e2"]),
    ("HEXDIGIT", &["0", "7", "a", "F"]),
    ("INT", &["0", "7", "12", "007"]),
    ("LCASE_LETTER", &["a", "g", "z"]),
    ("LETTER", &["a", "F", "g", "z", "Z"]),
    ("LF", &["\n"]),
    ("NEWLINE", &["\n", "\r\n", "\n\n"]),
    ("NUMBER", &["0", "7", "12", "007", "1.5", ".5", "5.", "1e5", "1E-3", "1.5e+3", ".5e2"]),
    ("SH_COMMENT", &["# c", "#"]),
    ("SIGNED_FLOAT", &["1.5", ".5", "5.", "1e5", "1E-3", "1.5e+3", ".5e2", "+1.5", "-.5e-2"]),
    ("SIGNED_INT", &["0", "7", "12", "007", "-3", "+4"]),
    ("SIGNED_NUMBER", &["0", "7", "12", "007", "1.5", ".5", "5.", "1e5", "1E-3", "1.5e+3",
        ".5e2", "-3", "+4", "+1.5", "-.5e-2"]),
    ("SQL_COMMENT", &["--1", "-- c", "--"]),
    ("UCASE_LETTER", &["F", "Z"]),
    ("WORD", &["a", "F", "g", "z", "Z", "aB"]),
    ("WS", &[" ", "\t", " \t", "\n", "\r", "\r\n", "\n\n", "\r\r\n", " \n", "\x0c"]),
    ("WS_INLINE", &[" ", "\t", " \t"]),
];

/// Whether `hir` matches all of `text`.
fn full_match(hir: &Hir, text: &str) -> bool {
    let anchored = Hir::concat(vec![hir.clone(), Hir::look(Look::End)]);
    let re = Regex::builder()
        .build_from_hir(&anchored)
        .expect("the pattern compiles");
    re.is_match(Input::new(text).anchored(Anchored::Yes))
}

fn check_table(g: &Grammar, pool: &[&str], table: &[(&str, &[&str])]) {
    assert_eq!(g.terminal_len(), table.len(), "one table row per terminal");
    for (name, accepted) in table {
        let t = g
            .terminals
            .iter()
            .find(|t| t.name == *name)
            .unwrap_or_else(|| panic!("terminal {name} is kept"));
        let p = t.pattern.as_ref().expect("has a pattern");
        for sample in pool {
            assert_eq!(
                full_match(&p.hir, sample),
                accepted.contains(sample),
                "{name} ({}) on {sample:?}",
                p.source
            );
        }
        assert!(!accepted.is_empty(), "{name}: the pool exercises it");
    }
}

#[test]
fn translated_regexes_match_like_python() {
    let g =
        load(SYNTH_GRAMMAR.as_bytes(), &LoadConfig::default()).unwrap_or_else(|e| panic!("{e}"));
    check_table(&g, SYNTH_POOL, SYNTH);
}

#[test]
fn common_library_matches_larks() {
    let names: Vec<&str> = COMMON.iter().map(|(n, _)| *n).collect();
    let src = format!(
        "%import common ({})\nstart: {}\n",
        names.join(", "),
        names.join(" | ")
    );
    let g = load(src.as_bytes(), &LoadConfig::default()).unwrap_or_else(|e| panic!("{e}"));
    check_table(&g, COMMON_POOL, COMMON);
}

#[test]
fn escaped_string_is_lazy() {
    // Lark's ESCAPED_STRING ends at the first unescaped quote; munch keeps that as a lazy
    // repetition (the lexer gives lazy terminals the shortest match).
    let g = load(
        b"%import common.ESCAPED_STRING\nstart: ESCAPED_STRING\n",
        &LoadConfig::default(),
    )
    .unwrap();
    let hir = &g.terminals[0].pattern.as_ref().unwrap().hir;
    let mut lazy = false;
    let mut stack = vec![hir];
    while let Some(h) = stack.pop() {
        match h.kind() {
            regex_syntax::hir::HirKind::Repetition(r) => {
                lazy |= !r.greedy;
                stack.push(&r.sub);
            }
            regex_syntax::hir::HirKind::Concat(v) | regex_syntax::hir::HirKind::Alternation(v) => {
                stack.extend(v.iter())
            }
            regex_syntax::hir::HirKind::Capture(c) => stack.push(&c.sub),
            _ => {}
        }
    }
    assert!(lazy, "ESCAPED_STRING has a lazy repetition");
    // Python (re.match, which Lark's lexer uses) ends the match after `"a"` in `"a"b"`.
    let re = Regex::builder().build_from_hir(hir).unwrap();
    let m = re
        .find(Input::new(r#""a"b""#).anchored(Anchored::Yes))
        .unwrap();
    assert_eq!(m.end(), 3);
}

#[test]
fn literal_flags_and_sources() {
    let g = load(
        br#"start: KW NAME "x"i /y/ COMBO
KW: "while"
NAME: /[a-z]+/
COMBO: KW NAME
"#,
        &LoadConfig::default(),
    )
    .unwrap();
    let get = |n: &str| g.terminals.iter().find(|t| t.name == n).unwrap();
    let lit = |n: &str| get(n).pattern.as_ref().unwrap().is_literal;
    assert!(lit("KW"));
    assert!(!lit("NAME"));
    assert!(lit("X"), "an anonymous \"x\"i is a literal named X");
    assert!(!lit("__ANON_0"), "an anonymous regex is not a literal");
    assert!(
        !lit("COMBO"),
        "terminals joined from literals are not literals (Lark: PatternRE)"
    );
    assert_eq!(get("COMBO").pattern.as_ref().unwrap().source, "KW NAME");
    assert_eq!(get("X").pattern.as_ref().unwrap().source, "\"x\"i");
    assert!(full_match(&get("X").pattern.as_ref().unwrap().hir, "X"));
    assert!(full_match(
        &get("COMBO").pattern.as_ref().unwrap().hir,
        "whileabc"
    ));
}
