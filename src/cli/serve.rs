//! `arena-perf serve`: run the built-in fixture match on 127.0.0.1 until Ctrl-C or SIGTERM
//! (also during startup: the handlers are installed before the board is rendered).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use arena_fixture::{Knobs, ServerOptions, StatsLog};
use arena_pilot::Pilot;
use arena_report::Exit;
use clap::Args;

use super::common::stdout::print;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// TCP port on 127.0.0.1 (0 picks a free one; the URL is printed either way).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Set a fixture knob, NAME=VALUE (repeatable; applied after --pilot/--arm). Knobs:
    /// seed, shadows, phase, los_work, tick_ms, lazy_png, png_level, const_cache, ack,
    /// in_flight, delay_ms, drop_every, tail_every and tail_ms (every Kth reply waits T ms
    /// more; set both), bots, bot_duty, bot_turn_ms, blink_ms, worker, max_connections
    /// (WebSocket sessions at once, default 64; past it an upgrade gets HTTP 503), deflate,
    /// deflate_bits (permessage-deflate and the server's window, 9-15), startup_ms (the board
    /// held back after the upgrade, for `startup`)
    /// (docs/fixture-protocol.md).
    #[arg(long = "knob", value_name = "NAME=VALUE", value_parser = Knobs::parse_pair)]
    pub knobs: Vec<(String, String)>,
    /// Pilot file to take one arm's knobs from (needs --arm), e.g. pilots/fixture.toml.
    #[arg(long, value_name = "FILE", requires = "arm")]
    pub pilot: Option<PathBuf>,
    /// Arm of --pilot whose `[arms.NAME.knobs]` to use.
    #[arg(long, value_name = "NAME", requires = "pilot")]
    pub arm: Option<String>,
    /// Append per-frame stats lines (`dd-MMM-yyyy-HH:mm:ss.SSS,<instance>,<metric>,<value>`)
    /// to FILE; `-` writes them to stderr. A failed write is warned about at once; the
    /// server keeps running and exits 2 when stopped.
    #[arg(long, value_name = "FILE")]
    pub stats_log: Option<PathBuf>,
    /// The board, under the arm's and --knob's knobs: `idle` or `played` (see `pilot
    /// --help`). Default: --pilot's `target.scenario`, else neither.
    #[arg(long, value_name = "idle|played", value_parser = arena_fixture::Scenario::parse)]
    pub scenario: Option<arena_fixture::Scenario>,
}

pub fn run(a: ServeArgs) -> Result<ExitCode> {
    let mut scenario = a.scenario;
    let mut arm_knobs = Vec::new();
    if let (Some(path), Some(arm)) = (&a.pilot, &a.arm) {
        // The pilot's own reader: a file `pilot` rejects is rejected here too.
        let pilot = Pilot::load(path)?;
        scenario = scenario.or(pilot.target.scenario);
        arm_knobs = pilot.arm(Some(arm))?.1.knobs.into_iter().collect();
    }
    // In the pilot's order: the scenario, the arm, then --knob.
    let mut pairs = scenario.map(|s| s.knobs()).unwrap_or_default();
    pairs.extend(arm_knobs);
    pairs.extend(a.knobs.iter().cloned());
    let knobs = Knobs::from_pairs(&pairs).map_err(Exit::bad_input)?;
    let stats_log = a.stats_log.map(|p| {
        if p.as_os_str() == "-" {
            StatsLog::Stderr
        } else {
            StatsLog::File(p)
        }
    });
    let opts = ServerOptions {
        port: a.port,
        stats_log,
    };
    // A failed write of the URL (not a closed pipe) is exit 2 once the server stops.
    let mut printed = Ok(());
    arena_fixture::server::serve_until_interrupt(knobs, opts, |h| {
        printed = print(format!(
            "fixture match at {}\nknobs: {}\nCtrl-C stops it.\n",
            h.url(),
            serde_json::to_string(h.knobs()).unwrap_or_default()
        ));
    })?;
    printed?;
    Ok(ExitCode::SUCCESS)
}
