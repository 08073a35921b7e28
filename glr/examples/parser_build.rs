//! Times `Parser::new` (normalisation, the lexer DFA, the LALR tables) on a SynCode grammar,
//! fastest and median of N builds in one process, per phase.
//!
//! `cargo run --release -p munch-glr --example parser_build -- go 30`

use std::time::{Duration, Instant};

use munch_glr::lark::{self, LoadConfig};
use munch_glr::parser::{Parser, ParserConfig};

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "go".into());
    let repeat: usize = args.next().map_or(20, |n| n.parse().expect("a count"));
    let text = munch_grammars::syncode::grammar(&name).expect("a SynCode grammar");
    let mut times = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        let started = Instant::now();
        let grammar = lark::load(text.as_bytes(), &LoadConfig::default()).expect("it loads");
        let loaded = started.elapsed();
        let parser = Parser::new(&grammar, &ParserConfig::default()).expect("it builds");
        times.push((loaded, started.elapsed() - loaded));
        std::hint::black_box(parser);
    }
    let report = |what: &str, mut v: Vec<Duration>| {
        v.sort();
        println!(
            "{name} {what}: fastest {:.2} ms, median {:.2} ms",
            v[0].as_secs_f64() * 1e3,
            v[v.len() / 2].as_secs_f64() * 1e3
        );
    };
    report("lark load", times.iter().map(|t| t.0).collect());
    report("Parser::new", times.iter().map(|t| t.1).collect());
}
