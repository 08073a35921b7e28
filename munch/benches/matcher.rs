//! What the front door costs over the raw masker, and what a batch gains from threads.
//!
//! `cargo bench -p munch --bench matcher` (fetches the Llama 3 tokenizer once with npm).
//!
//! - `step/raw/M` fills masks of masker `M` with `Masker::fill_into` on the parser states along
//!   a JSON document, one after another, each state with a cache of its own; `step/matcher/M`
//!   does the same through `Matcher::fill_next_token_bitmask` on matchers standing at those
//!   states (each owns its cache; the row written into caller memory, padding zeroed). The
//!   difference divided by the document's steps is the matcher's cost per step.
//! - `batch64/threads/N` fills 64 rows of one bitmask (64 matchers at different places of the
//!   document) with `batch::Pool::new(N)`.

use std::sync::Arc;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use munch::glr::mask::MaskMut;
use munch::{batch, Compiled, Config, Grammar, MaskerKind, Matcher, Vocabulary};

const DOCUMENT: &str = r#"{"name": "munch", "version": [0, 1, 0], "maskers": ["trie", "spanner", "wda"],
 "targets": {"mask_p50_us": 2.0, "commit_p99_us": 20, "exp": -1.5e-3},
 "escapes": "tab\there \"quoted\" \\ \u00e9", "unicode": "λ → ✓ 日本語 🦀",
 "nested": [[], {}, [{"a": [null]}]], "ok": true, "no": false, "none": null}"#;

/// A matcher standing at every step of the document (before each token, and at the end).
fn matchers_along(compiled: &Compiled, tokens: &[u32]) -> Vec<Matcher> {
    let mut m = compiled.matcher();
    let mut out = vec![m.fork()];
    for &t in tokens {
        m.accept_token(t).expect("the document is JSON");
        out.push(m.fork());
    }
    out
}

fn bench(c: &mut Criterion) {
    let vocab = Arc::new(Vocabulary::load("llama3").expect("the Llama 3 tokenizer"));
    let tokens: Vec<u32> = vocab
        .encode(DOCUMENT)
        .expect("the document encodes")
        .iter()
        .map(|t| t.as_u32())
        .collect();
    eprintln!("the document has {} steps per pass", tokens.len() + 1);
    let grammar = Grammar::builtin("json").unwrap();
    let first = Compiled::new(&grammar, Arc::clone(&vocab), &Config::new().fallback(None))
        .expect("the JSON grammar compiles");
    let words = first.bitmask_words();
    // A model's logits are often padded past the tokenizer's vocabulary.
    let mut row = vec![0u32; words + 8];

    let mut group = c.benchmark_group("step");
    for &kind in MaskerKind::ALL.iter().filter(|&&k| k != MaskerKind::Oracle) {
        let compiled = first
            .with_masker(&Config::new().masker(kind).fallback(None))
            .expect("every masker builds for JSON");
        let mut matchers = matchers_along(&compiled, &tokens);
        let states: Vec<_> = matchers.iter().map(|m| m.state().clone()).collect();
        let masker = compiled.masker();
        // A cache per state, as each matcher has its own: the two loops touch the same memory.
        let mut caches: Vec<_> = states.iter().map(|_| masker.create_cache()).collect();
        group.bench_function(format!("raw/{kind}"), |b| {
            b.iter(|| {
                for (state, cache) in states.iter().zip(&mut caches) {
                    let mask = MaskMut::new(&mut row[..words], vocab.len()).unwrap();
                    masker.fill_into(cache, state, mask);
                    black_box(&row);
                }
            })
        });
        group.bench_function(format!("matcher/{kind}"), |b| {
            b.iter(|| {
                for m in &mut matchers {
                    m.fill_next_token_bitmask(&mut row).unwrap();
                    black_box(&row);
                }
            })
        });
    }
    group.finish();

    // 64 sequences at different places of the document, as in a served batch.
    let along = matchers_along(&first, &tokens);
    let mut batch64: Vec<Matcher> = (0..64)
        .map(|i| along[(i * 7) % along.len()].fork())
        .collect();
    let mut bitmask = vec![0u32; 64 * words];
    let mut group = c.benchmark_group("batch64");
    for threads in [1, 2] {
        let pool = batch::Pool::new(threads).unwrap();
        group.bench_function(format!("threads/{threads}"), |b| {
            b.iter(|| {
                pool.fill_next_token_bitmask(&mut batch64, &mut bitmask, words, None)
                    .unwrap();
                black_box(&bitmask);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
