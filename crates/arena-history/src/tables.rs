//! The history commands' tables and JSON documents: built here, rendered by
//! `arena_report` in whichever `--format` was asked for.

use arena_compare::html::TrendSection;
use arena_compare::trend_plot::{trend_svg, TrendMark, TrendPoint, TrendSeries};
use arena_report::json::document;
use arena_report::{fmt_ms, num, Cell, Column, Table};
use arena_run::Run;
use serde_json::{json, Value};

use crate::store::{open_default, Added, Filter, RunRow, StoredCounts};
use crate::trend::{trend, Step, Trend, TrendOptions};

fn short(hash: &str) -> String {
    hash.get(..12).unwrap_or(hash).to_string()
}

fn opt(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "-".into())
}

/// `history add`: what became of each run folder (`source`, as given), in the history
/// `db` describes.
pub fn add_table(db: &str, added: &[(String, Added)]) -> Table {
    let mut table = Table::new(vec![
        Column::left("run"),
        Column::right("id"),
        Column::left("stored"),
    ])
    .with_title(format!("history add ({db})"));
    for (source, a) in added {
        table.push_row(vec![
            Cell::text(source),
            Cell::num(a.id().to_string(), a.id() as f64),
            Cell::text(stored(*a)),
        ]);
    }
    table
}

/// `history add --format json`.
pub fn add_json(added: &[(String, Added)]) -> Value {
    let rows: Vec<Value> = added
        .iter()
        .map(|(source, a)| json!({"run": source, "id": a.id(), "stored": stored(*a)}))
        .collect();
    document("history_add", json!({ "runs": rows }))
}

fn stored(a: Added) -> &'static str {
    match a {
        Added::New(_) => "added",
        Added::Duplicate(_) => "already stored",
    }
}

/// `history list`: one row a stored run, oldest first.
pub fn list_table(rows: &[RunRow]) -> Table {
    let cols = [
        "id", "branch", "commit", "testbed", "arm", "pilot", "status", "started", "loops",
    ];
    let mut t = Table::new(
        cols.iter()
            .map(|c| {
                if *c == "id" || *c == "loops" {
                    Column::right(*c)
                } else {
                    Column::left(*c)
                }
            })
            .collect(),
    )
    .with_title(format!("stored runs (n = {})", rows.len()));
    for r in rows {
        t.push_row(vec![
            Cell::num(r.id.to_string(), r.id as f64),
            Cell::text(opt(&r.branch)),
            Cell::text(r.commit.as_deref().map_or("-".into(), short)),
            Cell::text(&r.testbed),
            Cell::text(&r.arm),
            Cell::text(short(&r.pilot_hash)),
            Cell::text(&r.status),
            Cell::text(&r.started_at),
            Cell::num(r.loops.to_string(), r.loops as f64),
        ]);
    }
    t
}

fn row_json(r: &RunRow) -> Value {
    json!({
        "id": r.id,
        "content_hash": r.content_hash,
        "added_at": r.added_at,
        "branch": r.branch,
        "commit": r.commit,
        "testbed": r.testbed,
        "arm": r.arm,
        "pilot_hash": r.pilot_hash,
        "status": r.status,
        "started_at": r.started_at,
        "ended_at": r.ended_at,
        "knobs": r.knobs,
        "loops": r.loops,
        "answered": r.answered,
        "unanswered": r.unanswered,
        "source": r.source,
    })
}

/// `history list --format json`.
pub fn list_json(rows: &[RunRow]) -> Value {
    document(
        "history_list",
        json!({ "runs": rows.iter().map(row_json).collect::<Vec<_>>() }),
    )
}

/// `history show`: one run's fields, what is stored of it, its warnings and CPU by phase.
pub fn show_table(r: &RunRow, counts: &StoredCounts, run: &Run) -> Table {
    let mut t = Table::new(vec![Column::left("field"), Column::left("value")])
        .with_title(format!("stored run {}", r.id));
    let knobs: Vec<String> = r.knobs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let fields: [(&str, String); 14] = [
        ("arm", r.arm.clone()),
        ("branch", opt(&r.branch)),
        ("commit", opt(&r.commit)),
        ("testbed", r.testbed.clone()),
        ("pilot hash", r.pilot_hash.clone()),
        (
            "knobs",
            if knobs.is_empty() {
                "-".into()
            } else {
                knobs.join(", ")
            },
        ),
        ("status", r.status.clone()),
        ("started", r.started_at.clone()),
        ("ended", r.ended_at.clone()),
        ("added", r.added_at.clone()),
        ("source", opt(&r.source)),
        ("content hash", r.content_hash.clone()),
        (
            "loops (n)",
            format!(
                "{} ({} answered, {} unanswered)",
                counts.loops, r.answered, r.unanswered
            ),
        ),
        (
            "records, warnings, CPU rows (n)",
            format!("{}, {}, {}", counts.events, counts.warnings, counts.cpu),
        ),
    ];
    for (k, v) in fields {
        t.push_row(vec![Cell::text(k), Cell::text(v)]);
    }
    for w in &run.meta.warnings {
        t.note(format!("\u{26a0} {}: {}", w.code, w.message));
    }
    if let Some(cpu) = &run.meta.cpu {
        for p in &cpu.processes {
            let by_phase: Vec<String> = cpu
                .phases
                .iter()
                .zip(&p.pct_of_core)
                .map(|(ph, pct)| format!("{} {pct:.1} %", ph.name))
                .collect();
            t.note(format!(
                "CPU {} (% of one core, {} samples): {}",
                p.label,
                cpu.samples,
                by_phase.join(", ")
            ));
        }
    }
    t
}

/// `history show --format json`.
pub fn show_json(r: &RunRow, counts: &StoredCounts, run: &Run) -> Value {
    document(
        "history_run",
        json!({
            "run": row_json(r),
            "stored": {
                "loops": counts.loops,
                "events": counts.events,
                "warnings": counts.warnings,
                "cpu_rows": counts.cpu,
            },
            "warnings": run.meta.warnings,
            "cpu": run.meta.cpu,
        }),
    )
}

fn step_at(trend: &Trend, i: usize) -> Option<&Step> {
    trend.steps.iter().find(|s| s.at == i)
}

/// `history trend`: one row a run, the quantile with its interval, a step marked on the
/// run where the new level starts; the steps listed under it.
pub fn trend_table(trend: &Trend) -> Table {
    let name = format!("{}.{}", trend.metric.name(), trend.stat);
    let mut t = Table::new(vec![
        Column::right("#"),
        Column::right("run"),
        Column::left("commit"),
        Column::left("arm"),
        Column::right("n"),
        Column::right(name.clone()),
        Column::left("95% interval"),
        Column::left("step"),
    ])
    .with_title(format!("{name} per run (n = {} runs)", trend.points.len()));
    for (i, p) in trend.points.iter().enumerate() {
        let est = p.estimate.unwrap_or(f64::NAN);
        let ci = match (p.lo, p.hi) {
            (Some(lo), Some(hi)) => format!("{} .. {}", fmt_ms(lo), fmt_ms(hi)),
            _ => "-".into(),
        };
        let step = step_at(trend, i).map_or(String::new(), |s| format!("\u{25b2} {}", size(s)));
        t.push_row(vec![
            Cell::num((i + 1).to_string(), (i + 1) as f64),
            Cell::num(p.row.id.to_string(), p.row.id as f64),
            Cell::text(p.row.commit.as_deref().map_or("-".into(), short)),
            Cell::text(&p.row.arm),
            Cell::num(p.n.to_string(), p.n as f64),
            Cell::num(
                if est.is_infinite() {
                    "> window".into()
                } else {
                    fmt_ms(est)
                },
                est,
            ),
            Cell::text(ci),
            Cell::text(step),
        ]);
    }
    for n in trend_notes(trend) {
        t.note(n);
    }
    t
}

/// `+40.1 ms`, or `≥ +1,980.0 ms` when a side holds runs past the window (stood at it).
fn size(s: &Step) -> String {
    match (s.bound, s.size_ms >= 0.0) {
        (false, _) => format!("{:+.1} ms", s.size_ms),
        (true, true) => format!("\u{2265} {:+.1} ms", s.size_ms),
        (true, false) => format!("\u{2264} {:+.1} ms", s.size_ms),
    }
}

/// What the table says under a trend: each step, or that there is none, and the runs
/// left out of the search.
fn trend_notes(trend: &Trend) -> Vec<String> {
    let mut notes: Vec<String> = trend.steps.iter().map(|s| format!(
            "step at #{} (run {}, commit {}): {} (95% interval {:+.1} .. {:+.1} ms), {} -> {}, p = {:.4} (permutation on ranks, {} shuffles, Holm)",
            s.at + 1,
            s.run_id,
            s.commit.as_deref().map_or("-".into(), short),
            size(s),
            s.lo_ms,
            s.hi_ms,
            fmt_ms(s.before_ms),
            fmt_ms(s.after_ms),
            s.p,
            trend.options.permutations,
        )).collect();
    if trend.steps.is_empty() {
        notes.push(format!(
            "no step: none found by PELT passed the permutation test at alpha = {} (n = {} runs)",
            trend.options.alpha,
            trend.points.len() - trend.left_out
        ));
    }
    if trend.options.min_step > 0.0 {
        notes.push(format!(
            "steps under {} ms are not reported (--min-step), unless steps under it in a row, one way, add up to it",
            trend.options.min_step
        ));
    }
    if trend.past_window > 0 {
        notes.push(format!(
            "{} runs past the window stand at it in the step search, above every answered run; a step beside them is a bound (\u{2265})",
            trend.past_window
        ));
    }
    if trend.left_out > 0 {
        notes.push(format!(
            "{} runs left out of the step search: no figure",
            trend.left_out
        ));
    }
    notes
}

/// `report --history`: the trend drawn (`arena_compare::trend_plot`), each step a line
/// labelled with its size, and the table's notes under it.
pub fn trend_section(trend: &Trend) -> anyhow::Result<TrendSection> {
    let name = format!("{}.{}", trend.metric.name(), trend.stat);
    let series = TrendSeries {
        title: format!(
            "{name} per stored run, ms (n = {} runs)",
            trend.points.len()
        ),
        points: trend
            .points
            .iter()
            .map(|p| TrendPoint {
                estimate: p.estimate,
                lo: p.lo,
                hi: p.hi,
            })
            .collect(),
        steps: trend
            .steps
            .iter()
            .map(|s| TrendMark {
                at: s.at,
                label: format!(
                    "step at #{} (commit {}): {}",
                    s.at + 1,
                    s.commit.as_deref().map_or("-".into(), short),
                    size(s)
                ),
            })
            .collect(),
    };
    Ok(TrendSection {
        title: format!("History: {name}"),
        svg: trend_svg(&series)?,
        notes: trend_notes(trend),
    })
}

/// `report --history METRIC.pQ`: the trend of `branch`'s stored runs on `testbed` with the
/// compared runs' `pilot`, from the history `db` names, drawn with its steps marked.
pub fn branch_trend_section(
    db: Option<&str>,
    branch: Option<String>,
    testbed: String,
    pilot: Option<String>,
    metric: &str,
) -> anyhow::Result<TrendSection> {
    let opts = TrendOptions::parse(metric)?;
    let store = open_default(db)?;
    let filter = Filter {
        branch,
        testbed: Some(testbed),
        pilot,
        ..Default::default()
    };
    trend_section(&trend(store.as_ref(), &filter, &opts)?)
}

/// `history trend --format json`.
pub fn trend_json(trend: &Trend) -> Value {
    let points: Vec<Value> = trend
        .points
        .iter()
        .map(|p| {
            json!({
                "run_id": p.row.id,
                "commit": p.row.commit,
                "branch": p.row.branch,
                "arm": p.row.arm,
                "n": p.n,
                "estimate_ms": p.estimate.map_or(Value::Null, num),
                "lo_ms": p.lo.map_or(Value::Null, num),
                "hi_ms": p.hi.map_or(Value::Null, num),
                "censored": p.estimate.is_some_and(f64::is_infinite),
            })
        })
        .collect();
    let steps: Vec<Value> = trend
        .steps
        .iter()
        .map(|s| {
            json!({
                "at": s.at,
                "run_id": s.run_id,
                "commit": s.commit,
                "before_ms": num(s.before_ms),
                "after_ms": num(s.after_ms),
                "size_ms": num(s.size_ms),
                "lo_ms": num(s.lo_ms),
                "hi_ms": num(s.hi_ms),
                "p": num(s.p),
                "bound": s.bound,
            })
        })
        .collect();
    document(
        "history_trend",
        json!({
            "metric": trend.metric.name(),
            "stat": trend.stat,
            "method": "pelt+permutation",
            "alpha": trend.options.alpha,
            "permutations": trend.options.permutations,
            "min_step_ms": trend.options.min_step,
            "past_window": trend.past_window,
            "points": points,
            "steps": steps,
        }),
    )
}
