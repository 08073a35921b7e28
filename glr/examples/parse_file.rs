//! Times one whole-text commit: `cargo run --release -p munch-glr --example parse_file --
//! GRAMMAR.lark TEXT [MAX_WORK_PER_STEP]` prints whether the text is accepted (or the error)
//! and the time taken, with the default budgets except `max_work_per_commit` (unlimited unless
//! given, so that the time is the algorithm's).

use std::sync::Arc;
use std::time::Instant;

use munch_glr::lark::{self, LoadConfig};
use munch_glr::parser::{Parser, ParserConfig, ParserState};

fn main() {
    let mut args = std::env::args().skip(1);
    let grammar = std::fs::read(args.next().expect("a grammar file")).expect("readable");
    let text = std::fs::read(args.next().expect("a text file")).expect("readable");
    let max_work_per_commit = args
        .next()
        .map_or(usize::MAX, |n| n.parse().expect("a number"));
    let started = Instant::now();
    let grammar = lark::load(&grammar, &LoadConfig::default()).expect("it loads");
    let config = ParserConfig {
        max_work_per_commit,
        ..ParserConfig::default()
    };
    let parser = Arc::new(Parser::new(&grammar, &config).expect("it builds"));
    let built = started.elapsed();
    let started = Instant::now();
    let mut state = ParserState::new(parser);
    let verdict = match state.commit_bytes(&text) {
        Ok(()) if state.is_accepting() => "accepted".to_string(),
        Ok(()) => "a prefix".to_string(),
        Err(e) => e.to_string(),
    };
    println!(
        "{verdict}: build {:.1} ms, parse {:.1} ms ({} bytes)",
        built.as_secs_f64() * 1e3,
        started.elapsed().as_secs_f64() * 1e3,
        text.len()
    );
}
