//! `arena-perf plot`: latency CDF per arm and the per-click timeline, SVG or PNG.

use std::path::PathBuf;
use std::process::ExitCode;

use arena_compare::{load_runs, Metric};

use super::common::stdout::print;
use super::compare::parse_metrics;
use arena_run::outputs::{refuse_overwrite, Output};

#[derive(Debug, clap::Args)]
pub struct PlotArgs {
    /// Run folders, or folders holding run folders.
    #[arg(required = true, value_name = "RUN_OR_DIR")]
    pub runs: Vec<PathBuf>,
    /// Output file; `.svg` or `.png` chooses the format. It may not lie inside a run folder
    /// given (exit 2).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Loop metric plotted.
    #[arg(long, default_value = "inputToPaint", value_name = "M")]
    pub metric: String,
}

pub fn run(a: PlotArgs) -> anyhow::Result<ExitCode> {
    let metric = parse_metrics(std::slice::from_ref(&a.metric))?
        .first()
        .copied()
        .unwrap_or(Metric::InputToPaint);
    let db = arena_history::db_file(None);
    refuse_overwrite(
        a.runs.iter().map(|p| p.as_path()).chain(db.as_deref()),
        &[Output::file("--out", &a.out)],
    )?;
    let runs = load_runs(&a.runs)?;
    let info = arena_compare::plot::plot(&runs, metric, &a.out)?;
    print(format!(
        "wrote {}: {} of {} arms ({}), {} clicks on the timeline, {} cold\n",
        a.out.display(),
        metric.name(),
        info.series,
        info.arms.join(", "),
        info.timeline_points,
        info.cold_points
    ))?;
    Ok(ExitCode::SUCCESS)
}
