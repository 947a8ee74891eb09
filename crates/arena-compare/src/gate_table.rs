//! The gate's checks as a table, with the notes that say how it decided.

use arena_report::{fmt_pct_change, Cell, Column, Table};
use arena_stats::NoiseRule;

use crate::cells::{change_cells, fmt_mde, fmt_p, quantile_text};
use crate::gate_check::{CheckStatus, Counts, GateCheck, UnansweredCheck};

fn verdict_cell(status: CheckStatus, reason: &str) -> Cell {
    match status {
        CheckStatus::Fail => Cell::text(format!("FAIL: {reason}")).strong(),
        CheckStatus::Pass => Cell::text(format!("pass: {reason}")),
        CheckStatus::Unknown => Cell::text(reason.to_string()),
    }
}

fn share_cell(c: &Counts) -> Cell {
    Cell::num(
        format!("{:.1} % ({} of {})", c.share_pct(), c.unanswered, c.loops),
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

fn unanswered_row(u: &UnansweredCheck) -> Vec<Cell> {
    vec![
        Cell::text(if u.default {
            "unanswered share (default)"
        } else {
            "unanswered share"
        }),
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
    unanswered: &UnansweredCheck,
    (n_base, n_cand): (usize, usize),
    rule: &NoiseRule,
    method: &str,
    window: Option<u64>,
) -> Table {
    let ci = crate::decide::ci_header(rule.alpha, checks.len() + 1);
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
    table.push_row(unanswered_row(unanswered));
    let failed = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Fail)
        .count()
        + usize::from(unanswered.status == CheckStatus::Fail);
    let unknown = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Unknown)
        .count();
    table.note(format!(
        "{failed} of {} checks failed, {unknown} unknown. A latency limit fails when its interval, at 1 \u{2212} \u{3b1}/{} (Bonferroni over the checks), lies wholly past it, passes when it lies wholly under it, and is unknown otherwise (exit 4, or --on-unknown). p: the interval's, times {}. No location test decides a tail.",
        checks.len() + 1,
        checks.len() + 1,
        checks.len() + 1,
    ));
    table.note(format!(
        "The unanswered share fails when it rose past its limit and Fisher's exact test (one-sided, on the loop counts; times the checks) is under \u{3b1}={}. Quantiles count unanswered loops as slower than every answered one (a quantile that lands on one reads \"\u{2265} X\", the least it can be with unanswered loops at the window, or \"> W ms (window)\" past it). CI: {method}.",
        rule.alpha
    ));
    table.note(format!(
        "detects: the rise past its limit a check fails with 80 % power at these runs (z(1 \u{2212} \u{3b1}/{}) + z(0.8) standard errors; for the share, the normal approximation); (max): the quantile is a side's largest loop.",
        2 * (checks.len() + 1)
    ));
    if n_base < 2 && n_cand < 2 {
        table.note("One run a side: nothing measures how much two sessions of one arm differ, so the interval assumes the --run-spread. Give the gate 2 or more runs a side (arena-perf ab) and the runs measure it.");
    }
    table
}
