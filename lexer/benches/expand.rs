//! `TokenClasses::expand` on Llama 3's 128k vocabulary (fetched into the cache on first use),
//! with the classes of a JSON lexer written out here (SynCode's JSON terminals).
//!
//! Sets measured: no class, a handful of large classes, every class but those, every class, a
//! random half, and two realistic ones: the classes alive from the start state (where a JSON
//! value begins) and from inside a string; and `expand_cached` on a repeated set and on two
//! sets one class apart.
//!
//! ```text
//! cargo bench -p munch-lexer --bench expand
//! ```

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use munch_lexer::dfa::{Lexer, LexerConfig, TerminalSpec};
use munch_lexer::spans::{ClassId, ClassSet, ExpandCache, LexPoint, SpansConfig, TokenSpans};
use munch_lexer::vocab::Vocabulary;

fn json_lexer() -> Lexer {
    let terms: &[(&str, &str, bool, bool)] = &[
        ("LBRACE", r"\{", true, false),
        ("RBRACE", r"\}", true, false),
        ("LSQB", r"\[", true, false),
        ("RSQB", r"\]", true, false),
        ("COLON", ":", true, false),
        ("COMMA", ",", true, false),
        ("TRUE", "true", true, false),
        ("FALSE", "false", true, false),
        ("NULL", "null", true, false),
        (
            "STRING",
            r#""(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*""#,
            false,
            false,
        ),
        (
            "NUMBER",
            r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?",
            false,
            false,
        ),
        ("WS", r"[ \t\n\r]+", false, true),
    ];
    let specs: Vec<TerminalSpec> = terms
        .iter()
        .map(|&(name, re, is_literal, ignored)| TerminalSpec {
            name: name.to_string(),
            hir: Some(regex_syntax::parse(re).expect("JSON patterns parse")),
            is_literal,
            priority: 0,
            ignored,
        })
        .collect();
    Lexer::new(&specs, &LexerConfig::default()).expect("JSON lexer builds")
}

fn bench_expand(c: &mut Criterion) {
    let vocab = Vocabulary::load("llama3").expect("llama3 tokenizer (fetched into the cache)");
    let lexer = json_lexer();
    let spans = TokenSpans::build(&lexer, &vocab, &SpansConfig::default()).expect("spans build");
    let classes = spans.classes();
    let n = classes.len();
    eprintln!(
        "llama3 × JSON lexer: {n} classes of {} text tokens",
        classes.token_len()
    );

    // The classes with the most members are the ones a real mask costs most on.
    let mut by_size: Vec<usize> = (0..n).collect();
    by_size.sort_by_key(|&c| std::cmp::Reverse(classes.members(ClassId::from_usize(c)).len()));
    let few: Vec<usize> = by_size
        .iter()
        .copied()
        .skip(3)
        .step_by(n / 8 + 1)
        .take(8)
        .collect();

    let empty = ClassSet::new(n);
    let mut handful = ClassSet::new(n);
    handful.extend(few.iter().map(|&c| ClassId::from_usize(c)));
    let mut all_but = ClassSet::full(n);
    all_but.difference_with(&handful);
    let all = ClassSet::full(n);
    let mut half = ClassSet::new(n);
    // A fixed pseudo-random half (splitmix64).
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    for i in 0..n {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        if (z ^ (z >> 31)) & 1 == 1 {
            half.insert(ClassId::from_usize(i));
        }
    }

    // Realistic masks: the classes alive from the start state (where a value begins) and from
    // inside a string (where almost everything goes on).
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
    let at_start = alive_from(lexer.start());
    let in_string = alive_from(lexer.next(lexer.start(), b'"'));
    eprintln!(
        "alive from the start state: {} classes; inside a string: {}",
        at_start.count(),
        in_string.count()
    );

    let mut words = vec![0u32; classes.word_len()];
    let mut group = c.benchmark_group("expand_llama3_json");
    for (name, set) in [
        ("empty", &empty),
        ("handful", &handful),
        ("all_but_handful", &all_but),
        ("all", &all),
        ("random_half", &half),
        ("alive_at_start", &at_start),
        ("alive_in_string", &in_string),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| classes.expand(black_box(set), black_box(&mut words)))
        });
    }
    // The cache: a set met again (one copy of the words), and two sets one class apart met in
    // turn (copy and toggle one class).
    let mut cache = ExpandCache::new();
    group.bench_function("cached_repeat", |b| {
        b.iter(|| classes.expand_cached(&mut cache, black_box(&at_start), black_box(&mut words)))
    });
    let mut neighbour = at_start.clone();
    let flip = neighbour.iter().next().unwrap_or(ClassId::from_usize(0));
    neighbour.remove(flip);
    let mut cache = ExpandCache::with_capacity(1);
    let mut turn = false;
    group.bench_function("cached_neighbour", |b| {
        b.iter(|| {
            turn = !turn;
            let set = if turn { &at_start } else { &neighbour };
            classes.expand_cached(&mut cache, black_box(set), black_box(&mut words))
        })
    });
    group.finish();
}

criterion_group!(benches, bench_expand);
criterion_main!(benches);
