//! `arena-perf matrix FILE.toml`: run every case x arm x repeat of a matrix file, print the
//! table the field notes print, and keep every run's files.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::Result;
use arena_matrix::flags::SpecFlags;
use arena_matrix::table::{all_tables, render_tables, run_line};
use arena_matrix::{run_matrix, MatrixOptions};
use arena_report::Format;

use super::common::stdout::{closed_pipe, print};
use arena_report::progress::{Mode, Reporter};
use clap::Args;

#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// Matrix file (TOML): cases, arms, repeats, timeout, baseline, figure, samplers.
    /// See docs/matrix.md.
    pub file: PathBuf,
    #[command(flatten)]
    pub spec: SpecFlags,
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
    a.spec.apply(&mut spec)?;
    let out_dir = a.out.clone().unwrap_or_else(arena_matrix::default_out_dir);
    arena_matrix::new_out_dir(&out_dir)?;
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
    let tables_md = out_dir.join("tables.md");
    if let Err(e) = std::fs::write(&tables_md, md.join("\n")) {
        eprintln!("arena-perf: writing {}: {e}", tables_md.display());
    }
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
