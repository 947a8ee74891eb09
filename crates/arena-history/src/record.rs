//! A run on its way into the store: the run as loaded and validated from its folder, where
//! it came from, and the content hash that makes a second add of it a no-op.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use arena_run::{Event, Run, SETUP_EVENTS_JSONL};
use sha2::{Digest, Sha256};

use crate::context::Origin;

/// One run to add.
#[derive(Debug, Clone)]
pub struct NewRun {
    pub run: Run,
    pub origin: Origin,
    /// The folder it was read from, as given (shown by `history show`).
    pub source: Option<String>,
    /// The run folder whose records a store reads as it writes them, one at a time:
    /// `run.events` and `run.setup_events` are left empty then (a run of 2M records held
    /// 359-483 MB once loaded whole). `None`: the records are the run's own.
    pub events_from: Option<PathBuf>,
}

impl NewRun {
    /// Loads and validates the run folder `dir` with the one loader every command uses
    /// (exit 2 naming the file and the cause; nothing is stored then). Its records are
    /// checked and left in the folder, for the store to stream.
    pub fn load(dir: &Path, origin: Origin) -> Result<NewRun> {
        let run =
            Run::load_loops_only(dir).with_context(|| format!("loading run {}", dir.display()))?;
        Ok(NewRun {
            run,
            origin,
            source: Some(dir.display().to_string()),
            events_from: Some(dir.to_path_buf()),
        })
    }

    /// Whether the run has setup records (`setup_events.jsonl`), stored apart from its own.
    pub fn has_setup_events(&self) -> bool {
        match &self.events_from {
            Some(dir) => dir.join(SETUP_EVENTS_JSONL).exists(),
            None => self.run.setup_events.is_some(),
        }
    }

    /// Hands `each` the run's records in order (with `setup`, its setup records), from
    /// its folder one line at a time, checked again as they are read: the folder may have
    /// changed since it was loaded, and an error then ends the store's transaction.
    pub fn each_event(
        &self,
        setup: bool,
        each: &mut dyn FnMut(&Event) -> Result<()>,
    ) -> Result<()> {
        if let Some(dir) = &self.events_from {
            return Run::each_event(dir, &self.run.meta, setup, &mut |e| each(&e))
                .with_context(|| format!("storing run {}", dir.display()));
        }
        let held = if setup {
            self.run.setup_events.as_deref().unwrap_or_default()
        } else {
            &self.run.events
        };
        held.iter().try_for_each(each)
    }

    /// The pilot's hash as the run recorded it; a run that recorded none gets the hash of
    /// its pilot file when that is still readable, else of its URL, so it still groups
    /// only with runs of the same scenario.
    pub fn pilot_hash(&self) -> String {
        let meta = &self.run.meta;
        if !meta.pilot_hash.is_empty() {
            return meta.pilot_hash.clone();
        }
        let bytes = meta
            .pilot_file
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .unwrap_or_else(|| meta.url.clone().into_bytes());
        hex(&Sha256::digest(&bytes))
    }
}

/// SHA-256 of the run's `run.json` and loops as serialized: equal for a run and any copy
/// of its folder, the same test [`Run::same_run`] makes, so a run added twice is kept once.
pub fn content_hash(run: &Run) -> String {
    let mut h = Sha256::new();
    h.update(serde_json::to_vec(&run.meta).unwrap_or_default());
    h.update(b"\n");
    h.update(serde_json::to_vec(&run.loops).unwrap_or_default());
    hex(&h.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
