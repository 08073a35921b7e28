//! A lexer that goes back to lazy matches (`LexerConfig::backtrack_lazy`): the parser and the
//! trie masker follow it, with the oracle's masks; the spanner and the wda, whose token tables
//! do not model its guarded states yet, refuse it with an error that names it instead of
//! returning masks that might be wrong.
//!
//! Run in release: `cargo test --release -p munch-conformance --test backtrack_lazy`.

use std::sync::Arc;

use munch::{Compiled, Config, MaskerKind};
use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_vocab::Vocabulary;

/// `NL` loops around a lazy docstring, as SynCode's python.lark `_NL` does: after `"\n"`, a
/// `"` may begin a docstring inside `NL` or, when no `""` follows, a string after it.
const GRAMMAR: &str = r#"
start: (WORD | STR | NL)*
NL: ( /\n[ ]*/ | DOC )+
DOC: /"""(.|\n)*?"""/
STR: /"[a-z]*"/
WORD: /[a-z]+/
"#;

const TEXT: &str = "ab\n\"cd\"\n\"\"\"x\"\"\"\nef";

fn parser(backtrack: bool) -> Arc<Parser> {
    let mut config = ParserConfig::default();
    config.lexer.backtrack_lazy = backtrack;
    munch::Grammar::lark(GRAMMAR)
        .build_parser(&config)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn vocab() -> Arc<Vocabulary> {
    munch_testkit::vocab::printable_and(&["\n\"", "\"\"\"", "\n", "cd\"\n", "\"\n\"", "ab\n"])
}

fn compile(kind: MaskerKind, lazy: bool, parser: &Arc<Parser>) -> Result<Compiled, String> {
    let config = Config::new().masker(kind).lazy(lazy).fallback(None);
    Compiled::from_parser(Arc::clone(parser), vocab(), &config).map_err(|e| e.to_string())
}

#[test]
fn the_parser_goes_back_only_when_asked() {
    let accepts = |p: Arc<Parser>| ParserState::new(p).commit_bytes(TEXT.as_bytes()).is_ok();
    assert!(accepts(parser(true)));
    assert!(
        !accepts(parser(false)),
        "without going back `\"` continues NL"
    );
    assert!(parser(true).lexer().backtracks());
    assert!(!parser(false).lexer().backtracks());
}

#[test]
fn table_maskers_refuse_it_and_the_trie_follows_it() {
    let parser = parser(true);
    for (kind, lazy) in [
        (MaskerKind::Spanner, false),
        (MaskerKind::Wda, false),
        (MaskerKind::Wda, true),
    ] {
        let e = compile(kind, lazy, &parser)
            .err()
            .unwrap_or_else(|| panic!("{kind} builds"));
        assert!(e.contains("backtrack_lazy"), "{kind} (lazy {lazy}): {e}");
    }
    let vocab = vocab();
    let tokens = vocab.encode(TEXT).unwrap();
    let trie = compile(MaskerKind::Trie, false, &parser).unwrap();
    let oracle = compile(MaskerKind::Oracle, false, &parser).unwrap();
    let (mut t, mut o) = (trie.matcher(), oracle.matcher());
    for step in 0..=tokens.len() {
        let mut rows = [
            vec![0u32; vocab.len().div_ceil(32)],
            vec![0u32; vocab.len().div_ceil(32)],
        ];
        t.fill_next_token_bitmask(&mut rows[0]).unwrap();
        o.fill_next_token_bitmask(&mut rows[1]).unwrap();
        assert_eq!(rows[0], rows[1], "step {step}");
        if let Some(&tok) = tokens.get(step) {
            t.accept_token(tok.as_u32()).unwrap();
            o.accept_token(tok.as_u32()).unwrap();
        }
    }
}
