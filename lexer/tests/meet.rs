//! Terminals that are intersections (see `munch_lexer::dfa::meet_name`): the lexemes every
//! part matches and no excluded part does, with longest match and ties as for any terminal.

use munch_lexer::dfa::{look_around_name, meet_name, LexerBuildErrorKind, LookAroundKind};

mod common;
use common::{build, build_err, lex, lit, re, walk};

/// The pattern of a terminal whose lexemes match `main` and every one of `all`, and none of
/// `none`.
fn meet(all: &[&str], none: &[&str], main: &str) -> String {
    let mut out = String::new();
    let mut n = 0;
    for (is_all, parts) in [(true, all), (false, none)] {
        for p in parts {
            n += 1;
            out.push_str(&format!("(?P<{}>{p})", meet_name(is_all, n)));
        }
    }
    out + main
}

#[test]
fn a_meet_matches_what_every_part_does_and_no_excluded_part() {
    // Words of at most five letters that do not start with "ab".
    let lexer = build(&[
        re("W", &meet(&["[a-z]{1,5}"], &["ab[a-z]*"], "[a-z]+")),
        lit("SP", " "),
    ]);
    let names = |text: &str| {
        lex(&lexer, text)
            .map(|ls| {
                ls.into_iter()
                    .map(|(t, n)| format!("{t}:{}", n.join("+")))
                    .collect()
            })
            .unwrap_or_else(|_| vec!["error".to_string()])
    };
    assert_eq!(names("xyz a"), ["xyz:W", " :SP", "a:W"]);
    // No lexeme starting with "ab" is accepted, so "b" does not extend "a" (longest match);
    // nor does a sixth letter extend five.
    assert_eq!(names("abc"), ["a:W", "bc:W"]);
    assert_eq!(names("xbcdef"), ["xbcde:W", "f:W"]);
    assert_eq!(names("abc "), ["a:W", "bc:W", " :SP"]);
    // Where no part can accept any more, the state is dead: the lexeme cannot grow.
    assert!(lexer.is_dead(walk(&lexer, b"ab")));
    assert!(lexer.is_dead(walk(&lexer, b"xbcdef")));
    assert!(!lexer.can_grow(walk(&lexer, b"xyzzy")));
    assert!(lexer.can_grow(walk(&lexer, b"a")));
}

#[test]
fn a_meet_that_nothing_matches_never_matches() {
    let lexer = build(&[re("N", &meet(&["[0-9]+"], &[], "[a-z]+")), lit("A", "a")]);
    assert_eq!(
        lex(&lexer, "a").unwrap(),
        [("a".to_string(), vec!["A".to_string()])]
    );
    assert!(lexer.reachable(lexer.start()).len() == 1);
}

#[test]
fn parts_with_anchors_or_the_empty_string_are_refused() {
    let look = format!("a(?P<{}>b)", look_around_name(LookAroundKind::NotAhead, 1));
    for part in ["^a", look.as_str()] {
        let err = build_err(&[re("T", &meet(&[part], &[], "a"))]);
        assert!(
            matches!(err.kind(), LexerBuildErrorKind::Unsupported { what, .. } if what.contains("look-around")),
            "{part}: {err}"
        );
    }
    let err = build_err(&[re("T", &meet(&["a*"], &[], "a+"))]);
    assert!(
        matches!(err.kind(), LexerBuildErrorKind::Intersection { source, .. }
            if matches!(source.kind(), LexerBuildErrorKind::EmptyMatch { .. })),
        "{err}"
    );
    assert_eq!(err.terminal().map(|t| t.as_usize()), Some(0));
}

#[test]
fn a_product_past_the_state_budget_names_its_terminal() {
    // Words of at most 3,000 letters not starting with `x`: the count alone is about 3,000
    // states, within the budget of 5,000; its product with the exclusion is about 6,000.
    let config = munch_lexer::dfa::LexerConfig {
        max_states: 5_000,
        ..Default::default()
    };
    let spec = re("T", &meet(&["[a-z]{1,3000}"], &["x[a-z]*"], "[a-z]+"));
    match munch_lexer::dfa::Lexer::new(&[spec], &config) {
        Err(err) => {
            assert!(
                matches!(err.kind(), LexerBuildErrorKind::Intersection { source, .. }
                    if matches!(source.kind(), LexerBuildErrorKind::TooManyStates { limit: 5_000 })),
                "{err}"
            );
            assert_eq!(err.terminal().map(|t| t.as_usize()), Some(0));
        }
        Ok(l) => panic!("built {} states", l.state_len()),
    }
}
