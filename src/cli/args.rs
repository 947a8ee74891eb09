//! The A/B both `ab` and `demo` run, with the run flags they share
//! (`arena_pilot::flags`), and how its runs are printed.

use std::path::PathBuf;

use anyhow::Result;
use arena_pilot::{block_on, AbOutcome, AbRequest, Pilot, Plan, Progress};

use arena_report::progress::{Mode, Reporter};
use arena_report::ranges;
use arena_run::Run;

pub use arena_pilot::flags::{ArmsArgs, BrowserArgs, TargetArgs};

/// The run flags of `pilot`, `ab`, `demo` and `verify`, with the breakdowns asked for.
pub type RunArgs = arena_pilot::flags::RunArgs<arena_compare::options::SplitArgs>;

/// What `ab` and `demo` run: `arms` of `pilot` interleaved for `rounds`, under `out`.
pub struct AbPlan<'a> {
    pub pilot: &'a Pilot,
    pub arms: &'a [String],
    pub rounds: u32,
    pub url: Option<String>,
    pub out: PathBuf,
    /// With `--history`: where each complete run goes as it is written.
    pub history: Option<&'a arena_history::Sink>,
    /// `--until-decided`: rounds added until the runs decide.
    pub until: Option<arena_pilot::Sequential<'a>>,
}

/// Resolves every arm, then runs the A/B; the folders made are listed on stderr.
pub fn run_ab(run: &RunArgs, ab: AbPlan<'_>) -> Result<AbOutcome> {
    let overrides = run.overrides(ab.url)?;
    let plans = Plan::for_arms(ab.pilot, ab.arms, &overrides)?;
    run_plans(run, plans, (ab.rounds, ab.until), ab.out, ab.history)
}

/// Runs resolved plans interleaved for `rounds` under `out`, with this command's
/// browser and progress; the folders made are listed on stderr, and each goes to
/// `history` as it is written.
pub fn run_plans(
    run: &RunArgs,
    plans: Vec<Plan<'_>>,
    (rounds, until): (u32, Option<arena_pilot::Sequential<'_>>),
    out: PathBuf,
    history: Option<&arena_history::Sink>,
) -> Result<AbOutcome> {
    let reporter = Reporter::new(Mode::detect(run.chromium.quiet));
    let show = |p: Progress<'_>| {
        if let Progress::RunWritten { dir, complete, .. } = p {
            super::common::to_history::written(history, dir, complete);
        }
        reporter.show(p.shown())
    };
    let outcome = block_on(|cancel| async move {
        arena_pilot::run_ab(AbRequest {
            plans,
            rounds,
            until,
            out_base: out,
            browser: run.browser(),
            progress: &show,
            cancel: &cancel,
        })
        .await
    })?;
    for o in &outcome.outcomes {
        if let Some(line) = o.run.meta.trace.as_ref().and_then(|t| t.presented_line()) {
            eprintln!("{line}");
        }
        eprintln!("run folder: {}", o.dir.display());
    }
    if let Some(why) = &outcome.stopped {
        eprintln!("rounds stopped: {why}");
    }
    Ok(outcome)
}

/// How a command that interleaves runs repeats them and where its output goes (`ab`,
/// `demo`, `verify`).
#[derive(Debug, Clone, clap::Args)]
pub struct SeriesArgs {
    /// Rounds: each round runs every arm once, in the order given (demo: stock, lazy-png;
    /// verify: direct, delayed). Default 2 (demo: 4).
    #[arg(long, value_name = "R",
          value_parser = ranges::positive_u32, allow_negative_numbers = true)]
    pub rounds: Option<u32>,
    /// Folder the run folders are written under.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub out: PathBuf,
    /// Output format; `json` prints the command's document (docs/schema/ab.json for ab
    /// and demo, docs/schema/verify.json for verify).
    #[arg(long, value_enum, default_value_t = arena_report::Format::Table)]
    pub format: arena_report::Format,
}

impl SeriesArgs {
    /// `--rounds`, or the command's default.
    pub fn rounds_or(&self, default: u32) -> u32 {
        self.rounds.unwrap_or(default)
    }
}

/// The verdict after a blank line, in the table's format; nothing when no arm was
/// compared (JSON documents carry it as `verdict` instead).
pub fn print_verdict(
    v: Option<&arena_compare::Verdicts>,
    format: arena_report::Format,
) -> Result<()> {
    match v {
        Some(v) if !v.arms.is_empty() && format != arena_report::Format::Json => {
            super::common::stdout::print(format!("\n{}", v.render(format)))
        }
        _ => Ok(()),
    }
}

/// The runs an A/B made, in order.
pub fn runs(outcome: &AbOutcome) -> Vec<Run> {
    outcome.outcomes.iter().map(|o| o.run.clone()).collect()
}

/// The JSON document of an A/B (`ab`, `demo`): every run with its folder, then the
/// comparison and its verdict (`null` when no run finished).
pub fn ab_document(
    kind: &str,
    outcome: &AbOutcome,
    cmp: Option<&arena_compare::Comparison>,
    verdict: Option<&arena_compare::Verdicts>,
) -> String {
    let runs: Vec<_> = outcome
        .outcomes
        .iter()
        .map(|o| (&o.run, Some(o.dir.as_path())))
        .collect();
    arena_report::json::to_text(&arena_compare::ab_verdict_json(kind, &runs, cmp, verdict))
}

/// A look of `--until-decided` at the runs so far against `baseline`, at the level
/// `looks` leaves each (`arena_compare::ab::look`).
pub fn look(
    outcomes: &[arena_pilot::Outcome],
    looks: u32,
    baseline: &str,
    split: &arena_compare::options::SplitArgs,
) -> arena_pilot::Look {
    let runs: Vec<Run> = outcomes.iter().map(|o| o.run.clone()).collect();
    let (decided, line) = arena_compare::ab::look(&runs, looks, baseline, split);
    arena_pilot::Look { decided, line }
}
