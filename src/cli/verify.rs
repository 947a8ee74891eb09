//! `arena-perf verify`: each kind of loop proven caused by its input, on the user's own
//! app: the same plan direct and through a link with added round trip, interleaved, and
//! every kind's medians held against the delay injected.

use std::process::ExitCode;

use anyhow::{anyhow, Result};
use arena_pilot::verify::{verify_outcome, verify_plans, verify_table, VerifyRule};
use arena_pilot::Plan;
use arena_report::{Exit, ExitKind, Format};
use clap::Args as ClapArgs;

use super::args::{RunArgs, TargetArgs};
use super::common::stdout::print;
use arena_report::ranges;

/// Clicks per run when `--clicks` is not given: 2 rounds give about 58 warm loops of each
/// kind a side, enough for a median to within a millisecond or two on a quiet machine.
const DEFAULT_CLICKS: u64 = 30;

/// Prove that each kind of loop (mousedown, mouseup, keydown) is caused by its input: run
/// the pilot direct and through a shaping link with more round trip, interleaved, and check
/// that every kind's sendToRecv and headline medians move by the delay injected. A kind
/// whose answers do not move is named "not caused by its input" (exit 1).
#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Round trip the link adds on the delayed side, ms.
    #[arg(long, value_name = "MS", default_value_t = 30.0,
          value_parser = arena_pilot::ranges::rtt_ms, allow_negative_numbers = true)]
    pub rtt: f64,
    /// How far a median's shift may be from `--rtt` and still prove the path, ms.
    #[arg(long, value_name = "MS", default_value_t = 3.0,
          value_parser = ranges::positive_f64, allow_negative_numbers = true)]
    pub tolerance: f64,
    #[command(flatten)]
    pub series: super::args::SeriesArgs,
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
    };
    let plans = verify_plans(plan, rule)?;
    let outcome = super::args::run_plans(
        &args.run,
        plans,
        (args.series.rounds_or(2), None),
        args.series.out.clone(),
        None,
    )?;
    if let Some(e) = outcome.error {
        return Err(e);
    }
    let report = verify_outcome(&outcome, rule);
    if args.series.format == Format::Json {
        let body = serde_json::to_value(&report)?;
        print(arena_report::json::to_text(&arena_report::json::document(
            "verify", body,
        )))?;
    } else {
        print(verify_table(&report).render(args.series.format))?;
    }
    let failed: Vec<String> = report
        .failures()
        .iter()
        .map(|k| format!("{}: {}", k.event, k.verdict.text()))
        .collect();
    if failed.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    Err(anyhow!(Exit::new(
        ExitKind::Regression,
        format!(
            "verify: {} (a +{} ms round trip)",
            failed.join("; "),
            args.rtt
        )
    )))
}
