//! `logs gc`: JVM unified-logging GC logs (`-Xlog:gc`, `-Xlog:gc*`, any decorators) from
//! G1, Parallel and ZGC, reduced to pause tables by kind and cause.
//!
//! Pauses are read from the `gc` tag's summary line (`GC(3) Pause Young (Normal) (G1
//! Evacuation Pause) 7M->2M(66M) 1.528ms`) and, for ZGC, from `gc,phases` (`Pause Mark
//! Start 0.009ms`); the `gc,start` line of the same pause has no duration and is not
//! counted twice. ZGC's `Allocation Stall` lines are kept apart: they are what a latency
//! budget feels.

use std::path::PathBuf;

use arena_report::{fmt_count, fmt_ms, fmt_pct_change, Cell, Column, Table};
use arena_stats::{noise_verdict, pct_change, NoiseRule, StreamingSummary};

use crate::scan::{scan_path_parallel, threads_for, Fold, LineParser, Parsed, ScanReport};
use crate::unified::{decorations, parse_f64, tags_and_message};
use crate::{fmt_mb, fmt_secs};

/// Heap occupancy around a collection, in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Heap {
    pub before: u64,
    pub after: u64,
    pub committed: Option<u64>,
}

/// One thing a GC log says that the tables use.
#[derive(Debug, Clone, PartialEq)]
pub enum GcEvent<'a> {
    /// A stop-the-world pause: `kind` is `Young (Normal)`, `Full`, `Remark`, `Mark Start`...
    Pause {
        kind: &'a str,
        cause: Option<&'a str>,
        heap: Option<Heap>,
        ms: f64,
    },
    /// A finished concurrent cycle (`Concurrent Mark Cycle 6.228ms`), or a ZGC collection
    /// (`Garbage Collection (Allocation Rate) 232M(91%)->168M(66%)`, no duration).
    Cycle {
        name: &'a str,
        heap: Option<Heap>,
        ms: Option<f64>,
    },
    /// ZGC `Allocation Stall (main) 17.367ms` / `Relocation Stall (...)`.
    Stall {
        what: &'a str,
        thread: &'a str,
        ms: f64,
    },
    /// `Using G1`, `Using The Z Garbage Collector`.
    Collector(&'a str),
    /// `gc,init` `Heap Region Size: 1M`.
    RegionSize(u64),
    /// G1 `To-space exhausted`.
    ToSpaceExhausted,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GcRecord<'a> {
    pub time: Option<f64>,
    pub gc_id: Option<u64>,
    pub event: GcEvent<'a>,
}

/// Reads GC lines; remembers the first and last time seen on any line (the log's span).
#[derive(Debug, Clone)]
pub struct GcParser {
    first_time: Option<f64>,
    /// The last line's decorations, parsed only when asked: copying a few bytes a line is
    /// cheaper than parsing a timestamp a line.
    last_raw: [u8; 96],
    last_len: usize,
}

impl Default for GcParser {
    fn default() -> Self {
        GcParser {
            first_time: None,
            last_raw: [0; 96],
            last_len: 0,
        }
    }
}

impl GcParser {
    /// First and last time seen on any timed line, in seconds on the log's clock.
    pub fn span(&self) -> Option<(f64, f64)> {
        let last = decorations(&self.last_raw[..self.last_len])?.time()?;
        Some((self.first_time?, last))
    }
}

/// The message without its `GC(n) ` prefix.
fn after_gc_id(msg: &[u8]) -> &[u8] {
    if msg.starts_with(b"GC(") {
        if let Some(close) = memchr::memchr(b')', msg) {
            return crate::unified::trim(&msg[close + 1..]);
        }
    }
    msg
}

impl LineParser for GcParser {
    type Record<'a> = GcRecord<'a>;
    const KIND: &'static str = "a GC log (-Xlog:gc)";

    fn parse<'a>(&mut self, line: &'a [u8]) -> Parsed<GcRecord<'a>> {
        let (tags, msg) = match tags_and_message(line) {
            Some((tags, msg)) => {
                match tags {
                    Some(t) if t == b"gc" || t.starts_with(b"gc,") => {}
                    // Another subsystem's line: not GC logging.
                    _ => return Parsed::Unknown,
                }
                // Keep the decorations of the latest line for the span; they are read once,
                // at the end, instead of parsing a timestamp on every line.
                let n = (line.len() - msg.len()).min(self.last_raw.len());
                self.last_raw[..n].copy_from_slice(&line[..n]);
                self.last_len = n;
                if self.first_time.is_none() {
                    self.first_time = decorations(line).and_then(|d| d.time());
                }
                (tags.unwrap_or(b"gc"), msg)
            }
            // `-Xlog:gc::none` writes bare messages.
            None if line.starts_with(b"GC(")
                || line.starts_with(b"Using ")
                || line.starts_with(b"Allocation Stall (") =>
            {
                (&b"gc"[..], line)
            }
            None => return Parsed::Unknown,
        };
        // Only three tags carry anything the tables use; reject the rest (most of a gc*
        // log) before touching the message.
        let summary = tags == b"gc";
        let phases = tags == b"gc,phases";
        if !(summary || phases || tags == b"gc,init") {
            return Parsed::Known;
        }
        let pause = after_gc_id(msg).starts_with(b"Pause ");
        if phases && !pause {
            return Parsed::Known;
        }
        match parse_message(tags, msg) {
            Some((gc_id, event)) => Parsed::Record(GcRecord {
                time: decorations(line).and_then(|d| d.time()),
                gc_id,
                event,
            }),
            // A pause line without a readable duration is damaged (cut off, mangled), not
            // merely uninteresting.
            None if pause => Parsed::Unknown,
            None => Parsed::Known,
        }
    }

    fn time_of(r: &GcRecord<'_>) -> Option<f64> {
        r.time
    }
}

/// Reads the message of a `gc*` line; `None` for lines the tables do not use.
pub fn parse_message<'a>(tags: &[u8], msg: &'a [u8]) -> Option<(Option<u64>, GcEvent<'a>)> {
    let msg = std::str::from_utf8(msg).ok()?;
    let (gc_id, rest) = match msg.strip_prefix("GC(") {
        Some(r) => {
            let close = r.find(')')?;
            let id = r[..close].parse::<u64>().ok()?;
            (Some(id), r[close + 1..].trim_start())
        }
        None => (None, msg),
    };
    let rest = rest.trim_end();
    let summary_tag = tags == b"gc";
    if let Some(p) = rest.strip_prefix("Pause ") {
        // ZGC prints its pauses under gc,phases; G1/Parallel summarise under gc.
        if !(summary_tag || tags == b"gc,phases") {
            return None;
        }
        let (body, ms) = split_duration(p)?;
        let (body, heap) = split_heap(body);
        let (kind, cause) = kind_and_cause(body)?;
        return Some((
            gc_id,
            GcEvent::Pause {
                kind,
                cause,
                heap,
                ms,
            },
        ));
    }
    if !summary_tag {
        if tags == b"gc,init" {
            if let Some(sz) = rest.strip_prefix("Heap Region Size: ") {
                return Some((gc_id, GcEvent::RegionSize(parse_size(sz.trim())?)));
            }
        }
        return None;
    }
    if rest.starts_with("Concurrent ") {
        let (name, ms) = split_duration(rest)?;
        return Some((
            gc_id,
            GcEvent::Cycle {
                name,
                heap: None,
                ms: Some(ms),
            },
        ));
    }
    if rest.starts_with("Garbage Collection (") {
        let (body, heap) = split_heap(rest);
        // The gc,start twin of this line has no heap figures: only count the summary.
        heap?;
        return Some((
            gc_id,
            GcEvent::Cycle {
                name: body,
                heap,
                ms: None,
            },
        ));
    }
    for what in ["Allocation Stall", "Relocation Stall"] {
        if let Some(r) = rest.strip_prefix(what) {
            let (body, ms) = split_duration(r)?;
            let thread = body.trim().trim_start_matches('(').trim_end_matches(')');
            return Some((gc_id, GcEvent::Stall { what, thread, ms }));
        }
    }
    if let Some(name) = rest.strip_prefix("Using ") {
        return Some((gc_id, GcEvent::Collector(name)));
    }
    if rest.starts_with("To-space exhausted") {
        return Some((gc_id, GcEvent::ToSpaceExhausted));
    }
    None
}

/// `... 1.528ms` -> (`...`, 1.528).
fn split_duration(s: &str) -> Option<(&str, f64)> {
    let s = s.trim_end();
    let sp = s.rfind(' ')?;
    let num = s[sp + 1..].strip_suffix("ms")?;
    // A negative duration is a damaged line, not a pause.
    let ms = parse_f64(num.as_bytes()).filter(|ms| *ms >= 0.0)?;
    Some((s[..sp].trim_end(), ms))
}

/// `Young (Normal) (G1 Evacuation Pause) 7M->2M(66M)` -> (`Young (Normal) (G1 ...)`, heap).
/// Also ZGC's `232M(91%)->168M(66%)`.
fn split_heap(s: &str) -> (&str, Option<Heap>) {
    let Some(sp) = s.rfind(' ') else {
        return (s, None);
    };
    let tok = &s[sp + 1..];
    let Some(arrow) = tok.find("->") else {
        return (s, None);
    };
    let strip_pct = |x: &str| -> Option<u64> {
        let x = match x.find('(') {
            Some(p) if x.ends_with("%)") => &x[..p],
            _ => x,
        };
        parse_size(x)
    };
    let before = strip_pct(&tok[..arrow]);
    let right = &tok[arrow + 2..];
    let (after, committed) = match right.find('(') {
        Some(p) if !right.ends_with("%)") => (
            parse_size(&right[..p]),
            right[p + 1..].strip_suffix(')').and_then(parse_size),
        ),
        _ => (strip_pct(right), None),
    };
    match (before, after) {
        (Some(before), Some(after)) => (
            s[..sp].trim_end(),
            Some(Heap {
                before,
                after,
                committed,
            }),
        ),
        _ => (s, None),
    }
}

/// `Young (Normal) (G1 Evacuation Pause)` -> (`Young (Normal)`, `G1 Evacuation Pause`);
/// `Full (System.gc())` -> (`Full`, `System.gc()`); `Remark` -> (`Remark`, None).
fn kind_and_cause(s: &str) -> Option<(&str, Option<&str>)> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    // Balanced parenthesised groups, since causes like `System.gc()` nest.
    let mut groups: Vec<(usize, usize)> = Vec::new();
    let bytes = s.as_bytes();
    let mut depth = 0usize;
    let mut open = 0usize;
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'(' => {
                if depth == 0 {
                    open = i;
                }
                depth += 1;
            }
            b')' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    groups.push((open, i));
                }
            }
            _ => {}
        }
    }
    match groups.len() {
        0 => Some((s, None)),
        1 => {
            let (o, c) = groups[0];
            // Parallel's `Young (Allocation Failure)`: the one group is the cause.
            Some((s[..o].trim_end(), Some(&s[o + 1..c])))
        }
        _ => {
            let (o, c) = groups[groups.len() - 1];
            Some((s[..o].trim_end(), Some(&s[o + 1..c])))
        }
    }
}

/// `7M`, `15570K`, `2G`, `512B` -> bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mul) = match s.as_bytes().last()? {
        b'B' => (&s[..s.len() - 1], 1u64),
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        b'T' => (&s[..s.len() - 1], 1 << 40),
        _ => return None,
    };
    let n = parse_f64(num.as_bytes())?;
    if n < 0.0 {
        return None;
    }
    Some((n * mul as f64) as u64)
}

fn ms_summary() -> StreamingSummary {
    StreamingSummary::new(1000.0)
}

/// Pause statistics of one group (a kind and cause, a window, a whole file).
#[derive(Debug, Clone)]
pub struct PauseStats {
    pub ms: StreamingSummary,
    pub humongous: u64,
    pub humongous_ms: f64,
}

impl Default for PauseStats {
    fn default() -> Self {
        PauseStats {
            ms: ms_summary(),
            humongous: 0,
            humongous_ms: 0.0,
        }
    }
}

impl PauseStats {
    fn merge(&mut self, other: &PauseStats) {
        self.ms.merge(&other.ms);
        self.humongous += other.humongous;
        self.humongous_ms += other.humongous_ms;
    }

    fn record(&mut self, ms: f64, humongous: bool) {
        self.ms.record(ms);
        if humongous {
            self.humongous += 1;
            self.humongous_ms += ms;
        }
    }
}

/// Everything `logs gc` knows about one file, built in one streaming pass.
#[derive(Debug, Clone)]
pub struct GcSummary {
    pub scan: ScanReport,
    pub collector: Option<String>,
    pub region_size: Option<u64>,
    pub span: Option<(f64, f64)>,
    pub all: PauseStats,
    /// (kind, cause) in first-seen order.
    pub by_kind: Vec<(String, String, PauseStats)>,
    /// (name, count, summary of the durations that were logged).
    pub cycles: Vec<(String, u64, StreamingSummary)>,
    pub stalls: StreamingSummary,
    pub heap_before_mb: StreamingSummary,
    pub heap_after_mb: StreamingSummary,
    pub peak_committed: Option<u64>,
    pub to_space_exhausted: u64,
    /// Window index (from the first line's time) -> stats, when `--window` is given.
    pub windows: Vec<(i64, PauseStats, StreamingSummary)>,
    window: Option<f64>,
    origin: Option<f64>,
}

impl GcSummary {
    fn new(window: Option<f64>) -> Self {
        GcSummary {
            scan: ScanReport::default(),
            collector: None,
            region_size: None,
            span: None,
            all: PauseStats::default(),
            by_kind: Vec::new(),
            cycles: Vec::new(),
            stalls: ms_summary(),
            heap_before_mb: StreamingSummary::new(1000.0),
            heap_after_mb: StreamingSummary::new(1000.0),
            peak_committed: None,
            to_space_exhausted: 0,
            windows: Vec::new(),
            window: window.filter(|w| *w > 0.0),
            origin: None,
        }
    }
}

impl Fold<GcParser> for GcSummary {
    fn add(&mut self, r: GcRecord<'_>) {
        if let Some(t) = r.time {
            self.origin.get_or_insert(t);
        }
        let win = match (self.window, r.time, self.origin) {
            (Some(w), Some(t), Some(o)) => Some(((t - o) / w).floor() as i64),
            _ => None,
        };
        match r.event {
            GcEvent::Pause {
                kind,
                cause,
                heap,
                ms,
            } => {
                let cause = cause.unwrap_or("");
                let humongous = cause.contains("Humongous");
                self.all.record(ms, humongous);
                match self
                    .by_kind
                    .iter_mut()
                    .find(|(k, c, _)| k == kind && c == cause)
                {
                    Some((_, _, st)) => st.record(ms, humongous),
                    None => {
                        let mut st = PauseStats::default();
                        st.record(ms, humongous);
                        self.by_kind.push((kind.to_string(), cause.to_string(), st));
                    }
                }
                if let Some(h) = heap {
                    record_heap(self, h);
                }
                if let Some(w) = win {
                    window_slot(&mut self.windows, w).1.record(ms, humongous);
                }
            }
            GcEvent::Cycle { name, heap, ms } => {
                // ZGC names its collections by cause; count them as one kind of cycle.
                let key = if name.starts_with("Garbage Collection") {
                    "Garbage Collection (ZGC cycle)"
                } else {
                    name
                };
                match self.cycles.iter_mut().find(|(n, _, _)| n == key) {
                    Some((_, n, st)) => {
                        *n += 1;
                        if let Some(ms) = ms {
                            st.record(ms);
                        }
                    }
                    None => {
                        let mut st = ms_summary();
                        if let Some(ms) = ms {
                            st.record(ms);
                        }
                        self.cycles.push((key.to_string(), 1, st));
                    }
                }
                if let Some(h) = heap {
                    record_heap(self, h);
                }
            }
            GcEvent::Stall { ms, .. } => {
                self.stalls.record(ms);
                if let Some(w) = win {
                    window_slot(&mut self.windows, w).2.record(ms);
                }
            }
            GcEvent::Collector(name) => {
                if self.collector.is_none() {
                    self.collector = Some(name.to_string());
                }
            }
            GcEvent::RegionSize(b) => self.region_size = Some(b),
            GcEvent::ToSpaceExhausted => self.to_space_exhausted += 1,
        }
    }

    fn merge(&mut self, later: GcSummary) {
        self.all.merge(&later.all);
        for (k, c, st) in later.by_kind {
            match self
                .by_kind
                .iter_mut()
                .find(|(k2, c2, _)| *k2 == k && *c2 == c)
            {
                Some((_, _, mine)) => mine.merge(&st),
                None => self.by_kind.push((k, c, st)),
            }
        }
        for (name, n, st) in later.cycles {
            match self.cycles.iter_mut().find(|(n2, _, _)| *n2 == name) {
                Some((_, mine_n, mine)) => {
                    *mine_n += n;
                    mine.merge(&st);
                }
                None => self.cycles.push((name, n, st)),
            }
        }
        self.stalls.merge(&later.stalls);
        self.heap_before_mb.merge(&later.heap_before_mb);
        self.heap_after_mb.merge(&later.heap_after_mb);
        self.peak_committed = self.peak_committed.max(later.peak_committed);
        self.to_space_exhausted += later.to_space_exhausted;
        if self.collector.is_none() {
            self.collector = later.collector;
        }
        if later.region_size.is_some() {
            self.region_size = later.region_size;
        }
        // Windows need one origin: a windowed run is read on one thread, so there is
        // nothing to merge here.
    }
}

/// Reduces one GC log. `window` (seconds) splits pauses and stalls by time (read on one
/// thread, since windows count from the first line); otherwise large files are read in
/// parallel chunks.
pub fn summarize(path: &std::path::Path, window: Option<f64>) -> anyhow::Result<GcSummary> {
    let threads = if window.is_some() {
        1
    } else {
        threads_for(path)
    };
    summarize_with(path, window, threads)
}

/// [`summarize`] with an explicit thread count.
pub fn summarize_with(
    path: &std::path::Path,
    window: Option<f64>,
    threads: usize,
) -> anyhow::Result<GcSummary> {
    let (scan, mut s, parsers) =
        scan_path_parallel(path, threads, GcParser::default, || GcSummary::new(window))?;
    let first = parsers.iter().find_map(|p| p.first_time);
    let last = parsers.iter().rev().find_map(|p| p.span().map(|x| x.1));
    s.span = first.zip(last);
    s.scan = scan;
    s.windows.sort_by_key(|w| w.0);
    // A log of a run that never collected ("Using G1", init lines) is still a GC log.
    s.scan.require(GcParser::KIND, s.scan.understood(), 0.0)?;
    Ok(s)
}

fn record_heap(s: &mut GcSummary, h: Heap) {
    s.heap_before_mb.record(h.before as f64 / 1048576.0);
    s.heap_after_mb.record(h.after as f64 / 1048576.0);
    if let Some(c) = h.committed {
        s.peak_committed = Some(s.peak_committed.map_or(c, |p| p.max(c)));
    }
}

fn window_slot(
    windows: &mut Vec<(i64, PauseStats, StreamingSummary)>,
    w: i64,
) -> &mut (i64, PauseStats, StreamingSummary) {
    // Windows arrive in time order, so the slot is almost always the last one.
    let idx = match windows.iter().rposition(|x| x.0 == w) {
        Some(i) => i,
        None => {
            windows.push((w, PauseStats::default(), ms_summary()));
            windows.len() - 1
        }
    };
    &mut windows[idx]
}

/// Options of `logs gc`.
#[derive(Debug, Clone, Default)]
pub struct GcOptions {
    pub files: Vec<PathBuf>,
    pub window: Option<f64>,
}

/// The tables `logs gc` prints: per file, pauses by kind and cause (and by window); with
/// several files, one overview with a column per file and deltas against the first.
pub fn run(opts: &GcOptions) -> anyhow::Result<Vec<Table>> {
    let sums = summarize_all(opts)?;
    let mut tables = Vec::new();
    for s in &sums {
        tables.push(by_kind_table(s));
        if opts.window.is_some() {
            tables.push(window_table(s, opts.window.unwrap_or(0.0)));
        }
    }
    tables.push(overview_table(&sums));
    Ok(tables)
}

fn summarize_all(opts: &GcOptions) -> anyhow::Result<Vec<GcSummary>> {
    opts.files
        .iter()
        .map(|f| summarize(f, opts.window))
        .collect()
}

/// `logs gc --format json`: per file its pauses (all, and by kind and cause), cycles,
/// stalls, heap, windows and what was read; then each later file's changes against the
/// first (percent, and the noise verdict on the pause quantiles). Times in ms, heap in MB
/// (2^20 bytes) as the keys say.
pub fn run_json(opts: &GcOptions) -> anyhow::Result<serde_json::Value> {
    use serde_json::json;
    let sums = summarize_all(opts)?;
    let files: Vec<_> = sums.iter().map(|s| gc_file_json(s, opts.window)).collect();
    let rule = NoiseRule::default();
    let changes: Vec<_> = match sums.split_first() {
        Some((base, rest)) => rest
            .iter()
            .map(|s| gc_change_json(base, s, &rule))
            .collect(),
        None => Vec::new(),
    };
    Ok(arena_report::json::document(
        "logs.gc",
        json!({ "window_s": opts.window, "files": files, "changes": changes }),
    ))
}

fn pause_json(p: &PauseStats) -> serde_json::Value {
    serde_json::json!({
        "ms": crate::streaming_json(&p.ms),
        "humongous": p.humongous,
        "humongous_ms": arena_report::num(p.humongous_ms),
    })
}

fn gc_file_json(s: &GcSummary, window: Option<f64>) -> serde_json::Value {
    use serde_json::json;
    let by_kind: Vec<_> = s
        .by_kind
        .iter()
        .map(|(kind, cause, p)| {
            let mut v = pause_json(p);
            v["kind"] = json!(kind);
            v["cause"] = json!(cause);
            v
        })
        .collect();
    let cycles: Vec<_> = s
        .cycles
        .iter()
        .map(
            |(name, n, d)| json!({ "name": name, "n": n, "duration_ms": crate::streaming_json(d) }),
        )
        .collect();
    let w = window.unwrap_or(0.0);
    let windows: Vec<_> = s
        .windows
        .iter()
        .map(|(idx, p, stalls)| {
            let mut v = pause_json(p);
            v["from_s"] = json!(*idx as f64 * w);
            v["to_s"] = json!((*idx + 1) as f64 * w);
            v["stalls_ms"] = crate::streaming_json(stalls);
            v
        })
        .collect();
    json!({
        "file": s.scan.file,
        "collector": s.collector,
        "region_size_bytes": s.region_size,
        "span_s": s.span.map(|(a, b)| b - a),
        "pauses": pause_json(&s.all),
        "by_kind": by_kind,
        "concurrent_cycles": cycles,
        "stalls_ms": crate::streaming_json(&s.stalls),
        "heap_before_mb": crate::streaming_json(&s.heap_before_mb),
        "heap_after_mb": crate::streaming_json(&s.heap_after_mb),
        "peak_committed_bytes": s.peak_committed,
        "to_space_exhausted": s.to_space_exhausted,
        "windows": windows,
        "scan": crate::scan_json(&s.scan),
    })
}

/// One file against the first: percent changes, and the noise verdict on pause quantiles.
fn gc_change_json(base: &GcSummary, s: &GcSummary, rule: &NoiseRule) -> serde_json::Value {
    use arena_report::num;
    use serde_json::json;
    let pct = |b: f64, x: f64| num(pct_change(b, x));
    let (bp, xp) = (base.all.ms.samples(), s.all.ms.samples());
    let mut quantiles = serde_json::Map::new();
    for (q, name) in [(0.5, "p50"), (0.9, "p90"), (0.99, "p99")] {
        let v = match noise_verdict(&[&bp], &[&xp], q, rule) {
            Some(ch) => json!({ "delta_pct": num(ch.delta_pct), "verdict": ch.verdict }),
            None => serde_json::Value::Null,
        };
        quantiles.insert(name.into(), v);
    }
    let cycles = |g: &GcSummary| g.cycles.iter().map(|c| c.1).sum::<u64>() as f64;
    json!({
        "file": s.scan.file,
        "against": base.scan.file,
        "pauses_pct": pct(base.all.ms.count() as f64, s.all.ms.count() as f64),
        "total_pause_pct": pct(base.all.ms.sum(), s.all.ms.sum()),
        "humongous_pct": pct(base.all.humongous as f64, s.all.humongous as f64),
        "humongous_ms_pct": pct(base.all.humongous_ms, s.all.humongous_ms),
        "concurrent_cycles_pct": pct(cycles(base), cycles(s)),
        "stalls_pct": pct(base.stalls.count() as f64, s.stalls.count() as f64),
        "pause_quantiles": quantiles,
    })
}

fn by_kind_table(s: &GcSummary) -> Table {
    let mut t = Table::new(vec![
        Column::left("pause"),
        Column::left("cause"),
        Column::right("n"),
        Column::right("total"),
        Column::right("p50"),
        Column::right("p90"),
        Column::right("max"),
    ])
    .with_title(format!(
        "GC pauses by kind and cause: {} ({}, n={} pauses, ms)",
        s.scan.file,
        s.collector.as_deref().unwrap_or("collector not logged"),
        s.all.ms.count()
    ));
    let mut rows: Vec<&(String, String, PauseStats)> = s.by_kind.iter().collect();
    rows.sort_by(|a, b| b.2.ms.sum().total_cmp(&a.2.ms.sum()));
    let stat_row = |st: &PauseStats| -> Vec<Cell> {
        vec![
            Cell::num(fmt_count(st.ms.count() as i64), st.ms.count() as f64),
            Cell::num(fmt_ms(st.ms.sum()), st.ms.sum()),
            ms_cell(st.ms.quantile(0.5)),
            ms_cell(st.ms.quantile(0.9)),
            ms_cell(st.ms.summary().map(|x| x.max)),
        ]
    };
    for (kind, cause, st) in rows {
        let mut row = vec![Cell::text(kind.clone()), Cell::text(cause.clone())];
        row.extend(stat_row(st));
        t.push_row(row);
    }
    let mut all = vec![Cell::text("all pauses").strong(), Cell::text("")];
    all.extend(stat_row(&s.all).into_iter().map(Cell::strong));
    t.push_row(all);
    notes_for(&mut t, s);
    t
}

fn window_table(s: &GcSummary, w: f64) -> Table {
    let mut t = Table::new(vec![
        Column::left("window"),
        Column::right("pauses"),
        Column::right("total"),
        Column::right("p50"),
        Column::right("p90"),
        Column::right("max"),
        Column::right("humongous"),
        Column::right("stalls"),
        Column::right("stall total"),
    ])
    .with_title(format!("GC pauses per {w} s window: {} (ms)", s.scan.file));
    for (idx, p, stalls) in &s.windows {
        let from = *idx as f64 * w;
        t.push_row(vec![
            Cell::num(format!("{}-{}", fmt_secs(from), fmt_secs(from + w)), from),
            Cell::num(fmt_count(p.ms.count() as i64), p.ms.count() as f64),
            Cell::num(fmt_ms(p.ms.sum()), p.ms.sum()),
            ms_cell(p.ms.quantile(0.5)),
            ms_cell(p.ms.quantile(0.9)),
            ms_cell(p.ms.summary().map(|x| x.max)),
            Cell::num(fmt_count(p.humongous as i64), p.humongous as f64),
            Cell::num(fmt_count(stalls.count() as i64), stalls.count() as f64),
            Cell::num(fmt_ms(stalls.sum()), stalls.sum()),
        ]);
    }
    t.note("windows start at the log's first timed line; empty windows are left out");
    t
}

fn ms_cell(v: Option<f64>) -> Cell {
    match v {
        Some(x) => Cell::num(fmt_ms(x), x),
        None => Cell::text("-"),
    }
}

/// One row of the overview: label and a value per file (raw number for deltas).
struct Metric {
    label: &'static str,
    values: Vec<(String, Option<f64>)>,
    /// Whether a % change against the first file means something for this row.
    delta: bool,
    /// The pause quantile this row is, when its change gets the noise verdict.
    pause_q: Option<f64>,
}

/// The change of a file against the first one as a cell: the percent when it is a
/// number, `-` when not.
fn change_cell(pct: f64) -> Cell {
    if pct.is_finite() {
        Cell::num(fmt_pct_change(pct), pct)
    } else {
        Cell::text("-")
    }
}

/// The noise verdict on a pause quantile of `x` against `base` (the pauses at the
/// summary's resolution), as a cell: `+12 %`, or `+1.2 % ~` when it is not real.
pub fn pause_change_cell(base: &[f64], x: &[f64], q: f64, rule: &NoiseRule) -> Cell {
    match noise_verdict(&[base], &[x], q, rule) {
        Some(ch) if ch.delta_pct.is_finite() => {
            let mut text = fmt_pct_change(ch.delta_pct);
            if !ch.verdict.is_real() {
                text.push_str(" ~");
            }
            Cell::num(text, ch.delta_pct)
        }
        _ => Cell::text("-"),
    }
}

fn overview_table(sums: &[GcSummary]) -> Table {
    let mut cols = vec![Column::left("")];
    for s in sums {
        let mut name = short_name(&s.scan.file);
        if let Some(r) = s.region_size {
            name.push_str(&format!(" ({} regions)", fmt_mb(r)));
        }
        cols.push(Column::right(name));
    }
    for s in sums.iter().skip(1) {
        cols.push(Column::right(format!("Δ {}", short_name(&s.scan.file))));
    }
    let mut t = Table::new(cols).with_title(if sums.len() > 1 {
        "GC overview, side by side (deltas against the first file)".to_string()
    } else {
        "GC overview".to_string()
    });
    let rule = NoiseRule::default();
    push_overview_rows(&mut t, sums, &rule);
    overview_notes(&mut t, sums, &rule);
    t
}

type Figure<'a> = &'a dyn Fn(&GcSummary) -> (String, Option<f64>);

/// The overview's figures, a row each, with a column per file.
fn overview_rows(sums: &[GcSummary]) -> Vec<Metric> {
    let row = |label, delta, pause_q, f: Figure| Metric {
        label,
        values: sums.iter().map(f).collect(),
        delta,
        pause_q,
    };
    let opt_ms = |v: Option<f64>| match v {
        Some(x) => (fmt_ms(x), Some(x)),
        None => ("-".to_string(), None),
    };
    let count = |n: u64| (fmt_count(n as i64), Some(n as f64));
    let ms = |x: f64| (fmt_ms(x), Some(x));
    vec![
        row("collector", false, None, &|s| {
            (s.collector.clone().unwrap_or_else(|| "-".into()), None)
        }),
        row("log span", false, None, &|s| match s.span {
            Some((a, b)) => (fmt_secs(b - a), Some(b - a)),
            None => ("-".into(), None),
        }),
        row("pauses (n)", true, None, &|s| count(s.all.ms.count())),
        row("total pause", true, None, &|s| ms(s.all.ms.sum())),
        row("pause share of span", true, None, &|s| match s.span {
            Some((a, b)) if b > a => {
                let pct = s.all.ms.sum() / 1000.0 / (b - a) * 100.0;
                (format!("{pct:.2} %"), Some(pct))
            }
            _ => ("-".into(), None),
        }),
        row("median pause", true, Some(0.5), &|s| {
            opt_ms(s.all.ms.quantile(0.5))
        }),
        row("p90 pause", true, Some(0.9), &|s| {
            opt_ms(s.all.ms.quantile(0.9))
        }),
        row("p99 pause", true, Some(0.99), &|s| {
            opt_ms(s.all.ms.quantile(0.99))
        }),
        row("max pause", true, None, &|s| {
            opt_ms(s.all.ms.summary().map(|x| x.max))
        }),
        row("of which humongous (n)", true, None, &|s| {
            count(s.all.humongous)
        }),
        row("humongous pause total", true, None, &|s| {
            ms(s.all.humongous_ms)
        }),
        row("concurrent cycles (n)", true, None, &|s| {
            count(s.cycles.iter().map(|c| c.1).sum())
        }),
        row("allocation/relocation stalls (n)", true, None, &|s| {
            count(s.stalls.count())
        }),
        row("stall total", true, None, &|s| ms(s.stalls.sum())),
        row("stall max", true, None, &|s| {
            opt_ms(s.stalls.summary().map(|x| x.max))
        }),
        row("heap before GC, p50", true, None, &|s| {
            mb_opt(s.heap_before_mb.quantile(0.5))
        }),
        row("heap after GC, p50", true, None, &|s| {
            mb_opt(s.heap_after_mb.quantile(0.5))
        }),
        row("heap after GC, max", true, None, &|s| {
            mb_opt(s.heap_after_mb.summary().map(|x| x.max))
        }),
        row("peak committed", true, None, &|s| {
            mb_opt(s.peak_committed.map(|b| b as f64 / 1048576.0))
        }),
    ]
}

fn push_overview_rows(t: &mut Table, sums: &[GcSummary], rule: &NoiseRule) {
    // Every pause of each file, for the noise verdict on the pause quantiles; only when
    // there is a file to compare.
    let pauses: Vec<Vec<f64>> = if sums.len() > 1 {
        sums.iter().map(|s| s.all.ms.samples()).collect()
    } else {
        Vec::new()
    };
    for m in overview_rows(sums) {
        let mut row = vec![Cell::text(m.label)];
        for (text, v) in &m.values {
            row.push(match v {
                Some(x) => Cell::num(text.clone(), *x),
                None => Cell::text(text.clone()),
            });
        }
        let base = m.values.first().and_then(|v| v.1);
        for (k, (_, v)) in m.values.iter().enumerate().skip(1) {
            row.push(match (m.delta, m.pause_q, base, v) {
                (true, Some(q), Some(_), Some(_)) => {
                    pause_change_cell(&pauses[0], &pauses[k], q, rule)
                }
                (true, None, Some(b), Some(x)) => change_cell(pct_change(b, *x)),
                _ => Cell::text("-"),
            });
        }
        t.push_row(row);
    }
}

fn overview_notes(t: &mut Table, sums: &[GcSummary], rule: &NoiseRule) {
    for s in sums {
        for (name, n, st) in &s.cycles {
            let dur = match st.summary() {
                Some(x) => format!(", total {}, max {}", fmt_ms(st.sum()), fmt_ms(x.max)),
                None => String::new(),
            };
            t.note(format!("{}: {name}: n={n}{dur}", short_name(&s.scan.file)));
        }
        if s.to_space_exhausted > 0 {
            t.note(format!(
                "{}: To-space exhausted {} times",
                short_name(&s.scan.file),
                s.to_space_exhausted
            ));
        }
    }
    t.note(
        "pause times in ms as logged; heap in MB (2^20 bytes); quantiles to 3 significant digits",
    );
    if sums.len() > 1 {
        t.note(format!(
            "\u{394} of pause quantiles: type-7 quantiles of the pauses at that resolution; ~: not a real change (real needs Mann-Whitney U p < {}, a {:.0}% bootstrap interval excluding 0 and at least {} % change, the rule of compare)",
            rule.alpha,
            100.0 * (1.0 - rule.alpha),
            rule.noise_bar_pct
        ));
    }
}

fn mb_opt(v: Option<f64>) -> (String, Option<f64>) {
    match v {
        Some(x) => (format!("{x:.0}MB"), Some(x)),
        None => ("-".into(), None),
    }
}

fn notes_for(t: &mut Table, s: &GcSummary) {
    crate::scan_notes(t, &s.scan, GcParser::KIND);
}

/// The file name without its directory, for column headers.
pub fn short_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Parsed<GcRecord<'_>> {
        GcParser::default().parse(line.as_bytes())
    }

    #[test]
    fn g1_pause_with_padding() {
        let Parsed::Record(r) = parse("[2026-11-29T18:09:57.563+0000][0.060s][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 7M->2M(66M) 1.528ms") else {
            panic!("not a record")
        };
        assert_eq!(r.gc_id, Some(0));
        assert_eq!(r.time, Some(0.060));
        assert_eq!(
            r.event,
            GcEvent::Pause {
                kind: "Young (Normal)",
                cause: Some("G1 Evacuation Pause"),
                heap: Some(Heap {
                    before: 7 << 20,
                    after: 2 << 20,
                    committed: Some(66 << 20)
                }),
                ms: 1.528
            }
        );
    }

    #[test]
    fn nested_cause_parallel_remark_and_start_lines() {
        let Parsed::Record(r) =
            parse("[0.094s][info][gc] GC(1) Pause Full (System.gc()) 1M->1M(61M) 3.522ms")
        else {
            panic!()
        };
        assert!(matches!(
            r.event,
            GcEvent::Pause {
                kind: "Full",
                cause: Some("System.gc()"),
                ..
            }
        ));
        let Parsed::Record(r) = parse("[0.1s][info][gc] GC(4) Pause Remark 5M->5M(14M) 0.301ms")
        else {
            panic!()
        };
        assert!(matches!(
            r.event,
            GcEvent::Pause {
                kind: "Remark",
                cause: None,
                ..
            }
        ));
        assert_eq!(
            parse("[0.1s][info][gc,start    ] GC(0) Pause Full (System.gc())"),
            Parsed::Known
        );
        assert_eq!(
            parse("[0.1s][info][gc] GC(4) Concurrent Mark Cycle"),
            Parsed::Known
        );
        assert_eq!(
            parse("[0.1s][info][gc,marking] GC(4) Concurrent Mark 9.167ms"),
            Parsed::Known
        );
        let Parsed::Record(r) = parse("[0.1s][info][gc] GC(4) Concurrent Mark Cycle 2.202ms")
        else {
            panic!()
        };
        assert!(matches!(
            r.event,
            GcEvent::Cycle {
                name: "Concurrent Mark Cycle",
                ms: Some(_),
                ..
            }
        ));
    }

    #[test]
    fn zgc_lines() {
        let Parsed::Record(r) =
            parse("[0.107s][info][gc,phases   ] GC(2) Pause Mark Start 0.003ms")
        else {
            panic!()
        };
        assert!(
            matches!(r.event, GcEvent::Pause { kind: "Mark Start", cause: None, ms, .. } if ms == 0.003)
        );
        let Parsed::Record(r) = parse("[0.155s][info][gc] Allocation Stall (main) 5.329ms") else {
            panic!()
        };
        assert_eq!(
            r.event,
            GcEvent::Stall {
                what: "Allocation Stall",
                thread: "main",
                ms: 5.329
            }
        );
        let Parsed::Record(r) = parse(
            "[0.156s][info][gc] GC(1) Garbage Collection (Allocation Stall) 64M(100%)->48M(75%)",
        ) else {
            panic!()
        };
        assert!(matches!(
            r.event,
            GcEvent::Cycle {
                heap: Some(Heap {
                    before: 67108864,
                    ..
                }),
                ms: None,
                ..
            }
        ));
        assert_eq!(
            parse("[0.1s][info][gc,start] GC(1) Garbage Collection (Allocation Stall)"),
            Parsed::Known
        );
        let Parsed::Record(r) = parse("[0.1s][info][gc,init] Heap Region Size: 1M") else {
            panic!()
        };
        assert_eq!(r.event, GcEvent::RegionSize(1 << 20));
    }

    #[test]
    fn negative_durations_are_damaged_lines() {
        // Found by the gc fuzz target.
        assert_eq!(
            parse("[0.05s][info][gc,phases] GC(2) Pause Mark Start 6M->2M(66M) -1.232ms"),
            Parsed::Unknown
        );
        assert_eq!(
            parse("[0.05s][info][gc] Allocation Stall (main) -5.3ms"),
            Parsed::Known
        );
    }

    #[test]
    fn other_kinds_are_not_understood() {
        assert_eq!(
            parse("[0.058s][info][class,load] java.lang.Object source: shared objects file"),
            Parsed::Unknown
        );
        assert_eq!(parse("allocated 123 bytes"), Parsed::Unknown);
        assert_eq!(parse("\0\0\u{1}"), Parsed::Unknown);
        let Parsed::Record(_) =
            parse("GC(0) Pause Young (Normal) (G1 Evacuation Pause) 7M->2M(66M) 1.5ms")
        else {
            panic!()
        };
    }
}
