//! The run folder on disk: write it, and load it back with validation whose every error
//! names the file (and line) and exits 2.

use std::fs;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result};

use crate::bounded::{self, bad, bad_json, open_run_file, RowBound, TooLong, MAX_RUN_JSON_BYTES};
use crate::figures::{loop_figure_mismatch, Stated};
use crate::gestures::load_gestures;
use crate::model::{Event, Loop, Outcome, Run, RunMeta, SocketSource, SCHEMA_VERSION};
use crate::time::rfc3339_utc;
use crate::validate::{self, EventTally, LoopTally, TimeOrder};

pub use crate::layout::{EVENTS_JSONL, LOOPS_CSV, LOOP_COLUMNS, RUN_JSON};
/// What the page recorded before the clear on attach (load and setup), apart from the loops.
pub const SETUP_EVENTS_JSONL: &str = "setup_events.jsonl";
/// The capture of a run made with `--capture`, and its full summary (`arena-perf wire`).
pub const WIRE_PCAP: &str = "wire.pcap";
pub const WIRE_JSON: &str = "wire.json";
/// Chromium's trace of a run made with `--trace`, the loops merged in as a track.
pub const TRACE_JSON: &str = "trace.json";

/// Writes `bytes` next to `path` and renames it into place, so a reader (or a run killed
/// mid-write) never sees half a file.
fn write_atomic(path: &Path, fill: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    let tmp = path.with_extension("tmp-write");
    {
        let file = fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let mut w = BufWriter::new(file);
        fill(&mut w)?;
        // Synced before the rename, so the name never points at blocks not yet written.
        w.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all())
            .with_context(|| format!("writing {}", tmp.display()))?;
    }
    fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

fn write_events(path: &Path, events: &[Event]) -> Result<()> {
    write_atomic(path, |w| {
        for e in events {
            serde_json::to_writer(&mut *w, e)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })
}

impl Run {
    /// Writes `run.json`, `loops.csv`, `events.jsonl` and, when the run has them,
    /// `setup_events.jsonl` into `dir` (created if needed).
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
        write_events(&dir.join(EVENTS_JSONL), &self.events)?;
        if let Some(setup) = &self.setup_events {
            write_events(&dir.join(SETUP_EVENTS_JSONL), setup)?;
        }
        Ok(())
    }

    /// Loads and validates a run folder. Errors (exit 2) name the file and line: not a
    /// run folder, another schema version, malformed rows, unknown or missing columns,
    /// values that are not finite or out of range, metrics that disagree with their
    /// times, invariant breaks `run.json` did not record, times out of the order the
    /// recorder writes them in, summary counts that disagree with the rows and records
    /// (`events.jsonl` cut short or emptied among them), an empty run. Reading is
    /// bounded too: a run file that is not a regular file (a device, FIFO or socket) is
    /// refused before it is opened, a line or row longer than
    /// [`MAX_LINE_BYTES`](crate::MAX_LINE_BYTES) once that much of it is read, a `run.json`
    /// larger than [`MAX_RUN_JSON_BYTES`] unread; so no folder makes loading hold more.
    pub fn load(dir: &Path) -> Result<Run> {
        let (meta, has) = load_meta(dir)?;
        let loops = load_loops(dir, &meta, has)?;
        let mut events = Vec::new();
        load_run_events(dir, &meta, &mut Records::Keep(&mut events))?;
        let mut setup = Vec::new();
        let setup_events =
            load_setup_events(dir, &meta, &mut Records::Keep(&mut setup))?.then_some(setup);
        let gestures = load_gestures(dir)?;
        Ok(Run {
            meta,
            loops,
            events,
            setup_events,
            gestures,
        })
    }

    /// Loads `run.json` and `loops.csv` only (the raw events can be large and no table
    /// needs them). Same validation as [`Run::load`]: `events.jsonl` is still read, line
    /// by line, and each line checked, but nothing of it is kept.
    pub fn load_loops_only(dir: &Path) -> Result<Run> {
        let (meta, has) = load_meta(dir)?;
        let loops = load_loops(dir, &meta, has)?;
        load_run_events(dir, &meta, &mut Records::Check)?;
        // Checked though not kept: one cut mid-line, or a link to /dev/zero, is refused by
        // every reader alike.
        load_setup_events(dir, &meta, &mut Records::Check)?;
        let gestures = load_gestures(dir)?;
        Ok(Run {
            meta,
            loops,
            events: Vec::new(),
            setup_events: None,
            gestures,
        })
    }

    /// True when `dir` holds a `run.json` (cheap test used to expand a folder of runs).
    /// Any file of that name counts, so one that is not a regular file (a FIFO, a device)
    /// is refused by name when the run is loaded, not passed over.
    pub fn is_run_folder(dir: &Path) -> bool {
        fs::metadata(dir.join(RUN_JSON)).is_ok_and(|m| !m.is_dir())
    }

    /// Run folders inside `dir` (or `dir` itself when it is one), sorted by path. Hidden
    /// entries are not runs: a run being written, or one whose writer was killed, is in a
    /// hidden folder until it is whole ([`crate::Staging`]).
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
            .filter_map(|e| e.ok())
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
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

/// Which of `run.json`'s summary fields that runs made before them lack the file states:
/// a field it does not state is not checked against the rows.
#[derive(Debug, Clone, Copy)]
struct SummaryHas {
    claimed: bool,
    figures: Stated,
}

fn load_meta(dir: &Path) -> Result<(RunMeta, SummaryHas)> {
    if !dir.is_dir() {
        return Err(bad(format!(
            "{}: not a run folder (not a directory)",
            dir.display()
        )));
    }
    let path = dir.join(RUN_JSON);
    let cannot = |e: io::Error| {
        bad(format!(
            "{}: not a run folder (cannot read {RUN_JSON}: {e})",
            dir.display()
        ))
    };
    let too_large = || {
        bad(format!(
            "{}: larger than {} MiB ({MAX_RUN_JSON_BYTES} bytes), the most a run.json may hold",
            path.display(),
            MAX_RUN_JSON_BYTES >> 20
        ))
    };
    let (file, len) = open_run_file(&path, cannot)?;
    if len > MAX_RUN_JSON_BYTES {
        return Err(too_large());
    }
    // Read through a cap as well: the file may have grown since its length was read.
    let mut text = String::new();
    file.take(MAX_RUN_JSON_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(cannot)?;
    if text.len() as u64 > MAX_RUN_JSON_BYTES {
        return Err(too_large());
    }
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
    let meta = serde_json::from_str::<RunMeta>(&text).map_err(|e| bad_json(&path, &e))?;
    validate::check_meta(&meta).map_err(|e| bad(format!("{}: {e}", path.display())))?;
    let states = |key: &str| {
        value
            .get("summary")
            .is_some_and(|s| s.get(key).is_some_and(|v| !v.is_null()))
    };
    let has = SummaryHas {
        claimed: states("claimed"),
        figures: Stated {
            replies_over_idle: states("replies_over_idle"),
            input_to_pixels: states("input_to_pixels"),
        },
    };
    Ok((meta, has))
}

fn load_loops(dir: &Path, meta: &RunMeta, has: SummaryHas) -> Result<Vec<Loop>> {
    let path = dir.join(LOOPS_CSV);
    let (file, _) = open_run_file(&path, |e| {
        bad(format!(
            "{}: not a run folder (cannot read {LOOPS_CSV}: {e})",
            dir.display()
        ))
    })?;
    let at = |line: u64, msg: &dyn std::fmt::Display| {
        bad(format!("{}: line {line}: {msg}", path.display()))
    };
    // A row past the bound stops the reading with the line it starts on (the csv error
    // itself has no position for a failed read).
    let csv_at = |line: u64, e: &csv::Error| match e.kind() {
        csv::ErrorKind::Io(io) => match TooLong::of(io) {
            Some(long) => at(long.line, long),
            None => at(line, e),
        },
        _ => at(line, e),
    };
    let mut rdr = csv::Reader::from_reader(RowBound::new(file));
    let headers = rdr.headers().map_err(|e| csv_at(1, &e))?.clone();
    let names: Vec<&str> = headers.iter().collect();
    let header = validate::check_header(&names).map_err(|e| at(1, &e))?;
    let mut loops = Vec::new();
    let mut breaks = (0u64, None::<String>);
    let mut tally = LoopTally::default();
    // The page hook stamps sends, receipts and draws itself (see `recorder_order_break`).
    let page_sockets = meta.socket_source == SocketSource::PageHook;
    let reply_oracle = meta.answer.as_ref().is_none_or(|a| a.oracle == "reply");
    let mut rec = csv::StringRecord::new();
    loop {
        let more = rdr.read_record(&mut rec).map_err(|e| {
            let line = e.position().map(|p| p.line()).unwrap_or(0);
            csv_at(line, &e)
        })?;
        if !more {
            break;
        }
        let line = rec.position().map(|p| p.line()).unwrap_or(0);
        let mut l: Loop = rec.deserialize(Some(&headers)).map_err(|e| at(line, &e))?;
        check_row(&mut l, meta, header, loops.len()).map_err(|e| at(line, &e))?;
        if let Some(why) = page_sockets
            .then(|| validate::recorder_order_break(&l, reply_oracle))
            .flatten()
        {
            return Err(at(line, &why));
        }
        tally.add(&l);
        if let Some(why) = validate::invariant_break(&l) {
            breaks.0 += 1;
            breaks
                .1
                .get_or_insert_with(|| format!("line {line}: {why}"));
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
    check_counts(&path, meta, has, loops.len() as u64, &tally, breaks)?;
    if let Some(t) = &meta.summary.typing {
        validate::check_typing(t, &loops)
            .map_err(|e| bad(format!("{}: {e}", path.with_file_name(RUN_JSON).display())))?;
    }
    if let Some(why) = loop_figure_mismatch(&meta.summary, &loops, has.figures) {
        return Err(bad(format!(
            "{}: {why}: the two files are not of one run",
            path.with_file_name(RUN_JSON).display()
        )));
    }
    Ok(loops)
}

/// One row's own checks: its position, its arm, its values (see [`validate::check_loop`]);
/// a run from before `outcome` gets it from `answered`.
fn check_row(
    l: &mut Loop,
    meta: &RunMeta,
    header: validate::Header,
    pos: usize,
) -> Result<(), String> {
    if l.index != pos as u64 {
        return Err(format!(
            "index {} where {pos} was due: rows are missing, repeated or out of order",
            l.index
        ));
    }
    if l.arm != meta.arm {
        return Err(format!(
            "arm `{}` differs from run.json's arm `{}`",
            l.arm, meta.arm
        ));
    }
    if !header.has_outcome {
        l.outcome = if l.answered {
            Outcome::Answered
        } else {
            Outcome::Unanswered
        };
    }
    validate::check_loop(l, header)
}

/// The rows against `run.json`: as many as its summary counts (rows cut or pasted
/// otherwise go unseen), each outcome as many times as the summary counts it (`claimed`
/// only where the file states it), and exactly the invariant breaks the pilot recorded.
fn check_counts(
    path: &Path,
    meta: &RunMeta,
    has: SummaryHas,
    rows: u64,
    tally: &LoopTally,
    breaks: (u64, Option<String>),
) -> Result<()> {
    let s = &meta.summary;
    if rows != s.loops {
        return Err(bad(format!(
            "{}: {rows} rows, but run.json's summary counts {} loops: the two files are not of one run",
            path.display(),
            s.loops
        )));
    }
    if let (found, Some(first)) = &breaks {
        if *found > s.invariant_violations {
            let msg = validate::undeclared_breaks(*found, s.invariant_violations, first);
            return Err(bad(format!("{}: {msg}", path.display())));
        }
    }
    let run_json = path.with_file_name(RUN_JSON);
    let outcomes = [
        ("answered", s.answered, tally.answered, true),
        ("unanswered", s.unanswered, tally.unanswered, true),
        ("claimed", s.claimed, tally.claimed, has.claimed),
    ];
    for (name, says, holds, stated) in outcomes {
        if stated && says != holds {
            return Err(bad(format!(
                "{}: summary.{name} says {says}, {LOOPS_CSV} holds {holds} {name} loops",
                run_json.display()
            )));
        }
    }
    if breaks.0 != s.invariant_violations {
        return Err(bad(format!(
            "{}: summary.invariant_violations says {}, {LOOPS_CSV} holds {} loop(s) breaking t_input <= t_send <= t_recv <= t_draw <= t_paint",
            run_json.display(),
            s.invariant_violations,
            breaks.0
        )));
    }
    Ok(())
}

/// `setup_events.jsonl`, optional, but whatever is there is read: one that is not a
/// regular file is refused, not taken for absent. False when there is none.
fn load_setup_events(dir: &Path, meta: &RunMeta, to: &mut Records) -> Result<bool> {
    let setup = dir.join(SETUP_EVENTS_JSONL);
    match fs::metadata(&setup) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        _ => load_events(&setup, to, setup_order(meta), None).map(|_| true),
    }
}

/// How the records of `setup_events.jsonl` are ordered: its drains may have taken the
/// sockets from either source, so only the page's own stamps are.
fn setup_order(meta: &RunMeta) -> TimeOrder {
    match meta.socket_source {
        SocketSource::AppRecorder => TimeOrder::Unordered,
        _ => TimeOrder::PageOnly,
    }
}

/// Reads `events.jsonl` and checks it against `run.json`'s summary: its record count (a
/// file cut short or emptied says what is missing) and traffic figures.
fn load_run_events(dir: &Path, meta: &RunMeta, to: &mut Records) -> Result<()> {
    let path = dir.join(EVENTS_JSONL);
    let order = match meta.socket_source {
        SocketSource::PageHook => TimeOrder::WithSockets,
        SocketSource::Cdp => TimeOrder::PageOnly,
        SocketSource::AppRecorder => TimeOrder::Unordered,
    };
    let s = &meta.summary;
    let mut tally = EventTally::new(meta.socket_source == SocketSource::Cdp, s.stale_records);
    load_events(&path, to, order, Some(&mut tally))?;
    validate::check_event_counts(s, &tally).map_err(|e| bad(format!("{}: {e}", path.display())))?;
    validate::check_traffic(s, &tally)
        .map_err(|e| bad(format!("{}: {e}", dir.join(RUN_JSON).display())))
}

/// Where [`load_events`] puts each record it has checked.
enum Records<'a> {
    /// Nowhere: tables never need the records, and checking holds a line buffer only.
    Check,
    Keep(&'a mut Vec<Event>),
    /// To a consumer, one at a time (a store writing them as they are read).
    Each(&'a mut dyn FnMut(Event) -> Result<()>),
}

impl Run {
    /// Streams the records of the run folder `dir`'s `events.jsonl` (with `setup`, of its
    /// `setup_events.jsonl`, when it has one) to `each`, one at a time, checked as
    /// [`Run::load`] checks them against `meta` (the folder's, as loaded). The counts
    /// against `meta`'s summary are checked at the end, after `each` has had every
    /// record: a consumer writes them where an error drops them all (a transaction).
    /// Holds one line at a time, whatever the file's size.
    pub fn each_event(
        dir: &Path,
        meta: &RunMeta,
        setup: bool,
        each: &mut dyn FnMut(Event) -> Result<()>,
    ) -> Result<()> {
        let mut to = Records::Each(each);
        if setup {
            load_setup_events(dir, meta, &mut to).map(|_| ())
        } else {
            load_run_events(dir, meta, &mut to)
        }
    }
}

/// Reads `events.jsonl` (or `setup_events.jsonl`) line by line and checks each record
/// (JSON shape, a known kind, a finite time, sequence order, and the time order `order`
/// says the recorder wrote them in), and puts them where `to` says (a line longer than
/// [`bounded::MAX_LINE_BYTES`] is refused at the bound); `tally` counts them for the
/// summary's figures.
fn load_events(
    path: &Path,
    to: &mut Records,
    order: TimeOrder,
    mut tally: Option<&mut EventTally>,
) -> Result<()> {
    let (file, _) = open_run_file(path, |e| {
        bad(format!(
            "{}: not a run folder (cannot read it: {e})",
            path.display()
        ))
    })?;
    let mut r = BufReader::with_capacity(1 << 16, file);
    let mut buf = Vec::new();
    let mut prev_seq = None;
    // The last record the page stamped as it wrote it: (line, kind, t_ms).
    let mut last_stamped: Option<(u64, String, f64)> = None;
    for n in 1u64.. {
        buf.clear();
        let at = |msg: &dyn std::fmt::Display| bad(format!("{}: line {n}: {msg}", path.display()));
        if bounded::read_line(&mut r, &mut buf, n).map_err(|e| at(&e))? == 0 {
            break;
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let mut record = |seq: u64, kind: &str, t_ms: f64, event: &str, size, class: &str| {
            validate::check_event(kind, t_ms).map_err(|e| at(&e))?;
            if prev_seq.is_some_and(|p| seq < p) {
                return Err(at(&format_args!(
                    "seq {seq} after seq {}: records are written in sequence order",
                    prev_seq.unwrap_or_default()
                )));
            }
            prev_seq = Some(seq);
            if order.stamped(kind, event) {
                if let Some((line, before, t)) = last_stamped.as_ref().filter(|l| t_ms < l.2) {
                    return Err(at(&format_args!(
                        "{kind} at t_ms {t_ms} is before the {before} at line {line} (t_ms {t}): the page recorder stamps these records as it writes them, so their times never go back"
                    )));
                }
                last_stamped = Some((n, kind.to_string(), t_ms));
            }
            if let Some(t) = tally.as_deref_mut() {
                t.add(seq, kind, size, class);
            }
            Ok(())
        };
        if let Records::Check = to {
            let e: validate::EventView = serde_json::from_slice(&buf).map_err(|e| at(&e))?;
            record(e.seq, &e.kind, e.t_ms, &e.event, e.size, &e.class)?;
            continue;
        }
        let e: Event = serde_json::from_slice(&buf).map_err(|e| at(&e))?;
        record(e.seq, &e.kind, e.t_ms, &e.event, e.size, &e.class)?;
        match to {
            Records::Keep(v) => v.push(e),
            Records::Each(f) => f(e)?,
            Records::Check => {}
        }
    }
    Ok(())
}

/// `reports/<UTC start, compact>-<arm>` (made unique with a counter if it exists).
pub fn default_run_dir(base: &Path, started: SystemTime, arm: &str) -> PathBuf {
    let stamp: String = rfc3339_utc(started)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == 'T')
        .collect();
    let safe_arm: String = arm
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut dir = base.join(format!("{stamp}-{safe_arm}"));
    let mut n = 2;
    while dir.exists() {
        dir = base.join(format!("{stamp}-{safe_arm}-{n}"));
        n += 1;
    }
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_dirs_do_not_collide() {
        let tmp = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        let a = default_run_dir(tmp.path(), now, "lazy png");
        std::fs::create_dir_all(&a).unwrap();
        let b = default_run_dir(tmp.path(), now, "lazy png");
        assert_ne!(a, b);
        assert!(a
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with("-lazy_png"));
    }
}
