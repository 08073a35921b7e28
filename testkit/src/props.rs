//! Property-test settings shared by the crates' proptests.

use proptest::test_runner::{Config, RngSeed};

/// `cases` cases drawn from `seed`, so that a failure replays (proptest shrinks it and prints
/// the case), with no failure-persistence files.
pub fn seeded(cases: u32, seed: u64) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    }
}
