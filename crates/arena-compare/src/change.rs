//! What a comparison is asked, and one metric's change between two columns: shared by
//! the comparison (`crate::compare`) and each breakdown's rows (`crate::breakdown`), so
//! both decide with one rule.

use anyhow::Result;
use arena_report::Exit;
use arena_run::Metric;
use arena_stats::{is_censored, mann_whitney_u_sorted, MannWhitney, NoiseRule, QuantileChange};
use serde::Serialize;

use crate::cells::QUANTILES;
use crate::decide::decide;
use crate::findings::CheckOptions;
use crate::group::{By, Group};
use crate::split::Split;

#[derive(Debug, Clone)]
pub struct CompareOptions {
    pub by: By,
    /// Column name or arm name of the baseline; the first column when `None`.
    pub baseline: Option<String>,
    /// Loop metrics to show; all four when empty.
    pub metrics: Vec<Metric>,
    pub verdict: NoiseRule,
    pub checks: CheckOptions,
    /// Breakdowns to add (`--split`), each a table of its own.
    pub splits: Vec<Split>,
    /// The reply size a breakdown counts answers at or over (`--reply-over`); the
    /// first run's `idle_reply_bytes` when `None`.
    pub reply_over: Option<u64>,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            by: By::Arm,
            baseline: None,
            metrics: Vec::new(),
            verdict: NoiseRule::default(),
            checks: CheckOptions::default(),
            splits: Vec::new(),
            reply_over: None,
        }
    }
}

/// One metric of one column against the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct MetricChange {
    pub column: String,
    pub metric: &'static str,
    /// Loops behind the figures, unanswered ones included.
    pub n_baseline: usize,
    pub n: usize,
    /// Of those, unanswered loops censored at the window.
    pub censored_baseline: usize,
    pub censored: usize,
    /// The U test of the pooled sides, for reference: it decides nothing (a location test
    /// barely moves when a tail does).
    pub mann_whitney: Option<MannWhitney>,
    /// p50, p90, p99; `p` and the interval are Bonferroni-adjusted over the three.
    pub quantiles: Vec<QuantileChange>,
}

/// One metric of one column against the baseline's, from each side's runs (by kind of
/// input, each ascending, unanswered loops censored at the window): the quantiles' changes by
/// [`crate::decide`]'s rule, with their raw p; the caller sets the verdicts over its
/// family of checks ([`crate::decide::settle_family`]). Every comparison of two samples (the comparison's figures, each
/// breakdown row) is this one.
pub(crate) fn metric_change(
    column: &str,
    m: Metric,
    b: &[arena_stats::Strata],
    c: &[arena_stats::Strata],
    rule: &NoiseRule,
) -> MetricChange {
    let (pb, pc) = (arena_stats::pooled_strata(b), arena_stats::pooled_strata(c));
    MetricChange {
        column: column.to_string(),
        metric: m.name(),
        n_baseline: pb.len(),
        n: pc.len(),
        censored_baseline: pb.iter().filter(|v| is_censored(**v)).count(),
        censored: pc.iter().filter(|v| is_censored(**v)).count(),
        mann_whitney: mann_whitney_u_sorted(&pb, &pc),
        quantiles: QUANTILES
            .iter()
            .filter_map(|&(q, _)| decide(b, c, q, rule).map(|d| d.change))
            .collect(),
    }
}

pub(crate) fn resolve_baseline(gs: &[Group], want: Option<&str>) -> Result<usize> {
    let Some(want) = want else { return Ok(0) };
    gs.iter()
        .position(|g| g.name == want)
        .or_else(|| gs.iter().position(|g| g.arm == want))
        .ok_or_else(|| {
            let names: Vec<&str> = gs.iter().map(|g| g.name.as_str()).collect();
            Exit::bad_input(format!(
                "--baseline {want}: no such arm or run among {}",
                names.join(", ")
            ))
            .into()
        })
}
