//! One rule for `compare` and `gate`: is a quantile's change real, and is it past a limit?
//!
//! Both ask the same run-level bootstrap ([`arena_stats::bootstrap_diff_replicates`]): a
//! replicate draws a side's runs with replacement, then loops from the runs it drew, and
//! takes `quantile(candidate*) - quantile(baseline*)`. Runs, not loops, are what repeats:
//! two sessions of one arm differ (a loaded machine, a cache) and only a run-level
//! resample carries that spread. With one run a side it is the loop-level bootstrap.
//!
//! Unanswered loops are in the samples, censored at the window (`+inf`): a quantile that
//! lands on one reads "beyond the window", and a replicate's change is `+inf` when only the
//! candidate's quantile is censored.
//!
//! - `compare` calls a change real when it is at least the noise bar and its two-sided
//!   bootstrap p, Holm-adjusted over the column's checks, is under alpha.
//! - `gate` fails a limit when the share of replicates at or under the limit (the p of
//!   "the change is within the limit"), Holm-adjusted over every check of the gate, is
//!   under alpha: the interval lies wholly past the limit. No location test decides a
//!   tail: a Mann-Whitney test barely moves when 5 % of clicks get slow.

use arena_stats::{
    bootstrap_diff_replicates, holm, is_censored, normal_quantile, pct_change, pooled,
    quantile_sorted, BootstrapOptions, NoiseRule, QuantileChange, Replicates, Verdict,
};

/// Words for the interval method, printed under every table that shows one.
pub fn interval_method(rule: &NoiseRule, runs_b: usize, runs_c: usize) -> String {
    let how = if runs_b > 1 || runs_c > 1 {
        "runs drawn with replacement, then loops from the runs drawn"
    } else {
        "one run a side: loops drawn with replacement (cannot see how two sessions differ)"
    };
    format!(
        "percentile bootstrap of the quantile difference, {} resamples (seed {}): {how}; unanswered loops censored at the window",
        rule.bootstrap.resamples, rule.bootstrap.seed
    )
}

/// One quantile of a candidate against a baseline, with the replicates behind it.
pub struct Decided {
    pub change: QuantileChange,
    pub reps: Replicates,
}

/// The change of quantile `q`: point estimates of the pooled sides, the run-level
/// interval at `1 - alpha`, and the raw two-sided bootstrap p (`p`; the verdict is set by
/// [`holm_verdicts`]). `None` when a side is empty.
pub fn decide(
    baseline: &[&[f64]],
    candidate: &[&[f64]],
    q: f64,
    rule: &NoiseRule,
) -> Option<Decided> {
    let (pb, pc) = (pooled(baseline), pooled(candidate));
    let b = quantile_sorted(&pb, q)?;
    let c = quantile_sorted(&pc, q)?;
    let opts = BootstrapOptions {
        level: 1.0 - rule.alpha,
        ..rule.bootstrap
    };
    let reps = few_runs(
        bootstrap_diff_replicates(baseline, candidate, q, &opts)?,
        baseline.len(),
        candidate.len(),
    );
    let delta = reps.estimate;
    let p = two_sided_p(&reps);
    Some(Decided {
        change: QuantileChange {
            q,
            baseline: b,
            candidate: c,
            delta,
            delta_pct: if is_censored(b) {
                f64::NAN
            } else {
                pct_change(b, b + delta)
            },
            ci: reps.interval(opts.level),
            p: Some(p),
            verdict: Verdict::NotSignificant,
        },
        reps,
    })
}

/// A resample of k runs drawn from k runs carries only (k - 1) / k of the spread between
/// runs (two runs drawn from two are the same run half the time), so with few runs a
/// side the replicates are too close together: each is moved away from the estimate by
/// sqrt(k / (k - 1)) of the side with fewest runs (the usual small-sample correction of a
/// cluster bootstrap). One run a side resamples loops, where it does not apply.
fn few_runs(mut reps: Replicates, kb: usize, kc: usize) -> Replicates {
    let k = [kb, kc].into_iter().filter(|k| *k > 1).min();
    let Some(k) = k else { return reps };
    let f = (k as f64 / (k as f64 - 1.0)).sqrt();
    let est = reps.estimate;
    for d in &mut reps.diffs {
        if d.is_finite() && est.is_finite() {
            *d = est + (*d - est) * f;
        }
    }
    reps
}

/// Two-sided bootstrap p of "no change": twice the smaller share of replicates on one side
/// of zero (each counted with the +1 of [`Replicates::share_at_most`]), at most 1.
fn two_sided_p(reps: &Replicates) -> f64 {
    let below_or_at = reps.share_at_most(0.0);
    let n = reps.diffs.len() as f64;
    let above_or_at = (1.0 + reps.diffs.iter().filter(|d| **d >= 0.0).count() as f64) / (n + 1.0);
    (2.0 * below_or_at.min(above_or_at)).min(1.0)
}

/// Sets each change's `p` to its Holm-adjusted value over the family and its verdict:
/// real when at least the noise bar and adjusted p under alpha. The family is one
/// column's checks in `compare`.
pub fn holm_verdicts(family: &mut [&mut QuantileChange], rule: &NoiseRule) {
    let raw: Vec<f64> = family.iter().map(|c| c.p.unwrap_or(1.0)).collect();
    let adjusted = holm(&raw);
    for (c, p) in family.iter_mut().zip(adjusted) {
        c.p = Some(p);
        c.verdict = verdict_of(c, p, rule);
    }
}

fn verdict_of(c: &QuantileChange, p: f64, rule: &NoiseRule) -> Verdict {
    // A quantile beyond the window on the candidate side only is a rise past any bar.
    let pct = if is_censored(c.candidate) && !is_censored(c.baseline) {
        f64::INFINITY
    } else {
        c.delta_pct
    };
    if pct.is_nan() || c.delta == 0.0 {
        return Verdict::NotSignificant;
    }
    if pct.abs() < rule.noise_bar_pct {
        return Verdict::Noise;
    }
    match (p < rule.alpha, c.delta > 0.0) {
        (true, true) => Verdict::Higher,
        (true, false) => Verdict::Lower,
        (false, _) => Verdict::NotSignificant,
    }
}

/// What a limit can see at these sample sizes.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Power {
    /// The smallest rise past the limit the gate fails with 80 % power, percent of the
    /// baseline (`z(1 - alpha/m) + z(0.8)` spreads of the replicates; `inf` when the
    /// replicates' spread is not finite).
    pub mde_pct: f64,
    /// Fewer than two loops a side lie above the quantile: it is a side's maximum.
    pub at_the_max: bool,
    /// Loops a side that would bring the detectable change down to the limit.
    pub loops_needed: u64,
}

/// Power of one latency limit of `limit_pct` on quantile `q`, with `checks` limits in the
/// family (the MDE is at the strictest Holm level, alpha / checks). The spread is of what
/// noise alone gives: the baseline's runs against an independent resample of themselves
/// (a candidate that regressed has a wider spread of its own, which says nothing about
/// what the gate could have seen).
pub fn power(
    baseline_runs: &[&[f64]],
    q: f64,
    n: (usize, usize),
    limit_pct: f64,
    rule: &NoiseRule,
    checks: usize,
) -> Power {
    let alpha = rule.alpha;
    let k = baseline_runs.len();
    let null = bootstrap_diff_replicates(baseline_runs, baseline_runs, q, &rule.bootstrap)
        .map(|r| few_runs(r, k, k));
    let baseline = quantile_sorted(&pooled(baseline_runs), q).unwrap_or(f64::NAN);
    let z = normal_quantile(1.0 - alpha / checks.max(1) as f64) + normal_quantile(0.8);
    let mde_pct = match null.as_ref().and_then(Replicates::spread) {
        Some(s) if s.is_finite() && baseline.abs() > 0.0 => 100.0 * z * s / baseline.abs(),
        _ => f64::INFINITY,
    };
    let n_min = n.0.min(n.1);
    let at_the_max = (n_min as f64) * (1.0 - q) < 2.0 - 1e-9;
    // The spread of a quantile shrinks as 1/sqrt(n).
    let by_spread = if mde_pct.is_finite() && limit_pct > 0.0 {
        (n_min as f64 * (mde_pct / limit_pct).powi(2)).ceil()
    } else {
        0.0
    };
    let by_tail = (2.0 / (1.0 - q).max(1e-9)).ceil();
    Power {
        mde_pct,
        at_the_max,
        loops_needed: by_spread.max(by_tail).min(u64::MAX as f64) as u64,
    }
}

impl Power {
    /// The limit cannot be seen: the quantile is a maximum, the runs cannot pin it down,
    /// or a rise as large as the limit is below what they detect. A limit of 0 asks only
    /// for a significant rise: its detectable change is printed, not required.
    pub fn underpowered(&self, limit_pct: f64) -> bool {
        self.at_the_max
            || !self.mde_pct.is_finite()
            || (limit_pct > 0.0 && self.mde_pct > limit_pct)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ascending run of `n` loops from `at` to `at + 9.75` ms.
    fn run(at: f64, n: usize) -> Vec<f64> {
        let mut v: Vec<f64> = (0..n).map(|i| at + (i % 40) as f64 * 0.25).collect();
        v.sort_by(f64::total_cmp);
        v
    }

    #[test]
    fn two_runs_a_side_widen_the_replicates_by_sqrt_two_around_the_estimate() {
        let (b1, b2, c1, c2) = (
            run(20.0, 200),
            run(23.0, 200),
            run(21.0, 200),
            run(24.0, 200),
        );
        let (b, c): ([&[f64]; 2], [&[f64]; 2]) = ([&b1, &b2], [&c1, &c2]);
        let rule = NoiseRule::default();
        let raw = bootstrap_diff_replicates(&b, &c, 0.5, &rule.bootstrap).unwrap();
        let d = decide(&b, &c, 0.5, &rule).unwrap();
        assert_eq!(d.reps.estimate, raw.estimate);
        for (w, r) in d.reps.diffs.iter().zip(&raw.diffs) {
            let want = raw.estimate + (r - raw.estimate) * 2f64.sqrt();
            assert!((w - want).abs() < 1e-9, "{w} vs {want}");
        }
        // One run a side resamples loops: nothing to correct.
        let one = decide(&[&b1], &[&c1], 0.5, &rule).unwrap();
        let raw = bootstrap_diff_replicates(&[&b1], &[&c1], 0.5, &rule.bootstrap).unwrap();
        assert_eq!(one.reps.diffs, raw.diffs);
    }

    #[test]
    fn a_p99_of_58_loops_is_a_maximum_and_a_p50_of_hundreds_is_not() {
        let b = run(20.0, 58);
        let rule = NoiseRule::default();
        let p = power(&[&b], 0.99, (58, 58), 20.0, &rule, 1);
        assert!(p.at_the_max && p.underpowered(20.0), "{p:?}");
        assert!(p.loops_needed >= 200, "{p:?}");
        let big = run(20.0, 600);
        let p = power(&[&big], 0.5, (600, 600), 20.0, &rule, 1);
        assert!(!p.at_the_max && !p.underpowered(20.0), "{p:?}");
        assert!(p.mde_pct > 0.0 && p.mde_pct < 20.0, "{p:?}");
        // A limit of 0 asks only for a significant rise: never refused for its size.
        assert!(!p.underpowered(0.0));
    }
}
