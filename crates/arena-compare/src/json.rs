//! `compare --format json`: the comparison as data, not as its table. Metric names are
//! keys, counts are integers, a figure that does not exist is `null`, and every time is in
//! the unit the document names (`"unit": "ms"`). The shape is `docs/schema/compare.json`:
//!
//! ```text
//! .metrics.sendToRecv.p50["lazy-png"]           the candidate's p50, ms
//! .metrics.sendToRecv.n.stock                   loops behind the baseline's figures
//! .metrics.sendToRecv.changes["lazy-png"].p50   {delta, delta_pct, ci_low, ci_high, p, verdict}
//! ```

use std::collections::BTreeMap;

use arena_report::json::{to_value, Document};
use serde_json::Value;

use crate::breakdown::{Breakdown, BreakdownCell, Split};
use crate::compare::{Comparison, MetricChange, QUANTILES};
use crate::json_types::{AbDoc, AbVerdictDoc, GateCheckDoc, GateDoc, PowerDoc, RunCpuDoc};
use crate::json_types::{
    BreakdownCellDoc, BreakdownDoc, BytesDoc, ChangesDoc, CoalescedDoc, ColdDoc, CompareChange,
    CompareDoc, CompareDocument, LoopsDoc, MetricDoc, RecordsDoc, RunDoc, SendsDoc, TypingDoc,
};
use crate::limit::Share;

pub use arena_report::{num, JSON_SCHEMA_VERSION};

/// The comparison as one JSON document.
pub fn comparison_json(c: &Comparison) -> Value {
    to_value(&comparison_doc(c))
}

/// [`comparison_json`] with each of `runs`' CPU as `cpu` when given (`compare --cpu`).
pub fn comparison_cpu_json(c: &Comparison, runs: Option<&[arena_run::Run]>) -> Value {
    let mut doc = comparison_doc(c);
    doc.body.cpu = runs.map(|runs| {
        crate::group::run_names(runs)
            .into_iter()
            .map(|(run, r)| RunCpuDoc {
                run,
                cpu: &r.meta.cpu,
            })
            .collect()
    });
    to_value(&doc)
}

/// The comparison as its typed document ([`comparison_json`] writes it).
pub fn comparison_doc(c: &Comparison) -> CompareDocument<'_> {
    let mut metrics: BTreeMap<&'static str, MetricDoc> = BTreeMap::new();
    for ch in &c.changes {
        let m = metrics.entry(ch.metric).or_default();
        m.n.insert(c.baseline.clone(), ch.n_baseline);
        m.n.insert(ch.column.clone(), ch.n);
        m.censored.insert(c.baseline.clone(), ch.censored_baseline);
        m.censored.insert(ch.column.clone(), ch.censored);
        for (q, name) in QUANTILES {
            if let (Some(qc), Some(col)) =
                (ch.quantiles.iter().find(|x| x.q == q), m.quantile_mut(name))
            {
                col.insert(c.baseline.clone(), qc.baseline);
                col.insert(ch.column.clone(), qc.candidate);
            }
        }
        m.changes.insert(ch.column.clone(), changes_doc(ch));
    }
    Document::new(
        "compare",
        CompareDoc {
            by: c.by,
            baseline: &c.baseline,
            columns: &c.columns,
            unit: "ms",
            figures: "every warm loop; an unanswered one is censored at the window: a quantile that lands on one is null, with its column's censored count",
            interval_method: &c.method,
            multiple_testing: "bonferroni over each metric's three quantiles, on the interval and the p alike",
            metrics,
            findings: &c.findings,
            breakdowns: c.breakdowns.iter().map(breakdown_doc).collect(),
            cpu: None,
            gestures: c.gestures.as_ref().map(|g| g.entries.as_slice()),
        },
    )
}

/// One metric's change against the baseline: `{p50: {delta, delta_pct, ci_low, ci_high,
/// p, verdict, beyond_window}, p90, p99, mann_whitney_p}`.
fn changes_doc(ch: &MetricChange) -> ChangesDoc {
    let quantile = |q: f64| {
        ch.quantiles
            .iter()
            .find(|x| x.q == q)
            .map(|qc| CompareChange {
                change: qc.into(),
                beyond_window: arena_stats::is_censored(qc.baseline)
                    || arena_stats::is_censored(qc.candidate),
            })
    };
    ChangesDoc {
        p50: quantile(QUANTILES[0].0),
        p90: quantile(QUANTILES[1].0),
        p99: quantile(QUANTILES[2].0),
        mann_whitney_p: ch.mann_whitney.as_ref().map(|u| u.p),
    }
}

/// One `--split` as data: `.rows` in order, `.cells[]` one per row and column with its
/// counts, its quantiles in ms and its `changes` against the baseline's same row (the
/// comparison's shape; `null` for the baseline and coalesced input).
pub fn breakdown_json(b: &Breakdown) -> Value {
    to_value(&breakdown_doc(b))
}

fn breakdown_doc(b: &Breakdown) -> BreakdownDoc<'_> {
    BreakdownDoc {
        split: b.split.name(),
        bounds_bytes: match &b.split {
            Split::ReplySize(v) => Some(v.as_slice()),
            _ => None,
        },
        metric: b.metric.name(),
        unit: "ms",
        reply_over_bytes: b.reply_over,
        baseline: &b.baseline,
        columns: &b.columns,
        rows: &b.rows,
        cells: b.cells.iter().map(breakdown_cell_doc).collect(),
    }
}

fn breakdown_cell_doc(cell: &BreakdownCell) -> BreakdownCellDoc<'_> {
    BreakdownCellDoc {
        cell,
        p50: cell.quantiles[0],
        p90: cell.quantiles[1],
        p99: cell.quantiles[2],
        changes: cell.change.as_ref().map(changes_doc),
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
    to_value(&run_doc(run, folder))
}

/// One run as its typed document ([`run_json`] writes it).
pub fn run_doc<'a>(run: &'a arena_run::Run, folder: Option<&std::path::Path>) -> RunDoc<'a> {
    let m = &run.meta;
    let s = &m.summary;
    let metrics = [
        (arena_run::Metric::InputToSocket, &s.input_to_socket),
        (arena_run::Metric::SendToRecv, &s.send_to_recv),
        (arena_run::Metric::RecvToDraw, &s.recv_to_draw),
        (arena_run::Metric::InputToPaint, &s.input_to_paint),
        (arena_run::Metric::InputToPixels, &s.input_to_pixels),
    ]
    .into_iter()
    .map(|(metric, sum)| (metric.name(), sum.as_ref()))
    .collect();
    RunDoc {
        arm: &m.arm,
        url: &m.url,
        knobs: &m.knobs,
        browser: &m.browser,
        status: &m.status,
        status_message: &m.status_message,
        started_at: &m.started_at,
        ended_at: &m.ended_at,
        seed: m.seed,
        socket_source: &m.socket_source,
        run_folder: folder.map(|f| f.display().to_string()),
        unit: "ms",
        metrics,
        cold: ColdDoc {
            input_to_paint: s.cold_input_to_paint.as_ref(),
        },
        typing: s.typing.as_ref().map(typing_doc),
        coalesced: CoalescedDoc {
            inputs: s.coalesced_inputs,
            input_to_socket: s.coalesced_input_to_socket.as_ref(),
        },
        loops: LoopsDoc {
            clicks_planned: s.clicks_planned,
            inputs_dispatched: s.inputs_dispatched,
            total: s.loops,
            answered: s.answered,
            unanswered: s.unanswered,
            claimed: s.claimed,
            cold: s.cold,
            invariant_violations: s.invariant_violations,
        },
        bytes: BytesDoc {
            received_bytes: s.bytes_received,
            frames_received: s.frames_received,
            sent_bytes: s.bytes_sent,
            idle_reply_bytes: s.idle_reply_bytes,
            replies_over_idle: s.replies_over_idle,
        },
        sends: SendsDoc {
            input: s.sends_input,
            ack: s.sends_ack,
            other: s.sends_other,
        },
        records: RecordsDoc {
            drained: s.records,
            dropped: s.dropped_records,
            stale: s.stale_records,
        },
        answer: &m.answer,
        wire: &m.wire,
        cpu: &m.cpu,
        warnings: &m.warnings,
    }
}

/// `pilot --format json`: one run as a document (`docs/schema/pilot.json`).
pub fn arm_json(run: &arena_run::Run, folder: Option<&std::path::Path>) -> Value {
    Document::new("pilot", run_doc(run, folder)).to_value()
}

/// `ab` and `demo` with `--format json`: every run in the order it ran, then the
/// comparison document of [`comparison_json`] (`docs/schema/ab.json`); `comparison` is
/// `null` when no run finished.
pub fn ab_json(
    kind: &str,
    runs: &[(&arena_run::Run, Option<&std::path::Path>)],
    comparison: Option<&Comparison>,
) -> Value {
    Document::new(kind, ab_doc(runs, comparison)).to_value()
}

/// [`ab_json`] with the verdict of `ab`'s and `demo`'s tables as `verdict` (`null` when
/// nothing was compared): the document those commands print.
pub fn ab_verdict_json(
    kind: &str,
    runs: &[(&arena_run::Run, Option<&std::path::Path>)],
    comparison: Option<&Comparison>,
    verdict: Option<&crate::verdict::Verdicts>,
) -> Value {
    let doc = AbVerdictDoc {
        ab: ab_doc(runs, comparison),
        verdict: verdict.map(|v| v.to_doc()),
    };
    Document::new(kind, doc).to_value()
}

fn ab_doc<'a>(
    runs: &[(&'a arena_run::Run, Option<&std::path::Path>)],
    comparison: Option<&'a Comparison>,
) -> AbDoc<'a> {
    AbDoc {
        runs: runs.iter().map(|(r, f)| run_doc(r, *f)).collect(),
        comparison: comparison.map(comparison_doc),
    }
}

/// `gate --format json`: every check with its limit, its figures and its verdict, and
/// whether the gate failed (`docs/schema/gate.json`).
pub fn gate_json(g: &crate::gate::GateResult) -> Value {
    let doc = GateDoc {
        failed: g.failed(),
        unit: "ms",
        alpha: g.alpha,
        interval_method: &g.method,
        multiple_testing: "bonferroni",
        checks: g.checks.iter().map(gate_check_doc).collect(),
        unanswered: g.share(Share::Unanswered),
        claimed: g.share(Share::Claimed),
        outcome: match g.outcome() {
            crate::gate::GateOutcome::Pass => "pass",
            crate::gate::GateOutcome::Fail => "fail",
            crate::gate::GateOutcome::Unknown => "unknown",
        },
        unknown: g.unknowns(),
        on_unknown: g.on_unknown,
        findings: &g.findings,
    };
    Document::new("gate", doc).to_value()
}

fn gate_check_doc(c: &crate::gate::GateCheck) -> GateCheckDoc<'_> {
    let ch = &c.change;
    GateCheckDoc {
        limit: &c.limit,
        n_baseline: c.n_baseline,
        n_candidate: c.n_candidate,
        censored_baseline: c.censored_baseline,
        censored_candidate: c.censored_candidate,
        baseline: ch.baseline,
        candidate: ch.candidate,
        baseline_beyond_window: arena_stats::is_censored(ch.baseline),
        candidate_beyond_window: arena_stats::is_censored(ch.candidate),
        delta: ch.delta,
        delta_pct: ch.delta_pct,
        ci_low: ch.ci.map(|ci| ci.lo),
        ci_high: ch.ci.map(|ci| ci.hi),
        p_limit: c.p_limit,
        p_adjusted: c.p_adjusted,
        power: PowerDoc {
            power: c.power,
            underpowered: c.power.underpowered(c.limit.max_pct),
        },
        status: c.status,
        reason: &c.reason,
    }
}

/// `summary.typing` as the JSON documents carry it (`null` for a run that did not type).
fn typing_doc(typing: &arena_run::TypingSummary) -> TypingDoc<'_> {
    TypingDoc { unit: "ms", typing }
}
