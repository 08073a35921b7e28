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

/// The least `n ≥ 1` for which `passes(n)` holds, where `passes` is monotone (false below some
/// `n`, true from it on): doubling, then bisection. Finds the least work budget a text commits
/// under. Never returns if `passes` holds for no `n`.
pub fn least_passing(mut passes: impl FnMut(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (1usize, 1usize);
    while !passes(hi) {
        lo = hi + 1;
        hi *= 2;
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if passes(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    hi
}

#[cfg(test)]
mod least_passing_tests {
    #[test]
    fn finds_the_threshold() {
        for t in [1, 2, 3, 7, 8, 9, 1000, 4097] {
            assert_eq!(super::least_passing(|n| n >= t), t);
        }
    }
}
