//! Plots of runs, SVG or PNG by the output's extension: the latency CDF per arm (log x)
//! above a per-click timeline (latency against click index, log y, cold clicks marked
//! with a cross), so a warm-up cliff or a drift is seen at a glance.

use std::path::Path;
use std::sync::OnceLock;

use anyhow::{anyhow, Result};
use arena_report::Exit;
use arena_run::{Metric, Run};
use plotters::coord::Shift;
use plotters::prelude::*;
use serde::Serialize;

use crate::group::{digest, groups, By, Group};

/// Series colours (Tableau 10): one per arm, in order of first appearance.
pub const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (0, 95, 115),
    (188, 189, 34),
    (23, 190, 207),
];

/// Most points a series is drawn with; larger sets are thinned evenly (quantiles for the
/// CDF, a stride for the timeline) so a million-loop plot stays a readable file.
const MAX_POINTS: usize = 2000;

#[derive(Debug, Clone, Serialize)]
pub struct PlotInfo {
    /// One series per arm.
    pub series: usize,
    pub arms: Vec<String>,
    /// Warm and cold points drawn on the timeline.
    pub timeline_points: usize,
    pub cold_points: usize,
}

fn color(i: usize) -> RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

/// The font text is measured and drawn with: `$ARENA_PERF_FONT`, else a common system
/// sans-serif TrueType file.
pub(crate) fn ensure_font() -> Result<()> {
    static FONT: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        let mut candidates: Vec<String> = Vec::new();
        if let Ok(p) = std::env::var("ARENA_PERF_FONT") {
            candidates.push(p);
        }
        candidates.extend(
            [
                "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
                "/usr/share/fonts/TTF/DejaVuSans.ttf",
                "/usr/share/fonts/dejavu/DejaVuSans.ttf",
                "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
                "/usr/share/fonts/liberation/LiberationSans-Regular.ttf",
                "/Library/Fonts/Arial.ttf",
                "/System/Library/Fonts/Supplemental/Arial.ttf",
            ]
            .map(String::from),
        );
        for p in &candidates {
            if let Ok(bytes) = std::fs::read(p) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
                {
                    return Ok(());
                }
            }
        }
        Err(format!(
            "no TrueType font for plot labels (looked at {}); install fonts-dejavu-core or set ARENA_PERF_FONT to a .ttf file",
            candidates.join(", ")
        ))
    })
    .clone()
    .map_err(|m| anyhow!(m))
}

/// Writes the plot of `metric` over `runs` to `out` (`.svg` or `.png`).
pub fn plot(runs: &[Run], metric: Metric, out: &Path) -> Result<PlotInfo> {
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let size = (1100u32, 1000u32);
    match ext.as_deref() {
        Some("svg") => {
            ensure_font()?;
            let root = SVGBackend::new(out, size).into_drawing_area();
            draw(&root, runs, metric)
                .map_err(|e| anyhow!("{}: drawing the plot: {e}", out.display()))
        }
        Some("png") => {
            ensure_font()?;
            let root = BitMapBackend::new(out, size).into_drawing_area();
            draw(&root, runs, metric)
                .map_err(|e| anyhow!("{}: drawing the plot: {e}", out.display()))
        }
        _ => Err(Exit::bad_input(format!(
            "{}: the plot's format comes from the extension: .svg or .png",
            out.display()
        ))
        .into()),
    }
}

/// (click index, latency) pairs.
type Points = Vec<(f64, f64)>;

type DrawResult<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn thin_cdf(sorted: &[f64]) -> Vec<(f64, f64)> {
    let n = sorted.len();
    if n <= MAX_POINTS {
        return sorted
            .iter()
            .enumerate()
            .map(|(i, &v)| (v, (i + 1) as f64 / n as f64))
            .collect();
    }
    (0..MAX_POINTS)
        .map(|k| {
            let i = ((k as f64 + 1.0) / MAX_POINTS as f64 * n as f64).ceil() as usize - 1;
            let i = i.min(n - 1);
            (sorted[i], (i + 1) as f64 / n as f64)
        })
        .collect()
}

fn fmt_tick(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// 1-2-5 ticks inside [lo, hi]: a log axis labelled only at powers of ten says nothing
/// about a range of 40 to 160 ms.
fn ticks_125(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut decade = 10f64.powf(lo.max(1e-3).log10().floor());
    while decade <= hi && out.len() < 40 {
        for m in [1.0, 2.0, 5.0] {
            let t = decade * m;
            if t >= lo && t <= hi {
                out.push(t);
            }
        }
        decade *= 10.0;
    }
    out
}

// Latencies are drawn on log axes; a zero or negative reading is clamped to 0.01 ms.
fn floor(v: f64) -> f64 {
    v.max(0.01)
}

/// The axis range of some values, with a margin; 1-10 ms when there are none.
fn span(vals: &mut dyn Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    if lo.is_finite() {
        (lo * 0.9, (hi * 1.1).max(lo * 1.5))
    } else {
        (1.0, 10.0)
    }
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    runs: &[Run],
    metric: Metric,
) -> DrawResult<PlotInfo>
where
    DB::ErrorType: 'static,
{
    let data = digest(runs, false);
    let arms = groups(&data, By::Arm);
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(500);
    let warm: Vec<Vec<f64>> = arms
        .iter()
        .map(|g| g.values(metric).into_iter().map(floor).collect())
        .collect();
    draw_cdf(&top, &arms, &warm, metric.name())?;
    let timeline: Vec<(Points, Points)> = arms.iter().map(|g| timeline_of(g, metric)).collect();
    let (points, cold_points) = draw_timeline(&bottom, &arms, &timeline, metric.name())?;
    root.present()?;
    Ok(PlotInfo {
        series: arms.len(),
        arms: arms.iter().map(|g| g.name.clone()).collect(),
        timeline_points: points,
        cold_points,
    })
}

/// An arm's (click index, value) points, warm (thinned to MAX_POINTS) and cold.
fn timeline_of(g: &Group<'_>, metric: Metric) -> (Points, Points) {
    let mut warm_pts = Vec::new();
    let mut cold_pts = Vec::new();
    for r in &g.runs {
        for l in &r.run.loops {
            if let Some(v) = metric.of(l).filter(|v| !v.is_nan()) {
                let p = (l.index as f64, floor(v));
                if l.cold {
                    cold_pts.push(p);
                } else {
                    warm_pts.push(p);
                }
            }
        }
    }
    let stride = warm_pts.len().div_ceil(MAX_POINTS).max(1);
    let warm_pts = warm_pts.into_iter().step_by(stride).collect();
    (warm_pts, cold_pts)
}

/// The CDF spans warm loops only; the timeline also shows the cold ones.
fn draw_cdf<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    arms: &[Group<'_>],
    warm: &[Vec<f64>],
    name: &str,
) -> DrawResult<()>
where
    DB::ErrorType: 'static,
{
    let (cdf_lo, cdf_hi) = span(&mut warm.iter().flatten().copied());
    let mut cdf = ChartBuilder::on(area)
        .caption(
            format!("{name}: CDF of warm answered loops per arm (log x)"),
            ("sans-serif", 22),
        )
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (cdf_lo..cdf_hi)
                .log_scale()
                .with_key_points(ticks_125(cdf_lo, cdf_hi)),
            0f64..1f64,
        )?;
    cdf.configure_mesh()
        .x_label_formatter(&|v| fmt_tick(*v))
        .x_desc(format!("{name}, ms"))
        .y_desc("fraction of loops")
        .draw()?;
    for (i, (g, v)) in arms.iter().zip(warm).enumerate() {
        let c = color(i);
        cdf.draw_series(LineSeries::new(thin_cdf(v), c.stroke_width(2)))?
            .label(format!("{} (n={})", g.name, v.len()))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    cdf.configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .draw()?;
    Ok(())
}

/// Every loop by click index, cold ones as crosses; returns (points, cold points) drawn.
fn draw_timeline<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    arms: &[Group<'_>],
    timeline: &[(Points, Points)],
    name: &str,
) -> DrawResult<(usize, usize)>
where
    DB::ErrorType: 'static,
{
    let all = || timeline.iter().flat_map(|(w, c)| w.iter().chain(c));
    let (lo, hi) = span(&mut all().map(|p| p.1));
    let max_index = all().map(|p| p.0).fold(1.0f64, f64::max);
    let mut tl = ChartBuilder::on(area)
        .caption(
            format!("{name} per click (x = cold: first interaction of a page)"),
            ("sans-serif", 22),
        )
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(
            -0.5f64..max_index + 0.5,
            (lo..hi).log_scale().with_key_points(ticks_125(lo, hi)),
        )?;
    tl.configure_mesh()
        .x_label_formatter(&|v| fmt_tick(*v))
        .y_label_formatter(&|v| fmt_tick(*v))
        .x_desc("click index in its run")
        .y_desc(format!("{name}, ms (log)"))
        .draw()?;
    let (mut points, mut cold_points) = (0, 0);
    for (i, (g, (w, c))) in arms.iter().zip(timeline).enumerate() {
        let col = color(i);
        points += w.len() + c.len();
        cold_points += c.len();
        tl.draw_series(w.iter().map(|&p| Circle::new(p, 2, col.filled())))?
            .label(g.name.clone())
            .legend(move |(x, y)| Circle::new((x + 10, y), 3, col.filled()));
        tl.draw_series(c.iter().map(|&p| Cross::new(p, 7, col.stroke_width(2))))?;
    }
    tl.draw_series(std::iter::empty::<Cross<(f64, f64), i32>>())?
        .label("cold (first interaction)")
        .legend(|(x, y)| Cross::new((x + 10, y), 5, BLACK.stroke_width(2)));
    tl.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .draw()?;
    Ok((points, cold_points))
}
