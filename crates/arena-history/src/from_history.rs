//! Stored runs as inputs of `compare`, `report` and `plan`: the newest runs of a branch
//! (chosen by the gate's history-baseline rules, [`crate::selected_runs`]) or runs by id,
//! beside or instead of run folders.

use crate::Selection;
use anyhow::Result;
use arena_run::Run;
use clap::Args as ClapArgs;

/// Which stored runs to read.
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct FromHistoryArgs {
    /// Also take the newest --last runs of BRANCH from the run history, measured like the
    /// run folders given (or, with none, like the branch's newest run): the same pilot
    /// hash, testbed and comparability rules as `gate --baseline-history`. Shown as
    /// `ARM@BRANCH`, first, so they are the baseline unless --baseline says otherwise.
    #[arg(long, value_name = "BRANCH")]
    pub history_branch: Option<String>,
    /// How many runs --history-branch takes (default 10).
    #[arg(long, value_name = "N", requires = "history_branch",
          value_parser = crate::cli::baseline_runs)]
    pub last: Option<u32>,
    /// The testbed of --history-branch's runs (default: this machine's hostname).
    #[arg(long, requires = "history_branch")]
    pub testbed: Option<String>,
    /// Also take this stored run, by its id in `history list` (repeatable); shown as
    /// `ARM@#ID`.
    #[arg(long = "history-run", value_name = "ID")]
    pub ids: Vec<i64>,
    /// The history: an SQLite file or a postgres:// URL (default: $ARENA_PERF_DB, else
    /// reports/history.sqlite).
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<String>,
}

impl FromHistoryArgs {
    pub fn any(&self) -> bool {
        self.history_branch.is_some() || !self.ids.is_empty()
    }

    /// The stored runs selected, oldest first, then `folders`; and the note that says
    /// which stored runs they are. Without a selection, `folders` as they are.
    pub fn with(&self, folders: Vec<Run>) -> Result<(Vec<Run>, Option<String>)> {
        self.with_arm(folders, None)
    }

    /// [`FromHistoryArgs::with`], the branch's runs only of `arm` when given.
    pub fn with_arm(
        &self,
        folders: Vec<Run>,
        arm: Option<&str>,
    ) -> Result<(Vec<Run>, Option<String>)> {
        if !self.any() {
            if self.db.is_some() {
                return Err(arena_report::Exit::bad_input(
                    "--db names the history to read: give it with --history-branch or --history-run",
                )
                .into());
            }
            return Ok((folders, None));
        }
        if let Some(id) = self
            .ids
            .iter()
            .enumerate()
            .find_map(|(i, id)| self.ids[..i].contains(id).then_some(id))
        {
            return Err(arena_report::Exit::bad_input(format!(
                "--history-run {id} is given twice: one run would be pooled twice, as two sessions"
            ))
            .into());
        }
        let sel = Selection {
            branch: self.history_branch.clone(),
            testbed: self.testbed.clone().unwrap_or_else(crate::default_testbed),
            last: self.last.unwrap_or(10) as usize,
            ids: self.ids.clone(),
            arm: arm.map(str::to_string),
        };
        let (runs, note) = crate::with_stored(self.db.as_deref(), &sel, folders)?;
        Ok((runs, Some(note)))
    }
}
