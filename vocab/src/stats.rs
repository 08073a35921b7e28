//! Latency summaries: the one percentile rule of munch's measurements (the CLI's, the
//! benchmarks' and the examples').
//!
//! [`Summary`] condenses nanosecond samples into mean, p50, p90, p99, p99.9 and max, with
//! **nearest-rank** percentiles: the p-th percentile of `n` sorted samples is the sample of
//! 1-based rank `⌈p/100 · n⌉` (the first sample for `p = 0`). Every percentile is therefore an
//! observed sample, and p100 is the maximum. Percentiles are given in basis points
//! (hundredths of a percent) so that p99.9 is the exact integer 9990 and the rank is computed
//! without floating-point rounding.

/// Summary of a set of latency samples, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Number of samples.
    pub count: usize,
    /// Arithmetic mean.
    pub mean_ns: f64,
    /// Median (nearest rank).
    pub p50_ns: u64,
    /// 90th percentile (nearest rank).
    pub p90_ns: u64,
    /// 99th percentile (nearest rank).
    pub p99_ns: u64,
    /// 99.9th percentile (nearest rank).
    pub p999_ns: u64,
    /// Largest sample.
    pub max_ns: u64,
}

impl SummaryUs {
    /// The summary of `samples` (nanoseconds, in any order) in microseconds; `None` when
    /// there are none.
    pub fn from_ns(samples: &[u64]) -> Option<SummaryUs> {
        Summary::from_ns(samples).map(|s| s.to_us())
    }
}

impl Summary {
    /// Summarises `samples` (in any order); `None` when there are none.
    pub fn from_ns(samples: &[u64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        let sum: u128 = sorted.iter().map(|&s| u128::from(s)).sum();
        Some(Summary {
            count: sorted.len(),
            mean_ns: sum as f64 / sorted.len() as f64,
            p50_ns: nearest_rank(&sorted, 5000),
            p90_ns: nearest_rank(&sorted, 9000),
            p99_ns: nearest_rank(&sorted, 9900),
            p999_ns: nearest_rank(&sorted, 9990),
            max_ns: sorted[sorted.len() - 1],
        })
    }

    /// The summary in microseconds, which serializes as
    /// `{"count","mean_us","p50_us","p90_us","p99_us","p999_us","max_us"}` in that order.
    pub fn to_us(&self) -> SummaryUs {
        SummaryUs {
            count: self.count,
            mean_us: us(self.mean_ns),
            p50_us: us(self.p50_ns as f64),
            p90_us: us(self.p90_ns as f64),
            p99_us: us(self.p99_ns as f64),
            p999_us: us(self.p999_ns as f64),
            max_us: us(self.max_ns as f64),
        }
    }
}

/// A [`Summary`] in microseconds (rounded to the nanosecond), as the CLI prints it and the
/// peers benchmark stores it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SummaryUs {
    /// Number of samples.
    pub count: usize,
    /// Mean.
    pub mean_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Maximum.
    pub max_us: f64,
}

/// Nanoseconds as microseconds, rounded to the nanosecond (so JSON shows `1.234`, not
/// `1.2340000000000002`).
pub fn us(ns: f64) -> f64 {
    ns.round() / 1e3
}

/// [`nearest_rank`], or `None` when there are no samples (for reports that print a
/// placeholder then).
///
/// # Panics
/// When `basis_points` exceeds 10000.
pub fn checked_nearest_rank<T: Copy>(sorted: &[T], basis_points: u32) -> Option<T> {
    (!sorted.is_empty()).then(|| nearest_rank(sorted, basis_points))
}

/// The nearest-rank percentile of `sorted` (ascending, non-empty) at `basis_points` (0 to
/// 10000; 9990 is p99.9): the sample of 1-based rank `⌈basis_points · n / 10000⌉`, or the first
/// sample for 0.
///
/// # Panics
/// When `sorted` is empty or `basis_points` exceeds 10000.
pub fn nearest_rank<T: Copy>(sorted: &[T], basis_points: u32) -> T {
    assert!(!sorted.is_empty(), "a percentile of no samples");
    assert!(basis_points <= 10_000, "a percentile above 100");
    let n = sorted.len() as u128;
    let rank = (u128::from(basis_points) * n).div_ceil(10_000).max(1);
    sorted[rank as usize - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_on_one_to_hundred() {
        let samples: Vec<u64> = (1..=100).collect();
        assert_eq!(nearest_rank(&samples, 0), 1);
        assert_eq!(nearest_rank(&samples, 5000), 50);
        assert_eq!(nearest_rank(&samples, 9000), 90);
        assert_eq!(nearest_rank(&samples, 9900), 99);
        // ⌈0.999 · 100⌉ = 100.
        assert_eq!(nearest_rank(&samples, 9990), 100);
        assert_eq!(nearest_rank(&samples, 10_000), 100);
        assert_eq!(checked_nearest_rank(&samples, 5000), Some(50));
        assert_eq!(checked_nearest_rank::<u64>(&[], 5000), None);
    }

    #[test]
    fn nearest_rank_p999_of_a_thousand_is_rank_999_exactly() {
        // The float computation 0.999 * 1000 rounds above 999 and would pick rank 1000.
        let samples: Vec<u64> = (1..=1000).collect();
        assert_eq!(nearest_rank(&samples, 9990), 999);
        assert_eq!(nearest_rank(&samples, 9900), 990);
    }

    #[test]
    fn summaries_of_samples() {
        let thousand: Vec<u64> = (1..=1000).map(|i| i * 1000).collect();
        // (samples, (count, mean, p50, p90, p99, p99.9, max)). Unsorted: ranks ⌈2.5⌉ = 3,
        // ⌈4.5⌉ = 5, ⌈4.95⌉ = 5, ⌈4.995⌉ = 5. One sample is every percentile.
        type Expected = (usize, f64, u64, u64, u64, u64, u64);
        let cases: [(&[u64], Expected); 3] = [
            (
                &[40, 10, 30, 20, 1000],
                (5, 220.0, 30, 1000, 1000, 1000, 1000),
            ),
            (&[7], (1, 7.0, 7, 7, 7, 7, 7)),
            (
                &thousand,
                (
                    1000, 500_500.0, 500_000, 900_000, 990_000, 999_000, 1_000_000,
                ),
            ),
        ];
        for (samples, want) in cases {
            let s = Summary::from_ns(samples).unwrap();
            let got = (
                s.count, s.mean_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.p999_ns, s.max_ns,
            );
            assert_eq!(got, want, "{samples:?}");
            assert_eq!(SummaryUs::from_ns(samples), Some(s.to_us()));
        }
        // The same in microseconds (what the CLI prints and the peers benchmark stores).
        let l = SummaryUs::from_ns(&thousand).unwrap();
        let got = (
            l.count, l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us, l.mean_us,
        );
        assert_eq!(got, (1000, 500.0, 900.0, 990.0, 999.0, 1000.0, 500.5));
        assert_eq!(Summary::from_ns(&[]), None);
        assert_eq!(SummaryUs::from_ns(&[]), None);
    }

    #[test]
    fn json_is_in_microseconds_in_order() {
        let s = Summary::from_ns(&[1234, 5678]).unwrap();
        assert_eq!(
            serde_json::to_string(&s.to_us()).unwrap(),
            r#"{"count":2,"mean_us":3.456,"p50_us":1.234,"p90_us":5.678,"p99_us":5.678,"p999_us":5.678,"max_us":5.678}"#
        );
    }
}
