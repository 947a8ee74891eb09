//! `--history` on `pilot`, `ab` and `demo`: each complete run added to the run history as
//! it is written (`arena_history::Sink`), with the origin flags `history add` takes. The
//! database is opened before the browser starts; an add that fails is said on stderr with
//! the folder, which stays on disk, and the command ends with that add's exit code.

use std::path::Path;

use anyhow::{anyhow, Result};
use arena_history::{Added, Origin, Sink};
use arena_report::{Exit, ExitKind};
use clap::Args as ClapArgs;

/// Where and as what each run is added to the history.
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct ToHistoryArgs {
    /// Add each complete run to the run history as it is written (`arena-perf history`);
    /// its folder is written as always. The database is opened before the browser starts.
    #[arg(long)]
    pub history: bool,
    /// The history: an SQLite file or a postgres:// URL (default: $ARENA_PERF_DB, else
    /// reports/history.sqlite).
    #[arg(long, value_name = "PATH|URL", requires = "history")]
    pub db: Option<String>,
    /// The branch measured (default: the current folder's git branch).
    #[arg(long, requires = "history")]
    pub branch: Option<String>,
    /// The commit measured (default: the current folder's git HEAD).
    #[arg(long, requires = "history")]
    pub commit: Option<String>,
    /// The machine the runs are measured on (default: this machine's hostname).
    #[arg(long, requires = "history")]
    pub testbed: Option<String>,
}

impl ToHistoryArgs {
    /// The open history, or `None` without `--history`.
    pub fn start(&self) -> Result<Option<Sink>> {
        if !self.history {
            return Ok(None);
        }
        let origin = Origin {
            branch: self.branch.clone().or_else(arena_history::git_branch),
            commit: self.commit.clone().or_else(arena_history::git_commit),
            testbed: self
                .testbed
                .clone()
                .unwrap_or_else(arena_history::default_testbed),
        };
        Sink::start(self.db.as_deref(), origin).map(Some)
    }
}

/// A run was written to `dir`: queued for the history when complete; a run that ended
/// early is not added (its folder is kept; `history add` takes it if wanted).
pub fn written(sink: Option<&Sink>, dir: &Path, complete: bool) {
    match sink {
        Some(s) if complete => s.send(dir),
        Some(s) => eprintln!(
            "history: {} ended early and is not added to {}",
            dir.display(),
            s.describe()
        ),
        None => {}
    }
}

/// Waits for the adds and says what each did on stderr; the first failed add is the
/// error the command ends with (its own exit code: 2 for a folder that fails validation,
/// 3 for a server that went away).
pub fn finish(sink: Option<Sink>) -> Result<()> {
    let Some(sink) = sink else { return Ok(()) };
    let db = sink.describe().to_string();
    let mut first: Option<anyhow::Error> = None;
    for s in sink.finish() {
        let dir = s.dir.display();
        match s.result {
            Ok(Added::New(id)) => eprintln!("history: {dir} stored as run {id} in {db}"),
            Ok(Added::Duplicate(id)) => {
                eprintln!("history: {dir} already stored as run {id} in {db}")
            }
            Err(e) => {
                let kind = ExitKind::of(&e).unwrap_or(ExitKind::BadInput);
                let msg = format!(
                    "history: {dir} was not added to {db}: {e:#}; the run folder is kept \
                     (`arena-perf history add {dir}` adds it later)"
                );
                eprintln!("arena-perf: {msg}");
                first.get_or_insert(anyhow!(Exit::new(kind, msg)));
            }
        }
    }
    first.map_or(Ok(()), Err)
}
