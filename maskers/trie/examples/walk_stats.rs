//! Where the trie masker's time goes along real files: teacher-forces files of a SynCode
//! grammar through a `TrieMasker` with token classes (Llama 3 by default) and prints, for the
//! masks that were not a recent mask reused, their time's p50/p90/p99 and the walk's counts
//! (nodes entered, boundaries crossed, shifts, stacks, tables built) at those ranks, then the
//! slowest steps.
//!
//! ```text
//! cargo run --release -p munch-masker-trie --example walk_stats -- GRAMMAR FILE... [--tokenizer T]
//! ```

use std::sync::Arc;
use std::time::Instant;

use munch_glr::mask::{Masker, TokenMask};
use munch_glr::parser::ParserState;
use munch_masker_trie::TrieMasker;
use munch_testkit::grammar::syncode;
use munch_vocab::Vocabulary;

fn main() {
    let mut args = std::env::args().skip(1);
    let grammar = args.next().expect("usage: walk_stats GRAMMAR FILE...");
    let mut tokenizer = "llama3".to_string();
    let mut files = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--tokenizer" => tokenizer = args.next().expect("--tokenizer T"),
            _ => files.push(a),
        }
    }
    let parser = syncode(&grammar);
    let vocab = Arc::new(Vocabulary::load(&tokenizer).expect("tokenizer"));
    let masker = TrieMasker::new(Arc::clone(&parser), Arc::clone(&vocab), &Default::default())
        .expect("trie masker");
    let mut cache = masker.create_cache();
    let mut mask = TokenMask::new(vocab.len());
    // (ns, stats, file, step)
    let mut rows = Vec::new();
    let mut reused = 0usize;
    let mut same_nodes = 0usize;
    let mut prev_nodes = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("file");
        let tokens = vocab.encode(&text).expect("encode");
        let mut state = ParserState::new(Arc::clone(&parser));
        for step in 0..=tokens.len() {
            let at = Instant::now();
            masker.fill_mask(&mut cache, &state, &mut mask);
            let ns = at.elapsed().as_nanos() as u64;
            let stats = masker.last_stats(&mut cache);
            let nodes: Vec<_> = state.heads().map(|h| h.node().id()).collect();
            if !stats.reused && nodes.iter().any(|n| prev_nodes.contains(n)) {
                same_nodes += 1;
            }
            prev_nodes = nodes;
            if stats.reused {
                reused += 1;
            } else {
                rows.push((ns, stats, f.clone(), step));
            }
            let Some(&t) = tokens.get(step) else { break };
            if state.commit_token(&vocab, t).is_err() {
                eprintln!("{f}: step {step} refused");
                break;
            }
        }
    }
    rows.sort_by_key(|r| r.0);
    println!("{} masks walked, {reused} reused, {same_nodes} walked sharing a node with the previous mask", rows.len());
    for bp in [1000usize, 2500, 5000, 7500, 9000, 9900] {
        let i = (rows.len() * bp / 10_000).min(rows.len() - 1);
        let (ns, s, _, _) = &rows[i];
        println!(
            "p{:<5} {:>9.1} µs  heads {} nodes {:>6} boundaries {:>5} shifts {:>4} stacks {:>4} tables {:>3}",
            bp as f64 / 100.0,
            *ns as f64 / 1e3,
            s.heads,
            s.nodes,
            s.boundaries,
            s.shifts,
            s.stacks,
            s.tables_built
        );
    }
    let mean = |f: &dyn Fn(&munch_masker_trie::WalkStats) -> usize, lo: usize, hi: usize| {
        rows[lo..hi].iter().map(|r| f(&r.1)).sum::<usize>() as f64 / (hi - lo).max(1) as f64
    };
    let n = rows.len();
    for (name, lo, hi) in [
        ("fastest half", 0, n / 2),
        ("50-90%", n / 2, n * 9 / 10),
        ("slowest 10%", n * 9 / 10, n),
    ] {
        println!(
            "{name:>12}: mean nodes {:.0} boundaries {:.0} shifts {:.1} stacks {:.1} tables {:.2} heads {:.2}",
            mean(&|s| s.nodes, lo, hi),
            mean(&|s| s.boundaries, lo, hi),
            mean(&|s| s.shifts, lo, hi),
            mean(&|s| s.stacks, lo, hi),
            mean(&|s| s.tables_built, lo, hi),
            mean(&|s| s.heads, lo, hi),
        );
    }
    for (ns, s, f, step) in rows.iter().rev().take(8) {
        println!("{:>9.1} µs {f} step {step}: {s:?}", *ns as f64 / 1e3);
    }
}
