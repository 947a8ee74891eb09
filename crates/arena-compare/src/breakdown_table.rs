//! A breakdown as a table: one row per (split row, column), so a two-arm breakdown reads
//! down like the field notes' ("mousedown 56 50.5 103.5"), with the change against the
//! baseline's same row beside each candidate's figures.

use arena_report::{fmt_count, fmt_ms, fmt_size, Cell, Column, Table};

use crate::breakdown_data::{Breakdown, BreakdownCell};
use crate::cells::{delta_cell, quantile_text, QUANTILES};
use crate::change::CompareOptions;
use crate::group::By;
use crate::split::{Split, COALESCED_ROW};

pub(crate) fn table(b: &Breakdown, opts: &CompareOptions) -> Table {
    let many = b.columns.len() > 1;
    let claimed = b.cells.iter().any(|c| c.claimed > 0);
    let over = format!("\u{2265}{}", fmt_size(b.reply_over));
    let mut cols = vec![Column::left(heading(&b.split))];
    if many {
        cols.push(Column::left(match opts.by {
            By::Arm => "arm",
            By::Run => "run",
        }));
    }
    cols.extend(["loops", "n", "p50", "p90", "p99"].map(Column::right));
    if many {
        cols.extend(["\u{394} p50", "\u{394} p90", "\u{394} p99"].map(Column::right));
    }
    cols.push(Column::right("unanswered"));
    if claimed {
        cols.push(Column::right("claimed"));
    }
    cols.extend([Column::right("cold"), Column::right(over.clone())]);

    let against = if many {
        format!("; \u{394} against {}'s same row", b.baseline)
    } else {
        String::new()
    };
    let mut t = Table::new(cols).with_title(format!(
        "{} by {}, ms{against}",
        b.metric.name(),
        match b.split {
            Split::Event => "input kind",
            Split::ReplySize(_) => "reply size",
            Split::Label => "label",
        }
    ));
    for c in &b.cells {
        t.push_row(row(c, b, many, claimed));
    }
    notes(&mut t, b, opts, &over);
    t
}

fn heading(s: &Split) -> &'static str {
    match s {
        Split::Event => "input",
        Split::ReplySize(_) => "reply size",
        Split::Label => "label",
    }
}

fn count(n: u64) -> Cell {
    Cell::num(fmt_count(n as i64), n as f64)
}

fn row(c: &BreakdownCell, b: &Breakdown, many: bool, claimed: bool) -> Vec<Cell> {
    let mut r = vec![Cell::text(c.row.clone())];
    if many {
        r.push(Cell::text(c.column.clone()));
    }
    r.extend([count(c.loops), count(c.n)]);
    r.extend(c.quantiles.iter().map(|q| match q {
        Some(x) if x.is_finite() => Cell::num(fmt_ms(*x), *x),
        Some(x) => Cell::text(quantile_text(*x, None, None)),
        None => Cell::text("-"),
    }));
    if many {
        let base = c.column == b.baseline;
        for qi in 0..QUANTILES.len() {
            r.push(
                match c.change.as_ref().and_then(|ch| ch.quantiles.get(qi)) {
                    Some(q) => delta_cell(q),
                    None if base => Cell::text(""),
                    None => Cell::text("-"),
                },
            );
        }
    }
    r.push(count(c.unanswered));
    if claimed {
        r.push(count(c.claimed));
    }
    r.push(count(c.cold));
    r.push(if c.answered == 0 {
        Cell::text("-")
    } else {
        let share = c.replies_over as f64 / c.answered as f64;
        Cell::num(
            format!(
                "{} of {}",
                fmt_count(c.replies_over as i64),
                fmt_count(c.answered as i64)
            ),
            share,
        )
    });
    r
}

/// What the counts are, the share of big answers per column in the notes' words, the
/// rows nothing fell in, and the delta's rule.
fn notes(t: &mut Table, b: &Breakdown, opts: &CompareOptions, over: &str) {
    let cold = if opts.checks.include_cold {
        "cold loops included (--include-cold)"
    } else {
        "cold loops counted but kept out of the figures"
    };
    t.note(format!(
        "loops: every loop of the row, unanswered and claimed ones included; n: loops behind p50/p90/p99 (type 7, ms on the page clock), unanswered ones counted as slower than every answered one (\"> window\" when a quantile lands on one); {cold}"
    ));
    for col in &b.columns {
        let (a, o) = b
            .cells
            .iter()
            .filter(|c| c.column == *col)
            .fold((0, 0), |(a, o), c| (a + c.answered, o + c.replies_over));
        t.note(format!(
            "{col}: {} of {} answered loops drew a reply of {} or more ({over}; --reply-over sets it)",
            fmt_count(o as i64),
            fmt_count(a as i64),
            fmt_size(b.reply_over)
        ));
    }
    if let Split::ReplySize(_) = b.split {
        t.note("reply size: WebSocket bytes the page received from the loop's send to its answer (to the window's end when unanswered); 1KB = 1,024 B");
    }
    if b.split == Split::Event && b.cells.iter().any(|c| c.row == COALESCED_ROW) {
        t.note(format!(
            "{COALESCED_ROW}: input the browser coalesces (mousemove, ...), counted under loops; only its inputToSocket is kept, per run, so its figures show for --metric inputToSocket and one run a column, with no \u{394}"
        ));
    }
    let empty: Vec<&str> = b
        .rows
        .iter()
        .filter(|r| {
            b.cells
                .iter()
                .filter(|c| c.row == **r)
                .all(|c| c.loops == 0)
        })
        .map(String::as_str)
        .collect();
    if b.rows.is_empty() {
        t.note("no loops in any column: nothing to break down");
    }
    if !empty.is_empty() {
        t.note(format!(
            "empty rows (no loop in any column): {}",
            empty.join(", ")
        ));
    }
    if b.columns.len() > 1 {
        t.note(format!(
            "\u{394}: the candidate's quantile minus {}'s in the same row, with the comparison's rule (~: not significant at \u{3b1}={})",
            b.baseline, opts.verdict.alpha
        ));
    }
}
