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
//! cargo bench -p munch-lexer --bench expand
//! cargo bench -p munch-lexer --bench expand -- llama3_java   # one case
//! EXPAND_MIN_ONLY=1 cargo bench -p munch-lexer --bench expand  # minimum per call only
//! EXPAND_PROFILE=llama3_java_random_50 perf record target/release/deps/expand-… --bench
//! ```
//!
//! `EXPAND_PROFILE=<vocabulary>_<grammar>_<set>` expands that one set for 3 s and measures
//! nothing, for a profiler.
//!
//! Each case also prints the minimum (and median) time per call over batches of calls: the
//! minimum is the figure least moved by other processes on a shared machine.

use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use munch_lexer::dfa::{Lexer, LexerConfig, TerminalSpec};
use munch_lexer::spans::{ClassId, ClassSet, ExpandCache, LexPoint, SpansConfig, TokenSpans};
use munch_lexer::vocab::Vocabulary;

/// `(name, pattern, is_literal, ignored)`.
type Terminal<'a> = (&'a str, String, bool, bool);

fn lexer(terms: &[Terminal<'_>]) -> Lexer {
    let specs: Vec<TerminalSpec> = terms
        .iter()
        .map(|(name, re, is_literal, ignored)| TerminalSpec {
            name: name.to_string(),
            hir: Some(regex_syntax::parse(re).expect("bench patterns parse")),
            is_literal: *is_literal,
            priority: 0,
            ignored: *ignored,
        })
        .collect();
    Lexer::new(&specs, &LexerConfig::default()).expect("bench lexer builds")
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
    const LITERALS: &[&str] = &[
        "!",
        "!=",
        "%",
        "%=",
        "&",
        "&&",
        "&=",
        "(",
        ")",
        "*",
        "*=",
        "+",
        "++",
        "+=",
        ",",
        "-",
        "--",
        "-=",
        "->",
        ".",
        "/",
        "/=",
        ":",
        ";",
        "<",
        "<<",
        "<<=",
        "<=",
        "=",
        "==",
        ">",
        ">=",
        ">>",
        ">>=",
        ">>>",
        ">>>=",
        "?",
        "[",
        "]",
        "^",
        "^=",
        "{",
        "|",
        "|=",
        "||",
        "}",
        "~",
        "abstract",
        "boolean",
        "break",
        "byte",
        "case",
        "catch",
        "char",
        "class",
        "continue",
        "default",
        "do",
        "double",
        "else",
        "extends",
        "false",
        "final",
        "finally",
        "float",
        "for",
        "if",
        "implements",
        "import",
        "instanceof",
        "int",
        "interface",
        "long",
        "native",
        "new",
        "null",
        "package",
        "private",
        "protected",
        "public",
        "return",
        "short",
        "static",
        "super",
        "switch",
        "synchronized",
        "this",
        "throw",
        "throws",
        "transient",
        "true",
        "try",
        "volatile",
        "while",
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
    for vocab_name in ["llama3", "gemma3"] {
        let vocab = Vocabulary::load(vocab_name).expect("tokenizer (fetched into the cache)");
        for grammar in ["json", "java"] {
            bench_case(c, &vocab, vocab_name, grammar);
        }
    }
}

criterion_group!(benches, bench_expand);
criterion_main!(benches);
