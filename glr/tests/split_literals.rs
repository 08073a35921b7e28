//! A literal read as copies of a shorter literal where the parser has no action on it
//! (`ParserConfig::contextual_literals`; `munch_glr::cfg::split`): Python's `from ... import x`,
//! which Lark's contextual lexer reads as three `"."`.

use std::sync::Arc;

use munch_glr::cfg::{normalize, NormalizeConfig};
use munch_glr::lark::{load, LoadConfig};
use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_testkit::earley::Earley;
use proptest::prelude::*;

fn parser(src: &str, contextual: bool) -> Arc<Parser> {
    let g = load(src.as_bytes(), &LoadConfig::default()).expect("loads");
    let config = ParserConfig {
        contextual_literals: contextual,
        ..ParserConfig::default()
    };
    Arc::new(Parser::new(&g, &config).expect("builds"))
}

fn accepts(p: &Arc<Parser>, text: &str) -> bool {
    let mut s = ParserState::new(p.clone());
    s.commit_bytes(text.as_bytes()).is_ok() && s.is_accepting()
}

/// The parser's verdict on `text`, and the Earley reference's on the grammar as written (each
/// split literal read as itself where it continues to a viable prefix, else as its copies).
fn verdicts(src: &str, text: &str) -> (bool, bool) {
    let g = load(src.as_bytes(), &LoadConfig::default()).expect("loads");
    let cfg = normalize(&g, &NormalizeConfig::default()).expect("normalises");
    let p = parser(src, true);
    let want = Earley::new(&cfg)
        .accepts_text(&p, text.as_bytes(), usize::MAX)
        .expect("no limit");
    (accepts(&p, text), want)
}

/// Each split as `LONG SHORT COPIES`, by the literals' texts.
fn splits(p: &Parser) -> Vec<String> {
    let text = |t| match p.lexer().terminal(t).hir.as_ref().map(|h| h.kind()) {
        Some(regex_syntax::hir::HirKind::Literal(l)) => String::from_utf8_lossy(&l.0).into_owned(),
        _ => panic!("a split terminal is a literal"),
    };
    p.split_literals()
        .iter()
        .map(|s| format!("{} {} {}", text(s.long), text(s.short), s.copies))
        .collect()
}

/// Python's relative imports and ellipsis, in small.
const DOTS: &str = r#"
start: stmt+
stmt: "from" (dots? NAME | dots) "import" NAME ";" | expr ";"
dots: "."+
expr: "..." | NAME | expr "." NAME | "(" expr ")"
NAME: /[a-z]+/
%ignore " "
"#;

/// A run of copies that crosses rules: `x.` then `..y`.
const ACROSS: &str = r#"
start: a b | "..." "y"
a: "x" "."
b: "." "." "y" | "." "y"
%ignore " "
"#;

/// `&&` must stay one lexeme after an operand, where `& &b` also parses: no split.
const UNARY: &str = r#"
start: e
e: e "&&" e | e "&" e | "&" e | NAME
NAME: /[a-z]+/
%ignore " "
"#;

#[test]
fn three_dots_after_from_are_three_dots() {
    let p = parser(DOTS, true);
    assert_eq!(splits(&p), vec!["... . 3"]);
    for text in [
        "from ... import x;",
        "from .... import x;",
        "from ...... import x;",
        "from ...a import b;",
        "from .. import x;",
        "from . . . import x;",
        "...;",
        "(...);",
        "a.b;",
    ] {
        assert!(accepts(&p, text), "{text:?}");
    }
    for text in ["a...;", "... import x;", "from ... ;", "a. ..;"] {
        assert!(!accepts(&p, text), "{text:?}");
    }
    // Off: `...` is only the ellipsis.
    let plain = parser(DOTS, false);
    assert!(plain.split_literals().is_empty());
    assert!(!accepts(&plain, "from ... import x;"));
    assert!(accepts(&plain, "from .. import x;"));
}

#[test]
fn copies_may_cross_rules() {
    let p = parser(ACROSS, true);
    assert_eq!(splits(&p), vec!["... . 3"]);
    for text in ["x...y", "x..y", "x. ..y", "...y", "x . . . y"] {
        assert!(accepts(&p, text), "{text:?}");
    }
    for text in ["x....y", "x.y", "..y"] {
        assert!(!accepts(&p, text), "{text:?}");
    }
}

#[test]
fn a_literal_both_readings_may_take_is_not_split() {
    let p = parser(UNARY, true);
    assert!(p.split_literals().is_empty());
    assert!(accepts(&p, "a && b"));
    assert!(accepts(&p, "a & &b"));
    // Lark's contextual lexer reads `&&b` as `&` `&` `b`; munch keeps `&&` one lexeme here,
    // since after an operand both readings would parse.
    assert!(!accepts(&p, "&&b"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    /// The split grammar against the Earley recogniser on the grammar as written, reading
    /// each `...` as itself where it continues to a viable prefix and as three `.` elsewhere.
    #[test]
    fn the_split_grammar_agrees_with_the_reference(
        grammar in 0usize..2,
        head in 0usize..5,
        dots in prop::collection::vec(0usize..4, 1..5),
        tail in 0usize..6,
    ) {
        const HEADS: [&str; 5] = ["from ", "x", "", "a", "("];
        const DOTS_: [&str; 4] = [".", "..", "...", " "];
        const TAILS: [&str; 6] = [" import x;", "y", ";", "a;", ");", "b y"];
        let src = [DOTS, ACROSS][grammar];
        let text: String = std::iter::once(HEADS[head])
            .chain(dots.iter().map(|&i| DOTS_[i]))
            .chain(std::iter::once(TAILS[tail]))
            .collect();
        let (got, want) = verdicts(src, &text);
        prop_assert_eq!(got, want, "{:?}", text);
    }
}

/// `start: "x" "a"+ | "y" long` where `long` is a run of two to eight `a` and a `b`.
fn runs_grammar() -> String {
    let longs: Vec<String> = (2..=8)
        .map(|n| format!("\"{}\" \"b\"", "a".repeat(n)))
        .collect();
    format!(
        "start: \"x\" \"a\"+ | \"y\" long\nlong: {}\n%ignore \" \"\n",
        longs.join(" | ")
    )
}

/// Every run of `a` up to eight long is a literal of its own; after `x` only single `a`s
/// parse, so every longer one is split there, while after `y` each is itself (runs of `aa`
/// are split pairs too: no state takes two in a row).
#[test]
fn every_longer_run_is_split_where_only_the_letter_parses() {
    let p = parser(&runs_grammar(), true);
    let found = splits(&p);
    for n in 2..=8 {
        let pair = format!("{} a {n}", "a".repeat(n));
        assert!(found.contains(&pair), "{pair} not in {found:?}");
    }
    for text in [
        "x aaaaaaaaaaaaaaaaaaa",
        "x aa a aaa",
        "y aaaaaaaa b",
        "y aa b",
    ] {
        assert!(accepts(&p, text), "{text:?}");
    }
    for text in ["y a a b", "x aa b", "y aaaaaaaaa b"] {
        assert!(!accepts(&p, text), "{text:?}");
    }
}

/// Empty reductions that push states without end (`c: b c |` with `b` empty, whose state
/// LALR shares between the two literals' contexts, so that it reduces on `"a"`): the split
/// check still ends, in bounded memory. No stack that takes `"aa"` takes two `"a"` in a row,
/// so the pair is split (after `w` two `"a"` follow).
#[test]
fn the_split_check_ends_on_endless_empty_reductions() {
    let src = "start: \"x\" c \"aa\" | \"y\" c \"a\" \"z\" | \"w\" \"a\" \"a\"\nc: b c |\nb: \n";
    let p = parser(src, true);
    assert_eq!(splits(&p), vec!["aa a 2"]);
    for text in ["xaa", "yaz", "waa"] {
        assert!(accepts(&p, text), "{text:?}");
    }
    assert!(!accepts(&p, "yaa"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Runs of one letter that several literals spell (`aaaa` is four `a` or two `aa`): the
    /// parser against the reference as above.
    #[test]
    fn runs_agree_with_the_reference(
        head in 0usize..2,
        runs in prop::collection::vec(1usize..10, 1..4),
        b in any::<bool>(),
    ) {
        let src = runs_grammar();
        let text: String = std::iter::once(["x", "y"][head].to_string())
            .chain(runs.iter().map(|&n| format!(" {}", "a".repeat(n))))
            .chain(b.then(|| " b".to_string()))
            .collect();
        let (got, want) = verdicts(&src, &text);
        prop_assert_eq!(got, want, "{:?}", text);
    }
}
