//! Every build budget, when exceeded, stops the build with a typed error naming it; the table
//! budget holds (the bytes a build reports never exceed it); the stats of a build describe the
//! tables.

use std::sync::Arc;

use munch_glr::parser::Parser;
use munch_masker_spanner::{SpannerBuildErrorKind, SpannerConfig, SpannerMasker};
use munch_tokens::{SpansConfig, TokenSpans};
use munch_vocab::Vocabulary;

fn json() -> (Arc<Parser>, Arc<Vocabulary>) {
    let parser = munch_testkit::grammar::builtin("json");
    let vocab = munch_testkit::vocab::printable_and(&[
        "{\"", "\":", "\",", "}]", "true", "null,", "1.5", "[[", " \"",
    ]);
    (parser, vocab)
}

fn build_error(config: SpannerConfig) -> munch_masker_spanner::SpannerBuildError {
    let (parser, vocab) = json();
    SpannerMasker::new(parser, vocab, &config).expect_err("the budget is too small")
}

#[test]
fn each_budget_is_named_when_exceeded() {
    let e = build_error(SpannerConfig {
        max_sim_nodes: 1,
        ..SpannerConfig::default()
    });
    assert_eq!(e.budget_name(), "max_sim_nodes");
    assert!(e.to_string().contains("max_sim_nodes"), "{e}");

    let e = build_error(SpannerConfig {
        max_closures: 0,
        ..SpannerConfig::default()
    });
    assert_eq!(e.budget_name(), "max_closures");

    let e = build_error(SpannerConfig {
        max_table_bytes: 100,
        ..SpannerConfig::default()
    });
    assert_eq!(e.budget_name(), "max_table_bytes");
    assert!(matches!(
        e.kind(),
        SpannerBuildErrorKind::Budget { limit: 100, .. }
    ));

    let e = build_error(SpannerConfig {
        spans: SpansConfig {
            max_classes: 1,
            ..SpansConfig::default()
        },
        ..SpannerConfig::default()
    });
    assert_eq!(e.budget_name(), "max_classes");
    assert!(matches!(e.kind(), SpannerBuildErrorKind::Spans(_)));
    assert!(std::error::Error::source(&e).is_some());
}

#[test]
fn stats_describe_the_tables() {
    let (parser, vocab) = json();
    let spanner = SpannerMasker::new(
        Arc::clone(&parser),
        Arc::clone(&vocab),
        &SpannerConfig::default(),
    )
    .unwrap();
    let stats = spanner.stats();
    let spans = TokenSpans::build(parser.lexer(), &vocab, &SpansConfig::default()).unwrap();
    assert_eq!(stats.realisable_spans, spans.span_len());
    assert_eq!(stats.token_classes, spans.classes().len());
    assert_eq!(stats.points, spans.points().len());
    assert_eq!(stats.lr_states, parser.lr_state_len());
    assert!(stats.terminal_spans > 0 && stats.terminal_spans <= stats.realisable_spans);
    assert!(stats.always_pairs > 0 && stats.table_entries > 0 && stats.always_sets > 0);
    assert!(stats.table_entries <= stats.points * stats.lr_states);
    assert!(stats.heap_bytes > 0 && stats.build_s >= 0.0);
}

/// The budget `max_table_bytes` holds: a build reports at most its budget, one of `peak_bytes`
/// builds the same tables, and one byte less, or less than the tables' `heap_bytes`, is refused
/// with an error naming the budget and its value.
fn table_budget_holds(parser: Arc<Parser>, vocab: Arc<Vocabulary>) {
    let build = |max_table_bytes: usize| {
        let config = SpannerConfig {
            max_table_bytes,
            ..SpannerConfig::default()
        };
        SpannerMasker::new(Arc::clone(&parser), Arc::clone(&vocab), &config)
    };
    let stats = build(SpannerConfig::default().max_table_bytes)
        .unwrap()
        .stats();
    assert!(
        stats.heap_bytes > 0 && stats.heap_bytes <= stats.peak_bytes,
        "{stats:?}"
    );
    let at = build(stats.peak_bytes).unwrap().stats();
    assert_eq!(
        (at.heap_bytes, at.peak_bytes, at.table_entries),
        (stats.heap_bytes, stats.peak_bytes, stats.table_entries)
    );
    for below in [
        stats.peak_bytes - 1,
        stats.heap_bytes - 1,
        stats.heap_bytes / 2,
        0,
    ] {
        let e = build(below).expect_err("a budget below the build's bytes");
        assert_eq!(e.budget_name(), "max_table_bytes", "{e}");
        assert!(
            matches!(e.kind(), SpannerBuildErrorKind::Budget { limit, .. } if *limit == below as u64),
            "{e}"
        );
        assert!(e.to_string().contains(&format!("({below})")), "{e}");
    }
}

#[test]
fn table_budget_holds_on_json() {
    let (parser, vocab) = json();
    table_budget_holds(parser, vocab);
}

/// A dot-heavy terminal: thousands of lexer states, so the lexical spans are most of the tables.
#[test]
fn table_budget_holds_on_a_dot_heavy_terminal() {
    let parser = munch_testkit::grammar::parser("start: A\nA: /[^x]{0,300}x[^y]{0,300}y/\n");
    let vocab = munch_testkit::vocab::printable_and(&["xy", "ab", "yx", "x y"]);
    table_budget_holds(parser, vocab);
}
