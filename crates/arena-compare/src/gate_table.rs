//! The gate's checks as a table, with the notes that say how it decided.

use arena_report::{fmt_pct_change, Cell, Column, Table};
use arena_stats::NoiseRule;

use crate::cells::{change_cells, fmt_mde, fmt_p, quantile_text};
use crate::gate_check::{CheckStatus, Counts, GateCheck, ShareCheck};

fn verdict_cell(status: CheckStatus, reason: &str) -> Cell {
    match status {
        CheckStatus::Fail => Cell::text(format!("FAIL: {reason}")).strong(),
        CheckStatus::Pass => Cell::text(format!("pass: {reason}")),
        CheckStatus::Unknown => Cell::text(reason.to_string()),
    }
}

fn share_cell(c: &Counts) -> Cell {
    Cell::num(
        format!("{:.1} % ({} of {})", c.share_pct(), c.count, c.loops),
        c.share_pct(),
    )
}

fn latency_row(c: &GateCheck, window: Option<u64>) -> Vec<Cell> {
    let ch = &c.change;
    let side = |v: f64, floor: Option<f64>, n: usize, censored: u64| {
        let unanswered = if censored > 0 {
            format!(", {censored} unanswered")
        } else {
            String::new()
        };
        let text = format!("{} (n={n}{unanswered})", quantile_text(v, floor, window));
        if v.is_finite() {
            Cell::num(text, v)
        } else {
            Cell::text(text)
        }
    };
    let [delta, ci, _] = change_cells(ch);
    vec![
        Cell::text(format!("{} {}", c.limit.metric, c.limit.stat)),
        side(ch.baseline, c.floors.0, c.n_baseline, c.censored_baseline),
        side(
            ch.candidate,
            c.floors.1,
            c.n_candidate,
            c.censored_candidate,
        ),
        delta,
        ci,
        Cell::num(fmt_p(c.p_adjusted), c.p_adjusted),
        Cell::num(fmt_pct_change(c.limit.max_pct), c.limit.max_pct),
        Cell::text(format!(
            "{}{}",
            fmt_mde(c.power.mde_pct),
            if c.power.at_the_max { " (max)" } else { "" }
        )),
        verdict_cell(c.status, &c.reason),
    ]
}

fn share_row(u: &ShareCheck) -> Vec<Cell> {
    vec![
        Cell::text(format!(
            "{} share{}",
            u.share.name(),
            if u.default { " (default)" } else { "" }
        )),
        share_cell(&u.baseline),
        share_cell(&u.candidate),
        Cell::num(format!("{:+.1} pt", u.rise_pt), u.rise_pt),
        Cell::text("-"),
        Cell::num(fmt_p(u.p_adjusted), u.p_adjusted),
        Cell::num(format!("+{} pt", u.max_pt), u.max_pt),
        Cell::text(format!("+{:.1} pt", u.mde_pt)),
        verdict_cell(u.status, &u.reason),
    ]
}

/// The checks as a table, with the notes that say how to read it.
pub fn gate_table(
    checks: &[GateCheck],
    shares: &[ShareCheck],
    (n_base, n_cand): (usize, usize),
    rule: &NoiseRule,
    method: &str,
    window: Option<u64>,
) -> Table {
    let m = checks.len() + shares.len();
    let ci = crate::decide::ci_header(rule.alpha, m);
    let mut table = Table::new(vec![
        Column::left("check"),
        Column::right("baseline"),
        Column::right("candidate"),
        Column::right("\u{394}"),
        Column::right(ci),
        Column::right("p (Bonferroni)"),
        Column::right("limit"),
        Column::right("detects"),
        Column::left("verdict"),
    ])
    .with_title(format!(
        "Gate: {n_base} baseline run(s) against {n_cand} candidate run(s), \u{3b1}={}; every loop, unanswered ones censored at the window, ms",
        rule.alpha
    ));
    for c in checks {
        table.push_row(latency_row(c, window));
    }
    for s in shares {
        table.push_row(share_row(s));
    }
    let failed = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
        .count()
        + shares
            .iter()
            .filter(|s| s.status == CheckStatus::Fail)
            .count();
    let unknown = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Unknown)
        .count();
    table.note(format!(
        "{failed} of {} checks failed, {unknown} unknown. A latency limit fails when its interval, at 1 \u{2212} \u{3b1}/{} (Bonferroni over the checks), lies wholly past it, passes when it lies wholly under it, and is unknown otherwise (exit 4, or --on-unknown). p: the interval's, times {}. No location test decides a tail.",
        m, m, m,
    ));
    table.note(format!(
        "A share fails when it rose past its limit and Fisher's exact test (one-sided, on the loop counts; times the checks) is under \u{3b1}={}: unanswered, of the answered and unanswered loops; claimed (an answer that had already closed an earlier loop, so no figure sees it), of every loop. Quantiles count unanswered loops as slower than every answered one (a quantile that lands on one reads \"\u{2265} X\", the least it can be with unanswered loops at the window, or \"> W ms (window)\" past it). CI: {method}.",
        rule.alpha
    ));
    table.note(format!(
        "detects: the rise past its limit a check fails with 80 % power at these runs (z(1 \u{2212} \u{3b1}/{}) + z(0.8) standard errors; for the share, the normal approximation); (max): the quantile is a side's largest loop.",
        2 * m
    ));
    if n_base < 2 && n_cand < 2 {
        table.note("One run a side: nothing measures how much two sessions of one arm differ, so the interval assumes the --run-spread. Give the gate 2 or more runs a side (arena-perf ab) and the runs measure it.");
    }
    table
}
