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

/// A proptest of `$check` on `$case`s drawn from up to `$bytes` random bytes, `$cases` times.
macro_rules! differential {
    ($name:ident: $case:ty, $check:path, $cases:expr, $bytes:expr) => {
        proptest! {
            #![proptest_config(config($cases))]

            #[test]
            fn $name(data in bytes($bytes)) {
                let case: $case = case_from_bytes(&data).unwrap();
                if let Err(e) = $check(&case) {
                    prop_assert!(false, "{}\n\n{:?}", e, case);
                }
            }
        }
    };
}

differential!(grammar_load: LarkCase, lark::check, 4000, 1024);
differential!(lexer: LexerCase, lexer::check, 1500, 256);
differential!(commit: CommitCase, commit::check, 1000, 512);
differential!(masks: MaskCase, masks::check, 1000, 512);
differential!(artifacts: ArtifactCase, artifacts::check, 300, 512);
