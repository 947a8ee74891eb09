//! `arena-perf compare`: per-arm and per-run tables over run folders, with deltas, intervals,
//! U-test p-values, `~` for noise, and warnings next to the figures.

use std::path::PathBuf;
use std::process::ExitCode;

use arena_compare::{compare, load_runs, Metric};
use arena_report::{Exit, Format};
use arena_run::Run;

use super::common::stdout::print;
use arena_report::ranges;
use arena_run::outputs::{refuse_overwrite, Output};

pub use arena_compare::options::{
    compare_options, parse_metrics, warn_comparison, ByArg, SplitArgs, StatsArgs,
};

/// The breakdowns `--split` asks for of `runs`, printed in `format`.
pub fn print_splits(split: &SplitArgs, runs: &[Run], format: Format) -> anyhow::Result<()> {
    split
        .rendered(runs, format)?
        .into_iter()
        .try_for_each(print)
}

/// `arena-perf plan`'s flags: the plan's own, and the stored runs it may read.
#[derive(Debug, clap::Args)]
pub struct PlanCmd {
    #[command(flatten)]
    pub plan: arena_compare::plan::PlanArgs,
    #[command(flatten)]
    pub history: arena_history::from_history::FromHistoryArgs,
}

/// `arena-perf plan`: the plan's table or document, of the run folders and stored runs.
pub fn plan(a: PlanCmd) -> anyhow::Result<ExitCode> {
    let folders = match a.plan.runs.is_empty() {
        true => Vec::new(),
        false => load_runs(&a.plan.runs)?,
    };
    let (runs, from_history) = a.history.with_arm(folders, a.plan.arm.as_deref())?;
    if let Some(note) = from_history {
        eprintln!("plan: {note}");
    }
    print(a.plan.render(runs)?)?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Run folders, or folders holding run folders (none with a history selection).
    #[arg(required_unless_present_any = ["history_branch", "ids"], value_name = "RUN_OR_DIR")]
    pub runs: Vec<PathBuf>,
    #[command(flatten)]
    pub history: arena_history::from_history::FromHistoryArgs,
    /// Arm (or column, e.g. "stock, run 2") the others are compared against; the first
    /// arm by default.
    #[arg(long, value_name = "ARM")]
    pub baseline: Option<String>,
    /// Columns per run or pooled per arm.
    #[arg(long, value_enum, default_value = "arm")]
    pub by: ByArg,
    /// Loop metric to show (repeatable): inputToSocket, sendToRecv, recvToDraw,
    /// inputToPaint. All four by default.
    #[arg(long = "metric", value_name = "M")]
    pub metrics: Vec<String>,
    /// Output format; `json` prints the document of docs/schema/compare.json.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also show each run's CPU by process and phase (runs made with the fixture or
    /// `--sample`); in JSON, as `cpu`, one entry a run.
    #[arg(long)]
    pub cpu: bool,
    /// Also write the latency plots (latency.svg, latency.png) into DIR; not into a run
    /// folder given (exit 2).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Instead of the comparison: each run's frame table (frames, total, p50/p90/p99
    /// frame, largest, the first-paint burst), cold (load + setup) and warm (after the
    /// clear) side by side, with wire figures when captured.
    #[arg(long)]
    pub frames: bool,
    /// With --frames: the gap, ms, that ends a first-paint burst (above 0).
    #[arg(long, value_name = "MS", default_value_t = arena_compare::frames::BURST_GAP_MS,
          value_parser = ranges::positive_f64, allow_negative_numbers = true)]
    pub burst_gap: f64,
    #[command(flatten)]
    pub stats: StatsArgs,
    #[command(flatten)]
    pub split: SplitArgs,
}

/// `compare --frames`: the frame table of every run given.
fn frames(a: &CompareArgs) -> anyhow::Result<ExitCode> {
    use arena_compare::frames::{frames_json, frames_table, run_sources};
    let sources = run_sources(&arena_compare::load_runs_with_events(&a.runs)?);
    print(match a.format {
        Format::Json => arena_report::json::to_text(&frames_json(&sources, a.burst_gap)),
        f => frames_table(&sources, a.burst_gap).render(f),
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The run folders `paths`, after the stored runs `history` selects (none given is
/// fine with a selection).
pub fn load_with_history(
    paths: &[PathBuf],
    history: &arena_history::from_history::FromHistoryArgs,
) -> anyhow::Result<(Vec<Run>, Option<String>)> {
    let folders = if paths.is_empty() && history.any() {
        Vec::new()
    } else {
        load_runs(paths)?
    };
    history.with(folders)
}

/// What `--plot DIR` writes into DIR.
const PLOTS: [&str; 2] = ["latency.svg", "latency.png"];

pub fn run(a: CompareArgs) -> anyhow::Result<ExitCode> {
    if a.frames {
        return frames(&a);
    }
    let opts = compare_options(a.by, a.baseline, &a.metrics, &a.stats, &a.split)?;
    let metrics = opts.metrics.clone();
    if let Some(dir) = &a.plot {
        let plots = PLOTS.map(|name| dir.join(name));
        let outputs = plots.each_ref().map(|p| Output::file("--plot", p));
        let db = arena_history::db_file(a.history.db.as_deref());
        let inputs = a.runs.iter().map(|p| p.as_path()).chain(db.as_deref());
        refuse_overwrite(inputs, &outputs)?;
    }
    let (runs, from_history) = load_with_history(&a.runs, &a.history)?;
    let mixed = a.stats.refuse_mixed("compare", &runs)?;
    let mut cmp = compare(&runs, &opts)?;
    warn_comparison(&mixed, &mut cmp);
    if let Some(note) = from_history {
        cmp.table.note(note);
    }
    if a.format == Format::Json {
        let v = arena_compare::comparison_cpu_json(&cmp, a.cpu.then_some(runs.as_slice()));
        print(format!("{}\n", serde_json::to_string_pretty(&v)?))?;
    } else {
        print(cmp.table.render(a.format))?;
        for b in &cmp.breakdowns {
            print(format!("\n{}", b.table.render(a.format)))?;
        }
        super::common::stdout::print_gestures(Some(&cmp), a.format)?;
        if a.cpu {
            super::common::stdout::print_cpu(&runs, a.format)?;
        }
    }
    if let Some(dir) = a.plot {
        std::fs::create_dir_all(&dir)
            .map_err(|e| Exit::bad_input(format!("{}: {e}", dir.display())))?;
        let metric = metrics.first().copied().unwrap_or(Metric::InputToPaint);
        for name in PLOTS {
            let out = dir.join(name);
            arena_compare::plot::plot(&runs, metric, &out)?;
            eprintln!("wrote {}", out.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
