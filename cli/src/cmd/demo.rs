//! `munch demo`: the main job, on munch's JSON grammar and the Llama 3 tokenizer (fetched on
//! first use).
//!
//! 1. Loads the grammar and the tokenizer, compiles the grammar with every masker compiled in
//!    (and the oracle with `--oracle`), all sharing one parser.
//! 2. Prints a few constrained samples (as `munch generate` draws them through a matcher:
//!    uniform over the allowed tokens, seeded), each checked by parsing it again.
//! 3. Teacher-forces a fixed JSON document through every masker as `munch trace` does, and
//!    prints a table of mask latency per masker and of commit latency.
//!
//! Exit code 1 if the masks disagree, the document is rejected or a sample is wrong.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::SeedableRng;

use munch::stats::Summary;
use munch::teacher::Outcome;
use munch::{Compiled, Config, MaskerKind, Vocabulary};

use super::generate::{Ending, Sampler, EOS_PROBABILITY};
use super::trace::Tracer;
use super::CliError;

/// Arguments of `munch demo`.
#[derive(clap::Args)]
pub struct Args {
    /// The grammar (a file, `builtin:NAME` or `syncode:NAME`).
    #[arg(long, default_value = "builtin:json")]
    grammar: String,
    #[command(flatten)]
    grammar_opts: super::GrammarOpts,
    /// The tokenizer (a path or llama2, llama3, qwen3, gemma3, gptoss).
    #[arg(long, default_value = "llama3")]
    tokenizer: String,
    /// Also measure the oracle (one commit per vocabulary token per step: seconds per document).
    #[arg(long)]
    oracle: bool,
    /// Seed of the samples.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Number of samples.
    #[arg(long, default_value_t = 4)]
    samples: usize,
    /// Tokens per sample at most.
    #[arg(long, default_value_t = 48)]
    max_tokens: usize,
}

/// The teacher-forced document: nesting, every kind of value, escapes and non-ASCII text.
const DOCUMENT: &str = r#"{"name": "munch", "version": [0, 1, 0], "maskers": ["trie", "spanner", "wda"],
 "targets": {"mask_p50_us": 2.0, "commit_p99_us": 20, "exp": -1.5e-3},
 "escapes": "tab\there \"quoted\" \\ \u00e9", "unicode": "λ → ✓ 日本語 🦀",
 "nested": [[], {}, [{"a": [null]}]], "ok": true, "no": false, "none": null}"#;

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let run_started = Instant::now();
    let started = Instant::now();
    let parser = args
        .grammar_opts
        .grammar(&args.grammar)?
        .build_parser(&args.grammar_opts.budgets.config())?;
    let built = started.elapsed();
    println!(
        "grammar {}: {} terminals, {} lexer states, {} LR states, {} conflicts (built in {:.1} ms)",
        args.grammar,
        parser.terminal_len(),
        parser.lexer().state_len(),
        parser.lr_state_len(),
        parser.conflict_len(),
        built.as_secs_f64() * 1e3
    );
    let started = Instant::now();
    let vocab = Arc::new(Vocabulary::load(&args.tokenizer)?);
    println!(
        "tokenizer {}: {} tokens, EOS {:?} (loaded in {:.1} ms)",
        vocab.name(),
        vocab.len(),
        vocab.eos().iter().map(|t| t.as_u32()).collect::<Vec<_>>(),
        started.elapsed().as_secs_f64() * 1e3
    );
    let mut kinds: Vec<MaskerKind> = MaskerKind::ALL
        .iter()
        .copied()
        .filter(|&k| k != MaskerKind::Oracle)
        .collect();
    if args.oracle {
        kinds.push(MaskerKind::Oracle);
    }
    if kinds.is_empty() {
        return Err("no masker is compiled in: build munch-cli with `--features trie`".into());
    }
    // The masker asked for or an error: the table compares the maskers named in it.
    let config = |kind| Config::new().masker(kind).fallback(None);
    let mut compiled: Vec<Compiled> = Vec::with_capacity(kinds.len());
    for &kind in &kinds {
        let c = match compiled.first() {
            None => Compiled::from_parser(Arc::clone(&parser), Arc::clone(&vocab), &config(kind))?,
            Some(first) => first.with_masker(&config(kind))?,
        };
        println!(
            "masker {kind}: built in {:.3} ms",
            c.stats().masker_time.as_secs_f64() * 1e3
        );
        compiled.push(c);
    }
    let mut bugs = 0;

    println!(
        "\n{} samples with the {} masker (seed {}; uniform over the allowed tokens, EOS with \
         probability {EOS_PROBABILITY} where the text may end, at most {} tokens):",
        args.samples, kinds[0], args.seed, args.max_tokens
    );
    let mut sampler = Sampler::new(&compiled[0]);
    let mut rng = StdRng::seed_from_u64(args.seed);
    for i in 1..=args.samples {
        let sample = sampler.sample(&mut rng, args.max_tokens);
        let shown = serde_json::Value::from(String::from_utf8_lossy(&sample.text).as_ref());
        let verdict = match &sample.end {
            Ending::Finished => match munch::parse::parse_text(&parser, &sample.text) {
                Ok(()) => "finished, parses".to_string(),
                Err(r) => {
                    bugs += 1;
                    format!("BUG: finished but does not parse: {}", r.message)
                }
            },
            Ending::Truncated => "truncated: a prefix".to_string(),
            Ending::DeadEnd => "dead end: no token allowed".to_string(),
            Ending::Refused(why) => {
                bugs += 1;
                format!("BUG: {why}")
            }
        };
        println!("  {i}. {shown}  ({verdict})");
    }

    let tokens: Vec<u32> = vocab.encode(DOCUMENT)?.iter().map(|t| t.as_u32()).collect();
    let mut tracer = Tracer::new(&compiled, false)?;
    let outcome = tracer.trace("document", &tokens, &[]);
    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    println!(
        "\nteacher-forced a {}-byte JSON document ({} tokens, {} mask steps): {}; masks {}",
        DOCUMENT.len(),
        tokens.len(),
        tracer.record.steps,
        match &outcome {
            Outcome::Accepted => "accepted".to_string(),
            Outcome::Rejected { reason, .. } => format!("REJECTED ({reason})"),
        },
        if names.len() < 2 {
            "not compared (one masker; `--oracle` adds the oracle)".to_string()
        } else if tracer.record.mismatches == 0 {
            format!("identical at every step ({})", names.join(", "))
        } else {
            format!("DIFFER at {} steps", tracer.record.mismatches)
        }
    );
    if outcome != Outcome::Accepted || tracer.record.mismatches > 0 {
        bugs += 1;
    }
    println!(
        "\n{:<16}{:>10}{:>10}{:>10}{:>10}{:>10}",
        "latency (µs)", "mean", "p50", "p99", "p99.9", "max"
    );
    let mut rows: Vec<(String, Option<Summary>)> = tracer
        .summaries()
        .map(|(name, s)| (format!("mask {name}"), s))
        .collect();
    rows.push((
        "commit".to_string(),
        Summary::from_ns(&tracer.record.commit_ns),
    ));
    for (label, summary) in rows {
        match summary {
            Some(s) => println!(
                "{label:<16}{:>10.2}{:>10.2}{:>10.2}{:>10.2}{:>10.2}",
                s.mean_ns / 1e3,
                s.p50_ns as f64 / 1e3,
                s.p99_ns as f64 / 1e3,
                s.p999_ns as f64 / 1e3,
                s.max_ns as f64 / 1e3
            ),
            None => println!("{label:<16}{:>10}", "-"),
        }
    }
    println!(
        "\ntotal {:.1} s; `munch trace` and `munch generate` do the same on your own files",
        run_started.elapsed().as_secs_f64()
    );
    Ok(if bugs == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
