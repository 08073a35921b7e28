//! `Parser::decide_linear` and `Parser::shift_linear` (the LR automaton run on copies of the top
//! states) answer as the GLR reducer does wherever they answer: for every node within a few
//! edges of each head, and every terminal, whether it shifts, and the LR states at each distance
//! below the node the shift makes; on random grammars and texts, on the right-recursive
//! statements of the chain tests, a reduce/reduce conflict and a fork. A case left to the
//! reducer is not compared. `Parser::can_shift_once` (no memo) answers as `Parser::can_shift`
//! everywhere.

use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;

use super::chain_tests::{abc_text, lark, layers, parser, random_rules, CHAINED};
use super::rnglr::{self, Allowance, Stop};
use super::{Parser, ParserState, ShiftCache};
use crate::gss::GssNode;
use munch_lexer::TerminalId;

/// Distances below a head's node whose nodes are asked.
const DEPTH: usize = 6;

/// The reducer's answer: whether the stacks of `node` shift `k` after the reductions it allows.
fn by_reducer(parser: &Parser, node: &GssNode, k: u32) -> bool {
    let reduced = rnglr::reduce(
        &parser.tables,
        std::slice::from_ref(node),
        k,
        &mut Allowance::unlimited(),
        Stop::AtShift,
    )
    .expect("no budget");
    !reduced.shifts.is_empty()
}

/// Compares the two answers at every node near a head of `state`; returns how many it compared.
fn same_answers(parser: &Parser, state: &ParserState) -> Result<usize, TestCaseError> {
    let mut compared = 0;
    let mut seen = BTreeSet::new();
    let mut cache = ShiftCache::new();
    let mut layer: Vec<GssNode> = state.heads().map(|h| h.node().clone()).collect();
    for _ in 0..DEPTH {
        let mut next = Vec::new();
        for node in &layer {
            if !seen.insert(node.id()) {
                continue;
            }
            for k in 0..parser.cfg().terminal_len() as u32 {
                let t = TerminalId::from_usize(k as usize);
                prop_assert_eq!(
                    parser.can_shift_once(node, t),
                    parser.can_shift(node, t, &mut cache),
                    "can_shift at {:?}, k {}",
                    node,
                    k
                );
                if let Some(fast) = parser.decide_linear(node, k) {
                    prop_assert_eq!(
                        fast,
                        by_reducer(parser, node, k),
                        "state {:?}, k {}",
                        node,
                        k
                    );
                    compared += 1;
                }
                if let Some(fast) = parser.shift_linear(node, k) {
                    let slow = rnglr::shift(
                        &parser.tables,
                        std::slice::from_ref(node),
                        &[k],
                        &mut Allowance::unlimited(),
                    )
                    .expect("no budget");
                    prop_assert_eq!(view(&fast), view(&slow), "shift at {:?}, k {}", node, k);
                    compared += 1;
                }
            }
            next.extend(node.predecessors());
        }
        layer = next;
    }
    Ok(compared)
}

/// A frontier as compared: per node, the LR states at each distance below it, sorted.
fn view(frontier: &[GssNode]) -> Vec<Vec<Vec<u32>>> {
    let mut v: Vec<_> = frontier.iter().map(layers).collect();
    v.sort();
    v
}

fn commits_answer_alike(parser: &Arc<Parser>, pieces: &[&[u8]]) -> Result<usize, TestCaseError> {
    let mut state = ParserState::new(parser.clone());
    let mut compared = same_answers(parser, &state)?;
    for piece in pieces {
        if state.commit_bytes(piece).is_err() {
            break;
        }
        compared += same_answers(parser, &state)?;
    }
    Ok(compared)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_grammars_decide_alike(
        rules in random_rules(),
        text in abc_text(30),
    ) {
        let parser = parser(&lark(&rules));
        prop_assume!(parser.is_some(), "the grammar does not build");
        let pieces: Vec<&[u8]> = text.chunks(1).collect();
        commits_answer_alike(&parser.unwrap(), &pieces)?;
    }

    #[test]
    fn chained_statements_decide_alike(
        words in prop::collection::vec(prop_oneof![
            Just("if (x) "), Just("else "), Just("while x "), Just("x=y;"), Just("{"), Just("}"),
            Just("x,"), Just("y;"), Just(" "),
        ], 0..40),
    ) {
        let parser = parser(CHAINED).expect("builds");
        let pieces: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
        commits_answer_alike(&parser, &pieces)?;
    }
}

/// The comparison is not empty: on the statements grammar the run answers for most nodes.
#[test]
fn the_run_answers_on_statements() {
    let parser = parser(CHAINED).expect("builds");
    let text = "if (x) while x {x=y; x,y;} else x=y;";
    let pieces: Vec<&[u8]> = text.as_bytes().chunks(2).collect();
    let compared = commits_answer_alike(&parser, &pieces).expect("the same answers");
    assert!(compared > 1000, "only {compared} answers compared");
}

/// LALR(1)'s merged states reduce `E` and `F` on both `"c"` and `"d"` after `"a" "e"`: only
/// one of the two reductions shifts the lookahead.
const REDUCE_REDUCE: &str = r#"
start: "a" e "c" | "a" f "d" | "b" f "c" | "b" e "d"
e: "e"
f: "e"
"#;

/// After `"e"` the stacks split (`x` and `y` both reduce on `"f"`) and merge again at `"f"`: the
/// node after it has two predecessors, and `t`'s reduction shifts `"c"` on one path only.
const FORK: &str = r#"
start: a "c" | b "d"
a: x t
b: y t
x: "e"
y: "e"
t: "f"
"#;

/// After `"x"`, on `"y"`: two empty reductions push two states before the shift.
const EMPTIES: &str = r#"
start: "x" e f "y"
e: "a"?
f: "b"?
"#;

#[test]
fn conflicts_forks_and_empty_rules_decide_alike() {
    for (src, texts) in [
        (REDUCE_REDUCE, ["ae", "be"]),
        (FORK, ["ef", "e"]),
        (EMPTIES, ["x", "xa"]),
    ] {
        let parser = parser(src).expect("builds");
        for text in texts {
            let pieces: Vec<&[u8]> = text.as_bytes().chunks(1).collect();
            commits_answer_alike(&parser, &pieces).expect("the same answers");
        }
    }
}
