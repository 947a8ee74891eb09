//! A figure per run over a series of runs, with its intervals and its steps marked: the
//! trend plot `report --history` adds (the series is `arena_history::trend`'s). Drawn with
//! plotters like `plot`, as SVG text the report embeds.

use anyhow::{anyhow, Result};
use plotters::prelude::*;

/// One run of the series: its figure and interval, ms (`None` when it has none, or one
/// past the answer window).
#[derive(Debug, Clone)]
pub struct TrendPoint {
    pub estimate: Option<f64>,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

/// A step: the new level starts at point `at` (0-based); `label` says its size.
#[derive(Debug, Clone)]
pub struct TrendMark {
    pub at: usize,
    pub label: String,
}

/// The series to draw.
#[derive(Debug, Clone)]
pub struct TrendSeries {
    /// What each point is, e.g. `inputToPaint.p50, ms`.
    pub title: String,
    pub points: Vec<TrendPoint>,
    pub steps: Vec<TrendMark>,
}

/// The series as an SVG document, 1000 x 420 px: points with their intervals against the
/// run's position (1-based), a dashed red line where each step starts, labelled.
pub fn trend_svg(series: &TrendSeries) -> Result<String> {
    crate::plot::ensure_font()?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 420)).into_drawing_area();
        draw(&root, series).map_err(|e| anyhow!("drawing the trend plot: {e}"))?;
        root.present()
            .map_err(|e| anyhow!("drawing the trend plot: {e}"))?;
    }
    Ok(svg)
}

type DrawResult = std::result::Result<(), Box<dyn std::error::Error>>;

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    s: &TrendSeries,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let finite = |v: Option<f64>| v.filter(|x| x.is_finite());
    let ys: Vec<f64> = s
        .points
        .iter()
        .flat_map(|p| [finite(p.lo), finite(p.estimate), finite(p.hi)])
        .flatten()
        .collect();
    let top = ys.iter().copied().fold(1.0f64, f64::max) * 1.1;
    let n = s.points.len().max(1) as f64;
    let mut chart = ChartBuilder::on(root)
        .caption(&s.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(0.5f64..n + 0.5, 0f64..top)?;
    chart
        .configure_mesh()
        .x_desc("run (in the order added)")
        .y_desc("ms")
        .draw()?;
    let at = |i: usize| (i + 1) as f64;
    chart.draw_series(s.points.iter().enumerate().filter_map(|(i, p)| {
        let (lo, hi) = (finite(p.lo)?, finite(p.hi)?);
        Some(PathElement::new(
            vec![(at(i), lo), (at(i), hi)],
            BLUE.mix(0.4),
        ))
    }))?;
    chart.draw_series(
        s.points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some(Circle::new((at(i), finite(p.estimate)?), 3, BLUE.filled()))),
    )?;
    for m in &s.steps {
        // The line sits between the last run of the old level and the first of the new.
        let x = at(m.at) - 0.5;
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x, 0.0), (x, top)],
                6,
                4,
                RED.stroke_width(2),
            ))?
            .label(m.label.clone())
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], RED));
    }
    if !s.steps.is_empty() {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_svg_marks_each_step_and_draws_a_point_per_run() {
        let points = (0..10)
            .map(|i| {
                let v = if i < 6 { 10.0 } else { 50.0 };
                TrendPoint {
                    estimate: Some(v),
                    lo: Some(v - 2.0),
                    hi: Some(v + 2.0),
                }
            })
            .collect();
        let series = TrendSeries {
            title: "inputToPaint.p50, ms".into(),
            points,
            steps: vec![TrendMark {
                at: 6,
                label: "step at #7: +40.0 ms".into(),
            }],
        };
        let svg = trend_svg(&series).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
        assert!(svg.contains("step at #7: +40.0 ms"));
        assert_eq!(svg.matches("<circle").count(), 10, "one point a run");
        assert!(
            svg.contains("stroke=\"#FF0000\""),
            "the step's line is drawn"
        );
    }
}
