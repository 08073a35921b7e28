//! Teacher-forces files through the weighted-automaton masker and prints its build time, its
//! size, mask latency percentiles, and every disagreement with the trie masker.
//!
//! ```text
//! cargo run --release -p munch-masker-wda --example wda_trace -- GRAMMAR TOKENIZER FILE...
//! ```
//!
//! `GRAMMAR` is a SynCode grammar name (json, sql, go, java, ...) or a path to a `.lark` file;
//! `TOKENIZER` a tokenizer name (llama3, gemma3, ...) or a `tokenizer.json` path. A file that the
//! grammar rejects is reported and skipped. `--save PATH` also writes the artifact and times
//! loading it back (`--load PATH` uses a saved artifact instead of building); `--repeat N` makes N passes over the files (fresh caches each time) and
//! keeps each mask's fastest time, which filters out the noise of a shared machine.
//! `--no-check` skips the comparison with the trie masker (timing only); `--slowest N` prints
//! the N slowest steps with a [`WdaMasker::profile`] of each and a summary by kind of
//! expansion (`munch_tokens::Expanded`: a repeated set, from nothing, from a recent result,
//! from a base): percentiles of the run, of the expansion as the trace met it, and of the same
//! set's expansion again with the tables hot (`hot expand`); `--eos-first` decides end of
//! sequence before each timed mask and times it apart.

use std::sync::Arc;
use std::time::Instant;

use munch_glr::lark::{load, LoadConfig};
use munch_glr::mask::{Masker, TokenMask};
use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_masker_trie::TrieMasker;
use munch_masker_wda::{MaskProfile, WdaConfig, WdaMasker};
use munch_vocab::stats::{checked_nearest_rank, nearest_rank};
use munch_vocab::Vocabulary;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let save = args.iter().position(|a| a == "--save").map(|i| {
        let path = args[i + 1].clone();
        args.drain(i..i + 2);
        path
    });
    // Passes over the files, keeping each mask's fastest time (a shared machine's noise only
    // ever adds time).
    let load_from = args.iter().position(|a| a == "--load").map(|i| {
        let path = args[i + 1].clone();
        args.drain(i..i + 2);
        path
    });
    let repeat = args
        .iter()
        .position(|a| a == "--repeat")
        .map(|i| {
            let n: usize = args[i + 1].parse().expect("--repeat N");
            args.drain(i..i + 2);
            n.max(1)
        })
        .unwrap_or(1);
    // Timing only: skip the comparison with the trie masker.
    let check = match args.iter().position(|a| a == "--no-check") {
        Some(i) => {
            args.remove(i);
            false
        }
        None => true,
    };
    // Decide end of sequence before the timed mask, and time it apart.
    let eos_first = match args.iter().position(|a| a == "--eos-first") {
        Some(i) => {
            args.remove(i);
            true
        }
        None => false,
    };
    let mut eos_times: Vec<f64> = Vec::new();
    let slowest = args
        .iter()
        .position(|a| a == "--slowest")
        .map(|i| {
            let n: usize = args[i + 1].parse().expect("--slowest N");
            args.drain(i..i + 2);
            n
        })
        .unwrap_or(0);
    if args.len() < 3 {
        eprintln!(
            "usage: wda_trace GRAMMAR TOKENIZER FILE... [--save PATH | --load PATH] [--repeat N]"
        );
        std::process::exit(2);
    }
    let source = if args[0].ends_with(".lark") {
        std::fs::read_to_string(&args[0]).expect("grammar file")
    } else {
        munch_grammars::syncode::grammar(&args[0]).expect("SynCode grammar")
    };
    let grammar = load(source.as_bytes(), &LoadConfig::default()).unwrap_or_else(|e| panic!("{e}"));
    let parser = Arc::new(Parser::new(&grammar, &ParserConfig::default()).unwrap());
    let vocab = Arc::new(Vocabulary::load(&args[1]).expect("tokenizer"));
    println!(
        "grammar {} ({} LR states, {} terminals), vocabulary {} ({} tokens)",
        args[0],
        parser.lr_state_len(),
        parser.terminal_len(),
        args[1],
        vocab.len()
    );
    let built = match &load_from {
        Some(path) => {
            let bytes = std::fs::read(path).expect("artifact file");
            let t = Instant::now();
            let m = WdaMasker::load(
                Arc::clone(&parser),
                Arc::clone(&vocab),
                &mut bytes.as_slice(),
            )
            .unwrap_or_else(|e| panic!("{e}"));
            println!("loaded {path} in {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
            Ok(m)
        }
        None => WdaMasker::new(
            Arc::clone(&parser),
            Arc::clone(&vocab),
            &WdaConfig::default(),
        ),
    };
    let wda = match built {
        Ok(w) => w,
        Err(e) => {
            println!("build failed: {e}");
            std::process::exit(1);
        }
    };
    let stats = wda.stats();
    println!(
        "build {:.2} s: {} states, {} edges, {} weights, {} token classes in {} blocks, {:.1} MiB",
        stats.build_s,
        stats.states,
        stats.edges,
        stats.distinct_weights,
        stats.token_classes,
        stats.blocks,
        stats.heap_bytes as f64 / (1 << 20) as f64
    );
    if let Some(path) = &save {
        let mut bytes = Vec::new();
        wda.save(&mut bytes).expect("save");
        std::fs::write(path, &bytes).expect("write artifact");
        let t = Instant::now();
        let loaded = WdaMasker::load(
            Arc::clone(&parser),
            Arc::clone(&vocab),
            &mut bytes.as_slice(),
        )
        .expect("load");
        let load_s = t.elapsed().as_secs_f64();
        println!(
            "artifact {:.1} MiB, loaded in {:.1} ms ({:.0}x faster than building)",
            bytes.len() as f64 / (1 << 20) as f64,
            load_s * 1e3,
            stats.build_s / load_s
        );
        drop(loaded);
    }
    let trie = TrieMasker::without_classes(Arc::clone(&parser), Arc::clone(&vocab));
    let mut tc = trie.create_cache();
    let mut wm = TokenMask::new(vocab.len());
    let mut tm = TokenMask::new(vocab.len());
    let mut mismatches = 0usize;
    // Per step, the fastest of `repeat` passes over all files, each pass with fresh caches (so
    // every pass sees the same cache history a real decode would).
    let mut times: Vec<f64> = Vec::new();
    let mut where_: Vec<(String, usize, usize)> = Vec::new();
    let mut profiles: Vec<String> = Vec::new();
    let mut summary: Vec<MaskProfile> = Vec::new();
    let mut pfc = wda.create_cache();
    let texts: Vec<(String, Vec<munch_vocab::TokenId>)> = args[2..]
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("text file");
            let tokens = vocab.encode(&text).expect("encode");
            (f.clone(), tokens)
        })
        .collect();
    for pass in 0..repeat {
        let mut wc = wda.create_cache();
        let mut at = 0usize;
        for (file, tokens) in &texts {
            let mut state = ParserState::new(Arc::clone(&parser));
            let mut prefix: Vec<u8> = Vec::new();
            for step in 0..=tokens.len() {
                if eos_first {
                    let t = Instant::now();
                    std::hint::black_box(state.is_accepting());
                    eos_times.push(t.elapsed().as_secs_f64() * 1e6);
                }
                let t0 = Instant::now();
                wda.fill_mask(&mut wc, &state, &mut wm);
                let dt = t0.elapsed().as_secs_f64() * 1e6;
                if pass == 0 {
                    times.push(dt);
                    where_.push((file.clone(), step, state.heads().count()));
                }
                if pass + 1 == repeat && slowest > 0 {
                    // A second cache that sees the same history as the timed one.
                    let p = wda.profile(&mut pfc, &state);
                    profiles.push(format!("{p:?}"));
                    summary.push(p);
                }
                if pass == 0 && check {
                    trie.fill_mask(&mut tc, &state, &mut tm);
                    if let Some(t) = wm.first_difference(&tm) {
                        mismatches += 1;
                        if mismatches <= 10 {
                            println!(
                                "{file} step {step}: token {t} {:?} after …{:?}: wda {} / trie {}",
                                String::from_utf8_lossy(
                                    vocab.token_bytes(t).unwrap_or(b"<special>")
                                ),
                                String::from_utf8_lossy(&prefix[prefix.len().saturating_sub(40)..]),
                                wm.contains(t),
                                tm.contains(t)
                            );
                        }
                    }
                }
                if pass > 0 {
                    times[at] = times[at].min(dt);
                }
                at += 1;
                let Some(&t) = tokens.get(step) else { break };
                if let Err(e) = state.commit_token(&vocab, t) {
                    if pass == 0 {
                        println!("{file}: rejected at step {step}: {e}");
                    }
                    break;
                }
                prefix.extend_from_slice(vocab.token_bytes(t).unwrap());
            }
        }
    }
    let mut order: Vec<usize> = (0..times.len()).collect();
    order.sort_by(|&a, &b| times[b].total_cmp(&times[a]));
    for &i in order.iter().take(slowest) {
        let (file, step, heads) = &where_[i];
        println!(
            "slow: {:.2} µs {file} step {step} ({heads} heads) {}",
            times[i],
            profiles.get(i).map_or("", |s| s.as_str())
        );
    }
    if !summary.is_empty() {
        let med = |mut v: Vec<f64>| {
            v.sort_by(|a, b| a.total_cmp(b));
            let at = |basis_points| checked_nearest_rank(&v, basis_points).unwrap_or(0.0);
            format!(
                "n {} p50 {:.2} p90 {:.2} p99 {:.2}",
                v.len(),
                at(5000),
                at(9000),
                at(9900)
            )
        };
        for kind in ["Repeat", "Scratch", "Entry", "Base"] {
            let of: Vec<_> = summary.iter().filter(|s| s.how.starts_with(kind)).collect();
            println!(
                "profile {kind}: run {} | expand {} | hot expand {} | pairs {}",
                med(of.iter().map(|s| s.run_us).collect()),
                med(of.iter().map(|s| s.expand_us).collect()),
                med(of.iter().map(|s| s.hot_expand_us).collect()),
                med(of.iter().map(|s| s.pairs as f64).collect())
            );
        }
    }
    if eos_first {
        eos_times.sort_by(|a, b| a.total_cmp(b));
        let at = |basis_points| nearest_rank(&eos_times, basis_points);
        println!(
            "end of sequence: p50 {:.2} µs, p99 {:.2} µs, max {:.2} µs",
            at(5000),
            at(9900),
            at(10_000)
        );
    }
    times.sort_by(|a, b| a.total_cmp(b));
    let pct = |basis_points| nearest_rank(&times, basis_points);
    println!(
        "{} masks: p50 {:.2} µs, p90 {:.2} µs, p99 {:.2} µs, p99.9 {:.2} µs, max {:.2} µs; {} mismatches vs trie",
        times.len(),
        pct(5000),
        pct(9000),
        pct(9900),
        pct(9990),
        times.last().copied().unwrap_or(0.0),
        mismatches
    );
}
