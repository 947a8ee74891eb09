//! The `history` command's flags and what each subcommand does (feature `cli`): runs kept
//! in a database, listed, shown, and trended over commits with their steps named. The
//! command line prints what a subcommand returns; nothing here prints.

use std::path::PathBuf;

use arena_report::{Exit, Format, Table};
use arena_run::Run;
use clap::{Args, Subcommand};

use crate::context::{default_testbed, Origin};
use crate::record::NewRun;
use crate::select::history_baseline;
use crate::store::{open_default, Filter};
use crate::tables::{
    add_json, add_table, list_json, list_table, show_json, show_table, trend_json, trend_table,
};
use crate::trend::{self, TrendOptions};

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: HistoryCommand,
}

#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// Store run folders (or folders of runs); a run already stored is kept once.
    Add(AddArgs),
    /// List stored runs, oldest first.
    List(ListArgs),
    /// One stored run: where it came from, what is stored of it, its warnings and CPU.
    Show(ShowArgs),
    /// A metric's quantile per run with its interval, over the runs in the order they were
    /// added, and the steps in it (PELT with a permutation test), each named by its run and
    /// commit with its size and interval.
    Trend(TrendArgs),
}

/// Which database.
#[derive(Debug, Args)]
pub struct DbArgs {
    /// The history: an SQLite file (created when absent), or a PostgreSQL URL
    /// (postgres://USER[:PASSWORD]@HOST[:PORT]/DB). Default: $ARENA_PERF_DB, else
    /// reports/history.sqlite.
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// Run folders, or folders of runs. Every one is validated before any is stored.
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// The branch measured (default: the current folder's git branch).
    #[arg(long)]
    pub branch: Option<String>,
    /// The commit measured (default: the current folder's git HEAD).
    #[arg(long)]
    pub commit: Option<String>,
    /// The machine the runs were measured on (default: this machine's hostname).
    #[arg(long)]
    pub testbed: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

/// Filters shared by `list` and `trend`.
#[derive(Debug, Args)]
pub struct FilterArgs {
    /// Only runs of this branch (exactly as stored: `main`, `pr-42`).
    #[arg(long)]
    pub branch: Option<String>,
    /// Only runs measured on this testbed (the hostname unless `--testbed` named another
    /// when they were added).
    #[arg(long)]
    pub testbed: Option<String>,
    /// The pilot hash, or a prefix of it.
    #[arg(long)]
    pub pilot: Option<String>,
    /// Only runs of this arm of the pilot file (`stock`, `lazy-png`).
    #[arg(long)]
    pub arm: Option<String>,
    /// Runs started at or after this UTC time (RFC 3339, or a date: 2026-11-29).
    #[arg(long)]
    pub since: Option<String>,
    /// Only the newest N runs that match (1 to 1000000).
    #[arg(long, value_name = "N", value_parser = listed_runs)]
    pub last: Option<u32>,
}

impl FilterArgs {
    fn filter(&self) -> anyhow::Result<Filter> {
        let f = Filter {
            branch: self.branch.clone(),
            testbed: self.testbed.clone(),
            pilot: self.pilot.clone(),
            arm: self.arm.clone(),
            since: self.since.clone(),
            last: self.last.map(|n| n as usize),
        };
        f.check()?;
        Ok(f)
    }
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run's id (`history list` shows it).
    #[arg(value_name = "RUN-ID")]
    pub id: i64,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, Args)]
pub struct TrendArgs {
    /// The figure per run: METRIC.pQ, e.g. inputToPaint.p50, over every loop with
    /// unanswered ones censored at the window.
    #[arg(value_name = "METRIC.pQ")]
    pub metric: String,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Family-wise false-alarm rate of the steps over the series (Holm).
    #[arg(long, default_value_t = 0.01)]
    pub alpha: f64,
    /// Report only steps of at least this many ms. A shared machine's level drifts by real,
    /// significant milliseconds; set this to the smallest change you would act on.
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    pub min_step: f64,
    #[command(flatten)]
    pub db: DbArgs,
}

/// What a `history` subcommand prints: its table, or as JSON its document.
pub struct Said {
    pub format: Format,
    pub table: Table,
    pub json: serde_json::Value,
}

impl HistoryArgs {
    /// Runs the subcommand against its database; the command line prints what it says.
    pub fn run(self) -> anyhow::Result<Said> {
        match self.command {
            HistoryCommand::Add(a) => add(a),
            HistoryCommand::List(a) => list(a),
            HistoryCommand::Show(a) => show(a),
            HistoryCommand::Trend(a) => trend(a),
        }
    }
}

fn add(a: AddArgs) -> anyhow::Result<Said> {
    let origin = Origin::or_defaults(a.branch, a.commit, a.testbed);
    // Every run is validated before the first is stored: a bad folder stores nothing.
    let mut runs = Vec::new();
    for p in &a.runs {
        for dir in Run::find_all(p)? {
            runs.push(NewRun::load(&dir, origin.clone())?);
        }
    }
    let mut store = open_default(a.db.db.as_deref())?;
    let mut added = Vec::new();
    for r in &runs {
        added.push((r.source.clone().unwrap_or_default(), store.add(r)?));
    }
    Ok(Said {
        format: a.db.format,
        table: add_table(&store.describe(), &added),
        json: add_json(&added),
    })
}

fn list(a: ListArgs) -> anyhow::Result<Said> {
    let filter = a.filter.filter()?;
    let store = open_default(a.db.db.as_deref())?;
    let rows = store.list(&filter)?;
    Ok(Said {
        format: a.db.format,
        table: list_table(&rows),
        json: list_json(&rows),
    })
}

fn show(a: ShowArgs) -> anyhow::Result<Said> {
    let store = open_default(a.db.db.as_deref())?;
    let row = store.row(a.id)?;
    let counts = store.counts(a.id)?;
    let run = store.load(a.id, false)?;
    Ok(Said {
        format: a.db.format,
        table: show_table(&row, &counts, &run),
        json: show_json(&row, &counts, &run),
    })
}

fn trend(a: TrendArgs) -> anyhow::Result<Said> {
    let mut opts = TrendOptions::parse(&a.metric)?;
    if !(a.alpha > 0.0 && a.alpha < 1.0) {
        return Err(
            Exit::bad_input(format!("--alpha {}: must lie between 0 and 1", a.alpha)).into(),
        );
    }
    if !(a.min_step.is_finite() && a.min_step >= 0.0) {
        return Err(Exit::bad_input(format!(
            "--min-step {}: must be a number of ms, 0 or more",
            a.min_step
        ))
        .into());
    }
    opts.change.alpha = a.alpha;
    opts.change.min_step = a.min_step;
    let filter = a.filter.filter()?;
    let store = open_default(a.db.db.as_deref())?;
    let t = trend::trend(store.as_ref(), &filter, &opts)?;
    Ok(Said {
        format: a.db.format,
        table: trend_table(&t),
        json: trend_json(&t),
    })
}

/// The gate's `--baseline-history` and the flags that choose it.
#[derive(Debug, Args)]
pub struct HistoryBaselineArgs {
    /// Take the baseline from the run history instead: the newest --last runs of BRANCH
    /// on --testbed with the candidate's pilot hash, arm and knobs that the comparability
    /// rules find measured like the candidate.
    #[arg(long, value_name = "BRANCH")]
    pub baseline_history: Option<String>,
    /// The arm whose stored runs make the baseline (default: the candidate's own arm and
    /// knobs): `--baseline-arm stock` gates a lazy-png candidate against the branch's stock.
    #[arg(long, value_name = "ARM")]
    pub baseline_arm: Option<String>,
    /// How many stored runs make the history baseline (default 10).
    #[arg(long, value_name = "N", value_parser = baseline_runs)]
    pub last: Option<u32>,
    /// The history's database, an SQLite file or a postgres:// URL (default:
    /// $ARENA_PERF_DB, else reports/history.sqlite).
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<String>,
    /// The testbed the history baseline was measured on (default: this machine's hostname).
    #[arg(long)]
    pub testbed: Option<String>,
}

impl HistoryBaselineArgs {
    /// The history baseline's flags are refused without `--baseline-history`: beside a
    /// folder baseline they would be silently ignored.
    pub fn refuse_stray(&self) -> anyhow::Result<()> {
        let history_only = [
            ("--baseline-arm", self.baseline_arm.is_some()),
            ("--last", self.last.is_some()),
            ("--db", self.db.is_some()),
            ("--testbed", self.testbed.is_some()),
        ];
        if let (None, Some((flag, _))) = (&self.baseline_history, history_only.iter().find(|f| f.1))
        {
            return Err(Exit::bad_input(format!(
                "{flag} chooses the history baseline: give it with --baseline-history BRANCH"
            ))
            .into());
        }
        Ok(())
    }

    /// With `--baseline-history`: the baseline from the history, and the note that says
    /// which runs it is.
    pub fn baseline(&self, candidate: &[Run]) -> anyhow::Result<Option<(Vec<Run>, String)>> {
        let Some(branch) = &self.baseline_history else {
            return Ok(None);
        };
        let testbed = self.testbed.clone().unwrap_or_else(default_testbed);
        let last = self.last.unwrap_or(10) as usize;
        history_baseline(
            self.db.as_deref(),
            branch,
            &testbed,
            candidate,
            last,
            self.baseline_arm.as_deref(),
        )
        .map(Some)
    }
}

/// `history list --last`: 1 to 1000000, said for any value outside (2^64 included).
fn listed_runs(text: &str) -> Result<u32, String> {
    arena_report::ranges::whole(text, 1, 1_000_000, "a whole number from 1 to 1000000")
}

/// A history baseline's `--last`: 1 to 10000 stored runs, said for any value outside.
pub fn baseline_runs(text: &str) -> Result<u32, String> {
    arena_report::ranges::whole(text, 1, 10_000, "a whole number from 1 to 10000")
}
