//! Turns what a run printed into its figure (and start figure).

use serde::Serialize;

use crate::exec::{CutLines, Hit};
use crate::lines::MATCH_LINE_CAP;
use crate::spec::{FigureSpec, PerWindow, Pick, PilotMetric};

/// One run's reading.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    pub value: f64,
    /// The first steady window, when the figure comes from windows.
    pub start: Option<f64>,
    /// Every complete steady window, in order.
    pub windows: Vec<f64>,
    /// Lines that matched and fed the figure.
    pub n: usize,
    /// Something a reader should know (fewer windows than asked for).
    pub note: Option<String>,
    /// A pilot run's quantile reached an unanswered loop: `value` is what is known of it,
    /// its lower bound (`≥`).
    pub at_least: bool,
    /// A pilot run's loops, which its cell is decided on.
    #[serde(skip)]
    pub loops: Option<PilotLoops>,
}

/// A pilot run's warm loops on inputToPaint as `compare` reads them: each kind of input
/// ascending, its unanswered loops `+inf` at the top (beyond the answer window), and the
/// quantile the matrix's figure is.
#[derive(Debug, Clone, PartialEq)]
pub struct PilotLoops {
    pub strata: Vec<Vec<f64>>,
    pub q: f64,
    pub unanswered: u64,
}

impl PilotMetric {
    pub fn q(self) -> f64 {
        match self {
            PilotMetric::P50 => 0.5,
            PilotMetric::P90 => 0.9,
        }
    }
}

/// Why no line matched: said plainly, or with the lines too long to read whole (`cut`)
/// whose start did not match.
pub fn no_line_matched(cut: CutLines) -> String {
    let kib = MATCH_LINE_CAP / 1024;
    match cut.count {
        0 => "no line matched the pattern".into(),
        1 => format!(
            "no line matched the pattern; a line of {} bytes was longer than the {kib} KiB the matcher reads, and its first {kib} KiB did not match",
            cut.longest
        ),
        n => format!(
            "no line matched the pattern; {n} lines were longer than the {kib} KiB the matcher reads (the longest {} bytes), and their first {kib} KiB did not match",
            cut.longest
        ),
    }
}

/// Reads the figure of one run from the lines its pattern matched (`hits`), or says why
/// there is none; `cut` counts the lines too long to read whole that it did not match.
pub fn read_figure(
    spec: &FigureSpec,
    hits: &[Hit],
    cut: CutLines,
    wall_s: f64,
) -> Result<Figure, String> {
    let pattern_read = matches!(spec, FigureSpec::Regex { .. } | FigureSpec::Steady { .. });
    if pattern_read && hits.is_empty() {
        return Err(no_line_matched(cut));
    }
    match spec {
        FigureSpec::Wall { .. } => Ok(Figure {
            value: wall_s * 1000.0,
            start: None,
            windows: Vec::new(),
            n: 1,
            note: None,
            at_least: false,
            loops: None,
        }),
        FigureSpec::Regex { pick, .. } => {
            let vals: Vec<f64> = hits
                .iter()
                .filter_map(|h| h.value)
                .filter(|v| v.is_finite())
                .collect();
            if vals.is_empty() {
                return Err(format!(
                    "{} matching lines, none with a number in the group",
                    hits.len()
                ));
            }
            let value = match pick {
                Pick::Last => vals[vals.len() - 1],
                Pick::First => vals[0],
                Pick::Max => vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                Pick::Min => vals.iter().copied().fold(f64::INFINITY, f64::min),
                Pick::Mean => vals.iter().sum::<f64>() / vals.len() as f64,
            };
            Ok(Figure {
                value,
                start: None,
                windows: Vec::new(),
                n: vals.len(),
                note: None,
                at_least: false,
                loops: None,
            })
        }
        FigureSpec::Steady {
            warmup,
            window,
            windows,
            per_window,
            ..
        } => steady_windows(hits, *warmup, *window, *windows, *per_window),
        FigureSpec::Pilot { .. } => Err("a pilot figure is read from the run folder".into()),
    }
}

/// Reads a nested pilot run written under `run_dir` (its `run.json` there or in a
/// sub-folder): warm inputToPaint p50 or p90, ms, of its loops of input `event` (all
/// without), its unanswered loops counted beyond the answer window as `compare` counts
/// them (a quantile that reaches one reads as its lower bound, `at_least`), with the loops
/// its cell is decided on.
pub fn read_pilot(
    run_dir: &std::path::Path,
    metric: PilotMetric,
    event: Option<&str>,
) -> Result<Figure, String> {
    let found = arena_run::Run::find_all(run_dir).map_err(|e| format!("{e:#}"))?;
    let Some(dir) = found.first() else {
        return Err(format!(
            "no pilot run folder (run.json) under {}",
            run_dir.display()
        ));
    };
    let run = arena_run::Run::load_loops_only(dir).map_err(|e| format!("{e:#}"))?;
    let keep = |l: &arena_run::Loop| event.is_none_or(|e| l.event == e);
    let sel = arena_compare::Select {
        include_cold: false,
        keep: &keep,
        over_bytes: None,
    };
    let data = arena_compare::RunData::select(&run, sel);
    let m = arena_run::Metric::InputToPaint;
    let sorted = data.values_all(m);
    let q = metric.q();
    let Some(v) = arena_stats::quantile_sorted(&sorted, q) else {
        let of = event.map(|e| format!(" {e}")).unwrap_or_default();
        return Err(format!("the pilot run has no warm{of} loops"));
    };
    // An unanswered loop waited out the window. A run that does not record its window
    // still bounds it: every answer came within it, so it is at least the slowest one.
    let slowest = sorted.iter().rev().find(|v| v.is_finite()).copied();
    let window = data.window_ms.map(|w| w as f64).or(slowest).unwrap_or(0.0);
    let at_least = arena_stats::is_censored(v);
    let value = if at_least {
        arena_stats::censored_floor(&sorted, q, window).unwrap_or(window)
    } else {
        v
    };
    let note = (run.meta.status != arena_run::RunStatus::Complete)
        .then(|| format!("pilot run {:?}", run.meta.status).to_lowercase());
    Ok(Figure {
        value,
        start: None,
        windows: Vec::new(),
        n: sorted.len(),
        note,
        at_least,
        loops: Some(PilotLoops {
            strata: data.strata(m).to_vec(),
            q,
            unanswered: data.censored(m),
        }),
    })
}

/// Steady windows of a periodic log. Time starts at the first matching line (an app logs
/// once it is running, not when its process starts); `warmup` seconds are skipped, then
/// up to `k` windows of `w` seconds are read. A window counts only when the log runs past
/// its end (within one logging period), so a run cut short yields fewer windows, not a
/// low last window.
pub fn steady_windows(
    hits: &[Hit],
    warmup: f64,
    w: f64,
    k: u32,
    per_window: PerWindow,
) -> Result<Figure, String> {
    let mut pts: Vec<(f64, Option<f64>)> = hits
        .iter()
        .filter(|h| h.t.is_finite())
        .map(|h| (h.t, h.value.filter(|v| v.is_finite())))
        .collect();
    if per_window == PerWindow::Mean {
        pts.retain(|p| p.1.is_some());
    }
    if pts.is_empty() {
        return Err("no line matched the pattern".into());
    }
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let first = pts[0].0;
    let last = pts[pts.len() - 1].0;
    // The log's period: median gap between lines.
    let mut gaps: Vec<f64> = pts.windows(2).map(|p| p[1].0 - p[0].0).collect();
    gaps.sort_by(f64::total_cmp);
    let period = gaps.get(gaps.len() / 2).copied().unwrap_or(0.0);
    let mut out = Vec::new();
    for i in 0..k {
        let lo = first + warmup + w * f64::from(i);
        let hi = lo + w;
        if hi > last + period + 1e-9 {
            break;
        }
        let inside = pts.iter().filter(|p| p.0 >= lo && p.0 < hi);
        let v = match per_window {
            PerWindow::Rate => inside.count() as f64 / w,
            PerWindow::Mean => {
                let vals: Vec<f64> = inside.filter_map(|p| p.1).collect();
                if vals.is_empty() {
                    break;
                }
                vals.iter().sum::<f64>() / vals.len() as f64
            }
        };
        out.push(v);
    }
    if out.is_empty() {
        return Err(format!(
            "log ended {:.2} s after its first line, before the first steady window ({warmup} s warm-up + {w} s)",
            last - first
        ));
    }
    let note = (out.len() < k as usize).then(|| format!("{} of {k} windows", out.len()));
    Ok(Figure {
        value: out.iter().sum::<f64>() / out.len() as f64,
        start: out.first().copied(),
        n: pts.len(),
        windows: out,
        note,
        at_least: false,
        loops: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(points: &[(f64, f64)]) -> Vec<Hit> {
        points
            .iter()
            .map(|&(t, v)| Hit {
                t,
                value: Some(v),
                text: None,
            })
            .collect()
    }

    #[test]
    fn windows_skip_warmup_and_start_is_first() {
        // 10 Hz log: 0-1 s at 10, 1-2 s at 50, 2-4 s at 100.
        let pts: Vec<(f64, f64)> = (0..40)
            .map(|i| {
                let t = i as f64 * 0.1;
                (
                    t + 5.0,
                    if t < 1.0 {
                        10.0
                    } else if t < 2.0 {
                        50.0
                    } else {
                        100.0
                    },
                )
            })
            .collect();
        let f = steady_windows(&hits(&pts), 1.0, 1.0, 3, PerWindow::Mean).unwrap();
        assert_eq!(f.windows.len(), 3);
        assert!((f.start.unwrap() - 50.0).abs() < 1e-9);
        assert!((f.windows[1] - 100.0).abs() < 1e-9);
        assert!((f.value - (50.0 + 100.0 + 100.0) / 3.0).abs() < 1e-9);
        let r = steady_windows(&hits(&pts), 1.0, 1.0, 3, PerWindow::Rate).unwrap();
        assert!((r.value - 10.0).abs() < 1e-9);
    }

    /// A steady figure with no matching line names the cut lines too; a matching line
    /// makes them no reason.
    #[test]
    fn no_match_names_cut_lines_for_steady_figures() {
        let spec = FigureSpec::Steady {
            source: crate::spec::LineSource::Stdout,
            pattern: regex::Regex::new(r"^fps=(?P<value>[0-9.]+)$").unwrap(),
            group: "value".into(),
            warmup: 0.0,
            window: 0.5,
            windows: 1,
            per_window: PerWindow::Mean,
        };
        let cut = CutLines {
            count: 1,
            longest: 70_000,
        };
        assert_eq!(
            read_figure(&spec, &[], cut, 1.0).unwrap_err(),
            "no line matched the pattern; a line of 70000 bytes was longer than the 64 KiB \
             the matcher reads, and its first 64 KiB did not match"
        );
        let pts: Vec<(f64, f64)> = (0..10).map(|i| (i as f64 * 0.1, 60.0)).collect();
        assert_eq!(
            read_figure(&spec, &hits(&pts), cut, 1.0).unwrap().value,
            60.0
        );
    }

    #[test]
    fn short_log_gives_fewer_windows_or_none() {
        let pts: Vec<(f64, f64)> = (0..15).map(|i| (i as f64 * 0.1, 60.0)).collect();
        let f = steady_windows(&hits(&pts), 0.5, 0.5, 3, PerWindow::Mean).unwrap();
        assert_eq!(f.windows.len(), 2);
        assert_eq!(f.note.as_deref(), Some("2 of 3 windows"));
        assert!(steady_windows(&hits(&pts), 2.0, 0.5, 3, PerWindow::Mean).is_err());
        assert!(steady_windows(&[], 0.0, 0.5, 3, PerWindow::Mean).is_err());
    }
}
