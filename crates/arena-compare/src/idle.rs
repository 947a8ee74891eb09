//! The idle table: what a target sent in a window with no input (`pilot --idle`, `watch`),
//! in the field notes' layout (frames, bytes, B/s, median gap, sizes), and the runs of
//! near-identical consecutive frames: repaints for nothing, like a blinking cursor.
//!
//! A frame is near-identical when its likeness to the one before reaches the bar of the
//! measure the window was judged on (`IdleWindow::similarity`): pixels, the share of the
//! watched canvas a frame left unchanged (what the player saw), where the canvas could be
//! read; else bytes, the payload against the previous one (equal bytes at equal offsets,
//! or common prefix + suffix, over the longer length). Bytes misjudge compressed images
//! both ways (one changed pixel can rewrite a whole PNG; the same draw ops can point at a
//! different constant id), so pixels judge wherever they can.

use arena_report::{fmt_bytes, fmt_count, fmt_ms, Cell, Column, Table};
use arena_run::{IdleFrame, IdleWindow};
use arena_stats::quantile;
use serde_json::{json, Value};

use crate::frames::{cold_json, frames_table, FrameSource, Receipt, BURST_GAP_MS};
use crate::json::num;

/// Bars, percent: a frame at or above its measure's bar is near-identical to the one
/// before. Pixels: under 1 % of the canvas changed. Bytes: under 10 % of the payload
/// differs (a frame id and a constant id in a few dozen bytes of draw ops).
pub const PIXELS_BAR_PCT: f64 = 99.0;
pub const BYTES_BAR_PCT: f64 = 90.0;

/// The figures of one window.
#[derive(Debug, Clone, PartialEq)]
pub struct IdleFigures {
    pub length_s: f64,
    pub frames: u64,
    pub bytes: u64,
    /// bytes / window length; `None` for a window of no length.
    pub bytes_per_s: Option<f64>,
    pub gaps: u64,
    pub median_gap_ms: Option<f64>,
    pub min: Option<u64>,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub max: Option<u64>,
    /// The measure judged on, its bar, and what it found.
    pub similarity: String,
    pub bar_pct: f64,
    /// Frames with a likeness on the judged measure (the first frame of a bytes window
    /// has nothing before it).
    pub judged: u64,
    pub near_identical: u64,
    pub runs: u64,
    pub longest_run: u64,
    pub median_near_pct: Option<f64>,
    pub bytes_median_pct: Option<f64>,
    pub pixels_median_pct: Option<f64>,
}

fn likeness(f: &IdleFrame, on: &str) -> Option<f64> {
    if on == "pixels" {
        f.pixels_pct
    } else {
        f.bytes_pct
    }
}

pub fn idle_figures(w: &IdleWindow) -> IdleFigures {
    let length_s = ((w.end_ms - w.start_ms) / 1e3).max(0.0);
    let sizes: Vec<f64> = w.frames.iter().map(|f| f.size as f64).collect();
    let bytes: u64 = w.frames.iter().map(|f| f.size as u64).sum();
    let gaps: Vec<f64> = w.frames.windows(2).map(|p| p[1].t_ms - p[0].t_ms).collect();
    let on = w.similarity.as_str();
    let bar_pct = if on == "pixels" {
        PIXELS_BAR_PCT
    } else {
        BYTES_BAR_PCT
    };
    let (mut near, mut runs, mut longest, mut cur, mut judged) = (0, 0, 0, 0, 0);
    let mut near_pct = Vec::new();
    for f in &w.frames {
        let l = likeness(f, on);
        judged += l.is_some() as u64;
        match l {
            Some(x) if x >= bar_pct => {
                near += 1;
                near_pct.push(x);
                cur += 1;
                runs += (cur == 1) as u64;
                longest = longest.max(cur);
            }
            _ => cur = 0,
        }
    }
    let median_of = |v: Vec<f64>| quantile(&v, 0.5);
    IdleFigures {
        length_s,
        frames: w.frames.len() as u64,
        bytes,
        bytes_per_s: (length_s > 0.0).then(|| bytes as f64 / length_s),
        gaps: gaps.len() as u64,
        median_gap_ms: quantile(&gaps, 0.5),
        min: w.frames.iter().map(|f| f.size as u64).min(),
        p50: quantile(&sizes, 0.5),
        p90: quantile(&sizes, 0.9),
        max: w.frames.iter().map(|f| f.size as u64).max(),
        similarity: on.to_string(),
        bar_pct,
        judged,
        near_identical: near,
        runs,
        longest_run: longest,
        median_near_pct: median_of(near_pct),
        bytes_median_pct: median_of(w.frames.iter().filter_map(|f| f.bytes_pct).collect()),
        pixels_median_pct: median_of(w.frames.iter().filter_map(|f| f.pixels_pct).collect()),
    }
}

fn pct(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.2} %")).unwrap_or_else(|| "-".into())
}

fn bytes_opt(v: Option<f64>) -> String {
    v.map(|x| fmt_bytes(x.round() as u64))
        .unwrap_or_else(|| "-".into())
}

/// The rows of one window, in order: (label, text, raw value).
fn rows_of(w: &IdleWindow, f: &IdleFigures) -> Vec<(&'static str, String, Option<f64>)> {
    let sizes = match (f.min, f.max) {
        (Some(lo), Some(hi)) => format!(
            "{}-{}; p50 {}, p90 {}",
            fmt_count(lo as i64),
            fmt_bytes(hi),
            bytes_opt(f.p50),
            bytes_opt(f.p90)
        ),
        _ => "-".into(),
    };
    // A measure that could not be taken says why beside its dash.
    let why = |v: Option<f64>, w: &Option<String>| match w {
        Some(r) => format!("{} (unavailable: {r})", pct(v)),
        None => pct(v),
    };
    vec![
        (
            "window",
            format!(
                "{:.1} s (page {}..{})",
                f.length_s,
                fmt_ms(w.start_ms),
                fmt_ms(w.end_ms)
            ),
            Some(f.length_s),
        ),
        ("frames", fmt_count(f.frames as i64), Some(f.frames as f64)),
        ("bytes", fmt_bytes(f.bytes), Some(f.bytes as f64)),
        (
            "rate",
            f.bytes_per_s
                .map(|r| format!("{} B/s", fmt_count(r.round() as i64)))
                .unwrap_or_else(|| "-".into()),
            f.bytes_per_s,
        ),
        (
            "median gap between frames",
            match f.median_gap_ms {
                Some(g) => format!("{} (n={} gaps)", fmt_ms(g), f.gaps),
                None => format!("- (n={} gaps)", f.gaps),
            },
            f.median_gap_ms,
        ),
        ("frame sizes", sizes, f.max.map(|m| m as f64)),
        (
            "near-identical frames",
            format!(
                "{} of {} judged ({}, bar {:.0} %; median {})",
                f.near_identical,
                f.judged,
                f.similarity,
                f.bar_pct,
                pct(f.median_near_pct)
            ),
            Some(f.near_identical as f64),
        ),
        (
            "runs of them",
            format!("{} (longest {})", f.runs, f.longest_run),
            Some(f.runs as f64),
        ),
        (
            "likeness, pixels (median)",
            why(f.pixels_median_pct, &w.pixels_unavailable),
            f.pixels_median_pct,
        ),
        (
            "likeness, bytes (median)",
            why(f.bytes_median_pct, &w.bytes_unavailable),
            f.bytes_median_pct,
        ),
    ]
}

/// One column per window (`name`, window), rows in the notes' order.
pub fn idle_table(windows: &[(String, &IdleWindow)]) -> Table {
    let mut cols = vec![Column::left("")];
    cols.extend(windows.iter().map(|(n, _)| Column::left(n.clone())));
    let mut t = Table::new(cols)
        .with_title("idle window: what the target sent with no input (payload bytes, page clock)");
    let all: Vec<_> = windows
        .iter()
        .map(|(_, w)| rows_of(w, &idle_figures(w)))
        .collect();
    let n = all.first().map_or(0, Vec::len);
    for i in 0..n {
        let mut row = vec![Cell::text(all[0][i].0)];
        for r in &all {
            let (_, text, v) = &r[i];
            row.push(match v {
                Some(x) => Cell::num(text.clone(), *x),
                None => Cell::text(text.clone()),
            });
        }
        t.push_row(row);
    }
    t.note(format!(
        "near-identical: likeness to the frame before at or above the bar; pixels (share of the canvas unchanged, bar {PIXELS_BAR_PCT:.0} %) where the canvas can be read, else bytes (bar {BYTES_BAR_PCT:.0} %)"
    ));
    t
}

/// `watch --format json` (`docs/schema/watch.json`): the load's frames with its first
/// paint, whether it went quiet, and the idle window.
pub fn watch_json(url: &str, load: &[Receipt], load_went_quiet: bool, w: &IdleWindow) -> Value {
    arena_report::json::document(
        "watch",
        json!({
            "url": url,
            "burst_gap_ms": num(BURST_GAP_MS),
            "load": cold_json(load, BURST_GAP_MS),
            "load_went_quiet": load_went_quiet,
            "idle": window_json(url, w),
        }),
    )
}

/// The watch tables: the load and the window as a frame table, then the idle table.
pub fn watch_tables(url: &str, load: Vec<Receipt>, w: &IdleWindow) -> Vec<Table> {
    let src = FrameSource {
        name: url.to_string(),
        cold: Some(load),
        warm: w.frames.iter().map(|f| (f.t_ms, f.size as u64)).collect(),
        wire: None,
    };
    let mut frames = frames_table(&[src], BURST_GAP_MS);
    frames.note("for watch, warm is the idle window after the load's clear");
    vec![frames, idle_table(&[(url.to_string(), w)])]
}

/// One idle window as JSON (the `idle` of `docs/schema/watch.json`).
fn window_json(name: &str, w: &IdleWindow) -> Value {
    let f = idle_figures(w);
    json!({
        "name": name,
        "start_ms": num(w.start_ms),
        "end_ms": num(w.end_ms),
        "length_s": num(f.length_s),
        "requested_s": num(w.requested_s),
        "frames": f.frames,
        "bytes": f.bytes,
        "bytes_per_s": f.bytes_per_s.map(num),
        "median_gap_ms": f.median_gap_ms.map(num),
        "sizes": {"min_bytes": f.min, "p50_bytes": f.p50.map(num), "p90_bytes": f.p90.map(num), "max_bytes": f.max},
        "similarity": f.similarity,
        "bar_pct": num(f.bar_pct),
        "judged": f.judged,
        "near_identical": f.near_identical,
        "runs": f.runs,
        "longest_run": f.longest_run,
        "near_identical_median_pct": f.median_near_pct.map(num),
        "pixels_median_pct": f.pixels_median_pct.map(num),
        "bytes_median_pct": f.bytes_median_pct.map(num),
        "pixels_unavailable": w.pixels_unavailable,
        "bytes_unavailable": w.bytes_unavailable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(frames: Vec<IdleFrame>) -> IdleWindow {
        IdleWindow {
            requested_s: 5.0,
            start_ms: 1000.0,
            end_ms: 6000.0,
            similarity: "pixels".into(),
            frames,
            ..IdleWindow::default()
        }
    }

    fn frame(t_ms: f64, size: u32, pixels: f64) -> IdleFrame {
        IdleFrame {
            seq: t_ms as u64,
            t_ms,
            size,
            bytes_pct: None,
            pixels_pct: Some(pixels),
        }
    }

    #[test]
    fn a_blink_is_one_run_of_near_identical_frames() {
        let mut f: Vec<IdleFrame> = (0..10)
            .map(|k| frame(1250.0 + 500.0 * k as f64, 73, 99.99))
            .collect();
        f[4].pixels_pct = Some(60.0);
        let w = window(f);
        let s = idle_figures(&w);
        assert_eq!(
            (s.frames, s.bytes, s.near_identical, s.runs, s.longest_run),
            (10, 730, 9, 2, 5)
        );
        assert_eq!(s.median_gap_ms, Some(500.0));
        assert_eq!(s.bytes_per_s, Some(146.0));
    }

    #[test]
    fn a_silent_window_is_zero_frames_over_its_length_without_nan() {
        let w = window(Vec::new());
        let s = idle_figures(&w);
        assert_eq!(
            (s.frames, s.bytes, s.bytes_per_s, s.median_gap_ms),
            (0, 0, Some(0.0), None)
        );
        let md = idle_table(&[("quiet".into(), &w)]).render(arena_report::Format::Markdown);
        assert!(md.contains("| window | 5.0 s"), "{md}");
        assert!(md.contains("| rate | 0 B/s |"), "{md}");
        assert!(!md.contains("NaN") && !md.contains("inf"), "{md}");
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| ")).count(),
            11,
            "{md}"
        );
    }
}
