//! `history trend`: one quantile of one metric per stored run, with its bootstrap
//! interval, in the order the runs were added, and the steps in that series.

use anyhow::Result;
use arena_compare::RunData;
use arena_report::Exit;
use arena_run::Metric;
use arena_stats::{bootstrap_quantile_ci, BootstrapOptions};

use crate::changepoint::{detect, ChangeOptions};
use crate::store::{Filter, RunRow, Store};

/// What to trend and how.
#[derive(Debug, Clone)]
pub struct TrendOptions {
    pub metric: Metric,
    /// Quantile in [0, 1], and its label as given (`p50`).
    pub q: f64,
    pub stat: String,
    pub bootstrap: BootstrapOptions,
    pub change: ChangeOptions,
}

impl TrendOptions {
    /// Parses `METRIC.pQ` (`inputToPaint.p90`; the quantile defaults to p50).
    pub fn parse(spec: &str) -> Result<TrendOptions> {
        let bad = |why: &str| -> anyhow::Error {
            Exit::bad_input(format!(
                "{spec}: {why} (expected METRIC.pQ, e.g. inputToPaint.p50; metrics: {})",
                Metric::ALL.map(|m| m.name()).join(", ")
            ))
            .into()
        };
        let (m, stat) = match spec.rsplit_once('.') {
            Some((m, q)) => (m, q.to_ascii_lowercase()),
            None => (spec, "p50".to_string()),
        };
        let metric = Metric::parse(m).ok_or_else(|| bad("unknown metric"))?;
        let q: f64 = stat
            .strip_prefix('p')
            .and_then(|q| q.parse().ok())
            .ok_or_else(|| bad("the quantile is p followed by a percent, e.g. p90"))?;
        if !(0.0..=100.0).contains(&q) {
            return Err(bad("the quantile must be between p0 and p100"));
        }
        Ok(TrendOptions {
            metric,
            q: q / 100.0,
            stat,
            bootstrap: BootstrapOptions::default(),
            change: ChangeOptions::default(),
        })
    }
}

/// One run of the series.
#[derive(Debug, Clone)]
pub struct Point {
    pub row: RunRow,
    /// Loops in the figure (unanswered ones censored at the window, as compare counts them).
    pub n: usize,
    /// The run's quantile and its bootstrap interval, ms; `None` without loops, infinite
    /// when it lands on a censored loop.
    pub estimate: Option<f64>,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

/// One step of the series, named by the run where the new level starts.
#[derive(Debug, Clone)]
pub struct Step {
    /// Its position in the series (0-based), and the run and commit there.
    pub at: usize,
    pub run_id: i64,
    pub commit: Option<String>,
    pub before_ms: f64,
    pub after_ms: f64,
    pub size_ms: f64,
    pub lo_ms: f64,
    pub hi_ms: f64,
    pub p: f64,
    /// A side of the step holds runs past the window, stood at it: the size is a bound
    /// (at least this far up, or down), not a value.
    pub bound: bool,
}

/// A metric's series over stored runs and its steps.
#[derive(Debug, Clone)]
pub struct Trend {
    pub metric: Metric,
    pub stat: String,
    pub points: Vec<Point>,
    /// Points left out of the step search (no figure).
    pub left_out: usize,
    /// Points past the window, stood at it in the step search (above every answered run).
    pub past_window: usize,
    pub steps: Vec<Step>,
    pub options: ChangeOptions,
}

/// The trend of `opts`' quantile over the runs `filter` selects.
pub fn trend(store: &dyn Store, filter: &Filter, opts: &TrendOptions) -> Result<Trend> {
    let rows = store.list(filter)?;
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let runs = store.load_many(&ids)?;
    let mut points = Vec::with_capacity(rows.len());
    let mut windows = Vec::with_capacity(rows.len());
    for (row, run) in rows.into_iter().zip(runs) {
        windows.push(run.meta.loop_settings.as_ref().map(|l| l.timeout_ms as f64));
        let values = RunData::new(&run, false).values_all(opts.metric);
        let ci = bootstrap_quantile_ci(&values, opts.q, &opts.bootstrap);
        points.push(Point {
            row,
            n: values.len(),
            estimate: ci.map(|c| c.estimate),
            lo: ci.map(|c| c.lo),
            hi: ci.map(|c| c.hi),
        });
    }
    // A run past the window stands at it: above every answered run's figure, which is
    // inside its window. A run that did not record its window stands just above the rest.
    let top = points
        .iter()
        .filter_map(|p| p.estimate.filter(|v| v.is_finite()))
        .fold(0.0, f64::max);
    let searched: Vec<(usize, f64, bool)> = points
        .iter()
        .zip(&windows)
        .enumerate()
        .filter_map(|(i, (p, w))| {
            let v = p.estimate?;
            Some(if v.is_finite() {
                (i, v, false)
            } else {
                (i, w.unwrap_or(top + 1.0).max(top), true)
            })
        })
        .collect();
    let series: Vec<f64> = searched.iter().map(|(_, v, _)| *v).collect();
    let steps = detect(&series, &opts.change)
        .into_iter()
        .map(|c| {
            let at = searched[c.at].0;
            let segment = |a: usize, b: usize| searched[a..b].iter().any(|(_, _, cut)| *cut);
            let next = c.at + c.after_len;
            Step {
                at,
                run_id: points[at].row.id,
                commit: points[at].row.commit.clone(),
                before_ms: c.before,
                after_ms: c.after,
                size_ms: c.size,
                lo_ms: c.lo,
                hi_ms: c.hi,
                p: c.p,
                bound: segment(c.at - c.before_len, c.at) || segment(c.at, next),
            }
        })
        .collect();
    let past_window = searched.iter().filter(|(_, _, cut)| *cut).count();
    Ok(Trend {
        metric: opts.metric,
        stat: opts.stat.clone(),
        left_out: points.len() - series.len(),
        past_window,
        points,
        steps,
        options: opts.change,
    })
}
