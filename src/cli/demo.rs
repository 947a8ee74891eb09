//! `arena-perf demo`: the main job on the built-in fixture, a match being played (`--scenario
//! played` unless given): `stock` against `lazy-png`, interleaved, two rounds, one column
//! per run (the layout PERFORMANCE.md tables use).

use std::process::ExitCode;

use anyhow::Result;
use arena_compare::by_run_table;
use arena_report::Format;
use clap::Args as ClapArgs;

use arena_pilot::Pilot;

use super::args::{ab_document, pooled, runs, AbPlan, RunArgs};
use super::common::stdout::print;

/// Measure stock against lazy-png on the built-in fixture match (no setup needed).
#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub series: super::args::SeriesArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

pub fn run(mut args: Args) -> Result<ExitCode> {
    let pilot = Pilot::builtin()?;
    // A match being played, unless asked otherwise: on an idle board CPU looks free, and
    // what lazy-png saves is CPU on the send path (docs/fixture-protocol.md, "Scenarios").
    args.run
        .scenario
        .get_or_insert(arena_fixture::Scenario::Played);
    let outcome = args.run.run_ab(AbPlan {
        pilot: &pilot,
        arms: &["stock".into(), "lazy-png".into()],
        rounds: args.series.rounds,
        url: None,
        out: args.series.out.clone(),
    })?;
    let runs = runs(&outcome);
    if args.series.format == Format::Json {
        // The table is one column per run; the document adds the pooled comparison.
        let cmp = pooled(&runs, Some("stock".into()), &args.run.split)?;
        print(ab_document("demo", &outcome, cmp.as_ref()))?;
    } else if !runs.is_empty() {
        print(by_run_table(&runs).render(args.series.format))?;
        args.run.split.print(&runs, args.series.format)?;
    }
    super::args::print_cpu(&runs, args.series.format)?;
    match outcome.error {
        Some(e) => Err(e),
        None => Ok(ExitCode::SUCCESS),
    }
}
