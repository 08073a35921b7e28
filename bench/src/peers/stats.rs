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

/// Every traced run's mask samples cut to the steps all of them traced: `traces` holds, per
/// run, the steps it made on each text (in the texts' order) and its mask samples in that
/// order, text after text. A run stops a text at its first refusal, so the steps every run
/// traced are each text's first `k` steps, `k` the fewest any run made on it. `None` for a
/// run whose samples do not add up to its steps or whose texts are not the others'.
pub fn common_steps(traces: &[(&[usize], &[u64])]) -> Vec<Option<Vec<u64>>> {
    let fits = |(steps, ns): &(&[usize], &[u64])| steps.iter().sum::<usize>() == ns.len();
    let Some(texts) = traces.iter().find(|t| fits(t)).map(|t| t.0.len()) else {
        return vec![None; traces.len()];
    };
    let usable = |t: &(&[usize], &[u64])| fits(t) && t.0.len() == texts;
    let fewest: Vec<usize> = (0..texts)
        .map(|i| {
            traces
                .iter()
                .filter(|t| usable(t))
                .map(|t| t.0[i])
                .min()
                .unwrap_or(0)
        })
        .collect();
    traces
        .iter()
        .map(|t| {
            usable(t).then(|| {
                let mut at = 0;
                let mut out = Vec::with_capacity(fewest.iter().sum());
                for (&made, &keep) in t.0.iter().zip(&fewest) {
                    out.extend_from_slice(&t.1[at..at + keep]);
                    at += made;
                }
                out
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_steps_keep_each_texts_shared_prefix() {
        // Three texts; run b stops the second text after one step, run c the third after two.
        let a_steps = [2, 3, 4];
        let a_ns = [10, 11, 20, 21, 22, 30, 31, 32, 33];
        let b_steps = [2, 1, 4];
        let b_ns = [110, 111, 120, 130, 131, 132, 133];
        let c_steps = [2, 3, 2];
        let c_ns = [210, 211, 220, 221, 222, 230, 231];
        let out = common_steps(&[(&a_steps, &a_ns), (&b_steps, &b_ns), (&c_steps, &c_ns)]);
        assert_eq!(out[0].as_deref(), Some(&[10, 11, 20, 30, 31][..]));
        assert_eq!(out[1].as_deref(), Some(&[110, 111, 120, 130, 131][..]));
        assert_eq!(out[2].as_deref(), Some(&[210, 211, 220, 230, 231][..]));
        // A run whose samples do not match its steps is left out, and does not cut the others.
        let broken_steps = [1, 1, 1];
        let broken_ns = [1, 2];
        let out = common_steps(&[(&a_steps, &a_ns), (&broken_steps, &broken_ns)]);
        assert_eq!(out[0].as_deref(), Some(&a_ns[..]));
        assert_eq!(out[1], None);
        // A run over other texts is left out too.
        let out = common_steps(&[(&a_steps, &a_ns), (&[9][..], &[1; 9][..])]);
        assert_eq!(out[1], None);
    }

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
