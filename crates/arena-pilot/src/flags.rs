//! The flags `pilot`, `ab`, `demo`, `startup` and `verify` share, and the plan's
//! overrides and browser options they become. They are clap arguments behind the `clap`
//! feature (the command line's), so the crate itself builds and tests without clap.

use std::path::PathBuf;

use anyhow::Result;
#[cfg(feature = "clap")]
use arena_report::ranges;

use crate::plan::{BrowserOptions, Overrides};

/// What a command adds to the run flags between `--trace` and `--idle` (the breakdown
/// flags, from a crate this one does not depend on): with the `clap` feature, clap
/// arguments of their own.
#[cfg(feature = "clap")]
pub trait MoreFlags: clap::Args {}
#[cfg(feature = "clap")]
impl<T: clap::Args> MoreFlags for T {}
/// What a command adds to the run flags between `--trace` and `--idle`.
#[cfg(not(feature = "clap"))]
pub trait MoreFlags {}
#[cfg(not(feature = "clap"))]
impl<T> MoreFlags for T {}

/// Options shared by `pilot`, `ab` and `demo`: how each run is driven.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct RunArgs<S: MoreFlags> {
    /// Clicks per run (default: the pilot file's `clicks.count`, 156 for the fixture).
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", value_parser = ranges::positive_u64, allow_negative_numbers = true))]
    pub clicks: Option<u64>,
    /// Pause after each click's loops complete, ms (default: `pacing.interval_ms`).
    #[cfg_attr(feature = "clap", arg(long, value_name = "MS", value_parser = ranges::ms_0_day, allow_negative_numbers = true))]
    pub interval: Option<u64>,
    /// Per-click timeout, ms: a loop not answered within it is counted unanswered and the
    /// run moves on (default: `pacing.timeout_ms`).
    #[cfg_attr(feature = "clap", arg(long, value_name = "MS", value_parser = ranges::ms_1_day, allow_negative_numbers = true))]
    pub timeout: Option<u64>,
    /// After a click's loops paint, wait for this many ms without a WebSocket message
    /// before the next click (default: `pacing.settle_ms`).
    #[cfg_attr(feature = "clap", arg(long, value_name = "MS", value_parser = ranges::ms_0_day, allow_negative_numbers = true))]
    pub settle: Option<u64>,
    /// End the run (exit 3, status `target_stalled`) when this many clicks in a row get no
    /// WebSocket message from the target's socket (paints count only where the page's
    /// sockets cannot be seen); 0 never does (default: `pacing.stall_clicks`, 3).
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", value_parser = crate::ranges::stall_clicks, allow_negative_numbers = true))]
    pub stall_clicks: Option<u32>,
    /// The first N clicks of each page are cold: reported apart from the warm figures.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub warmup: Option<u64>,
    /// Seed of the click positions (same seed, same clicks).
    #[cfg_attr(feature = "clap", arg(long, value_name = "S"))]
    pub seed: Option<u64>,
    /// Extra fixture knob for every run, on top of the arm's (repeatable).
    #[cfg_attr(feature = "clap", arg(long = "knob", value_name = "NAME=VALUE"))]
    pub knobs: Vec<String>,
    /// The built-in fixture's board, under every arm's knobs: `idle` (deployment phase,
    /// no bots) or `played` (firing phase, bots thinking on their turns after each input;
    /// what `demo` measures). Default: the pilot file's `target.scenario`, else neither.
    #[cfg_attr(feature = "clap", arg(long, value_name = "idle|played", value_parser = arena_fixture::Scenario::parse))]
    pub scenario: Option<arena_fixture::Scenario>,
    /// Recorder ring buffer capacity in records (default: the pilot file's, 65536).
    #[cfg_attr(feature = "clap", arg(long, value_name = "RECORDS", value_parser = ranges::positive_u32, allow_negative_numbers = true))]
    pub capacity: Option<u32>,
    #[cfg_attr(feature = "clap", command(flatten))]
    pub chromium: BrowserArgs,
    /// Capture the target's port on `lo` into `wire.pcap` in the run folder and add wire
    /// figures (per direction: frames, payload, app bytes after inflate) to the run. Needs
    /// root or CAP_NET_RAW; without it the run records interface byte counters and says so.
    #[cfg_attr(feature = "clap", arg(long))]
    pub capture: bool,
    /// How `--capture` takes packets: `af-packet` (Linux's packet ring, always built in),
    /// `pcap` (libpcap; only in a build with the `pcap` cargo feature), or `auto`:
    /// AF_PACKET where it can open, else libpcap when built in. The run records which.
    #[cfg_attr(feature = "clap", arg(long, value_name = "BACKEND", default_value = "auto", requires = "capture", value_parser = <arena_wire::CaptureBackend as std::str::FromStr>::from_str))]
    pub capture_backend: arena_wire::CaptureBackend,
    /// Put a shaped link between the browser and the target, e.g.
    /// `rtt=20ms,rate=25mbit[,jitter=2ms][,down=25mbit,up=5mbit]`: every connection of the
    /// page goes through a loopback proxy that adds half the RTT each way, serialises at the
    /// rate behind a bounded queue, and jitters without reordering (no root, no netem).
    /// Loopback targets only. Overrides the arms' own `link`.
    #[cfg_attr(feature = "clap", arg(long, value_name = "SPEC", value_parser = arena_link::LinkSpec::parse))]
    pub link: Option<arena_link::LinkSpec>,
    /// Show every run's page at this device pixel ratio (0 < RATIO <= 8; a 2x screen, a
    /// 1.25 laptop), over the arms' own `browser.dpr`. Recorded in run.json's `browser`.
    #[cfg_attr(feature = "clap", arg(long, value_name = "RATIO", value_parser = crate::ranges::dpr, allow_negative_numbers = true))]
    pub dpr: Option<f64>,
    /// Show every run's page in a viewport of this many CSS px (`1280x800`; each side
    /// 100-8192), over the arms' own `browser.viewport`.
    #[cfg_attr(feature = "clap", arg(long, value_name = "WxH", value_parser = crate::ranges::viewport))]
    pub viewport: Option<(u32, u32)>,
    /// Slow every run's page's CPU by this factor (1-20; 4 is a slow laptop), over the
    /// arms' own `browser.cpu_throttle`.
    #[cfg_attr(feature = "clap", arg(long, value_name = "RATE", value_parser = crate::ranges::cpu_throttle, allow_negative_numbers = true))]
    pub cpu_throttle: Option<f64>,
    /// Record Chromium's own trace of the clicks into `trace.json` in the run folder, with
    /// the run's loops as a track of their own (one slice per answered loop, its stages
    /// nested, flows to the renderer's input and frame), aligned to the trace clock, and
    /// each answer placed at its frame's presentation (printed after the run). Opens in
    /// Perfetto (ui.perfetto.dev) and chrome://tracing.
    #[cfg_attr(feature = "clap", arg(long))]
    pub trace: bool,
    #[cfg_attr(feature = "clap", command(flatten))]
    pub split: S,
    /// Leave the page alone for SECONDS after setup and the clear, before the clicks, and
    /// record what the target sends with no input (frames, bytes, B/s, gaps, runs of
    /// near-identical frames); printed after the run's tables, kept in run.json's `idle`.
    #[cfg_attr(feature = "clap", arg(long, value_name = "SECONDS", value_parser = ranges::seconds, allow_negative_numbers = true))]
    pub idle: Option<std::time::Duration>,
    /// Sample a process's CPU beside each run (repeatable): a PID, or a NAME that matches
    /// running processes by name or by their command's file name (each with its children).
    /// The in-process fixture's threads and Chromium are sampled anyway; the table of % of
    /// a core per process and phase (setup, idle, clicks) follows the run's table. A PID or NAME
    /// not running is exit 2, before the browser starts.
    #[cfg_attr(feature = "clap", arg(long, value_name = "PID|NAME"))]
    pub sample: Vec<String>,
}

impl<S: MoreFlags> RunArgs<S> {
    /// The pilot file's overrides these flags make (with `url` for the page, when given);
    /// a bad `--knob` is exit 2, before any browser.
    pub fn overrides(&self, url: Option<String>) -> Result<Overrides> {
        let knobs = Overrides::parse_knobs(&self.knobs)?;
        Ok(Overrides {
            url,
            clicks: self.clicks,
            interval_ms: self.interval,
            timeout_ms: self.timeout,
            settle_ms: self.settle,
            stall_clicks: self.stall_clicks,
            warmup: self.warmup,
            seed: self.seed,
            knobs,
            scenario: self.scenario,
            capacity: self.capacity,
            capture: self.capture,
            capture_backend: self.capture_backend,
            link: self.link,
            browser: arena_browser::Emulation {
                dpr: self.dpr,
                viewport: self.viewport,
                cpu_throttle: self.cpu_throttle,
            },
            trace: self.trace,
            idle: self.idle,
            sample: self.sample.clone(),
        })
    }

    /// The browser every run of the command launches.
    pub fn browser(&self) -> BrowserOptions {
        self.chromium.options()
    }
}

/// The pilot file and the arms of a command that interleaves them (`ab`, `startup`).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ArmsArgs {
    /// Pilot file (TOML, see docs/pilot-file.md); default: the built-in fixture pilot.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub pilot: Option<PathBuf>,
    /// Arms to run, comma-separated, interleaved round by round (A B A B ...); the first
    /// is the baseline.
    #[cfg_attr(
        feature = "clap",
        arg(
            long = "arms",
            value_name = "A,B[,C...]",
            value_delimiter = ',',
            required = true
        )
    )]
    pub names: Vec<String>,
}

/// The browser a command launches, and its progress on stderr.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct BrowserArgs {
    /// Chromium binary (default: $CHROME, /usr/lib/chromium/chromium, chromium on PATH).
    #[cfg_attr(feature = "clap", arg(long, value_name = "PATH"))]
    pub chrome: Option<PathBuf>,
    /// Show the browser window instead of running headless.
    #[cfg_attr(feature = "clap", arg(long))]
    pub headful: bool,
    /// Run Chromium on the upper half of the cores and this process (the pilot and the
    /// built-in fixture with its bots) on the lower half, as a person's browser runs on
    /// another machine than the app; recorded in run.json as `host.cpu_split`. Nothing is
    /// split under two cores; a `--url` target stays where it runs.
    #[cfg_attr(feature = "clap", arg(long))]
    pub cpu_split: bool,
    /// No progress on stderr.
    #[cfg_attr(feature = "clap", arg(long, short))]
    pub quiet: bool,
}

impl BrowserArgs {
    pub fn options(&self) -> BrowserOptions {
        BrowserOptions {
            chrome: self.chrome.clone(),
            headful: self.headful,
            cpu_split: self.cpu_split,
        }
    }
}

/// The pilot file, the page and the arm of a command that runs one plan (`pilot`,
/// `verify`).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct TargetArgs {
    /// Pilot file (TOML, see docs/pilot-file.md); default: the built-in fixture pilot.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE"))]
    pub pilot: Option<PathBuf>,
    /// Page to drive instead of the pilot file's target (no fixture is started).
    #[cfg_attr(feature = "clap", arg(long, value_name = "URL"))]
    pub url: Option<String>,
    /// Arm of the pilot file to run (default: `stock`, else the first arm).
    #[cfg_attr(feature = "clap", arg(long, value_name = "NAME"))]
    pub arm: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(knobs: &[&str]) -> RunArgs<()> {
        RunArgs {
            clicks: Some(12),
            interval: None,
            timeout: Some(900),
            settle: None,
            stall_clicks: Some(0),
            warmup: None,
            seed: Some(5),
            knobs: knobs.iter().map(|k| k.to_string()).collect(),
            scenario: None,
            capacity: None,
            chromium: BrowserArgs {
                chrome: Some(PathBuf::from("/opt/chromium")),
                headful: true,
                cpu_split: false,
                quiet: false,
            },
            capture: false,
            capture_backend: arena_wire::CaptureBackend::default(),
            link: None,
            dpr: Some(2.0),
            viewport: Some((1280, 800)),
            cpu_throttle: None,
            trace: true,
            split: (),
            idle: None,
            sample: vec!["42".into()],
        }
    }

    #[test]
    fn the_flags_become_the_overrides_and_the_browser() {
        let o = flags(&[])
            .overrides(Some("http://localhost:1/".into()))
            .unwrap();
        assert_eq!(o.url.as_deref(), Some("http://localhost:1/"));
        assert_eq!(
            (o.clicks, o.timeout_ms, o.stall_clicks),
            (Some(12), Some(900), Some(0))
        );
        assert_eq!(
            (o.browser.dpr, o.browser.viewport),
            (Some(2.0), Some((1280, 800)))
        );
        assert!(o.trace);
        assert_eq!(o.sample, vec!["42".to_string()]);
        let b = flags(&[]).browser();
        assert_eq!(b.chrome, Some(PathBuf::from("/opt/chromium")));
        assert!(b.headful);
    }

    #[test]
    fn a_bad_knob_is_bad_input() {
        let err = flags(&["no-equals-sign"]).overrides(None).unwrap_err();
        assert_eq!(
            arena_report::ExitKind::of(&err),
            Some(arena_report::ExitKind::BadInput)
        );
    }
}
