//! Recognition stays polynomial on ambiguous and ε-heavy grammars: each text below is parsed
//! within a work budget (`max_work_per_commit`, counted in reduction items and GSS edges walked)
//! about twice what the reducer needs today. The reducer without its per-step deduplication
//! needs orders of magnitude more on the same texts (about n⁴ on `s: s s | "a"`: minutes at
//! 1,000 `a`s), so a regression shows here as a budget error, not as a slow test. Timings are in
//! bench/PERFORMANCE.md.

use std::sync::Arc;

use munch_glr::parser::{CommitErrorKind, Parser, ParserConfig, ParserState};

fn parser(src: &str, max_work_per_commit: usize) -> Arc<Parser> {
    let config = ParserConfig {
        max_work_per_commit,
        ..ParserConfig::default()
    };
    munch_testkit::grammar::parser_with(src, &config)
}

/// Commits `text` at once (one commit: the budget covers the whole text) and checks acceptance.
fn accepts(src: &str, text: &str, max_work_per_commit: usize) {
    let mut state = ParserState::new(parser(src, max_work_per_commit));
    match state.commit_bytes(text.as_bytes()) {
        Ok(()) => assert!(state.is_accepting(), "{src:?} rejects its text at the end"),
        Err(e) => panic!("{src:?} on {} bytes: {e}", text.len()),
    }
}

const SS: &str = "start: s\ns: s s | \"a\"\n";

#[test]
fn binary_ambiguity_is_cubic() {
    // Needs about 9.0 M units at 300 (n³/3); n⁴ would be thousands of times more.
    accepts(SS, &"a".repeat(300), 20_000_000);
    accepts("start: s\ns: s s | \"a\" |\n", &"a".repeat(300), 20_000_000);
    accepts(
        "start: e\ne: e \"+\" e | \"a\"\n",
        &vec!["a"; 300].join("+"),
        10_000_000,
    );
}

#[test]
fn ternary_ambiguity_is_cubic() {
    // 9.2 M units at 200: RNGLR's per-path reductions would be n⁴ here even without the
    // duplicate edge checks.
    accepts(
        "start: s\ns: s s s | s s | \"a\"\n",
        &"a".repeat(200),
        20_000_000,
    );
}

#[test]
fn else_if_chains_are_linear() {
    // Every `else` of a chain reduces the innermost `if` under `else` (LALR(1) merges the
    // contexts where `else` may follow a statement) and under the names its prefixes also are
    // (`e`, `el`, `els`); the reductions run down the whole chain, to the top level where a name
    // shifts and `else` dies. The reducer remembers where such a deterministic path ends, so
    // each `else` costs the same whatever the length of the chain.
    let chain = |n: usize| format!("{}x=1;", "if (x) x=1; else ".repeat(n));
    // Linear makes the work 4 times from 200 to 800 links, quadratic 16 times. The least
    // budget moves between runs (the hash maps' seeds order the reductions, and the memo samples
    // nodes: from 200 to 400 links, 2.0-3.2 times), so the bound is 8, between the two.
    let (short, long) = (work(tricky(), &chain(200)), work(tricky(), &chain(800)));
    assert!(
        long < short * 8,
        "{short} units at 200 links, {long} at 800"
    );
    // The same inside a block, where both the name and the `else` paths end at the `{`.
    let block = |n: usize| format!("{{ {}x=1; }}", "if (x) x=1; else ".repeat(n));
    let (short, long) = (work(tricky(), &block(200)), work(tricky(), &block(800)));
    assert!(
        long < short * 8,
        "{short} units at 200 links, {long} at 800"
    );
    // Past the memo's generations (16 k entries each): 20,000 links at 20 times the work of
    // 1,000, give or take a quarter.
    let per_thousand = work(tricky(), &chain(1_000));
    accepts(tricky(), &chain(20_000), per_thousand * 25);
}

#[test]
fn nested_dangling_else_is_quadratic_at_worst() {
    // 300 nested `if` then 300 `else`: every `else` can close any open `if`, so the node below
    // each `else` has an edge per open `if`, each one a parse still possible, and each `else`
    // builds its successor's edges anew (1.8 M units; 20 M at 1,000 deep).
    let n = 300;
    let text = format!("{}x=1;{}", "if (x) ".repeat(n), " else x=1;".repeat(n));
    accepts(tricky(), &text, 4_000_000);
    // A sequence of dangling statements is linear (0.32 M units for 2,000).
    let seq = "if (x) if (x) x=1; else x=1;\n".repeat(2_000);
    accepts(tricky(), &seq, 1_000_000);
}

/// The work committing `text` at once takes: the least `max_work_per_commit` that commits it.
fn work(src: &str, text: &str) -> usize {
    let commits = |budget: usize| {
        ParserState::new(parser(src, budget))
            .commit_bytes(text.as_bytes())
            .is_ok()
    };
    munch_testkit::props::least_passing(commits)
}

#[test]
fn liveness_checks_are_charged_to_the_work_budget() {
    // After `a`×60 then `b`, the only head is inside the lexeme `bb`: whether `B` can follow
    // is decided after the last byte, by reducing the whole ambiguous stack under `B` (the
    // bytes only reduced under `a`). That check is charged to the commit's budget: at one unit
    // less than the least budget that commits the text, the commit fails there, after the last
    // byte, with the typed error, and the state is unchanged.
    let src = "start: s B\ns: s s | \"a\"\nB: \"bb\"\n";
    let text = format!("{}b", "a".repeat(60));
    let commit = |budget: usize| {
        let mut state = ParserState::new(parser(src, budget));
        let result = state.commit_bytes(text.as_bytes());
        (state, result)
    };
    let (mut lo, mut hi) = (1usize, 100_000_000usize);
    assert!(commit(hi).1.is_ok());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if commit(mid).1.is_ok() {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let (state, result) = commit(lo - 1);
    match result.unwrap_err().kind() {
        CommitErrorKind::Budget {
            name: "max_work_per_commit",
            limit,
            offset,
        } => {
            assert_eq!(*limit, lo - 1);
            assert_eq!(*offset, text.len(), "the liveness check is what runs out");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(state.commit_len(), 0);
    assert!(state.is_live() && !state.is_accepting());
}

#[test]
fn a_hostile_text_is_a_typed_error_and_leaves_the_state_unchanged() {
    let mut state = ParserState::new(parser(SS, 5_000_000));
    state.commit_bytes(b"aaa").unwrap();
    let err = state
        .commit_bytes("a".repeat(10_000).as_bytes())
        .unwrap_err();
    match err.kind() {
        CommitErrorKind::Budget {
            name,
            limit,
            offset,
        } => {
            assert_eq!(*name, "max_work_per_commit");
            assert_eq!(*limit, 5_000_000);
            assert!(*offset < 1_000, "{offset}");
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("max_work_per_commit"), "{err}");
    assert_eq!(state.commit_len(), 1);
    assert!(state.is_accepting());
    // The budget is per commit: the same text, token by token, goes on.
    for _ in 0..200 {
        state.commit_bytes(b"a").unwrap();
    }
    assert!(state.is_accepting());
}

fn tricky() -> &'static str {
    munch_grammars::builtin("tricky").expect("builtin").source
}

mod drawn {
    //! Ambiguous and ε-heavy grammars drawn at random, on long texts committed at once: every
    //! commit ends, succeeding, rejected or stopped at the work budget with its typed error, and
    //! a failed commit leaves the state as it was. (Of 48 cases, about 7 stop at the budget,
    //! 37 are rejected and 5 succeed.)

    use super::*;
    use proptest::prelude::*;

    /// Alternatives of `s`, ambiguous or nullable; each grammar takes `s s`, `"a"` and some of
    /// these.
    const ALTERNATIVES: &[&str] = &["s s s", "", "s \"+\" s", "\"(\" s \")\"", "s \"+\""];

    /// `s s` alone on 300 `a`s needs about 9 M units: long texts stop at the budget.
    const BUDGET: usize = 300_000;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn the_work_budget_holds(
            picks in proptest::sample::subsequence(ALTERNATIVES.to_vec(), 0..=ALTERNATIVES.len()),
            text in proptest::collection::vec(prop_oneof![
                40 => Just('a'), 1 => Just('+'), 1 => Just('('), 1 => Just(')')
            ], 20..400),
        ) {
            let more: String = picks.iter().map(|p| format!("{p} | ")).collect();
            let src = format!("start: s\ns: s s | {more}\"a\"\n");
            let text: String = text.into_iter().collect();
            let mut state = ParserState::new(parser(&src, BUDGET));
            state.commit_bytes(b"a").unwrap();
            let before = state.clone();
            if let Err(e) = state.commit_bytes(text.as_bytes()) {
                if let CommitErrorKind::Budget { name, limit, .. } = e.kind() {
                    prop_assert_eq!(*name, "max_work_per_commit");
                    prop_assert_eq!(*limit, BUDGET);
                }
                // A failed commit, budget or syntax, leaves the state as it was: the same
                // length, acceptance and next bytes.
                prop_assert_eq!(state.commit_len(), 1);
                prop_assert_eq!(state.is_accepting(), before.is_accepting());
                for b in *b"a+()" {
                    prop_assert_eq!(
                        state.clone().commit_bytes(&[b]).is_ok(),
                        before.clone().commit_bytes(&[b]).is_ok()
                    );
                }
            }
        }
    }
}
