//! `arena-perf ab`: arms interleaved (A B A B ...), every run folder written, then the
//! comparison.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use arena_compare::{by_run_table, compare, By, CompareOptions};
use arena_report::Format;
use arena_run::Run;
use clap::Args as ClapArgs;

use super::pilot::RunArgs;
use arena_pilot::ab::{run_ab, AbOutcome, AbRequest};
use arena_pilot::drive::Cancel;
use arena_pilot::scenario::Pilot;

/// Run arms interleaved, each run in a fresh page and a fresh target session, and compare.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Pilot file (TOML, see docs/pilot-file.md); default: the built-in fixture pilot.
    #[arg(long, value_name = "FILE")]
    pub pilot: Option<PathBuf>,
    /// Arms to run, comma-separated; the first is the baseline.
    #[arg(
        long,
        value_name = "A,B[,C...]",
        value_delimiter = ',',
        required = true
    )]
    pub arms: Vec<String>,
    /// Rounds: each round runs every arm once, in the order given.
    #[arg(long, value_name = "R", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Page to drive instead of the pilot file's target (no fixture is started).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Folder the run folders are written under.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub out: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub run: RunArgs,
}

/// Runs the A/B and returns what was made (shared with `demo`).
pub fn execute(
    pilot: &Pilot,
    arms: Vec<String>,
    rounds: u32,
    url: Option<String>,
    out: PathBuf,
    run: &RunArgs,
) -> Result<AbOutcome> {
    let overrides = run.overrides(url)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let cancel = Cancel::new();
        cancel.on_signals()?;
        run_ab(AbRequest {
            pilot,
            arms,
            rounds,
            overrides,
            out_base: out,
            browser: run.browser(),
            progress: !run.quiet,
            cancel,
        })
        .await
    })
}

/// Prints the folders on stderr and returns the runs made.
pub fn report_folders(outcome: &AbOutcome) -> Vec<Run> {
    for o in &outcome.outcomes {
        eprintln!("run folder: {}", o.dir.display());
    }
    outcome.outcomes.iter().map(|o| o.run.clone()).collect()
}

pub fn run(args: Args) -> Result<ExitCode> {
    let pilot = Pilot::load_or_builtin(args.pilot.as_ref())?;
    let outcome = execute(
        &pilot,
        args.arms.clone(),
        args.rounds,
        args.url.clone(),
        args.out.clone(),
        &args.run,
    )?;
    let runs = report_folders(&outcome);
    if !runs.is_empty() {
        print!("{}", by_run_table(&runs).render(args.format));
        // Pooled per arm against the first arm: deltas, intervals, `~` for noise.
        let opts = CompareOptions {
            by: By::Arm,
            baseline: args.arms.first().cloned(),
            ..CompareOptions::default()
        };
        let cmp = compare(&runs, &opts)?;
        println!();
        print!("{}", cmp.table.render(args.format));
    }
    match outcome.error {
        Some(e) => Err(e),
        None => Ok(ExitCode::SUCCESS),
    }
}
