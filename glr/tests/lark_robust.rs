//! Untrusted grammar text: `load` returns `Ok` or a located `Err` for any input, never panics,
//! overflows the stack or runs away — deep nesting, megabyte grammars, random bytes, random
//! edits of real grammars, exponential terminals and runaway templates.

use munch_glr::grammar::{Expr, Grammar};
use munch_glr::lark::{load, ErrorKind, LoadConfig};
use proptest::prelude::*;

/// Checks the `Grammar` invariants documented in `grammar.rs`.
fn check_invariants(g: &Grammar) {
    assert!(g.start.as_usize() < g.rule_len());
    let mut reachable = vec![false; g.rule_len()];
    reachable[g.start.as_usize()] = true;
    let mut stack = vec![g.start];
    let mut used_terms = vec![false; g.terminal_len()];
    while let Some(r) = stack.pop() {
        let mut todo = vec![&g.rule(r).expr];
        while let Some(e) = todo.pop() {
            match e {
                Expr::Empty => {}
                Expr::Terminal(t) => {
                    assert!(t.as_usize() < g.terminal_len(), "terminal id in range");
                    used_terms[t.as_usize()] = true;
                }
                Expr::Rule(d) => {
                    assert!(d.as_usize() < g.rule_len(), "rule id in range");
                    if !reachable[d.as_usize()] {
                        reachable[d.as_usize()] = true;
                        stack.push(*d);
                    }
                }
                Expr::Seq(v) => todo.extend(v.iter()),
                Expr::Alt(v) => todo.extend(v.iter().map(|a| &a.expr)),
                Expr::Optional(c) | Expr::Star(c) | Expr::Plus(c) => todo.push(c),
                Expr::Repeat { expr, min, max } => {
                    assert!(min <= max);
                    todo.push(expr)
                }
            }
        }
    }
    assert!(
        reachable.iter().all(|&r| r),
        "only reachable rules are kept"
    );
    for (t, used) in g.terminals.iter().zip(&used_terms) {
        assert!(*used || t.ignored, "terminal {} is used or ignored", t.name);
        if let Ok(p) = &t.pattern {
            assert_ne!(
                p.hir.properties().minimum_len(),
                Some(0),
                "{} matches the empty string",
                t.name
            );
        }
    }
}

/// Loads `src`; on success checks the invariants, on failure renders the error.
fn load_any(src: &[u8]) {
    match load(src, &LoadConfig::default()) {
        Ok(g) => check_invariants(&g),
        Err(e) => {
            let shown = e.to_string();
            assert!(shown.contains("error:"), "{shown}");
            assert!(e.span().start <= src.len());
        }
    }
}

fn err_kind(src: &[u8]) -> ErrorKind {
    load(src, &LoadConfig::default())
        .expect_err("must fail")
        .kind()
        .clone()
}

#[test]
fn a_hundred_thousand_open_delimiters() {
    let limit = LoadConfig::default().max_nesting;
    for open in ["(", "[", "a{"] {
        let src = format!("start: {}\"x\"\n", open.repeat(100_000));
        assert_eq!(
            err_kind(src.as_bytes()),
            ErrorKind::NestingTooDeep { limit },
            "{open}"
        );
    }
    // Regex nesting is bounded too (by regex-syntax's nest limit).
    let src = format!("start: /{}a{}/\n", "(".repeat(100_000), ")".repeat(100_000));
    assert!(matches!(
        err_kind(src.as_bytes()),
        ErrorKind::BadRegex { .. }
    ));
}

#[test]
fn a_megabyte_of_rules_loads() {
    // 20 000 rules, defined in reverse order of use, each with literals and a group; the
    // productivity check must stay linear on the chain.
    let mut src = String::from("start: r0\n");
    let n = 20_000;
    for i in (0..n).rev() {
        let next = if i + 1 < n {
            format!("r{}", i + 1)
        } else {
            "\"end\"".to_string()
        };
        src.push_str(&format!(
            "r{i}: \"k{i}\" ({next} | \"alt{}\" NAME) \"x\"?\n",
            i % 97
        ));
    }
    src.push_str("NAME: /[a-z]+/\n");
    while src.len() < 1_000_000 {
        src.push_str("// padding to a megabyte of grammar text\n");
    }
    let g = load(src.as_bytes(), &LoadConfig::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g.rule_len(), n + 1);
    check_invariants(&g);
}

#[test]
fn a_megabyte_on_one_line_loads() {
    let mut src = String::from("start:");
    let mut i = 0;
    while src.len() < 1_000_000 {
        src.push_str(&format!(" \"w{}\"", i % 5000));
        i += 1;
    }
    src.push('\n');
    let g = load(src.as_bytes(), &LoadConfig::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g.terminal_len(), 5000);
    // An error at the end of the line still renders a short snippet.
    src.pop();
    src.push_str(" UNDEFINED\n");
    let e = load(src.as_bytes(), &LoadConfig::default()).unwrap_err();
    assert!(e.to_string().len() < 1_000, "the snippet is windowed");
}

#[test]
fn exponential_terminals_hit_the_size_budget() {
    let mut src = String::from("start: T0\n");
    for i in 0..40 {
        src.push_str(&format!("T{i}: T{} T{}\n", i + 1, i + 1));
    }
    src.push_str("T40: \"ab\"\n");
    assert!(matches!(
        err_kind(src.as_bytes()),
        ErrorKind::LimitExceeded { .. }
    ));
}

#[test]
fn long_terminal_chains_are_bounded() {
    let n = 10_000;
    let mut src = String::from("start: T0\n");
    for i in 0..n {
        src.push_str(&format!("T{i}: (T{} | \"y\") \"x\"\n", i + 1));
    }
    src.push_str(&format!("T{n}: \"z\"\n"));
    assert!(matches!(
        err_kind(src.as_bytes()),
        ErrorKind::LimitExceeded { .. }
    ));
    // A long cycle is found without recursion.
    let mut src = String::from("start: T0\n");
    for i in 0..n {
        src.push_str(&format!("T{i}: T{}\n", (i + 1) % n));
    }
    assert!(matches!(
        err_kind(src.as_bytes()),
        ErrorKind::TerminalCycle { .. }
    ));
}

#[test]
fn runaway_templates_hit_a_budget() {
    // Each instance uses a new, larger one.
    assert!(matches!(
        err_kind(b"start: t{A}\nt{x}: x | t{w{x}}\nw{y}: y\nA: \"a\"\n"),
        ErrorKind::LimitExceeded { .. }
    ));
}

/// Grammars whose random edits the property tests load.
const SEEDS: &[&str] = &[
    r#"?start: sum
?sum: product | sum "+" product -> add | sum "-" product
?product: atom | product "*" atom
?atom: NUMBER -> number | "(" sum ")" | NAME ~ 1..3 | [NAME] "!"
_sep{x, s}: x (s x)*
list: "[" _sep{atom, ","}? "]"
NAME: /[a-z_]\w*/i
%import common.NUMBER
%import common.WS
%ignore WS
"#,
    r#"start: value
value: object | array | STRING | SIGNED_NUMBER | "true" | "false" | "null"
object: "{" [pair ("," pair)*] "}"
pair: STRING ":" value
array: "[" [value ("," value)*] "]"
STRING: /"(?:[^"\\]|\\.)*"/
%import common.SIGNED_NUMBER
%declare _INDENT
%override pair: STRING ":" value
%extend value: "nan"
COMMENT.2: /#[^\n]*/ | "/*" /(.|\n)*?/ "*/"
%ignore COMMENT
%ignore " "
"#,
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        load_any(&bytes);
    }

    #[test]
    fn random_lark_like_text_never_panics(
        text in r#"([a-zA-Z_]{1,4}|[ \t\n:|()\[\]{}?*+~.,!%"/\\-]|"[a-z]*"|/[a-z\\.*+()\[\]^$?]*/|[0-9]{1,3}|->|\.\.|%(ignore|import|declare|override|extend)){0,60}"#
    ) {
        load_any(text.as_bytes());
    }

    #[test]
    fn edits_of_real_grammars_never_panic(
        seed in 0..SEEDS.len(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<u8>()), 1..8),
    ) {
        let mut bytes = SEEDS[seed].as_bytes().to_vec();
        const ALPHABET: &[u8] = b"aZ_ \n\t:|()[]{}?*+~.,!%\"/\\-0123456789>#";
        for (at, op, b) in edits {
            let c = ALPHABET[b as usize % ALPHABET.len()];
            match op {
                0 if !bytes.is_empty() => { bytes.remove(at.index(bytes.len())); }
                1 => { let i = at.index(bytes.len() + 1); bytes.insert(i, c); }
                _ if !bytes.is_empty() => { let i = at.index(bytes.len()); bytes[i] = c; }
                _ => {}
            }
        }
        load_any(&bytes);
    }
}

#[test]
fn seeds_load() {
    for s in SEEDS {
        let g = load(s.as_bytes(), &LoadConfig::default()).unwrap_or_else(|e| panic!("{e}"));
        check_invariants(&g);
    }
}

#[test]
fn grammar_text_past_max_grammar_bytes_is_refused_before_parsing() {
    let src = format!("start: {}\n", "\"a\" ".repeat(100));
    let config = |max_grammar_bytes| LoadConfig {
        max_grammar_bytes,
        ..LoadConfig::default()
    };
    assert!(load(src.as_bytes(), &config(src.len())).is_ok());
    let err = load(src.as_bytes(), &config(100)).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::LimitExceeded {
            what: "bytes of grammar text (`max_grammar_bytes`)",
            limit: 100
        }
    );
    // Located where the limit falls: line 1, byte 100.
    assert_eq!((err.span().line, err.span().start), (1, 100));
    // A limit inside a character falls back to its start.
    let wide = format!("start: \"{}\"\n", "é".repeat(60));
    let err = load(wide.as_bytes(), &config(9)).unwrap_err();
    assert_eq!(err.span().start, 8);
}
