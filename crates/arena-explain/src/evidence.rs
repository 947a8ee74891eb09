//! Server evidence on the host's wall clock: GC pauses from a JVM unified log, slow frames
//! from a stats log. Each is an interval of Unix ms with the line it was read from. A
//! source whose lines carry no wall time cannot be joined, and says which decoration it
//! needs.

use std::io::BufRead;
use std::path::Path;

use anyhow::Result;
use arena_logs::gc::{parse_message, GcEvent};
use arena_logs::scan::{LineParser, Parsed};
use arena_logs::stats::StatsParser;
use arena_logs::unified::{decorations, parse_time};
use arena_report::Exit;
use serde::Serialize;

/// What a piece of evidence is, and so which stage of a loop it can explain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// A stop-the-world GC pause or an allocation stall of the server's JVM.
    GcPause,
    /// A frame the server took at least `--slow-frame` ms to render and send
    /// (`latencyServerRendering`).
    SlowFrame,
}

impl Cause {
    pub fn name(self) -> &'static str {
        match self {
            Cause::GcPause => "GC pause",
            Cause::SlowFrame => "slow server frame",
        }
    }

    /// The loop stage this evidence can lengthen: server work delays the reply.
    pub fn stage(self) -> Stage {
        match self {
            Cause::GcPause | Cause::SlowFrame => Stage::Server,
        }
    }
}

/// A loop's stages on the page clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Input to its send on the socket: the browser's main thread.
    Browser,
    /// Send to the reply's arrival: the network and the server.
    Server,
    /// Reply to pixels: decode and draw.
    Paint,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Browser => "input → socket",
            Stage::Server => "socket → reply",
            Stage::Paint => "reply → pixels",
        }
    }
}

/// One interval of evidence, Unix ms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    pub cause: Cause,
    pub start_unix_ms: f64,
    pub end_unix_ms: f64,
    /// What the source says (`Pause Young (Normal) 12.3 ms`).
    pub what: String,
    /// `file:line`.
    pub at: String,
}

/// One file of evidence, read whole.
#[derive(Debug, Clone, Serialize)]
pub struct Source {
    pub file: String,
    /// `gc` or `stats`.
    pub kind: &'static str,
    pub events: Vec<Evidence>,
    /// Unix ms of its first and last timed line.
    pub span_unix_ms: (f64, f64),
    pub lines: u64,
    /// What the reader should know of it (a GC log quiet during the run).
    pub note: Option<String>,
    /// Frames the stats log says were sent, Unix ms (empty for a GC log): the clock check.
    #[serde(skip)]
    pub frames_sent: Vec<f64>,
}

/// The lines of `path`, numbered from 1 (gzip inflated, binary refused as `kind`'s
/// input would be by `logs`). A read error ends the file with its line named.
fn lines_of(path: &Path, kind: &str) -> Result<Vec<(u64, Vec<u8>)>> {
    let input = arena_logs::input::open(path, kind)?;
    let mut r = std::io::BufReader::new(input.reader);
    let mut out = Vec::new();
    loop {
        let mut line = Vec::new();
        let got = r.read_until(b'\n', &mut line).map_err(|e| {
            Exit::bad_input(format!(
                "{}:{}: cannot read: {e}",
                input.name,
                out.len() + 1
            ))
        })?;
        if got == 0 {
            return Ok(out);
        }
        while line.last().is_some_and(|c| *c == b'\n' || *c == b'\r') {
            line.pop();
        }
        out.push((out.len() as u64 + 1, line));
    }
}

fn widen(span: &mut Option<(f64, f64)>, t: f64) {
    *span = Some(match *span {
        None => (t, t),
        Some((a, b)) => (a.min(t), b.max(t)),
    });
}

/// The GC pauses and stalls of a JVM unified log whose lines carry wall time (`time`,
/// `utctime`, `timemillis` or `timenanos`). Each pause line is written as the pause ends.
pub fn gc_log(path: &Path) -> Result<Source> {
    let file = path.display().to_string();
    let (mut events, mut span, mut lines) = (Vec::new(), None, 0);
    let mut uptime_only: Option<u64> = None;
    for (n, line) in lines_of(path, "a GC log (-Xlog:gc)")? {
        lines = n;
        // `time,uptime` alone (the decorations a join needs) writes no tags: such a line
        // is read as the `gc` tag's, and only its pause and stall messages are used.
        let Some(d) = decorations(&line) else {
            continue;
        };
        let tags = d.tags.unwrap_or(b"gc");
        if !(tags == b"gc" || tags.starts_with(b"gc,")) {
            continue;
        }
        let Some(wall) = d.wall.and_then(parse_time) else {
            uptime_only.get_or_insert(n);
            continue;
        };
        let end = wall * 1e3;
        widen(&mut span, end);
        if tags != b"gc" {
            continue;
        }
        let (ms, what) = match parse_message(tags, d.message) {
            Some((
                _,
                GcEvent::Pause {
                    kind, cause, ms, ..
                },
            )) => {
                let cause = cause.map(|c| format!(" ({c})")).unwrap_or_default();
                (ms, format!("Pause {kind}{cause} {ms:.1} ms"))
            }
            Some((_, GcEvent::Stall { what, ms, .. })) => (ms, format!("{what} {ms:.1} ms")),
            _ => continue,
        };
        events.push(Evidence {
            cause: Cause::GcPause,
            start_unix_ms: end - ms,
            end_unix_ms: end,
            what,
            at: format!("{file}:{n}"),
        });
    }
    let Some(span) = span else {
        let why = match uptime_only {
            Some(n) => format!(
                "line {n} has no wall-clock decoration (an uptime is time since the JVM \
                 started, not a time the run can be placed at): log with \
                 -Xlog:gc*:file=gc.log:time,uptime"
            ),
            None => "no GC log lines (-Xlog:gc*:file=gc.log:time,uptime)".to_string(),
        };
        return Err(Exit::bad_input(format!("{file}: {why}")).into());
    };
    Ok(Source {
        file,
        kind: "gc",
        events,
        span_unix_ms: span,
        lines,
        note: None,
        frames_sent: Vec::new(),
    })
}

/// The frames of a stats log (`latencyServerRendering` lines, stamped when the frame was
/// sent): those that took `slow_ms` or more are evidence. Stats timestamps carry no zone
/// and are read as UTC, as the built-in fixture writes them.
pub fn stats_log(path: &Path, slow_ms: f64) -> Result<Source> {
    let file = path.display().to_string();
    let mut parser = StatsParser::webswing();
    let (mut events, mut span, mut lines, mut sent) = (Vec::new(), None, 0, Vec::new());
    for (n, line) in lines_of(path, "a stats log")? {
        lines = n;
        let Parsed::Record(r) = parser.parse(&line) else {
            continue;
        };
        let Some(t) = r.time else { continue };
        let at = t * 1e3;
        widen(&mut span, at);
        if r.metric != b"latencyServerRendering" || !r.value.is_finite() || r.value < 0.0 {
            continue;
        }
        sent.push(at);
        if r.value >= slow_ms {
            events.push(Evidence {
                cause: Cause::SlowFrame,
                start_unix_ms: at - r.value,
                end_unix_ms: at,
                what: format!(
                    "{} frame of {:.1} ms",
                    String::from_utf8_lossy(r.instance),
                    r.value
                ),
                at: format!("{file}:{n}"),
            });
        }
    }
    let Some(span) = span.filter(|_| !sent.is_empty()) else {
        return Err(Exit::bad_input(format!(
            "{file}: no timed latencyServerRendering lines \
             (`dd-MMM-yyyy-HH:mm:ss.SSS,<instance>,latencyServerRendering,<ms>`)"
        ))
        .into());
    };
    sent.sort_by(f64::total_cmp);
    Ok(Source {
        file,
        kind: "stats",
        events,
        span_unix_ms: span,
        lines,
        note: None,
        frames_sent: sent,
    })
}

/// How long before a run a GC log's last line may be and still be the running JVM's: a
/// JVM logs a GC only when it collects, and one that collected nothing during the run is
/// quiet; an hour or more is another run's log, or a zone's error.
pub const GC_QUIET_MS: f64 = 3_600e3;

/// Refuses a source that does not overlap the run's time, saying by how much it misses.
/// A GC log whose last line is less than [`GC_QUIET_MS`] before the run is kept, with a
/// note: its JVM collected nothing while the run clicked (`None` when it overlaps).
pub fn check_overlap(s: &Source, run_unix_ms: (f64, f64)) -> Result<Option<String>> {
    let (a, b) = s.span_unix_ms;
    let (ra, rb) = run_unix_ms;
    let miss_ms = if b < ra {
        ra - b
    } else if a > rb {
        a - rb
    } else {
        return Ok(None);
    };
    if s.kind == "gc" && b < ra && miss_ms < GC_QUIET_MS {
        return Ok(Some(format!(
            "{}: no line during the run (its last is {} before it): the JVM logged no GC \
             while the run clicked",
            s.file,
            fmt_gap(miss_ms)
        )));
    }
    let side = if b < ra { "end before" } else { "start after" };
    Err(Exit::bad_input(format!(
        "{}: its lines {side} the run by {}: it cannot explain any loop (a log written in \
         local time is off by its zone; stats timestamps are read as UTC)",
        s.file,
        fmt_gap(miss_ms)
    ))
    .into())
}

fn fmt_gap(ms: f64) -> String {
    if ms < 1e3 {
        format!("{ms:.0} ms")
    } else if ms < 120e3 {
        format!("{:.1} s", ms / 1e3)
    } else if ms < 7_200e3 {
        format!("{:.1} min", ms / 60e3)
    } else {
        format!("{:.1} h", ms / 3_600e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/logs")
            .join(name)
    }

    /// JDK 17's G1 log with `time,uptime` (fixtures/README.md says how it was made): every
    /// pause line that ends in a duration is one piece, ending at its wall time.
    #[test]
    fn a_real_g1_log_with_wall_time_gives_each_pause_ending_when_logged() {
        let path = fixture("gc-g1-wall.log");
        let src = gc_log(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let by_text = text
            .lines()
            .filter(|l| l.contains(") Pause ") && l.ends_with("ms"))
            .count();
        assert!(by_text > 20, "{by_text}");
        assert_eq!(src.events.len(), by_text);
        let first = &src.events[0];
        // `[2026-12-07T20:10:13.932+0000][0.054s] GC(0) Pause Full (System.gc()) ... 8.006ms`
        let end = 1_796_674_213_932.0;
        assert_eq!(first.end_unix_ms, end);
        assert!((first.start_unix_ms - (end - 8.006)).abs() < 1e-6);
        assert!(first.what.starts_with("Pause Full"), "{}", first.what);
        let is_pause = |l: &&str| l.contains(") Pause ") && l.ends_with("ms");
        let line = 1 + text.lines().position(|l| is_pause(&l)).unwrap();
        assert!(
            first.at.ends_with(&format!("gc-g1-wall.log:{line}")),
            "{}",
            first.at
        );
        assert!(src.span_unix_ms.0 <= first.start_unix_ms + 8.006);
    }

    #[test]
    fn a_log_with_uptime_only_is_refused_naming_the_decoration() {
        let e = gc_log(&fixture("gc-g1-1m.log")).unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains("line 1 has no wall-clock decoration"), "{msg}");
        assert!(msg.contains("-Xlog:gc*:file=gc.log:time,uptime"), "{msg}");
        assert_eq!(
            arena_report::ExitKind::of(&e),
            Some(arena_report::ExitKind::BadInput)
        );
    }

    #[test]
    fn a_log_that_misses_the_run_says_by_how_much() {
        let src = gc_log(&fixture("gc-g1-wall.log")).unwrap();
        let (a, b) = src.span_unix_ms;
        assert!(check_overlap(&src, (a - 5.0, a + 1.0)).is_ok());
        let e = check_overlap(&src, (b + 3.0 * 3_600e3, b + 4.0 * 3_600e3)).unwrap_err();
        assert!(
            format!("{e}").contains("end before the run by 3.0 h"),
            "{e}"
        );
        let e = check_overlap(&src, (a - 90e3, a - 30e3)).unwrap_err();
        assert!(
            format!("{e}").contains("start after the run by 30.0 s"),
            "{e}"
        );
        // A JVM that collected nothing during the run: its log ends a little before it.
        let quiet = check_overlap(&src, (b + 4.7e3, b + 60e3)).unwrap().unwrap();
        assert!(
            quiet.contains("no line during the run (its last is 4.7 s before it)"),
            "{quiet}"
        );
        // A stats log has a line for every frame: one that ends before the run is another's.
        let mut stats = src.clone();
        stats.kind = "stats";
        assert!(check_overlap(&stats, (b + 4.7e3, b + 60e3)).is_err());
    }

    #[test]
    fn the_fixtures_stats_log_gives_its_slow_frames_and_every_send() {
        let path = fixture("stats.log");
        let all = stats_log(&path, 0.0).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let frames = text
            .lines()
            .filter(|l| l.contains(",latencyServerRendering,"))
            .count();
        assert_eq!(all.frames_sent.len(), frames);
        assert_eq!(all.events.len(), frames);
        // Its board frame took over a second; the click replies took far less.
        let slow = stats_log(&path, 500.0).unwrap();
        assert_eq!(slow.events.len(), 1, "{:?}", slow.events);
        assert!(
            slow.events[0].what.contains("1070.8 ms"),
            "{:?}",
            slow.events
        );
        let e = stats_log(&fixture("gc-g1-wall.log"), 50.0).unwrap_err();
        assert!(
            format!("{e}").contains("no timed latencyServerRendering lines"),
            "{e}"
        );
    }
}
