//! Teacher-forces files through the trie masker and prints its build time, mask latency
//! percentiles, and what the walks did ([`TrieMasker::last_stats`]) at the slowest steps.
//!
//! ```text
//! cargo run --release -p munch-masker-trie --example trie_profile -- GRAMMAR TOKENIZER FILE...
//!     [--repeat N] [--no-classes] [--slowest N]
//! ```
//!
//! `GRAMMAR` is a SynCode grammar name (json, sql, go, java, ...) or a path to a `.lark` file;
//! `TOKENIZER` a tokenizer name (llama3, gemma3, ...) or a `tokenizer.json` path. A file the
//! grammar rejects is reported and skipped. `--repeat N` makes N passes over the files (fresh
//! cache each pass) and keeps each mask's fastest time, which filters out a shared machine's
//! noise; `--no-classes` walks every token instead of one representative per token class.

mod common;

use std::sync::Arc;
use std::time::Instant;

use munch_glr::mask::{Masker, TokenMask};
use munch_glr::parser::ParserState;
use munch_masker_trie::{TrieMasker, WalkStats};
use munch_vocab::stats::checked_nearest_rank;
use munch_vocab::TokenId;

/// Removes `--name VALUE` from `args`, returning the value.
fn take_value(args: &mut Vec<String>, name: &str) -> Option<String> {
    let i = args.iter().position(|a| a == name)?;
    let value = args.get(i + 1).cloned().unwrap_or_else(|| {
        eprintln!("{name} needs a value");
        std::process::exit(2)
    });
    args.drain(i..i + 2);
    Some(value)
}

/// Removes `--name` from `args`, returning whether it was there.
fn take_flag(args: &mut Vec<String>, name: &str) -> bool {
    let found = args.iter().position(|a| a == name);
    if let Some(i) = found {
        args.remove(i);
    }
    found.is_some()
}

fn summary(label: &str, times: &[f64]) {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mean = sorted.iter().sum::<f64>() / sorted.len().max(1) as f64;
    let at = |basis_points| checked_nearest_rank(&sorted, basis_points).unwrap_or(0.0);
    println!(
        "{label}: n {} mean {mean:.2} p50 {:.2} p90 {:.2} p99 {:.2} p99.9 {:.2} max {:.2} µs",
        sorted.len(),
        at(5000),
        at(9000),
        at(9900),
        at(9990),
        at(10_000),
    );
}

/// One traced step.
struct Step {
    file: usize,
    index: usize,
    micros: f64,
    stats: WalkStats,
    allowed: usize,
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let repeat: usize = take_value(&mut args, "--repeat").map_or(1, |n| n.parse().unwrap_or(1));
    let slowest: usize = take_value(&mut args, "--slowest").map_or(10, |n| n.parse().unwrap_or(10));
    let no_classes = take_flag(&mut args, "--no-classes");
    if args.len() < 3 {
        eprintln!("usage: trie_profile GRAMMAR TOKENIZER FILE... [--repeat N] [--no-classes]");
        std::process::exit(2);
    }
    let (parser, vocab) = common::parser_and_vocab(&args[0], &args[1]);
    let started = Instant::now();
    let masker = if no_classes {
        TrieMasker::without_classes(Arc::clone(&parser), Arc::clone(&vocab))
    } else {
        TrieMasker::new(Arc::clone(&parser), Arc::clone(&vocab), &Default::default())
            .expect("classes")
    };
    println!(
        "build {:.1} ms, {} classes, {} lexer states, {} terminals",
        started.elapsed().as_secs_f64() * 1e3,
        masker.classes().map_or(0, |c| c.len()),
        parser.lexer().state_len(),
        parser.terminal_len(),
    );
    let mut texts: Vec<(String, Vec<TokenId>)> = Vec::new();
    for path in &args[2..] {
        let text = std::fs::read_to_string(path).expect("readable UTF-8 file");
        let tokens = vocab.encode(&text).expect("encodable");
        let mut state = ParserState::new(Arc::clone(&parser));
        if tokens
            .iter()
            .all(|&t| state.commit_token(&vocab, t).is_ok())
        {
            texts.push((path.clone(), tokens));
        } else {
            eprintln!("{path}: rejected by the grammar, skipped");
        }
    }
    let mut steps: Vec<Step> = Vec::new();
    let mut mask = TokenMask::new(vocab.len());
    for pass in 0..repeat {
        let mut cache = masker.create_cache();
        let mut i = 0;
        for (f, (_, tokens)) in texts.iter().enumerate() {
            let mut state = ParserState::new(Arc::clone(&parser));
            for index in 0..=tokens.len() {
                let at = Instant::now();
                masker.fill_mask(&mut cache, &state, &mut mask);
                let micros = at.elapsed().as_secs_f64() * 1e6;
                if pass == 0 {
                    steps.push(Step {
                        file: f,
                        index,
                        micros,
                        stats: masker.last_stats(&mut cache),
                        allowed: mask.count(),
                    });
                } else {
                    steps[i].micros = steps[i].micros.min(micros);
                }
                i += 1;
                let Some(&t) = tokens.get(index) else { break };
                assert!(mask.contains(t), "forced token masked out");
                state.commit_token(&vocab, t).expect("commit");
            }
        }
    }
    let times: Vec<f64> = steps.iter().map(|s| s.micros).collect();
    summary("all", &times);
    let fresh: Vec<f64> = steps
        .iter()
        .filter(|s| !s.stats.reused)
        .map(|s| s.micros)
        .collect();
    summary("walked (not a recent mask)", &fresh);
    let total = |f: fn(&WalkStats) -> usize| steps.iter().map(|s| f(&s.stats)).sum::<usize>();
    println!(
        "per step: nodes {:.1} boundaries {:.1} shifts {:.2} stacks {:.2} tables built {:.2}",
        total(|s| s.nodes) as f64 / steps.len() as f64,
        total(|s| s.boundaries) as f64 / steps.len() as f64,
        total(|s| s.shifts) as f64 / steps.len() as f64,
        total(|s| s.stacks) as f64 / steps.len() as f64,
        total(|s| s.tables_built) as f64 / steps.len() as f64,
    );
    let mut order: Vec<usize> = (0..steps.len()).collect();
    order.sort_by(|&a, &b| steps[b].micros.total_cmp(&steps[a].micros));
    for &i in order.iter().take(slowest) {
        let s = &steps[i];
        let (name, tokens) = &texts[s.file];
        let next = tokens
            .get(s.index)
            .and_then(|&t| vocab.token_bytes(t))
            .map(|b| String::from_utf8_lossy(b).into_owned());
        println!(
            "{:.1} µs {name} step {} next {next:?} allowed {} {:?}",
            s.micros, s.index, s.allowed, s.stats
        );
    }
    // The median step, for a look at a typical walk.
    let mid = order[order.len() / 2];
    let s = &steps[mid];
    println!(
        "median {:.1} µs {} step {} {:?}",
        s.micros, texts[s.file].0, s.index, s.stats
    );
}
