//! `matrix --format json`: the matrix as data (`docs/schema/matrix.json`). Every cell with
//! its figure in the matrix's `unit`, its repeats, its failures and its verdict against
//! the row's baseline cell, decided by [`crate::reduce`]; then every run in the order it
//! ran.
//!
//! ```text
//! .cells[] | select(.case == "numbers" and .arm == "best") | .value
//! .cells[].change.delta_pct      percent against the baseline arm, or null
//! ```

use arena_report::json::document;
use arena_report::num;
use serde_json::{json, Value};

use crate::matrix::{MatrixResult, RunStatus};
use crate::reduce::{reduce, CellVerdict};

/// The whole matrix as one document.
pub fn matrix_json(m: &MatrixResult) -> Value {
    let reduced = reduce(m);
    let cells: Vec<Value> = reduced
        .cells
        .iter()
        .map(|c| {
            let s = &c.summary;
            let (verdict, change) = match &c.verdict {
                CellVerdict::Baseline => (json!("baseline"), Value::Null),
                CellVerdict::None => (Value::Null, Value::Null),
                CellVerdict::Compared(ch) => {
                    let ci = ch.ci.as_ref();
                    (
                        json!(ch.verdict),
                        json!({
                            "baseline": num(ch.baseline),
                            "delta": num(ch.delta),
                            "delta_pct": num(ch.delta_pct),
                            "ci_low": ci.map_or(Value::Null, |c| num(c.lo)),
                            "ci_high": ci.map_or(Value::Null, |c| num(c.hi)),
                            "p": ch.p.map_or(Value::Null, num),
                        }),
                    )
                }
            };
            let cpu: Vec<_> = m
                .runs_of(c.case, c.arm)
                .filter_map(|r| r.cpu.as_ref())
                .collect();
            json!({
                "case": m.cases[c.case],
                "arm": m.arms[c.arm],
                "case_label": m.case_labels[c.case],
                "arm_label": m.arm_labels[c.arm],
                "value": s.value.map_or(Value::Null, num),
                "start": s.start.map_or(Value::Null, num),
                "runs": s.runs,
                "figures": s.ok.iter().map(|o| num(o.0)).collect::<Vec<_>>(),
                "failures": s.failures,
                "verdict": verdict,
                "change": change,
                "cpu": {
                    "tree_pct_of_core": cpu.iter().map(|c| num(c.tree_pct_of_core)).collect::<Vec<_>>(),
                    "top_thread": cpu.iter().filter_map(|c| c.threads.first()).map(|t| json!({
                        "process": t.process,
                        "name": t.name,
                        "pct_of_core": num(t.pct_of_core),
                    })).collect::<Vec<_>>(),
                },
            })
        })
        .collect();
    let runs: Vec<Value> = m
        .runs
        .iter()
        .map(|r| {
            let (status, detail) = match &r.status {
                RunStatus::Ok => ("ok", None),
                RunStatus::Died(d) => ("died", Some(d)),
                RunStatus::Timeout => ("timeout", None),
                RunStatus::NoFigure(d) => ("no_figure", Some(d)),
                RunStatus::SetupFailed(d) => ("setup_failed", Some(d)),
                RunStatus::NotStarted(d) => ("not_started", Some(d)),
            };
            json!({
                "case": m.cases[r.case],
                "arm": m.arms[r.arm],
                "repeat": r.repeat,
                "warmup": r.warmup,
                "status": status,
                "detail": detail,
                "value": r.figure.as_ref().map_or(Value::Null, |f| num(f.value)),
                "start": r.figure.as_ref().and_then(|f| f.start).map_or(Value::Null, num),
                "wall_s": num(r.wall_s),
                "dir": r.dir.display().to_string(),
            })
        })
        .collect();
    document(
        "matrix",
        json!({
            "title": m.title,
            "file": m.file.display().to_string(),
            "unit": m.unit,
            "better": m.better,
            "stat": m.stat,
            "noise_pct": num(m.noise_pct),
            "repeats": m.repeats,
            "case_label": m.case_label,
            "cases": m.cases,
            "arms": m.arms,
            "baseline": m.arms.get(m.baseline),
            "figure_kind": m.figure_kind,
            "out_dir": m.out_dir.display().to_string(),
            "planned_runs": m.planned_runs,
            "interrupted": m.interrupted,
            "u_test_applies": reduced.u_test_applies,
            "cells": cells,
            "runs": runs,
        }),
    )
}
