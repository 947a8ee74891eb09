//! `arena-perf matrix FILE.toml`: run every case x arm x repeat of a matrix file, print the
//! table the field notes print, and keep every run's files.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::Result;
use arena_matrix::spec::Stat;
use arena_matrix::table::{cpu_table, fmt_figure, matrix_table, phases_table, threads_table};
use arena_matrix::{run_matrix, MatrixOptions, MatrixResult, MatrixSpec, RunResult, RunStatus};
use arena_report::{Exit, ExitKind, Format, Table};

use super::common::progress::{Mode, Reporter};
use super::common::ranges;
use super::common::stdout::{closed_pipe, print};
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
    let reporter = Reporter::new(match std::io::stderr().is_terminal() {
        true => Mode::detect(a.quiet),
        false => Mode::Quiet,
    });
    let opts = MatrixOptions {
        out_dir: out_dir.clone(),
    };
    let result = run_matrix(&spec, &opts, &interrupt, |r, i, n| {
        reporter.line(&format!("[{i}/{n}] {}", run_line(&spec, r)));
        reporter.step("matrix run", i as u64, n as u64);
    });
    reporter.done();
    let tables = tables(&a, &result);
    // The Markdown of every table lands next to the runs, whatever is printed.
    let md: Vec<String> = tables
        .iter()
        .map(|(_, t)| t.render(Format::Markdown))
        .collect();
    let _ = std::fs::write(out_dir.join("tables.md"), md.join("\n"));
    let text = match a.format {
        Format::Json => arena_report::json::to_text(&arena_matrix::matrix_json(&result)),
        f => render(&tables, f),
    };
    // A closed pipe (`| head`) is not an error of the matrix; another failed write is
    // (exit 2), unless the matrix ended in an error of its own, which keeps its code.
    let printed = print(text);
    let end = ending(&result, interrupt.load(Ordering::Relaxed), &out_dir);
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

/// One finished run, as its progress line says it.
fn run_line(spec: &MatrixSpec, r: &RunResult) -> String {
    let what = match (&r.status, &r.figure) {
        (RunStatus::Ok, Some(f)) => format!("{} {}", fmt_figure(f.value), spec.unit),
        (s, _) => s.short(),
    };
    format!(
        "{} x {} {}{}: {what} ({:.1} s)",
        spec.cases[r.case].name,
        spec.arms[r.arm].name,
        if r.warmup { "warm-up " } else { "r" },
        r.repeat + 1,
        r.wall_s
    )
}

fn tables(a: &MatrixArgs, result: &MatrixResult) -> Vec<(&'static str, Table)> {
    let mut tables = vec![("matrix", matrix_table(result)), ("cpu", cpu_table(result))];
    if let Some(p) = phases_table(result) {
        tables.push(("phases", p));
    }
    if a.threads {
        tables.push(("threads", threads_table(result)));
    }
    tables
}

fn render(tables: &[(&str, Table)], format: Format) -> String {
    match format {
        // CSV is one table: the matrix (the others are in tables.md and the run folders).
        Format::Csv => tables[0].1.render(Format::Csv),
        f => {
            let parts: Vec<String> = tables.iter().map(|(_, t)| t.render(f)).collect();
            parts.join("\n")
        }
    }
}

/// Exit 130 when interrupted, 3 when no run gave a figure.
fn ending(result: &MatrixResult, interrupted: bool, out_dir: &std::path::Path) -> Result<ExitCode> {
    if result.interrupted || interrupted {
        return Err(Exit::new(
            ExitKind::Interrupted,
            format!(
                "interrupted: {} of {} runs finished, written to {}",
                result.runs.len(),
                result.planned_runs,
                out_dir.display()
            ),
        )
        .into());
    }
    let measured: Vec<_> = result.runs.iter().filter(|r| !r.warmup).collect();
    if !measured.is_empty() && measured.iter().all(|r| r.figure.is_none()) {
        return Err(Exit::new(
            ExitKind::TargetFailed,
            format!(
                "no run gave a figure; see stderr.tail in the run folders under {}",
                out_dir.display()
            ),
        )
        .into());
    }
    Ok(ExitCode::SUCCESS)
}
