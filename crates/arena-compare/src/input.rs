//! Loading the runs a command was given, with the checks that make them comparable.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use arena_report::Exit;
use arena_run::{Run, RUN_JSON};

/// Loads every run named by `paths` (a run folder, or a folder of run folders), in the
/// order given, folders expanded in path order. Errors exit 2 and name the file: not a
/// run, another schema version, an empty run, a value `Run::load` refuses, a run given
/// twice (or a copy of one), or runs of different pilots.
pub fn load_runs(paths: &[PathBuf]) -> Result<Vec<Run>> {
    load_runs_with(paths, Run::load_loops_only)
}

/// [`load_runs`] with every run's raw records kept (`events.jsonl`, `setup_events.jsonl`):
/// the frame tables read receipts.
pub fn load_runs_with_events(paths: &[PathBuf]) -> Result<Vec<Run>> {
    load_runs_with(paths, Run::load)
}

fn load_runs_with(paths: &[PathBuf], load: fn(&Path) -> Result<Run>) -> Result<Vec<Run>> {
    if paths.is_empty() {
        return Err(Exit::bad_input("no runs given").into());
    }
    let mut runs: Vec<(PathBuf, Run)> = Vec::new();
    for p in paths {
        for dir in Run::find_all(p)? {
            let run = load(&dir).with_context(|| format!("loading run {}", dir.display()))?;
            runs.push((dir, run));
        }
    }
    arena_run::check_distinct(&runs)?;
    check_same_pilot(&runs)?;
    Ok(runs.into_iter().map(|(_, r)| r).collect())
}

/// Runs of different pilot files drove different scenarios: their loops are not the
/// same population, so comparing them would be comparing clicks with something else.
fn check_same_pilot(runs: &[(PathBuf, Run)]) -> Result<()> {
    let Some((first_dir, first)) = runs.first() else {
        return Ok(());
    };
    for (dir, r) in &runs[1..] {
        if r.meta.pilot_hash != first.meta.pilot_hash {
            return Err(Exit::bad_input(format!(
                "{}: pilot {} (hash {}) differs from {}'s pilot {} (hash {}): runs of different pilots are not comparable",
                Path::new(dir).join(RUN_JSON).display(),
                r.meta.pilot_file.as_deref().unwrap_or("built-in"),
                short(&r.meta.pilot_hash),
                Path::new(first_dir).join(RUN_JSON).display(),
                first.meta.pilot_file.as_deref().unwrap_or("built-in"),
                short(&first.meta.pilot_hash),
            ))
            .into());
        }
    }
    Ok(())
}

fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}
