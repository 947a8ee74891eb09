//! The run model: what one pilot run of one arm measured, and the context needed to
//! trust it later (versions, host, knobs, warnings).

use std::collections::BTreeMap;

use arena_stats::Summary;
use serde::{Deserialize, Serialize};

/// The schema version this crate writes and the only one it reads. Bump it when a field
/// changes meaning or a required field is added; `Run::load` refuses other versions so a
/// comparison never silently mixes two meanings of one column.
pub const SCHEMA_VERSION: u32 = 1;

/// A run whose share of answered loops with a reply of at least the target's
/// `idle_reply_bytes` is below this looks idle (an idle board makes CPU look free). One
/// bar for the pilot's own warning and for compare's: a measured firing phase had 43 of 56
/// clicks over it, a deployment board 3 of 52.
pub const IDLE_SHARE: f64 = 0.10;

/// One run: `run.json` (meta), `loops.csv` (loops), `events.jsonl` (events) and
/// `setup_events.jsonl` (setup_events).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub meta: RunMeta,
    pub loops: Vec<Loop>,
    pub events: Vec<Event>,
    /// What the page recorded from navigation to the clear on attach (the page's load and
    /// the setup steps: a board's first paint arrives here). A population of its own: it
    /// never enters pairing. `None` for a run folder without the file (made before it).
    pub setup_events: Option<Vec<Event>>,
    /// The run's drags and hovers (`gestures.json` and its tables), each its own
    /// population, never pooled with the loops; empty for a run without gestures. Read
    /// from its own files, so not part of this struct's serde form.
    #[serde(skip)]
    pub gestures: Vec<crate::gestures::RunGesture>,
}

/// How the run ended. A partial run is still a run: its folder is written and readable,
/// and tables say it was cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every planned click was made and waited for.
    Complete,
    /// Interrupted (Ctrl-C / SIGINT / SIGTERM); loops up to the interruption are kept.
    Interrupted,
    /// The target or the browser died mid-run; loops up to the failure are kept.
    TargetFailed,
    /// The target went silent mid-run: `pacing.stall_clicks` clicks in a row got no
    /// WebSocket message from the target's socket; loops up to the silence are kept.
    TargetStalled,
}

/// Where the WebSocket records came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SocketSource {
    /// The injected recorder's wrapper around the page's `WebSocket`.
    PageHook,
    /// CDP `Network.webSocketFrameSent/Received`, aligned to the page clock.
    Cdp,
    /// The application's own recorder, named in the pilot file.
    AppRecorder,
}

/// The machine the run was measured on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub cores: u32,
    pub kernel: String,
    /// How the cores were split between the target and the browser (`--cpu-split`:
    /// `target 0, browser 1`); absent when they shared them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_split: Option<String>,
}

impl Host {
    /// The current machine: available parallelism and `/proc/sys/kernel/osrelease`.
    pub fn current() -> Host {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(0);
        let kernel = arena_sys::procfs::kernel_release().unwrap_or_else(|| "unknown".into());
        Host {
            cores,
            kernel,
            cpu_split: None,
        }
    }
}

/// A warning about the measurement itself, shown next to the figures it concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// Stable machine-readable code, e.g. `dropped_records`, `stale_records`,
    /// `unanswered`, `counts_climb`, `invariant`, `partial_run`.
    pub code: String,
    pub message: String,
}

impl Warning {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Warning {
            code: code.into(),
            message: message.into(),
        }
    }
}

/// One connection a shaped link carried (`run.json` `link_connections`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkConnection {
    /// The destination as the browser named it, `host:port`.
    pub dest: String,
    /// What it carried, from its first bytes: `websocket`, `http`, `tls`, `other`, or
    /// `silent` when the browser sent nothing on it.
    pub kind: String,
    /// Bytes delivered browser -> target.
    pub bytes_up: u64,
    /// Bytes delivered target -> browser.
    pub bytes_down: u64,
}

/// `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    pub schema_version: u32,
    /// Arm name from the pilot file (e.g. `stock`, `lazy-png`).
    pub arm: String,
    /// The arm's knobs as name -> value text (fixture knobs, URL parameters, ...).
    #[serde(default)]
    pub knobs: BTreeMap<String, String>,
    /// Pilot file path as given, or `None` for the built-in pilot.
    pub pilot_file: Option<String>,
    /// Hex SHA-256 of the pilot file's bytes; runs of different pilots are not comparable.
    pub pilot_hash: String,
    pub url: String,
    pub chromium_version: String,
    pub arena_perf_version: String,
    pub host: Host,
    /// UTC, RFC 3339, millisecond precision.
    pub started_at: String,
    pub ended_at: String,
    pub status: RunStatus,
    /// Why the run ended early, when it did.
    #[serde(default)]
    pub status_message: Option<String>,
    pub socket_source: SocketSource,
    /// Seed of the click generator (same seed, same click positions).
    pub seed: u64,
    pub summary: RunSummary,
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// Bytes off the wire when the run was captured (`--capture`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<WireFigures>,
    /// How a loop's end was decided (absent in runs from before oracles: `reply`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerInfo>,
    /// The shaped link between the browser and the target (`--link`, or the arm's `link`),
    /// as `rtt=20ms,jitter=0ms,down=25mbit,up=25mbit`; absent for a direct connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// Every connection the link carried, in the order the browser opened them; empty
    /// without a link, and in runs made before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub link_connections: Vec<LinkConnection>,
    /// Chromium's trace of the click loop with the loops merged in (`--trace`); absent
    /// otherwise, and in runs made before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceInfo>,
    /// The idle window (`--idle`): what the target sent with nobody touching it, after the
    /// clear and before the clicks; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<IdleWindow>,
    /// CPU by process and phase, sampled beside the run (the fixture's threads, Chromium,
    /// what `--sample` named); absent when nothing was sampled, and in runs made before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<crate::cpu::RunCpu>,
    /// What a loop of this run is (absent in runs made before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_settings: Option<LoopSettings>,
    /// The person's browser the page was shown in (absent in runs made before it was
    /// recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<BrowserSettings>,
    /// The page clock on the host's wall clock, which server logs are stamped with
    /// (`explain` joins them by it); absent in runs made before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<PageClock>,
}

/// Unix ms (the host's wall clock) = page ms + `unix_offset_ms`, to within `error_ms`:
/// the narrowest of `n` brackets of host clock readings around one `performance.now()`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PageClock {
    pub unix_offset_ms: f64,
    pub error_ms: f64,
    pub n: u32,
    /// The page's own `performance.timeOrigin`, Unix ms: the browser's idea of the same
    /// offset (it reads its wall clock once, at navigation).
    pub time_origin_ms: f64,
}

/// The browser a run's page was shown in, as the page saw it: an arm may set each (the
/// pilot file's `[arms.NAME.browser]`), and runs of one arm that differ in one are not
/// pooled (`crates/arena-compare/src/comparable.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BrowserSettings {
    /// `window.devicePixelRatio`.
    pub dpr: f64,
    /// The viewport, CSS px (`innerWidth`, `innerHeight`).
    pub viewport_w: u32,
    pub viewport_h: u32,
    /// The CPU slowdown the page ran under (1: none).
    pub cpu_throttle: f64,
    /// Whether Chromium had a window (`--headful`): a command's setting, not an arm's, so
    /// not in [`BrowserSettings::label`]; absent in runs made before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headful: Option<bool>,
}

impl BrowserSettings {
    /// `dpr=2 viewport=1280x800 cpu=4x`: how tables and messages show it.
    pub fn label(&self) -> String {
        format!(
            "dpr={} viewport={}x{} cpu={}x",
            self.dpr, self.viewport_w, self.viewport_h, self.cpu_throttle
        )
    }
}

/// A window with no input (`pilot --idle`, `watch`): its bounds and every message the page
/// received in it, with how alike each was to the one before.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct IdleWindow {
    /// The length asked for, s.
    pub requested_s: f64,
    /// Page clock at its start and end, ms (`performance.now()`: 0 is the navigation).
    pub start_ms: f64,
    pub end_ms: f64,
    /// UTC, RFC 3339, at its start and end.
    pub started_at: String,
    pub ended_at: String,
    /// Which likeness judges a frame near-identical: `pixels` (the canvas could be read)
    /// or `bytes`.
    pub similarity: String,
    /// Why pixels, or bytes, could not be compared, when they could not.
    #[serde(default)]
    pub pixels_unavailable: Option<String>,
    #[serde(default)]
    pub bytes_unavailable: Option<String>,
    /// Whole-canvas reads the page made for the pixel likeness, and their page time, ms.
    #[serde(default)]
    pub pixel_checks: u64,
    #[serde(default)]
    pub pixel_check_ms: f64,
    /// Every message received in the window, in order.
    pub frames: Vec<IdleFrame>,
}

/// One message received in an idle window.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct IdleFrame {
    pub seq: u64,
    /// Page clock, ms.
    pub t_ms: f64,
    /// Payload bytes.
    pub size: u32,
    /// Likeness to the previous message, percent: equal bytes (`bytes_pct`) and unchanged
    /// canvas pixels (`pixels_pct`); `null` where it could not be measured.
    pub bytes_pct: Option<f64>,
    pub pixels_pct: Option<f64>,
}

/// What `trace.json` holds, how its clock was aligned with the page's, and what taking
/// it cost.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TraceInfo {
    /// The trace's file in the run folder (`trace.json`).
    pub file: String,
    /// Chromium's own trace events kept (the loop track's are counted apart).
    pub events: u64,
    /// Slices on the loop track: one per answered loop.
    pub loop_slices: u64,
    /// Loops linked by a flow to the renderer's dispatch of their input (`EventDispatch`)
    /// and to the animation frame that closed them (`FireAnimationFrame`).
    pub input_flows: u64,
    pub frame_flows: u64,
    /// Chromium said its trace buffer lost data.
    pub data_loss: bool,
    /// The alignment: trace clock (CLOCK_MONOTONIC ms) = page clock + `offset_ms`.
    pub offset_ms: f64,
    /// Page marks the offset was measured from (`performance.mark`, before and after the
    /// clicks), and the largest distance of one mark's offset from `offset_ms`.
    pub alignment_marks: u64,
    pub alignment_error_ms: f64,
    /// Inputs found in the renderer's `EventTiming` events, and the largest distance
    /// between one's start (aligned) and the loop's `t_input`: the error a loop's start
    /// carries, the page clock's coarsening included.
    #[serde(default)]
    pub inputs_checked: u64,
    #[serde(default)]
    pub input_error_ms: Option<f64>,
    pub overhead: TraceOverhead,
    /// When the trace saw the frame that showed each answer presented; absent in runs made
    /// before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presented: Option<TracePresented>,
}

impl TraceInfo {
    /// One line on the answer frames' presentation: `trace: answer frame presented +3.2 ms
    /// p50 after the page saw it (p90 +8.1, max +9.0, n = 38 of 38 answered;
    /// Display::FrameDisplayed via Graphics.Pipeline)`. `None` for a run that did not
    /// measure it.
    pub fn presented_line(&self) -> Option<String> {
        let p = self.presented.as_ref()?;
        let answered = p.matched + p.unmatched;
        Some(match (&p.source, &p.answer_to_presented_ms) {
            (Some(source), Some(g)) => format!(
                "trace: answer frame presented {:+.1} ms p50 after the page saw it (p90 {:+.1}, max {:+.1}, n = {} of {answered} answered; {source})",
                g.p50, g.p90, g.max, p.matched
            ),
            (Some(source), None) => format!(
                "trace: no {source} presentation followed any of the {answered} answers before the next input"
            ),
            (None, _) => format!(
                "trace: no presentation event in the trace: the {answered} answers' frames cannot be placed"
            ),
        })
    }
}

/// The frames that showed the answers, as Chromium's trace saw them presented: for each
/// answered loop, the presentation of the display frame that drew the page's first
/// compositor frame after its answer (`t_answer`, else `t_paint`), if it came before the
/// next input (`docs/trace.md`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TracePresented {
    /// How the presentations were found: `Display::FrameDisplayed via Graphics.Pipeline`
    /// (linked to the page's frames), or `Display::FrameDisplayed` (the first displayed
    /// frame after the answer, when the trace has no pipeline steps); absent when the
    /// trace held no presentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Answered loops with a presentation in their window, and those without.
    pub matched: u64,
    pub unmatched: u64,
    /// Answer to presentation, ms, over the matched loops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_to_presented_ms: Option<Summary>,
}

/// What tracing added to the run's wall time, ms, and the trace's size.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TraceOverhead {
    /// `Tracing.start` and the marks before the clicks.
    pub start_ms: f64,
    /// The marks after the clicks, `Tracing.end` and reading the trace back.
    pub collect_ms: f64,
    /// Merging the loops in and writing `trace.json`.
    pub write_ms: f64,
    /// Bytes Chromium sent, and bytes of `trace.json`.
    pub chromium_bytes: u64,
    pub file_bytes: u64,
}

/// The answer oracle a run used, and the fallback it took, if any.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AnswerInfo {
    /// `pixels`, `reply` or `js`: what the run's loops were closed on.
    pub oracle: String,
    /// What the pilot file asked for (`auto`, `pixels`, `reply`, `js`).
    pub requested: String,
    /// Human-readable detail: the region, the minimum reply size, the predicate.
    pub detail: String,
    /// Why the requested oracle could not be used, when the run fell back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

impl AnswerInfo {
    /// The table header's words: `answer: pixels (r=8px)`, with the fallback when taken.
    pub fn label(&self) -> String {
        let mut s = format!("answer: {}", self.oracle);
        if !self.detail.is_empty() {
            s.push_str(&format!(" ({})", self.detail));
        }
        if let Some(f) = &self.fallback {
            s.push_str(&format!(", fell back from {}: {f}", self.requested));
        }
        s
    }
}

/// How a loop ended. Every input is exactly one of these; only `Answered` loops enter the
/// latency figures past inputToSocket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Its own answer arrived inside the window.
    Answered,
    /// Nothing answered it inside the window.
    #[default]
    Unanswered,
    /// Its only candidate answer already belonged to an earlier input (one answer closes
    /// one loop): counted apart, out of the headline.
    Claimed,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Answered => "answered",
            Outcome::Unanswered => "unanswered",
            Outcome::Claimed => "claimed",
        }
    }
}

/// What a capture beside the run saw. The pcap counts the whole session (the first board
/// paint before the recorder's clear included), so it is at least what the page counted.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WireFigures {
    /// `pcap` (per-direction WebSocket figures from `wire.pcap`) or `interface_counters`
    /// (raw capture not permitted: only the interface's byte count, no direction split).
    pub source: String,
    /// The capture backend that wrote `wire.pcap` (`af_packet` or `libpcap`); `None`
    /// under the counters fallback, and in runs made before it was recorded.
    #[serde(default)]
    pub backend: Option<String>,
    /// Why the figures are only interface counters, when they are.
    #[serde(default)]
    pub reason: Option<String>,
    pub kernel_drops: u64,
    /// Bytes the interface carried during the run (all traffic on it, not only the target).
    #[serde(default)]
    pub interface_bytes: Option<u64>,
    #[serde(default)]
    pub server_to_client: Option<WireDirection>,
    #[serde(default)]
    pub client_to_server: Option<WireDirection>,
}

/// One direction of a captured WebSocket session.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WireDirection {
    pub packets: u64,
    /// TCP payload bytes (retransmitted copies excluded).
    pub tcp_payload_bytes: u64,
    /// WebSocket data frames and their payload bytes (compressed, as on the wire).
    pub frames: u64,
    pub frame_payload_bytes: u64,
    /// Application bytes after permessage-deflate.
    pub app_bytes: u64,
    /// app bytes / frame payload bytes (1.61 means the wire carries 62 %).
    pub compression_ratio: Option<f64>,
}

/// Headline figures of a run, computed once when it is written. Latency summaries are of
/// **warm, answered, discrete** loops (clicks and keys): cold loops and coalesced input
/// are reported on their own.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunSummary {
    pub clicks_planned: u64,
    /// Discrete inputs the tool dispatched (a click is two: mousedown and mouseup).
    pub inputs_dispatched: u64,
    pub loops: u64,
    pub answered: u64,
    pub unanswered: u64,
    /// Loops whose only candidate answer already closed an earlier input's loop.
    #[serde(default)]
    pub claimed: u64,
    pub cold: u64,
    pub input_to_socket: Option<Summary>,
    pub send_to_recv: Option<Summary>,
    pub recv_to_draw: Option<Summary>,
    pub input_to_paint: Option<Summary>,
    /// input -> the painted frame the answer oracle accepted (pixels and js oracles).
    #[serde(default)]
    pub input_to_pixels: Option<Summary>,
    /// inputToPaint of cold loops (first interaction of a page), kept out of the above.
    pub cold_input_to_paint: Option<Summary>,
    /// WebSocket payload bytes received by the page between clear and end of run.
    pub bytes_received: u64,
    pub frames_received: u64,
    pub bytes_sent: u64,
    pub sends_input: u64,
    pub sends_ack: u64,
    pub sends_other: u64,
    /// Answered loops whose reply carried more than 4 KB (4096 B): a run with few of
    /// these is probably measuring an idle board.
    pub replies_over_4kb: u64,
    /// The target's idle threshold (`target.idle_reply_bytes`, default 4096) and the
    /// answered loops whose reply reached it.
    #[serde(default)]
    pub idle_reply_bytes: u64,
    #[serde(default)]
    pub replies_over_idle: u64,
    /// Coalesced input (mousemove, pointermove, ...) seen, and its inputToSocket.
    pub coalesced_inputs: u64,
    pub coalesced_input_to_socket: Option<Summary>,
    /// Records drained from the page recorder, and records it had to overwrite.
    pub records: u64,
    pub dropped_records: u64,
    /// Records whose sequence number predates the clear on attach (ignored).
    pub stale_records: u64,
    /// Loops where t_input <= t_send <= t_recv <= t_draw <= t_paint did not hold.
    pub invariant_violations: u64,
    /// Waits for the socket's quiet (`settle_ms`) that ran out first: the next input went
    /// with traffic in flight.
    #[serde(default)]
    pub quiet_lapses: u64,
    /// Loops marked `after_lapse`: the inputs that went right after a lapse, where the
    /// page's clock dated it (absent (0) in runs made before they were marked).
    #[serde(default)]
    pub after_lapse: u64,
    /// Whether the inputs went out at a person's timing: their phase on the page's frame
    /// clock, tested for uniformity (absent in runs made before it, or with fewer than 8
    /// inputs or no frame clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_phase: Option<InputPhase>,
    /// The control: points watched with no input, judged as an input's (absent where the
    /// oracle is not pixels, and in runs made before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sham: Option<ShamWatches>,
    /// Typing's own figures (`[typing]` runs only): its loops are keydowns, never pooled
    /// with clicks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typing: Option<TypingSummary>,
}

/// A typing run's keys: each keydown a loop closed by the first frame that showed its
/// glyph, page clock, ms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypingSummary {
    /// `pace` (an interval per key) or `burst` (every key back to back).
    pub mode: String,
    /// Keydown loops, and how each ended: every key is one of the three.
    pub keys: u64,
    pub answered: u64,
    pub unanswered: u64,
    pub claimed: u64,
    /// keydown -> its WebSocket send, of every key that was sent.
    pub keydown_to_socket: Option<Summary>,
    /// keydown -> the painted frame that first showed its glyph, of the answered keys.
    pub keydown_to_glyph: Option<Summary>,
    /// Frames that showed at least one glyph, and those that showed more than one.
    pub glyph_frames: u64,
    pub frames_with_several: u64,
    /// The most keys sent and not yet shown as of any glyph frame ("keys behind").
    pub max_keys_behind: u64,
}

/// Sham watches: before some clicks, the next click's point is watched with no input for
/// as long as real answers took. A point that "answers" then is changing on its own (a
/// clock, a caret, an animation), and a loop there can be closed by it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShamWatches {
    /// Sham watches made.
    pub n: u64,
    /// Those whose pixels changed with no input.
    pub changed: u64,
    /// Their windows' median, ms.
    pub window_p50_ms: f64,
}

/// The inputs' times modulo the page's frame interval, against the uniform distribution
/// (one-sample Kolmogorov-Smirnov). A p below 0.01 means the inputs sat at a preferred
/// point of the frame clock, and frame rounding then biases every loop the same way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputPhase {
    /// Trusted discrete inputs whose phase was measured.
    pub n: u64,
    /// The frame interval the phase is taken modulo, ms.
    pub frame_interval_ms: f64,
    /// The KS statistic: the largest gap between the phases' CDF and the uniform one.
    pub ks_d: f64,
    /// Its p-value (asymptotic Kolmogorov distribution).
    pub p: f64,
}

/// Every setting that defines what a loop of this run is: two runs that differ in one of
/// these measure different things. The oracle and its parameters are `answer`, the socket
/// source `socket_source`, the link `link`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopSettings {
    /// DOM events that start a loop.
    pub loop_events: Vec<String>,
    /// The answer window after each input, ms: a loop not answered inside it is unanswered.
    pub timeout_ms: u64,
    /// How long the socket is quiet before the next input goes, ms.
    pub settle_ms: u64,
    /// The pause after a click's settle, ms.
    pub interval_ms: u64,
    /// The first this many clicks of the page are cold.
    pub warmup: u64,
    /// The pointer moved to the point (and the page settled) before each press.
    pub move_first: bool,
    /// How the release follows the press: `fixed` (exactly `hold_min_ms` after it) or
    /// `person` (after the press's loop ended and the socket was quiet, and no sooner than
    /// a hold drawn from `hold_min_ms`..`hold_max_ms`).
    pub hold: String,
    pub hold_min_ms: u64,
    pub hold_max_ms: u64,
    /// Each input first waits a pause drawn uniformly from [0, this) ms (0: none).
    pub phase_jitter_ms: f64,
    /// The page's animation-frame interval measured before the clicks, ms.
    #[serde(default)]
    pub frame_interval_ms: Option<f64>,
    /// With sockets seen through CDP: the worst-case error of the map from their clock to
    /// the page's, ms (page-hook sockets share the page's clock: absent).
    #[serde(default)]
    pub socket_clock_error_ms: Option<f64>,
    /// The built-in fixture's board (`--scenario`): `idle`, `played`, or `none`; absent
    /// for another target, and in runs made before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
}

/// One row of `loops.csv`: one discrete input and what it caused, page clock, ms.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Loop {
    pub index: u64,
    pub arm: String,
    /// The click's label or phase from the pilot file (e.g. `firing`).
    pub label: String,
    /// The input's DOM event type (`mousedown`, `mouseup`, `keydown`).
    pub event: String,
    /// First interaction of the page: a different population (cold cliff).
    pub cold: bool,
    /// Its answer arrived inside the window (`outcome` is `answered`).
    pub answered: bool,
    /// answered, unanswered, or claimed (its candidate answer belonged to an earlier input).
    #[serde(default)]
    pub outcome: Outcome,
    pub t_input: f64,
    pub t_send: Option<f64>,
    pub t_recv: Option<f64>,
    pub t_draw: Option<f64>,
    pub t_paint: Option<f64>,
    #[serde(rename = "inputToSocket")]
    pub input_to_socket: Option<f64>,
    #[serde(rename = "sendToRecv")]
    pub send_to_recv: Option<f64>,
    #[serde(rename = "recvToDraw")]
    pub recv_to_draw: Option<f64>,
    #[serde(rename = "inputToPaint")]
    pub input_to_paint: Option<f64>,
    /// The painted frame the answer oracle accepted (pixels and js oracles).
    #[serde(default)]
    pub t_answer: Option<f64>,
    #[serde(default, rename = "inputToPixels")]
    pub input_to_pixels: Option<f64>,
    /// WebSocket payload bytes and messages received between t_send and t_paint (or the
    /// end of the window when unanswered).
    pub reply_bytes: u64,
    pub reply_frames: u64,
    /// It went before the socket had been quiet for `settle_ms` after the input before it
    /// (the wait ran out, `summary.quiet_lapses`): its window may hold that input's answer.
    /// False in runs made before it was marked.
    #[serde(default)]
    pub after_lapse: bool,
}

/// A loop metric by its column name in `loops.csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Metric {
    #[serde(rename = "inputToSocket")]
    InputToSocket,
    #[serde(rename = "sendToRecv")]
    SendToRecv,
    #[serde(rename = "recvToDraw")]
    RecvToDraw,
    #[serde(rename = "inputToPaint")]
    InputToPaint,
    #[serde(rename = "inputToPixels")]
    InputToPixels,
}

impl Metric {
    pub const ALL: [Metric; 5] = [
        Metric::InputToSocket,
        Metric::SendToRecv,
        Metric::RecvToDraw,
        Metric::InputToPaint,
        Metric::InputToPixels,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::InputToSocket => "inputToSocket",
            Metric::SendToRecv => "sendToRecv",
            Metric::RecvToDraw => "recvToDraw",
            Metric::InputToPaint => "inputToPaint",
            Metric::InputToPixels => "inputToPixels",
        }
    }

    /// Parses a column name; case-insensitive, `-`/`_` ignored (`send-to-recv` works).
    pub fn parse(name: &str) -> Option<Metric> {
        let norm: String = name
            .chars()
            .filter(|c| *c != '-' && *c != '_')
            .flat_map(char::to_lowercase)
            .collect();
        Metric::ALL
            .into_iter()
            .find(|m| m.name().to_lowercase() == norm)
    }

    pub fn of(self, l: &Loop) -> Option<f64> {
        match self {
            Metric::InputToSocket => l.input_to_socket,
            Metric::SendToRecv => l.send_to_recv,
            Metric::RecvToDraw => l.recv_to_draw,
            Metric::InputToPaint => l.input_to_paint,
            Metric::InputToPixels => l.input_to_pixels,
        }
    }
}

impl Run {
    /// Values of `metric` over warm loops that have it (cold loops are their own
    /// population; unanswered loops have no value past inputToSocket).
    pub fn warm_values(&self, metric: Metric) -> Vec<f64> {
        self.loops
            .iter()
            .filter(|l| !l.cold)
            .filter_map(|l| metric.of(l))
            .collect()
    }
}

/// One raw record as the page recorder produced it (a line of `events.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Monotonic since the recorder started; never reset by a clear.
    pub seq: u64,
    /// `input`, `input_coalesced`, `ws_send`, `ws_recv`, `draw`, `paint`, `answer`,
    /// `ws_open` (a socket's handshake done), `region_painted` (`startup`'s board region).
    pub kind: String,
    /// Page clock, ms.
    pub t_ms: f64,
    /// WebSocket payload bytes (0 for other kinds).
    #[serde(default)]
    pub size: u32,
    /// Classifier verdict of a send: `input`, `ack`, `other`.
    #[serde(default)]
    pub class: String,
    /// DOM event type for input, draw call name for draws; may be empty.
    #[serde(default)]
    pub event: String,
    #[serde(default)]
    pub trusted: bool,
    /// Canvas index for draws, socket index for WebSocket records.
    #[serde(default)]
    pub target: u16,
    /// Answer records: the seq of the input the oracle judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<u64>,
}
