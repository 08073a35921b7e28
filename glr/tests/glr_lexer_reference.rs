//! Acceptance through the streaming lexer (inhibited terminals, ties, ignored terminals)
//! against a whole-input reference: the lexer's own `tokenize` (longest match), every choice
//! among tied terminals, and the Earley recogniser on the resulting terminal strings.

use std::sync::Arc;

use munch_glr::cfg::{normalize, NormalizeConfig};
use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_testkit::dsl;
use munch_testkit::earley::Earley;
use proptest::prelude::*;

/// Terminals with prefixes of each other (`a`/`ab`), ties (`b` is both B and C) and a longer
/// regex over the others' bytes.
const TERMINALS: &str = "A: 'a'\nAB: 'ab'\nB: /b+/\nC: /[bc]c?/\nE: /a[ab]*c/\n%ignore / +/\n";
const NAMES: [&str; 5] = ["A", "AB", "B", "C", "E"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]
    #[test]
    fn streaming_lexer_agrees_with_whole_input_lexing(
        rules in prop::collection::vec(
            prop::collection::vec(prop::collection::vec(0u8..9, 0..4), 1..4),
            1..4,
        ),
        text in prop::collection::vec(prop::sample::select(b"abc ".to_vec()), 0..9),
    ) {
        let src = dsl::from_rules(&rules, &NAMES) + TERMINALS;
        let g = dsl::parse(&src).unwrap();
        let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
        let earley = Earley::new(&cfg);
        let p = Arc::new(Parser::new(&g, &ParserConfig::default()).unwrap());
        let expected = earley.accepts_text(&p, &text, usize::MAX).expect("no limit");
        let mut s = ParserState::new(p.clone());
        let got = s.commit_bytes(&text).is_ok() && s.is_accepting();
        prop_assert_eq!(got, expected, "{:?}\n{}", String::from_utf8_lossy(&text), src);
        // Byte by byte gives the same verdict.
        let mut s = ParserState::new(p);
        let mut ok = true;
        for b in &text {
            ok &= s.commit_bytes(&[*b]).is_ok();
            if !ok {
                break;
            }
        }
        prop_assert_eq!(ok && s.is_accepting(), expected);
    }
}
