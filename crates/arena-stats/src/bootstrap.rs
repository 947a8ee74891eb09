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
//!
//! [`bootstrap_diff_replicates`] keeps the sorted replicates so that one resampling
//! answers several questions: an interval, a one-sided p-value against a tolerated
//! change, a spread. Unanswered loops are censored (`+inf`, see [`crate::is_censored`]):
//! a resampled quantile reaching them is `+inf`, and so is a difference against it.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::summary::lerp7;
use crate::{is_censored, quantile_sorted};

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
    Some(lerp7(a, b, frac))
}

/// Type-7 quantile `q` of one stratified resample: each stratum (a kind of loop whose
/// count the run's design fixes, a click's presses and its releases) drawn with
/// replacement at its own size, the quantile of them together. Resampling them pooled
/// would let the mix vary, and a pooled median between two modes jump from one to the
/// other: a spread the runs do not have. `buf` is reused between draws.
pub fn resampled_quantile_strata(
    strata: &[&[f64]],
    q: f64,
    rng: &mut Rng,
    buf: &mut Vec<f64>,
) -> Option<f64> {
    if !(0.0..=1.0).contains(&q) {
        return None;
    }
    buf.clear();
    for s in strata {
        let n = s.len();
        buf.extend((0..n).map(|_| s[((rng.uniform() * n as f64) as usize).min(n - 1)]));
    }
    let n = buf.len();
    if n == 0 {
        return None;
    }
    let h = (n - 1) as f64 * q;
    let lo = h.floor() as usize;
    let frac = h - lo as f64;
    let (_, a, above) = buf.select_nth_unstable_by(lo, f64::total_cmp);
    let a = *a;
    if frac == 0.0 || above.is_empty() {
        return Some(a);
    }
    let b = above.iter().copied().fold(f64::INFINITY, f64::min);
    Some(lerp7(a, b, frac))
}

/// Bootstrap interval of `quantile(candidate, q) - quantile(baseline, q)`; both slices
/// ascending and NaN-free. `None` when either is empty or the options are unusable.
pub fn bootstrap_quantile_diff(
    baseline: &[f64],
    candidate: &[f64],
    q: f64,
    opts: &BootstrapOptions,
) -> Option<DiffCi> {
    replicates(&[baseline], &[candidate], q, opts, Unit::Loops)?.interval(opts.level)
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
    Some(lerp7(a, b, frac))
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
    replicates(baseline, candidate, q, opts, Unit::Runs)?.interval(opts.level)
}

/// The bootstrap replicates of `quantile(candidate, q) - quantile(baseline, q)`, sorted,
/// for asking one resampling several questions.
#[derive(Debug, Clone, PartialEq)]
pub struct Replicates {
    /// Difference of the pooled sides' quantiles.
    pub estimate: f64,
    /// One difference per replicate, ascending, never NaN; `+inf` or `-inf` where one
    /// side's resampled quantile was censored and the other's was not.
    pub diffs: Vec<f64>,
}

impl Replicates {
    /// Percentile interval at `level` (type-7 quantiles of the replicates at
    /// `(1 - level) / 2` and `(1 + level) / 2`). `None` when `level` is not in (0, 1).
    pub fn interval(&self, level: f64) -> Option<DiffCi> {
        if !(0.0 < level && level < 1.0) {
            return None;
        }
        let tail = (1.0 - level) / 2.0;
        Some(DiffCi {
            estimate: self.estimate,
            lo: quantile_sorted(&self.diffs, tail)?,
            hi: quantile_sorted(&self.diffs, 1.0 - tail)?,
        })
    }

    /// `(1 + #{d <= x}) / (B + 1)`: a one-sided bootstrap p-value for "the change is at
    /// most `x`". The 1 in numerator and denominator counts the observed sample as one of
    /// the resamples, so the p-value is never 0 (B replicates cannot show less).
    pub fn share_at_most(&self, x: f64) -> f64 {
        let at_most = self.diffs.partition_point(|d| *d <= x);
        (1 + at_most) as f64 / (self.diffs.len() + 1) as f64
    }

    /// Robust standard deviation of the replicates, `(Q3 - Q1) / 1.3489795` (the normal
    /// distribution's interquartile range), so that a few censored replicates in a tail
    /// do not make it infinite. `None` when the quartiles are not both finite.
    pub fn spread(&self) -> Option<f64> {
        let q1 = quantile_sorted(&self.diffs, 0.25)?;
        let q3 = quantile_sorted(&self.diffs, 0.75)?;
        let s = (q3 - q1) / NORMAL_IQR;
        s.is_finite().then_some(s)
    }
}

/// Interquartile range of the standard normal, `2 * scipy.stats.norm.ppf(0.75)`.
const NORMAL_IQR: f64 = 1.348_979_500_392_163_4;

/// The replicates of `quantile(candidate, q) - quantile(baseline, q)`. Each side is one
/// or more runs, each ascending and NaN-free. With one run a side the replicates resample
/// loops (as [`bootstrap_quantile_diff`]); when a side has several they resample runs,
/// then loops (as [`bootstrap_quantile_diff_runs`]). `estimate` is the difference of the
/// pooled quantiles. Only `resamples` and `seed` of `opts` are read (the level is the
/// caller's, through [`Replicates::interval`]).
///
/// Where both sides' quantiles are censored the difference is 0: each is only known to
/// be beyond the window, which is no evidence that one moved against the other, and a
/// NaN would leave the replicates without an order. `None` when a side is empty, `q` is
/// not in [0, 1] or fewer than two replicates could be drawn (runs that are all empty).
pub fn bootstrap_diff_replicates(
    baseline: &[&[f64]],
    candidate: &[&[f64]],
    q: f64,
    opts: &BootstrapOptions,
) -> Option<Replicates> {
    let unit = if baseline.len() == 1 && candidate.len() == 1 {
        Unit::Loops
    } else {
        Unit::Runs
    };
    replicates(baseline, candidate, q, opts, unit)
}

/// What a replicate resamples. `Loops` reads the first run of each side only.
#[derive(Clone, Copy, PartialEq)]
enum Unit {
    Loops,
    Runs,
}

/// `c - b` of two quantiles of which either may be censored; both censored is 0 (see
/// [`bootstrap_diff_replicates`]).
fn censored_diff(c: f64, b: f64) -> f64 {
    if is_censored(c) && is_censored(b) {
        0.0
    } else {
        c - b
    }
}

/// One side's runs as one ascending sample: borrowed when there is one run.
fn pooled<'a>(runs: &[&'a [f64]]) -> Cow<'a, [f64]> {
    match runs {
        [one] => Cow::Borrowed(*one),
        _ => {
            let mut v: Vec<f64> = runs.iter().flat_map(|r| r.iter().copied()).collect();
            v.sort_unstable_by(f64::total_cmp);
            Cow::Owned(v)
        }
    }
}

fn replicates(
    baseline: &[&[f64]],
    candidate: &[&[f64]],
    q: f64,
    opts: &BootstrapOptions,
    unit: Unit,
) -> Option<Replicates> {
    if opts.resamples < 2 {
        return None;
    }
    let estimate = censored_diff(
        quantile_sorted(&pooled(candidate), q)?,
        quantile_sorted(&pooled(baseline), q)?,
    );
    let draw = |runs: &[&[f64]], rng: &mut Rng| match unit {
        Unit::Loops => resampled_quantile(runs[0], q, rng),
        Unit::Runs => resampled_quantile_runs(runs, q, rng),
    };
    let mut rng = Rng::new(opts.seed);
    let mut diffs = Vec::with_capacity(opts.resamples);
    for _ in 0..opts.resamples {
        // Both sides draw every time, so that a skipped replicate (a resample of empty
        // runs only) does not shift the other side's stream.
        let b = draw(baseline, &mut rng);
        let c = draw(candidate, &mut rng);
        if let (Some(b), Some(c)) = (b, c) {
            diffs.push(censored_diff(c, b));
        }
    }
    if diffs.len() < 2 {
        return None;
    }
    diffs.sort_unstable_by(f64::total_cmp);
    Some(Replicates { estimate, diffs })
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

    fn sorted(mut v: Vec<f64>) -> Vec<f64> {
        v.sort_by(f64::total_cmp);
        v
    }

    /// 400 loops spread over 20 ms from `at`, the last `censored` of them unanswered.
    fn arm(at: f64, censored: usize) -> Vec<f64> {
        let mut v = sorted((0..400).map(|i| at + (i * 37 % 101) as f64 * 0.2).collect());
        v[400 - censored..].fill(f64::INFINITY);
        v
    }

    #[test]
    fn replicates_are_reproducible_and_sorted() {
        let (a, b) = (arm(40.0, 0), arm(41.0, 0));
        let o = BootstrapOptions::default();
        let x = bootstrap_diff_replicates(&[&a], &[&b], 0.9, &o).unwrap();
        assert_eq!(x, bootstrap_diff_replicates(&[&a], &[&b], 0.9, &o).unwrap());
        let other = BootstrapOptions { seed: 7, ..o };
        assert_ne!(
            x,
            bootstrap_diff_replicates(&[&a], &[&b], 0.9, &other).unwrap()
        );
        assert_eq!(x.diffs.len(), o.resamples);
        assert!(x.diffs.is_sorted());
        let few = BootstrapOptions { resamples: 1, ..o };
        assert!(bootstrap_diff_replicates(&[&a], &[&b], 0.9, &few).is_none());
        assert!(bootstrap_diff_replicates(&[&a], &[&[]], 0.9, &o).is_none());
        assert!(bootstrap_diff_replicates(&[], &[&b], 0.9, &o).is_none());
    }

    #[test]
    fn interval_is_the_old_interval() {
        let (a, b) = (arm(40.0, 0), arm(41.0, 0));
        let (a2, b2) = (arm(44.0, 0), arm(40.5, 0));
        for level in [0.9, 0.95] {
            let o = BootstrapOptions {
                level,
                ..BootstrapOptions::default()
            };
            let one = bootstrap_diff_replicates(&[&a], &[&b], 0.5, &o).unwrap();
            assert_eq!(
                one.interval(level),
                bootstrap_quantile_diff(&a, &b, 0.5, &o)
            );
            let runs = bootstrap_diff_replicates(&[&a, &a2], &[&b, &b2], 0.9, &o).unwrap();
            let old = bootstrap_quantile_diff_runs(&[&a, &a2], &[&b, &b2], 0.9, &o);
            assert_eq!(runs.interval(level), old);
            // Resampling runs, not loops: the spread of the sessions shows.
            assert!(runs.spread().unwrap() > 2.0 * one.spread().unwrap());
        }
        let r = bootstrap_diff_replicates(&[&a], &[&b], 0.5, &BootstrapOptions::default());
        assert_eq!(r.unwrap().interval(1.0), None);
    }

    #[test]
    fn share_at_most_is_a_one_sided_p_value() {
        let (a, b) = (arm(40.0, 0), arm(50.0, 0));
        let o = BootstrapOptions::default();
        let r = bootstrap_diff_replicates(&[&a], &[&b], 0.5, &o).unwrap();
        let floor = 1.0 / (o.resamples + 1) as f64;
        assert_eq!(r.share_at_most(0.0), floor);
        assert_eq!(r.share_at_most(f64::INFINITY), 1.0);
        let at_shift = r.share_at_most(r.estimate);
        assert!(0.2 < at_shift && at_shift < 0.8, "{at_shift}");
        let back = bootstrap_diff_replicates(&[&b], &[&a], 0.5, &o).unwrap();
        assert_eq!(back.share_at_most(0.0), 1.0);
    }

    #[test]
    fn spread_interval_and_share_match_numpy_on_fixed_replicates() {
        // d = sorted((i * 29 % 83) * 0.1 - 4 for i in range(50))
        // scipy.stats.iqr(d, scale='normal') -> 3.076399603399124
        // numpy.percentile(d, [5, 95]) -> -3.6550000000000002, 3.7550000000000003
        // [(1 + numpy.sum(numpy.array(d) <= x)) / 51 for x in (-4, 0, 0.5, 10)]
        //   -> 0.0392156862745098, 0.5294117647058824, 0.5882352941176471, 1.0
        let r = Replicates {
            estimate: 0.25,
            diffs: sorted(
                (0..50)
                    .map(|i| ((i * 29) % 83) as f64 * 0.1 - 4.0)
                    .collect(),
            ),
        };
        assert!((r.spread().unwrap() - 3.076399603399124).abs() < 1e-12);
        let ci = r.interval(0.9).unwrap();
        assert!((ci.lo + 3.655).abs() < 1e-12 && (ci.hi - 3.755).abs() < 1e-12);
        assert_eq!(ci.estimate, 0.25);
        let want = [
            0.0392156862745098,
            0.5294117647058824,
            0.5882352941176471,
            1.0,
        ];
        for (x, p) in [-4.0, 0.0, 0.5, 10.0].into_iter().zip(want) {
            assert!((r.share_at_most(x) - p).abs() < 1e-15, "{x}");
        }
    }

    #[test]
    fn censored_quantiles_make_infinite_or_zero_differences_never_nan() {
        let o = BootstrapOptions::default();
        let (clean, timing_out) = (arm(40.0, 0), arm(40.0, 80));
        let up = bootstrap_diff_replicates(&[&clean], &[&timing_out], 0.9, &o).unwrap();
        assert!(up.diffs.iter().all(|d| *d == f64::INFINITY));
        assert_eq!(up.estimate, f64::INFINITY);
        assert_eq!(up.share_at_most(1e300), 1.0 / (o.resamples + 1) as f64);
        assert_eq!(up.spread(), None);
        let ci = up.interval(0.95).unwrap();
        assert!(ci.excludes_zero() && ci.lo == f64::INFINITY);
        let down = bootstrap_diff_replicates(&[&timing_out], &[&clean], 0.9, &o).unwrap();
        assert!(down.diffs.iter().all(|d| *d == f64::NEG_INFINITY));
        // Both censored: no evidence of a change.
        let both = bootstrap_diff_replicates(&[&timing_out], &[&timing_out], 0.9, &o).unwrap();
        assert!(both.diffs.iter().all(|d| *d == 0.0) && both.estimate == 0.0);
        assert_eq!(both.share_at_most(0.0), 1.0);
        // The median stays answered; the runs level mixes all three kinds of difference.
        let mid = bootstrap_diff_replicates(&[&clean], &[&timing_out], 0.5, &o).unwrap();
        assert!(mid.diffs.iter().all(|d| d.is_finite()) && mid.estimate.is_finite());
        let few = arm(40.0, 8);
        let runs = [&clean[..], &few[..], &timing_out[..]];
        let mixed = bootstrap_diff_replicates(&runs, &runs, 0.98, &o).unwrap();
        assert!(mixed.diffs.iter().all(|d| !d.is_nan()));
        let (lo, hi) = (mixed.diffs[0], mixed.diffs[o.resamples - 1]);
        assert!(lo == f64::NEG_INFINITY && hi == f64::INFINITY);
        assert!(mixed.diffs.iter().any(|d| d.is_finite()));
        let ci = mixed.interval(0.5).unwrap();
        assert!(!ci.lo.is_nan() && !ci.hi.is_nan());
    }

    #[test]
    fn beta_has_the_right_mean() {
        let mut r = Rng::new(1);
        let n = 20_000;
        let m: f64 = (0..n).map(|_| r.beta(3.0, 7.0)).sum::<f64>() / n as f64;
        assert!((m - 0.3).abs() < 0.005, "{m}");
    }
}
