//! `--trace`: Chromium's own trace of the click loop, with the run's loops merged in as a
//! track of their own, written as `trace.json` (Chrome trace event format; Perfetto and
//! chrome://tracing open it). A stage after pairing: the browser part only collects.
//!
//! **Alignment.** Trace timestamps are CLOCK_MONOTONIC µs; the loops are on the page clock
//! (`performance.now()`, ms since the page's time origin). Before and after the clicks
//! the page makes [`MARKS`] `performance.mark`s, each a `blink.user_timing` event in the
//! trace: trace clock = page clock + offset, and the offset is the median of the marks'
//! (trace `ts` - mark `startTime`). The alignment error recorded is the largest distance
//! of one mark's offset from the median. Independently, each input's `EventTiming` event
//! (the renderer stamps its start with the event's own `timeStamp`) is compared with the
//! loop's `t_input`: `input_error_ms` is the largest difference, the page clock's
//! coarsening included.
//!
//! **Presentation.** The page's answer time is when its animation frame callback saw the
//! answer, not when a screen could show it: that frame still has to be committed to the
//! compositor, submitted, drawn by the display compositor and swapped. Each answered loop
//! is placed at the `Display::FrameDisplayed` of the display frame that drew the page's
//! first compositor frame after the answer, linked by the `Graphics.Pipeline` steps' ids.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use arena_browser::{align_marks, AlignMark, Page, Trace, TRACE_CATEGORIES};
use arena_run::{Loop, Outcome, TraceInfo, TraceOverhead, TracePresented, Warning, TRACE_JSON};
use arena_stats::Summary;
use serde_json::{json, Value};

/// Alignment marks made before the clicks and again after them.
pub const MARKS: usize = 8;

/// The loop track's category, and its stages'.
pub const LOOP_CAT: &str = "arena.loop";
pub const STAGE_CAT: &str = "arena.stage";
pub const FLOW_CAT: &str = "arena.flow";
/// The category of the slices from each answer to its frame's presentation.
pub const PRESENTED_CAT: &str = "arena.presented";
/// The display compositor's mark of each frame it presented, stamped with the time of the
/// presentation feedback.
pub const FRAME_DISPLAYED: &str = "Display::FrameDisplayed";
/// The frame pipeline's steps: complete slices whose ids link a compositor frame the page
/// submitted to the display frame that aggregated it, drew and swapped.
pub const PIPELINE: &str = "Graphics.Pipeline";
/// `presented.source` when each answer is placed at the display frame that drew the
/// page's first compositor frame after it.
pub const SOURCE_LINKED: &str = "Display::FrameDisplayed via Graphics.Pipeline";
/// `presented.source` when the trace has no pipeline steps: the first displayed frame
/// after the answer, whoever drew it.
pub const SOURCE_DISPLAYED: &str = FRAME_DISPLAYED;
/// The warning of a traced run none of whose answers could be placed at a presentation.
pub const NO_PRESENTATION: &str = "trace_no_presentation";
/// The loop track's process name.
pub const TRACK_NAME: &str = "arena-perf loops";

/// A trace started before the clicks.
pub(crate) struct Tracing {
    marks: Vec<(String, f64)>,
    start_ms: f64,
}

/// A trace collected after the clicks, not yet merged.
pub(crate) struct Collected {
    trace: Trace,
    marks: Vec<(String, f64)>,
    start_ms: f64,
    collect_ms: f64,
}

/// Starts the trace and makes the first marks.
pub(crate) async fn start(page: &Page) -> Result<Tracing> {
    let t = Instant::now();
    page.trace_start(TRACE_CATEGORIES)
        .await
        .context("starting the trace")?;
    let marks = page.trace_marks(MARKS).await?;
    Ok(Tracing {
        marks,
        start_ms: t.elapsed().as_secs_f64() * 1e3,
    })
}

/// Makes the last marks, ends the trace and reads it back.
pub(crate) async fn collect(page: &Page, mut tracing: Tracing) -> Result<Collected> {
    let t = Instant::now();
    tracing.marks.extend(page.trace_marks(MARKS).await?);
    let trace = page.trace_end().await.context("reading the trace back")?;
    Ok(Collected {
        trace,
        marks: tracing.marks,
        start_ms: tracing.start_ms,
        collect_ms: t.elapsed().as_secs_f64() * 1e3,
    })
}

/// Merges the loops into the collected trace, writes `trace.json` into `dir`, and returns
/// what `run.json` records of it.
pub(crate) fn write(dir: &Path, c: Collected, arm: &str, loops: &[Loop]) -> Result<TraceInfo> {
    let t = Instant::now();
    let chromium_events = c.trace.events.len() as u64;
    let merged = merge(c.trace.events, &c.marks, arm, loops, std::process::id())?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(TRACE_JSON);
    let tmp = path.with_extension("tmp-write");
    {
        let f =
            std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let mut w = std::io::BufWriter::new(f);
        serde_json::to_writer(&mut w, &merged.doc)?;
        w.flush()?;
    }
    std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
    let file_bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let s = merged.stats;
    let presented = s.presented.info();
    Ok(TraceInfo {
        file: TRACE_JSON.into(),
        events: chromium_events,
        loop_slices: s.loop_slices,
        input_flows: s.input_flows,
        frame_flows: s.frame_flows,
        data_loss: c.trace.data_loss,
        offset_ms: s.align.offset_ms,
        alignment_marks: s.align.marks as u64,
        alignment_error_ms: s.align.error_ms,
        inputs_checked: s.inputs_checked,
        input_error_ms: s.input_error_ms,
        overhead: TraceOverhead {
            start_ms: c.start_ms,
            collect_ms: c.collect_ms,
            write_ms: t.elapsed().as_secs_f64() * 1e3,
            chromium_bytes: c.trace.bytes,
            file_bytes,
        },
        presented: Some(presented),
    })
}

/// The warning of a trace in which no answered loop's frame was found presented: the
/// answer times stand, but nothing in the trace says when a screen could have shown them.
pub(crate) fn presented_warning(info: &TraceInfo) -> Option<Warning> {
    let p = info.presented.as_ref()?;
    if p.matched > 0 || p.unmatched == 0 {
        return None;
    }
    let why = match &p.source {
        Some(source) => {
            format!("no {source} presentation followed any answer before the next input")
        }
        None => format!("the trace holds no presentation event ({FRAME_DISPLAYED})"),
    };
    Some(Warning::new(
        NO_PRESENTATION,
        format!(
            "{why}: the {} answered loops' frames were not placed on the trace clock",
            p.unmatched
        ),
    ))
}

/// The page clock on the trace's: trace ms = page ms + `offset_ms`, to within `error_ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Alignment {
    pub offset_ms: f64,
    pub error_ms: f64,
    pub marks: usize,
    /// The renderer main thread the marks came from: the page's.
    pub pid: i64,
    pub tid: i64,
}

/// The offset from the marks: their median; the error, the largest distance from it.
pub fn align(marks: &[AlignMark]) -> Option<Alignment> {
    let first = marks.first()?;
    let mut offsets: Vec<f64> = marks.iter().map(AlignMark::offset_ms).collect();
    offsets.sort_by(f64::total_cmp);
    let offset_ms = arena_stats::quantile(&offsets, 0.5)?;
    let error_ms = offsets
        .iter()
        .map(|o| (o - offset_ms).abs())
        .fold(0.0, f64::max);
    Some(Alignment {
        offset_ms,
        error_ms,
        marks: marks.len(),
        pid: first.pid,
        tid: first.tid,
    })
}

/// What merging found.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeStats {
    pub align: Alignment,
    pub loop_slices: u64,
    pub input_flows: u64,
    pub frame_flows: u64,
    pub inputs_checked: u64,
    pub input_error_ms: Option<f64>,
    pub presented: PresentedStats,
}

/// The answered loops placed at their frame's presentation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PresentedStats {
    /// How the presentations were found ([`SOURCE_LINKED`], [`SOURCE_DISPLAYED`]); `None`
    /// when the trace held none.
    pub source: Option<&'static str>,
    /// Answer to presentation, ms, one per matched loop, in loop order.
    pub gaps_ms: Vec<f64>,
    /// Answered loops with no presentation between their answer and the next input.
    pub unmatched: u64,
}

impl PresentedStats {
    fn info(&self) -> TracePresented {
        TracePresented {
            source: self.source.map(str::to_string),
            matched: self.gaps_ms.len() as u64,
            unmatched: self.unmatched,
            answer_to_presented_ms: Summary::of(&self.gaps_ms),
        }
    }
}

/// The merged trace document and what merging found.
pub struct Merged {
    pub doc: Value,
    pub stats: MergeStats,
}

/// A slice of the renderer's main thread, trace clock, ms.
#[derive(Debug, Clone, Copy)]
struct Slice {
    ts: f64,
    dur: f64,
}

impl Slice {
    fn end(self) -> f64 {
        self.ts + self.dur
    }
}

/// The page renderer's events the loops are linked to.
struct Renderer {
    pid: i64,
    tid: i64,
    /// `EventDispatch` slices by DOM event type.
    dispatch: Vec<(String, Slice)>,
    /// `FireAnimationFrame` slices (the animation frame callbacks, the recorder's paint
    /// and answer records among them).
    frames: Vec<Slice>,
    /// `EventTiming` starts by DOM event type (the event's own `timeStamp`).
    timing: Vec<(String, f64)>,
}

fn num(e: &Value, k: &str) -> Option<f64> {
    e.get(k).and_then(Value::as_f64)
}

fn data_type(e: &Value) -> Option<&str> {
    e.pointer("/args/data/type").and_then(Value::as_str)
}

impl Renderer {
    fn of(events: &[Value], pid: i64, tid: i64) -> Renderer {
        let mut r = Renderer {
            pid,
            tid,
            dispatch: Vec::new(),
            frames: Vec::new(),
            timing: Vec::new(),
        };
        for e in events {
            let on = |k: &str, want: i64| e.get(k).and_then(Value::as_i64) == Some(want);
            if !on("pid", pid) {
                continue;
            }
            let (name, ph) = (
                e.get("name").and_then(Value::as_str).unwrap_or(""),
                e.get("ph").and_then(Value::as_str).unwrap_or(""),
            );
            let Some(ts) = num(e, "ts").map(|t| t / 1e3) else {
                continue;
            };
            let slice = || Slice {
                ts,
                dur: num(e, "dur").unwrap_or(0.0) / 1e3,
            };
            match (name, ph) {
                ("EventDispatch", "X") if on("tid", tid) => {
                    if let Some(t) = data_type(e) {
                        r.dispatch.push((t.to_string(), slice()));
                    }
                }
                ("FireAnimationFrame", "X") if on("tid", tid) => r.frames.push(slice()),
                ("EventTiming", "b") => {
                    if let Some(t) = data_type(e) {
                        r.timing.push((t.to_string(), ts));
                    }
                }
                _ => {}
            }
        }
        r.dispatch.sort_by(|a, b| a.1.ts.total_cmp(&b.1.ts));
        r.frames.sort_by(|a, b| a.ts.total_cmp(&b.ts));
        r
    }

    /// The first dispatch of `event` starting in [from, to], not yet taken.
    fn dispatch_in(
        &self,
        event: &str,
        from: f64,
        to: f64,
        taken: &HashSet<usize>,
    ) -> Option<usize> {
        self.dispatch
            .iter()
            .enumerate()
            .find(|(i, (t, s))| t == event && s.ts >= from && s.ts <= to && !taken.contains(i))
            .map(|(i, _)| i)
    }

    /// The animation frame callback that holds `t` (within `tol`), else the last one to
    /// start before it.
    fn frame_at(&self, t: f64, tol: f64) -> Option<Slice> {
        self.frames
            .iter()
            .find(|s| s.ts - tol <= t && t <= s.end() + tol)
            .or_else(|| self.frames.iter().rev().find(|s| s.ts <= t + tol))
            .copied()
    }

    /// The `EventTiming` start of `event` nearest `t`, within 1 ms.
    fn timing_near(&self, event: &str, t: f64) -> Option<f64> {
        self.timing
            .iter()
            .filter(|(e, ts)| e == event && (ts - t).abs() <= 1.0)
            .map(|(_, ts)| *ts)
            .min_by(|a, b| (a - t).abs().total_cmp(&(b - t).abs()))
    }
}

/// The display's presentations, trace clock ms, and which of the page's compositor frames
/// each display frame drew.
struct Presentations {
    /// `Display::FrameDisplayed`, sorted.
    shown: Vec<f64>,
    /// The page's submitted compositor frames that a display frame drew: (submitted, that
    /// display frame's swap acknowledged), sorted by submission.
    drawn: Vec<(f64, f64)>,
}

impl Presentations {
    /// `None` when the trace holds no presentation.
    fn of(events: &[Value], pid: i64) -> Option<Presentations> {
        let mut shown: Vec<f64> = events
            .iter()
            .filter(|e| e.get("name").and_then(Value::as_str) == Some(FRAME_DISPLAYED))
            .filter_map(|e| num(e, "ts"))
            .map(|t| t / 1e3)
            .collect();
        if shown.is_empty() {
            return None;
        }
        shown.sort_by(f64::total_cmp);
        Some(Presentations {
            shown,
            drawn: drawn(events, pid),
        })
    }

    fn source(&self) -> &'static str {
        if self.drawn.is_empty() {
            SOURCE_DISPLAYED
        } else {
            SOURCE_LINKED
        }
    }

    /// When the answer at `t` was presented, if before `until`: the presentation of the
    /// display frame that drew the page's first compositor frame submitted at or after
    /// `t` (a display frame presents at the end of its swap), else, with no pipeline
    /// steps, the first presentation at or after `t`.
    fn after(&self, t: f64, until: f64) -> Option<f64> {
        let from = if self.drawn.is_empty() {
            t
        } else {
            let i = self.drawn.partition_point(|d| d.0 < t);
            self.drawn.get(i)?.1
        };
        let j = self.shown.partition_point(|&p| p < from);
        self.shown.get(j).copied().filter(|&p| p >= t && p < until)
    }
}

/// The compositor frames the renderer `pid` submitted that a display frame aggregated:
/// (submitted, the swap acknowledgement of the first display frame that aggregated it),
/// from the pipeline steps' ids (`surface_frame_trace_id`, `display_trace_id`).
fn drawn(events: &[Value], pid: i64) -> Vec<(f64, f64)> {
    let mut submits = Vec::new();
    let mut aggregated: HashMap<i64, (f64, i64)> = HashMap::new();
    let mut acks: HashMap<i64, f64> = HashMap::new();
    let steps = events
        .iter()
        .filter(|e| e.get("name").and_then(Value::as_str) == Some(PIPELINE))
        .filter_map(|e| {
            Some((
                e,
                num(e, "ts")? / 1e3,
                e.pointer("/args/chrome_graphics_pipeline")?,
            ))
        });
    for (e, ts, g) in steps {
        let id = |k: &str| g.get(k).and_then(Value::as_i64);
        match g.get("step").and_then(Value::as_str) {
            Some("STEP_SUBMIT_COMPOSITOR_FRAME")
                if e.get("pid").and_then(Value::as_i64) == Some(pid) =>
            {
                submits.extend(id("surface_frame_trace_id").map(|s| (ts, s)));
            }
            Some("STEP_SURFACE_AGGREGATION") => {
                let (Some(d), Some(list)) = (
                    id("display_trace_id"),
                    g.get("aggregated_surface_frame_trace_ids")
                        .and_then(Value::as_array),
                ) else {
                    continue;
                };
                for s in list.iter().filter_map(Value::as_i64) {
                    let first = aggregated.entry(s).or_insert((ts, d));
                    if ts < first.0 {
                        *first = (ts, d);
                    }
                }
            }
            Some("STEP_SWAP_BUFFERS_ACK") => {
                if let Some(d) = id("display_trace_id") {
                    let first = acks.entry(d).or_insert(ts);
                    *first = first.min(ts);
                }
            }
            _ => {}
        }
    }
    let mut drawn: Vec<(f64, f64)> = submits
        .into_iter()
        .filter_map(|(ts, s)| Some((ts, *acks.get(&aggregated.get(&s)?.1)?)))
        .collect();
    drawn.sort_by(|a, b| a.0.total_cmp(&b.0));
    drawn
}

/// Where a loop ends: its answer frame when the oracle judged pixels, else its paint.
pub fn loop_end(l: &Loop) -> Option<f64> {
    l.t_answer.or(l.t_paint)
}

/// Merges the loops into Chromium's `events` as a track of process `pid` (one slice per
/// answered loop, its stages nested, flows to the renderer's input dispatch and animation
/// frame), aligned by the page's `marks`.
pub fn merge(
    mut events: Vec<Value>,
    marks: &[(String, f64)],
    arm: &str,
    loops: &[Loop],
    pid: u32,
) -> Result<Merged> {
    let aligned = align_marks(&events, marks);
    let Some(align) = align(&aligned) else {
        bail!(
            "the trace holds none of the page's {} alignment marks",
            marks.len()
        );
    };
    let renderer = Renderer::of(&events, align.pid, align.tid);
    let presentations = Presentations::of(&events, align.pid);
    let (pid, tid) = (i64::from(pid), i64::from(pid));
    let mut out = track_metadata(pid, tid, arm);
    let mut stats = MergeStats {
        align,
        loop_slices: 0,
        input_flows: 0,
        frame_flows: 0,
        inputs_checked: 0,
        input_error_ms: None,
        presented: PresentedStats::default(),
    };
    let mut taken = HashSet::new();
    for l in loops {
        add_loop(l, &renderer, (pid, tid), &mut taken, &mut out, &mut stats);
    }
    let track = (pid, tid + 1);
    stats.presented = add_presented(
        loops,
        presentations.as_ref(),
        align.offset_ms,
        track,
        &mut out,
    );
    events.append(&mut out);
    let doc = json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "arena_perf": {
                "arm": arm,
                "clock": "trace ts (CLOCK_MONOTONIC us) = (page ms + offset_ms) * 1000",
                "offset_ms": align.offset_ms,
                "alignment_error_ms": align.error_ms,
                "alignment_marks": align.marks,
                "input_error_ms": stats.input_error_ms,
                "presented_source": stats.presented.source,
            }
        }
    });
    Ok(Merged { doc, stats })
}

/// One loop's part of the track: its input checked against the renderer's `EventTiming`;
/// when answered, its slice, its stages and its flows.
fn add_loop(
    l: &Loop,
    renderer: &Renderer,
    (pid, tid): (i64, i64),
    taken: &mut HashSet<usize>,
    out: &mut Vec<Value>,
    stats: &mut MergeStats,
) {
    let offset = stats.align.offset_ms;
    let tol = stats.align.error_ms + 0.1;
    let at = |page_ms: f64| page_ms + offset;
    let start = at(l.t_input);
    if let Some(ts) = renderer.timing_near(&l.event, start) {
        let err = (ts - start).abs();
        stats.inputs_checked += 1;
        stats.input_error_ms = Some(stats.input_error_ms.map_or(err, |e: f64| e.max(err)));
    }
    let Some(end) = loop_end(l).filter(|_| l.outcome == Outcome::Answered) else {
        return;
    };
    let end = at(end);
    let name = format!("{} loop", l.event);
    out.push(slice((pid, tid), LOOP_CAT, &name, start, end, loop_args(l)));
    stats.loop_slices += 1;
    let stages = stages(l);
    for (name, a, b) in &stages {
        let (a, b) = (at(*a).max(start), at(*b).min(end));
        if b >= a {
            let args = json!({"loop": l.index});
            out.push(slice((pid, tid), STAGE_CAT, name, a, b, args));
        }
    }
    let id = 0xA7E0_0000_u64 + 2 * l.index;
    let there = |ts: f64| (renderer.pid, renderer.tid, ts);
    if let Some(i) = renderer.dispatch_in(&l.event, start - tol, end, taken) {
        taken.insert(i);
        let target = renderer.dispatch[i].1;
        out.extend(flow(id, "input", (pid, tid, start), there(target.ts)));
        stats.input_flows += 1;
    }
    if let Some(frame) = renderer.frame_at(end, tol) {
        let from = stages.last().map_or(start, |(_, a, _)| at(*a).max(start));
        out.extend(flow(id + 1, "frame", (pid, tid, from), there(frame.ts)));
        stats.frame_flows += 1;
    }
}

/// Places each answered loop's answer at its frame's presentation, if it came before the
/// next input (a later one cannot be told from that input's), and adds a slice
/// `presented` between them on a thread of the loop track's own: the presentation lies
/// past the loop's slice.
fn add_presented(
    loops: &[Loop],
    presentations: Option<&Presentations>,
    offset: f64,
    (pid, tid): (i64, i64),
    out: &mut Vec<Value>,
) -> PresentedStats {
    let mut stats = PresentedStats {
        source: presentations.map(Presentations::source),
        ..PresentedStats::default()
    };
    let mut inputs: Vec<f64> = loops.iter().map(|l| l.t_input).collect();
    inputs.sort_by(f64::total_cmp);
    for l in loops.iter().filter(|l| l.outcome == Outcome::Answered) {
        let Some(answer) = loop_end(l) else {
            continue;
        };
        let next = inputs.partition_point(|&t| t <= l.t_input);
        let until = inputs.get(next).map_or(f64::INFINITY, |t| t + offset);
        let Some(shown) = presentations.and_then(|p| p.after(answer + offset, until)) else {
            stats.unmatched += 1;
            continue;
        };
        let gap = shown - (answer + offset);
        let args = json!({"loop": l.index, "source": stats.source, "answer_to_presented_ms": gap});
        out.push(slice(
            (pid, tid),
            PRESENTED_CAT,
            "presented",
            answer + offset,
            shown,
            args,
        ));
        stats.gaps_ms.push(gap);
    }
    if let Some(source) = stats.source {
        out.push(
            json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                        "args": {"name": format!("answer to presented ({source})")}}),
        );
    }
    stats
}

/// The loop's stages, page clock: (name, from, to), only those whose times it has.
fn stages(l: &Loop) -> Vec<(&'static str, f64, f64)> {
    let points = [
        ("inputToSocket", Some(l.t_input), l.t_send),
        ("sendToRecv", l.t_send, l.t_recv),
        ("recvToDraw", l.t_recv, l.t_draw),
        ("drawToPaint", l.t_draw, l.t_paint),
        ("paintToPixels", l.t_paint, l.t_answer),
    ];
    points
        .into_iter()
        .filter_map(|(n, a, b)| Some((n, a?, b?)))
        .filter(|(_, a, b)| b > a)
        .collect()
}

fn loop_args(l: &Loop) -> Value {
    json!({
        "index": l.index,
        "label": l.label,
        "event": l.event,
        "cold": l.cold,
        "t_input": l.t_input,
        "inputToSocket": l.input_to_socket,
        "sendToRecv": l.send_to_recv,
        "recvToDraw": l.recv_to_draw,
        "inputToPaint": l.input_to_paint,
        "inputToPixels": l.input_to_pixels,
        "reply_bytes": l.reply_bytes,
    })
}

/// A complete slice from `a` to `b`, trace clock ms. Both ends are whole nanoseconds
/// first, so a stage clipped to its loop's end never passes it by a rounding.
fn slice((pid, tid): (i64, i64), cat: &str, name: &str, a: f64, b: f64, args: Value) -> Value {
    let (a, b) = (ns(a), ns(b));
    json!({
        "ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
        "ts": a as f64 / 1e3, "dur": (b - a) as f64 / 1e3, "args": args,
    })
}

/// Trace clock ms as whole nanoseconds.
fn ns(ms: f64) -> i64 {
    (ms * 1e6).round() as i64
}

/// A flow from the slice that starts at `from` to the slice that starts at `to` (binding
/// point: enclosing slice; each end 1 ns inside its slice's start, so a viewer never sees
/// the flow and the slice tie).
fn flow(id: u64, name: &str, from: (i64, i64, f64), to: (i64, i64, f64)) -> [Value; 2] {
    [
        json!({"ph": "s", "cat": FLOW_CAT, "name": name, "id": id,
               "pid": from.0, "tid": from.1, "ts": (ns(from.2) + 1) as f64 / 1e3}),
        json!({"ph": "f", "bp": "e", "cat": FLOW_CAT, "name": name, "id": id,
               "pid": to.0, "tid": to.1, "ts": (ns(to.2) + 1) as f64 / 1e3}),
    ]
}

fn track_metadata(pid: i64, tid: i64, arm: &str) -> Vec<Value> {
    vec![
        json!({"ph": "M", "name": "process_name", "pid": pid, "tid": tid,
               "args": {"name": TRACK_NAME}}),
        json!({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": tid,
               "args": {"sort_index": -1}}),
        json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
               "args": {"name": format!("loops ({arm}, page clock aligned)")}}),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const OFFSET: f64 = 5_000_000.0;
    const PID: i64 = 40;

    fn mark(name: &str, page_ms: f64, jitter_us: f64) -> Value {
        json!({"cat": "blink.user_timing", "name": name, "ph": "I", "pid": PID, "tid": PID,
               "ts": (page_ms + OFFSET) * 1e3 + jitter_us})
    }

    fn x(name: &str, page_ms: f64, dur_ms: f64, data: Value) -> Value {
        json!({"cat": "devtools.timeline", "name": name, "ph": "X", "pid": PID, "tid": PID,
               "ts": (page_ms + OFFSET) * 1e3, "dur": dur_ms * 1e3, "args": {"data": data}})
    }

    fn answered(index: u64, t: f64) -> Loop {
        Loop {
            index,
            event: "mousedown".into(),
            answered: true,
            outcome: Outcome::Answered,
            t_input: t,
            t_send: Some(t + 2.0),
            t_recv: Some(t + 30.0),
            t_draw: Some(t + 31.0),
            t_paint: Some(t + 40.0),
            t_answer: Some(t + 40.0),
            input_to_pixels: Some(40.0),
            input_to_paint: Some(40.0),
            ..Loop::default()
        }
    }

    #[test]
    fn loops_become_nested_slices_with_flows_on_the_aligned_clock() {
        let marks: Vec<(String, f64)> = (0..4)
            .map(|k| (format!("arena-align-t{k}"), 10.0 + k as f64))
            .collect();
        let mut events: Vec<Value> = marks
            .iter()
            .zip([0.0, 3.0, -2.0, 1.0])
            .map(|((n, t), j)| mark(n, *t, j))
            .collect();
        events.push(x("EventDispatch", 101.0, 1.5, json!({"type": "mousedown"})));
        events.push(x("FireAnimationFrame", 139.9, 0.2, json!({})));
        events.push(
            json!({"cat": "devtools.timeline", "name": "EventTiming", "ph": "b",
                           "pid": PID, "tid": PID, "ts": (100.004 + OFFSET) * 1e3,
                           "args": {"data": {"type": "mousedown"}}}),
        );
        let unanswered = Loop {
            index: 1,
            event: "mouseup".into(),
            t_input: 300.0,
            ..Loop::default()
        };
        let loops = [answered(0, 100.0), unanswered];
        let m = merge(events, &marks, "stock", &loops, 7).unwrap();
        let s = m.stats;
        // Offsets 0, 3, -2, 1 us: median 0.5 us, farthest 2.5 us from it.
        assert!(
            (s.align.offset_ms - (OFFSET + 0.0005)).abs() < 1e-6,
            "{s:?}"
        );
        assert!((s.align.error_ms - 0.0025).abs() < 1e-6, "{s:?}");
        assert_eq!((s.align.marks, s.align.pid), (4, PID));
        assert_eq!((s.loop_slices, s.input_flows, s.frame_flows), (1, 1, 1));
        assert_eq!(s.inputs_checked, 1);
        assert!((s.input_error_ms.unwrap() - 0.0035).abs() < 1e-6, "{s:?}");

        let all = m.doc["traceEvents"].as_array().unwrap();
        let ours: Vec<&Value> = all.iter().filter(|e| e["pid"] == 7).collect();
        let lp: Vec<&&Value> = ours.iter().filter(|e| e["cat"] == LOOP_CAT).collect();
        assert_eq!(lp.len(), 1);
        let (ts, dur) = (
            lp[0]["ts"].as_f64().unwrap(),
            lp[0]["dur"].as_f64().unwrap(),
        );
        assert!((ts / 1e3 - s.align.offset_ms - 100.0).abs() < 1e-6);
        assert!((dur - 40_000.0).abs() < 1e-3);
        let stages: Vec<&str> = ours
            .iter()
            .filter(|e| e["cat"] == STAGE_CAT)
            .map(|e| {
                let (a, d) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
                assert!(a >= ts && a + d <= ts + dur, "{e} outside its loop");
                e["name"].as_str().unwrap()
            })
            .collect();
        assert_eq!(
            stages,
            ["inputToSocket", "sendToRecv", "recvToDraw", "drawToPaint"]
        );
        let flows: Vec<(&str, &str, f64)> = all
            .iter()
            .filter(|e| e["cat"] == FLOW_CAT)
            .map(|e| {
                let name = e["name"].as_str().unwrap();
                (name, e["ph"].as_str().unwrap(), e["ts"].as_f64().unwrap())
            })
            .collect();
        assert_eq!(flows.len(), 4, "{flows:?}");
        let end_of = |name: &str| flows.iter().find(|f| f.0 == name && f.1 == "f").unwrap().2;
        assert!((end_of("input") / 1e3 - OFFSET - 101.0).abs() < 1e-3);
        assert!((end_of("frame") / 1e3 - OFFSET - 139.9).abs() < 1e-3);
    }

    /// A displayed frame's presentation, in the GPU process.
    fn shown(page_ms: f64) -> Value {
        json!({"cat": "benchmark,viz,disabled-by-default-display.framedisplayed",
               "name": FRAME_DISPLAYED, "ph": "I", "pid": PID + 2, "tid": PID + 3,
               "ts": (page_ms + OFFSET) * 1e3})
    }

    /// A pipeline step as Chromium writes it: a complete slice with its ids.
    fn step(pid: i64, page_ms: f64, step: &str, ids: Value) -> Value {
        let mut g = ids;
        g["step"] = json!(step);
        json!({"cat": "viz,benchmark,graphics.pipeline", "name": PIPELINE, "ph": "X",
               "pid": pid, "tid": pid + 5, "ts": (page_ms + OFFSET) * 1e3, "dur": 20.0,
               "args": {"chrome_graphics_pipeline": g}})
    }

    /// Renderer `pid` submits surface `s` at `submit`; display frame `d` aggregates it
    /// (and another client's surface) at `aggregate` and has its swap acknowledged at
    /// `ack`.
    fn drawn_frame(pid: i64, (s, d): (i64, i64), [submit, aggregate, ack]: [f64; 3]) -> Vec<Value> {
        let gpu = PID + 2;
        let ids = json!({"display_trace_id": d, "aggregated_surface_frame_trace_ids": [-1, s]});
        let submitted = json!({"surface_frame_trace_id": s});
        vec![
            step(pid, submit, "STEP_SUBMIT_COMPOSITOR_FRAME", submitted),
            step(gpu, aggregate, "STEP_SURFACE_AGGREGATION", ids),
            step(
                gpu,
                ack,
                "STEP_SWAP_BUFFERS_ACK",
                json!({"display_trace_id": d}),
            ),
        ]
    }

    fn aligned(extra: Vec<Value>, loops: &[Loop]) -> Merged {
        let marks = vec![("arena-align-p".to_string(), 1.0)];
        let mut events = vec![mark("arena-align-p", 1.0, 0.0)];
        events.extend(extra);
        merge(events, &marks, "stock", loops, 7).unwrap()
    }

    #[test]
    fn each_answer_is_placed_at_the_display_frame_that_drew_the_pages_next_frame() {
        // Loop 0 answers at 140, loop 1 at 240, loop 2 at 440 (its input at 400).
        let loops = [answered(0, 100.0), answered(1, 200.0), answered(2, 400.0)];
        let mut events = vec![shown(130.0), shown(140.5), shown(143.5), shown(156.1)];
        // Loop 0: the page's frame, submitted at 141.5, was drawn by the display frame
        // presented at 143.5; written first, a later display frame that drew it again
        // does not count.
        let mut again = drawn_frame(PID, (-50, -8), [141.5, 155.0, 156.0]);
        events.extend(again.drain(1..));
        events.extend(drawn_frame(PID, (-50, -7), [141.5, 142.0, 143.4]));
        // Another renderer's frame, submitted right after the answer and presented at
        // 140.5, is not the page's.
        events.extend(drawn_frame(PID + 1, (-60, -6), [140.1, 140.2, 140.4]));
        // Loop 1: its frame was never aggregated, and the next one drawn was presented
        // after the next input: unmatched.
        events.push(step(
            PID,
            241.0,
            "STEP_SUBMIT_COMPOSITOR_FRAME",
            json!({"surface_frame_trace_id": -51}),
        ));
        events.extend(drawn_frame(PID, (-52, -9), [405.0, 405.5, 406.0]));
        events.push(shown(406.1));
        // Loop 2: presented 2.75 ms after its answer.
        events.extend(drawn_frame(PID, (-53, -10), [441.25, 441.5, 442.5]));
        events.push(shown(442.75));
        let m = aligned(events, &loops);
        let p = &m.stats.presented;
        assert_eq!(p.source, Some(SOURCE_LINKED));
        assert_eq!(p.unmatched, 1, "{p:?}");
        assert_eq!(p.gaps_ms.len(), 2, "{p:?}");
        assert!((p.gaps_ms[0] - 3.5).abs() < 1e-6, "{p:?}");
        assert!((p.gaps_ms[1] - 2.75).abs() < 1e-6, "{p:?}");

        let all = m.doc["traceEvents"].as_array().unwrap();
        let slices: Vec<&Value> = all.iter().filter(|e| e["cat"] == PRESENTED_CAT).collect();
        assert_eq!(slices.len(), 2);
        let offset = m.stats.align.offset_ms;
        let ts = slices[0]["ts"].as_f64().unwrap() / 1e3 - offset;
        assert!((ts - 140.0).abs() < 1e-6, "{}", slices[0]);
        assert!((slices[0]["dur"].as_f64().unwrap() - 3_500.0).abs() < 1e-3);
        assert_eq!(slices[1]["args"]["loop"], 2);
        let info = m.stats.presented.info();
        assert_eq!((info.matched, info.unmatched), (2, 1));
        assert_eq!(info.answer_to_presented_ms.unwrap().n, 2);
    }

    #[test]
    fn without_pipeline_steps_the_first_displayed_frame_serves_and_without_any_the_run_is_warned() {
        let loops = [answered(0, 100.0)];
        let m = aligned(vec![shown(139.0), shown(146.0)], &loops);
        let p = &m.stats.presented;
        assert_eq!(p.source, Some(SOURCE_DISPLAYED));
        assert_eq!(p.gaps_ms.len(), 1);
        assert!((p.gaps_ms[0] - 6.0).abs() < 1e-6, "{p:?}");

        let m = aligned(vec![], &loops);
        let info = TraceInfo {
            loop_slices: 1,
            presented: Some(m.stats.presented.info()),
            ..TraceInfo::default()
        };
        let p = info.presented.as_ref().unwrap();
        assert_eq!((p.source.as_deref(), p.matched, p.unmatched), (None, 0, 1));
        let w = presented_warning(&info).expect("a warning");
        assert_eq!(w.code, NO_PRESENTATION);
        assert!(w.message.contains("no presentation event"), "{}", w.message);
        assert!(info
            .presented_line()
            .unwrap()
            .contains("no presentation event"));
        // A run with nothing answered has nothing to place, and no warning.
        let none = aligned(vec![], &[]).stats.presented.info();
        let info = TraceInfo {
            presented: Some(none),
            ..TraceInfo::default()
        };
        assert!(presented_warning(&info).is_none());
    }

    #[test]
    fn a_trace_without_the_marks_is_an_error_that_says_so() {
        let marks = vec![("arena-align-x".to_string(), 1.0)];
        let e = merge(vec![], &marks, "a", &[], 1).err().unwrap();
        assert!(format!("{e:#}").contains("alignment marks"), "{e:#}");
    }
}
