//! `arena-perf pilot`: one run of one arm, its table on stdout, its run folder on disk.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use arena_compare::{arm_json, arm_table};
use arena_pilot::{block_on, run_one, OutDir, Plan, RunRequest};
use arena_report::Format;
use clap::Args as ClapArgs;

use super::args::{RunArgs, TargetArgs};
use super::common::stdout::print;
use super::common::to_history::{self, ToHistoryArgs};
use arena_report::progress::{Mode, Reporter};

/// Drive the target with trusted clicks and measure each click's loop on the page's clock.
#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub target: TargetArgs,
    /// The run folder to write (default: reports/<UTC start>-<arm>). A folder that already
    /// holds a run (run.json, loops.csv or events.jsonl) is refused (exit 2) unless
    /// `--force`.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// With `--out DIR` onto an existing run: replace the whole folder, so none of the old
    /// run's files (wire.pcap, trace.json, ...) stay beside the new. The run is written
    /// into a hidden sibling (.DIR.tmp-<pid>) and swapped in only once written, so a crash
    /// leaves the old run or the new one, never a mix.
    #[arg(long, requires = "out")]
    pub force: bool,
    /// Output format; `json` prints the document of docs/schema/pilot.json.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub history: ToHistoryArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let (out, replacing) = OutDir::for_flag(
        args.out.as_deref(),
        args.force,
        args.target.pilot.as_deref(),
    )?;
    let pilot = arena_pilot::Pilot::load_or_builtin(args.target.pilot.as_ref())?;
    let overrides = args.run.overrides(args.target.url.clone())?;
    let plan = Plan::for_arm(&pilot, args.target.arm.as_deref(), &overrides)?;
    let sink = args.history.start()?;
    let reporter = Reporter::new(Mode::detect(args.run.chromium.quiet));
    let show = |p: arena_pilot::Progress<'_>| reporter.show(p.shown());
    let split = args.run.split.clone();
    let outcome = block_on(|cancel| async move {
        let req = RunRequest {
            plan: &plan,
            out,
            progress: &show,
            cancel: &cancel,
        };
        run_one(&args.run.browser(), req).await
    });
    // A written run (partial ones too) replaces the old; a run that wrote none leaves it.
    let outcome = match (outcome, replacing) {
        (Ok(mut o), Some(r)) => {
            o.dir = r.commit()?;
            o
        }
        (Err(e), Some(r)) => {
            r.abandon();
            return Err(e);
        }
        (res, None) => res?,
    };
    let exit_error = outcome.exit_error();
    to_history::written(sink.as_ref(), &outcome.dir, exit_error.is_none());
    if args.format == Format::Json {
        let v = arm_json(&outcome.run, Some(&outcome.dir));
        print(arena_report::json::to_text(&v))?;
    } else {
        print(arm_table(&outcome.run).render(args.format))?;
        if let Some(t) = arena_compare::typing_table(&outcome.run) {
            print(format!("\n{}", t.render(args.format)))?;
        }
        if args.format != Format::Csv {
            for t in arena_compare::run_view::run_tables(&outcome.run) {
                print(format!("\n{}", t.render(args.format)))?;
            }
            if !outcome.gestures.is_empty() {
                let t = arena_pilot::moves_out::gesture_table(&outcome.gestures);
                print(format!("\n{}", t.render(args.format)))?;
            }
        }
    }
    super::compare::print_splits(&split, std::slice::from_ref(&outcome.run), args.format)?;
    super::common::stdout::print_cpu(std::slice::from_ref(&outcome.run), args.format)?;
    if let Some(line) = outcome
        .run
        .meta
        .trace
        .as_ref()
        .and_then(|t| t.presented_line())
    {
        eprintln!("{line}");
    }
    eprintln!("run folder: {}", outcome.dir.display());
    let added = to_history::finish(sink);
    match exit_error {
        Some(e) => Err(e),
        None => added.map(|()| ExitCode::SUCCESS),
    }
}
