//! `matrix --format json`: the matrix as data (`docs/schema/matrix.json`). Every cell with
//! its figure in the matrix's `unit`, its repeats, its failures and its verdict against
//! the row's baseline cell, decided by [`crate::reduce`]; then every run in the order it
//! ran.
//!
//! ```text
//! .cells[] | select(.case == "numbers" and .arm == "best") | .value
//! .cells[].change.delta_pct      percent against the baseline arm, or null
//! ```

use arena_report::json::Document;
use arena_stats::{ChangeFigures, Verdict};
use serde::Serialize;
use serde_json::Value;

use crate::matrix::{MatrixResult, RunResult, RunStatus};
use crate::reduce::{reduce, CellVerdict, ReducedCell};
use crate::spec::{Better, Stat};

/// `matrix --format json`; the type is the schema. serde_json writes a non-finite `f64`
/// as `null`, the document's figure that does not exist.
#[derive(Debug, Clone, Serialize)]
pub struct MatrixDoc<'a> {
    pub title: &'a Option<String>,
    pub file: String,
    pub unit: &'a str,
    pub better: &'a Better,
    pub stat: &'a Stat,
    pub noise_pct: f64,
    pub repeats: u32,
    pub case_label: &'a str,
    pub cases: &'a [String],
    pub arms: &'a [String],
    pub baseline: Option<&'a String>,
    pub figure_kind: &'a str,
    pub out_dir: String,
    pub planned_runs: usize,
    pub interrupted: bool,
    pub u_test_applies: bool,
    /// The verdicts held at 0.05 together (every cell but the baseline's).
    pub family: usize,
    pub cells: Vec<CellDoc<'a>>,
    pub runs: Vec<RunDoc<'a>>,
}

/// One case and arm: its figure, its repeats and its verdict against the row's baseline.
#[derive(Debug, Clone, Serialize)]
pub struct CellDoc<'a> {
    pub case: &'a str,
    pub arm: &'a str,
    pub case_label: &'a str,
    pub arm_label: &'a str,
    pub value: Option<f64>,
    /// `value` is a lower bound: a pilot run's quantile reached an unanswered loop.
    pub at_least: bool,
    /// Decided on its runs' loops by compare's rule, not on its runs' figures.
    pub by_loops: bool,
    pub start: Option<f64>,
    pub runs: usize,
    pub figures: Vec<f64>,
    pub failures: &'a [String],
    /// `"baseline"`, a verdict against it, or `null` when none was reached.
    pub verdict: Option<CellVerdictDoc>,
    pub change: Option<CellChange>,
    pub cpu: CellCpuDoc<'a>,
}

#[derive(Debug, Clone, Copy, Serialize)]
#[serde(untagged)]
pub enum CellVerdictDoc {
    Baseline(&'static str),
    Compared(Verdict),
}

/// The change against the baseline cell, with the baseline's figure (its verdict is the
/// cell's).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct CellChange {
    pub baseline: f64,
    #[serde(flatten)]
    pub change: ChangeFigures,
}

/// Each run's process-tree CPU and its busiest thread.
#[derive(Debug, Clone, Serialize)]
pub struct CellCpuDoc<'a> {
    pub tree_pct_of_core: Vec<f64>,
    pub top_thread: Vec<TopThreadDoc<'a>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TopThreadDoc<'a> {
    pub process: &'a str,
    pub name: &'a str,
    pub pct_of_core: f64,
}

/// One run in the order it ran.
#[derive(Debug, Clone, Serialize)]
pub struct RunDoc<'a> {
    pub case: &'a str,
    pub arm: &'a str,
    pub repeat: u32,
    pub warmup: bool,
    pub status: &'static str,
    pub detail: Option<&'a String>,
    pub value: Option<f64>,
    pub start: Option<f64>,
    pub wall_s: f64,
    pub dir: String,
}

/// The whole matrix as one document.
pub fn matrix_json(m: &MatrixResult) -> Value {
    let reduced = reduce(m);
    let doc = MatrixDoc {
        title: &m.title,
        file: m.file.display().to_string(),
        unit: &m.unit,
        better: &m.better,
        stat: &m.stat,
        noise_pct: m.noise_pct,
        repeats: m.repeats,
        case_label: &m.case_label,
        cases: &m.cases,
        arms: &m.arms,
        baseline: m.arms.get(m.baseline),
        figure_kind: &m.figure_kind,
        out_dir: m.out_dir.display().to_string(),
        planned_runs: m.planned_runs,
        interrupted: m.interrupted,
        u_test_applies: reduced.u_test_applies,
        family: reduced.family,
        cells: reduced.cells.iter().map(|c| cell_doc(m, c)).collect(),
        runs: m.runs.iter().map(|r| run_doc(m, r)).collect(),
    };
    Document::new("matrix", doc).to_value()
}

fn cell_doc<'a>(m: &'a MatrixResult, c: &'a ReducedCell) -> CellDoc<'a> {
    let s = &c.summary;
    let (verdict, change) = match &c.verdict {
        CellVerdict::Baseline => (Some(CellVerdictDoc::Baseline("baseline")), None),
        CellVerdict::None => (None, None),
        CellVerdict::Compared(ch) => (
            Some(CellVerdictDoc::Compared(ch.verdict)),
            Some(CellChange {
                baseline: ch.baseline,
                change: ch.into(),
            }),
        ),
    };
    let cpu: Vec<_> = m
        .runs_of(c.case, c.arm)
        .filter_map(|r| r.cpu.as_ref())
        .collect();
    CellDoc {
        case: &m.cases[c.case],
        arm: &m.arms[c.arm],
        case_label: &m.case_labels[c.case],
        arm_label: &m.arm_labels[c.arm],
        value: s.value,
        at_least: s.at_least,
        by_loops: c.by_loops,
        start: s.start,
        runs: s.runs,
        figures: s.ok.iter().map(|o| o.0).collect(),
        failures: &s.failures,
        verdict,
        change,
        cpu: CellCpuDoc {
            tree_pct_of_core: cpu.iter().map(|c| c.tree_pct_of_core).collect(),
            top_thread: cpu
                .iter()
                .filter_map(|c| c.threads.first())
                .map(|t| TopThreadDoc {
                    process: &t.process,
                    name: &t.name,
                    pct_of_core: t.pct_of_core,
                })
                .collect(),
        },
    }
}

fn run_doc<'a>(m: &'a MatrixResult, r: &'a RunResult) -> RunDoc<'a> {
    let (status, detail) = match &r.status {
        RunStatus::Ok => ("ok", None),
        RunStatus::Died(d) => ("died", Some(d)),
        RunStatus::Timeout => ("timeout", None),
        RunStatus::NoFigure(d) => ("no_figure", Some(d)),
        RunStatus::SetupFailed(d) => ("setup_failed", Some(d)),
        RunStatus::NotStarted(d) => ("not_started", Some(d)),
    };
    RunDoc {
        case: &m.cases[r.case],
        arm: &m.arms[r.arm],
        repeat: r.repeat,
        warmup: r.warmup,
        status,
        detail,
        value: r.figure.as_ref().map(|f| f.value),
        start: r.figure.as_ref().and_then(|f| f.start),
        wall_s: r.wall_s,
        dir: r.dir.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_stats::QuantileChange;

    #[test]
    fn a_cells_change_has_its_figures_and_the_baseline_but_not_the_verdict() {
        let c = QuantileChange {
            q: 0.5,
            baseline: 10.0,
            candidate: 12.0,
            delta: 2.0,
            delta_pct: 20.0,
            ci: None,
            p: Some(0.01),
            verdict: Verdict::Higher,
            diff: None,
        };
        let v = serde_json::to_value(CellChange {
            baseline: c.baseline,
            change: (&c).into(),
        })
        .unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["baseline", "ci_high", "ci_low", "delta", "delta_pct", "p"]
        );
        assert_eq!(v["delta_pct"], 20.0);
        assert!(v["ci_low"].is_null());
        let verdict = serde_json::to_value(CellVerdictDoc::Compared(c.verdict)).unwrap();
        assert_eq!(verdict, "higher");
        let base = serde_json::to_value(CellVerdictDoc::Baseline("baseline")).unwrap();
        assert_eq!(base, "baseline");
    }
}
