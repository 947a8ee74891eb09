//! The options `pilot`, `ab` and `demo` share, and what they become: the pilot's
//! overrides, browser options, and the A/B both `ab` and `demo` run.

use std::path::PathBuf;

use anyhow::Result;
use arena_pilot::{
    block_on, run_ab, AbOutcome, AbRequest, BrowserOptions, Overrides, Pilot, Plan, Progress,
};

use arena_report::progress::{Mode, Reporter};
use arena_report::ranges;
use arena_run::Run;
use clap::Args as ClapArgs;

/// Options shared by `pilot`, `ab` and `demo`: how each run is driven.
#[derive(Debug, Clone, ClapArgs)]
pub struct RunArgs {
    /// Clicks per run (default: the pilot file's `clicks.count`, 156 for the fixture).
    #[arg(long, value_name = "N",
          value_parser = ranges::positive_u64, allow_negative_numbers = true)]
    pub clicks: Option<u64>,
    /// Pause after each click's loops complete, ms (default: `pacing.interval_ms`).
    #[arg(long, value_name = "MS", value_parser = ranges::ms_0_day, allow_negative_numbers = true)]
    pub interval: Option<u64>,
    /// Per-click timeout, ms: a loop not answered within it is counted unanswered and the
    /// run moves on (default: `pacing.timeout_ms`).
    #[arg(long, value_name = "MS", value_parser = ranges::ms_1_day, allow_negative_numbers = true)]
    pub timeout: Option<u64>,
    /// After a click's loops paint, wait for this many ms without a WebSocket message
    /// before the next click (default: `pacing.settle_ms`).
    #[arg(long, value_name = "MS", value_parser = ranges::ms_0_day, allow_negative_numbers = true)]
    pub settle: Option<u64>,
    /// End the run (exit 3, status `target_stalled`) when this many clicks in a row get no
    /// WebSocket message and no paint; 0 never does (default: `pacing.stall_clicks`, 3).
    #[arg(long, value_name = "N", value_parser = arena_pilot::ranges::stall_clicks, allow_negative_numbers = true)]
    pub stall_clicks: Option<u32>,
    /// The first N clicks of each page are cold: reported apart from the warm figures.
    #[arg(long, value_name = "N")]
    pub warmup: Option<u64>,
    /// Seed of the click positions (same seed, same clicks).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Extra fixture knob for every run, on top of the arm's (repeatable).
    #[arg(long = "knob", value_name = "NAME=VALUE")]
    pub knobs: Vec<String>,
    /// The built-in fixture's board, under every arm's knobs: `idle` (deployment phase,
    /// no bots) or `played` (firing phase, bots thinking on their turns after each input;
    /// what `demo` measures). Default: the pilot file's `target.scenario`, else neither.
    #[arg(long, value_name = "idle|played", value_parser = arena_fixture::Scenario::parse)]
    pub scenario: Option<arena_fixture::Scenario>,
    /// Recorder ring buffer capacity in records (default: the pilot file's, 65536).
    #[arg(long, value_name = "RECORDS",
          value_parser = ranges::positive_u32, allow_negative_numbers = true)]
    pub capacity: Option<u32>,
    #[command(flatten)]
    pub chromium: BrowserArgs,
    /// Capture the target's port on `lo` into `wire.pcap` in the run folder and add wire
    /// figures (per direction: frames, payload, app bytes after inflate) to the run. Needs
    /// root or CAP_NET_RAW; without it the run records interface byte counters and says so.
    #[arg(long)]
    pub capture: bool,
    /// How `--capture` takes packets: `af-packet` (Linux's packet ring, always built in),
    /// `pcap` (libpcap; only in a build with the `pcap` cargo feature), or `auto`:
    /// AF_PACKET where it can open, else libpcap when built in. The run records which.
    #[arg(long, value_name = "BACKEND", default_value = "auto", requires = "capture",
          value_parser = <arena_wire::CaptureBackend as std::str::FromStr>::from_str)]
    pub capture_backend: arena_wire::CaptureBackend,
    /// Put a shaped link between the browser and the target, e.g.
    /// `rtt=20ms,rate=25mbit[,jitter=2ms][,down=25mbit,up=5mbit]`: every connection of the
    /// page goes through a loopback proxy that adds half the RTT each way, serialises at the
    /// rate behind a bounded queue, and jitters without reordering (no root, no netem).
    /// Loopback targets only. Overrides the arms' own `link`.
    #[arg(long, value_name = "SPEC", value_parser = arena_link::LinkSpec::parse)]
    pub link: Option<arena_link::LinkSpec>,
    /// Show every run's page at this device pixel ratio (0 < RATIO <= 8; a 2x screen, a
    /// 1.25 laptop), over the arms' own `browser.dpr`. Recorded in run.json's `browser`.
    #[arg(long, value_name = "RATIO", value_parser = arena_pilot::ranges::dpr, allow_negative_numbers = true)]
    pub dpr: Option<f64>,
    /// Show every run's page in a viewport of this many CSS px (`1280x800`; each side
    /// 100-8192), over the arms' own `browser.viewport`.
    #[arg(long, value_name = "WxH", value_parser = arena_pilot::ranges::viewport)]
    pub viewport: Option<(u32, u32)>,
    /// Slow every run's page's CPU by this factor (1-20; 4 is a slow laptop), over the
    /// arms' own `browser.cpu_throttle`.
    #[arg(long, value_name = "RATE", value_parser = arena_pilot::ranges::cpu_throttle, allow_negative_numbers = true)]
    pub cpu_throttle: Option<f64>,
    /// Record Chromium's own trace of the clicks into `trace.json` in the run folder, with
    /// the run's loops as a track of their own (one slice per answered loop, its stages
    /// nested, flows to the renderer's input and frame), aligned to the trace clock, and
    /// each answer placed at its frame's presentation (printed after the run). Opens in
    /// Perfetto (ui.perfetto.dev) and chrome://tracing.
    #[arg(long)]
    pub trace: bool,
    #[command(flatten)]
    pub split: arena_compare::options::SplitArgs,
    /// Leave the page alone for SECONDS after setup and the clear, before the clicks, and
    /// record what the target sends with no input (frames, bytes, B/s, gaps, runs of
    /// near-identical frames); printed after the run's tables, kept in run.json's `idle`.
    #[arg(long, value_name = "SECONDS",
          value_parser = ranges::seconds, allow_negative_numbers = true)]
    pub idle: Option<std::time::Duration>,
    /// Sample a process's CPU beside each run (repeatable): a PID, or a NAME that matches
    /// running processes by name or by their command's file name (each with its children).
    /// The in-process fixture's threads and Chromium are sampled anyway; the table of % of
    /// a core per process and phase (setup, idle, clicks) follows the run's table. A PID or NAME
    /// not running is exit 2, before the browser starts.
    #[arg(long, value_name = "PID|NAME")]
    pub sample: Vec<String>,
}

impl RunArgs {
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

    pub fn browser(&self) -> BrowserOptions {
        self.chromium.options()
    }
}

/// The pilot file and the arms of a command that interleaves them (`ab`, `startup`).
#[derive(Debug, Clone, clap::Args)]
pub struct ArmsArgs {
    /// Pilot file (TOML, see docs/pilot-file.md); default: the built-in fixture pilot.
    #[arg(long, value_name = "FILE")]
    pub pilot: Option<PathBuf>,
    /// Arms to run, comma-separated, interleaved round by round (A B A B ...); the first
    /// is the baseline.
    #[arg(
        long = "arms",
        value_name = "A,B[,C...]",
        value_delimiter = ',',
        required = true
    )]
    pub names: Vec<String>,
}

/// The browser a command launches, and its progress on stderr.
#[derive(Debug, Clone, clap::Args)]
pub struct BrowserArgs {
    /// Chromium binary (default: $CHROME, /usr/lib/chromium/chromium, chromium on PATH).
    #[arg(long, value_name = "PATH")]
    pub chrome: Option<PathBuf>,
    /// Show the browser window instead of running headless.
    #[arg(long)]
    pub headful: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

impl BrowserArgs {
    pub fn options(&self) -> BrowserOptions {
        BrowserOptions {
            chrome: self.chrome.clone(),
            headful: self.headful,
        }
    }
}

/// What `ab` and `demo` run: `arms` of `pilot` interleaved for `rounds`, under `out`.
pub struct AbPlan<'a> {
    pub pilot: &'a Pilot,
    pub arms: &'a [String],
    pub rounds: u32,
    pub url: Option<String>,
    pub out: PathBuf,
    /// With `--history`: where each complete run goes as it is written.
    pub history: Option<&'a arena_history::Sink>,
}

impl RunArgs {
    /// Resolves every arm, then runs the A/B; the folders made are listed on stderr.
    pub fn run_ab(&self, ab: AbPlan<'_>) -> Result<AbOutcome> {
        let overrides = self.overrides(ab.url)?;
        let plans = ab
            .arms
            .iter()
            .map(|a| Plan::for_arm(ab.pilot, Some(a), &overrides))
            .collect::<Result<Vec<_>>>()?;
        self.run_plans(plans, ab.rounds, ab.out, ab.history)
    }

    /// Runs resolved plans interleaved for `rounds` under `out`, with this command's
    /// browser and progress; the folders made are listed on stderr, and each goes to
    /// `history` as it is written.
    pub fn run_plans(
        &self,
        plans: Vec<Plan<'_>>,
        rounds: u32,
        out: PathBuf,
        history: Option<&arena_history::Sink>,
    ) -> Result<AbOutcome> {
        let reporter = Reporter::new(Mode::detect(self.chromium.quiet));
        let show = |p: Progress<'_>| {
            if let Progress::RunWritten { dir, complete, .. } = p {
                super::common::to_history::written(history, dir, complete);
            }
            reporter.show(p.shown())
        };
        let outcome = block_on(|cancel| async move {
            run_ab(AbRequest {
                plans,
                rounds,
                out_base: out,
                browser: self.browser(),
                progress: &show,
                cancel: &cancel,
            })
            .await
        })?;
        for o in &outcome.outcomes {
            if let Some(line) = o.run.meta.trace.as_ref().and_then(|t| t.presented_line()) {
                eprintln!("{line}");
            }
            eprintln!("run folder: {}", o.dir.display());
        }
        Ok(outcome)
    }
}

/// How a command that interleaves runs repeats them and where its output goes (`ab`,
/// `demo`, `verify`).
#[derive(Debug, Clone, clap::Args)]
pub struct SeriesArgs {
    /// Rounds: each round runs every arm once, in the order given (demo: stock, lazy-png;
    /// verify: direct, delayed).
    #[arg(long, value_name = "R", default_value_t = 2,
          value_parser = ranges::positive_u32, allow_negative_numbers = true)]
    pub rounds: u32,
    /// Folder the run folders are written under.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub out: PathBuf,
    #[arg(long, value_enum, default_value_t = arena_report::Format::Table)]
    pub format: arena_report::Format,
}

/// The pilot file, the page and the arm of a command that runs one plan (`pilot`,
/// `verify`).
#[derive(Debug, Clone, clap::Args)]
pub struct TargetArgs {
    /// Pilot file (TOML, see docs/pilot-file.md); default: the built-in fixture pilot.
    #[arg(long, value_name = "FILE")]
    pub pilot: Option<PathBuf>,
    /// Page to drive instead of the pilot file's target (no fixture is started).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Arm of the pilot file to run (default: `stock`, else the first arm).
    #[arg(long, value_name = "NAME")]
    pub arm: Option<String>,
}

impl TargetArgs {
    pub fn load(&self) -> Result<Pilot> {
        Pilot::load_or_builtin(self.pilot.as_ref())
    }
}

/// The verdict after a blank line, in the table's format; nothing when no arm was
/// compared (JSON documents carry it as `verdict` instead).
pub fn print_verdict(
    v: Option<&arena_compare::Verdicts>,
    format: arena_report::Format,
) -> Result<()> {
    match v {
        Some(v) if !v.arms.is_empty() && format != arena_report::Format::Json => {
            super::common::stdout::print(format!("\n{}", v.render(format)))
        }
        _ => Ok(()),
    }
}

/// The runs an A/B made, in order.
pub fn runs(outcome: &AbOutcome) -> Vec<Run> {
    outcome.outcomes.iter().map(|o| o.run.clone()).collect()
}

/// The JSON document of an A/B (`ab`, `demo`): every run with its folder, then the
/// comparison and its verdict (`null` when no run finished).
pub fn ab_document(
    kind: &str,
    outcome: &AbOutcome,
    cmp: Option<&arena_compare::Comparison>,
    verdict: Option<&arena_compare::Verdicts>,
) -> String {
    let runs: Vec<_> = outcome
        .outcomes
        .iter()
        .map(|o| (&o.run, Some(o.dir.as_path())))
        .collect();
    let mut doc = arena_compare::ab_json(kind, &runs, cmp);
    if let Some(m) = doc.as_object_mut() {
        let v = verdict.map_or(serde_json::Value::Null, |v| v.to_json());
        m.insert("verdict".into(), v);
    }
    arena_report::json::to_text(&doc)
}
