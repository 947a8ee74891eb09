//! `arena-perf verify`: each kind of loop proven caused by its input, on the user's own
//! app: the same plan direct and through a link with added round trip, interleaved, and
//! every kind's lower decile and median held against the delay injected, each with an
//! interval over the runs.

use std::process::ExitCode;

use anyhow::{anyhow, Result};
use arena_pilot::verify::{self, verify_outcome, verify_plans, VerifyEnd, VerifyRule, ALPHA};
use arena_pilot::Plan;
use arena_report::{Exit, ExitKind, Format};
use clap::Args as ClapArgs;

use super::args::{RunArgs, TargetArgs};
use super::common::stdout::print;
use arena_report::ranges;

/// Clicks per run when `--clicks` is not given: 2 rounds give about 58 warm loops of each
/// kind a side, enough for a median to within a millisecond or two on a quiet machine.
const DEFAULT_CLICKS: u64 = 30;

/// `verify`'s flags (its help is the subcommand's, in `cli/mod.rs`).
#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Round trip the link adds on the delayed side, ms.
    #[arg(long, value_name = "MS", default_value_t = 30.0,
          value_parser = arena_pilot::ranges::rtt_ms, allow_negative_numbers = true)]
    pub rtt: f64,
    /// How far a quantile's shift may lie from `--rtt` and still be the delay, ms: what a
    /// frame clock and the link's pacing blur. The noise is the intervals'.
    #[arg(long, value_name = "MS", default_value_t = 3.0,
          value_parser = ranges::positive_f64, allow_negative_numbers = true)]
    pub tolerance: f64,
    #[command(flatten)]
    pub series: super::args::SeriesArgs,
    /// After --rounds rounds, add a round at a time until no kind's lower decile is
    /// unknown, or --budget is spent. Each look spends alpha / (the looks the budget
    /// allows), so looking again never raises the false-alarm rate past alpha.
    #[arg(long)]
    pub until_decided: bool,
    /// What --until-decided may spend: a number of rounds (`8`, the default) or a time
    /// (`3m`, `90s`).
    #[arg(long, value_name = "ROUNDS|TIME", value_parser = arena_pilot::sequence::parse_budget,
          requires = "until_decided", allow_negative_numbers = true)]
    pub budget: Option<arena_pilot::Budget>,
    #[command(flatten)]
    pub run: RunArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    if args.run.link.is_some() {
        return Err(anyhow!(Exit::bad_input(
            "--link: verify makes its own link (--rtt); run it on a direct target"
        )));
    }
    if args.tolerance >= args.rtt / 2.0 {
        return Err(anyhow!(Exit::bad_input(format!(
            "--tolerance: {} ms is not below half of --rtt ({} ms): a kind that did not move could pass",
            args.tolerance, args.rtt
        ))));
    }
    let pilot = arena_pilot::Pilot::load_or_builtin(args.target.pilot.as_ref())?;
    let mut overrides = args.run.overrides(args.target.url.clone())?;
    overrides.clicks = Some(overrides.clicks.unwrap_or(DEFAULT_CLICKS));
    let plan = Plan::for_arm(&pilot, args.target.arm.as_deref(), &overrides)?;
    let rule = VerifyRule {
        injected_ms: args.rtt,
        tolerance_ms: args.tolerance,
        alpha: ALPHA,
    };
    let plans = verify_plans(plan, rule)?;
    let look = |o: &[arena_pilot::Outcome], looks: u32| verify::look(o, looks, rule);
    let sequence = arena_pilot::sequence::SequenceArgs {
        until_decided: args.until_decided,
        budget: args.budget,
    };
    let outcome = super::args::run_plans(
        &args.run,
        plans,
        (args.series.rounds_or(2), sequence.sequential(&look)),
        args.series.out.clone(),
        None,
    )?;
    if let Some(e) = outcome.error {
        return Err(e);
    }
    let report = verify_outcome(&outcome, rule.at_looks(outcome.looks));
    if args.series.format == Format::Json {
        let body = serde_json::to_value(&report)?;
        print(arena_report::json::to_text(&arena_report::json::document(
            "verify", body,
        )))?;
    } else {
        print(verify::verify_text(&report, args.series.format))?;
    }
    match report.end() {
        VerifyEnd::Passed => Ok(ExitCode::SUCCESS),
        VerifyEnd::Failed(why) => Err(anyhow!(Exit::new(ExitKind::Regression, why))),
        VerifyEnd::Undecided(why) => {
            eprintln!("{why}: exit 4");
            Ok(ExitCode::from(4))
        }
    }
}
