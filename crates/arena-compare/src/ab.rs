//! What `ab` and `demo` compare of the runs they made: pooled per arm against the
//! baseline, with the breakdowns asked for, and the verdict of each round's runs.

use anyhow::Result;
use arena_run::Run;

use crate::compare::{compare, CompareOptions, Comparison};
use crate::group::By;
use crate::options::SplitArgs;
use crate::verdict::{verdicts, Verdicts};

/// Pooled per arm against `baseline`, with the breakdowns asked for, at family-wise level
/// `alpha` (below 0.05 when a sequence of looks shares it). The verdict compares each
/// round's runs with the same options.
fn ab_compare_options(baseline: Option<String>, split: &SplitArgs, alpha: f64) -> CompareOptions {
    let mut opts = CompareOptions {
        by: By::Arm,
        baseline,
        splits: split.splits.clone(),
        reply_over: split.reply_over,
        ..Default::default()
    };
    opts.verdict.alpha = alpha;
    opts.verdict.bootstrap.level = 1.0 - alpha;
    opts
}

/// The runs pooled per arm against `baseline` at level `alpha`: deltas, intervals,
/// outcomes, and the breakdowns asked for; `None` when no run was made.
pub fn pooled(
    runs: &[Run],
    baseline: Option<String>,
    split: &SplitArgs,
    alpha: f64,
) -> Result<Option<Comparison>> {
    if runs.is_empty() {
        return Ok(None);
    }
    compare(runs, &ab_compare_options(baseline, split, alpha)).map(Some)
}

/// The verdict of each other arm against the baseline of `cmp` (made by [`pooled`] at
/// the same `alpha`).
pub fn verdict_at(runs: &[Run], cmp: &Comparison, split: &SplitArgs, alpha: f64) -> Verdicts {
    let opts = ab_compare_options(Some(cmp.baseline.clone()), split, alpha);
    verdicts(runs, cmp, &opts)
}

/// The family-wise level of a sequence of looks (`--until-decided`): each of its `looks`
/// spends `SEQUENCE_ALPHA / looks`.
pub const SEQUENCE_ALPHA: f64 = 0.05;

/// The level each look of `looks` is drawn at (`None`: one look).
pub fn alpha_of(looks: Option<u32>) -> f64 {
    SEQUENCE_ALPHA / looks.unwrap_or(1).max(1) as f64
}

/// Every headline quantile of every arm decided: faster, slower or the same.
pub fn all_decided(v: &Verdicts) -> bool {
    !v.arms.is_empty()
        && v.arms.iter().all(|a| {
            a.input.pooled.iter().all(|c| {
                matches!(
                    c.verdict,
                    arena_stats::Verdict::Lower
                        | arena_stats::Verdict::Higher
                        | arena_stats::Verdict::Same
                )
            })
        })
}

/// A look of a sequence at `runs` against `baseline`, at the level `looks` leaves each:
/// whether every headline quantile is decided, and the line progress shows.
pub fn look(runs: &[Run], looks: u32, baseline: &str, split: &SplitArgs) -> (bool, String) {
    let alpha = alpha_of(Some(looks));
    let (decided, what) = match pooled(runs, Some(baseline.to_string()), split, alpha) {
        Ok(Some(cmp)) => {
            let v = verdict_at(runs, &cmp, split, alpha);
            (all_decided(&v), verdict_line(&v))
        }
        Ok(None) => (false, "no run to compare yet".into()),
        Err(e) => (false, format!("no comparison: {e:#}")),
    };
    let line = format!("{what} (each look at \u{3b1} {alpha:.4}, {looks} planned)");
    (decided, line)
}

/// `lazy-png p50 faster, p90 faster, p99 unknown`, arms joined by `; `.
pub fn verdict_line(v: &Verdicts) -> String {
    let arm = |a: &crate::ArmVerdict| {
        let qs: Vec<String> = a
            .input
            .pooled
            .iter()
            .map(|c| format!("p{} {}", (c.q * 100.0).round(), c.verdict.word()))
            .collect();
        format!("{} {}", a.input.candidate, qs.join(", "))
    };
    v.arms.iter().map(arm).collect::<Vec<_>>().join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_look_spends_its_share_of_alpha() {
        assert_eq!(alpha_of(None), 0.05);
        assert!((alpha_of(Some(7)) - 0.05 / 7.0).abs() < 1e-15);
    }

    #[test]
    fn no_run_is_no_comparison() {
        assert!(pooled(&[], None, &SplitArgs::default(), 0.05)
            .unwrap()
            .is_none());
    }

    #[test]
    fn the_ab_options_pool_per_arm_with_the_splits_asked_for() {
        let split = SplitArgs {
            splits: Vec::new(),
            reply_over: Some(1024),
        };
        let opts = ab_compare_options(Some("stock".into()), &split, 0.01);
        assert_eq!(opts.verdict.alpha, 0.01);
        assert!(matches!(opts.by, By::Arm));
        assert_eq!(opts.baseline.as_deref(), Some("stock"));
        assert_eq!(opts.reply_over, Some(1024));
    }
}
