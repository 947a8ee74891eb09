//! Breakdowns (`--split`): each column's loops cut into rows by input kind, by the size of
//! their answer, or by click label; each row with its loops, its quantiles, its own change
//! against the baseline's row (the comparison's rule, [`metric_change`]) and the share of
//! answers at or over a reply size. Splitting by reply size is what showed a board repaint
//! costs ~105 ms in the field notes: one pooled median hides two populations.

use std::collections::BTreeSet;

use anyhow::Result;
use arena_report::{fmt_size, parse_size};
use arena_run::{Loop, Metric, Run};
use arena_stats::quantile_sorted;
use serde::Serialize;

use crate::by_run::headline;
use crate::compare::{metric_change, resolve_baseline, CompareOptions, MetricChange, QUANTILES};
use crate::decide::holm_verdicts;
use crate::group::{groups, Group, RunData, Select};

/// How loops are cut into rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Split {
    /// One row per DOM event type (mousedown, mouseup, keydown, ...), and coalesced input
    /// (mousemove, ...) on a row of its own.
    Event,
    /// Rows by the bytes of a loop's answer (`Loop::reply_bytes`), cut at these ascending
    /// bounds: `<b1`, `b1-b2`, ..., `>=bk`.
    ReplySize(Vec<u64>),
    /// One row per click label of the pilot file.
    Label,
}

/// The accepted splits, as every error about one lists them.
pub const SPLITS: &str = "event, label, reply-size=SIZE[,SIZE...] (e.g. reply-size=1KB,10KB)";

/// The row coalesced input gets under `--split event`.
pub const COALESCED_ROW: &str = "coalesced";

impl Split {
    /// `event`, `label`, `reply-size=1KB,10KB`; an error names what is wrong and lists
    /// the accepted splits.
    pub fn parse(text: &str) -> Result<Split, String> {
        let t = text.trim();
        let (name, arg) = match t.split_once('=') {
            Some((n, a)) => (n.trim(), Some(a)),
            None => (t, None),
        };
        match (name, arg) {
            ("event", None) => Ok(Split::Event),
            ("label", None) => Ok(Split::Label),
            ("reply-size", Some(a)) => bounds(a).map(Split::ReplySize),
            ("reply-size", None) => Err(format!(
                "`{t}`: reply-size needs its bucket bounds, e.g. reply-size=1KB,10KB"
            )),
            ("event" | "label", Some(_)) => Err(format!("`{t}`: `{name}` takes no value")),
            _ => Err(format!("unknown split `{t}` (one of {SPLITS})")),
        }
    }

    /// The name `--split` takes.
    pub fn name(&self) -> &'static str {
        match self {
            Split::Event => "event",
            Split::ReplySize(_) => "reply-size",
            Split::Label => "label",
        }
    }

    /// The rows over `runs`, in order: every bucket of a reply-size split (an empty one
    /// included), the event types or labels that occur.
    fn rows(&self, runs: &[Run]) -> Vec<String> {
        let seen = |f: fn(&Loop) -> &str| -> Vec<String> {
            let set: BTreeSet<&str> = runs.iter().flat_map(|r| &r.loops).map(f).collect();
            set.into_iter().map(str::to_string).collect()
        };
        match self {
            Split::Event => {
                let mut v = seen(|l| l.event.as_str());
                v.push(COALESCED_ROW.into());
                v
            }
            Split::Label => seen(|l| l.label.as_str()),
            Split::ReplySize(b) => bucket_labels(b),
        }
    }

    /// Whether loop `l` is in row `row` of `rows` (as [`Split::rows`] made them).
    fn keeps(&self, rows: &[String], row: usize, l: &Loop) -> bool {
        match self {
            Split::Event => rows[row] != COALESCED_ROW && l.event == rows[row],
            Split::Label => l.label == rows[row],
            Split::ReplySize(b) => bucket_of(b, l.reply_bytes) == row,
        }
    }
}

/// Bucket bounds: sizes, strictly ascending, none zero (a `<0B` bucket is empty by
/// definition).
fn bounds(text: &str) -> Result<Vec<u64>, String> {
    let v = text
        .split(',')
        .map(|p| parse_size(p).map_err(|e| format!("reply-size: {e}")))
        .collect::<Result<Vec<u64>, String>>()?;
    if v.contains(&0) {
        return Err(format!(
            "reply-size={text}: a bound of 0 makes a bucket no loop can be in"
        ));
    }
    for w in v.windows(2) {
        if w[1] == w[0] {
            return Err(format!("reply-size={text}: {} given twice", fmt_size(w[0])));
        }
        if w[1] < w[0] {
            return Err(format!(
                "reply-size={text}: bounds must ascend ({} before {})",
                fmt_size(w[0]),
                fmt_size(w[1])
            ));
        }
    }
    Ok(v)
}

/// `<1KB`, `1KB-10KB`, `>=10KB` for bounds 1024, 10240.
fn bucket_labels(b: &[u64]) -> Vec<String> {
    let mut v = vec![format!("<{}", fmt_size(b[0]))];
    v.extend(
        b.windows(2)
            .map(|w| format!("{}-{}", fmt_size(w[0]), fmt_size(w[1]))),
    );
    v.push(format!(">={}", fmt_size(b[b.len() - 1])));
    v
}

/// Index of the bucket `bytes` falls in: a bound belongs to the bucket it opens.
fn bucket_of(b: &[u64], bytes: u64) -> usize {
    b.partition_point(|&x| x <= bytes)
}

/// One row of one column.
#[derive(Debug, Clone, Serialize)]
pub struct BreakdownCell {
    pub row: String,
    pub column: String,
    /// Every loop of the row: answered, unanswered, claimed and cold ones (coalesced
    /// input: the inputs seen).
    pub loops: u64,
    pub answered: u64,
    pub unanswered: u64,
    pub claimed: u64,
    pub cold: u64,
    /// Answered loops whose reply reached the breakdown's `reply_over` size.
    pub replies_over: u64,
    /// Values behind the quantiles (warm answered loops with the metric, unless cold
    /// loops were asked in).
    pub n: u64,
    /// p50, p90, p99 in ms; `None` for an empty row. Its JSON document names them
    /// (`crate::json_types::BreakdownCellDoc`).
    #[serde(skip)]
    pub quantiles: [Option<f64>; 3],
    /// Against the baseline column's same row; `None` for the baseline itself and for
    /// coalesced input (only its per-run summary is kept).
    #[serde(skip)]
    pub change: Option<MetricChange>,
}

/// One `--split`: its cells, row by row and column by column within a row, and its table.
#[derive(Debug, Clone)]
pub struct Breakdown {
    pub split: Split,
    pub metric: Metric,
    /// The reply size counted in `replies_over`, bytes.
    pub reply_over: u64,
    pub baseline: String,
    pub columns: Vec<String>,
    pub rows: Vec<String>,
    pub cells: Vec<BreakdownCell>,
    pub table: arena_report::Table,
}

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
                let per_run = |g: &Group| -> Vec<Vec<f64>> {
                    g.runs.iter().map(|r| r.values_all(metric)).collect()
                };
                let (rb, rc) = (per_run(&gs[base]), per_run(g));
                let mut ch = metric_change(
                    &g.name,
                    metric,
                    &rb.iter().map(Vec::as_slice).collect::<Vec<_>>(),
                    &rc.iter().map(Vec::as_slice).collect::<Vec<_>>(),
                    &opts.verdict,
                );
                // One family per cell: its three quantiles.
                holm_verdicts(
                    &mut ch.quantiles.iter_mut().collect::<Vec<_>>(),
                    &opts.verdict,
                );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_parse_and_bad_ones_say_what_is_accepted() {
        assert_eq!(Split::parse("event"), Ok(Split::Event));
        assert_eq!(Split::parse(" label "), Ok(Split::Label));
        assert_eq!(
            Split::parse("reply-size=1KB,10KB"),
            Ok(Split::ReplySize(vec![1024, 10240]))
        );
        let e = Split::parse("colour").unwrap_err();
        assert!(
            e.contains("unknown split `colour`") && e.contains(SPLITS),
            "{e}"
        );
        for (bad, says) in [
            ("reply-size", "needs its bucket bounds"),
            ("reply-size=", "not a size"),
            ("reply-size=1KB,ten", "`ten`: not a size"),
            (
                "reply-size=10KB,1KB",
                "bounds must ascend (10KB before 1KB)",
            ),
            ("reply-size=1KB,1024", "1KB given twice"),
            ("reply-size=0,1KB", "a bound of 0"),
            ("event=1", "takes no value"),
        ] {
            let e = Split::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_bound_opens_its_bucket() {
        let b = [1024, 10240];
        assert_eq!(bucket_labels(&b), ["<1KB", "1KB-10KB", ">=10KB"]);
        let at = |bytes| bucket_of(&b, bytes);
        assert_eq!(
            [
                at(0),
                at(1023),
                at(1024),
                at(10239),
                at(10240),
                at(u64::MAX)
            ],
            [0, 0, 1, 1, 2, 2]
        );
    }
}
