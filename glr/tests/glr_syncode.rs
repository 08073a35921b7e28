//! SynCode's grammars end to end: Lark → normalisation → LALR(1) → lexer-integrated GLR.
//! Random sentences of each grammar, rendered to text, get the same verdict from the parser as
//! from the whole-input reference (the lexer's `tokenize`, every choice among tied terminals,
//! and the Earley recogniser). Rendered text does not always lex back to the generated terminals
//! (a NEWLINE followed by spaces, a keyword-like name), so the verdict, not acceptance, is
//! compared; grammars where rendering is faithful must accept every sentence.

use std::sync::Arc;

use munch_glr::parser::{Parser, ParserBuildErrorKind, ParserConfig, ParserState};
use munch_testkit::earley::Earley;
use munch_testkit::generate::{render_text, GenerateConfig, Generator, SeededRng};
use munch_testkit::grammar::syncode_grammar;

fn check(name: &str, samples: u64, all_accepted: bool, min_compared: usize) {
    let g = syncode_grammar(name);
    let p = Arc::new(Parser::new(&g, &ParserConfig::default()).unwrap_or_else(|e| panic!("{e}")));
    let cfg = p.cfg().clone();
    let earley = Earley::new(&cfg);
    let gen = Generator::new(&cfg);
    let config = GenerateConfig {
        max_depth: 12,
        max_len: 120,
    };
    let mut compared = 0;
    for seed in 0..samples {
        let mut rng = SeededRng::new(seed);
        let sentence = gen.sentence(&mut rng, &config).unwrap();
        let Some(text) = render_text(&g, p.lexer(), &sentence, b" ", &mut rng, 30) else {
            continue;
        };
        let mut s = ParserState::new(p.clone());
        // Commit in token-sized chunks, as a decoder would.
        let got = text.chunks(3).all(|c| s.commit_bytes(c).is_ok()) && s.is_accepting();
        let shown = String::from_utf8_lossy(&text);
        if all_accepted {
            assert!(got, "{name} seed {seed}: {shown:?}");
        }
        if let Some(expected) = earley.accepts_text(&p, &text, 6) {
            assert_eq!(got, expected, "{name} seed {seed}: {shown:?}");
            compared += 1;
        }
    }
    eprintln!("{name}: {compared} of {samples} compared");
    assert!(compared >= min_compared, "{name}: only {compared} compared");
}

#[test]
fn json() {
    check("json", 60, true, 50);
}

#[test]
fn java() {
    check("java", 100, true, 90);
}

#[test]
fn go() {
    check("go", 100, false, 90);
}

#[test]
fn c_and_calc() {
    check("c", 100, false, 90);
    check("calc", 60, true, 50);
}

#[test]
fn sql() {
    // Few SQL sentences render back: its case-insensitive keywords and high-priority regexes
    // (AGGREGATION.8, SELECT_CONSTRAINT.9) swallow most sampled names.
    check("sql", 120, false, 5);
}

#[test]
fn python_is_refused_with_the_terminals_named() {
    let err = Parser::new(&syncode_grammar("python"), &ParserConfig::default()).unwrap_err();
    match err.kind() {
        ParserBuildErrorKind::MissingPatterns(m) => {
            let names: Vec<&str> = m.terminals.iter().map(|(_, n, _)| n.as_str()).collect();
            assert!(
                names.contains(&"_INDENT") && names.contains(&"_DEDENT"),
                "{names:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("postlex = python"));
}
