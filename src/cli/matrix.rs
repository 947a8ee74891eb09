//! `arena-perf matrix FILE.toml`: run every case x arm x repeat of a matrix file, print the
//! table the field notes print, and keep every run's files.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::Result;
use arena_matrix::spec::Stat;
use arena_matrix::table::{all_tables, render_tables, run_line};
use arena_matrix::{run_matrix, MatrixOptions, MatrixSpec};
use arena_report::Format;

use super::common::stdout::{closed_pipe, print};
use arena_report::progress::{Mode, Reporter};
use arena_report::ranges;
use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum StatArg {
    /// The best run of each cell (highest or lowest, by the file's `better`).
    Best,
    /// The median run of each cell.
    Median,
}

#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// Matrix file (TOML): cases, arms, repeats, timeout, baseline, figure, samplers.
    /// See docs/matrix.md.
    pub file: PathBuf,
    /// Run only this case or arm (repeatable); the baseline arm always runs.
    #[arg(long, value_name = "CASE|ARM")]
    pub only: Vec<String>,
    /// Repeats per cell, overriding the file (1 or more).
    #[arg(long, value_parser = ranges::positive_u32, allow_negative_numbers = true)]
    pub repeats: Option<u32>,
    /// What a cell shows of its repeats, overriding the file.
    #[arg(long, value_enum)]
    pub stat: Option<StatArg>,
    /// Changes under this percent read `~`, overriding the file (default 2; 0 to 100).
    #[arg(long, value_name = "PCT",
          value_parser = ranges::pct_0_100, allow_negative_numbers = true)]
    pub noise_pct: Option<f64>,
    /// Shuffle the order within each round with this seed, overriding the file.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Output folder (default reports/matrix-<UTC time>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also print every thread of every run.
    #[arg(long)]
    pub threads: bool,
    /// No per-run progress lines on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// Output format; `json` prints the document of docs/schema/matrix.json.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(a: MatrixArgs) -> Result<ExitCode> {
    let mut spec = arena_matrix::load(&a.file)?;
    apply_flags(&a, &mut spec)?;
    let out_dir = a.out.clone().unwrap_or_else(arena_matrix::default_out_dir);
    let interrupt = arena_sys::interrupt::shared();
    // Off a terminal the matrix stays silent: its table is the record.
    let reporter = Reporter::new(Mode::terminal_only(a.quiet));
    let opts = MatrixOptions {
        out_dir: out_dir.clone(),
    };
    let result = run_matrix(&spec, &opts, &interrupt, |r, i, n| {
        reporter.line(&format!("[{i}/{n}] {}", run_line(&spec, r)));
        reporter.step("matrix run", i as u64, n as u64);
    });
    reporter.done();
    let tables = all_tables(&result, a.threads);
    // The Markdown of every table lands next to the runs, whatever is printed.
    let md: Vec<String> = tables
        .iter()
        .map(|(_, t)| t.render(Format::Markdown))
        .collect();
    let _ = std::fs::write(out_dir.join("tables.md"), md.join("\n"));
    let text = match a.format {
        Format::Json => arena_report::json::to_text(&arena_matrix::matrix_json(&result)),
        f => render_tables(&tables, f),
    };
    // A closed pipe (`| head`) is not an error of the matrix; another failed write is
    // (exit 2), unless the matrix ended in an error of its own, which keeps its code.
    let printed = print(text);
    let end = result
        .ending(interrupt.load(Ordering::Relaxed), &out_dir)
        .map(|()| ExitCode::SUCCESS);
    match printed {
        Err(e) if end.is_ok() => Err(e),
        Err(e) if !closed_pipe(&e) => {
            eprintln!("arena-perf: {e:#}");
            end
        }
        _ => end,
    }
}

/// The command line's overrides of the matrix file.
fn apply_flags(a: &MatrixArgs, spec: &mut MatrixSpec) -> Result<()> {
    spec.restrict(&a.only)?;
    if let Some(r) = a.repeats {
        spec.repeats = r;
    }
    if let Some(s) = a.stat {
        spec.stat = match s {
            StatArg::Best => Stat::Best,
            StatArg::Median => Stat::Median,
        };
    }
    if let Some(p) = a.noise_pct {
        spec.noise_pct = p;
    }
    if a.seed.is_some() {
        spec.shuffle_seed = a.seed;
    }
    Ok(())
}
