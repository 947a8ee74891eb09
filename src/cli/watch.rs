//! `arena-perf watch`: what a page's target sends with nobody touching it, no pilot file.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use arena_compare::frames::receipts;
use arena_compare::idle::{watch_json, watch_tables};
use arena_pilot::{block_on, watch, BrowserOptions, WatchRequest};
use arena_report::Format;
use clap::Args as ClapArgs;

use super::common::stdout::print;
use arena_report::ranges;

/// Open URL in a fresh headless Chromium, keep its load, then record SECONDS with no
/// input: frames, bytes, B/s, median gap, sizes, runs of near-identical frames.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Page to watch (a path to a file on disk opens as its `file://` URL).
    #[arg(value_name = "URL")]
    pub url: String,
    /// Length of the window, seconds.
    #[arg(long = "for", value_name = "SECONDS",
          value_parser = ranges::seconds, allow_negative_numbers = true)]
    pub length: Duration,
    /// Canvas compared pixel by pixel (CSS selector; default: the largest canvas).
    #[arg(long, value_name = "SELECTOR")]
    pub canvas: Option<String>,
    /// The load is over once no message arrived for this long, ms ...
    #[arg(long, value_name = "MS", default_value_t = 200,
          value_parser = ranges::ms_0_day, allow_negative_numbers = true)]
    pub load_quiet: u64,
    /// ... or at this bound, seconds (the window then opens anyway, and says so).
    #[arg(long, value_name = "SECONDS",
          value_parser = ranges::seconds, allow_negative_numbers = true, default_value = "10")]
    pub load_limit: Duration,
    /// Chromium binary (default: $CHROME, /usr/lib/chromium/chromium, chromium on PATH).
    #[arg(long, value_name = "PATH")]
    pub chrome: Option<std::path::PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let browser = BrowserOptions {
        chrome: a.chrome.clone(),
        headful: false,
        cpu_split: false,
    };
    let url = arena_pilot::page_url(&a.url);
    let seen = block_on(|cancel| async move {
        let req = WatchRequest {
            url: &url,
            length: a.length,
            canvas: a.canvas.as_deref(),
            load_quiet: Duration::from_millis(a.load_quiet),
            load_limit: a.load_limit,
            cancel: &cancel,
        };
        watch(&browser, req).await
    })?;
    let load = receipts(&arena_pilot::write::events_of(&seen.load));
    let url = arena_pilot::page_url(&a.url);
    if a.format == Format::Json {
        let v = watch_json(&url, &load, seen.load_went_quiet, &seen.window);
        print(arena_report::json::to_text(&v))?;
        return Ok(ExitCode::SUCCESS);
    }
    for t in watch_tables(&url, load, &seen.window) {
        print(format!("{}\n", t.render(a.format)))?;
    }
    if !seen.load_went_quiet {
        eprintln!(
            "the load did not go quiet within {} s: the window opened at that bound",
            a.load_limit.as_secs_f64()
        );
    }
    Ok(ExitCode::SUCCESS)
}
