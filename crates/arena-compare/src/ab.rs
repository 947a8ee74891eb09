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

#[cfg(test)]
mod tests {
    use super::*;

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
