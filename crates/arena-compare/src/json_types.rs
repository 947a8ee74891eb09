//! The JSON documents of `compare`, `gate`, `pilot`, `ab` and `demo` as types: each
//! field is a key of the document and serde writes it, so the type is the schema
//! (`docs/schema/compare.json`, `gate.json`, `pilot.json`, `ab.json`). A figure that does
//! not exist is `None` or a non-finite `f64`, both written as `null`. Built from the
//! results in `json.rs`.

use std::collections::BTreeMap;

use arena_run::TypingSummary;
use arena_stats::{ChangeJson, Summary};
use serde::Serialize;

use crate::breakdown::BreakdownCell;
use crate::decide::Power;
use crate::findings::Finding;
use crate::gate::{CheckStatus, ShareCheck};
use crate::group::By;
use crate::limit::Limit;

/// `compare`'s document with its version and kind.
pub type CompareDocument<'a> = arena_report::json::Document<'a, CompareDoc<'a>>;

/// `compare --format json`.
#[derive(Debug, Clone, Serialize)]
pub struct CompareDoc<'a> {
    pub by: By,
    pub baseline: &'a str,
    pub columns: &'a [String],
    pub unit: &'static str,
    pub figures: &'static str,
    pub interval_method: &'a str,
    pub multiple_testing: &'static str,
    /// By metric name.
    pub metrics: BTreeMap<&'static str, MetricDoc>,
    pub findings: &'a [Finding],
    pub breakdowns: Vec<BreakdownDoc<'a>>,
    /// Each run's CPU (`compare --cpu` only; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Vec<RunCpuDoc<'a>>>,
    /// Drags and hovers, never pooled with the clicks: only when a run made gestures, so a
    /// comparison of runs without them reads exactly as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gestures: Option<&'a [crate::gestures::GestureEntry]>,
}

/// One run's CPU as sampled, `null` for a run without it.
#[derive(Debug, Clone, Serialize)]
pub struct RunCpuDoc<'a> {
    pub run: String,
    pub cpu: &'a Option<arena_run::RunCpu>,
}

/// One metric of the comparison: each figure keyed by column.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MetricDoc {
    pub n: BTreeMap<String, usize>,
    pub censored: BTreeMap<String, usize>,
    pub p50: BTreeMap<String, f64>,
    pub p90: BTreeMap<String, f64>,
    pub p99: BTreeMap<String, f64>,
    pub changes: BTreeMap<String, ChangesDoc>,
}

impl MetricDoc {
    /// The column map of quantile `name` (`p50`, `p90`, `p99`).
    pub fn quantile_mut(&mut self, name: &str) -> Option<&mut BTreeMap<String, f64>> {
        match name {
            "p50" => Some(&mut self.p50),
            "p90" => Some(&mut self.p90),
            "p99" => Some(&mut self.p99),
            _ => None,
        }
    }
}

/// One column's changes against the baseline; a quantile the comparison lacks is absent.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChangesDoc {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p50: Option<CompareChange>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p90: Option<CompareChange>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99: Option<CompareChange>,
    pub mann_whitney_p: Option<f64>,
}

/// A quantile's change, and whether either side's quantile landed beyond the window.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct CompareChange {
    #[serde(flatten)]
    pub change: ChangeJson,
    pub beyond_window: bool,
}

/// One `--split` of the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct BreakdownDoc<'a> {
    pub split: &'static str,
    /// The reply-size split's bucket bounds; `null` for the others.
    pub bounds_bytes: Option<&'a [u64]>,
    pub metric: &'static str,
    pub unit: &'static str,
    pub reply_over_bytes: u64,
    pub baseline: &'a str,
    pub columns: &'a [String],
    pub rows: &'a [String],
    pub cells: Vec<BreakdownCellDoc<'a>>,
}

/// One row and column of a breakdown: the cell's counts as it serializes them, then its
/// quantiles by name and its changes.
#[derive(Debug, Clone, Serialize)]
pub struct BreakdownCellDoc<'a> {
    #[serde(flatten)]
    pub cell: &'a BreakdownCell,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    pub changes: Option<ChangesDoc>,
}

/// One run's figures: `pilot --format json` and each of `ab`'s and `demo`'s runs.
#[derive(Debug, Clone, Serialize)]
pub struct RunDoc<'a> {
    pub arm: &'a str,
    pub url: &'a str,
    pub knobs: &'a BTreeMap<String, String>,
    pub browser: &'a Option<arena_run::BrowserSettings>,
    pub status: &'a arena_run::RunStatus,
    pub status_message: &'a Option<String>,
    pub started_at: &'a str,
    pub ended_at: &'a str,
    pub seed: u64,
    pub socket_source: &'a arena_run::SocketSource,
    pub run_folder: Option<String>,
    pub unit: &'static str,
    /// By metric name.
    pub metrics: BTreeMap<&'static str, Option<&'a Summary>>,
    pub cold: ColdDoc<'a>,
    pub typing: Option<TypingDoc<'a>>,
    pub coalesced: CoalescedDoc<'a>,
    pub loops: LoopsDoc,
    pub bytes: BytesDoc,
    pub sends: SendsDoc,
    pub records: RecordsDoc,
    pub answer: &'a Option<arena_run::AnswerInfo>,
    pub wire: &'a Option<arena_run::WireFigures>,
    pub cpu: &'a Option<arena_run::RunCpu>,
    pub warnings: &'a [arena_run::Warning],
}

#[derive(Debug, Clone, Serialize)]
pub struct ColdDoc<'a> {
    #[serde(rename = "inputToPaint")]
    pub input_to_paint: Option<&'a Summary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CoalescedDoc<'a> {
    pub inputs: u64,
    #[serde(rename = "inputToSocket")]
    pub input_to_socket: Option<&'a Summary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LoopsDoc {
    pub clicks_planned: u64,
    pub inputs_dispatched: u64,
    pub total: u64,
    pub answered: u64,
    pub unanswered: u64,
    pub claimed: u64,
    pub cold: u64,
    pub invariant_violations: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct BytesDoc {
    pub received_bytes: u64,
    pub frames_received: u64,
    pub sent_bytes: u64,
    pub idle_reply_bytes: u64,
    pub replies_over_idle: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SendsDoc {
    pub input: u64,
    pub ack: u64,
    pub other: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RecordsDoc {
    pub drained: u64,
    pub dropped: u64,
    pub stale: u64,
}

/// `summary.typing` with the unit it is in.
#[derive(Debug, Clone, Serialize)]
pub struct TypingDoc<'a> {
    pub unit: &'static str,
    #[serde(flatten)]
    pub typing: &'a TypingSummary,
}

/// `ab` and `demo`: every run in the order it ran, then the comparison (`null` when no
/// run finished).
#[derive(Debug, Clone, Serialize)]
pub struct AbDoc<'a> {
    pub runs: Vec<RunDoc<'a>>,
    pub comparison: Option<CompareDocument<'a>>,
}

/// `ab` and `demo` as they print it: [`AbDoc`] and the verdict under the tables (`null`
/// when nothing was compared).
#[derive(Debug, Clone, Serialize)]
pub struct AbVerdictDoc<'a> {
    #[serde(flatten)]
    pub ab: AbDoc<'a>,
    pub verdict: Option<VerdictsDoc<'a>>,
}

/// `gate --format json`.
#[derive(Debug, Clone, Serialize)]
pub struct GateDoc<'a> {
    pub failed: bool,
    pub unit: &'static str,
    pub alpha: f64,
    pub interval_method: &'a str,
    pub multiple_testing: &'static str,
    pub checks: Vec<GateCheckDoc<'a>>,
    /// The unanswered share's check.
    pub unanswered: &'a ShareCheck,
    /// The claimed share's check.
    pub claimed: &'a ShareCheck,
    /// `pass`, `fail` or `unknown`, after `--on-unknown`.
    pub outcome: &'static str,
    pub unknown: Vec<String>,
    pub on_unknown: crate::gate::OnUnknown,
    pub findings: &'a [Finding],
}

/// One `--max` check: its limit, its figures and its verdict.
#[derive(Debug, Clone, Serialize)]
pub struct GateCheckDoc<'a> {
    pub limit: &'a Limit,
    pub n_baseline: usize,
    pub n_candidate: usize,
    pub censored_baseline: u64,
    pub censored_candidate: u64,
    pub baseline: f64,
    pub candidate: f64,
    pub baseline_beyond_window: bool,
    pub candidate_beyond_window: bool,
    pub delta: f64,
    pub delta_pct: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub p_limit: f64,
    pub p_adjusted: f64,
    pub power: PowerDoc,
    pub status: CheckStatus,
    pub reason: &'a str,
}

/// What a limit can see, and whether that is short of the limit.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PowerDoc {
    #[serde(flatten)]
    pub power: Power,
    pub underpowered: bool,
}

/// The `verdict` object of `ab`'s and `demo`'s documents.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictsDoc<'a> {
    pub baseline: &'a str,
    pub metric: &'static str,
    pub unit: &'static str,
    pub figures: &'static str,
    pub interval_method: &'a str,
    pub alpha: f64,
    pub noise_bar_pct: f64,
    pub arms: Vec<ArmVerdictDoc<'a>>,
}

/// One candidate arm's verdict: pooled, round by round, and its byte counts.
#[derive(Debug, Clone, Serialize)]
pub struct ArmVerdictDoc<'a> {
    pub arm: &'a str,
    pub n_baseline: usize,
    pub n_candidate: usize,
    pub runs_baseline: usize,
    pub runs_candidate: usize,
    pub quantiles: VerdictQuantiles,
    pub rounds: Vec<RoundDoc>,
    pub bytes: CountsDoc<'a>,
    pub wire: Option<CountsDoc<'a>>,
    pub runs_agree: Option<bool>,
    pub disagreements: &'a [String],
    pub sentence: &'a str,
}

/// `{p50, p90, p99}`, the quantiles present, by name.
pub type VerdictQuantiles = BTreeMap<&'static str, VerdictChange>;

#[derive(Debug, Clone, Serialize)]
pub struct RoundDoc {
    pub round: usize,
    pub quantiles: VerdictQuantiles,
}

/// A quantile's change with both sides' figures and whether the rule calls it real.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct VerdictChange {
    pub baseline: f64,
    pub candidate: f64,
    #[serde(flatten)]
    pub change: ChangeJson,
    pub significant: bool,
    /// Where the interval's width comes from; `None` where no interval was drawn.
    pub spread: Option<SpreadDoc>,
}

/// The variance components of a change's interval: more runs narrow the between-run
/// part, more loops a run the within-run part.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SpreadDoc {
    /// SD of one run's offset from its arm's level, ms.
    pub run_sd_ms: f64,
    /// SD of one run's quantile from its own loops, ms.
    pub loop_sd_ms: f64,
    /// The between-run part's share of the change's variance, 0 to 1.
    pub between_share: f64,
    /// Degrees of freedom of the t quantile (`null`: the normal).
    pub df: Option<f64>,
    /// `runs` (measured), `assumed` (`--run-spread`, one run a side) or `unknown`.
    pub source: arena_stats::SpreadSource,
}

impl From<&arena_stats::Components> for SpreadDoc {
    fn from(k: &arena_stats::Components) -> SpreadDoc {
        let share = k.between_share();
        SpreadDoc {
            run_sd_ms: k.run_sd,
            loop_sd_ms: k.loop_sd,
            between_share: if share.is_finite() { share } else { 0.0 },
            df: k.df.is_finite().then_some(k.df),
            source: k.source,
        }
    }
}

/// A count per run of each side, and whether they differ.
#[derive(Debug, Clone, Serialize)]
pub struct CountsDoc<'a> {
    pub baseline_per_run: &'a [u64],
    pub candidate_per_run: &'a [u64],
    pub identical: bool,
    pub change_pct: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_stats::{DiffCi, QuantileChange, Verdict};

    fn keys(v: &serde_json::Value) -> Vec<&str> {
        v.as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    fn change() -> QuantileChange {
        QuantileChange {
            q: 0.5,
            baseline: 40.0,
            candidate: f64::INFINITY,
            delta: f64::INFINITY,
            delta_pct: f64::INFINITY,
            ci: Some(DiffCi {
                estimate: 2.0,
                lo: 1.0,
                hi: 3.0,
            }),
            p: None,
            verdict: Verdict::Higher,
            diff: None,
        }
    }

    #[test]
    fn compares_change_is_the_six_keys_and_beyond_window() {
        let c = change();
        let v = serde_json::to_value(CompareChange {
            change: (&c).into(),
            beyond_window: true,
        })
        .unwrap();
        assert_eq!(
            keys(&v),
            [
                "beyond_window",
                "ci_high",
                "ci_low",
                "delta",
                "delta_pct",
                "p",
                "verdict"
            ]
        );
        assert_eq!(
            (v["ci_low"].as_f64(), v["ci_high"].as_f64()),
            (Some(1.0), Some(3.0))
        );
        assert!(v["delta"].is_null() && v["p"].is_null());
        assert_eq!(v["verdict"], "higher");
    }

    #[test]
    fn the_verdicts_change_adds_both_sides_and_significance() {
        let c = change();
        let v = serde_json::to_value(VerdictChange {
            baseline: c.baseline,
            candidate: c.candidate,
            change: (&c).into(),
            significant: c.verdict.is_real(),
            spread: None,
        })
        .unwrap();
        assert_eq!(
            keys(&v),
            [
                "baseline",
                "candidate",
                "ci_high",
                "ci_low",
                "delta",
                "delta_pct",
                "p",
                "significant",
                "spread",
                "verdict"
            ]
        );
        assert_eq!(v["baseline"], 40.0);
        assert!(v["candidate"].is_null());
        assert_eq!(v["significant"], true);
    }

    #[test]
    fn abs_document_keeps_a_null_verdict_beside_its_runs_and_comparison() {
        let doc = AbVerdictDoc {
            ab: AbDoc {
                runs: Vec::new(),
                comparison: None,
            },
            verdict: None,
        };
        let v = serde_json::to_value(doc).unwrap();
        assert_eq!(keys(&v), ["comparison", "runs", "verdict"]);
        assert!(v["verdict"].is_null() && v["comparison"].is_null());
    }

    #[test]
    fn a_breakdown_cell_names_its_quantiles_and_leaves_out_the_raw_ones() {
        let cell = BreakdownCell {
            row: "mousedown".into(),
            column: "stock".into(),
            loops: 3,
            answered: 2,
            unanswered: 1,
            claimed: 0,
            cold: 0,
            replies_over: 2,
            n: 2,
            quantiles: [Some(10.0), None, None],
            change: None,
        };
        let v = serde_json::to_value(BreakdownCellDoc {
            cell: &cell,
            p50: cell.quantiles[0],
            p90: cell.quantiles[1],
            p99: cell.quantiles[2],
            changes: None,
        })
        .unwrap();
        assert_eq!(
            keys(&v),
            [
                "answered",
                "changes",
                "claimed",
                "cold",
                "column",
                "loops",
                "n",
                "p50",
                "p90",
                "p99",
                "replies_over",
                "row",
                "unanswered"
            ]
        );
        assert_eq!(
            (v["p50"].as_f64(), v["loops"].as_u64()),
            (Some(10.0), Some(3))
        );
    }

    #[test]
    fn a_quantile_the_comparison_lacks_is_absent_not_null() {
        let v = serde_json::to_value(ChangesDoc {
            p90: Some(CompareChange {
                change: (&change()).into(),
                beyond_window: false,
            }),
            ..ChangesDoc::default()
        })
        .unwrap();
        assert_eq!(keys(&v), ["mann_whitney_p", "p90"]);
        assert!(v["mann_whitney_p"].is_null());
    }
}
