//! Seeded bootstrap confidence interval of a quantile difference.
//!
//! Each replicate resamples baseline and candidate independently, with replacement, at
//! their own sizes, and takes `quantile(candidate*) - quantile(baseline*)` (type 7). The
//! interval is the percentile interval of the replicates (type-7 quantiles at
//! `(1 - level) / 2` and `(1 + level) / 2`).
//!
//! A replicate does not draw n values. A type-7 quantile of a resample only reads two
//! adjacent order statistics of it, and the k-th order statistic of a resample of a
//! sorted sample `x` is `x[floor(n * U_(k))]` with `U_(k)` the k-th order statistic of n
//! uniforms, which is `Beta(k, n - k + 1)`; the next one is the minimum of the `n - k`
//! uniforms above it. So a replicate costs O(1) whatever n is, and has exactly the
//! distribution of the textbook resample (tests check it against a plain NumPy bootstrap).
//! Same inputs and seed, same interval, on every machine.

use serde::{Deserialize, Serialize};

use crate::quantile_sorted;

/// The replicates' generator: SplitMix64, reproducible from one u64 seed on every machine
/// (with `uniform`, `normal`, `gamma` and `beta` for the order statistics below).
pub use arena_sys::rng::SplitMix64 as Rng;

/// How many replicates, which seed, which confidence level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BootstrapOptions {
    pub resamples: usize,
    pub seed: u64,
    /// Confidence level, e.g. 0.95.
    pub level: f64,
}

impl Default for BootstrapOptions {
    fn default() -> Self {
        BootstrapOptions {
            resamples: 2000,
            seed: 0x5EED_A2E7A,
            level: 0.95,
        }
    }
}

/// A quantile difference `candidate - baseline` with its bootstrap interval (same unit
/// as the samples).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DiffCi {
    pub estimate: f64,
    pub lo: f64,
    pub hi: f64,
}

impl DiffCi {
    pub fn excludes_zero(&self) -> bool {
        self.lo > 0.0 || self.hi < 0.0
    }
}

/// Type-7 quantile `q` of one bootstrap resample of the ascending sample `x`.
pub fn resampled_quantile(x: &[f64], q: f64, rng: &mut Rng) -> Option<f64> {
    let n = x.len();
    if n == 0 || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let idx = |u: f64| ((u * n as f64) as usize).min(n - 1);
    let h = (n - 1) as f64 * q;
    let lo = h.floor() as usize; // 0-based rank of the lower order statistic
    let frac = h - lo as f64;
    let k = lo + 1; // 1-based
    let u_k = rng.beta(k as f64, (n - k + 1) as f64);
    let a = x[idx(u_k)];
    if frac == 0.0 || k == n {
        return Some(a);
    }
    // The (k+1)-th is the minimum of the n - k uniforms above u_k.
    let v = rng.uniform();
    let u_next = u_k + (1.0 - u_k) * (1.0 - v.powf(1.0 / (n - k) as f64));
    let b = x[idx(u_next)];
    Some(a + frac * (b - a))
}

/// Bootstrap interval of `quantile(candidate, q) - quantile(baseline, q)`; both slices
/// ascending and NaN-free. `None` when either is empty or the options are unusable.
pub fn bootstrap_quantile_diff(
    baseline: &[f64],
    candidate: &[f64],
    q: f64,
    opts: &BootstrapOptions,
) -> Option<DiffCi> {
    if opts.resamples < 2 || !(0.0 < opts.level && opts.level < 1.0) {
        return None;
    }
    let estimate = quantile_sorted(candidate, q)? - quantile_sorted(baseline, q)?;
    let mut rng = Rng::new(opts.seed);
    let mut diffs = Vec::with_capacity(opts.resamples);
    for _ in 0..opts.resamples {
        let b = resampled_quantile(baseline, q, &mut rng)?;
        let c = resampled_quantile(candidate, q, &mut rng)?;
        diffs.push(c - b);
    }
    diffs.sort_unstable_by(f64::total_cmp);
    let tail = (1.0 - opts.level) / 2.0;
    Some(DiffCi {
        estimate,
        lo: quantile_sorted(&diffs, tail)?,
        hi: quantile_sorted(&diffs, 1.0 - tail)?,
    })
}

/// Several runs of one arm, each ascending and NaN-free: the value at 0-based `rank` of
/// the multiset where run `i` counts `mult[i]` times.
fn select_rank(runs: &[&[f64]], mult: &[usize], rank: usize) -> Option<f64> {
    let count_le = |v: f64| -> usize {
        runs.iter()
            .zip(mult)
            .map(|(r, &m)| m * r.partition_point(|x| *x <= v))
            .sum()
    };
    let mut best: Option<f64> = None;
    for (r, &m) in runs.iter().zip(mult) {
        if m == 0 || r.is_empty() {
            continue;
        }
        // First element of this run whose count of values <= it passes `rank`.
        let j = r.partition_point(|x| count_le(*x) <= rank);
        if let Some(&v) = r.get(j) {
            best = Some(best.map_or(v, |b: f64| b.min(v)));
        }
    }
    best
}

/// Type-7 quantile `q` of one two-stage resample of several runs: runs drawn with
/// replacement, then as many loops as the drawn runs hold, drawn from them.
fn resampled_quantile_runs(runs: &[&[f64]], q: f64, rng: &mut Rng) -> Option<f64> {
    let k = runs.len();
    let mut mult = vec![0usize; k];
    for _ in 0..k {
        mult[((rng.uniform() * k as f64) as usize).min(k - 1)] += 1;
    }
    let n: usize = runs.iter().zip(&mult).map(|(r, m)| r.len() * m).sum();
    if n == 0 {
        return None;
    }
    let h = (n - 1) as f64 * q;
    let lo = h.floor() as usize;
    let frac = h - lo as f64;
    let kth = lo + 1;
    let u_k = rng.beta(kth as f64, (n - kth + 1) as f64);
    let rank = |u: f64| ((u * n as f64) as usize).min(n - 1);
    let a = select_rank(runs, &mult, rank(u_k))?;
    if frac == 0.0 || kth == n {
        return Some(a);
    }
    let v = rng.uniform();
    let u_next = u_k + (1.0 - u_k) * (1.0 - v.powf(1.0 / (n - kth) as f64));
    let b = select_rank(runs, &mult, rank(u_next))?;
    Some(a + frac * (b - a))
}

/// Like [`bootstrap_quantile_diff`] when each side is several runs: a replicate first
/// resamples the runs, then the loops of the runs it drew. Runs, not loops, are the unit
/// that repeats: two sessions of one arm differ (a loaded machine, a cache), and this
/// interval carries that spread where the loop-level one cannot. `estimate` is the
/// difference of the pooled quantiles. With one run a side it is the loop-level bootstrap.
pub fn bootstrap_quantile_diff_runs(
    baseline: &[&[f64]],
    candidate: &[&[f64]],
    q: f64,
    opts: &BootstrapOptions,
) -> Option<DiffCi> {
    if opts.resamples < 2 || !(0.0 < opts.level && opts.level < 1.0) {
        return None;
    }
    let pooled = |runs: &[&[f64]]| {
        let mut v: Vec<f64> = runs.iter().flat_map(|r| r.iter().copied()).collect();
        v.sort_unstable_by(f64::total_cmp);
        v
    };
    let estimate = quantile_sorted(&pooled(candidate), q)? - quantile_sorted(&pooled(baseline), q)?;
    let mut rng = Rng::new(opts.seed);
    let mut diffs = Vec::with_capacity(opts.resamples);
    for _ in 0..opts.resamples {
        let b = resampled_quantile_runs(baseline, q, &mut rng);
        let c = resampled_quantile_runs(candidate, q, &mut rng);
        if let (Some(b), Some(c)) = (b, c) {
            diffs.push(c - b);
        }
    }
    if diffs.len() < 2 {
        return None;
    }
    diffs.sort_unstable_by(f64::total_cmp);
    let tail = (1.0 - opts.level) / 2.0;
    Some(DiffCi {
        estimate,
        lo: quantile_sorted(&diffs, tail)?,
        hi: quantile_sorted(&diffs, 1.0 - tail)?,
    })
}

/// Bootstrap percentile interval of quantile `q` of one ascending, NaN-free sample (the
/// estimate is the sample's own quantile). Used to ask whether two runs of one arm agree.
pub fn bootstrap_quantile_ci(x: &[f64], q: f64, opts: &BootstrapOptions) -> Option<DiffCi> {
    if opts.resamples < 2 || !(0.0 < opts.level && opts.level < 1.0) {
        return None;
    }
    let estimate = quantile_sorted(x, q)?;
    let mut rng = Rng::new(opts.seed);
    let mut reps = Vec::with_capacity(opts.resamples);
    for _ in 0..opts.resamples {
        reps.push(resampled_quantile(x, q, &mut rng)?);
    }
    reps.sort_unstable_by(f64::total_cmp);
    let tail = (1.0 - opts.level) / 2.0;
    Some(DiffCi {
        estimate,
        lo: quantile_sorted(&reps, tail)?,
        hi: quantile_sorted(&reps, 1.0 - tail)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_interval_other_seed_other_interval() {
        let a: Vec<f64> = (0..300).map(|i| 50.0 + (i as f64 * 7.3) % 40.0).collect();
        let mut b: Vec<f64> = a.iter().map(|v| v * 1.1).collect();
        let mut a = a;
        a.sort_by(f64::total_cmp);
        b.sort_by(f64::total_cmp);
        let o = BootstrapOptions::default();
        let x = bootstrap_quantile_diff(&a, &b, 0.9, &o).unwrap();
        let y = bootstrap_quantile_diff(&a, &b, 0.9, &o).unwrap();
        assert_eq!(x, y);
        let z = bootstrap_quantile_diff(&a, &b, 0.9, &BootstrapOptions { seed: 7, ..o }).unwrap();
        assert_ne!(x, z);
        assert!(x.lo <= x.estimate && x.estimate <= x.hi, "{x:?}");
    }

    #[test]
    fn one_value_samples_are_degenerate_not_errors() {
        let o = BootstrapOptions::default();
        let ci = bootstrap_quantile_diff(&[3.0], &[5.0], 0.5, &o).unwrap();
        assert_eq!((ci.estimate, ci.lo, ci.hi), (2.0, 2.0, 2.0));
        assert!(bootstrap_quantile_diff(&[], &[5.0], 0.5, &o).is_none());
        let one = bootstrap_quantile_ci(&[1.0, 2.0, 3.0, 4.0, 100.0], 0.5, &o).unwrap();
        assert!(
            one.lo >= 1.0 && one.hi <= 100.0 && one.lo < one.hi,
            "{one:?}"
        );
    }

    #[test]
    fn select_rank_counts_repeated_runs() {
        let a = [1.0, 4.0, 6.0];
        let b = [2.0, 3.0];
        // a twice, b once: 1 1 2 3 4 4 6 6
        let runs: [&[f64]; 2] = [&a, &b];
        let got: Vec<f64> = (0..8)
            .map(|r| select_rank(&runs, &[2, 1], r).unwrap())
            .collect();
        assert_eq!(got, vec![1.0, 1.0, 2.0, 3.0, 4.0, 4.0, 6.0, 6.0]);
        assert_eq!(select_rank(&runs, &[0, 1], 1), Some(3.0));
    }

    #[test]
    fn run_level_interval_widens_when_runs_disagree() {
        let mk =
            |shift: f64| -> Vec<f64> { (0..200).map(|i| shift + (i % 50) as f64 * 0.1).collect() };
        let (a1, a2, b1, b2) = (mk(10.0), mk(10.0), mk(10.5), mk(10.5));
        let o = BootstrapOptions::default();
        // Runs that agree: the run-level interval is about the loop-level one.
        let agree = bootstrap_quantile_diff_runs(&[&a1, &a2], &[&b1, &b2], 0.5, &o).unwrap();
        assert!(agree.lo > 0.0, "{agree:?}");
        // One baseline run 5 ms off: the loop level calls the pooled difference certain,
        // the run level does not.
        let odd = mk(15.0);
        let disagree = bootstrap_quantile_diff_runs(&[&a1, &odd], &[&b1, &b2], 0.5, &o).unwrap();
        assert!(disagree.lo < 0.0 && disagree.hi > 0.0, "{disagree:?}");
        let mut pooled_a: Vec<f64> = a1.iter().chain(&odd).copied().collect();
        pooled_a.sort_by(f64::total_cmp);
        let mut pooled_b: Vec<f64> = b1.iter().chain(&b2).copied().collect();
        pooled_b.sort_by(f64::total_cmp);
        let loop_level = bootstrap_quantile_diff(&pooled_a, &pooled_b, 0.5, &o).unwrap();
        assert!(
            loop_level.hi - loop_level.lo < disagree.hi - disagree.lo,
            "{loop_level:?}"
        );
    }

    #[test]
    fn beta_has_the_right_mean() {
        let mut r = Rng::new(1);
        let n = 20_000;
        let m: f64 = (0..n).map(|_| r.beta(3.0, 7.0)).sum::<f64>() / n as f64;
        assert!((m - 0.3).abs() < 0.005, "{m}");
    }
}
