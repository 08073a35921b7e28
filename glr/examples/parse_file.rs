//! Times one whole-text commit: `cargo run --release -p munch-glr --example parse_file --
//! GRAMMAR.lark TEXT [MAX_WORK_PER_STEP | --work]` prints whether the text is accepted (or the
//! error) and the time taken, with the default budgets except `max_work_per_commit` (unlimited
//! unless given, so that the time is the algorithm's). With `--work` it also prints the work the
//! commit does: the least `max_work_per_commit` that commits it, found by bisection.

use std::sync::Arc;
use std::time::Instant;

use munch_glr::grammar::Grammar;
use munch_glr::lark::{self, LoadConfig};
use munch_glr::parser::{Parser, ParserConfig, ParserState};

fn main() {
    let mut args = std::env::args().skip(1);
    let grammar = std::fs::read(args.next().expect("a grammar file")).expect("readable");
    let text = std::fs::read(args.next().expect("a text file")).expect("readable");
    let last = args.next();
    let work = last.as_deref() == Some("--work");
    let max_work_per_commit = match &last {
        Some(n) if !work => n.parse().expect("a number or --work"),
        _ => usize::MAX,
    };
    let started = Instant::now();
    let grammar = lark::load(&grammar, &LoadConfig::default()).expect("it loads");
    let parser = build(&grammar, max_work_per_commit);
    let built = started.elapsed();
    let started = Instant::now();
    let mut state = ParserState::new(parser);
    let committed = state.commit_bytes(&text);
    let verdict = match &committed {
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
    if work && committed.is_ok() {
        let commits = |budget: usize| {
            let mut state = ParserState::new(build(&grammar, budget));
            state.commit_bytes(&text).is_ok()
        };
        let hi = munch_testkit::props::least_passing(commits);
        println!("work: {hi} units");
    }
}

fn build(grammar: &Grammar, max_work_per_commit: usize) -> Arc<Parser> {
    let config = ParserConfig {
        max_work_per_commit,
        ..ParserConfig::default()
    };
    Arc::new(Parser::new(grammar, &config).expect("it builds"))
}
