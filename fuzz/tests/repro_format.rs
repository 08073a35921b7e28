//! The `Debug` of every case type is Rust that rebuilds the case: the expressions below were
//! pasted from `Debug` output, so this file compiling proves the format pasteable, and each test
//! checks that the pasted case equals the one the bytes give and still prints the same way.

use munch_fuzz::case_from_bytes;
use munch_fuzz::prelude::*;
use munch_fuzz::repro::Repro;

/// The bytes the pasted cases were generated from.
fn bytes() -> Vec<u8> {
    (0..200u32).map(|i| (i * 37 + 11) as u8).collect()
}

/// The pasted `case` equals the one the bytes give, and its `Debug` is a test that builds it again.
fn assert_reproduces<T>(case: T)
where
    T: for<'a> arbitrary::Arbitrary<'a> + Repro + PartialEq + std::fmt::Debug,
{
    let from_bytes: T = case_from_bytes(&bytes()).unwrap();
    assert_eq!(case, from_bytes);
    let shown = format!("{case:?}");
    assert!(
        shown.contains(&format!("let case = {};", case.to_repro())),
        "{shown}"
    );
    assert!(shown.contains("#[test]"));
}

/// The grammar both the commit and the mask case draw first from [`bytes`].
fn grammar() -> GrammarSpec {
    GrammarSpec {
        terms: vec![
            Term::new(Pattern::Literal("c ".to_string()), 0, false),
            Term::new(Pattern::Regex(Re::Set(vec!['é', 'c'])), -1, false),
            Term::new(Pattern::Literal("c ".to_string()), 0, false),
            Term::new(
                Pattern::Regex(Re::Alt(vec![
                    Re::Set(vec!['é']),
                    Re::NotSet(vec!['\n', 'b', '€']),
                ])),
                -1,
                true,
            ),
        ],
        rules: vec![
            vec![vec![]],
            vec![
                vec![
                    Item::new(Sym::T(0), Op::Rep(0, 1)),
                    Item::new(Sym::T(1), Op::One),
                ],
                vec![
                    Item::new(Sym::T(1), Op::Opt),
                    Item::new(Sym::T(0), Op::One),
                    Item::new(Sym::T(3), Op::One),
                ],
                vec![Item::new(Sym::N(0), Op::Plus)],
            ],
            vec![
                vec![Item::new(Sym::N(1), Op::One), Item::new(Sym::N(1), Op::One)],
                vec![Item::new(Sym::N(1), Op::One)],
            ],
        ],
    }
}

#[test]
fn lexer_debug_is_a_reproduction() {
    let case = LexerCase {
        terms: vec![
            Term::new(Pattern::Literal("c ".to_string()), 0, false),
            Term::new(Pattern::Regex(Re::Set(vec!['é', 'c'])), -1, false),
        ],
        input: Bytes(b"a\x80\xc3".to_vec()),
    };
    assert_reproduces(case);
}

#[test]
fn commit_debug_is_a_reproduction() {
    let case = CommitCase {
        grammar: grammar(),
        input: Bytes(b"".to_vec()),
        ops: vec![
            CommitOp::Commit(121),
            CommitOp::Restore(195),
            CommitOp::Commit(13),
            CommitOp::Commit(87),
            CommitOp::Commit(161),
            CommitOp::Restore(235),
            CommitOp::Rollback(53),
            CommitOp::Commit(127),
        ],
    };
    assert_reproduces(case);
}

#[test]
fn masks_debug_is_a_reproduction() {
    let case = MaskCase {
        grammar: grammar(),
        tokens: vec![Bytes(b"b\xe2\x82\xe2\x82".to_vec())],
        steps: vec![
            MaskStep::Rollback(121),
            MaskStep::Choose(195),
            MaskStep::Choose(13),
        ],
    };
    assert_reproduces(case);
}

#[test]
fn grammar_load_debug_is_a_reproduction() {
    let case = LarkCase { text: b"start: (a sep{a, \"if\"i}z\"*)+ (expr sep{expr, \"\\t\"} \"0\"..\"9\"start) (a+ sep{a, \"if\"} ~ 2 (/(?#note)[^\"\\\\]*z/ \"\"+ expr* | \"a\"..\"\xc3\xa9\") ~ 2..3)\nsep{x, s}: x (s x)*\na: \"a\"\nexpr:) \"expr\"\n".to_vec() };
    assert_reproduces(case);
}
