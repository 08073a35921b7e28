//! The differential checks of the fuzz targets, driven by proptest: random byte strings go
//! through the same `Arbitrary` generators as in cargo-fuzz, then through the same `check`.
//!
//! Seeded ([`SEED`], or `MUNCH_FUZZ_SEED`) so that runs are deterministic; a failure prints the case as a regression
//! test (its `Debug`) and proptest's minimal byte input.

use munch_fuzz::case_from_bytes;
use munch_fuzz::prelude::*;
use proptest::prelude::*;

/// The default seed; `MUNCH_FUZZ_SEED=N` explores other inputs.
const SEED: u64 = 0x6d75_6e63_685f_667a;

fn config(cases: u32) -> ProptestConfig {
    let seed = std::env::var("MUNCH_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEED);
    munch_testkit::props::seeded(cases, seed)
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..max)
}

proptest! {
    #![proptest_config(config(4000))]

    #[test]
    fn grammar_load(data in bytes(1024)) {
        let case: LarkCase = case_from_bytes(&data).unwrap();
        if let Err(e) = lark::check(&case) {
            prop_assert!(false, "{}\n\n{:?}", e, case);
        }
    }
}

proptest! {
    #![proptest_config(config(1500))]

    #[test]
    fn lexer(data in bytes(256)) {
        let case: LexerCase = case_from_bytes(&data).unwrap();
        if let Err(e) = lexer::check(&case) {
            prop_assert!(false, "{}\n\n{:?}", e, case);
        }
    }
}

proptest! {
    #![proptest_config(config(1000))]

    #[test]
    fn commit(data in bytes(512)) {
        let case: CommitCase = case_from_bytes(&data).unwrap();
        if let Err(e) = commit::check(&case) {
            prop_assert!(false, "{}\n\n{:?}", e, case);
        }
    }

    #[test]
    fn masks(data in bytes(512)) {
        let case: MaskCase = case_from_bytes(&data).unwrap();
        if let Err(e) = masks::check(&case) {
            prop_assert!(false, "{}\n\n{:?}", e, case);
        }
    }
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn artifacts(data in bytes(512)) {
        let case: ArtifactCase = case_from_bytes(&data).unwrap();
        if let Err(e) = artifacts::check(&case) {
            prop_assert!(false, "{}\n\n{:?}", e, case);
        }
    }
}
