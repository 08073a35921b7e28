//! The trie masker equals the oracle at every step of teacher-forced texts: small synthetic
//! vocabularies with tokens that span terminals and split UTF-8 characters, and real tokenizers.

use std::sync::Arc;

use munch_glr::mask::{Masker, Oracle, TokenMask};
use munch_glr::parser::{Parser, ParserState};
use munch_masker_trie::TrieMasker;
use munch_testkit::grammar::{builtin, syncode, TRICKY_TEXTS};
use munch_testkit::vocab;
use munch_vocab::Vocabulary;

/// Every single byte (as a byte-fallback vocabulary has) and the maskers' corner words: tokens
/// that span terminals, overlap keywords, or split UTF-8 characters; the last id is EOS.
fn synthetic_vocab() -> Arc<Vocabulary> {
    vocab::bytes_and(&vocab::corners())
}

/// Teacher-forces `text` and compares the maskers at every step (`every`: 1 = each step):
/// the trie masker with its per-state tables built at first use, never built (every walk from
/// a head enters every node the parser keeps live), and as by default.
fn check(parser: &Arc<Parser>, vocab: &Arc<Vocabulary>, text: &str, every: usize) {
    for table_after in [0, u32::MAX, 64] {
        let trie = TrieMasker::without_classes(Arc::clone(parser), Arc::clone(vocab))
            .table_after(table_after);
        check_with(parser, &trie, vocab, text, every);
    }
}

fn check_with(
    parser: &Arc<Parser>,
    trie: &TrieMasker,
    vocab: &Arc<Vocabulary>,
    text: &str,
    every: usize,
) {
    let oracle = Oracle::new(Arc::clone(vocab));
    let (mut tc, mut oc) = (trie.create_cache(), oracle.create_cache());
    let mut trie_mask = TokenMask::new(vocab.len());
    let mut oracle_mask = TokenMask::new(vocab.len());
    let tokens = vocab.encode(text).unwrap();
    let mut state = ParserState::new(Arc::clone(parser));
    let mut prefix = Vec::new();
    for step in 0..=tokens.len() {
        trie.fill_mask(&mut tc, &state, &mut trie_mask);
        if step % every == 0 || step == tokens.len() {
            oracle.fill_mask(&mut oc, &state, &mut oracle_mask);
            if let Some(t) = trie_mask.first_difference(&oracle_mask) {
                panic!(
                    "step {step}: token {t} {:?} after {:?}: trie {} / oracle {}",
                    String::from_utf8_lossy(vocab.token_bytes(t).unwrap_or(b"<special>")),
                    String::from_utf8_lossy(&prefix),
                    trie_mask.contains(t),
                    oracle_mask.contains(t),
                );
            }
        }
        let Some(&t) = tokens.get(step) else { break };
        assert!(
            trie_mask.contains(t),
            "step {step}: forced token {t} {:?} masked out after {:?}",
            String::from_utf8_lossy(vocab.token_bytes(t).unwrap()),
            String::from_utf8_lossy(&prefix)
        );
        state.commit_token(vocab, t).unwrap();
        prefix.extend_from_slice(vocab.token_bytes(t).unwrap());
    }
    assert!(
        state.is_accepting(),
        "{text:?} does not end in an accepting state"
    );
    for &eos in vocab.eos() {
        assert!(
            trie_mask.contains(eos),
            "EOS not allowed at the end of {text:?}"
        );
    }
}

#[test]
fn json_on_a_synthetic_vocabulary() {
    let parser = builtin("json");
    let vocab = synthetic_vocab();
    for text in [
        r#"{"a": [1, 2.5e3, -0.5, true, false, null], "b": {"c": "d\"e\u00e9"}}"#,
        "[]",
        "  {\n\t\"é日\": \"αβ\" }  ",
        r#"[{"x":[[[]]]},"",-1E-2]"#,
    ] {
        check(&parser, &vocab, text, 1);
    }
}

#[test]
fn tricky_grammar_on_a_synthetic_vocabulary() {
    let parser = builtin("tricky");
    let vocab = synthetic_vocab();
    for text in TRICKY_TEXTS {
        check(&parser, &vocab, text, 1);
    }
}

#[test]
fn syncode_grammars_on_a_synthetic_vocabulary() {
    let vocab = synthetic_vocab();
    let cases = [
        ("json", r#"{"key": [1, 2, {"n": null}], "s": "x"}"#),
        ("sql", "SELECT name, count(*) FROM users WHERE age > 30 GROUP BY name ORDER BY name LIMIT 5"),
        ("go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tx := 1\n\tx++\n\tfmt.Println(x)\n}\n"),
        ("java", "public class A { int f(int x) { return x + 1; } }"),
        ("c", "int main() { int x = 1; if (x < 2) { x = x + 1; } return x; }"),
    ];
    for (name, text) in cases {
        check(&syncode(name), &vocab, text, 1);
    }
}

#[test]
fn real_tokenizers_agree_with_the_oracle() {
    let json = builtin("json");
    let go = syncode("go");
    for name in ["llama3", "gemma3"] {
        let vocab = Arc::new(Vocabulary::load(name).unwrap());
        check(
            &json,
            &vocab,
            "{\"name\": \"munch\", \"list\": [1, -2.5e3, true, null], \"unicode\": \"日本語 🦀\"}",
            3,
        );
        check(
            &go,
            &vocab,
            "package main\n\nfunc add(a int, b int) int {\n\treturn a + b\n}\n",
            4,
        );
    }
}
