//! A lexer that goes back to lazy matches (`LexerConfig::backtrack_lazy`): the parser goes back
//! only when asked, and every masker (trie, spanner, wda, lazy wda) returns the oracle's mask
//! at every step along texts where the branch that handed a lazy lexeme over reads on in
//! guarded pending states.
//!
//! Run in release: `cargo test --release -p munch-conformance --test backtrack_lazy`.

use std::sync::Arc;

use munch::{Compiled, Config, MaskerKind};
use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_vocab::Vocabulary;

/// `NL` loops around a lazy docstring, as SynCode's python.lark `_NL` does: after `"\n"`, a
/// `"` may begin a docstring inside `NL` or, when no `""` follows, a string after it.
const DOCSTRING: &str = r#"
start: (WORD | STR | NL)*
NL: ( /\n[ ]*/ | DOC )+
DOC: /"""(.|\n)*?"""/
STR: /"[a-z]*"/
WORD: /[a-z]+/
"#;

/// After `"\n"` the guarded branch reads several lexemes (`#`, `{`, a word, `}`) while the
/// longer reading (a `#{…}#` comment inside `NL`) is undecided: `}#` ends the comment and
/// kills the guarded branch, anything else after `}` ends the longer reading.
const SEVERAL: &str = r##"
start: (WORD | HASH | LB | RB | NL)*
NL: ( /\n/ | COMMENT )+
COMMENT: /#\{(.|\n)*?\}#/
HASH: "#"
LB: "{"
RB: "}"
WORD: /[a-z]+/
%ignore " "
"##;

/// The guarded branch's own lexemes are lazy too, so guards nest: after `"\n"` a `<…>>` tag
/// may go on inside `NL` while the guarded branch reads `<` and a lazy `[…]` block, whose own
/// longer reading runs to the next `]`.
const NESTED: &str = r#"
start: (WORD | LT | GT | BLOCK | NL)*
NL: /\n/ ( /\n/ | TAG )*
TAG: /<(.|\n)*?>>/
BLOCK: /\[(.|\n)*?\]/
LT: "<"
GT: ">"
WORD: /[a-z]+/
"#;

/// The longer reading is another terminal, which the parser cannot take here: after `<a>`
/// (a lazy `C`), `D` may still match at a later `>>`, but `D` is allowed only after `!`. So a
/// token such as `<a>b ` is allowed only through its other reading, `C` and `WORD` read while
/// guarded and a space open: a masker that dropped that reading would refuse it.
const OTHER_TERMINAL: &str = r#"
start: C (WORD | GT)* | "!" D
C: /<.*?>/
D: /<.*>>/
WORD: /[a-z]+/
GT: ">"
%ignore " "
"#;

fn parser(grammar: &str, backtrack: bool) -> Arc<Parser> {
    let mut config = ParserConfig::default();
    config.lexer.backtrack_lazy = backtrack;
    munch_testkit::grammar::parser_with(grammar, &config)
}

/// Printable ASCII and tokens that cut across the guards' decisions.
fn vocab() -> Arc<Vocabulary> {
    munch_testkit::vocab::printable_and(&[
        "\n\"", "\"\"\"", "\n", "cd\"\n", "\"\n\"", "ab\n", "\n#", "#{", "{a", "}#", "}\n", "a}",
        "\n<", "<[", "]>", "]]", ">>", "x>", "\n\n", "\"\"", "\n\"\"", "<a>b ", "<a>", "b c", "c>",
        "!<", "a>b", "> y", "<a>b", "\n#{a", "\n<[x",
    ])
}

fn compile(kind: MaskerKind, lazy: bool, parser: &Arc<Parser>) -> Compiled {
    let config = Config::new().masker(kind).lazy(lazy).fallback(None);
    Compiled::from_parser(Arc::clone(parser), vocab(), &config)
        .unwrap_or_else(|e| panic!("{kind} (lazy {lazy}): {e}"))
}

/// Every masker's mask equals the oracle's at every step along `text` (as `vocab` encodes
/// it); the text is accepted at the end.
fn every_masker_equals_the_oracle(grammar: &str, text: &str) {
    let parser = parser(grammar, true);
    assert!(parser.lexer().backtracks());
    let vocab = vocab();
    let tokens = vocab.encode(text).unwrap();
    let oracle = compile(MaskerKind::Oracle, false, &parser);
    let maskers = [
        (MaskerKind::Trie, false),
        (MaskerKind::Spanner, false),
        (MaskerKind::Wda, false),
        (MaskerKind::Wda, true),
    ]
    .map(|(kind, lazy)| ((kind, lazy), compile(kind, lazy, &parser)));
    let mut o = oracle.matcher();
    let mut ms: Vec<_> = maskers.iter().map(|(_, c)| c.matcher()).collect();
    let words = vocab.len().div_ceil(32);
    for step in 0..=tokens.len() {
        let mut want = vec![0u32; words];
        o.fill_next_token_bitmask(&mut want).unwrap();
        for (((kind, lazy), _), m) in maskers.iter().zip(&mut ms) {
            let mut got = vec![0u32; words];
            m.fill_next_token_bitmask(&mut got).unwrap();
            if got != want {
                let differ: Vec<String> = (0..vocab.len())
                    .filter(|&t| (got[t / 32] ^ want[t / 32]) >> (t % 32) & 1 != 0)
                    .map(|t| {
                        let id = munch_vocab::TokenId::from_usize(t);
                        let oracle = want[t / 32] >> (t % 32) & 1 != 0;
                        format!("{:?} (oracle {oracle})", vocab.token_bytes(id))
                    })
                    .collect();
                let prefix: Vec<u8> = tokens[..step]
                    .iter()
                    .flat_map(|&t| vocab.token_bytes(t).unwrap_or_default().to_vec())
                    .collect();
                let prefix = String::from_utf8_lossy(&prefix);
                panic!("{kind} (lazy {lazy}) at step {step} after {prefix:?}: {differ:?}");
            }
        }
        if let Some(&tok) = tokens.get(step) {
            o.accept_token(tok.as_u32()).unwrap();
            for m in &mut ms {
                m.accept_token(tok.as_u32()).unwrap();
            }
        }
    }
    assert!(o.is_accepting(), "{text:?} is a sentence");
}

#[test]
fn the_parser_goes_back_only_when_asked() {
    let text = "ab\n\"cd\"\n\"\"\"x\"\"\"\nef";
    let accepts = |p: Arc<Parser>| ParserState::new(p).commit_bytes(text.as_bytes()).is_ok();
    assert!(accepts(parser(DOCSTRING, true)));
    assert!(
        !accepts(parser(DOCSTRING, false)),
        "without going back `\"` continues NL"
    );
    assert!(parser(DOCSTRING, true).lexer().backtracks());
    assert!(!parser(DOCSTRING, false).lexer().backtracks());
}

#[test]
fn a_lazy_docstring_inside_a_newline_loop() {
    for text in [
        "ab\n\"cd\"\n\"\"\"x\"\"\"\nef",
        "\n\"\"\"a\nb\"\"\"\n\n\"\"\nab\"x\"",
        "ab\n\"\"\n\"\"\"\"\"\"\"ab\"",
    ] {
        every_masker_equals_the_oracle(DOCSTRING, text);
    }
}

#[test]
fn several_lexemes_read_while_guarded() {
    for text in [
        "ab\n#{a}x\n#{ab}#cd",
        "\n#{a} b}\n#{\n}#{a}",
        "a\n#{#{a}}#b\n#}{",
    ] {
        every_masker_equals_the_oracle(SEVERAL, text);
    }
}

#[test]
fn nested_guards_decided_across_token_boundaries() {
    for text in [
        "ab\n<[x]>>a\n<[x]<>",
        "\n<<ab>>\n<[a]x>>[b]\n<x>",
        "a\n[x]\n<a>b<[y]>",
    ] {
        every_masker_equals_the_oracle(NESTED, text);
    }
}

#[test]
fn a_longer_reading_the_parser_cannot_take() {
    for text in ["<a>b c>", "<a>b >a", "!<a>b>>", "<x> y>z >"] {
        every_masker_equals_the_oracle(OTHER_TERMINAL, text);
    }
}
