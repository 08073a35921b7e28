//! Sentences generated from a grammar, rendered to text, parse through the lexer-integrated
//! parser.

use std::sync::Arc;

use munch_glr::cfg::{normalize, NormalizeConfig};
use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_testkit::dsl;
use munch_testkit::generate::{render_text, GenerateConfig, Generator, SeededRng};

const GRAMMAR: &str = "\
prog -> stmt*
stmt -> 'if' expr ':' stmt | expr ';' | NAME '*' NAME ';' | 'while' '(' expr ')' '{' stmt* '}'
expr -> expr '+' expr | expr '*' expr | expr '++' | '(' expr ')' | NAME | NUM | STRING
NAME: /[a-z_][a-z0-9_]*/
NUM: /[0-9]+(\\.[0-9]+)?/
STRING: /\"[^\"\\\\]*\"/
%ignore / +/
%ignore /\\/\\*(.|\\n)*?\\*\\//
";

#[test]
fn generated_text_parses() {
    let g = dsl::parse(GRAMMAR).unwrap();
    let cfg = normalize(&g, &NormalizeConfig::default()).unwrap();
    let p = Arc::new(Parser::new(&g, &ParserConfig::default()).unwrap());
    let gen = Generator::new(&cfg);
    let config = GenerateConfig {
        max_depth: 10,
        max_len: 60,
    };
    let mut parsed = 0;
    for seed in 0..300 {
        let mut rng = SeededRng::new(seed);
        let sentence = gen.sentence(&mut rng, &config).unwrap();
        let text = render_text(&g, p.lexer(), &sentence, b" ", &mut rng, 20)
            .unwrap_or_else(|| panic!("seed {seed}: could not render {sentence:?}"));
        let mut s = ParserState::new(p.clone());
        s.commit_bytes(&text)
            .unwrap_or_else(|e| panic!("seed {seed}: {:?}: {e}", String::from_utf8_lossy(&text)));
        assert!(
            s.is_accepting(),
            "seed {seed}: {:?}",
            String::from_utf8_lossy(&text)
        );
        parsed += 1;
    }
    assert_eq!(parsed, 300);
}
