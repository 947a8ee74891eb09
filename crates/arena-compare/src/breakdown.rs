//! Breakdowns (`--split`): each column's loops cut into rows by input kind, by the size of
//! their answer, or by click label; each row with its loops, its quantiles, its own change
//! against the baseline's row (the comparison's rule, [`metric_change`]) and the share of
//! answers at or over a reply size. Splitting by reply size is what showed a board repaint
//! costs ~105 ms in the field notes: one pooled median hides two populations.

use anyhow::Result;
use arena_run::{Loop, Metric, Run};
use arena_stats::quantile_sorted;

pub use crate::breakdown_data::{Breakdown, BreakdownCell};
use crate::by_run::headline;
use crate::cells::QUANTILES;
use crate::change::{metric_change, resolve_baseline, CompareOptions};
use crate::decide::settle_family;
use crate::group::{groups, Group, RunData, Select};
pub use crate::split::{Split, COALESCED_ROW, SPLITS};

/// The breakdowns `opts.splits` asks for, in order.
pub fn breakdowns(runs: &[Run], opts: &CompareOptions) -> Result<Vec<Breakdown>> {
    opts.splits
        .iter()
        .map(|s| breakdown(runs, s, opts))
        .collect()
}

/// One split over `runs`, columns formed as the comparison's (`opts.by`).
pub fn breakdown(runs: &[Run], split: &Split, opts: &CompareOptions) -> Result<Breakdown> {
    let metric = opts
        .metrics
        .first()
        .copied()
        .unwrap_or_else(|| headline(runs));
    // One size for every column, so their shares compare: the first run's target's.
    let reply_over = opts.reply_over.unwrap_or_else(|| {
        match runs.first().map_or(0, |r| r.meta.summary.idle_reply_bytes) {
            0 => 4096,
            t => t,
        }
    });
    let rows = split.rows(runs);
    let (mut cells, mut columns, mut baseline) = (Vec::new(), Vec::new(), String::new());
    for (k, row) in rows.iter().enumerate() {
        let keep = |l: &Loop| split.keeps(&rows, k, l);
        let sel = Select {
            include_cold: opts.checks.include_cold,
            keep: &keep,
            over_bytes: Some(reply_over),
        };
        let data: Vec<RunData> = runs.iter().map(|r| RunData::select(r, sel)).collect();
        let gs = groups(&data, opts.by);
        let base = resolve_baseline(&gs, opts.baseline.as_deref())?;
        let values: Vec<Vec<f64>> = gs.iter().map(|g| g.values_all(metric)).collect();
        for (i, g) in gs.iter().enumerate() {
            let mut c = cell(row, g, &values[i]);
            if *split == Split::Event && row == COALESCED_ROW {
                coalesced(&mut c, g, metric);
            } else if i != base {
                // Runs, not loops, repeat: the row's interval resamples them as compare's.
                let (rb, rc) = (gs[base].strata(metric), g.strata(metric));
                let mut ch = metric_change(&g.name, metric, &rb, &rc, &opts.verdict);
                // One family per cell: its three quantiles.
                let mut family: Vec<_> = ch.quantiles.iter_mut().collect();
                let m = family.len();
                settle_family(&mut family, m, &opts.verdict);
                c.change = Some(ch);
            }
            cells.push(c);
        }
        columns = gs.iter().map(|g| g.name.clone()).collect();
        baseline = gs.get(base).map(|g| g.name.clone()).unwrap_or_default();
    }
    let mut b = Breakdown {
        split: split.clone(),
        metric,
        reply_over,
        baseline,
        columns,
        rows,
        cells,
        table: arena_report::Table::new(Vec::new()),
    };
    b.table = crate::breakdown_table::table(&b, opts);
    Ok(b)
}

fn cell(row: &str, g: &Group, values: &[f64]) -> BreakdownCell {
    let (answered, over, _) = g.replies_over_idle();
    BreakdownCell {
        row: row.to_string(),
        column: g.name.clone(),
        loops: g.loops(),
        answered,
        unanswered: g.unanswered(),
        claimed: g.claimed(),
        cold: g.cold(),
        replies_over: over,
        n: values.len() as u64,
        quantiles: QUANTILES.map(|(q, _)| quantile_sorted(values, q)),
        change: None,
    }
}

/// Coalesced input is not a loop: a run keeps its count and a summary of its
/// inputToSocket, so the row has figures only for that metric and a one-run column.
fn coalesced(c: &mut BreakdownCell, g: &Group, metric: Metric) {
    c.loops = g
        .runs
        .iter()
        .map(|r| r.run.meta.summary.coalesced_inputs)
        .sum();
    let one = match g.runs.as_slice() {
        [r] if metric == Metric::InputToSocket => {
            r.run.meta.summary.coalesced_input_to_socket.as_ref()
        }
        _ => None,
    };
    if let Some(s) = one {
        c.n = s.n;
        c.quantiles = [Some(s.p50), Some(s.p90), Some(s.p99)];
    }
}
