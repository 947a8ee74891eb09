//! The notes' table: one column per run (`<arm>, run N`), rows p50, p90, p99 of warm
//! inputToPixels (inputToPaint when a run was not closed on pixels) and the bytes
//! received. `demo` and `ab` print it.

use arena_report::{fmt_count, Cell, Column, Table};
use arena_run::{Metric, Run};

use crate::cells::quantile_cell;
use crate::findings::{annotate, check, CheckOptions};
use crate::group::{digest, groups, By};

/// Builds the by-run table over `runs` (arms in order of first appearance, runs in input
/// order within an arm). Warnings about the measurement are marked next to the figure
/// they concern and listed under the table.
pub fn by_run_table(runs: &[Run]) -> Table {
    let metric = headline(runs);
    let data = digest(runs, false);
    let groups = groups(&data, By::Run);
    let mut columns = vec![Column::left("")];
    // Left-aligned, like the README's example table.
    columns.extend(groups.iter().map(|g| Column::left(g.name.clone())));
    let values: Vec<Vec<f64>> = groups.iter().map(|g| g.values_all(metric)).collect();
    let ns: Vec<String> = values.iter().map(|v| v.len().to_string()).collect();
    let n_text = if ns.iter().all(|n| *n == ns[0]) && !ns.is_empty() {
        format!("n={} per run", ns[0])
    } else {
        format!("n={}", ns.join(", "))
    };
    let mut table = Table::new(columns).with_title(format!(
        "{} of warm loops, unanswered ones censored at the window, ms ({n_text}); bytes received by the page",
        metric.name()
    ));
    for (q, label) in [(0.5, "p50"), (0.9, "p90"), (0.99, "p99")] {
        let mut row = vec![Cell::text(label)];
        for v in &values {
            row.push(quantile_cell(v, q, g_window(&groups)));
        }
        table.push_row(row);
    }
    let mut row = vec![Cell::text("bytes received")];
    for g in &groups {
        let b = g.bytes_received();
        row.push(Cell::num(fmt_count(b as i64), b as f64));
    }
    table.push_row(row);
    // Wire figures count the whole session (the first board included), so they sit on a
    // row of their own rather than beside the page's count.
    if groups.iter().any(|g| g.wire_server_to_client().is_some()) {
        let mut row = vec![Cell::text("wire payload, server\u{2192}client")];
        for g in &groups {
            row.push(match g.wire_server_to_client() {
                Some((payload, _)) => Cell::num(fmt_count(payload as i64), payload as f64),
                None => Cell::text("-"),
            });
        }
        table.push_row(row);
    }
    // A run behind a shaped link says so: its figures include the link's time.
    if runs.iter().any(|r| r.meta.link.is_some()) {
        let mut row = vec![Cell::text("link")];
        for g in &groups {
            let link = g.runs.first().and_then(|r| r.run.meta.link.as_deref());
            row.push(Cell::text(link.unwrap_or("direct")));
        }
        table.push_row(row);
    }

    let findings = check(&groups, &[metric], &CheckOptions::default());
    annotate(&mut table, &findings, |f| match (&f.metric, &f.stat) {
        (Some(_), Some(s)) if s != "max" => Some(s.clone()),
        _ => None,
    });
    table
}

/// The answer window the columns share, ms, if they do.
fn g_window(groups: &[crate::group::Group]) -> Option<u64> {
    let w = groups.first()?.window_ms()?;
    groups.iter().all(|g| g.window_ms() == Some(w)).then_some(w)
}

/// The metric a table of `runs` leads with: downpress-to-pixels (`inputToPixels`); runs
/// closed on replies have only inputToPaint, and one table never mixes the two.
pub(crate) fn headline(runs: &[Run]) -> Metric {
    if runs
        .iter()
        .all(|r| r.meta.summary.input_to_pixels.is_some())
    {
        Metric::InputToPixels
    } else {
        Metric::InputToPaint
    }
}
