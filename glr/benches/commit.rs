//! Commit latency along real files: each SynCode grammar's corpus is tokenized with Llama 3 and
//! committed token by token from a fresh state. Criterion reports the time per token
//! (throughput in elements = tokens); `munch trace` reports the per-token percentiles.
//!
//! Inputs come from the cache the conformance tests fill (Go and Java sources from Debian
//! packages under `corpus/`) and from `grammars/corpus` (JSON, SQL); a grammar whose files are
//! missing is skipped with a message. Run: `cargo bench -p munch-glr --bench commit`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use munch_glr::lark::{load, LoadConfig};
use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_testkit::files::files_under;
use munch_vocab::{cache::cache_dir, TokenId, Vocabulary};

/// At most this many files per grammar, each at most this many bytes.
const FILES: usize = 6;
const MAX_BYTES: u64 = 8_000;

/// The token sequences of the files the grammar accepts (the benchmark commits whole files).
fn accepted_sequences(
    parser: &Arc<Parser>,
    vocab: &Vocabulary,
    paths: &[PathBuf],
) -> Vec<Vec<TokenId>> {
    let mut out = Vec::new();
    for path in paths {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(tokens) = vocab.encode(&text) else {
            continue;
        };
        let mut state = ParserState::new(Arc::clone(parser));
        if tokens.iter().all(|&t| state.commit_token(vocab, t).is_ok()) && state.is_accepting() {
            out.push(tokens);
            if out.len() == FILES {
                break;
            }
        }
    }
    out
}

fn commit(c: &mut Criterion) {
    let vocab = match Vocabulary::load("llama3") {
        Ok(v) => v,
        Err(e) => {
            eprintln!("commit bench skipped: the llama3 tokenizer is not available: {e}");
            return;
        }
    };
    let grammars_corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../grammars/corpus");
    let cases = [
        ("json", grammars_corpus.join("json"), "json"),
        ("sql", grammars_corpus.join("sql"), "sql"),
        ("go", cache_dir().join("corpus/go"), "go"),
        ("java", cache_dir().join("corpus/java"), "java"),
    ];
    let mut group = c.benchmark_group("commit");
    for (name, dir, extension) in cases {
        let source = match munch_grammars::syncode::grammar(name) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("commit/{name} skipped: {e}");
                continue;
            }
        };
        let grammar = load(source.as_bytes(), &LoadConfig::default()).expect("SynCode loads");
        let parser = Arc::new(Parser::new(&grammar, &ParserConfig::default()).expect("builds"));
        let sequences =
            accepted_sequences(&parser, &vocab, &files_under(&dir, extension, MAX_BYTES));
        if sequences.is_empty() {
            eprintln!(
                "commit/{name} skipped: no accepted files in {}",
                dir.display()
            );
            continue;
        }
        let tokens: usize = sequences.iter().map(Vec::len).sum();
        group.throughput(Throughput::Elements(tokens as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                for seq in &sequences {
                    let mut state = ParserState::new(Arc::clone(&parser));
                    for &t in seq {
                        state.commit_token(&vocab, t).expect("accepted above");
                    }
                    std::hint::black_box(state.is_accepting());
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, commit);
criterion_main!(benches);
