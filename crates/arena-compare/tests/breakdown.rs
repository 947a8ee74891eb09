//! Breakdowns (`--split`) over runs built in memory: rows hold exactly the loops they
//! should, unanswered and cold ones counted, empty buckets shown, each row's change is the
//! comparison's own, and every split renders as Markdown that pastes into a PERFORMANCE.md.

use arena_compare::{
    breakdown, compare, synthetic, Breakdown, BreakdownCell, CompareOptions, Split, COALESCED_ROW,
};
use arena_report::Format;
use arena_run::{Loop, Metric, Outcome, Run};
use arena_stats::{quantile_sorted, Summary};

const BIG: u64 = 6000;
const MID: u64 = 1500;
const SMALL: u64 = 300;

/// 60 loops, mousedown and mouseup in turn, as the fixture's firing phase: a press draws a
/// 6,000 B repaint and costs `press_ms` more, a release 1,500 B. Loop 0 is cold, loop 7
/// (a release) unanswered with 300 B received before the window closed.
fn shaped(arm: &str, seed: u64, press_ms: f64) -> Run {
    let v: Vec<f64> = synthetic::lognormal(60, 40.0, 0.2, 0.0, seed)
        .into_iter()
        .enumerate()
        .map(|(i, x)| if i % 2 == 0 { x + press_ms } else { x })
        .collect();
    let mut r = synthetic::run(arm, &v, 0);
    for l in &mut r.loops {
        l.reply_bytes = if l.event == "mousedown" { BIG } else { MID };
    }
    r.loops[0].cold = true;
    let l = &mut r.loops[7];
    l.answered = false;
    l.outcome = Outcome::Unanswered;
    (l.t_recv, l.t_draw, l.t_paint) = (None, None, None);
    (l.send_to_recv, l.recv_to_draw, l.input_to_paint) = (None, None, None);
    l.reply_bytes = SMALL;
    r
}

fn opts(split: &str) -> CompareOptions {
    CompareOptions {
        splits: vec![Split::parse(split).unwrap()],
        ..CompareOptions::default()
    }
}

fn split(runs: &[Run], spec: &str) -> Breakdown {
    breakdown(runs, &Split::parse(spec).unwrap(), &opts(spec)).unwrap()
}

fn cell<'a>(b: &'a Breakdown, row: &str, column: &str) -> &'a BreakdownCell {
    b.cells
        .iter()
        .find(|c| c.row == row && c.column == column)
        .unwrap_or_else(|| panic!("no cell {row} / {column}: {:?}", b.rows))
}

/// Ascending inputToPaint of the warm answered loops `keep` takes.
fn values(r: &Run, keep: impl Fn(&Loop) -> bool) -> Vec<f64> {
    let mut v: Vec<f64> = r
        .loops
        .iter()
        .filter(|l| !l.cold && keep(l))
        .filter_map(|l| l.input_to_paint)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

#[test]
fn reply_size_buckets_hold_their_loops_and_show_the_empty_one() {
    let r = shaped("stock", 1, 100.0);
    let b = split(std::slice::from_ref(&r), "reply-size=1KB,2KB,4KB");
    assert_eq!(b.rows, ["<1KB", "1KB-2KB", "2KB-4KB", ">=4KB"]);
    assert_eq!(b.metric, Metric::InputToPaint);

    // The unanswered release is its own bucket's only loop: counted, and in the figures
    // as censored at the window (every quantile beyond it).
    let small = cell(&b, "<1KB", "stock");
    assert_eq!((small.loops, small.unanswered, small.n), (1, 1, 1));
    assert!(
        small
            .quantiles
            .iter()
            .all(|q| q.is_some_and(arena_stats::is_censored)),
        "{:?}",
        small.quantiles
    );
    // No loop between 2 and 4 KB: a row of zeros, named under the table.
    let empty = cell(&b, "2KB-4KB", "stock");
    assert_eq!((empty.loops, empty.answered, empty.n), (0, 0, 0));
    let md = b.table.render(Format::Markdown);
    assert!(
        md.contains("| 2KB-4KB | 0 | 0 | - | - | - | 0 | 0 | - |"),
        "{md}"
    );
    assert!(
        md.contains("empty rows (no loop in any column): 2KB-4KB"),
        "{md}"
    );

    // Releases (29 answered) and presses (30, the cold one among them).
    let mid = cell(&b, "1KB-2KB", "stock");
    let big = cell(&b, ">=4KB", "stock");
    assert_eq!(
        (mid.loops, mid.answered, mid.cold, mid.replies_over),
        (29, 29, 0, 0)
    );
    assert_eq!(
        (big.loops, big.answered, big.cold, big.replies_over),
        (30, 30, 1, 30)
    );
    let presses = values(&r, |l| l.event == "mousedown");
    assert_eq!(big.n, 29);
    assert_eq!(big.quantiles[0], quantile_sorted(&presses, 0.5));
    assert_eq!(big.quantiles[2], quantile_sorted(&presses, 0.99));
    let releases = values(&r, |l| l.event == "mouseup");
    assert_eq!(mid.quantiles[1], quantile_sorted(&releases, 0.9));
    // Every loop is in exactly one row.
    let total: u64 = b.cells.iter().map(|c| c.loops).sum();
    assert_eq!(total, r.loops.len() as u64);
    assert!(
        md.contains("stock: 30 of 59 answered loops drew a reply of 4KB or more"),
        "{md}"
    );
}

#[test]
fn each_rows_change_is_the_comparisons_own() {
    // The candidate's presses cost 60 ms more; its releases are the same population.
    let runs = vec![shaped("stock", 1, 100.0), shaped("slow", 2, 160.0)];
    let b = split(&runs, "event");
    assert_eq!(b.rows, ["mousedown", "mouseup", COALESCED_ROW]);
    assert_eq!(b.baseline, "stock");
    assert!(cell(&b, "mousedown", "stock").change.is_none());
    for row in ["mousedown", "mouseup"] {
        let got = cell(&b, row, "slow").change.as_ref().unwrap();
        // `compare` over only that row's loops must say the same, figure for figure.
        let only = |r: &Run| {
            let mut r = r.clone();
            r.loops.retain(|l| l.event == row);
            r
        };
        let want_opts = CompareOptions {
            metrics: vec![Metric::InputToPaint],
            ..CompareOptions::default()
        };
        let want = compare(&runs.iter().map(only).collect::<Vec<_>>(), &want_opts).unwrap();
        let want = &want.changes[0];
        assert_eq!(got.n, want.n);
        for (g, w) in got.quantiles.iter().zip(&want.quantiles) {
            // Debug text, so NaN (both sides beyond the window) compares equal to itself.
            assert_eq!(
                format!("{:?}", (g.delta, g.delta_pct, g.verdict)),
                format!("{:?}", (w.delta, w.delta_pct, w.verdict))
            );
        }
    }
    let press = &cell(&b, "mousedown", "slow")
        .change
        .as_ref()
        .unwrap()
        .quantiles[0];
    assert!(press.verdict.is_real() && press.delta > 40.0, "{press:?}");
    let release = &cell(&b, "mouseup", "slow")
        .change
        .as_ref()
        .unwrap()
        .quantiles[0];
    assert!(!release.verdict.is_real(), "{release:?}");
}

#[test]
fn every_split_renders_as_markdown_with_its_header_and_rows() {
    let one = vec![shaped("stock", 1, 100.0)];
    let two = vec![shaped("stock", 1, 100.0), shaped("slow", 2, 160.0)];
    let single = "| loops | n | p50 | p90 | p99 | unanswered | cold | \u{2265}4KB |";
    let paired = "| arm | loops | n | p50 | p90 | p99 | \u{394} p50 | \u{394} p90 | \u{394} p99 | unanswered | cold | \u{2265}4KB |";
    for (spec, first, rows) in [
        ("event", "input", 3),
        ("label", "label", 1),
        ("reply-size=1KB,10KB", "reply size", 3),
    ] {
        for (runs, tail) in [(&one, single), (&two, paired)] {
            let md = split(runs, spec).table.render(Format::Markdown);
            let lines: Vec<&str> = md.lines().collect();
            let header = format!("| {first} {tail}");
            let at = lines.iter().position(|l| *l == header);
            let at = at.unwrap_or_else(|| panic!("{spec}: no header {header}\n{md}"));
            assert!(lines[0].starts_with("### inputToPaint by "), "{md}");
            let sep = lines[at + 1];
            assert_eq!(
                sep.matches('|').count(),
                header.matches('|').count(),
                "{md}"
            );
            let body = lines[at + 2..]
                .iter()
                .take_while(|l| l.starts_with("| "))
                .count();
            assert_eq!(
                body,
                rows * runs.len(),
                "{spec}: one line per row and column\n{md}"
            );
        }
    }
}

#[test]
fn cold_loops_follow_the_tables_rule_and_the_threshold_is_settable() {
    let r = vec![shaped("stock", 1, 100.0)];
    let s = Split::parse("reply-size=4KB").unwrap();
    let mut o = opts("reply-size=4KB");
    assert_eq!(
        cell(&breakdown(&r, &s, &o).unwrap(), ">=4KB", "stock").n,
        29
    );
    o.checks.include_cold = true;
    let b = breakdown(&r, &s, &o).unwrap();
    assert_eq!(cell(&b, ">=4KB", "stock").n, 30);
    assert!(b
        .table
        .render(Format::Table)
        .contains("cold loops included"));

    o.reply_over = Some(1000);
    let b = breakdown(&r, &s, &o).unwrap();
    assert_eq!(
        cell(&b, "<4KB", "stock").replies_over,
        29,
        "releases of 1,500 B"
    );
    assert!(b
        .table
        .render(Format::Markdown)
        .contains("| \u{2265}1,000B |"));
}

#[test]
fn coalesced_input_has_its_own_row() {
    let mut r = shaped("stock", 1, 100.0);
    r.meta.summary.coalesced_inputs = 12;
    r.meta.summary.coalesced_input_to_socket = Summary::of(&[1.0, 2.0, 3.0, 4.0, 5.0]);
    let runs = vec![r];
    let b = split(&runs, "event");
    let c = cell(&b, COALESCED_ROW, "stock");
    // Counted, but inputToPaint does not exist for it.
    assert_eq!((c.loops, c.n, c.quantiles), (12, 0, [None, None, None]));
    let mut o = opts("event");
    o.metrics = vec![Metric::InputToSocket];
    let b = breakdown(&runs, &Split::Event, &o).unwrap();
    let c = cell(&b, COALESCED_ROW, "stock");
    assert_eq!((c.loops, c.n, c.quantiles[0]), (12, 5, Some(3.0)));
}

#[test]
fn a_run_without_loops_says_so_instead_of_printing_nothing() {
    let mut r = shaped("stock", 1, 100.0);
    r.loops.clear();
    let b = split(&[r], "label");
    assert!(b.rows.is_empty() && b.cells.is_empty());
    let md = b.table.render(Format::Markdown);
    assert!(md.contains("no loops in any column"), "{md}");
}
