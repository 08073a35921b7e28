//! JSON Schema beside llguidance: for each schema, time to first mask (compile from scratch and
//! one mask; the tokenizer and llguidance's token trie are built once, as a server holds them)
//! for munch (`--masker`, default trie) and llguidance (crate 1.7.0, default JSON options), and
//! which schemas each compiles.
//!
//! ```text
//! cargo build --release -p munch-bench --features peers --bin schema_peers
//! target/release/schema_peers bench/schemas/*.json --tokenizer llama3 --runs 11 [--background]
//! ```

use std::sync::Arc;
use std::time::Instant;

use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, InferenceCapabilities, TokEnv, TokRxInfo, TokTrie};
use llguidance::{Matcher, ParserFactory};
use munch::{Compiled, Config, Grammar, SchemaOptions, TokenId, Vocabulary};
use munch_bench::schemas::{percentile, SchemaArgs};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    percentile(&v, 0.5)
}

fn main() {
    let SchemaArgs {
        files,
        tokenizer,
        masker: kind,
        runs,
        background,
    } = SchemaArgs::from_env();
    let masker = kind.name();
    let vocab = Arc::new(Vocabulary::load(&tokenizer).expect("tokenizer"));
    // llguidance marks special tokens with a leading 0xFF byte.
    let words: Vec<Vec<u8>> = (0..vocab.len() as u32)
        .map(|t| {
            let id = TokenId::from(t);
            match vocab.token_bytes(id) {
                Some(b) if !vocab.is_special(id) => b.to_vec(),
                _ => [&[0xFF][..], format!("<special_{t}>").as_bytes()].concat(),
            }
        })
        .collect();
    let eos = vocab.eos().first().map(|t| t.as_u32()).unwrap_or(0);
    let info = TokRxInfo::new(words.len() as u32, eos);
    let env: TokEnv = Arc::new(ApproximateTokEnv::new(TokTrie::from(&info, &words)));
    let mut factory =
        ParserFactory::new(&env, InferenceCapabilities::default(), &[]).expect("llguidance");
    factory.quiet();
    let config = Config::new()
        .masker(kind)
        .fallback(None)
        .background(background);
    println!(
        "{:<22} {:>12} {:>14}",
        "schema", "munch_ms", "llguidance_ms"
    );
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let (mut ours_ok, mut theirs_ok) = (0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).expect("schema file");
        let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let name = std::path::Path::new(f)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut a = Vec::new();
        for _ in 0..runs {
            let t0 = Instant::now();
            let Ok(g) = Grammar::from_json_schema(text.as_str(), &SchemaOptions::default()) else {
                break;
            };
            let Ok(c) = Compiled::new(&g, Arc::clone(&vocab), &config) else {
                break;
            };
            std::hint::black_box(c.matcher().next_token_mask());
            a.push(t0.elapsed().as_secs_f64() * 1e3);
            // A background build ends (untimed) before the next run.
            let _ = c.wait();
        }
        let mut b = Vec::new();
        for _ in 0..runs {
            let t0 = Instant::now();
            let Ok(parser) =
                factory.create_parser(TopLevelGrammar::from_json_schema(value.clone()))
            else {
                break;
            };
            let mut m = Matcher::new(Ok(parser));
            if m.compute_mask().is_err() {
                break;
            }
            b.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        let show = |v: &Vec<f64>| {
            if v.is_empty() {
                "failed".to_string()
            } else {
                format!("{:.2}", median(v.clone()))
            }
        };
        println!("{name:<22} {:>12} {:>14}", show(&a), show(&b));
        ours_ok += usize::from(!a.is_empty());
        theirs_ok += usize::from(!b.is_empty());
        ours.extend(a);
        theirs.extend(b);
    }
    ours.sort_by(f64::total_cmp);
    theirs.sort_by(f64::total_cmp);
    println!(
        "munch ({masker}): {ours_ok}/{} schemas, time to first mask p50 {:.2} ms, p99 {:.2} ms",
        files.len(),
        percentile(&ours, 0.5),
        percentile(&ours, 0.99)
    );
    println!(
        "llguidance 1.7.0: {theirs_ok}/{} schemas, time to first mask p50 {:.2} ms, p99 {:.2} ms",
        files.len(),
        percentile(&theirs, 0.5),
        percentile(&theirs, 0.99)
    );
}
