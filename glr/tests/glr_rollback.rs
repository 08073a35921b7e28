//! Random commit / rollback / clone sequences (seeded, replayable: a failure prints its seed)
//! agree with re-parsing the committed chunks from scratch, and with committing their
//! concatenation at once.

use std::sync::Arc;

use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_testkit::generate::SeededRng;
use munch_testkit::grammar::dsl_parser;

const GRAMMAR: &str = "\
prog -> stmt*
stmt -> 'if' expr ':' stmt | expr ';' | NAME '*' NAME ';'
expr -> expr '+' expr | expr '*' expr | expr '++' | '(' expr ')' | NAME | NUM
NAME: /[a-z][a-z0-9]*/
NUM: /[0-9]+/
%ignore / +/
%ignore /\\/\\*(.|\\n)*?\\*\\//
";

#[rustfmt::skip]
const FRAGMENTS: &[&str] = &[
    "a", "b", " ", "+", "++", "(", ")", "if", "i", "f", "x1", "1", "2", ";", ":", "*", "/*", "*/",
    "/", "a+b;", " if x: y;", "a * b;",
];

/// What two states must agree on: verdicts and the heads' (LR state, lexer state, inhibitor,
/// empty lexeme), as a sorted list.
fn signature(s: &ParserState) -> (bool, bool, Vec<String>) {
    let mut heads: Vec<String> = s
        .heads()
        .map(|h| {
            format!(
                "{}/{:?}/{:?}/{}",
                h.node().state(),
                h.lex_state(),
                h.inhibitor(),
                h.lexeme_is_empty()
            )
        })
        .collect();
    heads.sort();
    (s.is_live(), s.is_accepting(), heads)
}

fn replay(p: &Arc<Parser>, chunks: &[&str]) -> ParserState {
    let mut s = ParserState::new(p.clone());
    for c in chunks {
        s.commit_bytes(c.as_bytes())
            .unwrap_or_else(|e| panic!("replaying {chunks:?}: {e}"));
    }
    s
}

fn run_seed(p: &Arc<Parser>, seed: u64) {
    let mut rng = SeededRng::new(seed);
    let mut state = ParserState::new(p.clone());
    let mut chunks: Vec<&str> = Vec::new();
    for step in 0..80 {
        let ctx = format!("seed {seed}, step {step}, chunks {chunks:?}");
        match rng.below(10) {
            0..=5 => {
                let frag = FRAGMENTS[rng.below(FRAGMENTS.len())];
                let before = signature(&state);
                match state.commit_bytes(frag.as_bytes()) {
                    Ok(()) => chunks.push(frag),
                    Err(_) => {
                        assert_eq!(
                            signature(&state),
                            before,
                            "{ctx}: failed commit changed state"
                        );
                        assert_eq!(state.commit_len(), chunks.len(), "{ctx}");
                    }
                }
            }
            6..=7 => {
                let n = rng.below(chunks.len() + 2);
                match state.rollback(n) {
                    Ok(()) => {
                        assert!(n <= chunks.len(), "{ctx}");
                        chunks.truncate(chunks.len() - n);
                    }
                    Err(e) => {
                        assert!(n > chunks.len(), "{ctx}");
                        assert_eq!(e.available, chunks.len());
                    }
                }
            }
            _ => {
                // A clone evolves on its own; the original does not see it.
                let before = signature(&state);
                let mut other = state.clone();
                for _ in 0..3 {
                    let _ = other.commit_bytes(FRAGMENTS[rng.below(FRAGMENTS.len())].as_bytes());
                }
                let _ = other.rollback(1);
                assert_eq!(
                    signature(&state),
                    before,
                    "{ctx}: clone leaked into original"
                );
            }
        }
        let fresh = replay(p, &chunks);
        assert_eq!(signature(&state), signature(&fresh), "{ctx}: vs replay");
        assert_eq!(state.commit_len(), chunks.len(), "{ctx}");
        let mut whole = ParserState::new(p.clone());
        whole
            .commit_bytes(chunks.concat().as_bytes())
            .unwrap_or_else(|e| panic!("{ctx}: at once: {e}"));
        assert_eq!(signature(&state), signature(&whole), "{ctx}: vs at once");
    }
}

#[test]
fn random_commit_rollback_clone_sequences() {
    let p = dsl_parser(GRAMMAR);
    for seed in 0..60 {
        run_seed(&p, seed);
    }
}

#[test]
fn states_are_shared_across_threads() {
    let p = dsl_parser(GRAMMAR);
    let mut base = ParserState::new(p.clone());
    base.commit_bytes(b"if a: b").unwrap();
    let results: Vec<(bool, bool)> = std::thread::scope(|scope| {
        let handles: Vec<_> = [" + c;", ";", " * c;"]
            .into_iter()
            .map(|tail| {
                let mut s = base.clone();
                scope.spawn(move || {
                    s.commit_bytes(tail.as_bytes()).unwrap();
                    (s.is_live(), s.is_accepting())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(results, vec![(true, true); 3]);
    assert!(!base.is_accepting());
}

/// The test grammar's parser keeping `max_rollback` commits for rollback.
fn parser_keeping(max_rollback: usize) -> Arc<Parser> {
    let grammar = munch_testkit::dsl::parse(GRAMMAR).unwrap();
    let config = ParserConfig {
        max_rollback,
        ..ParserConfig::default()
    };
    Arc::new(Parser::new(&grammar, &config).unwrap())
}

#[test]
fn long_histories_drop_without_overflow() {
    let mut s = ParserState::new(parser_keeping(usize::MAX));
    for _ in 0..50_000 {
        s.commit_bytes(b"a;").unwrap();
    }
    assert!(s.is_accepting());
    s.rollback(49_999).unwrap();
    assert_eq!(s.commit_len(), 1);
    drop(s);
}

#[test]
fn rollback_history_is_bounded_by_max_rollback() {
    let limit = 8;
    let p = parser_keeping(limit);
    let mut s = ParserState::new(p.clone());
    // Every state along the way, to compare rollbacks with.
    let mut seen = vec![signature(&s)];
    let chunks = [
        "a", ";", " ", "b", "+", "(", "c", ")", ";", "if", " ", "x", ":",
    ];
    for i in 0..1_000 {
        s.commit_bytes(chunks[i % chunks.len()].as_bytes()).unwrap();
        seen.push(signature(&s));
        // The snapshots kept: at least the limit (once there are that many commits), at most
        // twice it, whatever the text's length.
        assert!(s.rollback_len() <= 2 * limit, "{}", s.rollback_len());
        assert!(s.rollback_len() >= limit.min(s.commit_len()));
        assert_eq!(s.commit_len(), i + 1);
    }
    // Within the limit, rollback is exact.
    let mut back = s.clone();
    back.rollback(limit).unwrap();
    assert_eq!(back.commit_len(), 1_000 - limit);
    assert_eq!(signature(&back), seen[1_000 - limit]);
    assert_eq!(signature(&replay(&p, &[])), seen[0]);
    // Past what is kept, a typed error naming the budget; the state is unchanged.
    let err = s.rollback(s.rollback_len() + 1).unwrap_err();
    assert_eq!(err.limit, Some(limit));
    assert_eq!(err.available, s.rollback_len());
    assert!(err.to_string().contains("max_rollback"), "{err}");
    assert_eq!(s.commit_len(), 1_000);
    // Past the commits made, the error says so without naming the budget.
    let err = s.rollback(1_001).unwrap_err();
    assert_eq!(err.limit, None);
    // After a rollback, commits go on and the history stays bounded.
    s.rollback(limit).unwrap();
    for i in 0..100 {
        s.commit_bytes(chunks[i % chunks.len()].as_bytes()).unwrap();
        assert!(s.rollback_len() <= 2 * limit);
    }
    // A budget of 0 keeps no history.
    let mut none = ParserState::new(parser_keeping(0));
    none.commit_bytes(b"a;").unwrap();
    assert_eq!(none.rollback_len(), 0);
    assert_eq!(none.rollback(1).unwrap_err().limit, Some(0));
}

#[test]
fn a_state_without_history_commits_as_the_state_does() {
    let p = parser_keeping(64);
    let mut s = ParserState::new(p.clone());
    for _ in 0..100 {
        s.commit_bytes(b"a; ").unwrap();
    }
    let mut bare = s.without_history();
    assert_eq!(bare.rollback_len(), 0);
    assert_eq!(signature(&bare), signature(&s));
    for chunk in ["b", "+", "c", ";", "x", ")"] {
        let (a, b) = (
            s.commit_bytes(chunk.as_bytes()),
            bare.commit_bytes(chunk.as_bytes()),
        );
        assert_eq!(a.is_ok(), b.is_ok(), "{chunk}");
        assert_eq!(signature(&bare), signature(&s), "{chunk}");
    }
    // Its own commits are kept; the original's history is untouched.
    assert_eq!(bare.rollback_len(), 5);
    assert!(s.rollback_len() >= 64);
    s.rollback(64).unwrap();
}
