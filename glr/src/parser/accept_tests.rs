//! `rnglr::accepts` (the configuration search behind `is_accepting` and `can_accept`, memoised
//! per configuration) agrees with the reducer run from scratch under `$`, on random commit and
//! rollback sequences over grammars with ambiguity, ε-rules, hidden recursion and cycles. The
//! memo is shared across the whole sequence (as the per-thread cache is), so stale or wrong
//! memo entries would show as disagreements.

use std::sync::Arc;

use proptest::prelude::*;

use super::rnglr::{self, AcceptMemo, Stop};
use super::{Parser, ParserConfig, ParserState};
use crate::gss::GssNode;
use crate::lark::{load, LoadConfig};

const AMBIGUOUS: &str = r#"
start: stmt*
stmt: "if" expr ":" stmt | expr ";" | NAME "*" NAME ";"
expr: expr "+" expr | expr "*" expr | expr "++" | "(" expr ")" | NAME | NUM
NAME: /[a-z][a-z0-9]*/
NUM: /[0-9]+/
%ignore / +/
"#;

const AMBIGUOUS_FRAGMENTS: &[&str] = &[
    "a",
    "b",
    " ",
    "+",
    "++",
    "(",
    ")",
    "if",
    "x1",
    "1",
    ";",
    ":",
    "*",
    "a+b;",
    " if x: y;",
];

/// ε-rules (the empty last alternatives), hidden left recursion (`a: a a | `), a unit cycle
/// (`x: y`, `y: x`) and right-nulled reductions (`start: x start "b"` with `x` and `start`
/// nullable).
const CYCLIC: &str = r#"
start: x start "b" | a "c" | "c" start |
a: a a | "a" |
x: y | "x"
y: x |
%ignore / +/
"#;

const CYCLIC_FRAGMENTS: &[&str] = &["a", "b", "c", "x", " ", "ab", "xc", "ca"];

fn parser(src: &str) -> Arc<Parser> {
    let grammar = load(src.as_bytes(), &LoadConfig::default()).expect("test grammar loads");
    Arc::new(Parser::new(&grammar, &ParserConfig::default()).expect("test grammar builds"))
}

/// The reducer's answer under `$`, from scratch.
fn reference(p: &Parser, node: &GssNode) -> bool {
    rnglr::reduce(
        p.tables(),
        std::slice::from_ref(node),
        p.tables().eof_index(),
        &mut rnglr::Allowance::unlimited(),
        Stop::AtAccept,
    )
    .expect("no budget")
    .accepted
}

/// Checks every head's node and the nodes a few edges below it (the memo's keys are nodes
/// below the top), with the shared memo and with a fresh one; and `is_accepting`.
fn check(p: &Parser, state: &ParserState, memo: &mut AcceptMemo) -> Result<(), TestCaseError> {
    let mut expected_accepting = false;
    for h in state.heads() {
        let mut layer = vec![h.node().clone()];
        for depth in 0..3 {
            let mut below = Vec::new();
            for n in &layer {
                let want = reference(p, n);
                let unlimited = &mut rnglr::Allowance::unlimited();
                let shared = rnglr::accepts(p.tables(), &p.closure_accepts, n, memo, unlimited);
                let fresh = rnglr::accepts(
                    p.tables(),
                    &p.closure_accepts,
                    n,
                    &mut AcceptMemo::default(),
                    unlimited,
                );
                let (shared, fresh) = (shared.expect("no budget"), fresh.expect("no budget"));
                prop_assert_eq!(shared, want, "shared memo, depth {}", depth);
                prop_assert_eq!(fresh, want, "fresh memo, depth {}", depth);
                below.extend(n.predecessors());
            }
            layer = below;
        }
        expected_accepting |= h.lexeme_is_empty() && reference(p, h.node());
    }
    prop_assert_eq!(state.is_accepting(), expected_accepting);
    Ok(())
}

/// Commits fragments (refused ones leave the state unchanged) and rolls back, checking each
/// state.
fn run(p: &Arc<Parser>, fragments: &[&str], ops: &[(bool, usize)]) -> Result<(), TestCaseError> {
    let mut memo = AcceptMemo::default();
    let mut state = ParserState::new(p.clone());
    check(p, &state, &mut memo)?;
    for &(rollback, i) in ops {
        if rollback && state.commit_len() > 0 {
            state
                .rollback(1 + i % state.commit_len())
                .expect("within history");
        } else {
            let _ = state.commit_bytes(fragments[i % fragments.len()].as_bytes());
        }
        check(p, &state, &mut memo)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn accepts_agrees_with_the_reducer_on_an_ambiguous_grammar(
        ops in proptest::collection::vec((proptest::bool::weighted(0.15), 0usize..64), 0..40)
    ) {
        run(&parser(AMBIGUOUS), AMBIGUOUS_FRAGMENTS, &ops)?;
    }

    #[test]
    fn accepts_agrees_with_the_reducer_on_a_cyclic_grammar(
        ops in proptest::collection::vec((proptest::bool::weighted(0.15), 0usize..64), 0..40)
    ) {
        run(&parser(CYCLIC), CYCLIC_FRAGMENTS, &ops)?;
    }
}

#[test]
fn the_cyclic_grammar_accepts_and_refuses_as_expected() {
    let p = parser(CYCLIC);
    let accepting = |text: &str| {
        let mut s = ParserState::new(p.clone());
        s.commit_bytes(text.as_bytes()).is_ok() && s.is_accepting()
    };
    // start: x start "b" with x, start nullable: "b", "xb", "bb"; a "c": "c", "aac";
    // "c" start: "cc", "ccb".
    for text in ["", "b", "xb", "x b", "bb", "c", "aac", "cc", "ccb"] {
        assert!(accepting(text), "{text:?} is a sentence");
    }
    for text in ["x", "a", "ca", "xa"] {
        assert!(!accepting(text), "{text:?} is not a sentence");
    }
}
