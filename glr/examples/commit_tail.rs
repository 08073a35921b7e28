//! The slowest commits of a teacher-forced run: which tokens make the commit latency's tail.
//!
//! Usage: `cargo run --release -p munch-glr --example commit_tail -- GRAMMAR RUNS FILE...
//! [--start RULE] [--postlex python]` (`GRAMMAR` is a SynCode grammar name: go, java, sql, json,
//! or a Lark file's path ending in `.lark`). Every file is tokenized with
//! Llama 3 and committed token by token `RUNS` times; per token the fastest run is kept (the
//! machine is shared), then the percentiles and the 30 slowest commits are printed with their
//! bytes and the heads before and after, and the 8 slowest `is_accepting` calls (each on the
//! state a commit made).

use std::sync::Arc;
use std::time::Instant;

use munch_glr::lark::{load, LoadConfig};
use munch_glr::parser::{Parser, ParserConfig, ParserState, Postlex};
use munch_vocab::stats::Summary;
use munch_vocab::Vocabulary;

struct Step {
    file: usize,
    index: usize,
    bytes: Vec<u8>,
    heads_before: usize,
    heads_after: usize,
    commit_ns: u64,
    accept_ns: u64,
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut flag = |name: &str| {
        let i = args.iter().position(|a| a == name)?;
        let value = args.get(i + 1).cloned();
        args.drain(i..(i + 2).min(args.len()));
        value
    };
    let start = flag("--start");
    let postlex =
        flag("--postlex").map(|p| Postlex::from_name(&p).expect("postlex none or python"));
    let [name, runs, files @ ..] = args.as_slice() else {
        eprintln!("usage: commit_tail GRAMMAR RUNS FILE... [--start RULE] [--postlex python]");
        std::process::exit(2);
    };
    let runs: usize = runs.parse().expect("RUNS is a number");
    let source = if name.ends_with(".lark") {
        std::fs::read_to_string(name).expect("a readable Lark file")
    } else {
        munch_grammars::syncode::grammar(name)
            .expect("a SynCode grammar")
            .to_string()
    };
    let mut load_config = LoadConfig::default();
    if let Some(start) = start {
        load_config.start = vec![start];
    }
    let grammar = load(source.as_bytes(), &load_config).expect("loads");
    let config = ParserConfig {
        postlex: postlex.unwrap_or(Postlex::None),
        ..ParserConfig::default()
    };
    let parser = Arc::new(Parser::new(&grammar, &config).expect("builds"));
    let vocab = Vocabulary::load("llama3").expect("llama3 tokenizer");
    let texts: Vec<Vec<_>> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("readable");
            vocab.encode(&text).expect("encodes")
        })
        .collect();
    let mut steps: Vec<Step> = Vec::new();
    for run in 0..runs {
        let mut at = 0;
        for (file, tokens) in texts.iter().enumerate() {
            let mut state = ParserState::new(Arc::clone(&parser));
            for (index, &t) in tokens.iter().enumerate() {
                let heads_before = state.head_len();
                let start = Instant::now();
                state.commit_token(&vocab, t).expect("accepted text");
                let commit_ns = start.elapsed().as_nanos() as u64;
                let start = Instant::now();
                std::hint::black_box(state.is_accepting());
                let accept_ns = start.elapsed().as_nanos() as u64;
                if run == 0 {
                    steps.push(Step {
                        file,
                        index,
                        bytes: vocab.token_bytes(t).unwrap_or_default().to_vec(),
                        heads_before,
                        heads_after: state.head_len(),
                        commit_ns,
                        accept_ns,
                    });
                } else {
                    let s = &mut steps[at];
                    s.commit_ns = s.commit_ns.min(commit_ns);
                    s.accept_ns = s.accept_ns.min(accept_ns);
                }
                at += 1;
            }
        }
    }
    let commit_ns: Vec<u64> = steps.iter().map(|s| s.commit_ns).collect();
    let accept_ns: Vec<u64> = steps.iter().map(|s| s.accept_ns).collect();
    let commit = Summary::from_ns(&commit_ns).expect("some tokens").to_us();
    let accept = Summary::from_ns(&accept_ns).expect("some tokens").to_us();
    println!(
        "{} tokens; commit p50 {:.2} p90 {:.2} p99 {:.2} max {:.2} µs; sum {:.1} ms",
        steps.len(),
        commit.p50_us,
        commit.p90_us,
        commit.p99_us,
        commit.max_us,
        commit_ns.iter().sum::<u64>() as f64 / 1e6
    );
    println!(
        "is_accepting p50 {:.2} p99 {:.2} max {:.2} µs",
        accept.p50_us, accept.p99_us, accept.max_us
    );
    let show = |s: &Step| {
        format!(
            "heads {}->{}  {}#{}  {:?}",
            s.heads_before,
            s.heads_after,
            files[s.file].rsplit('/').next().unwrap_or(""),
            s.index,
            String::from_utf8_lossy(&s.bytes)
        )
    };
    steps.sort_by_key(|s| std::cmp::Reverse(s.accept_ns));
    println!("slowest is_accepting:");
    for s in steps.iter().take(8) {
        println!("{:8.2} µs  {}", s.accept_ns as f64 / 1000.0, show(s));
    }
    steps.sort_by_key(|s| std::cmp::Reverse(s.commit_ns));
    println!("slowest commits:");
    for s in steps.iter().take(30) {
        println!("{:8.2} µs  {}", s.commit_ns as f64 / 1000.0, show(s));
    }
}
