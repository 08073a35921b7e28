//! Soak: several threads, each driving many matchers through the front door over SynCode's
//! grammars and `builtin:json` with a synthetic code vocabulary — sampling allowed tokens,
//! rolling back and forking at random, resetting finished texts.
//!
//! Checked: no panic; every sampled token is accepted; at sampled steps a matcher's mask equals
//! the mask of a fresh matcher fed the same accepted tokens; resident memory stays flat after
//! warm-up (a generous bound: the test must catch leaks of a state per step, not noise).
//!
//! The rounds are counted, not timed; `MUNCH_SOAK_ROUNDS` raises them for a longer run
//! (`MUNCH_SOAK_ROUNDS=200 cargo test --release -p munch --test soak -- --nocapture`).

// Names the default maskers and SynCode's grammars.
#![cfg(all(feature = "trie", feature = "syncode"))]

use std::sync::Arc;

use munch::{Compiled, Config, Grammar, MaskerKind, Matcher, TokenMask, Vocabulary};
use munch_testkit::generate::SeededRng;

/// Matchers each thread keeps going at once.
const MATCHERS: usize = 8;
/// Steps per matcher per round.
const STEPS: usize = 24;
/// A text is reset past this many accepted tokens, so memory has a bound to stay under.
const MAX_LEN: usize = 160;
const THREADS: usize = 4;

fn vocab() -> Arc<Vocabulary> {
    munch_testkit::vocab::synthetic("code").unwrap()
}

/// Grammar × masker pairs: each masker of the build on a grammar, so all of them soak.
fn compiled_set(vocab: &Arc<Vocabulary>) -> Vec<Compiled> {
    let mut grammars = vec![Grammar::builtin("json").unwrap()];
    for name in ["json", "go", "java", "sql", "c"] {
        grammars.push(Grammar::syncode(name).unwrap());
    }
    let kinds: Vec<MaskerKind> = MaskerKind::ALL
        .iter()
        .copied()
        .filter(|&k| k != MaskerKind::Oracle)
        .collect();
    let mut out = Vec::new();
    for (i, g) in grammars.iter().enumerate() {
        let kind = kinds[i % kinds.len()];
        let config = Config::new().masker(kind).fallback(None);
        let compiled = Compiled::new(g, Arc::clone(vocab), &config)
            .unwrap_or_else(|e| panic!("{} with {kind}: {e}", g.name()));
        out.push(compiled);
        // The trie beside every other masker: it builds in milliseconds.
        if kind != MaskerKind::cheapest() {
            let config = Config::new().masker(MaskerKind::cheapest()).fallback(None);
            out.push(Compiled::new(g, Arc::clone(vocab), &config).unwrap());
        }
    }
    out
}

/// One sequence: its matcher and the tokens it accepted, for the fresh re-parse.
struct Seq {
    matcher: Matcher,
    tokens: Vec<u32>,
}

impl Seq {
    fn new(compiled: &Compiled) -> Seq {
        Seq {
            matcher: compiled.matcher(),
            tokens: Vec::new(),
        }
    }
}

/// A random allowed token; end of sequence only now and then, so texts grow.
fn sample(mask: &TokenMask, eos: u32, rng: &mut SeededRng) -> Option<u32> {
    let text: Vec<u32> = mask
        .iter()
        .map(|t| t.as_u32())
        .filter(|&t| t != eos)
        .collect();
    let may_end = mask.iter().any(|t| t.as_u32() == eos);
    if may_end && (text.is_empty() || rng.below(8) == 0) {
        return Some(eos);
    }
    (!text.is_empty()).then(|| text[rng.below(text.len())])
}

fn fresh_mask(compiled: &Compiled, tokens: &[u32]) -> TokenMask {
    let mut m = compiled.matcher();
    m.accept_tokens(tokens)
        .expect("a fresh matcher takes the accepted tokens");
    m.next_token_mask()
}

/// One thread's rounds over its matchers; returns the steps taken and masks cross-checked.
fn drive(compiled: &[Compiled], seed: u64, rounds: usize) -> (usize, usize) {
    let mut rng = SeededRng::new(seed);
    let mut seqs: Vec<(usize, Seq)> = (0..MATCHERS)
        .map(|i| {
            let c = (seed as usize + i) % compiled.len();
            (c, Seq::new(&compiled[c]))
        })
        .collect();
    let (mut steps, mut checked) = (0, 0);
    for round in 0..rounds {
        for slot_seq in &mut seqs {
            for _ in 0..STEPS {
                let done = {
                    let seq = &slot_seq.1;
                    seq.matcher.is_terminated() || seq.tokens.len() >= MAX_LEN
                };
                if done {
                    // A finished text: a new sequence, sometimes on another grammar.
                    if rng.below(2) == 0 {
                        let c = rng.below(compiled.len());
                        *slot_seq = (c, Seq::new(&compiled[c]));
                    } else {
                        let seq = &mut slot_seq.1;
                        seq.matcher.reset();
                        seq.tokens.clear();
                    }
                    continue;
                }
                let (c, seq) = &mut *slot_seq;
                let compiled = &compiled[*c];
                let eos = compiled.vocabulary().eos()[0].as_u32();
                let ctx = || {
                    format!(
                        "seed {seed} round {round} {}: {:?}",
                        compiled.grammar_name(),
                        seq.tokens
                    )
                };
                let mask = seq.matcher.next_token_mask();
                if rng.below(16) == 0 {
                    assert_eq!(mask, fresh_mask(compiled, &seq.tokens), "{}", ctx());
                    checked += 1;
                }
                match rng.below(32) {
                    0 if !seq.tokens.is_empty() => {
                        let n = 1 + rng.below(seq.tokens.len().min(8));
                        seq.matcher
                            .rollback(n)
                            .unwrap_or_else(|e| panic!("{}: {e}", ctx()));
                        seq.tokens.truncate(seq.tokens.len() - n);
                    }
                    1 => {
                        // A fork takes this slot; the original goes on a few steps, then is
                        // dropped (beam search's discarded branch).
                        let mut fork = Seq {
                            matcher: seq.matcher.fork(),
                            tokens: seq.tokens.clone(),
                        };
                        std::mem::swap(seq, &mut fork);
                        for _ in 0..rng.below(4) {
                            let m = fork.matcher.next_token_mask();
                            match sample(&m, eos, &mut rng) {
                                Some(t) if !fork.matcher.is_terminated() => {
                                    fork.matcher.accept_token(t).unwrap();
                                }
                                _ => break,
                            }
                        }
                    }
                    _ => match sample(&mask, eos, &mut rng) {
                        Some(t) => {
                            seq.matcher
                                .accept_token(t)
                                .unwrap_or_else(|e| panic!("{} + {t}: {e}", ctx()));
                            seq.tokens.push(t);
                        }
                        // A dead end cannot happen: every prefix the matcher took is live.
                        None => panic!("{}: no token allowed", ctx()),
                    },
                }
                steps += 1;
            }
        }
    }
    (steps, checked)
}

/// Resident memory now (`VmRSS`), in bytes.
fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line["VmRSS:".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kb * 1024)
}

fn rounds() -> usize {
    std::env::var("MUNCH_SOAK_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) { 2 } else { 12 })
}

#[test]
fn threads_of_matchers_sample_roll_back_and_fork_with_flat_memory() {
    let vocab = vocab();
    let compiled = Arc::new(compiled_set(&vocab));
    let run = |phase: u64, rounds: usize| {
        let handles: Vec<_> = (0..THREADS as u64)
            .map(|t| {
                let compiled = Arc::clone(&compiled);
                std::thread::spawn(move || drive(&compiled, phase * 1000 + t, rounds))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a soak thread panicked"))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    };
    // Warm-up: caches, thread-local scratch and the allocator's arenas reach their size.
    let warm = run(0, rounds().div_ceil(2));
    let after_warm_up = rss_bytes();
    let mut total = warm;
    for phase in 1..=3 {
        let r = run(phase, rounds());
        total = (total.0 + r.0, total.1 + r.1);
        eprintln!("soak: phase {phase}, RSS {:?}", rss_bytes());
    }
    let end = rss_bytes();
    eprintln!(
        "soak: {} steps, {} masks cross-checked, RSS after warm-up {:?}, at the end {:?}",
        total.0, total.1, after_warm_up, end
    );
    assert!(total.1 > 0, "no mask was cross-checked");
    if let (Some(warm), Some(end)) = (after_warm_up, end) {
        // Three times as many steps again as the warm-up: a leak of even a few hundred bytes per
        // step would show; allocator noise stays far below 64 MiB.
        assert!(
            end <= warm + (64 << 20),
            "resident memory grew from {warm} to {end} bytes"
        );
    }
}
