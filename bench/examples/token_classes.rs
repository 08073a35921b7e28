//! Token classes of SynCode's grammars under the five real tokenizers: prints, per (grammar,
//! tokenizer), the number of classes, their share of the text tokens, the lexer points, the
//! distinct spans, the build time and the tables' heap size.
//!
//! ```text
//! cargo run --release -p munch-bench --example token_classes [GRAMMAR...] [-- TOKENIZER...]
//! ```
//!
//! Defaults: json go java sql c × llama2 llama3 qwen3 gemma3 gptoss. The tokenizers and
//! grammars are fetched into the cache on first use.

// Links the benchmarks' library, which sets the allocator (mimalloc, as munch's binaries).
use munch_bench as _;
use std::time::Instant;

use munch_glr::parser::ParserConfig;
use munch_tokens::{SpansConfig, TokenSpans};
use munch_vocab::Vocabulary;

fn main() {
    munch::alloc::configure();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (grammars, tokenizers) = match args.iter().position(|a| a == "--") {
        Some(i) => (args[..i].to_vec(), args[i + 1..].to_vec()),
        None => (args.clone(), Vec::new()),
    };
    let or = |v: Vec<String>, d: &[&str]| {
        if v.is_empty() {
            d.iter().map(|s| s.to_string()).collect()
        } else {
            v
        }
    };
    let grammars = or(grammars, &["json", "go", "java", "sql", "c"]);
    let tokenizers = or(
        tokenizers,
        &["llama2", "llama3", "qwen3", "gemma3", "gptoss"],
    );

    let vocabs: Vec<Vocabulary> = tokenizers
        .iter()
        .map(|t| Vocabulary::load(t).unwrap_or_else(|e| panic!("{t}: {e}")))
        .collect();
    println!("| grammar | lexer states | tokenizer | text tokens | classes | % | points | spans | build | heap |");
    println!("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    for g in &grammars {
        let parser = munch::Grammar::syncode(g)
            .and_then(|g| g.build_parser(&ParserConfig::default()))
            .unwrap_or_else(|e| panic!("{g}: {e}"));
        let lexer = parser.lexer();
        for (t, vocab) in tokenizers.iter().zip(&vocabs) {
            let started = Instant::now();
            let spans = TokenSpans::build(lexer, vocab, &SpansConfig::default())
                .unwrap_or_else(|e| panic!("{g} × {t}: {e}"));
            let took = started.elapsed();
            let classes = spans.classes();
            println!(
                "| {g} | {} | {t} | {} | {} | {:.2} | {} | {} | {:.2} s | {:.1} MiB |",
                lexer.state_len(),
                classes.token_len(),
                classes.len(),
                100.0 * classes.len() as f64 / classes.token_len().max(1) as f64,
                spans.points().len(),
                spans.span_len(),
                took.as_secs_f64(),
                spans.heap_bytes() as f64 / (1 << 20) as f64,
            );
        }
    }
}
