//! `arena-perf pilot`: one run of one arm, its table on stdout, its run folder on disk.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Result};
use arena_report::{Exit, Format};
use clap::Args as ClapArgs;

use arena_pilot::drive::{run_arm, BrowserOptions, Cancel, OutDir, Overrides, RunRequest};
use arena_pilot::scenario::Pilot;
use arena_pilot::write::arm_table;

/// Options shared by `pilot`, `ab` and `demo`: how each run is driven.
#[derive(Debug, Clone, ClapArgs)]
pub struct RunArgs {
    /// Clicks per run (default: the pilot file's `clicks.count`, 156 for the fixture).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub clicks: Option<u64>,
    /// Pause after each click's loops complete, ms (default: `pacing.interval_ms`).
    #[arg(long, value_name = "MS")]
    pub interval: Option<u64>,
    /// Per-click timeout, ms: a loop not answered within it is counted unanswered and the
    /// run moves on (default: `pacing.timeout_ms`).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
    /// After a click's loops paint, wait for this many ms without a WebSocket message
    /// before the next click (default: `pacing.settle_ms`).
    #[arg(long, value_name = "MS")]
    pub settle: Option<u64>,
    /// The first N clicks of each page are cold: reported apart from the warm figures.
    #[arg(long, value_name = "N")]
    pub warmup: Option<u64>,
    /// Seed of the click positions (same seed, same clicks).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Extra fixture knob for every run, on top of the arm's (repeatable).
    #[arg(long = "knob", value_name = "NAME=VALUE")]
    pub knobs: Vec<String>,
    /// Recorder ring buffer capacity in records (default: the pilot file's, 65536).
    #[arg(long, value_name = "RECORDS", value_parser = clap::value_parser!(u32).range(1..))]
    pub capacity: Option<u32>,
    /// Chromium binary (default: $CHROME, /usr/lib/chromium/chromium, chromium on PATH).
    #[arg(long, value_name = "PATH")]
    pub chrome: Option<PathBuf>,
    /// Show the browser window instead of running headless.
    #[arg(long)]
    pub headful: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Capture the target's port on `lo` into `wire.pcap` in the run folder and add wire
    /// figures (per direction: frames, payload, app bytes after inflate) to the run. Needs
    /// root or CAP_NET_RAW; without it the run records interface byte counters and says so.
    #[arg(long)]
    pub capture: bool,
}

impl RunArgs {
    pub fn overrides(&self, url: Option<String>) -> Result<Overrides> {
        let mut knobs = Vec::new();
        for k in &self.knobs {
            knobs.push(
                arena_fixture::Knobs::parse_pair(k)
                    .map_err(|e| anyhow!(Exit::bad_input(format!("--knob: {e}"))))?,
            );
        }
        Ok(Overrides {
            url,
            clicks: self.clicks,
            interval_ms: self.interval,
            timeout_ms: self.timeout,
            settle_ms: self.settle,
            warmup: self.warmup,
            seed: self.seed,
            knobs,
            capacity: self.capacity,
            capture: self.capture,
        })
    }

    pub fn browser(&self) -> BrowserOptions {
        BrowserOptions {
            chrome: self.chrome.clone(),
            headful: self.headful,
        }
    }
}

/// Drive the target with trusted clicks and measure each click's loop on the page's clock.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Pilot file (TOML, see docs/pilot-file.md); default: the built-in fixture pilot.
    #[arg(long, value_name = "FILE")]
    pub pilot: Option<PathBuf>,
    /// Page to drive instead of the pilot file's target (no fixture is started).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Arm of the pilot file to run (default: `stock`, else the first arm).
    #[arg(long, value_name = "NAME")]
    pub arm: Option<String>,
    /// The run folder to write (default: reports/<UTC start>-<arm>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub run: RunArgs,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let pilot = Pilot::load_or_builtin(args.pilot.as_ref())?;
    let (arm_name, arm) = pilot.arm(args.arm.as_deref())?;
    let overrides = args.run.overrides(args.url.clone())?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outcome = rt.block_on(async {
        let cancel = Cancel::new();
        cancel.on_signals()?;
        let browser = args.run.browser().launch().await?;
        if !args.run.quiet {
            eprintln!("browser: {} (pid {})", browser.version(), browser.pid());
        }
        let res = run_arm(
            &browser,
            RunRequest {
                pilot: &pilot,
                arm_name,
                arm,
                overrides: &overrides,
                out: match &args.out {
                    Some(d) => OutDir::Exactly(d.clone()),
                    None => OutDir::Under(PathBuf::from("reports")),
                },
                progress: !args.run.quiet,
                cancel: &cancel,
            },
        )
        .await;
        let _ = browser.close().await;
        res
    })?;
    print!("{}", arm_table(&outcome.run).render(args.format));
    eprintln!("run folder: {}", outcome.dir.display());
    match outcome.exit_error() {
        Some(e) => Err(e),
        None => Ok(ExitCode::SUCCESS),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::Cli;

    #[test]
    fn zero_clicks_timeout_capacity_or_rounds_is_a_usage_error() {
        let all: &[&[&str]] = &[&["pilot"], &["ab", "--arms", "a,b"], &["demo"]];
        let cases = ["--clicks", "--timeout", "--capacity"]
            .into_iter()
            .map(|flag| (flag, all))
            .chain([("--rounds", &all[1..])]);
        for (flag, cmds) in cases {
            for cmd in cmds {
                let args = |v: &'static str| {
                    let mut a = vec!["arena-perf"];
                    a.extend(*cmd);
                    a.extend([flag, v]);
                    a
                };
                let e = Cli::try_parse_from(args("0")).unwrap_err();
                assert_eq!(
                    e.kind(),
                    clap::error::ErrorKind::ValueValidation,
                    "{cmd:?} {flag}"
                );
                assert!(Cli::try_parse_from(args("1")).is_ok(), "{cmd:?} {flag}");
            }
        }
    }
}
