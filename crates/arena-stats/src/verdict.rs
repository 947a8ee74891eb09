//! The noise verdict: is a change of one quantile real?
//!
//! A difference counts as real only when three things agree:
//! 1. the Mann-Whitney U test rejects "same distribution" at `alpha`;
//! 2. the bootstrap interval of the quantile difference, at level `1 - alpha`, excludes 0
//!    (the U test alone says *something* moved, not that *this quantile* did);
//! 3. the change is at least the noise bar (default 2 %: steps below it were not
//!    reproducible in the project's own history, whatever a p-value said).
//!
//! Anything else is noise, shown as `~` (benchstat's convention).

use serde::{Deserialize, Serialize};

use crate::{bootstrap_quantile_diff, quantile_sorted, BootstrapOptions, DiffCi, MannWhitney};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Not significant, or below the noise bar.
    Noise,
    /// Significantly lower than the baseline.
    Lower,
    /// Significantly higher than the baseline.
    Higher,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct VerdictOptions {
    pub alpha: f64,
    /// Smallest change, in percent of the baseline, that can be called real.
    pub noise_bar_pct: f64,
    pub bootstrap: BootstrapOptions,
}

impl Default for VerdictOptions {
    fn default() -> Self {
        VerdictOptions {
            alpha: 0.05,
            noise_bar_pct: 2.0,
            bootstrap: BootstrapOptions::default(),
        }
    }
}

/// One quantile of a candidate against the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuantileChange {
    pub q: f64,
    pub baseline: f64,
    pub candidate: f64,
    /// candidate - baseline, in the samples' unit.
    pub delta: f64,
    /// delta in percent of the baseline (NaN when the baseline is 0).
    pub delta_pct: f64,
    pub ci: Option<DiffCi>,
    /// The U test of the two whole samples (shared by every quantile of a metric).
    pub p: Option<f64>,
    pub verdict: Verdict,
}

/// The verdict on a difference from its p-value and interval (see the module docs).
pub fn verdict_of(
    delta: f64,
    delta_pct: f64,
    p: Option<f64>,
    ci: Option<&DiffCi>,
    opts: &VerdictOptions,
) -> Verdict {
    let significant = p.is_some_and(|p| p < opts.alpha)
        && ci.is_some_and(|ci| ci.excludes_zero())
        && (delta_pct.is_nan() || delta_pct.abs() >= opts.noise_bar_pct);
    match (significant, delta > 0.0) {
        (false, _) => Verdict::Noise,
        (true, true) => Verdict::Higher,
        (true, false) => Verdict::Lower,
    }
}

/// Compares quantile `q` of two ascending, NaN-free samples. `mwu` is the U test of the
/// same two samples (computed once per metric by the caller). `None` when a sample is
/// empty.
pub fn quantile_change(
    baseline: &[f64],
    candidate: &[f64],
    q: f64,
    mwu: Option<&MannWhitney>,
    opts: &VerdictOptions,
) -> Option<QuantileChange> {
    let b = quantile_sorted(baseline, q)?;
    let c = quantile_sorted(candidate, q)?;
    let delta = c - b;
    let delta_pct = if b != 0.0 {
        delta / b.abs() * 100.0
    } else {
        f64::NAN
    };
    let boot = BootstrapOptions {
        level: 1.0 - opts.alpha,
        ..opts.bootstrap
    };
    let ci = bootstrap_quantile_diff(baseline, candidate, q, &boot);
    let p = mwu.map(|m| m.p);
    let verdict = verdict_of(delta, delta_pct, p, ci.as_ref(), opts);
    Some(QuantileChange {
        q,
        baseline: b,
        candidate: c,
        delta,
        delta_pct,
        ci,
        p,
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mann_whitney_u_sorted;

    fn sorted(mut v: Vec<f64>) -> Vec<f64> {
        v.sort_by(f64::total_cmp);
        v
    }

    #[test]
    fn shift_is_real_same_is_noise() {
        let a = sorted(
            (0..400)
                .map(|i| 40.0 + (i * 37 % 101) as f64 * 0.2)
                .collect(),
        );
        let b = sorted(a.iter().map(|v| v + 10.0).collect());
        let o = VerdictOptions::default();
        let m = mann_whitney_u_sorted(&a, &b);
        let ch = quantile_change(&a, &b, 0.5, m.as_ref(), &o).unwrap();
        assert_eq!(ch.verdict, Verdict::Higher);
        assert!((ch.delta - 10.0).abs() < 1e-9);
        let m = mann_whitney_u_sorted(&a, &a);
        let same = quantile_change(&a, &a, 0.5, m.as_ref(), &o).unwrap();
        assert_eq!(same.verdict, Verdict::Noise);
    }

    #[test]
    fn below_the_noise_bar_is_noise_even_when_significant() {
        let a = sorted((0..4000).map(|i| 100.0 + (i % 10) as f64 * 0.01).collect());
        let b = sorted(a.iter().map(|v| v + 1.0).collect());
        let m = mann_whitney_u_sorted(&a, &b);
        assert!(m.unwrap().p < 1e-6);
        let ch = quantile_change(&a, &b, 0.5, m.as_ref(), &VerdictOptions::default()).unwrap();
        assert_eq!(ch.verdict, Verdict::Noise, "{ch:?}");
        let strict = VerdictOptions {
            noise_bar_pct: 0.0,
            ..VerdictOptions::default()
        };
        let ch = quantile_change(&a, &b, 0.5, m.as_ref(), &strict).unwrap();
        assert_eq!(ch.verdict, Verdict::Higher);
    }
}
