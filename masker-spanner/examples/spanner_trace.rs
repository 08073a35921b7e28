//! Teacher-forced trace of the spanner masker: build it, then for every file, encode the text,
//! and at each step time `fill_mask`, compare the mask with the trie masker's, and commit the
//! token. Prints the build statistics, peak memory, mask-time percentiles and mismatches.
//!
//! ```text
//! cargo run --release -p munch-masker-spanner --example spanner_trace -- <grammar> <tokenizer> <file>...
//! ```
//!
//! `<grammar>`: a SynCode grammar name (`json`, `go`, `java`, `sql`, ...), `builtin:<name>`
//! for munch's own, or a path to a `.lark` file. `<tokenizer>`: a cached tokenizer name
//! (`llama3`, `qwen3`, `gemma3`, ...) or a `tokenizer.json` path. Set `TRACE_NO_TRIE=1` to skip
//! the comparison.

use std::sync::Arc;
use std::time::Instant;

use munch_glr::lark::{load, LoadConfig};
use munch_glr::mask::{Masker, TokenMask};
use munch_glr::parser::{Parser, ParserConfig, ParserState};
use munch_lexer::vocab::Vocabulary;
use munch_masker_spanner::{SpannerConfig, SpannerMasker};
use munch_masker_trie::TrieMasker;

fn grammar_source(arg: &str) -> Result<String, Box<dyn std::error::Error>> {
    if let Some(name) = arg.strip_prefix("builtin:") {
        return Ok(munch_grammars::builtin(name)
            .ok_or_else(|| format!("no builtin grammar {name:?}"))?
            .source
            .to_string());
    }
    if munch_grammars::syncode::NAMES.contains(&arg) {
        return Ok(munch_grammars::syncode::grammar(arg)?);
    }
    Ok(std::fs::read_to_string(arg)?)
}

/// The process's peak resident set, from `/proc/self/status` (Linux), in MiB.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// The calling thread's CPU time, in microseconds.
fn cpu_us() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e6 + ts.tv_nsec as f64 / 1e3
}

/// The process's CPU time (all threads), in seconds: the build's cost on a shared machine.
fn process_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to write.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: spanner_trace <grammar> <tokenizer> <file>...");
        std::process::exit(2);
    }
    let source = grammar_source(&args[0])?;
    let grammar = load(source.as_bytes(), &LoadConfig::default())?;
    let parser = Arc::new(Parser::new(&grammar, &ParserConfig::default())?);
    let vocab = Arc::new(Vocabulary::load(&args[1])?);
    let rss_before = peak_rss_mib().unwrap_or(f64::NAN);

    let started = Instant::now();
    let build_cpu = process_cpu_s();
    let mut last_stage = "";
    let spanner = SpannerMasker::with_progress(
        Arc::clone(&parser),
        Arc::clone(&vocab),
        &SpannerConfig::default(),
        &mut |p| {
            if p.stage != last_stage {
                last_stage = p.stage;
                eprintln!(
                    "  [{:>7.2} s] {} ({})",
                    started.elapsed().as_secs_f64(),
                    p.stage,
                    p.total
                );
            }
        },
    )?;
    let build_s = started.elapsed().as_secs_f64();
    let build_cpu = process_cpu_s() - build_cpu;
    let stats = spanner.stats();
    println!(
        "grammar {} tokenizer {} ({} tokens): build {build_s:.2} s ({build_cpu:.2} s CPU, all \
         threads), peak RSS {:.0} MiB (before build {rss_before:.0} MiB)",
        args[0],
        args[1],
        vocab.len(),
        peak_rss_mib().unwrap_or(f64::NAN)
    );
    println!("{stats:#?}");

    let compare = std::env::var_os("TRACE_NO_TRIE").is_none();
    let trie = TrieMasker::new(Arc::clone(&parser), Arc::clone(&vocab));
    if compare {
        trie.prepare();
    }
    let (mut sc, mut tc) = (spanner.create_cache(), trie.create_cache());
    let mut mask = TokenMask::new(vocab.len());
    let mut reference = TokenMask::new(vocab.len());
    let mut times: Vec<f64> = Vec::new();
    let mut trie_times: Vec<f64> = Vec::new();
    let mut cpu_times: Vec<f64> = Vec::new();
    let (mut steps, mut mismatches, mut failed) = (0usize, 0usize, 0usize);
    // `TRACE_REPEAT=n` runs the files n times (for profiling the masks).
    let repeat: usize = std::env::var("TRACE_REPEAT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let files: Vec<&String> = (0..repeat).flat_map(|_| &args[2..]).collect();
    for path in files {
        let text = std::fs::read_to_string(path)?;
        let tokens = vocab.encode(&text)?;
        let mut state = ParserState::new(Arc::clone(&parser));
        let mut slowest = (0.0f64, 0usize);
        for (i, &t) in tokens.iter().enumerate() {
            let at = Instant::now();
            let cpu = cpu_us();
            spanner.fill_mask(&mut sc, &state, &mut mask);
            cpu_times.push(cpu_us() - cpu);
            let us = at.elapsed().as_secs_f64() * 1e6;
            times.push(us);
            if cpu_times[cpu_times.len() - 1] > slowest.0 {
                slowest = (cpu_times[cpu_times.len() - 1], i);
            }
            steps += 1;
            if compare {
                let cpu = cpu_us();
                trie.fill_mask(&mut tc, &state, &mut reference);
                trie_times.push(cpu_us() - cpu);
                if let Some(d) = mask.first_difference(&reference) {
                    mismatches += 1;
                    if mismatches <= 5 {
                        println!(
                            "  MISMATCH {path} step {i}: token {d} {:?}: spanner {} trie {}",
                            String::from_utf8_lossy(vocab.token_bytes(d).unwrap_or(b"<special>")),
                            mask.contains(d),
                            reference.contains(d)
                        );
                    }
                }
            }
            if state.commit_token(&vocab, t).is_err() {
                let at: usize = tokens[..i]
                    .iter()
                    .map(|&t| vocab.token_bytes(t).map_or(0, <[u8]>::len))
                    .sum();
                let line = text.as_bytes()[..at]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
                    + 1;
                println!(
                    "  {path}: rejected at step {i}, line {line}, token {:?} (grammar does not \
                     take the file)",
                    String::from_utf8_lossy(vocab.token_bytes(t).unwrap_or(b""))
                );
                failed += 1;
                break;
            }
        }
        println!(
            "  {path}: {} tokens, slowest mask {:.0} us CPU at step {}",
            tokens.len(),
            slowest.0,
            slowest.1
        );
    }
    times.sort_by(|a, b| a.partial_cmp(b).expect("no NaN times"));
    trie_times.sort_by(|a, b| a.partial_cmp(b).expect("no NaN times"));
    cpu_times.sort_by(|a, b| a.partial_cmp(b).expect("no NaN times"));
    println!(
        "spanner masks, thread CPU time: p50 {:.1} us, p90 {:.1} us, p99 {:.1} us, p99.9 {:.1} us, \
         max {:.1} us, mean {:.1} us",
        percentile(&cpu_times, 0.5),
        percentile(&cpu_times, 0.9),
        percentile(&cpu_times, 0.99),
        percentile(&cpu_times, 0.999),
        cpu_times.last().copied().unwrap_or(f64::NAN),
        cpu_times.iter().sum::<f64>() / cpu_times.len().max(1) as f64,
    );
    if compare {
        println!(
            "trie masks, thread CPU time: p50 {:.1} us, p99 {:.1} us, max {:.1} us",
            percentile(&trie_times, 0.5),
            percentile(&trie_times, 0.99),
            trie_times.last().copied().unwrap_or(f64::NAN),
        );
    }
    println!(
        "spanner masks, wall time: {steps} steps, p50 {:.1} us, p99 {:.1} us, max {:.1} us, mean {:.1} us; \
         {mismatches} mismatches with trie{}; {failed} files rejected; peak RSS {:.0} MiB",
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times.last().copied().unwrap_or(f64::NAN),
        times.iter().sum::<f64>() / times.len().max(1) as f64,
        if compare { "" } else { " (not compared)" },
        peak_rss_mib().unwrap_or(f64::NAN)
    );
    Ok(())
}
