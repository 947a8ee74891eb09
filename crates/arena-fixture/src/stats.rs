//! Server-side evidence: counters, per-frame records readable from the handle, and
//! per-frame stats lines in the streamed toolkit's log format (docs/fixture-protocol.md).

use std::collections::VecDeque;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::session::FrameKind;

/// Per-frame records kept for the handle (oldest dropped first): bounds memory however
/// long a server runs.
pub const FRAME_RECORDS_KEPT: usize = 100_000;

/// One frame as the server sent it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FrameStat {
    /// Connection number (1-based, in accept order); the stats lines' instance id is
    /// `fixture-<conn>`.
    pub conn: u64,
    pub frame_id: u32,
    pub kind: FrameKind,
    /// WebSocket payload bytes of the frame.
    pub bytes: u64,
    pub constants_sent: u32,
    pub cache_hits: u32,
    /// PNG encodes done while building the frame (hits included when `lazy_png=false`).
    pub encodes: u32,
    pub render_ms: f64,
    pub encode_ms: f64,
    /// Session-thread CPU time spent on the inputs folded into this frame and on building
    /// it, ms (CLOCK_THREAD_CPUTIME_ID).
    pub cpu_ms: f64,
    /// Send done minus frame start (the toolkit's `latencyServerRendering`), ms.
    pub server_rendering_ms: f64,
    /// Inputs whose changes the frame carries.
    pub inputs: u32,
    /// Kind of the last input folded in (`mousedown`, ...), if any.
    pub input: Option<String>,
    /// Wall clock when the send completed, ms since the Unix epoch.
    pub sent_unix_ms: f64,
}

/// Server-wide counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counters {
    /// WebSocket sessions accepted.
    pub connections_total: u64,
    /// Sessions not yet ended (their session thread has not returned).
    pub connections_open: u64,
    /// Upgrades refused with HTTP 503 because `max_connections` sessions were open.
    pub connections_refused: u64,
    /// Sessions whose client went without a close frame (EOF or a reset): not bad messages.
    pub disconnects: u64,
    pub frames_sent: u64,
    pub bytes_sent: u64,
    pub inputs: u64,
    pub inputs_dropped: u64,
    pub acks: u64,
    /// Acks naming a frame that was not outstanding (counted and ignored).
    pub acks_unknown: u64,
    /// Malformed client messages; each closes its connection with a reason.
    pub bad_messages: u64,
    /// Frames whose ack did not come within 5 s (the window was reset).
    pub ack_timeouts: u64,
}

#[derive(Debug, Default)]
pub(crate) struct AtomicCounters {
    pub connections_total: AtomicU64,
    pub connections_open: AtomicU64,
    pub connections_refused: AtomicU64,
    pub disconnects: AtomicU64,
    pub frames_sent: AtomicU64,
    pub bytes_sent: AtomicU64,
    pub inputs: AtomicU64,
    pub inputs_dropped: AtomicU64,
    pub acks: AtomicU64,
    pub acks_unknown: AtomicU64,
    pub bad_messages: AtomicU64,
    pub ack_timeouts: AtomicU64,
}

pub(crate) fn bump(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

/// Where the stats lines go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatsLog {
    Stderr,
    File(std::path::PathBuf),
}

/// Upgrade times kept: a cold start needs the first; a flood must not grow memory.
const MAX_UPGRADES: usize = 1024;

pub(crate) struct ServerStats {
    pub counters: AtomicCounters,
    frames: Mutex<VecDeque<FrameStat>>,
    /// When each WebSocket upgrade completed (the first [`MAX_UPGRADES`]).
    upgrades: Mutex<Vec<std::time::Instant>>,
    /// When each session's first frame (the board) started on its way, as many.
    boards_sent: Mutex<Vec<std::time::Instant>>,
    sink: Option<Mutex<Box<dyn Write + Send>>>,
    /// The first failed write of the stats log: said on stderr at once, and
    /// `serve_until_interrupt` ends with it (exit 2) once the server stops.
    sink_failed: Mutex<Option<String>>,
}

impl ServerStats {
    pub fn new(log: Option<&StatsLog>) -> std::io::Result<ServerStats> {
        let sink: Option<Mutex<Box<dyn Write + Send>>> = match log {
            None => None,
            Some(StatsLog::Stderr) => Some(Mutex::new(Box::new(std::io::stderr()))),
            Some(StatsLog::File(p)) => {
                let f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)?;
                Some(Mutex::new(Box::new(std::io::BufWriter::new(f))))
            }
        };
        Ok(ServerStats {
            counters: AtomicCounters::default(),
            frames: Mutex::new(VecDeque::new()),
            upgrades: Mutex::new(Vec::new()),
            boards_sent: Mutex::new(Vec::new()),
            sink,
            sink_failed: Mutex::new(None),
        })
    }

    pub fn counters(&self) -> Counters {
        let c = &self.counters;
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Counters {
            connections_total: g(&c.connections_total),
            connections_open: g(&c.connections_open),
            connections_refused: g(&c.connections_refused),
            disconnects: g(&c.disconnects),
            frames_sent: g(&c.frames_sent),
            bytes_sent: g(&c.bytes_sent),
            inputs: g(&c.inputs),
            inputs_dropped: g(&c.inputs_dropped),
            acks: g(&c.acks),
            acks_unknown: g(&c.acks_unknown),
            bad_messages: g(&c.bad_messages),
            ack_timeouts: g(&c.ack_timeouts),
        }
    }

    pub fn frames(&self) -> Vec<FrameStat> {
        self.frames
            .lock()
            .map(|f| f.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Notes a completed upgrade (a cold start's exact socket open).
    pub fn record_upgrade(&self, at: std::time::Instant) {
        if let Ok(mut u) = self.upgrades.lock() {
            if u.len() < MAX_UPGRADES {
                u.push(at);
            }
        }
    }

    pub fn upgrades(&self) -> Vec<std::time::Instant> {
        self.upgrades.lock().map(|u| u.clone()).unwrap_or_default()
    }

    /// Notes a board leaving: the hold over and the board built, whichever came later.
    pub fn record_board_sent(&self, at: std::time::Instant) {
        if let Ok(mut u) = self.boards_sent.lock() {
            if u.len() < MAX_UPGRADES {
                u.push(at);
            }
        }
    }

    pub fn boards_sent(&self) -> Vec<std::time::Instant> {
        self.boards_sent
            .lock()
            .map(|u| u.clone())
            .unwrap_or_default()
    }

    fn note_sink_failure(&self, e: std::io::Error) {
        if let Ok(mut first) = self.sink_failed.lock() {
            if first.is_none() {
                let msg = format!("writing the stats log: {e}");
                let _ = writeln!(
                    std::io::stderr(),
                    "arena-perf serve: {msg}; the server keeps running, and exits 2 when stopped"
                );
                *first = Some(msg);
            }
        }
    }

    /// The first failed write of the stats log, if any.
    pub fn sink_failure(&self) -> Option<String> {
        self.sink_failed.lock().ok().and_then(|f| f.clone())
    }

    pub fn clear_frames(&self) {
        if let Ok(mut f) = self.frames.lock() {
            f.clear();
        }
    }

    pub fn record(&self, f: FrameStat) {
        bump(&self.counters.frames_sent, 1);
        bump(&self.counters.bytes_sent, f.bytes);
        if let Some(sink) = &self.sink {
            let text = stats_lines(&f, SystemTime::now());
            if let Ok(mut w) = sink.lock() {
                // A full disk must not take the server down mid-run, but it must not pass
                // unsaid: the first failure is warned about now and ends `serve` with exit 2.
                if let Err(e) = w.write_all(text.as_bytes()).and_then(|()| w.flush()) {
                    self.note_sink_failure(e);
                }
            }
        }
        if let Ok(mut q) = self.frames.lock() {
            if q.len() >= FRAME_RECORDS_KEPT {
                q.pop_front();
            }
            q.push_back(f);
        }
    }
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `dd-MMM-yyyy-HH:mm:ss.SSS` in UTC, the streamed toolkit's stats-line timestamp.
pub fn webswing_time(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let ms = d.subsec_millis();
    let days = (secs / 86_400) as i64;
    let sod = secs % 86_400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + (month <= 2) as i64;
    format!(
        "{:02}-{}-{:04}-{:02}:{:02}:{:02}.{:03}",
        day,
        MONTHS[(month - 1) as usize],
        year,
        sod / 3600,
        sod % 3600 / 60,
        sod % 60,
        ms
    )
}

/// The stats lines of one frame: one metric a line, `frameId` first.
pub fn stats_lines(f: &FrameStat, now: SystemTime) -> String {
    let ts = webswing_time(now);
    let inst = format!("fixture-{}", f.conn);
    let mut s = String::with_capacity(512);
    let mut line = |metric: &str, value: String| {
        s.push_str(&format!("{ts},{inst},{metric},{value}\n"));
    };
    line("frameId", f.frame_id.to_string());
    line(
        "latencyServerRendering",
        format!("{:.3}", f.server_rendering_ms),
    );
    line("renderMs", format!("{:.3}", f.render_ms));
    line("encodeMs", format!("{:.3}", f.encode_ms));
    line("cpuMs", format!("{:.3}", f.cpu_ms));
    line("outboundSize", f.bytes.to_string());
    line("constantsSent", f.constants_sent.to_string());
    line("constantCacheHits", f.cache_hits.to_string());
    s
}

/// CPU time of the calling thread.
pub use arena_sys::procfs::thread_cpu;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamp_matches_the_toolkit_pattern() {
        // 2021-03-12 10:15:42.123 UTC
        let t = UNIX_EPOCH + Duration::from_millis(1_615_544_142_123);
        assert_eq!(webswing_time(t), "12-Mar-2021-10:15:42.123");
        let t = UNIX_EPOCH + Duration::from_millis(951_782_400_000); // 2000-02-29
        assert_eq!(webswing_time(t), "29-Feb-2000-00:00:00.000");
    }

    #[test]
    fn a_failed_stats_log_write_is_kept_not_dropped() {
        // `serve --stats-log /dev/full` used to drop every line and exit 0.
        let stats = ServerStats::new(Some(&StatsLog::File("/dev/full".into()))).unwrap();
        assert_eq!(stats.sink_failure(), None);
        let f = FrameStat {
            conn: 1,
            frame_id: 1,
            kind: FrameKind::Reply,
            bytes: 10,
            constants_sent: 0,
            cache_hits: 0,
            encodes: 0,
            render_ms: 0.0,
            encode_ms: 0.0,
            cpu_ms: 0.0,
            server_rendering_ms: 0.0,
            inputs: 0,
            input: None,
            sent_unix_ms: 0.0,
        };
        stats.record(f.clone());
        let first = stats.sink_failure().expect("the failure is kept");
        assert!(first.starts_with("writing the stats log: "), "{first}");
        stats.record(f);
        assert_eq!(stats.sink_failure(), Some(first), "the first failure stays");
        assert_eq!(stats.frames().len(), 2, "the server keeps its own records");
    }

    #[test]
    fn one_metric_a_line_frame_id_first() {
        let f = FrameStat {
            conn: 3,
            frame_id: 17,
            kind: FrameKind::Reply,
            bytes: 6120,
            constants_sent: 3,
            cache_hits: 12,
            encodes: 15,
            render_ms: 0.25,
            encode_ms: 2.5,
            cpu_ms: 12.75,
            server_rendering_ms: 3.0,
            inputs: 1,
            input: Some("mousedown".into()),
            sent_unix_ms: 0.0,
        };
        let t = UNIX_EPOCH + Duration::from_millis(1_615_544_142_123);
        let s = stats_lines(&f, t);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "12-Mar-2021-10:15:42.123,fixture-3,frameId,17");
        assert!(lines.contains(&"12-Mar-2021-10:15:42.123,fixture-3,outboundSize,6120"));
        assert!(lines.contains(&"12-Mar-2021-10:15:42.123,fixture-3,latencyServerRendering,3.000"));
        for l in &lines {
            assert_eq!(l.split(',').count(), 4, "{l}");
        }
    }

    #[test]
    fn thread_cpu_advances_with_work() {
        let a = thread_cpu();
        let mut x = 0u64;
        for i in 0..3_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu() > a);
    }
}
