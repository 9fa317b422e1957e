//! Statistics of step 4 as pure functions: medians and spread, the speed-up and its 95 %
//! confidence interval, the sequential stopping rule, and how many runs a given speed-up needs.
//!
//! ## The interval
//!
//! Runs are interleaved (A B A B …), so run `i` of the baseline and run `i` of the candidate
//! share the machine's state at that moment (a noisy neighbour, thermal drift). The interval is
//! therefore a **paired log-ratio t-interval**: for each pair, `d_i = ln(speed-up of pair i)`
//! (`base/cand` for times, `cand/base` for throughputs); the interval is
//! `exp(mean(d) ± t₀.₉₇₅(n−1) · sd(d)/√n)`. Logs make the ratio symmetric (2× and ½× are equally
//! far from 1) and timing noise is closer to log-normal than normal. A t-interval was chosen over
//! a bootstrap because the bootstrap is anti-conservative at the 3–10 runs a benchmark can
//! afford (with 3 pairs it can only ever produce 10 distinct means).
//!
//! The reported point estimate is the ratio of the two medians (what users expect to read); the
//! interval is around the geometric mean of the per-pair ratios. A speed-up counts only when
//! the interval's low end is above 1.0.

use serde::{Deserialize, Serialize};

/// Which way is better for the measured figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// A throughput from `metric-regex`: higher is better.
    HigherIsBetter,
    /// Wall time: lower is better.
    LowerIsBetter,
}

/// Median and spread of one side's samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// First quartile (linear interpolation).
    pub q1: f64,
    /// Third quartile.
    pub q3: f64,
    /// Mean.
    pub mean: f64,
    /// Coefficient of variation: sample standard deviation / mean (0 for one sample).
    pub cv: f64,
}

impl Summary {
    /// Summarises samples; `None` when empty or any sample is not finite.
    #[must_use]
    pub fn of(samples: &[f64]) -> Option<Self> {
        if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let sd = std_dev(&sorted).unwrap_or(0.0);
        Some(Self {
            n,
            median: quantile(&sorted, 0.5),
            min: sorted[0],
            max: sorted[n - 1],
            q1: quantile(&sorted, 0.25),
            q3: quantile(&sorted, 0.75),
            mean,
            cv: if mean == 0.0 { 0.0 } else { sd / mean.abs() },
        })
    }

    /// Interquartile range.
    #[must_use]
    pub fn iqr(&self) -> f64 {
        self.q3 - self.q1
    }
}

/// Quantile `q` ∈ [0, 1] of sorted, non-empty samples, by linear interpolation (type 7).
#[must_use]
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let Some(last) = sorted.len().checked_sub(1) else {
        return f64::NAN;
    };
    let pos = q.clamp(0.0, 1.0) * last as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    sorted[lo] + (sorted[hi.min(last)] - sorted[lo]) * frac
}

/// Median of samples in any order; `None` when empty.
#[must_use]
pub fn median(samples: &[f64]) -> Option<f64> {
    Summary::of(samples).map(|s| s.median)
}

/// Sample standard deviation (n − 1); `None` below two samples.
#[must_use]
pub fn std_dev(samples: &[f64]) -> Option<f64> {
    let n = samples.len();
    if n < 2 {
        return None;
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some(var.sqrt())
}

/// Speed-up of the candidate over the baseline from one pair (or two medians): > 1 is faster.
#[must_use]
pub fn ratio(base: f64, cand: f64, direction: Direction) -> f64 {
    match direction {
        Direction::HigherIsBetter => cand / base,
        Direction::LowerIsBetter => base / cand,
    }
}

/// Ratio of the medians; `None` when a side is empty or a median is not positive.
#[must_use]
pub fn speedup(base: &[f64], cand: &[f64], direction: Direction) -> Option<f64> {
    let (b, c) = (median(base)?, median(cand)?);
    (b > 0.0 && c > 0.0).then(|| ratio(b, c, direction))
}

/// A two-sided confidence interval of the speed-up.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Low end.
    pub low: f64,
    /// High end.
    pub high: f64,
    /// Geometric mean of the per-pair speed-ups (the interval's centre).
    pub centre: f64,
    /// Pairs used.
    pub pairs: usize,
}

impl Interval {
    /// The speed-up counts: the whole interval is above 1.0.
    #[must_use]
    pub fn is_speedup(&self) -> bool {
        self.low > 1.0
    }

    /// The candidate is slower: the whole interval is below 1.0.
    #[must_use]
    pub fn is_slowdown(&self) -> bool {
        self.high < 1.0
    }
}

/// Per-pair log speed-ups of the first `min(len)` pairs; `None` if any value is not positive.
fn log_ratios(base: &[f64], cand: &[f64], direction: Direction) -> Option<Vec<f64>> {
    base.iter()
        .zip(cand)
        .map(|(&b, &c)| {
            (b > 0.0 && c > 0.0 && b.is_finite() && c.is_finite())
                .then(|| ratio(b, c, direction).ln())
        })
        .collect()
}

/// The 95 % paired log-ratio t-interval of the speed-up (module docs); `None` below two pairs
/// or when a value is not positive.
#[must_use]
pub fn paired_interval(base: &[f64], cand: &[f64], direction: Direction) -> Option<Interval> {
    let d = log_ratios(base, cand, direction)?;
    let n = d.len();
    let sd = std_dev(&d)?;
    let mean = d.iter().sum::<f64>() / n as f64;
    let half = t_975((n - 1) as f64) * sd / (n as f64).sqrt();
    Some(Interval {
        low: (mean - half).exp(),
        high: (mean + half).exp(),
        centre: mean.exp(),
        pairs: n,
    })
}

/// Two-sided 95 % quantile of Student's t (i.e. t₀.₉₇₅) for `df` degrees of freedom.
///
/// Table values (any statistics textbook, e.g. NIST/SEMATECH e-Handbook §1.3.6.7.2) for df 1–30,
/// 40, 60, 120, ∞, linearly interpolated in 1/df, which is accurate to < 0.2 % in between.
#[must_use]
pub fn t_975(df: f64) -> f64 {
    const TABLE: [(f64, f64); 34] = [
        (1.0, 12.706),
        (2.0, 4.303),
        (3.0, 3.182),
        (4.0, 2.776),
        (5.0, 2.571),
        (6.0, 2.447),
        (7.0, 2.365),
        (8.0, 2.306),
        (9.0, 2.262),
        (10.0, 2.228),
        (11.0, 2.201),
        (12.0, 2.179),
        (13.0, 2.160),
        (14.0, 2.145),
        (15.0, 2.131),
        (16.0, 2.120),
        (17.0, 2.110),
        (18.0, 2.101),
        (19.0, 2.093),
        (20.0, 2.086),
        (21.0, 2.080),
        (22.0, 2.074),
        (23.0, 2.069),
        (24.0, 2.064),
        (25.0, 2.060),
        (26.0, 2.056),
        (27.0, 2.052),
        (28.0, 2.048),
        (29.0, 2.045),
        (30.0, 2.042),
        (40.0, 2.021),
        (60.0, 2.000),
        (120.0, 1.980),
        (f64::INFINITY, 1.960),
    ];
    if df.is_nan() || df < 1.0 {
        return TABLE[0].1;
    }
    let inv = |x: f64| 1.0 / x;
    for w in TABLE.windows(2) {
        let ((d0, t0), (d1, t1)) = (w[0], w[1]);
        if df <= d1 {
            let f = (inv(d0) - inv(df)) / (inv(d0) - inv(d1));
            return t0 + (t1 - t0) * f;
        }
    }
    1.960
}

/// Speed-ups below this are not worth pursuing: a comparison whose whole interval lies below it
/// stops as futile instead of spending runs to prove a 1 % effect.
pub const MIN_EFFECT: f64 = 1.02;

/// What the sequential rule says after the pairs so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Keep running.
    Continue,
    /// The interval is above 1.0: a measured speed-up.
    Faster,
    /// The interval is below 1.0: the candidate is slower.
    Slower,
    /// Even at `max-runs` the interval would almost surely still contain 1.0.
    Futile,
    /// `max-runs` reached with the interval still containing 1.0.
    Inconclusive,
}

/// The sequential stopping rule, applied after each pair.
///
/// Below `min_runs` pairs: continue. Then stop as soon as the 95 % interval excludes 1.0
/// (`Faster` / `Slower`). Stop early as `Futile` when even the interval's optimistic end could
/// not be shown at `max_runs`: ln(high) is smaller than the half-width projected to `max_runs`
/// pairs (the half-width shrinks as t(n−1)/√n) — or when the high end is below [`MIN_EFFECT`]
/// (whatever the truth, too small to be worth a patch). Judging by the optimistic end rather
/// than the point estimate keeps a real but noisy 10 % effect from being abandoned after a few
/// unlucky pairs. At `max_runs`:
/// `Inconclusive`. Repeated looks make the 95 % nominal; the futility cut only ever stops
/// early without claiming a speed-up, so it cannot add false speed-ups.
#[must_use]
pub fn decide(
    base: &[f64],
    cand: &[f64],
    direction: Direction,
    min_runs: usize,
    max_runs: usize,
) -> Decision {
    let n = base.len().min(cand.len());
    if n < min_runs.max(2) {
        return if n >= max_runs {
            Decision::Inconclusive
        } else {
            Decision::Continue
        };
    }
    let Some(ci) = paired_interval(base, cand, direction) else {
        return Decision::Inconclusive;
    };
    if ci.is_speedup() {
        return Decision::Faster;
    }
    if ci.is_slowdown() {
        return Decision::Slower;
    }
    if n >= max_runs {
        return Decision::Inconclusive;
    }
    let half_now = (ci.high.ln() - ci.low.ln()) / 2.0;
    let m = max_runs as f64;
    let half_at_max = half_now * (n as f64 / m).sqrt() * t_975(m - 1.0) / t_975((n - 1) as f64);
    if ci.high < MIN_EFFECT || ci.high.ln() < half_at_max {
        Decision::Futile
    } else {
        Decision::Continue
    }
}

/// Pairs needed so that a true speed-up of `effect` (e.g. 1.10) makes the interval's low end
/// exceed 1.0 with 80 % probability, when the per-pair log ratio has standard deviation
/// `sd_log` (normal approximation: n ≥ ((t₀.₉₇₅(n−1) + z₀.₈) · sd / ln effect)²).
/// `None` when not reached within 10 000 pairs.
#[must_use]
pub fn pairs_needed(sd_log: f64, effect: f64) -> Option<usize> {
    const Z_80: f64 = 0.8416;
    let target = effect.ln();
    if target.is_nan() || target <= 0.0 || !sd_log.is_finite() {
        return None;
    }
    (2..=10_000).find(|&n| (t_975((n - 1) as f64) + Z_80) * sd_log / (n as f64).sqrt() < target)
}

/// Outcome of simulating the sequential rule on resampled real runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Simulation {
    /// Trials simulated.
    pub trials: usize,
    /// Fraction of trials that ended `Faster`.
    pub detected: f64,
    /// Median number of pairs at which a trial stopped (any decision).
    pub median_pairs: f64,
    /// 90th percentile of the pairs at which a trial stopped.
    pub p90_pairs: f64,
}

/// Simulates the sequential rule for a true speed-up `effect` on this machine's noise: each
/// pair draws two independent samples of the observed baseline runs (with replacement, a
/// fixed-seed SplitMix64), divides the candidate's by `effect` (times) or multiplies it
/// (throughputs), and runs [`decide`] until it stops. `None` with fewer than two samples.
#[must_use]
pub fn simulate(
    samples: &[f64],
    direction: Direction,
    effect: f64,
    min_runs: usize,
    max_runs: usize,
    trials: usize,
    seed: u64,
) -> Option<Simulation> {
    if samples.len() < 2 || trials == 0 || samples.iter().any(|x| x.is_nan() || *x <= 0.0) {
        return None;
    }
    let mut rng = SplitMix64(seed);
    let mut stops = Vec::with_capacity(trials);
    let mut detected = 0usize;
    for _ in 0..trials {
        let (mut base, mut cand) = (Vec::new(), Vec::new());
        loop {
            base.push(samples[rng.below(samples.len())]);
            let x = samples[rng.below(samples.len())];
            cand.push(match direction {
                Direction::LowerIsBetter => x / effect,
                Direction::HigherIsBetter => x * effect,
            });
            let decision = decide(&base, &cand, direction, min_runs, max_runs);
            if decision != Decision::Continue {
                detected += usize::from(decision == Decision::Faster);
                stops.push(base.len() as f64);
                break;
            }
        }
    }
    stops.sort_by(f64::total_cmp);
    Some(Simulation {
        trials,
        detected: detected as f64 / trials as f64,
        median_pairs: quantile(&stops, 0.5),
        p90_pairs: quantile(&stops, 0.9),
    })
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fixed-seed generator for reproducible simulation.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_on_fixed_samples() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0, 5.0]).unwrap();
        assert_eq!((s.n, s.median, s.min, s.max), (5, 3.0, 1.0, 5.0));
        assert_eq!((s.q1, s.q3, s.iqr()), (2.0, 4.0, 2.0));
        assert!((s.cv - (2.5f64).sqrt() / 3.0).abs() < 1e-12);
        assert_eq!(median(&[1.0, 2.0, 3.0, 10.0]), Some(2.5));
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn speedup_direction() {
        assert_eq!(
            speedup(&[2.0, 2.0], &[1.0, 1.0], Direction::LowerIsBetter),
            Some(2.0)
        );
        assert_eq!(
            speedup(&[100.0], &[150.0], Direction::HigherIsBetter),
            Some(1.5)
        );
        assert_eq!(speedup(&[0.0], &[1.0], Direction::LowerIsBetter), None);
    }

    #[test]
    fn t_table_and_interpolation() {
        assert_eq!(t_975(1.0), 12.706);
        assert_eq!(t_975(10.0), 2.228);
        assert!((t_975(1e9) - 1.96).abs() < 1e-3);
        let t50 = t_975(50.0);
        assert!(t50 < 2.021 && t50 > 2.000, "{t50}");
        // Monotone decreasing.
        let mut prev = f64::INFINITY;
        for df in 1..200 {
            let t = t_975(f64::from(df));
            assert!(t <= prev);
            prev = t;
        }
    }

    #[test]
    fn interval_excludes_one_for_a_clear_speedup() {
        // Baseline ~2 s, candidate ~1 s, a few percent noise.
        let base = [2.00, 2.05, 1.97, 2.02, 1.99];
        let cand = [1.01, 0.99, 1.02, 1.00, 0.98];
        let ci = paired_interval(&base, &cand, Direction::LowerIsBetter).unwrap();
        assert!(ci.is_speedup(), "{ci:?}");
        assert!(ci.low > 1.9 && ci.high < 2.1, "{ci:?}");
        assert_eq!(
            decide(&base, &cand, Direction::LowerIsBetter, 3, 10),
            Decision::Faster
        );
    }

    #[test]
    fn interval_includes_one_for_noise() {
        let base = [1.00, 1.10, 0.95, 1.05];
        let cand = [1.04, 0.97, 1.08, 1.00];
        let ci = paired_interval(&base, &cand, Direction::LowerIsBetter).unwrap();
        assert!(ci.low < 1.0 && ci.high > 1.0, "{ci:?}");
        assert!(!ci.is_speedup() && !ci.is_slowdown());
    }

    #[test]
    fn throughput_slowdown_is_detected() {
        let base = [100.0, 101.0, 99.0, 100.5];
        let cand = [80.0, 81.0, 79.5, 80.2];
        let ci = paired_interval(&base, &cand, Direction::HigherIsBetter).unwrap();
        assert!(ci.is_slowdown(), "{ci:?}");
        assert_eq!(
            decide(&base, &cand, Direction::HigherIsBetter, 3, 10),
            Decision::Slower
        );
    }

    #[test]
    fn sequential_rule_waits_for_min_runs_and_stops_at_max() {
        let base = [2.0, 2.0];
        let cand = [1.0, 1.0];
        assert_eq!(
            decide(&base, &cand, Direction::LowerIsBetter, 3, 10),
            Decision::Continue
        );
        // Noise at max runs: inconclusive.
        let base = [1.0, 1.1, 0.9];
        let cand = [1.1, 0.9, 1.0];
        assert_eq!(
            decide(&base, &cand, Direction::LowerIsBetter, 3, 3),
            Decision::Inconclusive
        );
    }

    #[test]
    fn futility_stops_a_hopeless_comparison_early() {
        // Identical distributions: effect ≈ 1.0 with 10 % noise; 3 of 20 allowed pairs.
        let base = [1.0, 1.2, 0.9, 1.1];
        let cand = [1.01, 1.19, 0.91, 1.1];
        assert_eq!(
            decide(&base, &cand, Direction::LowerIsBetter, 3, 20),
            Decision::Futile
        );
        // A real but noisy effect that looks like nothing after 4 pairs keeps running: the
        // interval's optimistic end (≈ 1.4) could still be shown by 20 pairs.
        let base = [1.10, 0.85, 1.30, 0.95];
        let cand = [1.25, 0.80, 1.05, 1.05];
        let ci = paired_interval(&base, &cand, Direction::LowerIsBetter).unwrap();
        assert!(ci.low < 1.0 && ci.high > 1.2, "{ci:?}");
        assert_eq!(
            decide(&base, &cand, Direction::LowerIsBetter, 3, 20),
            Decision::Continue
        );
        // A promising but undecided effect keeps running.
        let base = [1.2, 1.0, 1.25];
        let cand = [1.0, 1.02, 1.0];
        assert_eq!(
            decide(&base, &cand, Direction::LowerIsBetter, 3, 20),
            Decision::Continue
        );
    }

    #[test]
    fn pairs_needed_grows_with_noise() {
        let quiet = pairs_needed(0.02, 1.10).unwrap();
        let noisy = pairs_needed(0.10, 1.10).unwrap();
        assert!(quiet <= 3, "{quiet}");
        assert!(noisy > quiet && noisy < 40, "{noisy}");
        assert_eq!(pairs_needed(0.1, 1.0), None);
    }

    #[test]
    fn simulation_is_reproducible_and_detects_large_effects() {
        let samples = [1.00, 1.03, 0.98, 1.05, 0.99, 1.02, 1.01, 0.97];
        let a = simulate(&samples, Direction::LowerIsBetter, 1.5, 3, 10, 200, 7).unwrap();
        let b = simulate(&samples, Direction::LowerIsBetter, 1.5, 3, 10, 200, 7).unwrap();
        assert_eq!(a, b);
        assert!(a.detected > 0.99, "{a:?}");
        assert_eq!(a.median_pairs, 3.0);
        let none = simulate(&samples, Direction::LowerIsBetter, 1.0, 3, 10, 200, 7).unwrap();
        assert!(none.detected < 0.2, "{none:?}");
    }
}
