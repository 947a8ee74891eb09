//! `arena-perf ab`: arms interleaved (A B A B ...), every run folder written, then the
//! comparison and the verdict of each arm against the first.

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

/// Run arms interleaved, each run in a fresh page and a fresh target session, and compare.
#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub arms: super::args::ArmsArgs,
    /// Page to drive instead of the pilot file's target (no fixture is started).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    #[command(flatten)]
    pub series: super::args::SeriesArgs,
    #[command(flatten)]
    pub sequence: SequenceArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub history: ToHistoryArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let pilot = Pilot::load_or_builtin(args.arms.pilot.as_ref())?;
    let sink = args.history.start()?;
    let baseline = args.arms.names.first().cloned().unwrap_or_default();
    let split = &args.run.split;
    let look =
        |o: &[arena_pilot::Outcome], looks: u32| super::args::look(o, looks, &baseline, split);
    let outcome = super::args::run_ab(
        &args.run,
        AbPlan {
            pilot: &pilot,
            arms: &args.arms.names,
            rounds: args.series.rounds_or(2),
            url: args.url.clone(),
            out: args.series.out.clone(),
            history: sink.as_ref(),
            until: args.sequence.sequential(&look),
        },
    )?;
    let runs = runs(&outcome);
    let alpha = alpha_of(outcome.looks);
    let cmp = pooled(&runs, Some(baseline.clone()), split, alpha)?;
    let verdict = cmp.as_ref().map(|c| verdict_at(&runs, c, split, alpha));
    let format = args.series.format;
    if format == Format::Json {
        print(ab_document("ab", &outcome, cmp.as_ref(), verdict.as_ref()))?;
    } else if let Some(cmp) = cmp {
        print(by_run_table(&runs).render(format))?;
        print(format!("\n{}", cmp.table.render(format)))?;
        print_verdict(verdict.as_ref(), format)?;
        for b in &cmp.breakdowns {
            print(format!("\n{}", b.table.render(format)))?;
        }
        super::common::stdout::print_gestures(Some(&cmp), format)?;
    }
    super::common::stdout::print_cpu(&runs, args.series.format)?;
    // A failed add does not hide a failed run: the run's error comes first.
    let added = to_history::finish(sink);
    match outcome.error {
        Some(e) => Err(e),
        None => added.map(|()| ExitCode::SUCCESS),
    }
}
