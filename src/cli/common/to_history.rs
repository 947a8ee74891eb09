//! `--history` on `pilot`, `ab` and `demo`: each complete run added to the run history as
//! it is written (`arena_history::Sink`), with the origin flags `history add` takes. The
//! database is opened before the browser starts; an add that fails is said on stderr with
//! the folder, which stays on disk, and the command ends with that add's exit code.

use std::path::Path;

use anyhow::Result;
use arena_history::{Origin, Sink};
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
        let (b, c, t) = (&self.branch, &self.commit, &self.testbed);
        let origin = Origin::or_defaults(b.clone(), c.clone(), t.clone());
        Sink::start(self.db.as_deref(), origin).map(Some)
    }
}

/// A run was written to `dir`: queued for the history when complete (`Sink::written`).
pub fn written(sink: Option<&Sink>, dir: &Path, complete: bool) {
    if let Some(line) = sink.and_then(|s| s.written(dir, complete)) {
        eprintln!("{line}");
    }
}

/// Waits for the adds and says what each did on stderr; the first failed add is the
/// error the command ends with.
pub fn finish(sink: Option<Sink>) -> Result<()> {
    let Some(sink) = sink else { return Ok(()) };
    let (lines, first) = sink.finish_said();
    for line in lines {
        eprintln!("{line}");
    }
    first.map_or(Ok(()), Err)
}
