//! How long the token classes take to build: the classes-only build the trie masker uses
//! ([`TokenClasses::build`]) and the full span tables ([`TokenSpans::build`]), each built
//! `--repeat N` times in one process (default 7), printing the minimum and median.
//!
//! `GRAMMAR` is a SynCode grammar name (json, sql, go, java, ...) or a path to a `.lark` file;
//! `TOKENIZER` a tokenizer name (llama3, gemma3, ...) or a `tokenizer.json` path.
//! `CLASS_BUILD_ONLY=1` skips the span tables (for `perf stat`).
//!
//! ```text
//! cargo run --release -p munch-masker-trie --example class_build -- GRAMMAR TOKENIZER [--repeat N] [--threads T]
//! ```

mod common;

use std::time::Instant;

use munch_tokens::{SpansConfig, TokenClasses, TokenSpans};
use munch_vocab::TokenId;

fn take_value(args: &mut Vec<String>, name: &str) -> Option<usize> {
    let i = args.iter().position(|a| a == name)?;
    let value = args
        .get(i + 1)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            eprintln!("{name} needs a number");
            std::process::exit(2)
        });
    args.drain(i..i + 2);
    Some(value)
}

/// `(minimum, median)` in milliseconds of `repeat` runs of `f`.
fn time(repeat: usize, mut f: impl FnMut()) -> (f64, f64) {
    let mut ms: Vec<f64> = (0..repeat.max(1))
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    (ms[0], ms[ms.len() / 2])
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let repeat = take_value(&mut args, "--repeat").unwrap_or(7);
    let threads = take_value(&mut args, "--threads").unwrap_or(2);
    if args.len() != 2 {
        eprintln!("usage: class_build GRAMMAR TOKENIZER [--repeat N] [--threads T]");
        std::process::exit(2);
    }
    let (parser, vocab) = common::parser_and_vocab(&args[0], &args[1]);
    let config = SpansConfig {
        threads,
        ..SpansConfig::default()
    };
    let lexer = parser.lexer();
    let mut classes = 0;
    let (min, median) = time(repeat, || {
        classes = TokenClasses::build(lexer, &vocab, &config)
            .expect("classes fit")
            .len();
    });
    println!(
        "TokenClasses::build: {classes} classes, {} lexer states, min {min:.1} ms, median {median:.1} ms",
        lexer.state_len()
    );
    if std::env::var_os("CLASS_BUILD_ONLY").is_some() {
        return;
    }
    let mut spans = None;
    let (min, median) = time(repeat.div_ceil(2), || {
        spans = Some(TokenSpans::build(lexer, &vocab, &config).expect("spans fit"));
    });
    println!("TokenSpans::build: min {min:.1} ms, median {median:.1} ms");
    // Both builds define the same partition: check it on this grammar and vocabulary.
    let classes = TokenClasses::build(lexer, &vocab, &config).expect("classes fit");
    let spans = spans.expect("built at least once");
    let differ = (0..vocab.len())
        .map(TokenId::from_usize)
        .filter(|&t| classes.class_of(t) != spans.classes().class_of(t))
        .count();
    println!("tokens whose class differs between the two builds: {differ}");
    if differ != 0 {
        std::process::exit(1);
    }
}
