//! The reducer's remembered reduction paths (`rnglr::Chains`) change no step: the same commits
//! with them and without them give the same heads (lexer configuration, and the LR states at
//! each distance below the head's node), acceptance and liveness, on random grammars and texts
//! and on right-recursive and dangling-else grammars where the paths are long. Under `cfg(test)`
//! paths are looked up and remembered from their first step (at one node in two), and the memo
//! is shared by every case of a thread, so a wrong or stale entry would show as a disagreement.

use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;

use super::rnglr::CHAINS_OFF;
use super::{Parser, ParserConfig, ParserState};
use crate::gss::GssNode;
use crate::lark::{load, LoadConfig};

/// Distances below a head's node compared.
const DEPTH: usize = 10;

/// A head as compared: lexer state, inhibitor, empty lexeme, and the set of LR states at each
/// distance below its node (nodes deduplicated by identity at each distance).
type HeadView = (u32, Option<u32>, bool, Vec<Vec<u32>>);

fn view(state: &ParserState) -> (BTreeSet<HeadView>, bool, bool) {
    let heads = state
        .heads()
        .map(|h| {
            (
                h.lex_state().as_u32(),
                h.inhibitor().map(|s| s.as_u32()),
                h.lexeme_is_empty(),
                layers(h.node()),
            )
        })
        .collect();
    (heads, state.is_accepting(), state.is_live())
}

pub(super) fn layers(node: &GssNode) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    let mut layer = vec![node.clone()];
    for _ in 0..DEPTH {
        let states: BTreeSet<u32> = layer.iter().map(|n| n.state().as_u32()).collect();
        out.push(states.into_iter().collect());
        let mut next: Vec<GssNode> = Vec::new();
        let mut seen = BTreeSet::new();
        for n in &layer {
            for p in n.predecessors() {
                if seen.insert(p.id()) {
                    next.push(p);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        layer = next;
    }
    out
}

fn with_chains<R>(on: bool, f: impl FnOnce() -> R) -> R {
    CHAINS_OFF.set(!on);
    let r = f();
    CHAINS_OFF.set(false);
    r
}

/// Commits `pieces` one by one with and without the memo and compares after each.
fn same_steps(parser: &Arc<Parser>, pieces: &[&[u8]]) -> Result<(), TestCaseError> {
    let mut on = ParserState::new(parser.clone());
    let mut off = ParserState::new(parser.clone());
    for (i, piece) in pieces.iter().enumerate() {
        let a = with_chains(true, || on.commit_bytes(piece));
        let b = with_chains(false, || off.commit_bytes(piece));
        prop_assert_eq!(a.is_ok(), b.is_ok(), "commit {} of {:?}", i, pieces);
        if a.is_err() {
            return Ok(());
        }
        prop_assert_eq!(view(&on), view(&off), "after commit {} of {:?}", i, pieces);
    }
    Ok(())
}

/// The parser of the Lark grammar `src`, if it loads and its parser builds (the crate's unit
/// tests share it).
pub(crate) fn parser(src: &str) -> Option<Arc<Parser>> {
    let grammar = load(src.as_bytes(), &LoadConfig::default()).ok()?;
    Parser::new(&grammar, &ParserConfig::default())
        .ok()
        .map(Arc::new)
}

/// A grammar over `"a"`, `"b"`, `"c"` and rules `n0`…`n3` from symbol codes (0–2 the
/// terminals, 3–6 the rules), each rule's alternatives nonempty but the last (an ε one when
/// empty).
pub(super) fn lark(rules: &[Vec<Vec<u8>>]) -> String {
    let mut src = String::from("start: n0\n");
    for (i, alts) in rules.iter().enumerate() {
        let alts: Vec<String> = alts
            .iter()
            .map(|alt| {
                alt.iter()
                    .map(|&s| match s {
                        0 => "\"a\"".to_string(),
                        1 => "\"b\"".to_string(),
                        2 => "\"c\"".to_string(),
                        n => format!("n{}", (n as usize - 3) % rules.len()),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let mut alts: Vec<String> = alts.into_iter().filter(|a| !a.is_empty()).collect();
        if alts.is_empty() {
            alts.push("\"a\"".to_string());
        }
        src.push_str(&format!("n{i}: {}\n", alts.join(" | ")));
    }
    src
}

/// Rules for [`lark`]: one to four rules of one to three alternatives of up to three symbols.
pub(super) fn random_rules() -> impl Strategy<Value = Vec<Vec<Vec<u8>>>> {
    prop::collection::vec(
        prop::collection::vec(prop::collection::vec(0u8..7, 0..4), 1..4),
        1..5,
    )
}

/// Up to `max` bytes over [`lark`]'s terminals, `a` most often.
pub(super) fn abc_text(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![4 => Just(b'a'), 2 => Just(b'b'), 1 => Just(b'c')],
        0..max,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_grammars_step_alike(
        rules in random_rules(),
        text in abc_text(40),
        whole in any::<bool>(),
    ) {
        let src = lark(&rules);
        let parser = parser(&src);
        prop_assume!(parser.is_some(), "the grammar does not build");
        let parser = parser.unwrap();
        if whole {
            same_steps(&parser, &[&text])?;
        } else {
            let pieces: Vec<&[u8]> = text.chunks(1).collect();
            same_steps(&parser, &pieces)?;
        }
    }
}

/// Right recursion whose reductions LALR(1) runs under lookaheads that only some contexts
/// allow, and lexemes that are prefixes of keywords (every prefix of `else` is also a name).
pub(super) const CHAINED: &str = r#"
start: stmt*
stmt: "if" "(" NAME ")" stmt ["else" stmt]
    | "while" NAME stmt
    | "{" stmt* "}"
    | NAME "=" NAME ";"
    | list ";"
list: NAME "," list | NAME
NAME: /[a-z]+/
%ignore " "
"#;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn chained_statements_step_alike(
        words in prop::collection::vec(prop_oneof![
            Just("if (x) "), Just("else "), Just("while x "), Just("x=y;"), Just("{"), Just("}"),
            Just("x,"), Just("y;"), Just("els"), Just("e"), Just(" "),
        ], 0..60),
        split in any::<bool>(),
    ) {
        let parser = parser(CHAINED).expect("builds");
        let text: String = words.concat();
        if split {
            let pieces: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
            same_steps(&parser, &pieces)?;
        } else {
            same_steps(&parser, &[text.as_bytes()])?;
        }
    }
}

#[test]
fn dangling_else_steps_alike() {
    let parser = parser(CHAINED).expect("builds");
    let chain = "if (x) x=y; else ".repeat(40) + "x=y;";
    let nested = "if (x) ".repeat(20) + "x=y;" + &" else x=y;".repeat(20);
    let mixed = "if (x) if (x) x=y; else while x if (x) x=y; else ".repeat(10) + "x=y;";
    for text in [chain, nested, mixed] {
        let words: Vec<&[u8]> = text.as_bytes().chunks(3).collect();
        same_steps(&parser, &words).unwrap();
        same_steps(&parser, &[text.as_bytes()]).unwrap();
    }
}
