//! The checks a run folder passes beyond its files' shape: every value finite and in
//! range, the `loops.csv` header, metrics that agree with the times they are differences
//! of, the loop invariant, and runs given twice. A figure computed from a value nobody
//! measured is worse than no figure, so each failure is an error (exit 2) that the
//! caller prefixes with the file and line; none is skipped or dropped.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use anyhow::Result;
use arena_report::Exit;
use arena_stats::Summary;

use crate::layout::{LOOP_COLUMNS, RUN_JSON};
use crate::model::{Loop, Outcome, Run, RunMeta};

/// Largest page-clock time accepted, in ms (about 31,700 years). `performance.now()` is
/// far below it, and so is an app recorder stamping `Date.now()` (1.8e12 in 2026);
/// anything past it is not a clock reading.
pub const MAX_TIME_MS: f64 = 1e15;

/// Largest duration accepted, in ms: one day. A loop ends within its window (seconds),
/// so a longer one is corrupt, and a bound keeps every figure printable.
pub const MAX_DURATION_MS: f64 = 86_400_000.0;

/// How far a metric may differ from the difference of its times, in ms. The pilot
/// writes exact differences; the slack admits files rounded by another tool and stays
/// below the 0.1 ms the tables print.
const TOLERANCE_MS: f64 = 0.01;

/// `loops.csv` columns added after schema 1 was first written: runs made before them
/// lack them and still load (their loops were closed on the reply, so `outcome` follows
/// `answered`). Every other column of [`LOOP_COLUMNS`] is required.
pub const LATER_COLUMNS: [&str; 4] = ["outcome", "t_answer", "inputToPixels", "after_lapse"];

/// What the header said about the row format.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Header {
    /// The `outcome` column is there (otherwise it is derived from `answered`).
    pub has_outcome: bool,
}

/// The header must be the known column set: a renamed or misspelled column would
/// otherwise read as an empty metric in every row, and the metric would vanish from the
/// tables without a word.
pub(crate) fn check_header(names: &[&str]) -> Result<Header, String> {
    if names.iter().all(|n| n.is_empty()) {
        return Err("no header line (an empty file)".into());
    }
    let mut unknown = Vec::new();
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            return Err(format!("column `{n}` appears twice"));
        }
        if !LOOP_COLUMNS.contains(n) {
            unknown.push(format!("`{n}`"));
        }
    }
    let missing: Vec<String> = LOOP_COLUMNS
        .iter()
        .filter(|c| !LATER_COLUMNS.contains(c) && !names.contains(c))
        .map(|c| format!("`{c}`"))
        .collect();
    if unknown.is_empty() && missing.is_empty() {
        return Ok(Header {
            has_outcome: names.contains(&"outcome"),
        });
    }
    let mut parts = Vec::new();
    if !unknown.is_empty() {
        parts.push(format!("unknown column {}", unknown.join(", ")));
    }
    if !missing.is_empty() {
        parts.push(format!("missing column {}", missing.join(", ")));
    }
    Err(format!(
        "{} (the columns are: {})",
        parts.join("; "),
        LOOP_COLUMNS.join(",")
    ))
}

/// A time or duration as the message quotes it: `inf`, `NaN`, `1e308`, `49.5`.
fn show(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e9 {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// A page-clock time: finite and within [`MAX_TIME_MS`].
pub(crate) fn check_time(name: &str, v: f64) -> Result<(), String> {
    if !v.is_finite() {
        return Err(format!("{name} is {}, not a finite number", show(v)));
    }
    if v.abs() > MAX_TIME_MS {
        return Err(format!(
            "{name} is {}: out of range (a page-clock time is within \u{b1}1e15 ms)",
            show(v)
        ));
    }
    Ok(())
}

/// A duration: finite and at most [`MAX_DURATION_MS`] either way (a negative one is an
/// invariant break, counted by [`invariant_break`]).
fn check_duration(name: &str, v: f64) -> Result<(), String> {
    if !v.is_finite() {
        return Err(format!("{name} is {}, not a finite number", show(v)));
    }
    if v.abs() > MAX_DURATION_MS {
        return Err(format!(
            "{name} is {} ms: out of range (no loop lasts a day, 86,400,000 ms)",
            show(v)
        ));
    }
    Ok(())
}

/// The loop's times in column order, with their names.
fn times(l: &Loop) -> [(&'static str, Option<f64>); 6] {
    [
        ("t_input", Some(l.t_input)),
        ("t_send", l.t_send),
        ("t_recv", l.t_recv),
        ("t_draw", l.t_draw),
        ("t_paint", l.t_paint),
        ("t_answer", l.t_answer),
    ]
}

/// Each metric with the two times it is the difference of (later, earlier).
type MetricDef = (
    &'static str,
    Option<f64>,
    (&'static str, Option<f64>),
    (&'static str, Option<f64>),
);

fn metrics(l: &Loop) -> [MetricDef; 5] {
    let input = ("t_input", Some(l.t_input));
    [
        (
            "inputToSocket",
            l.input_to_socket,
            ("t_send", l.t_send),
            input,
        ),
        (
            "sendToRecv",
            l.send_to_recv,
            ("t_recv", l.t_recv),
            ("t_send", l.t_send),
        ),
        (
            "recvToDraw",
            l.recv_to_draw,
            ("t_draw", l.t_draw),
            ("t_recv", l.t_recv),
        ),
        (
            "inputToPaint",
            l.input_to_paint,
            ("t_paint", l.t_paint),
            input,
        ),
        (
            "inputToPixels",
            l.input_to_pixels,
            ("t_answer", l.t_answer),
            input,
        ),
    ]
}

/// One row: every value finite and in range, each metric the difference of its times
/// (so an edited metric cannot disagree with the times it claims to measure), and
/// `answered` agreeing with `outcome`. The invariant is counted apart, by the caller.
pub(crate) fn check_loop(l: &Loop, header: Header) -> Result<(), String> {
    for (name, v) in times(l) {
        v.map_or(Ok(()), |v| check_time(name, v))?;
    }
    for (name, v, _, _) in metrics(l) {
        v.map_or(Ok(()), |v| check_duration(name, v))?;
    }
    for (name, v, (later, a), (earlier, b)) in metrics(l) {
        match (v, a, b) {
            (Some(v), Some(a), Some(b)) if (v - (a - b)).abs() > TOLERANCE_MS => {
                return Err(format!(
                    "{name} is {} but {later} - {earlier} is {}",
                    show(v),
                    show(a - b)
                ))
            }
            (Some(_), Some(_), Some(_)) | (None, None, _) | (None, _, None) => {}
            (Some(_), _, _) => {
                let gone = if a.is_none() { later } else { earlier };
                return Err(format!("{name} is set but {gone} is empty"));
            }
            (None, Some(_), Some(_)) => {
                return Err(format!("{name} is empty but {earlier} and {later} are set"))
            }
        }
    }
    if header.has_outcome && l.answered != (l.outcome == Outcome::Answered) {
        return Err(format!(
            "answered is {} but outcome is {}",
            l.answered,
            l.outcome.name()
        ));
    }
    Ok(())
}

/// A figure's every field a duration: finite and in range.
fn check_summary(name: &str, x: &Summary) -> Result<(), String> {
    let fields = [
        ("mean", x.mean),
        ("min", x.min),
        ("p50", x.p50),
        ("p90", x.p90),
        ("p99", x.p99),
        ("max", x.max),
    ];
    for (f, v) in fields {
        check_duration(&format!("{name}.{f}"), v)?;
    }
    // In order, the mean between the ends (to float rounding): a mean of -5 beside a min
    // of 0.25 is no summary of any values.
    let order = [x.min, x.p50, x.p90, x.p99, x.max];
    let slack = 1e-6;
    let ordered = order.windows(2).all(|w| w[0] <= w[1] + slack);
    if !ordered || x.mean < x.min - slack || x.mean > x.max + slack {
        return Err(format!(
            "{name} is not a summary of any values: min {} p50 {} p90 {} p99 {} max {} mean {}",
            show(x.min),
            show(x.p50),
            show(x.p90),
            show(x.p99),
            show(x.max),
            show(x.mean)
        ));
    }
    Ok(())
}

/// `summary.typing` against itself and the keydown rows it summarises: a known mode, figures
/// that are durations, and every count what the rows hold (wrong counts, a p50 of 1e308
/// or a mode `hammer` loaded and were stored).
pub(crate) fn check_typing(t: &crate::TypingSummary, loops: &[Loop]) -> Result<(), String> {
    if !["pace", "burst"].contains(&t.mode.as_str()) {
        return Err(format!(
            "summary.typing.mode is `{}`, not pace or burst",
            t.mode
        ));
    }
    let figures = [
        ("keydown_to_socket", &t.keydown_to_socket),
        ("keydown_to_glyph", &t.keydown_to_glyph),
    ];
    for (name, sum) in figures {
        if let Some(x) = sum {
            check_summary(&format!("summary.typing.{name}"), x)?;
        }
    }
    let keys: Vec<&Loop> = loops.iter().filter(|l| l.event == "keydown").collect();
    let count = |o: Outcome| keys.iter().filter(|l| l.outcome == o).count() as u64;
    let glyphs = keys
        .iter()
        .filter(|l| l.outcome == Outcome::Answered && l.input_to_pixels.is_some())
        .count() as u64;
    let counts = [
        ("keys", t.keys, keys.len() as u64),
        ("answered", t.answered, count(Outcome::Answered)),
        ("unanswered", t.unanswered, count(Outcome::Unanswered)),
        ("claimed", t.claimed, count(Outcome::Claimed)),
        (
            "keydown_to_glyph.n",
            t.keydown_to_glyph.map_or(0, |s| s.n),
            glyphs,
        ),
    ];
    for (name, says, holds) in counts {
        if says != holds {
            return Err(format!(
                "summary.typing.{name} says {says}, the keydown rows hold {holds}"
            ));
        }
    }
    if t.frames_with_several > t.glyph_frames || t.glyph_frames > t.answered {
        return Err(format!(
            "summary.typing counts {} glyph frames, {} with several keys, of {} answered keys: a frame shows at least one key",
            t.glyph_frames, t.frames_with_several, t.answered
        ));
    }
    Ok(())
}

/// A run that did not come from a folder (a history database gives its loops back as
/// rows): its figures and each loop checked as [`crate::Run::load`] checks a folder's, so
/// an edited row (inf, -50) is refused, not compared.
pub fn check_run(run: &crate::Run) -> Result<(), String> {
    let meta = &run.meta;
    check_meta(meta)?;
    let header = Header { has_outcome: true };
    // The folder's order checks too: a row edited with its times kept consistent (paint
    // 50 ms before the input) is as false in a database as in loops.csv.
    let page_sockets = meta.socket_source == crate::SocketSource::PageHook;
    let reply_oracle = meta.answer.as_ref().is_none_or(|a| a.oracle == "reply");
    let mut breaks = (0u64, None);
    for (i, l) in run.loops.iter().enumerate() {
        let at = |e: String| format!("loop {i}: {e}");
        check_loop(l, header).map_err(at)?;
        if let Some(why) = page_sockets
            .then(|| recorder_order_break(l, reply_oracle))
            .flatten()
        {
            return Err(at(why));
        }
        if let Some(why) = invariant_break(l) {
            breaks.0 += 1;
            breaks.1.get_or_insert_with(|| at(why));
        }
    }
    let declared = meta.summary.invariant_violations;
    match breaks {
        (found, Some(first)) if found > declared => {
            return Err(undeclared_breaks(found, declared, &first))
        }
        (found, _) if found != declared => {
            return Err(format!(
                "summary.invariant_violations says {declared}, the loops hold {found} breaking t_input <= t_send <= t_recv <= t_draw <= t_paint"
            ))
        }
        _ => {}
    }
    match &run.meta.summary.typing {
        Some(t) => check_typing(t, &run.loops),
        None => Ok(()),
    }
}

/// Where the row breaks `t_input <= t_send <= t_recv <= t_draw <= t_paint` (times
/// present), or has its answer before its input: `t_recv (11) is before t_send (12)`.
pub(crate) fn invariant_break(l: &Loop) -> Option<String> {
    let chain = &times(l)[..5];
    let present: Vec<(&str, f64)> = chain
        .iter()
        .filter_map(|&(n, v)| v.map(|v| (n, v)))
        .collect();
    let broken = present.windows(2).find(|w| w[0].1 > w[1].1);
    if let Some(w) = broken {
        let ((a, ta), (b, tb)) = (w[0], w[1]);
        return Some(format!("{b} ({}) is before {a} ({})", show(tb), show(ta)));
    }
    match l.t_answer {
        Some(t) if t < l.t_input => Some(format!(
            "t_answer ({}) is before t_input ({})",
            show(t),
            show(l.t_input)
        )),
        _ => None,
    }
}

/// `run.json`'s figures: JSON cannot spell inf or NaN, but it can spell 1e308, which a
/// figure (the matrix reads `summary` directly) would print as nonsense.
pub(crate) fn check_meta(meta: &RunMeta) -> Result<(), String> {
    let s = &meta.summary;
    let summaries: [(&str, &Option<Summary>); 7] = [
        ("input_to_socket", &s.input_to_socket),
        ("send_to_recv", &s.send_to_recv),
        ("recv_to_draw", &s.recv_to_draw),
        ("input_to_paint", &s.input_to_paint),
        ("input_to_pixels", &s.input_to_pixels),
        ("cold_input_to_paint", &s.cold_input_to_paint),
        ("coalesced_input_to_socket", &s.coalesced_input_to_socket),
    ];
    for (name, sum) in summaries {
        if let Some(x) = sum {
            check_summary(&format!("summary.{name}"), x)?;
        }
    }
    if let Some(w) = &meta.wire {
        for (dir, d) in [
            ("server_to_client", &w.server_to_client),
            ("client_to_server", &w.client_to_server),
        ] {
            match d.as_ref().and_then(|d| d.compression_ratio) {
                Some(r) if !(r.is_finite() && (0.0..=1e6).contains(&r)) => {
                    return Err(format!(
                        "wire.{dir}.compression_ratio is {}: out of range",
                        show(r)
                    ))
                }
                _ => {}
            }
        }
    }
    if let Some(t) = &meta.trace {
        check_trace(t)?;
    }
    if let Some(w) = &meta.idle {
        check_idle(w)?;
    }
    if let Some(c) = &meta.cpu {
        c.check()?;
    }
    if let Some(b) = &meta.browser {
        check_browser(b)?;
    }
    if let Some(c) = &meta.clock {
        check_clock(c)?;
    }
    Ok(())
}

/// `run.json`'s `clock`: offsets that are Unix times, an error that is a duration.
fn check_clock(c: &crate::model::PageClock) -> Result<(), String> {
    for (name, v) in [
        ("unix_offset_ms", c.unix_offset_ms),
        ("time_origin_ms", c.time_origin_ms),
    ] {
        if !v.is_finite() || v.abs() > MAX_TIME_MS {
            return Err(format!("clock.{name} is {}: out of range", show(v)));
        }
    }
    if c.error_ms < 0.0 {
        return Err(format!("clock.error_ms is {}: negative", show(c.error_ms)));
    }
    check_duration("clock.error_ms", c.error_ms)
}

/// `run.json`'s `browser`: a ratio and a slowdown a browser can have, a viewport with area.
fn check_browser(b: &crate::model::BrowserSettings) -> Result<(), String> {
    if !(b.dpr.is_finite() && b.dpr > 0.0 && b.dpr <= 64.0) {
        return Err(format!("browser.dpr is {}: out of range", show(b.dpr)));
    }
    if !(b.cpu_throttle.is_finite() && (1.0..=1000.0).contains(&b.cpu_throttle)) {
        return Err(format!(
            "browser.cpu_throttle is {}: out of range (1: none)",
            show(b.cpu_throttle)
        ));
    }
    if b.viewport_w == 0 || b.viewport_h == 0 {
        return Err(format!(
            "browser.viewport is {}x{}: it has no area",
            b.viewport_w, b.viewport_h
        ));
    }
    Ok(())
}

/// `run.json`'s `idle`: its bounds in order, every time finite, every likeness a percent.
fn check_idle(w: &crate::model::IdleWindow) -> Result<(), String> {
    check_time("idle.start_ms", w.start_ms)?;
    check_time("idle.end_ms", w.end_ms)?;
    check_duration("idle.pixel_check_ms", w.pixel_check_ms)?;
    if w.end_ms < w.start_ms || !(w.requested_s.is_finite() && w.requested_s >= 0.0) {
        return Err(format!(
            "idle: window {} .. {} ms of {} s is not a window",
            show(w.start_ms),
            show(w.end_ms),
            show(w.requested_s)
        ));
    }
    for (i, f) in w.frames.iter().enumerate() {
        check_time(&format!("idle.frames[{i}].t_ms"), f.t_ms)?;
        for (name, v) in [("bytes_pct", f.bytes_pct), ("pixels_pct", f.pixels_pct)] {
            if let Some(v) = v.filter(|v| !(v.is_finite() && (0.0..=100.0).contains(v))) {
                return Err(format!(
                    "idle.frames[{i}].{name} is {}: not a percent",
                    show(v)
                ));
            }
        }
    }
    Ok(())
}

/// `run.json`'s `trace`: its figures finite and in range, its file a plain name in the
/// folder.
fn check_trace(t: &crate::model::TraceInfo) -> Result<(), String> {
    if t.file.is_empty() || t.file.contains('/') || t.file == ".." {
        return Err(format!(
            "trace.file is {:?}: not a file name in the run folder",
            t.file
        ));
    }
    if !t.offset_ms.is_finite() || t.offset_ms.abs() > MAX_TIME_MS {
        return Err(format!(
            "trace.offset_ms is {}: out of range",
            show(t.offset_ms)
        ));
    }
    let o = &t.overhead;
    let durations = [
        ("alignment_error_ms", Some(t.alignment_error_ms)),
        ("input_error_ms", t.input_error_ms),
        ("overhead.start_ms", Some(o.start_ms)),
        ("overhead.collect_ms", Some(o.collect_ms)),
        ("overhead.write_ms", Some(o.write_ms)),
    ];
    for (name, v) in durations {
        if let Some(v) = v {
            if v < 0.0 {
                return Err(format!("trace.{name} is {}: negative", show(v)));
            }
            check_duration(&format!("trace.{name}"), v)?;
        }
    }
    check_presented(t.presented.as_ref())
}

/// `trace.presented`: its gaps finite and never before the answer (a presentation is
/// looked for at or after it), its count the matched loops'.
fn check_presented(p: Option<&crate::model::TracePresented>) -> Result<(), String> {
    let Some((matched, g)) = p.and_then(|p| Some((p.matched, p.answer_to_presented_ms?))) else {
        return Ok(());
    };
    for (name, v) in [
        ("min", g.min),
        ("p50", g.p50),
        ("p90", g.p90),
        ("max", g.max),
    ] {
        let name = format!("trace.presented.answer_to_presented_ms.{name}");
        if v < 0.0 {
            return Err(format!("{name} is {}: negative", show(v)));
        }
        check_duration(&name, v)?;
    }
    if g.n != matched {
        return Err(format!(
            "trace.presented.answer_to_presented_ms.n is {} but matched is {matched}",
            g.n
        ));
    }
    Ok(())
}

impl Run {
    /// True when `other` is the same measurement: equal `run.json` and loops, as a copy of
    /// a run folder is. Two sessions never share both (their start times and loops differ).
    pub fn same_run(&self, other: &Run) -> bool {
        self.meta == other.meta && self.loops == other.loops
    }
}

/// Refuses a run given twice among `runs` (folder, run): the same folder after resolving
/// the path (`runs/good` and `runs/./good`), or a copy of it. Pooled, a repeated run
/// counts twice, and with two or more runs a side the bootstrap would resample one
/// session as if it were two, an interval narrower than the data supports.
pub fn check_distinct(runs: &[(PathBuf, Run)]) -> Result<()> {
    let resolved: Vec<PathBuf> = runs
        .iter()
        .map(|(p, _)| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .collect();
    for (j, (dir, run)) in runs.iter().enumerate() {
        for (i, (first, earlier)) in runs[..j].iter().enumerate() {
            let why = if resolved[i] == resolved[j] {
                "the same run folder, given twice"
            } else if run.same_run(earlier) {
                "a copy of it (identical run.json and loops.csv)"
            } else {
                continue;
            };
            return Err(Exit::bad_input(format!(
                "{}: the same run as {}: {why}; a run counts once",
                Path::new(dir).join(RUN_JSON).display(),
                Path::new(first).join(RUN_JSON).display(),
            ))
            .into());
        }
    }
    Ok(())
}

/// The message for a `loops.csv` whose rows break the invariant more often than its
/// `run.json` recorded: the pilot counts every break it measures and warns (`invariant`,
/// shown next to the figures), so an unrecorded one was written in later.
pub(crate) fn undeclared_breaks(found: u64, declared: u64, first: &str) -> String {
    format!(
        "{first}: {found} loop(s) break t_input <= t_send <= t_recv <= t_draw <= t_paint, but {RUN_JSON} records {declared} (summary.invariant_violations): these times were not measured"
    )
}

/// The record kinds the recorder writes (`docs/run-format.md`).
const EVENT_KINDS: [&str; 9] = [
    "input",
    "input_coalesced",
    "ws_send",
    "ws_recv",
    "draw",
    "paint",
    "answer",
    "ws_open",
    "region_painted",
];

/// An `events.jsonl` line read only to be checked: the fields and types of
/// [`crate::Event`], with strings borrowed from the line where they can be, so checking
/// a large file allocates next to nothing.
#[derive(serde::Deserialize)]
// Serde names the struct in type errors ("expected struct Event"): both loaders must say
// the same, and the reader knows no `EventView` (found by the fuzz target).
#[serde(expecting = "struct Event")]
pub(crate) struct EventView<'a> {
    pub seq: u64,
    #[serde(borrow)]
    pub kind: Cow<'a, str>,
    pub t_ms: f64,
    // Size, class and event feed the cross-checks against `run.json`; the rest are
    // parsed for their types only (a record whose `trusted` is text is as malformed as
    // one without `kind`); nothing reads them.
    #[serde(default)]
    pub size: u32,
    #[serde(default, borrow)]
    pub class: Cow<'a, str>,
    #[serde(default, borrow)]
    pub event: Cow<'a, str>,
    #[serde(default, rename = "trusted")]
    _trusted: bool,
    #[serde(default, rename = "target")]
    _target: u16,
    #[serde(default, rename = "answers")]
    _answers: Option<u64>,
}

/// One record beyond its JSON shape: a known kind and a finite page-clock time.
pub(crate) fn check_event(kind: &str, t_ms: f64) -> Result<(), String> {
    if !EVENT_KINDS.contains(&kind) {
        return Err(format!(
            "kind `{kind}` is not a record kind (one of {})",
            EVENT_KINDS.join(", ")
        ));
    }
    check_time("t_ms", t_ms)
}

/// Which records of an events file the page recorder stamps with `performance.now()` as it
/// writes them, so that their times never go back in write (`seq`) order: draws, paints,
/// `region_painted` and a socket's `open`, and, when the page hook saw the sockets, sends
/// and receipts. Inputs carry the event's `timeStamp` (taken before the listener ran),
/// answers the frame's start (a JS oracle's predicate may record after it), a CDP
/// handshake or CDP-seen frame Chromium's network clock in a seq space of its own, and an
/// app's own recorder whatever clock the app keeps: none of those is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeOrder {
    /// An app's own recorder: no order is checked.
    Unordered,
    /// Page-stamped records apart from the socket's frames (sockets seen through CDP, and
    /// `setup_events.jsonl`, whose drains may have taken either source).
    PageOnly,
    /// The page hook saw the sockets: their sends and receipts are page-stamped too.
    WithSockets,
}

impl TimeOrder {
    pub(crate) fn stamped(self, kind: &str, event: &str) -> bool {
        if self == TimeOrder::Unordered {
            return false;
        }
        match kind {
            "draw" | "paint" | "region_painted" => true,
            "ws_open" => event == "open",
            "ws_send" | "ws_recv" => self == TimeOrder::WithSockets,
            _ => false,
        }
    }
}

/// The order the page recorder guarantees within a loop of a run whose sockets the page
/// hook saw: the loop's send, receipt and draw are stamped as they are written and each is
/// looked for after the one before, so `t_send <= t_recv <= t_draw`; with the reply oracle
/// the paint is the first paint record after the draw, so `t_draw <= t_paint` too (under
/// the pixels and js oracles a loop's paint may be its answer frame, stamped at the frame's
/// start). Pairs with an empty time are not compared: an unanswered loop has no receipt.
/// Unlike [`invariant_break`], no count in `run.json` makes such a break load.
pub(crate) fn recorder_order_break(l: &Loop, reply_oracle: bool) -> Option<String> {
    let mut pairs = vec![
        (("t_send", l.t_send), ("t_recv", l.t_recv)),
        (("t_recv", l.t_recv), ("t_draw", l.t_draw)),
    ];
    if reply_oracle {
        pairs.push((("t_draw", l.t_draw), ("t_paint", l.t_paint)));
    }
    pairs.into_iter().find_map(|((a, ta), (b, tb))| match (ta, tb) {
        (Some(ta), Some(tb)) if tb < ta => Some(format!(
            "{b} ({}) is before {a} ({}): the page recorder stamps both as it writes them, the {b} record after the {a} one, so no run it measured holds this",
            show(tb),
            show(ta)
        )),
        _ => None,
    })
}

/// Rows that can be told apart and counted in `run.json`'s summary.
#[derive(Debug, Default)]
pub(crate) struct LoopTally {
    pub answered: u64,
    pub unanswered: u64,
    pub claimed: u64,
}

impl LoopTally {
    pub(crate) fn add(&mut self, l: &Loop) {
        match l.outcome {
            Outcome::Answered => self.answered += 1,
            Outcome::Unanswered => self.unanswered += 1,
            Outcome::Claimed => self.claimed += 1,
        }
    }
}

/// What the lines of `events.jsonl` hold, counted the way the pilot counts its records
/// for `run.json`'s summary: the first `stale_records` lines of the recorder's own seq
/// space are the stale ones (the file is in seq order, and stale records are the ones
/// below the clear), and a record drained twice (its seq, in its seq space, again) counts
/// once. With sockets seen through CDP, sends and receipts have a seq space of their own.
/// Counting holds no more than the current seq, so it stays within bounded memory.
#[derive(Debug)]
pub(crate) struct EventTally {
    cdp: bool,
    /// Stale lines still to pass over.
    pub stale_left: u64,
    /// The seq of the line before, and whether a record of each space had it.
    seq: Option<u64>,
    seen: [bool; 2],
    pub lines: u64,
    pub records: u64,
    pub frames_received: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    pub sends_input: u64,
    pub sends_ack: u64,
    pub sends_other: u64,
    pub coalesced_inputs: u64,
}

impl EventTally {
    pub(crate) fn new(cdp: bool, stale: u64) -> Self {
        EventTally {
            cdp,
            stale_left: stale,
            seq: None,
            seen: [false; 2],
            lines: 0,
            records: 0,
            frames_received: 0,
            bytes_received: 0,
            bytes_sent: 0,
            sends_input: 0,
            sends_ack: 0,
            sends_other: 0,
            coalesced_inputs: 0,
        }
    }

    pub(crate) fn add(&mut self, seq: u64, kind: &str, size: u32, class: &str) {
        self.lines += 1;
        let own = !(self.cdp && matches!(kind, "ws_send" | "ws_recv"));
        if own && self.stale_left > 0 {
            self.stale_left -= 1;
            return;
        }
        if self.seq != Some(seq) {
            self.seq = Some(seq);
            self.seen = [false; 2];
        }
        let seen = &mut self.seen[usize::from(own)];
        if std::mem::replace(seen, true) {
            return;
        }
        self.records += 1;
        let size = u64::from(size);
        match kind {
            "ws_recv" => {
                self.frames_received += 1;
                self.bytes_received += size;
            }
            "ws_send" => {
                self.bytes_sent += size;
                match class {
                    "input" => self.sends_input += 1,
                    "ack" => self.sends_ack += 1,
                    _ => self.sends_other += 1,
                }
            }
            "input_coalesced" => self.coalesced_inputs += 1,
            _ => {}
        }
    }
}

/// `events.jsonl` against `run.json`'s summary: as many records as `summary.records`
/// (beside the `stale_records` the pilot set aside), so a file cut at a line boundary or
/// emptied says what is missing; and, when the summary counts records at all, its traffic
/// figures those of the records. A run whose summary counts no records (one built without
/// its recorder's records, as synthetic runs are) has no traffic to check.
pub(crate) fn check_event_counts(s: &crate::RunSummary, t: &EventTally) -> Result<(), String> {
    let short = t.records < s.records || t.stale_left > 0;
    if short {
        let held = if t.lines == 0 {
            "is empty".to_string()
        } else {
            format!(
                "ends after {} line(s) holding {} record(s)",
                t.lines, t.records
            )
        };
        let stale = if s.stale_records > 0 {
            format!(" beside {} stale", s.stale_records)
        } else {
            String::new()
        };
        let missing = s.records.saturating_sub(t.records) + t.stale_left;
        return Err(format!(
            "{held}, but {RUN_JSON}'s summary.records says {}{stale}: {missing} record(s) are missing, the file is cut short or emptied",
            s.records
        ));
    }
    if t.records > s.records {
        return Err(format!(
            "holds {} record(s), but {RUN_JSON}'s summary.records says {}: records were added",
            t.records, s.records
        ));
    }
    Ok(())
}

/// The summary's traffic figures against the records (see [`check_event_counts`]):
/// `summary.frames_received says 12, events.jsonl holds 3 receipts (ws_recv records)`.
pub(crate) fn check_traffic(s: &crate::RunSummary, t: &EventTally) -> Result<(), String> {
    if s.records == 0 {
        return Ok(());
    }
    let figures = [
        (
            "frames_received",
            s.frames_received,
            t.frames_received,
            "receipts (ws_recv records)",
        ),
        (
            "bytes_received",
            s.bytes_received,
            t.bytes_received,
            "bytes received (ws_recv sizes)",
        ),
        (
            "bytes_sent",
            s.bytes_sent,
            t.bytes_sent,
            "bytes sent (ws_send sizes)",
        ),
        (
            "sends_input",
            s.sends_input,
            t.sends_input,
            "input-classified sends",
        ),
        (
            "sends_ack",
            s.sends_ack,
            t.sends_ack,
            "ack-classified sends",
        ),
        ("sends_other", s.sends_other, t.sends_other, "other sends"),
        (
            "coalesced_inputs",
            s.coalesced_inputs,
            t.coalesced_inputs,
            "coalesced inputs",
        ),
    ];
    for (name, says, holds, what) in figures {
        if says != holds {
            return Err(format!(
                "summary.{name} says {says}, events.jsonl holds {holds} {what}"
            ));
        }
    }
    Ok(())
}
