//! Real grammars and tokenizers: the weighted-automaton masker equals the trie masker at every
//! step of teacher-forced real files (SynCode's grammars, llama3 and gemma3 vocabularies), and a
//! saved and reloaded masker equals the built one. Run in release (`cargo test --release`);
//! Go and Java take longer to build and are `#[ignore]`d (run them with `--ignored`).

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::*;
use munch_masker_trie::TrieMasker;
use munch_masker_wda::WdaMasker;
use munch_testkit::grammar::syncode;
use munch_vocab::Vocabulary;

fn repo_corpus(language: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../grammars/corpus")
        .join(language)
}

/// Compares wda and trie along every file; returns the steps compared.
fn against_trie(grammar: &str, tokenizer: &str, files: &[PathBuf]) -> usize {
    let p = syncode(grammar);
    let vocab = Arc::new(Vocabulary::load(tokenizer).unwrap());
    let w = wda(&p, &vocab);
    let trie = TrieMasker::without_classes(Arc::clone(&p), Arc::clone(&vocab));
    let mut steps = 0;
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        let label = format!("{grammar}/{tokenizer} {}", f.display());
        steps += teacher_forced_until_rejected(&w, &trie, &p, &vocab, &text, &label);
    }
    // The on-demand automaton equals the eager one along the same files.
    let l = lazy(&p, &vocab);
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        let label = format!("{grammar}/{tokenizer} lazy {}", f.display());
        teacher_forced_until_rejected(&l, &w, &p, &vocab, &text, &label);
    }
    // The same with every lexer point prepared before the first mask.
    let ahead = lazy_points(&p, &vocab, true);
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        let label = format!("{grammar}/{tokenizer} lazy, points ahead {}", f.display());
        teacher_forced_until_rejected(&ahead, &w, &p, &vocab, &text, &label);
    }
    // Its masks were its own, not its fallback's.
    assert!(
        !l.stats().gave_up && !ahead.stats().gave_up,
        "{grammar}/{tokenizer}: the lazy automaton gave up"
    );
    steps
}

#[test]
fn json_llama3() {
    let files = corpus(&repo_corpus("json"), "json", 20, 1 << 20);
    assert!(against_trie("json", "llama3", &files) > 1000);
}

#[test]
fn json_gemma3() {
    let files = corpus(&repo_corpus("json"), "json", 8, 1 << 20);
    assert!(against_trie("json", "gemma3", &files) > 300);
}

#[test]
fn sql_llama3_and_artifact_round_trip() {
    let files = corpus(&repo_corpus("sql"), "sql", 40, 1 << 20);
    assert!(against_trie("sql", "llama3", &files) > 500);
    // The saved artifact loads back to the same masks (the point tables, the weights and the
    // expansion tables of a real grammar).
    let p = syncode("sql");
    let vocab = Arc::new(Vocabulary::load("llama3").unwrap());
    let built = wda(&p, &vocab);
    let mut bytes = Vec::new();
    built.save(&mut bytes).unwrap();
    let loaded =
        WdaMasker::load(Arc::clone(&p), Arc::clone(&vocab), &mut bytes.as_slice()).unwrap();
    let mut steps = 0;
    for f in files.iter().take(10) {
        let text = std::fs::read_to_string(f).unwrap();
        steps += teacher_forced_until_rejected(&loaded, &built, &p, &vocab, &text, "sql reload");
    }
    assert!(steps > 100);
}

/// Go and Java files from the conformance corpus cache (`munch-conformance` fetches them).
fn cached(language: &str, extension: &str, n: usize) -> Vec<PathBuf> {
    let dir = munch_vocab::cache::cache_dir()
        .join("corpus")
        .join(language);
    let files = corpus(&dir, extension, n, 12 << 10);
    assert!(
        !files.is_empty(),
        "no {language} files under {}: run the conformance corpus fetch first",
        dir.display()
    );
    files
}

#[test]
#[ignore = "builds the Go automaton (about 25 s of CPU); run with --ignored --release"]
fn go_llama3() {
    let files = cached("go", "go", 24);
    assert!(against_trie("go", "llama3", &files) > 300);
}

#[test]
#[ignore = "builds the Java automaton (about 25 s of CPU); run with --ignored --release"]
fn java_llama3() {
    let files = cached("java", "java", 24);
    assert!(against_trie("java", "llama3", &files) > 300);
}
