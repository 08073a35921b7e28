//! Every build budget, when exceeded, stops the build with a typed error naming it; the table
//! budget holds (the bytes a build reports never exceed it); the stats of a build describe the
//! tables.

use std::sync::Arc;

use munch_glr::lr::ClassTables;
use munch_glr::mask::Masker;
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
    // The spanner's lexemes are told apart by the classes of their terminals.
    let classes = ClassTables::new(Arc::clone(&parser));
    let key = |t| classes.lexeme_key(t);
    let spans =
        TokenSpans::build_keyed(parser.lexer(), &vocab, &SpansConfig::default(), &key).unwrap();
    let plain = TokenSpans::build(parser.lexer(), &vocab, &SpansConfig::default()).unwrap();
    assert!(spans.span_len() <= plain.span_len());
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
/// with an error naming the budget and its value. The spans are built on one thread, so that
/// the most they hold at once is the same from run to run.
fn table_budget_holds(parser: Arc<Parser>, vocab: Arc<Vocabulary>) {
    let build = |max_table_bytes: usize| {
        let config = SpannerConfig {
            max_table_bytes,
            spans: SpansConfig {
                threads: 1,
                ..SpansConfig::default()
            },
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

/// The lexical spans' build is held to `max_table_bytes` too (everything its walk allocates is
/// charged before it is allocated): on a dot-heavy terminal its peak is most of what the build
/// holds, a budget below it is refused naming `max_table_bytes`, one at the build's peak builds
/// masks equal to the oracle's. Sparse token ids (a tokenizer naming id 4,194,303 with a few
/// tokens) cost their text tokens, not lexer states × ids.
#[test]
fn the_lexical_spans_build_is_held_to_max_table_bytes() {
    let parser = munch_testkit::grammar::parser("start: A\nA: /[^x]{0,300}x[^y]{0,300}y/\n");
    let dense = munch_testkit::vocab::printable_and(&["xy", "ab", "aaaaaaaa", "ab ab ab", "xaaaa"]);
    let sparse = munch_testkit::vocab::sparse(&["a", "b", "x", "y", " ", "ab", "xa"]);
    for vocab in [dense, sparse] {
        let config = |max_table_bytes: usize| SpannerConfig {
            max_table_bytes,
            spans: SpansConfig {
                threads: 1,
                ..SpansConfig::default()
            },
            ..SpannerConfig::default()
        };
        let build = |max_table_bytes: usize| {
            SpannerMasker::new(
                Arc::clone(&parser),
                Arc::clone(&vocab),
                &config(max_table_bytes),
            )
        };
        let classes = ClassTables::new(Arc::clone(&parser));
        let key = |t| classes.lexeme_key(t);
        let spans_peak = TokenSpans::build_keyed(parser.lexer(), &vocab, &config(0).spans, &key)
            .unwrap()
            .build_bytes();
        let e = build(spans_peak - 1).expect_err("below the spans' peak");
        assert_eq!(e.budget_name(), "max_table_bytes", "{e}");
        assert!(
            e.to_string().contains(&format!("({})", spans_peak - 1)),
            "{e}"
        );
        let peak = build(usize::MAX).unwrap().stats().peak_bytes;
        assert!(peak >= spans_peak && peak < 128 << 20, "{peak}");
        let spanner = build(peak).unwrap();
        assert!(spanner.stats().heap_bytes <= peak);
        let oracle = munch_glr::mask::Oracle::new(Arc::clone(&vocab));
        let mut state = munch_glr::parser::ParserState::new(Arc::clone(&parser));
        let (mut a, mut b) = (spanner.create_cache(), oracle.create_cache());
        let mut ma = munch_glr::mask::TokenMask::new(vocab.len());
        let mut mb = munch_glr::mask::TokenMask::new(vocab.len());
        for byte in "ab abxa b y".bytes() {
            spanner.fill_mask(&mut a, &state, &mut ma);
            oracle.fill_mask(&mut b, &state, &mut mb);
            assert_eq!(ma.first_difference(&mb), None);
            state.commit_bytes(&[byte]).unwrap();
        }
    }
}
