//! The weighted-automaton masker equals the oracle at every step, on synthetic grammars built
//! to stress the stack automaton (ε-rules, right recursion, unit cycles, hidden left recursion,
//! ambiguity, ignored and inhibited terminals) and on synthetic vocabularies.

mod common;

use std::sync::Arc;

use common::*;
use munch_glr::mask::Oracle;
use munch_masker_wda::{LazyWdaMasker, WdaConfig};
use munch_testkit::grammar::parser;

fn check_texts(source: &str, texts: &[&str], walks: u64) {
    check_texts_in(source, texts, walks, &[]);
}

/// [`check_texts`] with `extra` words in the vocabulary.
fn check_texts_in(source: &str, texts: &[&str], walks: u64, extra: &[&[u8]]) {
    let p = parser(source);
    let vocab = synthetic_vocab(extra);
    let w = wda(&p, &vocab);
    let oracle = Oracle::new(Arc::clone(&vocab));
    // The on-demand automaton, with the default cache, with one so small that it is cleared
    // every few masks, and with one cleared at every mask, which thrashes and gives up to its
    // fallback (the oracle).
    let l = lazy(&p, &vocab);
    // Its lexer points made by the masks alone, and all made ahead of the first mask.
    let own = lazy_points(&p, &vocab, false);
    let ahead = lazy_points(&p, &vocab, true);
    for text in texts {
        teacher_forced(&w, &oracle, &p, &vocab, text, 1);
        teacher_forced(&l, &oracle, &p, &vocab, text, 1);
        teacher_forced(&own, &w, &p, &vocab, text, 1);
        teacher_forced(&ahead, &w, &p, &vocab, text, 1);
    }
    assert_eq!(own.stats().prepared_points, 0);
    let small = lazy_small(&p, &vocab, l.stats().cache_bytes / 3);
    let none = LazyWdaMasker::new(
        Arc::clone(&p),
        Arc::clone(&vocab),
        &WdaConfig {
            cache_capacity: 1,
            ..WdaConfig::default()
        },
    )
    .unwrap();
    for text in texts {
        teacher_forced(&small, &oracle, &p, &vocab, text, 1);
        teacher_forced(&none, &oracle, &p, &vocab, text, 1);
    }
    assert!(small.stats().clears > 0 && !small.stats().gave_up);
    assert!(none.stats().gave_up);
    for seed in 0..walks {
        random_walk(&w, &oracle, &p, &vocab, seed, 25);
        random_walk(&l, &oracle, &p, &vocab, seed, 25);
    }
    // Its masks were its own, not its fallback's (the oracle's, equal too).
    assert!(!l.stats().gave_up);
    assert!(!own.stats().gave_up && !ahead.stats().gave_up);
}

#[test]
fn json() {
    check_texts(
        munch_grammars::builtin("json").unwrap().source,
        &[
            r#"{"a": [1, 2.5e3, -0.5, true, false, null], "b": {"c": "d\"e\u00e9"}}"#,
            "[]",
            "  {\n\t\"é日\": \"αβ\" }  ",
            r#"[{"x":[[[]]]},"",-1E-2]"#,
        ],
        10,
    );
}

#[test]
fn tricky() {
    check_texts(
        munch_grammars::builtin("tricky").unwrap().source,
        munch_testkit::grammar::TRICKY_TEXTS,
        10,
    );
}

#[test]
fn epsilon_rules_and_hidden_left_recursion() {
    check_texts(
        "start: s\ns: b s \"a\" | \"x\" | c s\nb: | \"y\"\nc: b b\n%ignore \" \"\n",
        &["x", "yxa", "y y x a a", "xa a"],
        10,
    );
}

#[test]
fn right_recursion() {
    check_texts(
        "start: l\nl: \"a\" l | \"a\" | \"(\" l \")\" l\n%ignore \" \"\n",
        &[
            "aaaaaaaaaaaaaaaaaaaaaaaaaa",
            "(a)(a(a)a)a",
            "(((((((a)a)a)a)a)a)a)a",
        ],
        10,
    );
}

#[test]
fn unit_cycles_and_ambiguity() {
    check_texts(
        "start: e\ne: f | e \"+\" e | e e | \"(\" e \")\"\nf: g | \"x\"\ng: e | \"y\"\n%ignore \" \"\n",
        &["x+y", "x y x+(y)", "((x))+x x"],
        10,
    );
}

#[test]
fn inhibited_terminals_and_ties() {
    check_texts(
        "start: (a | b | c)*\na: A \";\"\nb: B \",\"\nc: KW\nA: /[a-c]+/\nB: /[b-d]+/\nKW: \"ab\" | \"abab\"\n%ignore \" \"\n",
        &["ab; bd, abab ab abab;", "aab;bd,", "ab ab"],
        10,
    );
}

/// One on-demand automaton shared by threads that walk different texts at once (each with its
/// own cache, as each sequence of a batch has): every mask equals the eager automaton's, with
/// a cache large enough to keep everything and with one cleared while other threads read it.
#[test]
fn lazy_shared_across_threads() {
    let p = parser(munch_grammars::builtin("json").unwrap().source);
    let vocab = synthetic_vocab(&[]);
    let eager = Arc::new(wda(&p, &vocab));
    let texts = [
        r#"{"a": [1, 2.5e3, -0.5, true, false, null], "b": {"c": "d\"e"}}"#,
        r#"[{"x":[[[]]]},"",-1E-2, {"k": {"l": [null, {"m": 3}]}}]"#,
        "  {\n\t\"key\": \"value\", \"n\": [10, 20, 30] }  ",
        r#"[true, false, null, "s", 0.25, {"": []}]"#,
    ];
    for capacity in [256 << 20, 4 << 10] {
        let config = WdaConfig {
            cache_capacity: capacity,
            min_clears: usize::MAX,
            ..WdaConfig::default()
        };
        let shared =
            Arc::new(LazyWdaMasker::new(Arc::clone(&p), Arc::clone(&vocab), &config).unwrap());
        std::thread::scope(|s| {
            for i in 0..texts.len() {
                let (shared, eager, p, vocab) = (&shared, &eager, &p, &vocab);
                s.spawn(move || {
                    for round in 0..3 {
                        let text = texts[(i + round) % texts.len()];
                        teacher_forced(shared.as_ref(), eager.as_ref(), p, vocab, text, 1);
                    }
                });
            }
        });
        let stats = shared.stats();
        assert!(!stats.gave_up, "{stats:?}");
        if capacity < 1 << 20 {
            assert!(stats.clears > 0, "{stats:?}");
        }
    }
}

/// The preparing thread, a caller preparing every point at once and threads masking, all on
/// one automaton: every mask equals the eager automaton's, and nothing waits forever (the
/// masks never wait for a point being prepared: they make it themselves).
#[test]
fn points_prepared_beside_masking_threads() {
    let p = parser(munch_grammars::builtin("tricky").unwrap().source);
    let vocab = synthetic_vocab(&[]);
    let eager = Arc::new(wda(&p, &vocab));
    let texts = munch_testkit::grammar::TRICKY_TEXTS;
    for round in 0..4 {
        // The default: the preparing thread runs from the build on.
        let shared = Arc::new(lazy(&p, &vocab));
        std::thread::scope(|s| {
            if round % 2 == 1 {
                let shared = &shared;
                s.spawn(move || shared.prepare_points());
            }
            for i in 0..4 {
                let (shared, eager, p, vocab) = (&shared, &eager, &p, &vocab);
                s.spawn(move || {
                    for j in 0..texts.len() {
                        let text = texts[(i + j) % texts.len()];
                        teacher_forced(shared.as_ref(), eager.as_ref(), p, vocab, text, 1);
                    }
                });
            }
        });
        let stats = shared.stats();
        assert!(!stats.gave_up, "{stats:?}");
        assert!(stats.prepared_points <= stats.lexer_points, "{stats:?}");
    }
}

/// Keywords tied with a name (stand-ins): the automaton reads a keyword's class as the name's
/// where the parser cannot take the keyword, and as itself where it can; and not as the name
/// after `A C` ([`munch_testkit::grammar::KEYWORDS_MERGED`]), where reading it so would allow
/// `if`, which the parser refuses.
#[test]
fn keywords_tied_with_names() {
    let words: &[&[u8]] = &[
        b"if",
        b" if",
        b"if ",
        b" if ",
        b" if;",
        b"i",
        b"f",
        b"ifx",
        b" x",
        b"x if",
        b" C",
        b"A C",
        b"C if",
        b" D",
        b" E",
        b"else",
        b" else",
        b"while",
        b" while",
        b"= if",
        b"=if ;",
        b"= else ;",
        b"{ if",
    ];
    check_texts_in(
        munch_testkit::grammar::KEYWORDS_MERGED,
        &[
            "if x { y = if ; } else { x = while ; }",
            "if if { z = else ; }",
            "A C x ; A C D ; B C if ; B C E ;",
            "while else { A C while ; }",
        ],
        10,
        words,
    );
}
