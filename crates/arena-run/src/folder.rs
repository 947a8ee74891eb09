//! The run folder on disk: write it, and load it back with validation whose every error
//! names the file (and line) and exits 2.

use std::fs;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use arena_report::Exit;

use crate::model::{Event, Loop, Run, RunMeta, SCHEMA_VERSION};

pub const RUN_JSON: &str = "run.json";
pub const LOOPS_CSV: &str = "loops.csv";
pub const EVENTS_JSONL: &str = "events.jsonl";
/// The capture of a run made with `--capture`, and its full summary (`arena-perf wire`).
pub const WIRE_PCAP: &str = "wire.pcap";
pub const WIRE_JSON: &str = "wire.json";

fn bad(msg: String) -> anyhow::Error {
    anyhow::Error::new(Exit::bad_input(msg))
}

/// Writes `bytes` next to `path` and renames it into place, so a reader (or a run killed
/// mid-write) never sees half a file.
fn write_atomic(path: &Path, fill: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    let tmp = path.with_extension("tmp-write");
    {
        let file = fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let mut w = BufWriter::new(file);
        fill(&mut w)?;
        w.flush()
            .with_context(|| format!("writing {}", tmp.display()))?;
    }
    fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

impl Run {
    /// Writes `run.json`, `loops.csv` and `events.jsonl` into `dir` (created if needed).
    pub fn write(&self, dir: &Path) -> Result<()> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        write_atomic(&dir.join(RUN_JSON), |w| {
            serde_json::to_writer_pretty(&mut *w, &self.meta)?;
            w.write_all(b"\n")?;
            Ok(())
        })?;
        write_atomic(&dir.join(LOOPS_CSV), |w| {
            let mut csv = csv::Writer::from_writer(w);
            if self.loops.is_empty() {
                // A header keeps an empty partial run recognisable as a loops table.
                csv.write_record(LOOP_COLUMNS)?;
            }
            for l in &self.loops {
                csv.serialize(l)?;
            }
            csv.flush()?;
            Ok(())
        })?;
        write_atomic(&dir.join(EVENTS_JSONL), |w| {
            for e in &self.events {
                serde_json::to_writer(&mut *w, e)?;
                w.write_all(b"\n")?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Loads and validates a run folder. Errors (exit 2) name the file and line: not a
    /// run folder, another schema version, malformed rows, an empty run.
    pub fn load(dir: &Path) -> Result<Run> {
        let meta = load_meta(dir)?;
        let loops = load_loops(dir, &meta)?;
        let events = load_events(dir)?;
        Ok(Run {
            meta,
            loops,
            events,
        })
    }

    /// Loads `run.json` and `loops.csv` only (the raw events can be large and no table
    /// needs them). Same validation as [`Run::load`].
    pub fn load_loops_only(dir: &Path) -> Result<Run> {
        let meta = load_meta(dir)?;
        let loops = load_loops(dir, &meta)?;
        if !dir.join(EVENTS_JSONL).is_file() {
            return Err(bad(format!(
                "{}: not a run folder (no {EVENTS_JSONL})",
                dir.display()
            )));
        }
        Ok(Run {
            meta,
            loops,
            events: Vec::new(),
        })
    }

    /// True when `dir` holds a `run.json` (cheap test used to expand a folder of runs).
    pub fn is_run_folder(dir: &Path) -> bool {
        dir.join(RUN_JSON).is_file()
    }

    /// Run folders inside `dir` (or `dir` itself when it is one), sorted by path.
    pub fn find_all(dir: &Path) -> Result<Vec<PathBuf>> {
        if Run::is_run_folder(dir) {
            return Ok(vec![dir.to_path_buf()]);
        }
        let rd = fs::read_dir(dir).map_err(|e| {
            bad(format!(
                "{}: not a run folder and not a folder of runs ({e})",
                dir.display()
            ))
        })?;
        let mut out: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| Run::is_run_folder(p))
            .collect();
        out.sort();
        if out.is_empty() {
            return Err(bad(format!(
                "{}: not a run folder (no {RUN_JSON}) and holds no run folders",
                dir.display()
            )));
        }
        Ok(out)
    }
}

/// Column order of `loops.csv` (matches the field order of [`Loop`]).
pub const LOOP_COLUMNS: [&str; 20] = [
    "index",
    "arm",
    "label",
    "event",
    "cold",
    "answered",
    "outcome",
    "t_input",
    "t_send",
    "t_recv",
    "t_draw",
    "t_paint",
    "inputToSocket",
    "sendToRecv",
    "recvToDraw",
    "inputToPaint",
    "t_answer",
    "inputToPixels",
    "reply_bytes",
    "reply_frames",
];

fn load_meta(dir: &Path) -> Result<RunMeta> {
    if !dir.is_dir() {
        return Err(bad(format!(
            "{}: not a run folder (not a directory)",
            dir.display()
        )));
    }
    let path = dir.join(RUN_JSON);
    let text = fs::read_to_string(&path).map_err(|e| {
        bad(format!(
            "{}: not a run folder (cannot read {RUN_JSON}: {e})",
            dir.display()
        ))
    })?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        bad(format!(
            "{}: line {}, column {}: not valid JSON: {e}",
            path.display(),
            e.line(),
            e.column()
        ))
    })?;
    // The version is checked before the shape, so a run from another version says so
    // instead of reporting whichever field happens to differ first.
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v == SCHEMA_VERSION as u64 => {}
        Some(v) => {
            return Err(bad(format!(
                "{}: schema_version {v}, but this arena-perf reads schema_version {SCHEMA_VERSION}",
                path.display()
            )))
        }
        None => {
            return Err(bad(format!(
                "{}: not a run file (no numeric schema_version)",
                path.display()
            )))
        }
    }
    serde_json::from_str::<RunMeta>(&text).map_err(|e| {
        bad(format!(
            "{}: line {}, column {}: {e}",
            path.display(),
            e.line(),
            e.column()
        ))
    })
}

fn load_loops(dir: &Path, meta: &RunMeta) -> Result<Vec<Loop>> {
    let path = dir.join(LOOPS_CSV);
    let file = fs::File::open(&path).map_err(|e| {
        bad(format!(
            "{}: not a run folder (cannot read {LOOPS_CSV}: {e})",
            dir.display()
        ))
    })?;
    let mut rdr = csv::Reader::from_reader(BufReader::new(file));
    let mut loops = Vec::new();
    for rec in rdr.deserialize::<Loop>() {
        let l = rec.map_err(|e| {
            let line = e.position().map(|p| p.line()).unwrap_or(0);
            bad(format!("{}: line {line}: {e}", path.display()))
        })?;
        if l.arm != meta.arm {
            return Err(bad(format!(
                "{}: line {}: arm `{}` differs from run.json's arm `{}`",
                path.display(),
                loops.len() + 2,
                l.arm,
                meta.arm
            )));
        }
        loops.push(l);
    }
    if loops.is_empty() {
        return Err(bad(format!(
            "{}: empty run: no loops (run status {:?}{})",
            path.display(),
            meta.status,
            meta.status_message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        )));
    }
    Ok(loops)
}

fn load_events(dir: &Path) -> Result<Vec<Event>> {
    let path = dir.join(EVENTS_JSONL);
    let file = fs::File::open(&path).map_err(|e| {
        bad(format!(
            "{}: not a run folder (cannot read {EVENTS_JSONL}: {e})",
            dir.display()
        ))
    })?;
    let mut events = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| bad(format!("{}: line {}: {e}", path.display(), i + 1)))?;
        if line.trim().is_empty() {
            continue;
        }
        let e: Event = serde_json::from_str(&line)
            .map_err(|e| bad(format!("{}: line {}: {e}", path.display(), i + 1)))?;
        events.push(e);
    }
    Ok(events)
}
