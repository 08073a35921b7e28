//! The set-independent expansion route (`munch_tokens::deposit::Deposit::expand`) on
//! synthetic layouts the size of Llama 3's vocabulary (128,256 ids, 4,008 mask words), shaped
//! like the weighted automaton's Java blocks: sparse tokens in 82% of the 64-bit words (one to
//! seven each, 6,404 in all) or in 30% of them (2,239), in 1,000, 1,653 or 4,815 classes (one,
//! two or five 128-byte tables of class bytes) numbered by their lowest member as real classes
//! are (the route lays words out by the tables their tokens use from three tables on, which
//! pays only with such a numbering), and zero or three precomputed parts ORed in the same
//! loop. Each case prints its tables' size and the minimum and median
//! time per call over batches (the minimum is the figure least moved by a shared machine),
//! then criterion measures it.
//!
//! ```text
//! cargo bench -p munch-tokens --bench deposit
//! DEPOSIT_MIN_ONLY=1 cargo bench -p munch-tokens --bench deposit   # minimum per call only
//! DEPOSIT_PROFILE=classes_1653_fill_30_parts_3 perf record target/release/deps/deposit-… --bench
//! ```
//!
//! `DEPOSIT_PROFILE=<case>` expands that one case for 4 s and measures nothing, for a profiler.
//!
//! On a CPU without AVX-512 VBMI and BITALG and BMI2 the route does not exist; the bench says
//! so and measures nothing.

use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use munch_tokens::deposit::{self, Deposit};

/// Llama 3's vocabulary in `u32` mask words.
const WORD_LEN: usize = 128_256 / 32;

/// One layout: `(classes, percent of 64-bit words with sparse tokens, parts)`.
const CASES: &[(usize, u64, usize)] = &[
    (1_000, 82, 0),
    (1_653, 82, 0),
    (4_815, 82, 0),
    (1_653, 82, 3),
    (1_653, 30, 3),
    (4_815, 82, 3),
];

struct Case {
    name: String,
    deposit: Deposit,
    set: Vec<u64>,
    parts: Vec<Vec<u32>>,
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn case(classes: usize, fill: u64, part_len: usize) -> Option<Case> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut ids = Vec::new();
    for w in 0..WORD_LEN as u32 / 2 {
        if xorshift(&mut x) % 100 < fill {
            let n = 1 + xorshift(&mut x) % 7;
            let mut at: Vec<u32> = (0..n).map(|_| (xorshift(&mut x) % 64) as u32).collect();
            at.sort_unstable();
            at.dedup();
            ids.extend(at.into_iter().map(|a| w * 64 + a));
        }
    }
    // Classes numbered by their lowest member, as real ones are: a token opens the next class
    // (at the odds that open them all by the end) or joins one opened before.
    let mut tokens = Vec::with_capacity(ids.len());
    let mut opened = 0;
    for (i, &t) in ids.iter().enumerate() {
        let (left, to_open) = ((ids.len() - i) as u64, (classes - opened) as u64);
        let class = if opened == 0 || to_open >= left || xorshift(&mut x) % left < to_open {
            opened += 1;
            opened - 1
        } else {
            (xorshift(&mut x) % opened as u64) as usize
        };
        tokens.push((t, class as u32));
    }
    let deposit = Deposit::new(WORD_LEN, classes, &tokens)?;
    // About half of the classes.
    let set = (0..classes.div_ceil(64))
        .map(|_| xorshift(&mut x))
        .collect();
    let parts = (0..part_len)
        .map(|_| (0..WORD_LEN).map(|_| xorshift(&mut x) as u32).collect())
        .collect();
    Some(Case {
        name: format!(
            "classes_{classes}_fill_{fill}_parts_{part_len} ({} sparse tokens, {} KiB of tables)",
            tokens.len(),
            deposit.heap_bytes() / 1024
        ),
        deposit,
        set,
        parts,
    })
}

/// The minimum and median time per call over 400 batches of 8 calls.
fn min_median(c: &Case, words: &mut [u32]) -> (Duration, Duration) {
    let parts: Vec<&[u32]> = c.parts.iter().map(|p| &p[..]).collect();
    let mut per_call: Vec<Duration> = (0..400)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..8 {
                c.deposit.expand(black_box(&c.set), &parts, words);
            }
            t.elapsed() / 8
        })
        .collect();
    per_call.sort_unstable();
    (per_call[0], per_call[per_call.len() / 2])
}

fn bench(crit: &mut Criterion) {
    if !deposit::supported() {
        println!("this CPU lacks AVX-512 VBMI/BITALG or BMI2: no deposit route to measure");
        return;
    }
    let cases: Vec<Case> = CASES
        .iter()
        .filter_map(|&(classes, fill, parts)| case(classes, fill, parts))
        .collect();
    let mut words = vec![0u32; WORD_LEN];
    if let Ok(name) = std::env::var("DEPOSIT_PROFILE") {
        // One case for a profiler: expanded for 4 s, nothing measured.
        let Some(c) = cases.iter().find(|c| c.name.starts_with(&name)) else {
            println!("DEPOSIT_PROFILE={name}: no such case");
            return;
        };
        let parts: Vec<&[u32]> = c.parts.iter().map(|p| &p[..]).collect();
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(4) {
            for _ in 0..1000 {
                c.deposit.expand(black_box(&c.set), &parts, &mut words);
            }
        }
        return;
    }
    for c in &cases {
        let (min, median) = min_median(c, &mut words);
        println!(
            "deposit {}: {} ns/call min ({} median)",
            c.name,
            min.as_nanos(),
            median.as_nanos()
        );
    }
    if std::env::var_os("DEPOSIT_MIN_ONLY").is_some() {
        return;
    }
    let mut group = crit.benchmark_group("deposit");
    for c in &cases {
        let parts: Vec<&[u32]> = c.parts.iter().map(|p| &p[..]).collect();
        group.bench_function(c.name.split(' ').next().unwrap_or("case"), |b| {
            b.iter(|| c.deposit.expand(black_box(&c.set), &parts, &mut words))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
