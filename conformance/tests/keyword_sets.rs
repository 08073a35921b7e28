//! A keyword set the size of a large JSON Schema `enum`, `start: ("k0" | … | "k7999")*`: every
//! masker builds within a small memory budget (its tables' accounting holds it), and its masks
//! equal the oracle's along texts, with a synthetic vocabulary that splits keywords, joins
//! them, and holds prefixes that are keywords themselves (`k1`, `k12`, `k123`).
//!
//! The LR tables store each state's reductions once with a shared lookahead set (16,003
//! states reduce on the same 8,001 lookaheads); the maskers read whole sets and build over the
//! tables' quotient, in which the 8,000 keywords are one terminal.
//!
//! Run in release: `cargo test --release -p munch-conformance --test keyword_sets`.

use std::sync::Arc;

use munch::{Compiled, Config, MaskerKind};
use munch_glr::parser::{Parser, ParserConfig};
use munch_vocab::Vocabulary;

const KEYWORDS: usize = 8_000;

/// The most bytes a masker's build may hold here: the tables are a few megabytes.
const BUDGET: usize = 64 << 20;

fn keyword_parser() -> Arc<Parser> {
    let alternatives: Vec<String> = (0..KEYWORDS).map(|i| format!("\"k{i}\"")).collect();
    let source = format!("start: ({})*\n", alternatives.join(" | "));
    munch::Grammar::lark(&source)
        .with_name("keywords")
        .build_parser(&ParserConfig::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn keyword_vocab() -> Arc<Vocabulary> {
    munch_testkit::vocab::printable_and(&[
        "k1", "k12", "k123", "k1234", "k7999", "k8000", "k80", "1k", "2k3", "k0k1", "99k", "k",
        "kk", "7999",
    ])
}

/// The allowed tokens of `kind` along `text` (teacher-forced with the vocabulary's encoding),
/// one mask per step, or the build error.
fn masks_along(
    kind: MaskerKind,
    parser: &Arc<Parser>,
    vocab: &Arc<Vocabulary>,
    text: &str,
) -> Result<Vec<Vec<u32>>, String> {
    let config = Config::new()
        .masker(kind)
        .max_memory(Some(BUDGET))
        .fallback(None);
    let compiled = Compiled::from_parser(Arc::clone(parser), Arc::clone(vocab), &config)
        .map_err(|e| e.to_string())?;
    let mut m = compiled.matcher();
    let tokens = vocab
        .encode(text)
        .expect("the vocabulary spells every byte");
    let mut out = Vec::new();
    for step in 0..=tokens.len() {
        let mut row = vec![0u32; vocab.len().div_ceil(32)];
        m.fill_next_token_bitmask(&mut row).unwrap();
        out.push(row);
        if let Some(&t) = tokens.get(step) {
            m.accept_token(t.as_u32())
                .unwrap_or_else(|e| panic!("{kind}: step {step}: {e}"));
        }
    }
    Ok(out)
}

#[test]
fn every_masker_builds_on_8000_keywords_with_the_oracle_s_masks() {
    let parser = keyword_parser();
    assert!(parser.lr_state_len() > 2 * KEYWORDS);
    let vocab = keyword_vocab();
    for text in ["k1k12k123k7999k0", "k7999k8k80k800k1234k12k1", ""] {
        let expected = masks_along(MaskerKind::Oracle, &parser, &vocab, text).unwrap();
        for &kind in MaskerKind::ALL {
            if kind == MaskerKind::Oracle {
                continue;
            }
            let got = masks_along(kind, &parser, &vocab, text)
                .unwrap_or_else(|e| panic!("{kind} within {BUDGET} bytes: {e}"));
            for (step, (g, e)) in got.iter().zip(&expected).enumerate() {
                assert_eq!(g, e, "{kind}: step {step} of {text:?}");
            }
        }
    }
}

#[cfg(feature = "wda")]
#[test]
fn the_lazy_automaton_builds_on_8000_keywords_with_the_oracle_s_masks() {
    let parser = keyword_parser();
    let vocab = keyword_vocab();
    let text = "k42k4k2k7999";
    let expected = masks_along(MaskerKind::Oracle, &parser, &vocab, text).unwrap();
    let config = Config::new()
        .masker(MaskerKind::best())
        .lazy(true)
        .max_memory(Some(BUDGET))
        .fallback(None);
    let compiled = Compiled::from_parser(Arc::clone(&parser), Arc::clone(&vocab), &config)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut m = compiled.matcher();
    let tokens = vocab.encode(text).unwrap();
    for (step, want) in expected.iter().enumerate() {
        let mut row = vec![0u32; vocab.len().div_ceil(32)];
        m.fill_next_token_bitmask(&mut row).unwrap();
        assert_eq!(&row, want, "step {step}");
        if let Some(&t) = tokens.get(step) {
            m.accept_token(t.as_u32()).unwrap();
        }
    }
}
