//! Steps in a series of per-run figures: where the level of a metric changed, by how much,
//! and whether the change is more than the noise between runs.
//!
//! The test runs on the series' ranks (ties averaged), the search and the sizes on its
//! values: a run past the answer window stands at the window, above every answered figure,
//! and by rank it is only that, so a branch whose clicks turn to timeouts shows a step no
//! less sure than any other, one such run alone is no step, and the size (at the window) is
//! a lower bound.
//!
//! Candidates come from PELT (Killick, Fearnhead & Eckley 2012, "Optimal detection of
//! changepoints with a linear computational cost", JASA 107(500):1590-1598): the exact
//! minimiser over every segmentation of the sum of segment costs plus a penalty per change,
//! found in linear expected time by pruning split points that can never be optimal again.
//! The cost of a segment is its squared deviation from its own mean in units of the noise
//! variance (a change in mean under normal noise), the noise estimated from successive
//! differences (median absolute difference, so the steps themselves barely move it); the
//! penalty is 2 ln n per change (SIC: a location and a level). Each candidate is then put
//! to a permutation test inside the segment around it (its neighbours' bounds): the
//! largest standardized mean difference over every split of the segment, against the same
//! maximum over shuffles of it, so the choice of the split is inside the test; Holm over
//! the candidates keeps the false-alarm rate of the whole series at `alpha`. A step's size
//! is the difference of the means of its two segments, with a bootstrap percentile
//! interval resampling each segment.

use arena_stats::{holm, quantile_sorted, Rng};

/// How steps are searched for and tested.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangeOptions {
    /// Family-wise false-alarm rate over the series' candidates (Holm).
    pub alpha: f64,
    pub permutations: usize,
    /// Bootstrap resamples of a step's size.
    pub resamples: usize,
    /// Level of the size's interval.
    pub level: f64,
    /// The fewest points a segment may have.
    pub min_size: usize,
    /// Steps smaller than this (in the series' unit) are not reported, however sure: a
    /// shared machine drifts by real milliseconds that are nobody's regression. Applied to a
    /// staircase's total: steps under it in a row, one way, that add up to it stay.
    pub min_step: f64,
    pub seed: u64,
}

impl Default for ChangeOptions {
    fn default() -> Self {
        ChangeOptions {
            alpha: 0.01,
            permutations: 999,
            resamples: 2000,
            level: 0.95,
            min_size: 2,
            min_step: 0.0,
            seed: 0x5EED_C4A6,
        }
    }
}

/// One step: the series' level moved at point `at` (the first point of the new level).
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePoint {
    pub at: usize,
    /// Mean after minus mean before, in the series' unit.
    pub size: f64,
    pub lo: f64,
    pub hi: f64,
    pub before: f64,
    pub after: f64,
    /// Permutation p-value, Holm-adjusted over the series' candidates.
    pub p: f64,
    /// Points in the segments before and after it.
    pub before_len: usize,
    pub after_len: usize,
}

/// Prefix sums of x and x^2: any segment's cost in O(1).
struct Sums {
    s: Vec<f64>,
    s2: Vec<f64>,
}

impl Sums {
    fn new(x: &[f64]) -> Sums {
        let (mut s, mut s2) = (vec![0.0], vec![0.0]);
        for v in x {
            s.push(s.last().unwrap_or(&0.0) + v);
            s2.push(s2.last().unwrap_or(&0.0) + v * v);
        }
        Sums { s, s2 }
    }

    /// Squared deviation of x[a..b] from its mean.
    fn sse(&self, a: usize, b: usize) -> f64 {
        let n = (b - a) as f64;
        let sum = self.s[b] - self.s[a];
        (self.s2[b] - self.s2[a] - sum * sum / n).max(0.0)
    }
}

/// The noise's standard deviation from successive differences: MAD / 0.6745 / sqrt(2), or
/// their standard deviation / sqrt(2) when most differences are zero.
pub fn noise_sd(x: &[f64]) -> f64 {
    let mut d: Vec<f64> = x.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    if d.is_empty() {
        return 0.0;
    }
    d.sort_unstable_by(f64::total_cmp);
    let mad = quantile_sorted(&d, 0.5).unwrap_or(0.0) / 0.6745 / std::f64::consts::SQRT_2;
    if mad > 0.0 {
        return mad;
    }
    let raw: Vec<f64> = x.windows(2).map(|w| w[1] - w[0]).collect();
    let m = raw.iter().sum::<f64>() / raw.len() as f64;
    let var = raw.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / raw.len() as f64;
    var.sqrt() / std::f64::consts::SQRT_2
}

/// PELT: the segmentation of `x` minimising sum(SSE / sd^2) + `penalty` per change, with
/// segments of at least `min_size`. Returns the changes' positions (first point of each
/// new segment), ascending.
pub fn pelt(x: &[f64], sd: f64, penalty: f64, min_size: usize) -> Vec<usize> {
    let n = x.len();
    let min_size = min_size.max(1);
    if n < 2 * min_size || sd <= 0.0 {
        return Vec::new();
    }
    let sums = Sums::new(x);
    let var = sd * sd;
    let cost = |a: usize, b: usize| sums.sse(a, b) / var;
    let mut f = vec![f64::INFINITY; n + 1];
    let mut last = vec![0usize; n + 1];
    f[0] = -penalty;
    let mut candidates: Vec<usize> = vec![0];
    for t in min_size..=n {
        let mut best = (f64::INFINITY, 0);
        for &tau in candidates.iter().filter(|&&tau| t - tau >= min_size) {
            let v = f[tau] + cost(tau, t) + penalty;
            if v < best.0 {
                best = (v, tau);
            }
        }
        (f[t], last[t]) = best;
        // Pruning (Killick et al. 2012, eq. 4, with K = 0 for this cost): a split point
        // that already does worse than the best without the penalty never wins later.
        candidates.retain(|&tau| t - tau < min_size || f[tau] + cost(tau, t) <= f[t]);
        if t + min_size <= n && f[t].is_finite() {
            candidates.push(t);
        }
    }
    let mut out = Vec::new();
    let mut t = n;
    while t > 0 {
        let tau = last[t];
        if tau > 0 {
            out.push(tau);
        }
        t = tau;
    }
    out.reverse();
    out
}

/// The largest standardized mean difference over every split of `x` into two parts of at
/// least `min_size`: |mean_left - mean_right| * sqrt(nl * nr / n).
fn max_split_stat(x: &[f64], min_size: usize) -> f64 {
    let n = x.len();
    let total: f64 = x.iter().sum();
    let mut left = 0.0;
    let mut best: f64 = 0.0;
    for (k, v) in x.iter().enumerate().take(n.saturating_sub(min_size)) {
        left += v;
        let nl = k + 1;
        if nl < min_size {
            continue;
        }
        let nr = n - nl;
        let d = left / nl as f64 - (total - left) / nr as f64;
        best = best.max(d.abs() * ((nl * nr) as f64 / n as f64).sqrt());
    }
    best
}

/// Permutation p-value of a change inside `x` (one segment with a candidate in it).
fn permutation_p(x: &[f64], opts: &ChangeOptions, rng: &mut Rng) -> f64 {
    let observed = max_split_stat(x, opts.min_size);
    let mut y = x.to_vec();
    let mut at_least = 0usize;
    for _ in 0..opts.permutations {
        rng.shuffle(&mut y);
        if max_split_stat(&y, opts.min_size) >= observed * (1.0 - 1e-12) {
            at_least += 1;
        }
    }
    (1 + at_least) as f64 / (1 + opts.permutations) as f64
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Bootstrap percentile interval of mean(b) - mean(a).
fn size_interval(a: &[f64], b: &[f64], opts: &ChangeOptions, rng: &mut Rng) -> (f64, f64) {
    let resample = |x: &[f64], rng: &mut Rng| {
        (0..x.len()).map(|_| x[rng.below(x.len())]).sum::<f64>() / x.len() as f64
    };
    let mut reps: Vec<f64> = (0..opts.resamples.max(2))
        .map(|_| resample(b, rng) - resample(a, rng))
        .collect();
    reps.sort_unstable_by(f64::total_cmp);
    let tail = (1.0 - opts.level) / 2.0;
    (
        quantile_sorted(&reps, tail).unwrap_or(f64::NAN),
        quantile_sorted(&reps, 1.0 - tail).unwrap_or(f64::NAN),
    )
}

/// Holm-adjusted permutation p of each change in `cps`, each tested in the segment between
/// its neighbours.
fn test_changes(x: &[f64], cps: &[usize], opts: &ChangeOptions, rng: &mut Rng) -> Vec<f64> {
    let raw: Vec<f64> = (0..cps.len())
        .map(|k| {
            let a = if k == 0 { 0 } else { cps[k - 1] };
            let b = cps.get(k + 1).copied().unwrap_or(x.len());
            permutation_p(&x[a..b], opts, rng)
        })
        .collect();
    holm(&raw)
}

/// Average ranks (1-based) of `x`: tied values share the mean of their places.
pub fn ranks(x: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut r = vec![0.0; x.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && x[order[j + 1]] == x[order[i]] {
            j += 1;
        }
        let mean_place = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            r[k] = mean_place;
        }
        i = j + 1;
    }
    r
}

/// Whether change `k` is under the floor: its own size is, and so is the total of the
/// steps under the floor in a row with it going the same way (a staircase of +3 and +3 at
/// a floor of 5 adds up to 6 and stays; a +2.5 rise before a +40 step is alone and goes).
fn under_floor(x: &[f64], cps: &[usize], k: usize, floor: f64) -> bool {
    let size = |k: usize| step_size(x, cps, k);
    let small = |j: usize| size(j).abs() < floor && size(j).signum() == size(k).signum();
    if !small(k) {
        return false;
    }
    let (mut a, mut b) = (k, k);
    while a > 0 && small(a - 1) {
        a -= 1;
    }
    while b + 1 < cps.len() && small(b + 1) {
        b += 1;
    }
    (a..=b).map(size).sum::<f64>().abs() < floor
}

/// The significant steps of `x` (finite values, in series order). PELT's candidates, found
/// on the values (where a step is), are tested on the ranks (whether it is one); the smallest step under `opts.min_step` (see
/// [`under_floor`]), else the weakest one failing the test, is dropped and the rest
/// retested between their new neighbours (each drop merges two segments), until every one
/// left is big enough and passes.
pub fn detect(x: &[f64], opts: &ChangeOptions) -> Vec<ChangePoint> {
    let n = x.len();
    if n < 2 * opts.min_size.max(1) || x.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let r = ranks(x);
    let sd = noise_sd(x);
    let mut cps = pelt(x, sd, 2.0 * (n as f64).ln(), opts.min_size);
    let mut rng = Rng::new(opts.seed);
    let p = loop {
        // Steps under the floor go first, untested: left in, a small one splits off a short
        // segment beside a big step, too short for the big step's test to pass.
        let size = |cps: &[usize], k: usize| step_size(x, cps, k).abs();
        let smallest = (0..cps.len())
            .filter(|&k| under_floor(x, &cps, k, opts.min_step))
            .min_by(|&i, &j| size(&cps, i).total_cmp(&size(&cps, j)));
        if let Some(k) = smallest {
            cps.remove(k);
            continue;
        }
        let p = test_changes(&r, &cps, opts, &mut rng);
        let worst = (0..cps.len())
            .filter(|&k| p[k].is_nan() || p[k] > opts.alpha)
            .max_by(|&i, &j| p[i].total_cmp(&p[j]));
        match worst {
            Some(k) => {
                cps.remove(k);
            }
            None => break p,
        }
    };
    describe(x, &cps, &p, opts, &mut rng)
}

/// The segments either side of change `k` of `cps`: from the change before to the one after.
fn sides<'a>(x: &'a [f64], cps: &[usize], k: usize) -> (&'a [f64], &'a [f64]) {
    let a = if k == 0 { 0 } else { cps[k - 1] };
    let b = cps.get(k + 1).copied().unwrap_or(x.len());
    (&x[a..cps[k]], &x[cps[k]..b])
}

fn step_size(x: &[f64], cps: &[usize], k: usize) -> f64 {
    let (before, after) = sides(x, cps, k);
    mean(after) - mean(before)
}

fn describe(
    x: &[f64],
    cps: &[usize],
    p: &[f64],
    opts: &ChangeOptions,
    rng: &mut Rng,
) -> Vec<ChangePoint> {
    (0..cps.len())
        .map(|k| {
            let (before, after) = sides(x, cps, k);
            let (lo, hi) = size_interval(before, after, opts, rng);
            ChangePoint {
                at: cps[k],
                size: mean(after) - mean(before),
                lo,
                hi,
                before: mean(before),
                after: mean(after),
                p: p[k],
                before_len: before.len(),
                after_len: after.len(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy(levels: &[(usize, f64)], sd: f64, seed: u64) -> Vec<f64> {
        let mut rng = Rng::new(seed);
        levels
            .iter()
            .flat_map(|&(n, level)| std::iter::repeat_n(level, n))
            .map(|v| v + sd * rng.normal())
            .collect()
    }

    /// The penalised cost of one segmentation, straight from the definition.
    fn total_cost(x: &[f64], cps: &[usize], sd: f64, penalty: f64) -> f64 {
        let mut bounds = vec![0];
        bounds.extend_from_slice(cps);
        bounds.push(x.len());
        bounds
            .windows(2)
            .map(|w| {
                let seg = &x[w[0]..w[1]];
                let m = mean(seg);
                seg.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (sd * sd)
            })
            .sum::<f64>()
            + penalty * cps.len() as f64
    }

    /// Every segmentation with segments of at least `min_size`, by brute force.
    fn best_by_enumeration(x: &[f64], sd: f64, penalty: f64, min_size: usize) -> (f64, Vec<usize>) {
        let n = x.len();
        let mut best = (f64::INFINITY, Vec::new());
        for mask in 0u32..(1 << (n - 1)) {
            let cps: Vec<usize> = (1..n).filter(|i| mask & (1 << (i - 1)) != 0).collect();
            let mut bounds = vec![0];
            bounds.extend_from_slice(&cps);
            bounds.push(n);
            if bounds.windows(2).any(|w| w[1] - w[0] < min_size) {
                continue;
            }
            let c = total_cost(x, &cps, sd, penalty);
            if c < best.0 - 1e-9 {
                best = (c, cps);
            }
        }
        best
    }

    #[test]
    fn pelt_finds_the_optimal_segmentation_that_enumeration_finds() {
        for seed in 0..40u64 {
            let mut rng = Rng::new(seed);
            let n = 6 + rng.below(7);
            let min_size = 1 + rng.below(3);
            let x: Vec<f64> = (0..n)
                .map(|i| if i >= n / 2 { 3.0 } else { 0.0 } * (seed % 3) as f64 + rng.normal())
                .collect();
            let (sd, penalty) = (1.0, 0.5 + rng.uniform() * 4.0);
            let (cost, cps) = best_by_enumeration(&x, sd, penalty, min_size);
            let got = pelt(&x, sd, penalty, min_size);
            let got_cost = total_cost(&x, &got, sd, penalty);
            assert!(
                (got_cost - cost).abs() < 1e-9,
                "seed {seed}: pelt {got:?} ({got_cost}) vs {cps:?} ({cost})"
            );
        }
    }

    #[test]
    fn the_split_statistic_is_the_largest_standardized_mean_difference() {
        let x = [1.0, 2.0, 9.0, 10.0, 11.0];
        let by_hand = (1..x.len())
            .map(|k| {
                let (l, r) = x.split_at(k);
                (mean(l) - mean(r)).abs() * ((l.len() * r.len()) as f64 / x.len() as f64).sqrt()
            })
            .fold(0.0, f64::max);
        assert!((max_split_stat(&x, 1) - by_hand).abs() < 1e-12);
        // min_size 2 leaves out the splits with a side of one.
        let two = [2, 3].map(|k| {
            let (l, r) = x.split_at(k);
            (mean(l) - mean(r)).abs() * ((l.len() * r.len()) as f64 / 5.0).sqrt()
        });
        assert!((max_split_stat(&x, 2) - two[0].max(two[1])).abs() < 1e-12);
    }

    #[test]
    fn a_40_ms_step_at_25_of_40_is_found_there_with_its_size() {
        for seed in 1..=5 {
            let x = noisy(&[(25, 50.0), (15, 90.0)], 4.0, seed);
            let steps = detect(&x, &ChangeOptions::default());
            assert_eq!(steps.len(), 1, "seed {seed}: {steps:?}");
            let s = &steps[0];
            assert_eq!(s.at, 25, "seed {seed}: {s:?}");
            assert!((s.size - 40.0).abs() <= 5.0, "seed {seed}: {s:?}");
            assert!(
                s.lo <= s.size && s.size <= s.hi && s.lo > 30.0,
                "seed {seed}: {s:?}"
            );
        }
    }

    #[test]
    fn a_flat_series_has_no_step() {
        for seed in 1..=10 {
            let x = noisy(&[(40, 50.0)], 4.0, seed);
            let steps = detect(&x, &ChangeOptions::default());
            assert!(steps.is_empty(), "seed {seed}: {steps:?}");
        }
    }

    #[test]
    fn two_steps_are_both_found_and_a_step_down_is_negative() {
        let x = noisy(&[(15, 50.0), (15, 80.0), (15, 60.0)], 3.0, 7);
        let steps = detect(&x, &ChangeOptions::default());
        let at: Vec<usize> = steps.iter().map(|s| s.at).collect();
        assert_eq!(at, vec![15, 30], "{steps:?}");
        assert!(steps[0].size > 0.0 && steps[1].size < 0.0, "{steps:?}");
    }

    #[test]
    fn steps_under_min_step_are_dropped_and_their_segments_merged() {
        // A 3-unit drift at 10 (real, sure) and a 40-unit step at 25, low noise.
        let x = noisy(&[(10, 53.0), (15, 50.0), (15, 90.0)], 0.5, 11);
        let at = |o: &ChangeOptions| detect(&x, o).iter().map(|s| s.at).collect::<Vec<_>>();
        assert_eq!(at(&ChangeOptions::default()), vec![10, 25]);
        let five = ChangeOptions {
            min_step: 5.0,
            ..ChangeOptions::default()
        };
        let steps = detect(&x, &five);
        assert_eq!(steps.len(), 1, "{steps:?}");
        // The step's before-level is now all 25 points before it: 51.2, not the 50 of 15.
        let before = mean(&x[..25]);
        assert_eq!((steps[0].at, steps[0].before), (25, before), "{steps:?}");
        assert!((before - 51.2).abs() < 0.5, "{before}");
        // A short rise just before the step, as a busy machine gives: with the rise a
        // segment of its own, the big step's segment has 2 points before it and cannot pass
        // the test, so the rise must go first and the step be tested on all 25.
        let x = noisy(&[(23, 7.0), (2, 9.5), (15, 52.0)], 0.5, 5);
        let steps = detect(&x, &five);
        assert_eq!(steps.iter().map(|s| s.at).collect::<Vec<_>>(), vec![25]);
        let fifty = ChangeOptions {
            min_step: 50.0,
            ..ChangeOptions::default()
        };
        assert!(detect(&x, &fifty).is_empty());
    }

    #[test]
    fn a_staircase_under_the_floor_adds_up_and_a_lone_small_step_does_not() {
        // Two +3 steps, 15 runs apart, each under a floor of 5: together +6.
        let x = noisy(&[(15, 20.0), (15, 23.0), (15, 26.0)], 0.6, 3);
        let five = ChangeOptions {
            min_step: 5.0,
            ..ChangeOptions::default()
        };
        let steps = detect(&x, &five);
        assert_eq!(steps.iter().map(|s| s.at).collect::<Vec<_>>(), vec![15, 30]);
        let total: f64 = steps.iter().map(|s| s.size).sum();
        assert!(total >= 5.0, "{steps:?}");
        // At a floor of 7 the staircase's 6 is under it: no step.
        let seven = ChangeOptions {
            min_step: 7.0,
            ..ChangeOptions::default()
        };
        assert!(detect(&x, &seven).is_empty());
        // Up 3 then down 3 is no staircase: each is alone under the floor.
        let x = noisy(&[(15, 20.0), (15, 23.0), (15, 20.0)], 0.6, 3);
        assert!(detect(&x, &five).is_empty());
    }

    #[test]
    fn runs_at_the_window_are_a_step_above_every_answered_one() {
        // 25 runs near 20 ms, then 15 whose quantile is past a 2,000 ms window, stood at it;
        // the noise of the answered runs is much larger than a rank's, and any size holds.
        let mut x = noisy(&[(25, 20.0)], 6.0, 9);
        x.extend(std::iter::repeat_n(2000.0, 15));
        let steps = detect(&x, &ChangeOptions::default());
        assert_eq!(steps.len(), 1, "{steps:?}");
        assert_eq!(steps[0].at, 25);
        assert!(steps[0].size > 1900.0, "{steps:?}");
        // By rank a run at the window is only above the rest: one alone in the middle of a
        // flat series is no step.
        let mut x = noisy(&[(40, 20.0)], 2.0, 4);
        x[20] = 2000.0;
        assert!(detect(&x, &ChangeOptions::default()).is_empty());
    }

    #[test]
    fn ranks_average_ties() {
        assert_eq!(ranks(&[3.0, 1.0, 3.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
        assert_eq!(ranks(&[]), Vec::<f64>::new());
    }

    #[test]
    fn too_short_or_not_finite_series_have_no_step() {
        assert!(detect(&[1.0, 2.0, 3.0], &ChangeOptions::default()).is_empty());
        let mut x = noisy(&[(10, 0.0), (10, 100.0)], 1.0, 3);
        x[4] = f64::INFINITY;
        assert!(detect(&x, &ChangeOptions::default()).is_empty());
    }
}
