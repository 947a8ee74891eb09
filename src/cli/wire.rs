//! `arena-perf wire capture|summary`: capture a port off an interface into classic pcap,
//! and account for its bytes per direction.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use arena_report::{Exit, Format};
use arena_wire::{Capture, CaptureOptions, CaptureSource, SummaryOptions};
use clap::{Args, Subcommand};

use super::common::stdout::print;
use arena_report::progress::{plain_total, Mode, Reporter};
use arena_report::ranges;

#[derive(Debug, Args)]
pub struct WireArgs {
    #[command(subcommand)]
    pub command: WireCommand,
}

#[derive(Debug, Subcommand)]
pub enum WireCommand {
    /// Capture TCP on one port into a classic pcap (AF_PACKET ring, or libpcap in a build
    /// with the `pcap` feature; needs root or CAP_NET_RAW, else only interface counters
    /// are reported).
    Capture(CaptureArgs),
    /// Per-direction packets, bytes, WebSocket frames and messages, and app bytes after
    /// permessage-deflate, from a pcap.
    Summary(SummaryArgs),
}

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// Interface to capture on.
    #[arg(long, default_value = "lo")]
    pub iface: String,
    /// TCP port (either direction), 1 to 65535.
    #[arg(long, value_parser = ranges::tcp_port, allow_negative_numbers = true)]
    pub port: u16,
    /// Where to write the pcap.
    #[arg(long)]
    pub out: PathBuf,
    /// Capture for this many seconds, above 0 and at most 86400 (or until the command after
    /// `--` exits).
    #[arg(long, value_name = "SECONDS",
          value_parser = ranges::seconds, allow_negative_numbers = true)]
    pub duration: Option<Duration>,
    /// Skip raw capture and report interface counters only.
    #[arg(long)]
    pub counters_only: bool,
    /// `af-packet` (Linux's packet ring, always built in), `pcap` (libpcap; only in a
    /// build with the `pcap` cargo feature), or `auto`: AF_PACKET where it can open, else
    /// libpcap when built in.
    #[arg(long, value_name = "BACKEND", default_value = "auto", conflicts_with = "counters_only",
          value_parser = <arena_wire::CaptureBackend as std::str::FromStr>::from_str)]
    pub capture_backend: arena_wire::CaptureBackend,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Command to run while capturing; the capture ends when it exits.
    #[arg(last = true)]
    pub cmd: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SummaryArgs {
    /// Classic pcap file.
    pub file: PathBuf,
    /// Only this TCP port (1 to 65535); its side is the server.
    #[arg(long, value_parser = ranges::tcp_port, allow_negative_numbers = true)]
    pub port: Option<u16>,
    /// Also report per window of this many seconds (above 0).
    #[arg(long, value_name = "SECONDS",
          value_parser = ranges::positive_f64, allow_negative_numbers = true)]
    pub window: Option<f64>,
    /// How many of the largest frames to list per direction.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(args: WireArgs) -> Result<ExitCode> {
    match args.command {
        WireCommand::Capture(a) => capture(a),
        WireCommand::Summary(a) => summary(a),
    }
}

fn summary(a: SummaryArgs) -> Result<ExitCode> {
    let opts = SummaryOptions {
        port: a.port,
        window_s: a.window,
        top: Some(a.top),
    };
    let s = summarize_showing_progress(&a.file, &opts)
        .map_err(|e| Exit::bad_input(format!("{e:#}")))?;
    if a.format == Format::Json {
        print(arena_report::json::to_text(&s.to_json()))?;
    } else {
        for t in s.tables() {
            print(t.render(a.format))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn capture(a: CaptureArgs) -> Result<ExitCode> {
    if a.duration.is_none() && a.cmd.is_empty() {
        return Err(Exit::bad_input("give --duration S or a command after --").into());
    }
    let stop = arena_sys::interrupt::flag();
    let mut opts = CaptureOptions::new(&a.iface, Some(a.port), &a.out);
    opts.force_fallback = a.counters_only;
    opts.backend = a.capture_backend;
    let cap = Capture::start_with(opts)?;
    if let CaptureSource::InterfaceCounters { reason } = cap.source() {
        eprintln!("arena-perf: {reason}; reporting interface counters only");
    }
    let (stats, child_status) = arena_wire::capture_beside(cap, &a.cmd, a.duration, stop)?;
    if a.format == Format::Json {
        print(arena_report::json::to_text(&stats.to_json()))?;
    } else {
        print(arena_wire::capture_table(&stats).render(a.format))?;
    }
    arena_wire::beside_ending(stop.load(Ordering::SeqCst), child_status)?;
    Ok(ExitCode::SUCCESS)
}

/// `arena_wire::summarize`, with a bar of the bytes read on a terminal.
fn summarize_showing_progress(
    path: &std::path::Path,
    opts: &SummaryOptions,
) -> Result<arena_wire::WireSummary> {
    let reporter = Reporter::new(Mode::terminal_only(false));
    let read = Arc::new(AtomicU64::new(0));
    let counted = arena_wire::open_counted(path, read.clone())?;
    let name = path.display().to_string();
    let total = plain_total(&[path.to_path_buf()]);
    let poll = || read.load(Ordering::Relaxed);
    reporter.reading(total, &poll, || {
        arena_wire::summarize_reader(counted, &name, opts)
    })
}
