//! The GLR parser against the Earley reference recogniser on random small grammars (ε-rules,
//! ambiguity, left/right/hidden-left recursion and unit cycles arise freely) and random strings:
//! acceptance and liveness of every prefix must agree, at the terminal level and through the
//! lexer (single-byte literal terminals, so lexing is trivial).

use std::sync::Arc;

use munch_glr::cfg::{normalize, NormalizeConfig};
use munch_glr::parser::{Parser, ParserConfig, ParserState, TerminalParser};
use munch_lexer::TerminalId;
use munch_testkit::dsl;
use munch_testkit::earley::Earley;
use munch_testkit::grammar::dsl_parser;
use proptest::prelude::*;

const TERMINALS: [&str; 3] = ["a", "b", "c"];
/// The terminals as the DSL spells them.
const QUOTED: [&str; 3] = ["'a'", "'b'", "'c'"];

fn rules_strategy() -> impl Strategy<Value = Vec<Vec<Vec<u8>>>> {
    prop::collection::vec(
        prop::collection::vec(prop::collection::vec(0u8..8, 0..4), 1..4),
        1..5,
    )
}

fn check(rules: &[Vec<Vec<u8>>], input: &[u8]) -> Result<(), TestCaseError> {
    let text = dsl::from_rules(rules, &QUOTED);
    let g = dsl::parse(&text).unwrap();
    let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
    let earley = Earley::new(&cfg);
    let parser = Arc::new(Parser::new(&g, &ParserConfig::default()).unwrap());
    let id = |c: u8| {
        let name = TERMINALS[c as usize];
        TerminalId::from_usize(
            (0..cfg.terminal_len())
                .find(|&i| cfg.terminal_name(TerminalId::from_usize(i)) == name)
                .unwrap(),
        )
    };
    let terms: Vec<TerminalId> = input.iter().map(|&c| id(c)).collect();

    let mut tp = TerminalParser::new(parser.clone());
    let mut ps = ParserState::new(parser.clone());
    for i in 0..=terms.len() {
        let v = earley.recognize(&terms[..i]);
        prop_assert_eq!(
            tp.is_live(),
            v.viable_prefix,
            "terminal live, prefix {}\n{}",
            i,
            text
        );
        prop_assert_eq!(
            tp.is_accepting(),
            v.accepts,
            "terminal accept, prefix {}\n{}",
            i,
            text
        );
        prop_assert_eq!(
            ps.is_live(),
            v.viable_prefix,
            "bytes live, prefix {}\n{}",
            i,
            text
        );
        prop_assert_eq!(
            ps.is_accepting(),
            v.accepts,
            "bytes accept, prefix {}\n{}",
            i,
            text
        );
        if !v.viable_prefix || i == terms.len() {
            break;
        }
        let next = earley.recognize(&terms[..=i]).viable_prefix;
        prop_assert_eq!(tp.shift(terms[i]).is_ok(), next, "shift {}\n{}", i, text);
        let byte = TERMINALS[input[i] as usize].as_bytes();
        prop_assert_eq!(
            ps.commit_bytes(byte).is_ok(),
            next,
            "commit {}\n{}",
            i,
            text
        );
        if !next {
            break;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]
    #[test]
    fn glr_agrees_with_earley(rules in rules_strategy(), input in prop::collection::vec(0u8..3, 0..8)) {
        check(&rules, &input)?;
    }
}

// Sentences drawn from the grammar itself always parse (they are mostly accepted strings,
// which random strings rarely are).
proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn generated_sentences_parse(rules in rules_strategy(), seed in any::<u64>()) {
        use munch_testkit::generate::{GenerateConfig, Generator, SeededRng};
        let text = dsl::from_rules(&rules, &QUOTED);
        let g = dsl::parse(&text).unwrap();
        let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
        let Some(sentence) = Generator::new(&cfg).sentence(
            &mut SeededRng::new(seed),
            &GenerateConfig { max_depth: 8, max_len: 30 },
        ) else {
            return Ok(());
        };
        let parser = Arc::new(Parser::new(&g, &ParserConfig::default()).unwrap());
        let mut tp = TerminalParser::new(parser);
        for &t in &sentence {
            prop_assert!(tp.shift(t).is_ok(), "{:?}\n{}", sentence, text);
        }
        prop_assert!(tp.is_accepting(), "{:?}\n{}", sentence, text);
    }
}

#[test]
fn hand_picked_hard_cases() {
    // Hidden left recursion, unit cycles, nullable everything.
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "s -> a s 'b' | 'c'\na -> ε",
            &["c", "cb", "cbb"],
            &["", "b", "cc"],
        ),
        ("s -> s s | 'a' | ε", &["", "a", "aaa"], &["b"]),
        ("s -> t\nt -> s | 'a'", &["a"], &["", "aa"]),
        (
            "s -> a a a\na -> 'a' | ε",
            &["", "a", "aa", "aaa"],
            &["aaaa"],
        ),
        (
            "s -> b s 'a' | 'c'\nb -> ε | b",
            &["c", "ca", "caa"],
            &["a", "cc"],
        ),
    ];
    for &(src, yes, no) in cases {
        let parser = dsl_parser(src);
        for &w in yes {
            let mut ps = ParserState::new(parser.clone());
            ps.commit_bytes(w.as_bytes())
                .unwrap_or_else(|e| panic!("{src:?} {w:?}: {e}"));
            assert!(ps.is_accepting(), "{src:?} should accept {w:?}");
        }
        for &w in no {
            let mut ps = ParserState::new(parser.clone());
            let ok = ps.commit_bytes(w.as_bytes()).is_ok() && ps.is_accepting();
            assert!(!ok, "{src:?} should reject {w:?}");
        }
    }
}
