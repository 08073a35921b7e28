//! Masks of a grammar with Python's indenter, step by step: teacher-forces files through one
//! masker (wda by default) and prints, per kind of step (outside or inside brackets, a head
//! inside a would-be newline lexeme or not, the number of heads), the count and the mask
//! time's p50/p90/p99/max, then the slowest steps with the text before them. Where the median
//! mask's time goes, and which masks make the tail.
//!
//! ```text
//! cargo run --release -p munch-bench --example python_masks -- GRAMMAR FILE... \
//!     [--start RULE] [--tokenizer T] [--masker M] [--slowest N] [--passes N] [--ready PATH]
//! ```
//!
//! `--passes N` walks the files N times and reports the last pass (memos warm: what a mask
//! costs once its set of heads has been met). `--ready PATH` creates PATH before the last pass
//! and waits a second before its first mask, so that a profiler can attach to those masks alone
//! (`perf record -p`).

// Links the benchmarks' library, which sets the allocator (mimalloc, as munch's binaries).
use munch_bench as _;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use munch::teacher::{Outcome, Teacher};
use munch::{Compiled, Config, Grammar, MaskerKind, Postlex, Vocabulary};

fn main() {
    munch::alloc::configure();
    let mut args = std::env::args().skip(1);
    let mut files = Vec::new();
    let (mut start, mut tokenizer, mut masker) = (None, "llama3".to_string(), "wda".to_string());
    let (mut slowest, mut ready, mut passes) = (10usize, None, 1usize);
    let mut grammar_arg = None;
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--start" => start = Some(value()),
            "--tokenizer" => tokenizer = value(),
            "--masker" => masker = value(),
            "--slowest" => slowest = value().parse().expect("--slowest N"),
            "--ready" => ready = Some(value()),
            "--passes" => passes = value().parse().expect("--passes N"),
            _ if grammar_arg.is_none() => grammar_arg = Some(a),
            _ => files.push(a),
        }
    }
    let grammar_arg = grammar_arg.expect("usage: python_masks GRAMMAR FILE...");
    let mut grammar = Grammar::from_arg(&grammar_arg)
        .unwrap_or_else(|e| panic!("{grammar_arg}: {e}"))
        .with_postlex(Postlex::from_name("python").expect("python post-lexer"));
    if let Some(s) = start {
        grammar = grammar.with_starts([s]);
    }
    let vocab = Arc::new(Vocabulary::load(&tokenizer).unwrap_or_else(|e| panic!("{e}")));
    let kind: MaskerKind = masker.parse().unwrap_or_else(|e| panic!("{e}"));
    let built = Instant::now();
    let compiled = Compiled::new(&grammar, Arc::clone(&vocab), &Config::new().masker(kind))
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("built in {:.2} s", built.elapsed().as_secs_f64());
    // Per kind of step: the mask times; and every step's (time, file, step, text before).
    let mut kinds: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut all: Vec<(u64, String, usize, String)> = Vec::new();
    let mut teacher = Teacher::new(std::slice::from_ref(&compiled));
    for pass in 0..passes.max(1) {
        if pass + 1 == passes.max(1) {
            kinds.clear();
            all.clear();
            if let Some(path) = &ready {
                std::fs::write(path, b"").expect("--ready file");
                std::thread::sleep(std::time::Duration::from_secs(1));
            }
        }
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
            let tokens: Vec<u32> = vocab
                .encode(&text)
                .unwrap_or_else(|e| panic!("{file}: {e}"))
                .iter()
                .map(|t| t.as_u32())
                .collect();
            let mut before = String::new();
            let outcome = teacher.run(&tokens, |step| {
                let state = step.matcher.state();
                let lexer = state.parser().lexer();
                let nl = state.parser().indenter().map(|i| i.newline());
                let inside_nl = state.heads().any(|h| {
                    !h.lexeme_is_empty()
                        && nl.is_some_and(|nl| lexer.reachable(h.lex_state()).contains(nl))
                });
                let brackets = state.heads().any(|h| h.indent().paren_level() > 0);
                let kind = format!(
                    "{} {} heads={}",
                    if brackets { "brackets" } else { "outside " },
                    if inside_nl {
                        "in-newline"
                    } else {
                        "          "
                    },
                    state.head_len().min(4),
                );
                let ns = step.mask_ns[0];
                kinds.entry(kind.clone()).or_default().push(ns);
                let tail: String = before
                    .chars()
                    .rev()
                    .take(40)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                all.push((ns, file.clone(), step.index, format!("{kind} {tail:?}")));
                if let Some(t) = step.next {
                    before.push_str(&munch::teacher::token_text(&vocab, t));
                }
            });
            if let Outcome::Rejected { reason, .. } = outcome {
                eprintln!("{file}: rejected: {reason}");
            }
        }
    }
    let pct = |v: &mut Vec<u64>, p: f64| {
        v.sort_unstable();
        v[((v.len() as f64 - 1.0) * p).round() as usize] as f64 / 1e3
    };
    println!("| step kind | masks | p50 µs | p90 µs | p99 µs | max µs |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut every: Vec<u64> = all.iter().map(|a| a.0).collect();
    for (k, v) in kinds.iter_mut().chain([(&"all".to_string(), &mut every)]) {
        let n = v.len();
        println!(
            "| {k} | {n} | {:.2} | {:.2} | {:.1} | {:.1} |",
            pct(v, 0.5),
            pct(v, 0.9),
            pct(v, 0.99),
            pct(v, 1.0)
        );
    }
    all.sort_unstable_by_key(|a| std::cmp::Reverse(a.0));
    for (ns, file, step, tail) in all.iter().take(slowest) {
        println!("{:>10.1} µs  {file}:{step}  {tail}", *ns as f64 / 1e3);
    }
}
