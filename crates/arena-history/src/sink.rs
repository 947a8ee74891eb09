//! Runs added to the history as they are written (`pilot`, `ab` and `demo` with
//! `--history`). The store lives on a thread of its own: the PostgreSQL client runs a
//! runtime of its own, which cannot be entered from inside the pilot's, and an add never
//! waits inside a run. The database is opened before the first run starts, so a `--db`
//! that is not this tool's history is refused before any browser does.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

use anyhow::{anyhow, Result};
use arena_report::{Exit, ExitKind};

use crate::context::Origin;
use crate::record::NewRun;
use crate::store::{open, resolve, Added};

/// What became of one run folder sent to the history.
#[derive(Debug)]
pub struct Stored {
    pub dir: PathBuf,
    /// Stored (or found already stored), or why not: the folder is kept either way.
    pub result: Result<Added>,
}

/// The history's writer thread.
pub struct Sink {
    tx: Option<mpsc::Sender<PathBuf>>,
    handle: Option<JoinHandle<Vec<Stored>>>,
    shown: String,
}

impl Sink {
    /// Opens the history `db` names (as `--db`, [`crate::DB_ENV`], the default) on the
    /// writer thread; an error opening it is returned here, before anything is run.
    pub fn start(db: Option<&str>, origin: Origin) -> Result<Sink> {
        let db = resolve(db);
        let (ready_tx, ready_rx) = mpsc::channel::<Result<String>>();
        let (tx, rx) = mpsc::channel::<PathBuf>();
        let named = db.clone();
        let handle = std::thread::Builder::new()
            .name("history".into())
            .spawn(move || {
                let mut store = match open(&named) {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return Vec::new();
                    }
                };
                let _ = ready_tx.send(Ok(store.describe()));
                rx.iter()
                    .map(|dir| {
                        let result = NewRun::load(&dir, origin.clone()).and_then(|r| store.add(&r));
                        Stored { dir, result }
                    })
                    .collect()
            })?;
        let ready = ready_rx
            .recv()
            .map_err(|_| anyhow!("the history's writer thread ended before opening {db}"));
        match ready.and_then(|r| r) {
            Ok(shown) => Ok(Sink {
                tx: Some(tx),
                handle: Some(handle),
                shown,
            }),
            Err(e) => {
                let _ = handle.join();
                Err(e)
            }
        }
    }

    /// The database, as messages name it (a URL without its password).
    pub fn describe(&self) -> &str {
        &self.shown
    }

    /// Queues the run folder `dir` to be validated and added.
    pub fn send(&self, dir: &Path) {
        if let Some(tx) = &self.tx {
            // The thread only ends once `tx` is dropped, so the send cannot fail here.
            let _ = tx.send(dir.to_path_buf());
        }
    }

    /// Waits for every queued add and returns what each did, in the order sent.
    pub fn finish(mut self) -> Vec<Stored> {
        self.stop()
    }

    /// A run was written to `dir`: queued when complete; a run that ended early is not
    /// added (its folder is kept; `history add` takes it if wanted), and the line that
    /// says so is returned.
    pub fn written(&self, dir: &Path, complete: bool) -> Option<String> {
        if complete {
            self.send(dir);
            return None;
        }
        Some(format!(
            "history: {} ended early and is not added to {}",
            dir.display(),
            self.describe()
        ))
    }

    /// Waits for the adds: a line for stderr on what each did, and the first failed add as
    /// the error the command ends with (its own exit code: 2 for a folder that fails
    /// validation, 3 for a server that went away).
    pub fn finish_said(self) -> (Vec<String>, Option<anyhow::Error>) {
        let db = self.describe().to_string();
        let mut lines = Vec::new();
        let mut first: Option<anyhow::Error> = None;
        for s in self.finish() {
            let dir = s.dir.display();
            match s.result {
                Ok(Added::New(id)) => {
                    lines.push(format!("history: {dir} stored as run {id} in {db}"))
                }
                Ok(Added::Duplicate(id)) => {
                    lines.push(format!("history: {dir} already stored as run {id} in {db}"))
                }
                Err(e) => {
                    let kind = ExitKind::of(&e).unwrap_or(ExitKind::BadInput);
                    let msg = format!(
                        "history: {dir} was not added to {db}: {e:#}; the run folder is kept \
                         (`arena-perf history add {dir}` adds it later)"
                    );
                    lines.push(format!("arena-perf: {msg}"));
                    first.get_or_insert(anyhow!(Exit::new(kind, msg)));
                }
            }
        }
        (lines, first)
    }

    fn stop(&mut self) -> Vec<Stored> {
        self.tx.take();
        match self.handle.take().map(|h| h.join()) {
            Some(Ok(done)) => done,
            Some(Err(_)) => vec![Stored {
                dir: PathBuf::new(),
                result: Err(anyhow!("the history's writer thread panicked")),
            }],
            None => Vec::new(),
        }
    }
}

impl Drop for Sink {
    /// A sink dropped on an error path still finishes its adds: no thread outlives it.
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_compare::synthetic;

    fn origin() -> Origin {
        Origin {
            branch: Some("main".into()),
            commit: Some("c1".into()),
            testbed: "bench-1".into(),
        }
    }

    #[test]
    fn runs_sent_are_added_in_order_and_a_bad_folder_is_reported_not_lost() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("h.sqlite");
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        for (dir, seed) in [(&a, 1), (&b, 2)] {
            let loops = synthetic::lognormal(40, 50.0, 0.3, 0.0, seed);
            synthetic::run("stock", &loops, 6000).write(dir).unwrap();
        }
        std::fs::write(b.join("loops.csv"), "not,a,loops,file\n").unwrap();
        let sink = Sink::start(db.to_str(), origin()).unwrap();
        assert!(sink.describe().contains("h.sqlite"), "{}", sink.describe());
        sink.send(&a);
        sink.send(&b);
        sink.send(&a);
        let done = sink.finish();
        assert_eq!(done.len(), 3);
        assert!(matches!(done[0].result, Ok(Added::New(_))), "{:?}", done[0]);
        let e = format!("{:#}", done[1].result.as_ref().unwrap_err());
        assert!(e.contains("loops.csv"), "{e}");
        assert!(matches!(done[2].result, Ok(Added::Duplicate(_))));
        assert!(
            b.join("run.json").exists(),
            "the bad folder is left as it was"
        );
        let s = open(db.to_str().unwrap()).unwrap();
        let rows = s.list(&crate::Filter::default()).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].branch.as_deref(), Some("main"));
    }

    #[test]
    fn a_db_that_is_not_a_history_is_refused_before_any_run() {
        let d = tempfile::tempdir().unwrap();
        let notes = d.path().join("notes.txt");
        std::fs::write(&notes, "not a database\n").unwrap();
        let e = Sink::start(notes.to_str(), origin()).err().unwrap();
        assert_eq!(
            arena_report::ExitKind::of(&e),
            Some(arena_report::ExitKind::BadInput)
        );
        assert!(format!("{e:#}").contains("notes.txt"), "{e:#}");
    }
}
