//! `arena-perf compare`: every column against a baseline, figure by figure, with the
//! size of the change, whether it is real, and what is suspect about the measurement.

use anyhow::Result;
use arena_report::{fmt_count, fmt_ms, fmt_pct_change, Cell, Column, Exit, Table};
use arena_run::{Metric, Run};
use arena_stats::{is_censored, pct_change, QuantileChange};

use crate::breakdown::breakdowns;
use crate::breakdown_data::Breakdown;
pub(crate) use crate::cells::QUANTILES;
use crate::cells::{change_cells, fmt_ms_signed, quantile_cell, quantile_text};
use crate::change::{metric_change, resolve_baseline};
pub use crate::change::{CompareOptions, MetricChange};
use crate::decide::{interval_method, settle_family};
use crate::findings::{annotate, check, Finding};
use crate::group::{digest, groups, By, Group};

/// What `compare` found: the table to print and the same facts as data.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub table: Table,
    pub by: By,
    pub baseline: String,
    /// Every column's name, the baseline's included, in table order.
    pub columns: Vec<String>,
    pub changes: Vec<MetricChange>,
    pub findings: Vec<Finding>,
    /// One per `--split`, in the order asked.
    pub breakdowns: Vec<Breakdown>,
    /// How the intervals were built, in words.
    pub method: String,
    /// The runs' drags and hovers, their own table; `None` when no run made any.
    pub gestures: Option<crate::gestures::GestureComparison>,
}

impl Comparison {
    /// The columns compared against the baseline, comma-separated: `lazy-png, png6`.
    pub fn candidates(&self) -> String {
        let others: Vec<&str> = self
            .columns
            .iter()
            .filter(|c| **c != self.baseline)
            .map(String::as_str)
            .collect();
        others.join(", ")
    }
}

/// A count read off a column (bytes, frames, loops, ...).
type GroupCount = fn(&Group) -> u64;

pub fn compare(runs: &[Run], opts: &CompareOptions) -> Result<Comparison> {
    let data = digest(runs, opts.checks.include_cold);
    let gs = groups(&data, opts.by);
    if gs.is_empty() {
        return Err(Exit::bad_input("no runs to compare").into());
    }
    let metrics: Vec<Metric> = if opts.metrics.is_empty() {
        Metric::ALL.to_vec()
    } else {
        opts.metrics.clone()
    };
    let base = resolve_baseline(&gs, opts.baseline.as_deref())?;
    let cols = Cols {
        gs: &gs,
        base,
        others: (0..gs.len()).filter(|&i| i != base).collect(),
    };

    // Each column's sorted values per metric, unanswered loops censored, computed once:
    // pooled (what the table shows); per run and kind, the interval reads the digest.
    let values: Vec<Vec<Vec<f64>>> = gs
        .iter()
        .map(|g| metrics.iter().map(|&m| g.values_all(m)).collect())
        .collect();
    let mut changes = Vec::new();
    for &i in &cols.others {
        let first = changes.len();
        for &m in &metrics {
            let (b, c) = (gs[base].strata(m), gs[i].strata(m));
            changes.push(metric_change(&gs[i].name, m, &b, &c, &opts.verdict));
        }
        // One family per metric of a column: "did this metric move, at the median or in
        // the tail?" is one question, asked of its quantiles together.
        for c in &mut changes[first..] {
            let mut family: Vec<&mut QuantileChange> = c.quantiles.iter_mut().collect();
            let m = family.len();
            settle_family(&mut family, m, &opts.verdict);
        }
    }

    let mut table = header(&cols, opts);
    for (k, &m) in metrics.iter().enumerate() {
        let per_column: Vec<&Vec<f64>> = values.iter().map(|v| &v[k]).collect();
        metric_rows(&mut table, &cols, m, &per_column, &changes);
    }
    total_rows(&mut table, &cols, opts.by == By::Arm);
    let runs_of = |g: &Group| g.runs.len();
    let most = cols
        .others
        .iter()
        .map(|&i| runs_of(&gs[i]))
        .max()
        .unwrap_or(1);
    let method = interval_method(&opts.verdict, runs_of(&gs[base]), most);
    notes(&mut table, opts, &method);
    let findings = check(&gs, &metrics, &opts.checks);
    annotate(&mut table, &findings, |f| match (f.metric, &f.stat) {
        (Some(m), Some(s)) => Some(format!("{m} {s}")),
        (None, Some(s)) => Some(s.clone()),
        _ => None,
    });
    let breakdowns = breakdowns(runs, opts)?;
    Ok(Comparison {
        gestures: crate::gestures::compare_gestures(&gs, base),
        breakdowns,
        table,
        by: opts.by,
        baseline: gs[base].name.clone(),
        columns: gs.iter().map(|g| g.name.clone()).collect(),
        changes,
        findings,
        method,
    })
}

/// The columns of a comparison: the baseline and the others, in table order.
struct Cols<'a> {
    gs: &'a [Group<'a>],
    base: usize,
    others: Vec<usize>,
}

/// The empty table: the baseline's column, then four per candidate.
fn header(cols: &Cols<'_>, opts: &CompareOptions) -> Table {
    let ci = crate::decide::ci_header(opts.verdict.alpha, QUANTILES.len());
    let mut columns = vec![
        Column::left(""),
        Column::right(cols.gs[cols.base].name.clone()),
    ];
    for &i in &cols.others {
        let name = &cols.gs[i].name;
        columns.push(Column::right(name.clone()));
        columns.push(Column::right(format!("\u{394} {name}")));
        columns.push(Column::right(format!("{ci} {name}")));
        columns.push(Column::right(format!("p {name}")));
    }
    Table::new(columns).with_title(format!(
        "Against {} ({}); warm loops, unanswered ones censored at the window, ms",
        cols.gs[cols.base].name,
        match opts.by {
            By::Arm => "runs of an arm pooled",
            By::Run => "one column per run",
        }
    ))
}

/// One metric's quantile rows, its max and its n; `values[c]` is column c's sorted values.
fn metric_rows(
    table: &mut Table,
    cols: &Cols<'_>,
    m: Metric,
    values: &[&Vec<f64>],
    changes: &[MetricChange],
) {
    let base = cols.base;
    let window = cols.gs[base].window_ms();
    let ms_cell = |v: Option<f64>| q_cell(v, window);
    for (qi, &(q, stat)) in QUANTILES.iter().enumerate() {
        let mut row = vec![Cell::text(format!("{} {stat}", m.name()))];
        row.push(quantile_cell(values[base], q, window));
        for &i in &cols.others {
            row.push(quantile_cell(values[i], q, cols.gs[i].window_ms()));
            let ch = changes
                .iter()
                .find(|c| c.column == cols.gs[i].name && c.metric == m.name())
                .and_then(|c| c.quantiles.get(qi));
            match ch {
                Some(c) => row.extend(change_cells(c)),
                None => row.extend([Cell::text("-"), Cell::text("-"), Cell::text("-")]),
            }
        }
        table.push_row(row);
    }
    let max = |v: &Vec<f64>| v.last().copied();
    let mut row = vec![Cell::text(format!("{} max", m.name()))];
    let bmax = max(values[base]);
    row.push(ms_cell(bmax));
    for &i in &cols.others {
        let cmax = max(values[i]);
        row.push(ms_cell(cmax));
        row.push(match (bmax, cmax) {
            (Some(b), Some(c)) if !is_censored(b) && !is_censored(c) => plain_delta(b, c, true),
            _ => Cell::text("-"),
        });
        // One loop each: no interval, no test.
        row.extend([Cell::text(""), Cell::text("")]);
    }
    table.push_row(row);
    let mut row = vec![Cell::text(format!("{} n", m.name()))];
    row.push(count_cell(values[base].len() as u64));
    for &i in &cols.others {
        row.push(count_cell(values[i].len() as u64));
        row.extend([Cell::text(""), Cell::text(""), Cell::text("")]);
    }
    table.push_row(row);
}

/// Bytes, frames and loop counts: averaged per run when arms pool runs (`per_run`).
fn total_rows(table: &mut Table, cols: &Cols<'_>, per_run: bool) {
    let gs = cols.gs;
    let suffix = if per_run { " / run" } else { "" };
    let mean_per_run = |g: &Group, total: u64| {
        if per_run {
            total as f64 / g.runs.len().max(1) as f64
        } else {
            total as f64
        }
    };
    let mut totals: Vec<(String, GroupCount, bool)> = vec![
        (
            format!("bytes received{suffix}"),
            |g: &Group| g.bytes_received(),
            true,
        ),
        (
            format!("frames received{suffix}"),
            |g: &Group| g.frames_received(),
            true,
        ),
        ("loops".to_string(), |g: &Group| g.loops(), false),
        ("unanswered".to_string(), |g: &Group| g.unanswered(), false),
        ("cold loops".to_string(), |g: &Group| g.cold(), false),
    ];
    // Claimed loops (an answer that already closed an earlier loop) get a row when any
    // column has one, so older runs' tables keep their shape.
    if gs.iter().any(|g| g.claimed() > 0) {
        let at = totals.len() - 1;
        totals.insert(at, ("claimed".to_string(), |g: &Group| g.claimed(), false));
    }
    if gs.iter().all(|g| g.wire_server_to_client().is_some()) {
        totals.insert(
            2,
            (
                format!("wire payload, server\u{2192}client{suffix}"),
                |g: &Group| g.wire_server_to_client().map_or(0, |w| w.0),
                true,
            ),
        );
        totals.insert(
            3,
            (
                format!("wire app bytes, server\u{2192}client{suffix}"),
                |g: &Group| g.wire_server_to_client().map_or(0, |w| w.1),
                true,
            ),
        );
    }
    for (label, f, averaged) in totals {
        let val = |g: &Group| {
            if averaged {
                mean_per_run(g, f(g))
            } else {
                f(g) as f64
            }
        };
        let mut row = vec![Cell::text(label)];
        let b = val(&gs[cols.base]);
        row.push(count_cell_f(b));
        for &i in &cols.others {
            let c = val(&gs[i]);
            row.push(count_cell_f(c));
            row.push(if averaged {
                plain_delta(b, c, false)
            } else {
                Cell::text("")
            });
            row.extend([Cell::text(""), Cell::text("")]);
        }
        table.push_row(row);
    }
}

fn notes(table: &mut Table, opts: &CompareOptions, method: &str) {
    table.note(format!(
        "\u{394}: candidate \u{2212} baseline of the same quantile (type 7), over every warm loop: an unanswered loop counts as slower than every answered one (a quantile that lands on one reads \"\u{2265} X\", the least it can be with unanswered loops at the window, or \"> W ms (window)\" past it). CI: {method}. p: two-sided p of no change, times the metric's 3 quantiles. Bold: faster or slower, the interval wholly one side of 0 and the change at least the {thr} % threshold; =: the same, the interval within \u{b1}{thr} %; ~: unknown, neither (\u{3b1}={}): the gate's rule.",
        opts.verdict.alpha,
        thr = opts.verdict.noise_bar_pct
    ));
    if opts.by == By::Arm {
        table.note("bytes and frames are per run (mean over the arm's runs), so arms with different run counts compare.");
    }
}

fn q_cell(v: Option<f64>, window_ms: Option<u64>) -> Cell {
    match v {
        Some(x) if is_censored(x) => Cell::text(quantile_text(x, None, window_ms)),
        Some(x) => Cell::num(fmt_ms(x), x),
        None => Cell::text("-"),
    }
}

fn count_cell(n: u64) -> Cell {
    Cell::num(fmt_count(n as i64), n as f64)
}

fn count_cell_f(x: f64) -> Cell {
    Cell::num(fmt_count(x.round() as i64), x)
}

fn plain_delta(b: f64, c: f64, ms: bool) -> Cell {
    let pct = pct_change(b, c);
    let text = if ms {
        format!("{} ({})", fmt_pct_change(pct), fmt_ms_signed(c - b))
    } else {
        fmt_pct_change(pct)
    };
    Cell::num(text, pct)
}
