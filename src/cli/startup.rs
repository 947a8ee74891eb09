//! `arena-perf startup`: cold starts, arms interleaved, each round a fresh browser profile
//! and a fresh target; a table per milestone with every round and the median.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use arena_compare::{startup_json, startup_tables, StartupSetup};
use arena_pilot::{
    block_on, run_startup, BoardRule, Overrides, Pilot, Plan, StartupOptions, StartupRequest,
};
use arena_report::Format;
use clap::Args as ClapArgs;

use super::common::stdout::print;
use arena_report::progress::{Mode, Reporter};
use arena_report::ranges;

/// Measure cold starts: from navigation to socket open, first frame, first bytes and the
/// board on screen, each round in a fresh browser profile against a fresh target.
#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub arms: super::args::ArmsArgs,
    /// Rounds: each round starts every arm cold once, in the order given.
    #[arg(long, value_name = "R", default_value_t = 3,
          value_parser = ranges::positive_u32, allow_negative_numbers = true)]
    pub rounds: u32,
    /// Page to open instead of the pilot file's target (no fixture is started).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// What marks the board on screen: `region=X,Y,W,H` (CSS px of the pilot's canvas: the
    /// first frame where those pixels are not all alike) or `bytes=N` (the first painted
    /// frame after N payload bytes were received).
    #[arg(long, value_name = "RULE", default_value = "region=0,0,200,200", value_parser = BoardRule::parse)]
    pub board: BoardRule,
    /// The first-bytes milestone: received payload bytes reach N.
    #[arg(long, value_name = "N", default_value_t = 65_536,
          value_parser = ranges::positive_u64, allow_negative_numbers = true)]
    pub first_bytes: u64,
    /// How long a round waits for its milestones, ms; one not reached by then is counted
    /// "not reached".
    #[arg(long, value_name = "MS", default_value_t = 60_000,
          value_parser = ranges::ms_1_day, allow_negative_numbers = true)]
    pub timeout: u64,
    /// Extra fixture knob for every arm, on top of the arm's (repeatable).
    #[arg(long = "knob", value_name = "NAME=VALUE")]
    pub knobs: Vec<String>,
    /// Sample a process's CPU beside each round (repeatable; as `pilot --sample`): a PID
    /// or a NAME. The in-process fixture's threads and Chromium are sampled anyway.
    #[arg(long, value_name = "PID|NAME")]
    pub sample: Vec<String>,
    /// A shaped link between the browser and the target (as `pilot --link`).
    #[arg(long, value_name = "SPEC", value_parser = arena_link::LinkSpec::parse)]
    pub link: Option<arena_link::LinkSpec>,
    #[command(flatten)]
    pub chromium: super::args::BrowserArgs,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let pilot = Pilot::load_or_builtin(args.arms.pilot.as_ref())?;
    let knobs = Overrides::parse_knobs(&args.knobs)?;
    let overrides = Overrides {
        url: args.url.clone(),
        knobs,
        link: args.link,
        sample: args.sample.clone(),
        ..Overrides::default()
    };
    let plans = Plan::for_arms(&pilot, &args.arms.names, &overrides)?;
    let options = StartupOptions {
        first_bytes: args.first_bytes,
        board: args.board.clone(),
        timeout: Duration::from_millis(args.timeout),
    };
    let canvas = pilot.target.canvas.clone();
    let setup = StartupSetup {
        first_bytes: args.first_bytes,
        board: args.board.describe(&canvas),
        board_json: args.board.to_json(&canvas),
        timeout_ms: args.timeout,
        link: plans.iter().find_map(|p| p.link.map(|l| l.to_string())),
    };
    let reporter = Reporter::new(Mode::detect(args.chromium.quiet));
    let show = |p: arena_pilot::Progress<'_>| reporter.show(p.shown());
    let browser = args.chromium.options();
    let outcome = block_on(|cancel| async move {
        run_startup(StartupRequest {
            plans,
            rounds: args.rounds,
            options,
            browser,
            progress: &show,
            cancel: &cancel,
        })
        .await
    })?;
    // What was measured is printed whatever ended the rounds.
    if args.format == Format::Json {
        let doc = startup_json(&outcome.rounds, &args.arms.names, &setup);
        print(arena_report::json::to_text(&doc))?;
    } else if !outcome.rounds.is_empty() {
        for t in startup_tables(&outcome.rounds, &args.arms.names, &setup) {
            print(format!("{}\n", t.render(args.format)))?;
        }
        let named: Vec<_> = outcome
            .rounds
            .iter()
            .map(|r| (format!("{}, round {}", r.arm, r.round), r.cpu.as_ref()))
            .collect();
        if let Some(t) = arena_compare::cpu_table(&named) {
            print(t.render(args.format))?;
        }
    }
    match outcome.error {
        Some(e) => Err(e),
        None => Ok(ExitCode::SUCCESS),
    }
}
