//! Time to first mask for JSON Schemas: schema text → Lark (munch-schema) → parser → masker →
//! the first mask, with one tokenizer, each schema compiled from scratch `--runs` times (the
//! tokenizer is loaded once, as a server holds it). Prints one line per schema (medians) and
//! the p50/p99 over all runs.
//!
//! ```text
//! cargo run --release -p munch-bench --bin schema_ttfm -- bench/schemas/*.json \
//!     --tokenizer llama3 --masker trie --runs 11 [--background]
//! ```
//!
//! `--background`: `Config::background` (the first masks from the walk over every token while
//! the masker builds on a thread; each run waits for that build, untimed, before the next).
//! `--lazy`: `Config::lazy` (the wda built on demand). `again_us`: the next request on the
//! same compiled grammar, a new matcher and its first mask (after the background build).

use std::sync::Arc;
use std::time::Instant;

use munch::{Compiled, Config, Grammar, SchemaOptions, Vocabulary};
use munch_bench::schemas::{percentile, SchemaArgs};

fn main() {
    munch::alloc::configure();
    let SchemaArgs {
        files,
        tokenizer,
        masker: kind,
        runs,
        background,
        lazy,
    } = SchemaArgs::from_env();
    let masker = kind.name();
    let vocab: Arc<Vocabulary> = Arc::new(Vocabulary::load(&tokenizer).expect("tokenizer"));
    let config = Config::new()
        .masker(kind)
        .fallback(None)
        .background(background)
        .lazy(lazy);
    let options = SchemaOptions::default();
    println!(
        "{:<22} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>9}",
        "schema", "lark_us", "parser_ms", "masker_ms", "mask_us", "total_ms", "lexer", "again_us"
    );
    let mut all = Vec::new();
    let mut failed = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).expect("schema file");
        let name = std::path::Path::new(f)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut rows: Vec<[f64; 6]> = Vec::new();
        let mut lexer = 0;
        for _ in 0..runs {
            let t0 = Instant::now();
            let g = match Grammar::from_json_schema(text.as_str(), &options) {
                Ok(g) => g,
                Err(e) => {
                    println!("{name:<22} refused: {e}");
                    break;
                }
            };
            let t1 = Instant::now();
            let c = match Compiled::new(&g, Arc::clone(&vocab), &config) {
                Ok(c) => c,
                Err(e) => {
                    println!("{name:<22} failed: {e}");
                    break;
                }
            };
            let t2 = Instant::now();
            let mut m = c.matcher();
            let mask = m.next_token_mask();
            let t3 = Instant::now();
            std::hint::black_box(mask);
            // A background build ends before the next run starts (untimed), so that runs do
            // not share the cores with earlier builds.
            if let Err(e) = c.wait() {
                println!("{name:<22} background build failed: {e}");
            }
            // The next request on the same compiled grammar: a new matcher and its first mask.
            drop(m);
            let t4 = Instant::now();
            let mask = c.matcher().next_token_mask();
            let again = t4.elapsed();
            std::hint::black_box(mask);
            let s = c.stats();
            lexer = s.lexer_states;
            rows.push([
                (t1 - t0).as_secs_f64() * 1e6,
                s.parser_time.as_secs_f64() * 1e3,
                // What `Compiled::new` took beyond the parser (the walk's set-up alone, with
                // `--background`).
                (t2 - t1).saturating_sub(s.parser_time).as_secs_f64() * 1e3,
                (t3 - t2).as_secs_f64() * 1e6,
                (t3 - t0).as_secs_f64() * 1e3,
                again.as_secs_f64() * 1e6,
            ]);
        }
        if rows.is_empty() {
            failed += 1;
            continue;
        }
        let med = |i: usize| {
            let mut v: Vec<f64> = rows.iter().map(|r| r[i]).collect();
            v.sort_by(f64::total_cmp);
            percentile(&v, 5000)
        };
        println!(
            "{name:<22} {:>9.0} {:>9.2} {:>9.2} {:>9.0} {:>9.2} {:>7} {:>9.0}",
            med(0),
            med(1),
            med(2),
            med(3),
            med(4),
            lexer,
            med(5)
        );
        all.extend(rows.iter().map(|r| r[4]));
    }
    all.sort_by(f64::total_cmp);
    println!(
        "time to first mask over {} runs of {} schemas ({} failed), {masker}, {tokenizer}: p50 {:.2} ms, p99 {:.2} ms",
        all.len(),
        files.len() - failed,
        failed,
        percentile(&all, 5000),
        percentile(&all, 9900)
    );
}
