//! The generators still reach the cases worth fuzzing: a generator that drifted (say, Lark
//! texts that no longer load, or grammars whose sentences never parse) would leave the targets
//! checking nothing while passing. Fixed pseudo-random bytes, so the counts are deterministic;
//! the thresholds sit well below what the generators give today.

use munch_fuzz::case_from_bytes;
use munch_fuzz::grammar::BuildError;
use munch_fuzz::prelude::*;
use munch_glr::lark::{load, LoadConfig};
use munch_testkit::earley::Earley;

/// `n` byte strings of length `len` from a fixed linear congruential generator.
fn inputs(n: usize, len: usize) -> Vec<Vec<u8>> {
    let mut state = 0x006d_756e_6368_u64;
    (0..n)
        .map(|_| {
            (0..len)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (state >> 33) as u8
                })
                .collect()
        })
        .collect()
}

#[test]
fn lark_texts_often_load() {
    let cases: Vec<LarkCase> = inputs(300, 1024)
        .iter()
        .map(|d| case_from_bytes(d).unwrap())
        .collect();
    let loaded = cases
        .iter()
        .filter(|c| load(&c.text, &LoadConfig::default()).is_ok())
        .count();
    assert!(loaded >= 30, "only {loaded} of 300 texts load");
    assert!(loaded <= 270, "{loaded} of 300 texts load: too few errors");
}

#[test]
fn commit_inputs_are_often_sentences() {
    let (mut built, mut accepted, mut rejected) = (0, 0, 0);
    for data in inputs(200, 512) {
        let case: CommitCase = case_from_bytes(&data).unwrap();
        let b = match case.grammar.build() {
            Ok(b) => b,
            Err(BuildError::Skip(_)) => continue,
            Err(BuildError::Failure(m)) => panic!("{m}"),
        };
        built += 1;
        match b.reference_accepts(&Earley::new(&b.bnf), &case.input.0) {
            Some(true) => accepted += 1,
            Some(false) => rejected += 1,
            None => {}
        }
    }
    assert!(built >= 190, "only {built} of 200 grammars build");
    assert!(
        accepted >= 40,
        "only {accepted} of 200 inputs are sentences"
    );
    assert!(
        rejected >= 40,
        "only {rejected} of 200 inputs are not sentences"
    );
}

#[test]
fn vocabularies_often_have_allowed_tokens() {
    let mut useful = 0;
    for data in inputs(100, 512) {
        let case: MaskCase = case_from_bytes(&data).unwrap();
        let Ok(b) = case.grammar.build() else {
            continue;
        };
        let vocab = std::sync::Arc::new(case.vocabulary().unwrap());
        let config = masks::config(munch::MaskerKind::Oracle);
        let oracle = munch::Compiled::from_parser(b.parser, vocab, &config).unwrap();
        let mask = oracle.matcher().next_token_mask();
        useful += usize::from(mask.count() >= 2);
    }
    assert!(
        useful >= 30,
        "only {useful} of 100 first masks allow two tokens"
    );
}
