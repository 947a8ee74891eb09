//! One rule for `compare`, `ab`, `demo`, `report` and `gate`: how a quantile changed,
//! and what that change is.
//!
//! The interval is [`arena_stats::hier_diff`]'s: each run's quantile with the spread its
//! own loops give it, the spread between runs estimated from the runs (never counted
//! twice), Student's t on the runs' degrees of freedom. With one run a side the
//! between-run spread is the assumed `--run-spread` (default
//! [`arena_stats::RUN_SPREAD_PCT`] of the baseline), and the table says so. Unanswered
//! loops stand at the window, and a side whose quantile reaches one is known only from
//! below: the interval is open on that side.
//!
//! A family of checks (a column's quantiles in `compare`, the gate's limits) is held at
//! `alpha` by Bonferroni: every interval is drawn at `1 - alpha / m` and every p is
//! multiplied by `m`, so an interval and its verdict never disagree. Four outcomes against
//! the threshold `--threshold` (percent of the baseline's quantile):
//!
//! - **faster** / **slower**: the interval lies wholly below / above 0 and the change is
//!   at least the threshold;
//! - **same**: the whole interval lies within the threshold either side of 0;
//! - **unknown**: anything else, with about how many more runs would decide it.
//!
//! `gate` fails a limit whose interval lies wholly past it, passes one whose interval
//! lies wholly under it, and calls the rest unknown.

use arena_stats::{
    hier_diff, is_censored, normal_quantile, pct_change, pooled_strata, quantile_sorted, t_sf,
    HierDiff, HierOptions, NoiseRule, QuantileChange, SpreadSource, Strata, Verdict,
};

/// Words for the interval method, printed under every table that shows one.
pub fn interval_method(rule: &NoiseRule, runs_b: usize, runs_c: usize) -> String {
    let how = match (runs_b.max(runs_c) > 1, rule.pairing) {
        (false, _) => match rule.run_spread_pct {
            Some(pct) => format!(
                "one run a side: the spread between runs is assumed, {pct} % of the baseline (--run-spread)"
            ),
            None => "one run a side and no --run-spread: the spread between runs is unknown".into(),
        },
        (true, arena_stats::Pairing::Rounds) if runs_b == runs_c => {
            "round N of each arm paired, the rounds' differences the units".into()
        }
        (true, _) => "runs the units, their spread pooled over both sides".into(),
    };
    format!(
        "each run's quantile with its loops' spread, plus the spread between runs, t on the runs' degrees of freedom: {how}; unanswered loops at the window; intervals at 1 − α/m (Bonferroni over m checks)"
    )
}

/// One quantile of a candidate against a baseline, and what its interval is built from.
pub struct Decided {
    pub change: QuantileChange,
    pub diff: HierDiff,
}

pub(crate) fn hier_options(rule: &NoiseRule) -> HierOptions {
    HierOptions {
        resamples: (rule.bootstrap.resamples / 5).clamp(100, 2000),
        seed: rule.bootstrap.seed,
        pairing: rule.pairing,
        window: None,
        run_spread_pct: rule.run_spread_pct,
        run_spread_df: arena_stats::RUN_SPREAD_DF,
    }
}

/// The change of quantile `q`: point estimates of the pooled sides, the raw two-sided p,
/// and the interval at `1 - alpha` (the family's level replaces it: [`settle_family`]).
/// Each side is its runs, each run its loops by kind ([`Strata`]). `None` when a side is
/// empty.
pub fn decide(
    baseline: &[Strata],
    candidate: &[Strata],
    q: f64,
    rule: &NoiseRule,
) -> Option<Decided> {
    let (pb, pc) = (pooled_strata(baseline), pooled_strata(candidate));
    let b = quantile_sorted(&pb, q)?;
    let c = quantile_sorted(&pc, q)?;
    let diff = hier_diff(baseline, candidate, q, &hier_options(rule))?;
    let delta = diff.estimate;
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
            ci: Some(diff.interval(1.0 - rule.alpha)),
            p: Some(diff.p_two_sided()),
            verdict: Verdict::Unknown,
            diff: Some(diff),
        },
        diff,
    })
}

/// The level of every interval of a family of `m` checks.
pub fn family_level(rule: &NoiseRule, m: usize) -> f64 {
    1.0 - rule.alpha / m.max(1) as f64
}

/// The header of an interval column of a family of `m` checks: `98.3% CI` (so the level
/// printed is the level drawn, never the nominal 95 %).
pub fn ci_header(alpha: f64, m: usize) -> String {
    let level = 100.0 * (1.0 - alpha / m.max(1) as f64);
    if (level - level.round()).abs() < 0.05 {
        format!("{level:.0}% CI")
    } else {
        format!("{level:.1}% CI")
    }
}

/// Draws each change's interval at the level of a family of `m` checks, multiplies its
/// p by `m`, and sets its verdict. The family is one metric's quantiles of one column in
/// `compare` (each metric is its own question), the gate's every check in `gate` (its
/// latency limits and the unanswered share: `m` is then larger than `family`).
pub fn settle_family(family: &mut [&mut QuantileChange], m: usize, rule: &NoiseRule) {
    let m = m.max(family.len()).max(1);
    let level = family_level(rule, m);
    for c in family.iter_mut() {
        if let Some(d) = c.diff {
            c.ci = Some(d.interval(level));
        }
        c.p = c.p.map(|p| (p * m as f64).min(1.0));
        c.verdict = verdict_of(c, rule);
    }
}

/// The threshold in ms: `--threshold` percent of the baseline's quantile.
fn threshold_ms(c: &QuantileChange, rule: &NoiseRule) -> f64 {
    rule.noise_bar_pct / 100.0 * c.baseline.abs()
}

fn verdict_of(c: &QuantileChange, rule: &NoiseRule) -> Verdict {
    let Some(ci) = c.ci else {
        return Verdict::Unknown;
    };
    if is_censored(c.baseline) || ci.lo.is_nan() || ci.hi.is_nan() {
        return Verdict::Unknown;
    }
    if c.diff.is_some_and(|d| d.sparse) {
        // Near a run's maximum the interval is too short: the rule does not apply.
        return Verdict::Unknown;
    }
    let thr = threshold_ms(c, rule);
    if ci.lo > 0.0 && c.delta >= thr {
        Verdict::Higher
    } else if ci.hi < 0.0 && -c.delta >= thr {
        Verdict::Lower
    } else if ci.lo >= -thr && ci.hi <= thr {
        Verdict::Same
    } else {
        Verdict::Unknown
    }
}

/// About how many more runs a side (rounds, when paired) would decide an unknown change,
/// at the spreads seen: enough to call it past the threshold, or enough to call it the
/// same, whichever is fewer. `None` when it is decided or nothing bounds its interval.
pub fn more_runs(c: &QuantileChange, rule: &NoiseRule) -> Option<usize> {
    if c.verdict != Verdict::Unknown {
        return None;
    }
    let (d, ci) = (c.diff?, c.ci?);
    if d.sparse {
        // More loops a run, not more runs, would let the rule apply.
        return None;
    }
    let half = (ci.hi - ci.lo) / 2.0;
    if !half.is_finite() || d.components.source == SpreadSource::Unknown {
        return None;
    }
    let thr = threshold_ms(c, rule);
    let centre = d.centre.abs();
    let need = |room: f64| -> Option<usize> {
        (room > 0.0).then(|| {
            let k = d.units as f64 * (half / room).powi(2);
            (k.ceil() as usize).saturating_sub(d.units).max(1)
        })
    };
    let call = if centre >= thr { need(centre) } else { None };
    let same = need(thr - centre);
    match (call, same) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Two-sided p of "the change is at most `limit`" in the sense of the interval: under
/// `a` exactly when the `1 - a` interval lies wholly past `limit`. 1 when the interval
/// is open below.
pub fn p_past(d: &HierDiff, limit: f64) -> f64 {
    if d.open_below || !d.se.is_finite() {
        return 1.0;
    }
    if d.open_above && d.centre <= limit {
        // Known only from below, and its known part is not past the limit.
        return 1.0;
    }
    if d.se == 0.0 {
        return if d.centre > limit { 0.0 } else { 1.0 };
    }
    (2.0 * t_sf((d.centre - limit) / d.se, d.components.df)).min(1.0)
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

/// Power of one latency limit of `limit_pct` on quantile `q`, with `checks` checks in
/// the family: the smallest rise past the limit that the interval of `d` (its standard
/// error as measured) would put wholly past it 80 % of the time.
pub fn power(
    d: &HierDiff,
    baseline: f64,
    q: f64,
    n: (usize, usize),
    limit_pct: f64,
    rule: &NoiseRule,
    checks: usize,
) -> Power {
    let z = normal_quantile(1.0 - rule.alpha / (2.0 * checks.max(1) as f64)) + normal_quantile(0.8);
    let mde_pct = if d.se.is_finite() && baseline.abs() > 0.0 {
        100.0 * z * d.se / baseline.abs()
    } else {
        f64::INFINITY
    };
    let n_min = n.0.min(n.1);
    let at_the_max = (n_min as f64) * (1.0 - q) < 2.0 - 1e-9;
    // The loops' part of the spread shrinks as 1/sqrt(n).
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

    fn one_kind(b: &[&[f64]], c: &[&[f64]], q: f64, rule: &NoiseRule) -> Decided {
        let (b, c) = (arena_stats::unstratified(b), arena_stats::unstratified(c));
        decide(&b, &c, q, rule).unwrap()
    }

    fn settled(b: &[&[f64]], c: &[&[f64]], q: f64, rule: &NoiseRule, m: usize) -> QuantileChange {
        let mut ch = one_kind(b, c, q, rule).change;
        let mut others: Vec<QuantileChange> = (1..m).map(|_| ch).collect();
        let mut family: Vec<&mut QuantileChange> = vec![&mut ch];
        family.extend(others.iter_mut());
        settle_family(&mut family, m, rule);
        ch
    }

    #[test]
    fn the_four_outcomes_and_the_interval_agree_with_the_verdict() {
        let rule = NoiseRule::default();
        let (b1, b2, b3) = (run(20.0, 200), run(20.2, 200), run(19.9, 200));
        let base: [&[f64]; 3] = [&b1, &b2, &b3];
        // 20 % faster in every run: faster.
        let (f1, f2, f3) = (run(16.0, 200), run(16.1, 200), run(15.9, 200));
        let c = settled(&base, &[&f1, &f2, &f3], 0.5, &rule, 3);
        assert_eq!(c.verdict, Verdict::Lower, "{c:?}");
        assert!(c.ci.unwrap().hi < 0.0);
        // Like runs of 800 loops on a testbed whose runs spread 0.5 %: same (the
        // interval within 2 % either side). At the default 5 % assumed, three runs a side
        // cannot tell it from a 2 % change.
        let steady = NoiseRule {
            run_spread_pct: Some(0.5),
            ..rule
        };
        let (l1, l2, l3) = (run(20.0, 800), run(20.2, 800), run(19.9, 800));
        let c = settled(&[&l1, &l2, &l3], &[&l2, &l3, &l1], 0.5, &steady, 3);
        assert_eq!(c.verdict, Verdict::Same, "{c:?}");
        let c = settled(&[&l1, &l2, &l3], &[&l2, &l3, &l1], 0.5, &rule, 3);
        assert_eq!(c.verdict, Verdict::Unknown, "{c:?}");
        let c = settled(&[&l1, &l2, &l3], &[&l2, &l3, &l1], 0.5, &steady, 3);
        assert_eq!(c.verdict, Verdict::Same, "{c:?}");
        // A change of 1 % is real but under the threshold: never faster or slower.
        let (s1, s2, s3) = (run(20.25, 200), run(20.45, 200), run(20.15, 200));
        let c = settled(&base, &[&s1, &s2, &s3], 0.5, &rule, 3);
        assert!(!c.verdict.is_real(), "{c:?}");
        // Runs that disagree: unknown, with more runs that would decide it.
        let (u1, u2, u3) = (run(15.0, 200), run(25.0, 200), run(18.0, 200));
        let c = settled(&base, &[&u1, &u2, &u3], 0.5, &rule, 3);
        assert_eq!(c.verdict, Verdict::Unknown, "{c:?}");
        assert!(more_runs(&c, &rule).unwrap() >= 1);
    }

    #[test]
    fn a_p99_near_each_runs_maximum_is_never_decided() {
        let rule = NoiseRule::default();
        // 150 loops a run: 1.5 above the p99. Twice as slow is still unknown there, and
        // decided at the p50 of the same runs.
        let (b1, b2) = (run(20.0, 150), run(20.1, 150));
        let (c1, c2) = (run(40.0, 150), run(40.2, 150));
        let c = settled(&[&b1, &b2], &[&c1, &c2], 0.99, &rule, 3);
        assert!(c.diff.unwrap().sparse);
        assert_eq!(c.verdict, Verdict::Unknown, "{c:?}");
        assert_eq!(more_runs(&c, &rule), None);
        let c = settled(&[&b1, &b2], &[&c1, &c2], 0.5, &rule, 3);
        assert_eq!(c.verdict, Verdict::Higher, "{c:?}");
    }

    #[test]
    fn a_larger_family_widens_the_interval_and_raises_p() {
        let rule = NoiseRule::default();
        let (b1, b2, c1, c2) = (
            run(20.0, 200),
            run(20.3, 200),
            run(20.8, 200),
            run(21.2, 200),
        );
        let one = settled(&[&b1, &b2], &[&c1, &c2], 0.5, &rule, 1);
        let twelve = settled(&[&b1, &b2], &[&c1, &c2], 0.5, &rule, 12);
        let w = |c: &QuantileChange| c.ci.unwrap().hi - c.ci.unwrap().lo;
        assert!(w(&twelve) > w(&one));
        assert!(twelve.p.unwrap() >= one.p.unwrap());
        // Interval and p agree at the family's level.
        for c in [one, twelve] {
            let excludes = c.ci.unwrap().excludes_zero();
            assert_eq!(excludes, c.p.unwrap() < rule.alpha, "{c:?}");
        }
    }

    #[test]
    fn a_p99_of_58_loops_is_a_maximum_and_a_p50_of_hundreds_is_not() {
        let rule = NoiseRule::default();
        let b = run(20.0, 58);
        let d = one_kind(&[&b], &[&b], 0.99, &rule).diff;
        let p = power(&d, 29.0, 0.99, (58, 58), 20.0, &rule, 1);
        assert!(p.at_the_max && p.underpowered(20.0), "{p:?}");
        assert!(p.loops_needed >= 200, "{p:?}");
        let big = run(20.0, 600);
        let d = one_kind(&[&big], &[&big], 0.5, &rule).diff;
        let p = power(&d, 25.0, 0.5, (600, 600), 20.0, &rule, 1);
        assert!(!p.at_the_max && !p.underpowered(20.0), "{p:?}");
        assert!(p.mde_pct > 0.0 && p.mde_pct < 20.0, "{p:?}");
    }

    #[test]
    fn p_past_is_under_alpha_exactly_when_the_interval_is_past_the_limit() {
        let rule = NoiseRule::default();
        let (b, c) = (run(20.0, 300), run(30.0, 300));
        let d = one_kind(&[&b], &[&c], 0.5, &rule).diff;
        for limit in [0.0, 5.0, 8.0, 9.0, 9.5, 10.0, 12.0] {
            let ci = d.interval(0.95);
            assert_eq!(
                ci.lo > limit,
                p_past(&d, limit) < 0.05,
                "limit {limit}: {ci:?}"
            );
        }
    }
}
