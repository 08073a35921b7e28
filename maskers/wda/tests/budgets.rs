//! Every budget of `WdaConfig` stops the build with a typed error naming it; `max_memory`
//! holds (the tables a build reports never exceed it).

mod common;

use std::sync::Arc;

use common::*;
use munch_glr::lr::ClassTables;
use munch_glr::mask::Oracle;
use munch_glr::parser::Parser;
use munch_masker_wda::{LazyWdaMasker, WdaBudget, WdaConfig, WdaMasker};
use munch_testkit::grammar::builtin;
use munch_tokens::{SpansBudget, SpansConfig, TokenSpans};
use munch_vocab::Vocabulary;

fn build(config: &WdaConfig) -> Result<WdaMasker, munch_masker_wda::WdaBuildError> {
    let p = builtin("json");
    WdaMasker::new(p, synthetic_vocab(&[]), config)
}

fn expect_budget(config: WdaConfig, budget: WdaBudget, limit: u64) {
    let e = build(&config).err().expect("the build must stop");
    assert_eq!(e.exceeded(), Some((budget, limit)), "{e}");
    assert!(e.to_string().contains(budget.name()), "{e}");
    assert!(e.spans_error().is_none());
}

#[test]
fn the_defaults_build_json() {
    let m = build(&WdaConfig::default()).unwrap();
    let s = m.stats();
    assert!(s.states > 10 && s.edges >= s.states && s.distinct_weights > 1);
    assert!(s.token_classes >= s.blocks && s.blocks > 0);
    assert!(s.heap_bytes > 0 && s.build_s > 0.0);
}

#[test]
fn states() {
    expect_budget(
        WdaConfig {
            max_states: 5,
            ..WdaConfig::default()
        },
        WdaBudget::States,
        5,
    );
}

#[test]
fn edges() {
    expect_budget(
        WdaConfig {
            max_edges: 20,
            ..WdaConfig::default()
        },
        WdaBudget::Edges,
        20,
    );
}

#[test]
fn memory() {
    expect_budget(
        WdaConfig {
            max_memory: 4096,
            ..WdaConfig::default()
        },
        WdaBudget::Memory,
        4096,
    );
}

#[test]
fn continuations() {
    expect_budget(
        WdaConfig {
            max_continuations: 3,
            ..WdaConfig::default()
        },
        WdaBudget::Continuations,
        3,
    );
}

#[test]
fn token_spans_budgets_pass_through() {
    let mut config = WdaConfig::default();
    config.spans.max_classes = 2;
    let e = build(&config).err().expect("the spans build must stop");
    assert!(e.spans_error().is_some(), "{e}");
    assert_eq!(e.exceeded(), None);
    assert!(e.to_string().contains("max_classes"), "{e}");
}

/// `max_memory` holds on `parser` over `vocab`: the least budget that builds the tables (found
/// by bisection; every budget tried either builds tables within it or is refused naming it and
/// its value) is at least their `heap_bytes`, and a budget of one byte less than either is
/// refused. The spans are built on one thread, so that the most they hold at once (part of
/// what `max_memory` bounds) is the same from run to run.
fn memory_budget_holds(parser: Arc<Parser>, vocab: Arc<Vocabulary>) {
    let build = |max_memory: usize| {
        let mut config = WdaConfig {
            max_memory,
            ..WdaConfig::default()
        };
        config.spans.threads = 1;
        WdaMasker::new(Arc::clone(&parser), Arc::clone(&vocab), &config).map(|m| m.stats())
    };
    let refused = |max_memory: usize| {
        let e = build(max_memory).expect_err("a budget below the build's bytes");
        assert_eq!(
            e.exceeded(),
            Some((WdaBudget::Memory, max_memory as u64)),
            "{e}"
        );
        assert!(e.to_string().contains(&format!("{max_memory}")), "{e}");
    };
    let heap = build(WdaConfig::default().max_memory).unwrap().heap_bytes;
    // `lo` is refused, `hi` builds.
    let (mut lo, mut hi) = (0, WdaConfig::default().max_memory);
    refused(lo);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match build(mid) {
            Ok(stats) => {
                assert!(stats.heap_bytes <= mid, "{stats:?} over {mid}");
                hi = mid;
            }
            Err(_) => {
                refused(mid);
                lo = mid;
            }
        }
    }
    assert!(
        heap > 0 && heap <= hi,
        "tables of {heap} bytes built within {hi}"
    );
    refused(hi - 1);
    refused(heap - 1);
}

#[test]
fn memory_budget_holds_on_json() {
    memory_budget_holds(builtin("json"), synthetic_vocab(&[]));
}

/// A dot-heavy terminal: thousands of lexer states, so the token spans are most of the bytes.
#[test]
fn memory_budget_holds_on_a_dot_heavy_terminal() {
    let parser = munch_testkit::grammar::parser("start: A\nA: /[^x]{0,300}x[^y]{0,300}y/\n");
    memory_budget_holds(parser, synthetic_vocab(&[b"xy", b"ab", b"yx", b"x y"]));
}

/// The dot-heavy terminal over a vocabulary whose tokens walk deep into it: the token spans'
/// build holds more at its peak than the tables the masker keeps.
fn dot_heavy() -> (Arc<Parser>, Arc<Vocabulary>) {
    let parser = munch_testkit::grammar::parser("start: A\nA: /[^x]{0,300}x[^y]{0,300}y/\n");
    let vocab = synthetic_vocab(&[
        b"aaaaaaaa",
        b"ab ab ab",
        b"xaaaa",
        b"aaaay",
        b"\xc3\xa9\xc3",
    ]);
    (parser, vocab)
}

/// The token spans' build is held to `max_memory` too (everything its walk allocates is
/// charged before it is allocated): below what it needs the build is refused naming
/// `max_memory` and its value, or `max_bytes` when the spans' own budget is the lower; at what
/// it needs the masker builds, and its masks equal the oracle's.
#[test]
fn the_token_spans_build_is_held_to_max_memory() {
    let (parser, vocab) = dot_heavy();
    let one_thread = SpansConfig {
        threads: 1,
        ..SpansConfig::default()
    };
    // The masker's spans: lexemes told apart by the classes of their terminals.
    let classes = ClassTables::new(Arc::clone(&parser));
    let key = |t| classes.lexeme_key(t);
    let spans = TokenSpans::build_keyed(parser.lexer(), &vocab, &one_thread, &key).unwrap();
    let needed = spans.build_bytes();
    assert!(
        needed > spans.heap_bytes(),
        "{needed} {}",
        spans.heap_bytes()
    );
    let config = |max_memory: usize, max_bytes: usize| WdaConfig {
        max_memory,
        spans: SpansConfig {
            max_bytes,
            ..one_thread.clone()
        },
        ..WdaConfig::default()
    };
    let build =
        |config: &WdaConfig| WdaMasker::new(Arc::clone(&parser), Arc::clone(&vocab), config);
    let refused = |config: &WdaConfig| build(config).err().expect("below the spans' peak");

    let e = refused(&config(needed - 1, usize::MAX));
    assert_eq!(
        e.exceeded(),
        Some((WdaBudget::Memory, needed as u64 - 1)),
        "{e}"
    );
    assert!(e.to_string().contains(&format!("{} ", needed - 1)), "{e}");
    let e = refused(&config(usize::MAX, needed - 1));
    let spans_error = e.spans_error().expect("the spans' own budget");
    assert_eq!(spans_error.budget(), SpansBudget::Bytes);
    assert_eq!(spans_error.limit(), needed as u64 - 1);

    // Within budget (the later stages need a little more than the spans' peak here, or not).
    let budget = (2 * needed).max(
        WdaMasker::new(
            Arc::clone(&parser),
            Arc::clone(&vocab),
            &config(usize::MAX, usize::MAX),
        )
        .unwrap()
        .stats()
        .heap_bytes,
    );
    let wda = build(&config(budget, budget)).unwrap();
    assert!(wda.stats().heap_bytes <= budget);
    let oracle = Oracle::new(Arc::clone(&vocab));
    let text = format!("{}x{}y", "ab ".repeat(40), "é".repeat(30));
    assert!(teacher_forced(&wda, &oracle, &parser, &vocab, &text, 7) > 5);
}

/// A tokenizer file may name id 4,194,303 and hold a handful of tokens: the spans' per-token
/// tables are per text token, so the build takes the per-id tables once, not once per block of
/// lexer points (lexer states × vocabulary bits), and fits a small budget.
#[test]
fn sparse_token_ids_build_within_a_small_budget() {
    let parser = munch_testkit::grammar::parser("start: A\nA: /[^x]{0,300}x[^y]{0,300}y/\n");
    let vocab = munch_testkit::vocab::sparse(&["a", "b", "x", "y", " ", "ab", "xa", "\u{e9}"]);
    // As the front door sets it: one budget for the spans and the masker.
    let budget = 128 << 20;
    let mut config = WdaConfig {
        max_memory: budget,
        ..WdaConfig::default()
    };
    config.spans.max_bytes = budget;
    let wda = WdaMasker::new(Arc::clone(&parser), Arc::clone(&vocab), &config).unwrap();
    assert!(wda.stats().heap_bytes <= budget);
    let oracle = Oracle::new(Arc::clone(&vocab));
    assert!(teacher_forced(&wda, &oracle, &parser, &vocab, "ab abxa b y", 3) > 2);
}

/// The on-demand automaton is held to `max_memory` as a whole: below what its tables kept up
/// front need, plus the least cache (one mask's summaries, twice over), it is refused naming
/// `max_memory`; above, its cache gets half of what the tables leave (a mask may overshoot the
/// capacity by as much again before the cache is cleared), and its masks are the oracle's.
#[test]
fn the_lazy_automaton_is_held_to_max_memory() {
    let (parser, vocab) = dot_heavy();
    // The spans are built on one thread, so that the tables' capacities are the same from
    // build to build.
    let lazy = |max_memory: usize| {
        let mut config = WdaConfig {
            max_memory,
            ..WdaConfig::default()
        };
        config.spans.threads = 1;
        LazyWdaMasker::new(Arc::clone(&parser), Arc::clone(&vocab), &config)
    };
    let tables = lazy(WdaConfig::default().max_memory)
        .unwrap()
        .stats()
        .table_bytes;
    assert!(tables > 0);
    let least = tables + 2 * (4 << 20);
    let e = lazy(least - 1).err().expect("the tables leave too little");
    assert_eq!(
        e.exceeded(),
        Some((WdaBudget::Memory, least as u64 - 1)),
        "{e}"
    );
    for budget in [least, tables + (40 << 20)] {
        let m = lazy(budget).unwrap();
        let s = m.stats();
        assert_eq!(s.table_bytes, tables);
        assert_eq!(s.cache_capacity, (budget - tables) / 2);
        let oracle = Oracle::new(Arc::clone(&vocab));
        teacher_forced(&m, &oracle, &parser, &vocab, "ab ab aaaaaaaa xaaaay", 1);
    }
    // The default budget leaves the cache its default capacity.
    let s = lazy(WdaConfig::default().max_memory).unwrap().stats();
    assert_eq!(s.cache_capacity, WdaConfig::default().cache_capacity);
}
