//! `compare --format json`: the comparison as data, not as its table. Metric names are
//! keys, counts are integers, a figure that does not exist is `null`, and every time is in
//! the unit the document names (`"unit": "ms"`). The shape is `docs/schema/compare.json`:
//!
//! ```text
//! .metrics.sendToRecv.p50["lazy-png"]           the candidate's p50, ms
//! .metrics.sendToRecv.n.stock                   loops behind the baseline's figures
//! .metrics.sendToRecv.changes["lazy-png"].p50   {delta, delta_pct, ci_low, ci_high, p, verdict}
//! ```

use serde_json::{json, Map, Value};

use crate::breakdown::{Breakdown, Split};
use crate::compare::{Comparison, MetricChange, QUANTILES};

pub use arena_report::{num, JSON_SCHEMA_VERSION};

/// The comparison as one JSON document.
pub fn comparison_json(c: &Comparison) -> Value {
    let mut metrics = Map::new();
    for ch in &c.changes {
        let m = metrics
            .entry(ch.metric.to_string())
            .or_insert_with(empty_metric)
            .as_object_mut()
            .expect("a metric is an object");
        set(m, "n", &c.baseline, json!(ch.n_baseline));
        set(m, "n", &ch.column, json!(ch.n));
        set(m, "censored", &c.baseline, json!(ch.censored_baseline));
        set(m, "censored", &ch.column, json!(ch.censored));
        for (q, name) in QUANTILES {
            if let Some(qc) = ch.quantiles.iter().find(|x| x.q == q) {
                set(m, name, &c.baseline, num(qc.baseline));
                set(m, name, &ch.column, num(qc.candidate));
            }
        }
        set(m, "changes", &ch.column, changes_json(ch));
    }
    let mut v = json!({
        "schema_version": JSON_SCHEMA_VERSION,
        "kind": "compare",
        "by": c.by,
        "baseline": c.baseline,
        "columns": c.columns,
        "unit": "ms",
        "figures": "every warm loop; an unanswered one is censored at the window: a quantile that lands on one is null, with its column's censored count",
        "interval_method": c.method,
        "multiple_testing": "holm over each column's checks",
        "metrics": metrics,
        "findings": c.findings,
        "breakdowns": c.breakdowns.iter().map(breakdown_json).collect::<Vec<_>>(),
    });
    crate::gestures::add_json(&mut v, c.gestures.as_ref());
    v
}

/// One metric's change against the baseline: `{p50: {delta, delta_pct, ci_low, ci_high,
/// p, verdict}, p90, p99, mann_whitney_p}`.
fn changes_json(ch: &MetricChange) -> Value {
    let mut changes = Map::new();
    for (q, name) in QUANTILES {
        let Some(qc) = ch.quantiles.iter().find(|x| x.q == q) else {
            continue;
        };
        let ci = qc.ci.as_ref();
        changes.insert(
            name.to_string(),
            json!({
                "delta": num(qc.delta),
                "delta_pct": num(qc.delta_pct),
                "ci_low": ci.map_or(Value::Null, |c| num(c.lo)),
                "ci_high": ci.map_or(Value::Null, |c| num(c.hi)),
                "p": qc.p.map_or(Value::Null, num),
                "beyond_window": arena_stats::is_censored(qc.baseline) || arena_stats::is_censored(qc.candidate),
                "verdict": qc.verdict,
            }),
        );
    }
    changes.insert(
        "mann_whitney_p".into(),
        ch.mann_whitney.as_ref().map_or(Value::Null, |u| num(u.p)),
    );
    Value::Object(changes)
}

/// One `--split` as data: `.rows` in order, `.cells[]` one per row and column with its
/// counts, its quantiles in ms and its `changes` against the baseline's same row (the
/// comparison's shape; `null` for the baseline and coalesced input).
pub fn breakdown_json(b: &Breakdown) -> Value {
    let bounds = match &b.split {
        Split::ReplySize(v) => json!(v),
        _ => Value::Null,
    };
    let cells: Vec<Value> = b
        .cells
        .iter()
        .map(|c| {
            let q = |i: usize| c.quantiles[i].map_or(Value::Null, num);
            json!({
                "row": c.row,
                "column": c.column,
                "loops": c.loops,
                "answered": c.answered,
                "unanswered": c.unanswered,
                "claimed": c.claimed,
                "cold": c.cold,
                "replies_over": c.replies_over,
                "n": c.n,
                "p50": q(0),
                "p90": q(1),
                "p99": q(2),
                "changes": c.change.as_ref().map_or(Value::Null, changes_json),
            })
        })
        .collect();
    json!({
        "split": b.split.name(),
        "bounds_bytes": bounds,
        "metric": b.metric.name(),
        "unit": "ms",
        "reply_over_bytes": b.reply_over,
        "baseline": b.baseline,
        "columns": b.columns,
        "rows": b.rows,
        "cells": cells,
    })
}

fn empty_metric() -> Value {
    let mut m = Map::new();
    for key in ["n", "censored", "p50", "p90", "p99", "changes"] {
        m.insert(key.into(), Value::Object(Map::new()));
    }
    Value::Object(m)
}

/// `m[key][column] = v`.
fn set(m: &mut Map<String, Value>, key: &str, column: &str, v: Value) {
    if let Some(Value::Object(inner)) = m.get_mut(key) {
        inner.insert(column.to_string(), v);
    }
}

/// A latency summary in ms as `{n, min, mean, p50, p90, p99, max}`, or `null`.
pub fn summary_json(s: Option<&arena_stats::Summary>) -> Value {
    match s {
        Some(s) => json!({
            "n": s.n,
            "min": num(s.min),
            "mean": num(s.mean),
            "p50": num(s.p50),
            "p90": num(s.p90),
            "p99": num(s.p99),
            "max": num(s.max),
        }),
        None => Value::Null,
    }
}

/// One run's figures as data: what `pilot --format json` prints and what `ab` and `demo`
/// list per run. `folder` is the run folder, when known. The shape is
/// `docs/schema/pilot.json` (without `schema_version` and `kind`):
///
/// ```text
/// .metrics.sendToRecv.p50     warm answered loops' p50, ms
/// .loops.unanswered           loops nothing answered (an integer)
/// .bytes.received_bytes       WebSocket payload the page received
/// ```
pub fn run_json(run: &arena_run::Run, folder: Option<&std::path::Path>) -> Value {
    let m = &run.meta;
    let s = &m.summary;
    let metrics: Map<String, Value> = [
        (arena_run::Metric::InputToSocket, &s.input_to_socket),
        (arena_run::Metric::SendToRecv, &s.send_to_recv),
        (arena_run::Metric::RecvToDraw, &s.recv_to_draw),
        (arena_run::Metric::InputToPaint, &s.input_to_paint),
        (arena_run::Metric::InputToPixels, &s.input_to_pixels),
    ]
    .into_iter()
    .map(|(metric, sum)| (metric.name().to_string(), summary_json(sum.as_ref())))
    .collect();
    json!({
        "arm": m.arm,
        "url": m.url,
        "knobs": m.knobs,
        "browser": m.browser,
        "status": m.status,
        "status_message": m.status_message,
        "started_at": m.started_at,
        "ended_at": m.ended_at,
        "seed": m.seed,
        "socket_source": m.socket_source,
        "run_folder": folder.map(|f| f.display().to_string()),
        "unit": "ms",
        "metrics": metrics,
        "cold": { "inputToPaint": summary_json(s.cold_input_to_paint.as_ref()) },
        "typing": typing_json(s.typing.as_ref()),
        "coalesced": {
            "inputs": s.coalesced_inputs,
            "inputToSocket": summary_json(s.coalesced_input_to_socket.as_ref()),
        },
        "loops": {
            "clicks_planned": s.clicks_planned,
            "inputs_dispatched": s.inputs_dispatched,
            "total": s.loops,
            "answered": s.answered,
            "unanswered": s.unanswered,
            "claimed": s.claimed,
            "cold": s.cold,
            "invariant_violations": s.invariant_violations,
        },
        "bytes": {
            "received_bytes": s.bytes_received,
            "frames_received": s.frames_received,
            "sent_bytes": s.bytes_sent,
            "idle_reply_bytes": s.idle_reply_bytes,
            "replies_over_idle": s.replies_over_idle,
        },
        "sends": {
            "input": s.sends_input,
            "ack": s.sends_ack,
            "other": s.sends_other,
        },
        "records": {
            "drained": s.records,
            "dropped": s.dropped_records,
            "stale": s.stale_records,
        },
        "answer": m.answer,
        "wire": m.wire,
        "cpu": m.cpu,
        "warnings": m.warnings,
    })
}

/// `pilot --format json`: one run as a document (`docs/schema/pilot.json`).
pub fn arm_json(run: &arena_run::Run, folder: Option<&std::path::Path>) -> Value {
    arena_report::json::document("pilot", run_json(run, folder))
}

/// `ab` and `demo` with `--format json`: every run in the order it ran, then the
/// comparison document of [`comparison_json`] (`docs/schema/ab.json`); `comparison` is
/// `null` when no run finished.
pub fn ab_json(
    kind: &str,
    runs: &[(&arena_run::Run, Option<&std::path::Path>)],
    comparison: Option<&Comparison>,
) -> Value {
    let list: Vec<Value> = runs.iter().map(|(r, f)| run_json(r, *f)).collect();
    arena_report::json::document(
        kind,
        json!({
            "runs": list,
            "comparison": comparison.map_or(Value::Null, comparison_json),
        }),
    )
}

/// `gate --format json`: every check with its limit, its figures and its verdict, and
/// whether the gate failed (`docs/schema/gate.json`).
pub fn gate_json(g: &crate::gate::GateResult) -> Value {
    let checks: Vec<Value> = g
        .checks
        .iter()
        .map(|c| {
            let ch = &c.change;
            let ci = ch.ci.as_ref();
            json!({
                "limit": {
                    "metric": c.limit.metric,
                    "stat": c.limit.stat,
                    "q": c.limit.q,
                    "max_pct": c.limit.max_pct,
                },
                "n_baseline": c.n_baseline,
                "n_candidate": c.n_candidate,
                "censored_baseline": c.censored_baseline,
                "censored_candidate": c.censored_candidate,
                "baseline": num(ch.baseline),
                "candidate": num(ch.candidate),
                "baseline_beyond_window": arena_stats::is_censored(ch.baseline),
                "candidate_beyond_window": arena_stats::is_censored(ch.candidate),
                "delta": num(ch.delta),
                "delta_pct": num(ch.delta_pct),
                "ci_low": ci.map_or(Value::Null, |c| num(c.lo)),
                "ci_high": ci.map_or(Value::Null, |c| num(c.hi)),
                "p_limit": num(c.p_limit),
                "p_adjusted": num(c.p_adjusted),
                "power": {
                    "mde_pct": num(c.power.mde_pct),
                    "at_the_max": c.power.at_the_max,
                    "loops_needed": c.power.loops_needed,
                    "underpowered": c.power.underpowered(c.limit.max_pct),
                },
                "status": c.status,
                "reason": c.reason,
            })
        })
        .collect();
    let u = &g.unanswered;
    let counts = |c: &crate::gate::Counts| json!({"unanswered": c.unanswered, "loops": c.loops});
    arena_report::json::document(
        "gate",
        json!({
            "failed": g.failed(),
            "unit": "ms",
            "alpha": g.alpha,
            "interval_method": g.method,
            "multiple_testing": "holm",
            "checks": checks,
            "unanswered": {
                "max_pt": u.max_pt,
                "default": u.default,
                "baseline": counts(&u.baseline),
                "candidate": counts(&u.candidate),
                "rise_pt": num(u.rise_pt),
                "p": num(u.p),
                "p_adjusted": num(u.p_adjusted),
                "mde_pt": num(u.mde_pt),
                "status": u.status,
                "reason": u.reason,
            },
            "underpowered_allowed": g.underpowered,
            "findings": g.findings,
        }),
    )
}

/// `summary.typing` as the JSON documents carry it (`null` for a run that did not type).
pub fn typing_json(ty: Option<&arena_run::TypingSummary>) -> Value {
    let Some(ty) = ty else { return Value::Null };
    json!({
        "mode": ty.mode,
        "unit": "ms",
        "keys": ty.keys,
        "answered": ty.answered,
        "unanswered": ty.unanswered,
        "claimed": ty.claimed,
        "keydown_to_socket": summary_json(ty.keydown_to_socket.as_ref()),
        "keydown_to_glyph": summary_json(ty.keydown_to_glyph.as_ref()),
        "glyph_frames": ty.glyph_frames,
        "frames_with_several": ty.frames_with_several,
        "max_keys_behind": ty.max_keys_behind,
    })
}
