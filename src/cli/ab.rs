//! `arena-perf ab`: arms interleaved (A B A B ...), every run folder written, then the
//! comparison.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use arena_compare::by_run_table;
use arena_report::Format;
use clap::Args as ClapArgs;

use arena_pilot::Pilot;

use super::args::{ab_document, pooled, runs, AbPlan, RunArgs};

/// Run arms interleaved, each run in a fresh page and a fresh target session, and compare.
#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub arms: super::args::ArmsArgs,
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

pub fn run(args: Args) -> Result<ExitCode> {
    let pilot = Pilot::load_or_builtin(args.arms.pilot.as_ref())?;
    let outcome = args.run.run_ab(AbPlan {
        pilot: &pilot,
        arms: &args.arms.names,
        rounds: args.rounds,
        url: args.url.clone(),
        out: args.out.clone(),
    })?;
    let runs = runs(&outcome);
    let cmp = pooled(&runs, args.arms.names.first().cloned(), &args.run.split)?;
    if args.format == Format::Json {
        print!("{}", ab_document("ab", &outcome, cmp.as_ref()));
    } else if let Some(cmp) = cmp {
        print!("{}", by_run_table(&runs).render(args.format));
        println!();
        print!("{}", cmp.table.render(args.format));
        for b in &cmp.breakdowns {
            println!();
            print!("{}", b.table.render(args.format));
        }
    }
    super::args::print_cpu(&runs, args.format);
    match outcome.error {
        Some(e) => Err(e),
        None => Ok(ExitCode::SUCCESS),
    }
}
