//! Warnings about the measurement itself, as data. Each names the column and the figure
//! it concerns; tables put a numbered marker next to that figure and the text under the
//! table, JSON carries them whole.

use arena_report::{fmt_ms, Table};
use arena_run::{Metric, Run};
use arena_stats::{bootstrap_quantile_ci, BootstrapOptions};
use serde::Serialize;

use crate::group::{Group, RunData};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Stable code: `few_samples`, `idle`, `unstable`, `cold_mixed`, `cold_suspect`,
    /// `unanswered`, or a run.json warning code prefixed `run:`.
    pub code: String,
    /// Column (run or arm) the finding concerns; `None` for the whole table.
    pub column: Option<String>,
    /// Loop metric, when the finding is about one.
    pub metric: Option<&'static str>,
    /// Figure within the metric or table: `p50`, `p99`, `unanswered`, ...
    pub stat: Option<String>,
    pub message: String,
}

/// What the checks need to know.
#[derive(Debug, Clone, Copy)]
pub struct CheckOptions {
    /// Cold loops were put into the warm figures on request.
    pub include_cold: bool,
    /// An arm whose share of answered replies at its target's idle threshold is below this
    /// looks idle.
    pub idle_share: f64,
    /// Interval used to decide whether two runs of one arm agree.
    pub bootstrap: BootstrapOptions,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            include_cold: false,
            idle_share: arena_run::IDLE_SHARE,
            bootstrap: BootstrapOptions {
                resamples: 1000,
                ..BootstrapOptions::default()
            },
        }
    }
}

/// Quantiles checked for sample size: the figure is only worth quoting from at least
/// `1 / (1 - q)` loops (p99 from 100); below that it is the max by another name.
const SIZE_CHECKED: [(f64, &str); 2] = [(0.9, "p90"), (0.99, "p99")];

/// Phases or labels that mean "nothing is happening on the server".
fn idle_phase(run: &Run) -> Option<String> {
    let looks_idle = |s: &str| {
        let s = s.to_ascii_lowercase();
        s.contains("idle") || s.contains("deploy")
    };
    if let Some(v) = run.meta.knobs.get("phase").filter(|v| looks_idle(v)) {
        return Some(v.clone());
    }
    run.loops
        .iter()
        .find(|l| looks_idle(&l.label))
        .map(|l| l.label.clone())
}

pub fn check(groups: &[Group], metrics: &[Metric], opts: &CheckOptions) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in groups {
        few_samples(g, metrics, &mut out);
        out.extend(idle(g, opts));
        let col = Some(g.name.clone());
        let unanswered = g.unanswered();
        if unanswered > 0 {
            out.push(Finding {
                code: "unanswered".into(),
                column: col.clone(),
                metric: None,
                stat: Some("unanswered".into()),
                message: format!(
                    "{unanswered} of {} loops unanswered: counted in the figures as slower than every answered loop (censored at the window)",
                    g.loops()
                ),
            });
        }
        let cold = g.cold();
        if opts.include_cold && cold > 0 {
            out.push(Finding {
                code: "cold_mixed".into(),
                column: col,
                metric: None,
                stat: None,
                message: format!(
                    "{cold} cold loops mixed into the warm figures (first interaction of a page: a different population)"
                ),
            });
        }
        per_run(g, &mut out);
    }
    out.extend(unstable(groups, metrics, opts));
    out
}

/// A tail quantile from fewer loops than it needs is the max under another name.
fn few_samples(g: &Group, metrics: &[Metric], out: &mut Vec<Finding>) {
    for &m in metrics {
        let n = g.count(m);
        for (q, stat) in SIZE_CHECKED {
            let need = (1.0 / (1.0 - q)).round() as usize;
            if n > 0 && n < need {
                out.push(Finding {
                    code: "few_samples".into(),
                    column: Some(g.name.clone()),
                    metric: Some(m.name()),
                    stat: Some(stat.into()),
                    message: format!(
                        "{stat} from {n} loops (fewer than {need}): close to the max, not a {stat}"
                    ),
                });
            }
        }
    }
}

/// A column whose answers are mostly small (or whose pilot says it is idle).
fn idle(g: &Group, opts: &CheckOptions) -> Option<Finding> {
    let (answered, big, threshold) = g.replies_over_idle();
    let phase = g.runs.iter().find_map(|r| idle_phase(r.run));
    let small = answered > 0 && (big as f64) < opts.idle_share * answered as f64;
    if !small && phase.is_none() {
        return None;
    }
    let why = match &phase {
        Some(p) => format!("phase '{p}'"),
        None => format!(
            "{big} of {answered} replies {} ({:.0} %, threshold {:.0} %)",
            match threshold {
                0 => "over 4 KB".to_string(),
                t => format!("of {} B or more", arena_report::fmt_count(t as i64)),
            },
            100.0 * big as f64 / answered.max(1) as f64,
            100.0 * opts.idle_share
        ),
    };
    Some(Finding {
        code: "idle".into(),
        column: Some(g.name.clone()),
        metric: None,
        stat: None,
        message: format!(
            "looks idle: {why}; an idle board makes CPU look free: measure a busy phase, or set `target.idle_reply_bytes` in the pilot file to what a working answer weighs"
        ),
    })
}

/// Each run's suspect cold loop and the warnings its run.json carries.
fn per_run(g: &Group, out: &mut Vec<Finding>) {
    let col = Some(g.name.clone());
    for (i, r) in g.runs.iter().enumerate() {
        if let Some(msg) = suspect_cold(r) {
            let which = if g.runs.len() > 1 {
                format!("run {}: ", i + 1)
            } else {
                String::new()
            };
            out.push(Finding {
                code: "cold_suspect".into(),
                column: col.clone(),
                metric: Some(Metric::InputToPaint.name()),
                stat: Some("max".into()),
                message: format!("{which}{msg}"),
            });
        }
        for w in &r.run.meta.warnings {
            if w.code == "unanswered" || w.code == "idle" {
                continue; // computed above from the loops themselves
            }
            out.push(Finding {
                code: format!("run:{}", w.code),
                column: col.clone(),
                metric: None,
                stat: None,
                message: format!("run.json of {}: {}", r.run.meta.started_at, w.message),
            });
        }
    }
}

/// The first loop in the figures of a run, when it looks like the cold cliff: the
/// largest value of the run, above every other, and more than 4x the run's median, with
/// at least 5 others.
fn suspect_cold(r: &RunData) -> Option<String> {
    let (index, first, cold) = r.first?;
    if cold {
        return None; // reported as cold_mixed
    }
    let v = r.values(Metric::InputToPaint);
    let n = v.len();
    if n < 6 || v[n - 1] != first || v[n - 2] >= first {
        return None;
    }
    let median = arena_stats::quantile_sorted(v, 0.5)?;
    (first > 4.0 * median).then(|| {
        format!(
            "loop {index} (the first) took {} against a median of {}: looks cold but is not marked cold, and it is in the warm figures",
            fmt_ms(first),
            fmt_ms(median)
        )
    })
}

/// Two runs of one arm whose p50 or p90 intervals do not overlap: the arm is not
/// reproducible, so no comparison of it is either.
fn unstable(groups: &[Group], metrics: &[Metric], opts: &CheckOptions) -> Vec<Finding> {
    let mut out = Vec::new();
    // Every arm once, with all of its runs, whichever way columns are formed.
    let mut arms: Vec<(&str, Vec<&RunData>)> = Vec::new();
    for g in groups {
        match arms.iter_mut().find(|(a, _)| *a == g.arm) {
            Some((_, v)) => v.extend(g.runs.iter().copied()),
            None => arms.push((&g.arm, g.runs.clone())),
        }
    }
    for (arm, runs) in arms {
        if runs.len() < 2 {
            continue;
        }
        let cols: Vec<&Group> = groups.iter().filter(|g| g.arm == arm).collect();
        for &m in metrics {
            for (q, stat) in [(0.5, "p50"), (0.9, "p90")] {
                let cis: Vec<_> = runs
                    .iter()
                    .map(|r| bootstrap_quantile_ci(r.values(m), q, &opts.bootstrap))
                    .collect();
                let mut worst: Option<(usize, usize)> = None;
                for i in 0..cis.len() {
                    for j in i + 1..cis.len() {
                        if let (Some(a), Some(b)) = (cis[i], cis[j]) {
                            if a.hi < b.lo || b.hi < a.lo {
                                worst.get_or_insert((i, j));
                            }
                        }
                    }
                }
                if let Some((i, j)) = worst {
                    let (a, b) = (cis[i].unwrap_or_default(), cis[j].unwrap_or_default());
                    let level = 100.0 * opts.bootstrap.level;
                    for g in &cols {
                        out.push(Finding {
                            code: "unstable".into(),
                            column: Some(g.name.clone()),
                            metric: Some(m.name()),
                            stat: Some(stat.into()),
                            message: format!(
                                "runs {} and {} of '{arm}' disagree on {} {stat}: {} [{}, {}] vs {} [{}, {}] ({level:.0} % intervals do not overlap): unstable",
                                i + 1,
                                j + 1,
                                m.name(),
                                fmt_ms(a.estimate),
                                fmt_ms(a.lo),
                                fmt_ms(a.hi),
                                fmt_ms(b.estimate),
                                fmt_ms(b.lo),
                                fmt_ms(b.hi)
                            ),
                        });
                    }
                }
            }
        }
    }
    out
}

/// Puts a numbered marker next to each finding's figure (the cell of its column and row,
/// or the column header when it has no row) and lists the findings under the table.
/// `row_of` maps a finding to the label in the table's first column, or `None` when the
/// table has no such row (the finding then marks the header).
pub fn annotate(
    table: &mut Table,
    findings: &[Finding],
    row_of: impl Fn(&Finding) -> Option<String>,
) {
    // Positions are resolved against the names as they were before any marker was added.
    let names: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
    let labels: Vec<String> = table
        .rows
        .iter()
        .map(|r| r.first().map(|c| c.text.clone()).unwrap_or_default())
        .collect();
    for (k, f) in findings.iter().enumerate() {
        let marker = format!(" \u{26a0}{}", k + 1);
        let col = f
            .column
            .as_ref()
            .and_then(|c| names.iter().position(|x| x == c));
        let row = row_of(f).and_then(|label| labels.iter().position(|l| *l == label));
        match (col, row) {
            (Some(c), Some(r)) => {
                if let Some(cell) = table.rows[r].get_mut(c) {
                    cell.text.push_str(&marker);
                }
            }
            (Some(c), None) => table.columns[c].name.push_str(&marker),
            _ => {}
        }
        let place = match (&f.column, f.metric, &f.stat) {
            (Some(c), Some(m), Some(s)) => format!("{c}, {m} {s}"),
            (Some(c), Some(m), None) => format!("{c}, {m}"),
            (Some(c), None, Some(s)) => format!("{c}, {s}"),
            (Some(c), None, None) => c.clone(),
            (None, _, _) => "all".into(),
        };
        table.note(format!("\u{26a0}{} {place}: {}", k + 1, f.message));
    }
}
