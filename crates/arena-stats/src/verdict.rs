//! The noise verdict: is a change of one quantile real? Every table that compares a
//! baseline with a candidate (compare, gate, matrix, the log tables) asks
//! [`noise_verdict`], and every percent change is [`pct_change`]; tables only render.
//!
//! A difference counts as real only when three things agree:
//! 1. the change is at least the noise bar (default 2 %: steps below it were not
//!    reproducible in the project's own history, whatever a p-value said); strictly under
//!    the bar is [`Verdict::Noise`];
//! 2. the Mann-Whitney U test rejects "same distribution" at `alpha`;
//! 3. the bootstrap interval of the quantile difference, at level `1 - alpha`, excludes 0
//!    (the U test alone says *something* moved, not that *this quantile* did).
//!
//! Over the bar without 2 and 3 is [`Verdict::NotSignificant`]. Both read `~` in tables
//! (benchstat's convention).
//!
//! Samples too small for the U test to reach `alpha` at all (3 runs against 3: its
//! smallest two-sided p is 0.1) follow [`SmallSamples`]: by default the test still
//! decides (so they are never real); a matrix of a few repeats asks for the bar alone.

use serde::{Deserialize, Serialize};

use crate::Pairing;

use crate::{
    bootstrap_quantile_diff, bootstrap_quantile_diff_runs, mann_whitney_u_sorted, quantile_sorted,
    BootstrapOptions, DiffCi,
};

/// The change of `candidate` against `baseline`, in percent of the baseline: the one rule
/// every table uses.
///
/// `(candidate - baseline) / |baseline| * 100`, so the sign is always the sign of
/// `candidate - baseline` (a negative baseline does not flip it). A zero baseline gives
/// 0 when the candidate is 0 too, and +inf or -inf (the direction of the change)
/// otherwise: a rise from 0 is past every limit. NaN in, NaN out. Renderers print a
/// non-finite percent as `-` (`arena_report::fmt_pct_change`).
pub fn pct_change(baseline: f64, candidate: f64) -> f64 {
    let delta = candidate - baseline;
    if baseline != 0.0 || delta.is_nan() {
        delta / baseline.abs() * 100.0
    } else if delta == 0.0 {
        0.0
    } else {
        delta.signum() * f64::INFINITY
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Under the noise bar.
    Noise,
    /// Significantly lower than the baseline.
    Lower,
    /// Significantly higher than the baseline.
    Higher,
    /// At or over the noise bar, but the test or the interval does not support it.
    NotSignificant,
    /// The whole interval lies within the threshold either side of 0: no change that
    /// matters (`compare`'s and the gate's rule, `arena_compare::decide`).
    Same,
    /// Neither a change past the threshold nor the same: the interval is too wide to
    /// tell (`compare`'s and the gate's rule).
    Unknown,
}

impl Verdict {
    /// Higher or Lower: a change the rule calls real.
    pub fn is_real(self) -> bool {
        matches!(self, Verdict::Higher | Verdict::Lower)
    }

    /// The rule's word for it: `faster`, `slower`, `same`, `unknown` (`noise` and `not
    /// significant` for the U-test rule of the matrix and the logs).
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Lower => "faster",
            Verdict::Higher => "slower",
            Verdict::Same => "same",
            Verdict::Unknown => "unknown",
            Verdict::Noise => "noise",
            Verdict::NotSignificant => "not significant",
        }
    }
}

/// What samples too small for the U test to reach `alpha` (see [`u_test_can_reach`]) mean.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SmallSamples {
    /// The test decides as always, so such a change is not significant.
    #[default]
    Test,
    /// The test and the interval are not consulted: the noise bar alone decides. For a
    /// handful of repeats (a matrix's runs), where no test could ever say yes.
    BarAlone,
}

/// The noise rule: the bar, the significance level and the interval's settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NoiseRule {
    /// Smallest change, in percent of the baseline, that can be called real.
    pub noise_bar_pct: f64,
    /// Significance level of the U test; the interval is drawn at `1 - alpha`.
    pub alpha: f64,
    /// Resamples and seed of the interval (its `level` is replaced by `1 - alpha`).
    pub bootstrap: BootstrapOptions,
    #[serde(default)]
    pub small_samples: SmallSamples,
    /// Whether `compare` and the gate pair interleaved rounds ([`crate::hier_diff`]).
    #[serde(default = "independent")]
    pub pairing: Pairing,
    /// The between-run spread assumed with one run a side, percent of the baseline's
    /// quantile; `None`: such a change is unknown.
    #[serde(default)]
    pub run_spread_pct: Option<f64>,
}

fn independent() -> Pairing {
    Pairing::Independent
}

/// The between-run spread assumed with one run a side, percent: measured on the fixture
/// match being played on a 2-core machine, where stock's run-to-run p50 and p90 moved by
/// 2 to 7 % (`docs/compare.md`, "One run a side").
pub const RUN_SPREAD_PCT: f64 = 5.0;

impl Default for NoiseRule {
    fn default() -> Self {
        NoiseRule {
            noise_bar_pct: 2.0,
            alpha: 0.05,
            bootstrap: BootstrapOptions::default(),
            small_samples: SmallSamples::Test,
            pairing: Pairing::Independent,
            run_spread_pct: Some(RUN_SPREAD_PCT),
        }
    }
}

/// One quantile of a candidate against the baseline, decided by [`noise_verdict`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuantileChange {
    pub q: f64,
    pub baseline: f64,
    pub candidate: f64,
    /// candidate - baseline, in the samples' unit.
    pub delta: f64,
    /// [`pct_change`] of baseline and candidate.
    pub delta_pct: f64,
    pub ci: Option<DiffCi>,
    /// The U test of the two whole (pooled) samples.
    pub p: Option<f64>,
    pub verdict: Verdict,
    /// What the interval is built from, for the rule of `compare` and the gate.
    #[serde(skip)]
    pub diff: Option<crate::HierDiff>,
}

/// A [`QuantileChange`] as every JSON document writes it: `{delta, delta_pct, ci_low,
/// ci_high, p, verdict}` (`docs/schema/compare.json`, `ab.json`). A document that says
/// more flattens this into its own type. serde_json writes a non-finite `f64` as `null`,
/// the documents' figure that does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChangeJson {
    #[serde(flatten)]
    pub figures: ChangeFigures,
    pub verdict: Verdict,
}

/// The figures of a [`ChangeJson`] without its verdict, for a document that gives the
/// verdict elsewhere (`matrix.json` puts it on the cell).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChangeFigures {
    pub delta: f64,
    pub delta_pct: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub p: Option<f64>,
}

impl From<&QuantileChange> for ChangeFigures {
    fn from(c: &QuantileChange) -> Self {
        ChangeFigures {
            delta: c.delta,
            delta_pct: c.delta_pct,
            ci_low: c.ci.map(|ci| ci.lo),
            ci_high: c.ci.map(|ci| ci.hi),
            p: c.p,
        }
    }
}

impl From<&QuantileChange> for ChangeJson {
    fn from(c: &QuantileChange) -> Self {
        ChangeJson {
            figures: c.into(),
            verdict: c.verdict,
        }
    }
}

/// Whether a two-sided U test of samples this small can reach `alpha` at all: its
/// smallest p is 2 / C(n1 + n2, n1) (3 against 3 can never go under 0.1).
pub fn u_test_can_reach(n1: usize, n2: usize, alpha: f64) -> bool {
    if n1 == 0 || n2 == 0 {
        return false;
    }
    let (k, n) = (n1.min(n2), n1 + n2);
    let mut c = 1.0f64;
    for i in 0..k {
        c = c * (n - i) as f64 / (i + 1) as f64;
    }
    2.0 / c < alpha
}

/// One side's runs (each ascending) as one ascending sample: borrowed when there is one
/// run.
pub fn pooled<'a>(runs: &[&'a [f64]]) -> std::borrow::Cow<'a, [f64]> {
    match runs {
        [one] => std::borrow::Cow::Borrowed(*one),
        _ => {
            let mut v: Vec<f64> = runs.iter().flat_map(|r| r.iter().copied()).collect();
            v.sort_unstable_by(f64::total_cmp);
            std::borrow::Cow::Owned(v)
        }
    }
}

/// The noise verdict on quantile `q` of a candidate sample against a baseline sample.
///
/// Each side is one or more runs, each ascending and NaN-free (one slice when the sample
/// is not split in runs). Quantiles and the U test are of the pooled sides; the interval
/// is of the loops when each side is one run, and resamples runs first when a side has
/// several (runs, not loops, are the unit that repeats). `None` when a side is empty.
pub fn noise_verdict(
    baseline: &[&[f64]],
    candidate: &[&[f64]],
    q: f64,
    rule: &NoiseRule,
) -> Option<QuantileChange> {
    let (pb, pc) = (pooled(baseline), pooled(candidate));
    debug_assert!(pb.is_sorted_by(|a, b| a <= b) && pc.is_sorted_by(|a, b| a <= b));
    let b = quantile_sorted(&pb, q)?;
    let c = quantile_sorted(&pc, q)?;
    let delta = c - b;
    let delta_pct = pct_change(b, c);
    let boot = BootstrapOptions {
        level: 1.0 - rule.alpha,
        ..rule.bootstrap
    };
    let ci = if baseline.len() > 1 || candidate.len() > 1 {
        bootstrap_quantile_diff_runs(baseline, candidate, q, &boot)
    } else {
        bootstrap_quantile_diff(&pb, &pc, q, &boot)
    };
    let p = mann_whitney_u_sorted(&pb, &pc).map(|m| m.p);
    let by_bar_alone = rule.small_samples == SmallSamples::BarAlone
        && !u_test_can_reach(pb.len(), pc.len(), rule.alpha);
    let verdict = if delta_pct.abs() < rule.noise_bar_pct {
        Verdict::Noise
    } else if by_bar_alone
        || (p.is_some_and(|p| p < rule.alpha) && ci.is_some_and(|ci| ci.excludes_zero()))
    {
        if delta > 0.0 {
            Verdict::Higher
        } else {
            Verdict::Lower
        }
    } else {
        Verdict::NotSignificant
    };
    Some(QuantileChange {
        q,
        baseline: b,
        candidate: c,
        delta,
        delta_pct,
        ci,
        p,
        verdict,
        diff: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_serializes_as_its_six_keys_with_null_for_what_is_missing() {
        let c = QuantileChange {
            q: 0.5,
            baseline: 10.0,
            candidate: f64::INFINITY,
            delta: f64::INFINITY,
            delta_pct: f64::NAN,
            ci: None,
            p: Some(0.25),
            verdict: Verdict::NotSignificant,
            diff: None,
        };
        let v = serde_json::to_value(ChangeJson::from(&c)).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["ci_high", "ci_low", "delta", "delta_pct", "p", "verdict"]
        );
        assert!(v["delta"].is_null() && v["delta_pct"].is_null() && v["ci_low"].is_null());
        assert_eq!(v["p"], 0.25);
        assert_eq!(v["verdict"], "not_significant");
    }

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
        let o = NoiseRule::default();
        let ch = noise_verdict(&[&a], &[&b], 0.5, &o).unwrap();
        assert_eq!(ch.verdict, Verdict::Higher);
        assert!((ch.delta - 10.0).abs() < 1e-9);
        let same = noise_verdict(&[&a], &[&a], 0.5, &o).unwrap();
        assert_eq!(same.verdict, Verdict::Noise);
    }

    #[test]
    fn below_the_noise_bar_is_noise_even_when_significant() {
        let a = sorted((0..4000).map(|i| 100.0 + (i % 10) as f64 * 0.01).collect());
        let b = sorted(a.iter().map(|v| v + 1.0).collect());
        let m = mann_whitney_u_sorted(&a, &b);
        assert!(m.unwrap().p < 1e-6);
        let ch = noise_verdict(&[&a], &[&b], 0.5, &NoiseRule::default()).unwrap();
        assert_eq!(ch.verdict, Verdict::Noise, "{ch:?}");
        let strict = NoiseRule {
            noise_bar_pct: 0.0,
            ..NoiseRule::default()
        };
        let ch = noise_verdict(&[&a], &[&b], 0.5, &strict).unwrap();
        assert_eq!(ch.verdict, Verdict::Higher);
    }

    #[test]
    fn one_rule_for_sign_and_zero_baseline() {
        assert_eq!(pct_change(100.0, 110.0), 10.0);
        assert_eq!(pct_change(-100.0, -90.0), 10.0);
        assert_eq!(pct_change(-100.0, -110.0), -10.0);
        assert_eq!(pct_change(0.0, 0.0), 0.0);
        assert_eq!(pct_change(0.0, 3.0), f64::INFINITY);
        assert_eq!(pct_change(0.0, -3.0), f64::NEG_INFINITY);
        assert!(pct_change(f64::NAN, 1.0).is_nan());
        assert!(pct_change(0.0, f64::NAN).is_nan());
    }

    #[test]
    fn over_the_bar_but_untestable_follows_the_small_sample_policy() {
        let (b, c) = ([80.0, 90.0, 100.0], [80.0, 91.0, 105.0]);
        let rule = NoiseRule::default();
        let ch = noise_verdict(&[&b], &[&c], 1.0, &rule).unwrap();
        assert_eq!(ch.verdict, Verdict::NotSignificant);
        assert_eq!(ch.delta_pct, 5.0);
        let bar = NoiseRule {
            small_samples: SmallSamples::BarAlone,
            ..rule
        };
        let ch = noise_verdict(&[&b], &[&c], 1.0, &bar).unwrap();
        assert_eq!(ch.verdict, Verdict::Higher);
        assert!(!u_test_can_reach(3, 3, 0.05) && u_test_can_reach(4, 4, 0.05));
        assert!(!u_test_can_reach(1, 20, 0.05) && !u_test_can_reach(0, 9, 0.05));
    }

    #[test]
    fn several_runs_a_side_resample_runs() {
        // Two baseline sessions 4 ms apart, two candidate sessions between them: the
        // interval that resamples runs carries that spread, the loop-level one does not.
        let run = |at: f64| -> Vec<f64> { (0..150).map(|i| at + (i % 30) as f64 * 0.05).collect() };
        let (slow, fast) = (run(24.0), run(20.0));
        let (c1, c2) = (run(23.0), run(23.0));
        let rule = NoiseRule::default();
        let by_runs = noise_verdict(&[&fast, &slow], &[&c1, &c2], 0.5, &rule).unwrap();
        let boot = BootstrapOptions {
            level: 1.0 - rule.alpha,
            ..rule.bootstrap
        };
        let want = bootstrap_quantile_diff_runs(&[&fast, &slow], &[&c1, &c2], 0.5, &boot);
        assert_eq!(by_runs.ci, want);
        assert_eq!(by_runs.verdict, Verdict::NotSignificant, "{by_runs:?}");
        let (pooled_b, pooled_c) = (pooled(&[&fast, &slow]), pooled(&[&c1, &c2]));
        let by_loops = noise_verdict(&[&pooled_b], &[&pooled_c], 0.5, &rule).unwrap();
        let width = |c: &QuantileChange| c.ci.map_or(0.0, |ci| ci.hi - ci.lo);
        assert!(width(&by_runs) > width(&by_loops), "{by_loops:?}");
        assert_eq!(
            (by_loops.delta_pct, by_loops.p),
            (by_runs.delta_pct, by_runs.p)
        );
    }
}
