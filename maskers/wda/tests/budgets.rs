//! Every budget of `WdaConfig` stops the build with a typed error naming it.

mod common;

use common::*;
use munch_masker_wda::{WdaBudget, WdaConfig, WdaMasker};
use munch_testkit::grammar::builtin;

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
