//! `arena-perf demo`: the main job on the built-in fixture, a match being played (`--scenario
//! played` unless given): `stock` against `lazy-png`, interleaved, two rounds, one column
//! per run (the layout PERFORMANCE.md tables use), then the verdict of lazy-png against
//! stock.

use std::process::ExitCode;

use anyhow::Result;
use arena_compare::by_run_table;
use arena_report::Format;
use clap::Args as ClapArgs;

use arena_pilot::Pilot;

use super::args::{ab_document, print_verdict, runs, AbPlan, RunArgs};
use super::common::stdout::print;
use super::common::to_history::{self, ToHistoryArgs};
use arena_compare::ab::{pooled, verdict_at};

use arena_compare::ab::alpha_of;
use arena_pilot::SequenceArgs;

/// Clicks per run unless `--clicks` says otherwise.
const DEMO_CLICKS: u64 = 64;

/// Rounds unless `--rounds` says otherwise. Runs are what the verdict's interval counts
/// (the spread between sessions is estimated from them), so within the same 3 minutes
/// four rounds of 64 clicks decide what two of 128 cannot: the p90's interval of
/// lazy-png against stock on a 2-core machine was wholly below 0 with 4 x 64, and
/// straddled 0 with 2 x 128 on the same change (docs/compare.md, "The verdict").
const DEMO_ROUNDS: u32 = 4;

/// Measure stock against lazy-png on the built-in fixture match (no setup needed): 4
/// rounds of 64 clicks a run unless `--rounds` and `--clicks` are given.
#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub series: super::args::SeriesArgs,
    #[command(flatten)]
    pub sequence: SequenceArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub history: ToHistoryArgs,
}

pub fn run(mut args: Args) -> Result<ExitCode> {
    let pilot = Pilot::builtin()?;
    // A match being played, unless asked otherwise: on an idle board CPU looks free, and
    // what lazy-png saves is CPU on the send path (docs/fixture-protocol.md, "Scenarios").
    args.run
        .scenario
        .get_or_insert(arena_fixture::Scenario::Played);
    // A played click takes about 0.3 s (a person's hold, the bots' turn, the settle after
    // each half), and the demo is the first thing anyone runs: eight runs of 64 take
    // 2 min 53 s on 2 cores, at 504 loops an arm.
    args.run.clicks.get_or_insert(DEMO_CLICKS);
    let sink = args.history.start()?;
    let split = &args.run.split;
    let look = |o: &[arena_pilot::Outcome], looks: u32| super::args::look(o, looks, "stock", split);
    let outcome = super::args::run_ab(
        &args.run,
        AbPlan {
            pilot: &pilot,
            arms: &["stock".into(), "lazy-png".into()],
            rounds: args.series.rounds_or(DEMO_ROUNDS),
            url: None,
            out: args.series.out.clone(),
            history: sink.as_ref(),
            until: args.sequence.sequential(&look),
        },
    )?;
    let runs = runs(&outcome);
    let format = args.series.format;
    let alpha = alpha_of(outcome.looks);
    // The table is one column per run; the verdict under it, and the JSON document, add
    // the pooled comparison. Without one (stock never finished) the table still prints.
    let cmp = match pooled(&runs, Some("stock".into()), split, alpha) {
        Ok(c) => c,
        Err(e) if format != Format::Json => {
            eprintln!("no verdict: {e:#}");
            None
        }
        Err(e) => return Err(e),
    };
    let verdict = cmp.as_ref().map(|c| verdict_at(&runs, c, split, alpha));
    if format == Format::Json {
        print(ab_document(
            "demo",
            &outcome,
            cmp.as_ref(),
            verdict.as_ref(),
        ))?;
    } else if !runs.is_empty() {
        print(by_run_table(&runs).render(format))?;
        print_verdict(verdict.as_ref(), format)?;
        super::compare::print_splits(&args.run.split, &runs, format)?;
        super::common::stdout::print_gestures(cmp.as_ref(), format)?;
    }
    super::common::stdout::print_cpu(&runs, args.series.format)?;
    // A failed add does not hide a failed run: the run's error comes first.
    let added = to_history::finish(sink);
    match outcome.error {
        Some(e) => Err(e),
        None => added.map(|()| ExitCode::SUCCESS),
    }
}
