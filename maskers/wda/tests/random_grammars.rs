//! Random small grammars (ε-alternatives, left and right recursion, unit cycles, ambiguity,
//! keyword/name ties, an ignored separator): the weighted-automaton masker equals the oracle at
//! every step of random walks. `PROPTEST_CASES` raises the number of grammars.

mod common;

use std::sync::Arc;

use common::*;
use munch_glr::lark::{load, LoadConfig};
use munch_glr::mask::Oracle;
use munch_glr::parser::{Parser, ParserConfig};
use proptest::prelude::*;

const TERMINALS: &[&str] = &[
    "\"a\"", "\"b\"", "\"(\"", "\")\"", "\",\"", "\"ab\"", "NAME",
];

/// A grammar: per rule, alternatives of symbols (`0..TERMINALS.len()`: a terminal, past it:
/// rule `i - TERMINALS.len()`).
fn grammar() -> impl Strategy<Value = Vec<Vec<Vec<usize>>>> {
    (1usize..5).prop_flat_map(|rules| {
        let symbol = 0..TERMINALS.len() + rules;
        let alternative = prop::collection::vec(symbol, 0..4);
        prop::collection::vec(prop::collection::vec(alternative, 1..4), rules)
    })
}

fn lark(rules: &[Vec<Vec<usize>>]) -> String {
    let name = |s: usize| {
        if s < TERMINALS.len() {
            TERMINALS[s].to_string()
        } else {
            format!("r{}", s - TERMINALS.len())
        }
    };
    let mut out = String::from("start: r0\n");
    for (i, alts) in rules.iter().enumerate() {
        let alts: Vec<String> = alts
            .iter()
            .map(|a| a.iter().map(|&s| name(s)).collect::<Vec<_>>().join(" "))
            .collect();
        out.push_str(&format!("r{i}: {}\n", alts.join(" | ")));
    }
    out.push_str("NAME: /[a-c]+/\n%ignore \" \"\n");
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_grammars_equal_the_oracle(rules in grammar(), seed in any::<u64>()) {
        let source = lark(&rules);
        // A few draws have a rule that derives no finite string: Lark refuses them.
        // Counted as rejected draws (proptest fails if they are most of them).
        let g = load(source.as_bytes(), &LoadConfig::default()).ok();
        prop_assume!(g.is_some());
        let p = Parser::new(&g.unwrap(), &ParserConfig::default()).ok();
        prop_assume!(p.is_some());
        let p = Arc::new(p.unwrap());
        let vocab = synthetic_vocab(&[b"(a", b"a,", b")(", b"abab", b"c)", b", a", b"a b", b"ab(", b"(("]);
        let w = wda(&p, &vocab);
        let oracle = Oracle::new(Arc::clone(&vocab));
        let l = lazy(&p, &vocab);
        for walk in 0..4 {
            random_walk(&w, &oracle, &p, &vocab, seed.wrapping_add(walk), 16);
            random_walk(&l, &oracle, &p, &vocab, seed.wrapping_add(walk), 16);
        }
        // Its masks were its own, not its fallback's.
        prop_assert!(!l.stats().gave_up);
    }
}
