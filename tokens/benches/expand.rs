//! `TokenClasses::expand` on Llama 3's 128k and Gemma 3's 262k vocabularies (fetched into the
//! cache on first use), with the classes of two lexers written out here: SynCode's JSON
//! terminals (a few hundred classes) and SynCode's Java terminals (thousands of classes: its
//! keywords split the identifier-like tokens). The Java grammar lives in munch-grammars, which
//! this crate cannot depend on, so its terminals are copied below (lazy `.*?` patterns written
//! as the equivalent negated classes).
//!
//! Sets measured per (vocabulary, lexer): no class, every class, seeded random sets of 1%, 10%,
//! 50%, 90% and 99% of the classes, and realistic ones: the classes alive from the start state
//! (where a value or a statement begins), from inside a string, and (Java) from inside an
//! identifier. On Llama 3 × JSON also `expand_cached` on a repeated set and on two sets one
//! class apart. The setup prints the class counts and `TokenSpans::build`'s time.
//!
//! ```text
//! cargo bench -p munch-tokens --bench expand
//! cargo bench -p munch-tokens --bench expand -- llama3_java   # one case
//! EXPAND_MIN_ONLY=1 cargo bench -p munch-tokens --bench expand  # minimum per call only
//! EXPAND_PROFILE=llama3_java_random_50 perf record target/release/deps/expand-… --bench
//! ```
//!
//! `EXPAND_PROFILE=<vocabulary>_<grammar>_<set>` expands that one set for 3 s and measures
//! nothing, for a profiler.
//!
//! `EXPAND_SETS=<file>[:<file>…]` measures instead the class sets a masker produced along real
//! texts, in order, with `expand` and `expand_cached` (files written by
//! `cargo run --release -p munch-masker-trie --example class_sets -- java llama3 OUT FILE…`).
//! `EXPAND_PASSES=<n>` passes over each sequence (default 5; each step keeps its fastest);
//! `EXPAND_CACHE=<n>` gives `expand_cached` a cache of `n` entries (default `ExpandCache::new`);
//! `EXPAND_ANALYZE=1` also prints how far the sets lie from the lexer's alive sets and from
//! recent sets, and the slowest steps.
//!
//! Each case also prints the minimum (and median) time per call over batches of calls: the
//! minimum is the figure least moved by other processes on a shared machine.

use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use munch_lexer::dfa::{Lexer, LexerConfig, TerminalSpec};
use munch_testkit::lexers;
use munch_tokens::{
    ClassId, ClassSet, ExpandCache, LexPoint, SpansConfig, TokenClasses, TokenSpans,
};
use munch_vocab::stats::{checked_nearest_rank, nearest_rank};
use munch_vocab::Vocabulary;
use regex_syntax::hir::{Capture, Hir, HirKind, Repetition};

/// `(name, pattern, is_literal, ignored)`.
type Terminal<'a> = (&'a str, String, bool, bool);

fn lexer(terms: &[Terminal<'_>]) -> Lexer {
    let specs: Vec<TerminalSpec> = terms
        .iter()
        .map(|(name, re, is_literal, ignored)| TerminalSpec {
            is_literal: *is_literal,
            ignored: *ignored,
            ..lexers::re(name, re)
        })
        .collect();
    lexers::build(&specs)
}

fn regex(name: &str, re: &str, ignored: bool) -> Terminal<'static> {
    (leak(name), re.to_string(), false, ignored)
}

fn literal(text: &str) -> Terminal<'static> {
    (leak(text), regex_syntax::escape(text), true, false)
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

fn json_lexer() -> Lexer {
    let mut terms: Vec<Terminal<'_>> = ["{", "}", "[", "]", ":", ",", "true", "false", "null"]
        .iter()
        .map(|t| literal(t))
        .collect();
    terms.push(regex(
        "STRING",
        r#""(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*""#,
        false,
    ));
    terms.push(regex(
        "NUMBER",
        r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?",
        false,
    ));
    terms.push(regex("WS", r"[ \t\n\r]+", true));
    lexer(&terms)
}

/// SynCode's `java.lark` terminals: its string literals, CNAME, DIGIT, character and string
/// literals, and the ignored whitespace and comments.
fn java_lexer() -> Lexer {
    #[rustfmt::skip]
    const LITERALS: &[&str] = &[
        "!", "!=", "%", "%=", "&", "&&", "&=", "(", ")", "*", "*=", "+", "++", "+=", ",", "-",
        "--", "-=", "->", ".", "/", "/=", ":", ";", "<", "<<", "<<=", "<=", "=", "==", ">", ">=",
        ">>", ">>=", ">>>", ">>>=", "?", "[", "]", "^", "^=", "{", "|", "|=", "||", "}", "~",
        "abstract", "boolean", "break", "byte", "case", "catch", "char", "class", "continue",
        "default", "do", "double", "else", "extends", "false", "final", "finally", "float", "for",
        "if", "implements", "import", "instanceof", "int", "interface", "long", "native", "new",
        "null", "package", "private", "protected", "public", "return", "short", "static", "super",
        "switch", "synchronized", "this", "throw", "throws", "transient", "true", "try",
        "volatile", "while",
    ];
    let mut terms: Vec<Terminal<'_>> = LITERALS.iter().map(|t| literal(t)).collect();
    terms.push(regex("CNAME", r"[A-Za-z_][A-Za-z0-9_]*", false));
    terms.push(regex("DIGIT", r"[0-9]", false));
    terms.push(regex(
        "CHARACTER",
        r#"'(?:[^'\r\n\\]|\\(?:[btnfr"'\\0-7]|[0-3]?[0-7]{2})|\\u[0-9a-fA-F]{4})'"#,
        false,
    ));
    terms.push(regex("STRING", r#""[^"\n]*""#, false));
    terms.push(regex("WS", r"[ \t\f\r\n]+", true));
    terms.push(regex("LINE_COMMENT", r"//[^\n\r]*", true));
    terms.push(regex("BLOCK_COMMENT", r"/\*(?:[^*]|\*+[^*/])*\*+/", true));
    lexer(&terms)
}

/// A seeded pseudo-random set holding each class with probability `percent`% (splitmix64).
fn random_set(n: usize, percent: u64, seed: u64) -> ClassSet {
    let mut set = ClassSet::new(n);
    let mut x = seed;
    for i in 0..n {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        if (z ^ (z >> 31)) % 100 < percent {
            set.insert(ClassId::from_usize(i));
        }
    }
    set
}

fn bench_case(c: &mut Criterion, vocab: &Vocabulary, vocab_name: &str, grammar: &str) {
    let lexer = match grammar {
        "json" => json_lexer(),
        _ => java_lexer(),
    };
    let started = Instant::now();
    let spans = TokenSpans::build(&lexer, vocab, &SpansConfig::default()).expect("spans build");
    let build = started.elapsed();
    let classes = spans.classes();
    let n = classes.len();

    // Realistic masks: the classes alive from the start state, from inside a string (where
    // almost everything goes on) and from inside an identifier.
    let alive_from = |state| {
        let p = spans
            .point(LexPoint {
                state,
                inhibitor: None,
            })
            .expect("a live state is a point");
        let mut set = ClassSet::new(n);
        set.extend(
            (0..n)
                .map(ClassId::from_usize)
                .filter(|&c| spans.span_of(p, c).is_some()),
        );
        set
    };
    let mut sets = vec![
        ("empty", ClassSet::new(n)),
        ("all", ClassSet::full(n)),
        ("random_1", random_set(n, 1, 1)),
        ("random_10", random_set(n, 10, 2)),
        ("random_50", random_set(n, 50, 3)),
        ("random_90", random_set(n, 90, 4)),
        ("random_99", random_set(n, 99, 5)),
        ("alive_at_start", alive_from(lexer.start())),
        (
            "alive_in_string",
            alive_from(lexer.next(lexer.start(), b'"')),
        ),
    ];
    if grammar == "java" {
        sets.push((
            "alive_in_ident",
            alive_from(lexer.next(lexer.start(), b'a')),
        ));
    }
    eprintln!(
        "{vocab_name} × {grammar}: {n} classes of {} text tokens, build {build:.2?}, classes {:.1} MiB; {}",
        classes.token_len(),
        classes.heap_bytes() as f64 / (1 << 20) as f64,
        sets.iter()
            .map(|(name, set)| format!("{name} {}", set.count()))
            .collect::<Vec<_>>()
            .join(", ")
    );

    let mut words = vec![0u32; classes.word_len()];
    if let Ok(want) = std::env::var("EXPAND_PROFILE") {
        for (name, set) in &sets {
            if want == format!("{vocab_name}_{grammar}_{name}") {
                let started = Instant::now();
                while started.elapsed() < Duration::from_secs(3) {
                    for _ in 0..1000 {
                        classes.expand(black_box(set), black_box(&mut words));
                    }
                }
            }
        }
        return;
    }
    // The minimum per call over batches, beside criterion's medians: on a shared machine the
    // minimum is the figure least moved by other processes.
    let mut line =
        format!("{vocab_name} × {grammar} ns/call, min (median) of {BATCHES} batches of {BATCH}:");
    for (name, set) in &sets {
        let (min, median) = per_call(|| classes.expand(black_box(set), black_box(&mut words)));
        line += &format!(" {name} {min:.0} ({median:.0})");
    }
    eprintln!("{line}");
    if std::env::var_os("EXPAND_MIN_ONLY").is_some() {
        return;
    }
    let mut group = c.benchmark_group(format!("expand_{vocab_name}_{grammar}"));
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    for (name, set) in &sets {
        group.bench_function(*name, |b| {
            b.iter(|| classes.expand(black_box(set), black_box(&mut words)))
        });
    }
    if vocab_name == "llama3" && grammar == "json" {
        // The cache: a set met again (one copy of the words), and two sets one class apart
        // met in turn (copy and toggle one class).
        let at_start = &sets[7].1;
        let mut cache = ExpandCache::new();
        group.bench_function("cached_repeat", |b| {
            b.iter(|| classes.expand_cached(&mut cache, black_box(at_start), black_box(&mut words)))
        });
        let mut neighbour = at_start.clone();
        let flip = neighbour.iter().next().unwrap_or(ClassId::from_usize(0));
        neighbour.remove(flip);
        let mut cache = ExpandCache::with_capacity(1);
        let mut turn = false;
        group.bench_function("cached_neighbour", |b| {
            b.iter(|| {
                turn = !turn;
                let set = if turn { at_start } else { &neighbour };
                classes.expand_cached(&mut cache, black_box(set), black_box(&mut words))
            })
        });
    }
    group.finish();
}

const BATCHES: usize = 400;
const BATCH: u32 = 8;

/// The minimum and the median time per call of `f`, in ns, over [`BATCHES`] timed batches of
/// [`BATCH`] calls (after one batch of warm-up).
fn per_call(mut f: impl FnMut()) -> (f64, f64) {
    let mut times: Vec<f64> = (0..=BATCHES)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..BATCH {
                f();
            }
            started.elapsed().as_nanos() as f64 / f64::from(BATCH)
        })
        .skip(1)
        .collect();
    times.sort_by(f64::total_cmp);
    (times[0], times[times.len() / 2])
}

fn bench_expand(c: &mut Criterion) {
    if let Some(path) = std::env::var_os("EXPAND_SETS") {
        for path in std::env::split_paths(&path) {
            bench_recorded(&path);
        }
        return;
    }
    for vocab_name in ["llama3", "gemma3"] {
        let vocab = Vocabulary::load(vocab_name).expect("tokenizer (fetched into the cache)");
        for grammar in ["json", "java"] {
            bench_case(c, &vocab, vocab_name, grammar);
        }
    }
}

/// A little-endian reader over a recorded file; a malformed file is the bench's own input
/// gone wrong, so it panics with the offset.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let at = self.at;
        assert!(
            at + n <= self.bytes.len(),
            "recorded file ends at byte {at}"
        );
        self.at += n;
        &self.bytes[at..at + n]
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().expect("4 bytes"))
    }

    fn string(&mut self) -> String {
        let n = self.u32() as usize;
        String::from_utf8(self.take(n).to_vec()).expect("UTF-8 string")
    }
}

/// `EXPAND_SETS=<file>`: the class sets a masker produced along texts (written by
/// `maskers/trie/examples/class_sets.rs`), expanded in order with `expand` and with
/// `expand_cached`; prints min/median/p99/max ns per call over the steps (each step's fastest
/// of [`PASSES`] passes over the whole sequence, a fresh cache per pass; the timer's own cost,
/// printed, is included).
fn bench_recorded(path: &std::path::Path) {
    let bytes = std::fs::read(path).expect("EXPAND_SETS file");
    let mut r = Reader {
        bytes: &bytes,
        at: 0,
    };
    assert_eq!(r.take(8), b"MUNCHCS1", "not a class-sets file");
    let tokenizer = r.string();
    let (vocab_len, class_len, terminal_len) = (r.u32(), r.u32(), r.u32());
    let mut specs = Vec::new();
    for _ in 0..terminal_len {
        let flags = r.take(1)[0];
        let priority = r.u32() as i32;
        let name = r.string();
        let pattern = r.string();
        let debug = r.string();
        let hir = (flags & 1 != 0).then(|| reparse(&pattern, &debug));
        specs.push(TerminalSpec {
            name,
            hir,
            is_literal: flags & 2 != 0,
            priority,
            ignored: flags & 4 != 0,
        });
    }
    let reps: Vec<u32> = (0..class_len).map(|_| r.u32()).collect();
    let step_len = r.u32() as usize;
    let set_words = (class_len as usize).div_ceil(64);
    let sets: Vec<ClassSet> = (0..step_len)
        .map(|_| {
            let mut set = ClassSet::new(class_len as usize);
            for i in 0..set_words {
                let w = u64::from_le_bytes(r.take(8).try_into().expect("8 bytes"));
                set.extend(
                    (0..64)
                        .filter(|b| w >> b & 1 != 0)
                        .map(|b| ClassId::from_usize(i * 64 + b)),
                );
            }
            set
        })
        .collect();

    let vocab = Vocabulary::load(&tokenizer).expect("tokenizer (fetched into the cache)");
    assert_eq!(vocab.len(), vocab_len as usize, "another vocabulary");
    let lexer = Lexer::new(&specs, &LexerConfig::default()).expect("recorded lexer builds");
    let started = Instant::now();
    let classes = TokenClasses::build(&lexer, &vocab, &SpansConfig::default()).expect("classes");
    let build = started.elapsed();
    let same = classes.len() == class_len as usize
        && (0..classes.len())
            .all(|c| classes.representative(ClassId::from_usize(c)).as_u32() == reps[c]);
    assert!(same, "the rebuilt classes differ from the recorded ones");
    let mean = sets.iter().map(|s| s.count()).sum::<usize>() as f64 / step_len.max(1) as f64;
    eprintln!(
        "{}: {tokenizer}, {class_len} classes, {step_len} steps, {mean:.0} classes per set, build {build:.2?}, classes {:.1} MiB",
        path.display(),
        classes.heap_bytes() as f64 / (1 << 20) as f64,
    );

    if std::env::var_os("EXPAND_ANALYZE").is_some() {
        analyze(&lexer, &vocab, &classes, &sets);
    }
    let mut words = vec![0u32; classes.word_len()];
    let timer = {
        let mut times = vec![f64::INFINITY; 10_000];
        for _ in 0..PASSES {
            for t in &mut times {
                let at = Instant::now();
                black_box(&words);
                *t = t.min(at.elapsed().as_nanos() as f64);
            }
        }
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    let passes: usize = std::env::var("EXPAND_PASSES")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(PASSES);
    for cached in [false, true] {
        let mut times = vec![f64::INFINITY; step_len];
        for _ in 0..passes {
            let mut cache = match std::env::var("EXPAND_CACHE")
                .ok()
                .and_then(|n| n.parse().ok())
            {
                Some(n) => ExpandCache::with_capacity(n),
                None => ExpandCache::new(),
            };
            for (set, t) in sets.iter().zip(&mut times) {
                let at = Instant::now();
                if cached {
                    classes.expand_cached(&mut cache, black_box(set), black_box(&mut words));
                } else {
                    classes.expand(black_box(set), black_box(&mut words));
                }
                *t = t.min(at.elapsed().as_nanos() as f64);
            }
        }
        if std::env::var_os("EXPAND_ANALYZE").is_some() {
            // The slowest steps, with the set's change from the step before.
            let mut order: Vec<usize> = (0..step_len).collect();
            order.sort_by(|&a, &b| times[b].total_cmp(&times[a]));
            for &i in order.iter().take(12) {
                let prev = if i > 0 {
                    sets[i - 1].clone()
                } else {
                    ClassSet::new(sets[i].len())
                };
                let mut d = sets[i].clone();
                d.difference_with(&prev);
                let mut e = prev.clone();
                e.difference_with(&sets[i]);
                eprintln!(
                    "    step {i}: {:.0} ns, {} classes, +{} -{} vs previous",
                    times[i],
                    sets[i].count(),
                    d.count(),
                    e.count()
                );
            }
        }
        times.sort_by(f64::total_cmp);
        let at = |basis_points| nearest_rank(&times, basis_points);
        eprintln!(
            "  {}: ns/call over the steps (fastest of {passes} passes; timer {timer:.0}): min {:.0} median {:.0} mean {:.0} p90 {:.0} p99 {:.0} max {:.0}",
            if cached { "expand_cached" } else { "expand" },
            at(0),
            at(5000),
            times.iter().sum::<f64>() / times.len().max(1) as f64,
            at(9000),
            at(9900),
            at(10_000),
        );
    }
}

/// `pattern` (regex-syntax's printing of a HIR) parsed back into the HIR whose `Debug` is
/// `debug`. The printer writes a repetition of a repetition without a group (`(?:x+)?` as
/// `x+?`, which parses as a lazy `x+`), so each lazy repetition may stand for an optional
/// one around a greedy one: the combinations are tried until the `Debug` matches.
fn reparse(pattern: &str, debug: &str) -> Hir {
    let hir = regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(pattern)
        .expect("recorded pattern parses");
    let lazy = count_lazy(&hir);
    assert!(lazy < 16, "too many lazy repetitions in {pattern}");
    (0u32..1 << lazy)
        .map(|choice| rewrite_lazy(&hir, choice, &mut 0))
        .find(|h| format!("{h:?}") == debug)
        .unwrap_or_else(|| panic!("no reading of {pattern} gives the recorded HIR"))
}

fn count_lazy(hir: &Hir) -> u32 {
    match hir.kind() {
        HirKind::Repetition(r) => u32::from(!r.greedy) + count_lazy(&r.sub),
        HirKind::Capture(c) => count_lazy(&c.sub),
        HirKind::Concat(v) | HirKind::Alternation(v) => v.iter().map(count_lazy).sum(),
        _ => 0,
    }
}

/// `hir` with the lazy repetitions whose bit is set in `choice` (numbered in pre-order from
/// `*next`) read as `(?:sub{min,max})?`.
fn rewrite_lazy(hir: &Hir, choice: u32, next: &mut u32) -> Hir {
    match hir.kind() {
        HirKind::Repetition(r) => {
            let flip = !r.greedy && choice & (1 << *next) != 0;
            *next += u32::from(!r.greedy);
            let sub = Box::new(rewrite_lazy(&r.sub, choice, next));
            if flip {
                let inner = Hir::repetition(Repetition {
                    greedy: true,
                    sub,
                    ..r.clone()
                });
                Hir::repetition(Repetition {
                    min: 0,
                    max: Some(1),
                    greedy: true,
                    sub: Box::new(inner),
                })
            } else {
                Hir::repetition(Repetition { sub, ..r.clone() })
            }
        }
        HirKind::Capture(c) => Hir::capture(Capture {
            sub: Box::new(rewrite_lazy(&c.sub, choice, next)),
            ..c.clone()
        }),
        HirKind::Concat(v) => {
            Hir::concat(v.iter().map(|h| rewrite_lazy(h, choice, next)).collect())
        }
        HirKind::Alternation(v) => {
            Hir::alternation(v.iter().map(|h| rewrite_lazy(h, choice, next)).collect())
        }
        _ => hir.clone(),
    }
}

/// `EXPAND_ANALYZE`: how far the recorded sets lie from the sets alive at a lexer point
/// (the hints the expansion precomputes bases from), from every class or none, and from the
/// nearest of the last `k` sets (what an [`ExpandCache`] of `k` entries could start from), in
/// scattered word runs per class (each class's words, capped at a pass of about words / 24).
fn analyze(lexer: &Lexer, vocab: &Vocabulary, classes: &TokenClasses, sets: &[ClassSet]) {
    let spans = TokenSpans::build(lexer, vocab, &SpansConfig::default()).expect("spans");
    let n = classes.len();
    let pass = (classes.word_len() as u64 / 24).max(1);
    let runs: Vec<u64> = (0..n)
        .map(|c| {
            let mut w: Vec<u32> = classes
                .members(ClassId::from_usize(c))
                .iter()
                .map(|t| t.as_u32() / 32)
                .collect();
            w.dedup();
            (w.len() as u64).min(pass)
        })
        .collect();
    let mut alive: Vec<ClassSet> = Vec::new();
    for &p in spans.points().iter().filter(|p| p.inhibitor.is_none()) {
        let id = spans.point(p).expect("a point");
        let mut set = ClassSet::new(n);
        set.extend(
            (0..n)
                .map(ClassId::from_usize)
                .filter(|&c| spans.span_of(id, c).is_some()),
        );
        if !alive.contains(&set) {
            alive.push(set);
        }
    }
    let distance = |a: &ClassSet, b: &ClassSet| -> u64 {
        let mut d = a.clone();
        d.difference_with(b);
        let mut e = b.clone();
        e.difference_with(a);
        d.iter().chain(e.iter()).map(|c| runs[c.as_usize()]).sum()
    };
    let report = |label: &str, mut d: Vec<u64>| {
        d.sort_unstable();
        let at = |basis_points| checked_nearest_rank(&d, basis_points).unwrap_or(0);
        eprintln!(
            "  {label}: runs p50 {} p90 {} p99 {} max {} (over {} sets)",
            at(5000),
            at(9000),
            at(9900),
            at(10_000),
            d.len()
        );
    };
    let (empty, full) = (ClassSet::new(n), ClassSet::full(n));
    eprintln!(
        "  {} alive sets of {:?} classes",
        alive.len(),
        alive.iter().map(|a| a.count()).collect::<Vec<_>>()
    );
    let scratch = |s: &ClassSet| distance(s, &empty).min(distance(s, &full));
    report(
        "from every class or none",
        sets.iter().map(scratch).collect(),
    );
    report(
        "from the nearest alive set",
        sets.iter()
            .map(|s| {
                alive
                    .iter()
                    .map(|a| distance(s, a))
                    .min()
                    .unwrap_or(u64::MAX)
            })
            .collect(),
    );
    for k in [8, 32] {
        // Least recently used entries; a set met again is a hit.
        let mut recent: Vec<(ClassSet, usize)> = Vec::new();
        let mut misses = Vec::new();
        for (i, s) in sets.iter().enumerate() {
            if let Some(e) = recent.iter_mut().find(|e| e.0 == *s) {
                e.1 = i;
                continue;
            }
            let near = recent.iter().map(|e| distance(s, &e.0)).min();
            misses.push(near.unwrap_or(u64::MAX).min(scratch(s)));
            if recent.len() < k {
                recent.push((s.clone(), i));
            } else if let Some(e) = recent.iter_mut().min_by_key(|e| e.1) {
                *e = (s.clone(), i);
            }
        }
        report(
            &format!("misses of the last {k} sets, from the nearest or scratch"),
            misses,
        );
    }
}

/// Passes over a recorded sequence (`EXPAND_PASSES` overrides); each step keeps its fastest.
const PASSES: usize = 5;

criterion_group!(benches, bench_expand);
criterion_main!(benches);
