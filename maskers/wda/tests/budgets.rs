//! Every budget of `WdaConfig` stops the build with a typed error naming it; `max_memory`
//! holds (the tables a build reports never exceed it).

mod common;

use std::sync::Arc;

use common::*;
use munch_glr::parser::Parser;
use munch_masker_wda::{WdaBudget, WdaConfig, WdaMasker};
use munch_testkit::grammar::builtin;
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
/// refused.
fn memory_budget_holds(parser: Arc<Parser>, vocab: Arc<Vocabulary>) {
    let build = |max_memory: usize| {
        let config = WdaConfig {
            max_memory,
            ..WdaConfig::default()
        };
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
