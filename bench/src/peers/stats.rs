//! Latency statistics of a run: munch's nearest-rank summary, and a compact CDF for the plots.
//!
//! Every engine reports raw nanosecond samples (the Python engine too), and the statistics are
//! computed here, once, the same way for all of them.

use munch::stats::nearest_rank;

/// Latency figures in microseconds, with the number of samples: munch's own summary.
pub type Latency = munch::stats::SummaryUs;

/// The fractions at which [`cdf`] samples the distribution, in basis points: every percent,
/// then finer towards the tail (99.1 … 99.9, 99.91 … 99.99), then the maximum.
pub fn cdf_basis_points() -> Vec<u32> {
    let mut points: Vec<u32> = (0..=99).map(|p| p * 100).collect();
    points.extend((1..=9).map(|t| 9900 + t * 10));
    points.extend((1..=9).map(|h| 9990 + h));
    points.push(10_000);
    points
}

/// The CDF of `samples_ns` as `[latency µs, fraction]` points at [`cdf_basis_points`] (nearest
/// rank, so every latency is an observed sample); empty for no samples.
pub fn cdf(samples_ns: &[u64]) -> Vec<[f64; 2]> {
    if samples_ns.is_empty() {
        return Vec::new();
    }
    let mut sorted = samples_ns.to_vec();
    sorted.sort_unstable();
    cdf_basis_points()
        .into_iter()
        .map(|bp| {
            let ns = nearest_rank(&sorted, bp);
            [munch::stats::us(ns as f64), f64::from(bp) / 10_000.0]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_is_monotone_and_ends_at_the_maximum() {
        let samples: Vec<u64> = (0..5000).map(|i| (i * 7919) % 100_003).collect();
        let points = cdf(&samples);
        assert_eq!(points.len(), cdf_basis_points().len());
        assert!(points
            .windows(2)
            .all(|w| w[0][0] <= w[1][0] && w[0][1] < w[1][1]));
        let max = *samples.iter().max().unwrap();
        assert_eq!(points.last().unwrap(), &[munch::stats::us(max as f64), 1.0]);
        assert_eq!(points[0][1], 0.0);
        assert_eq!(
            points[0][0],
            munch::stats::us(*samples.iter().min().unwrap() as f64)
        );
        assert!(cdf(&[]).is_empty());
    }
}
