//! The command tree. Each subcommand is a thin file: parse, call the library, print.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

mod ab;
mod args;
mod common;
mod compare;
mod completions;
mod demo;
mod explain;
mod gate;
mod history;
mod logs;
mod matrix;
mod pilot;
mod plot;
mod report;
mod serve;
mod startup;
mod verify;
mod watch;
mod wire;

/// Measure what a click in a browser-streamed app costs, in the median and in the tail,
/// and whether a change is real or noise.
#[derive(Debug, Parser)]
#[command(name = "arena-perf", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Drive a page with trusted clicks and measure each click's loop (input -> socket ->
    /// reply -> draw -> paint) on the page's clock; writes a run folder.
    Pilot(pilot::Args),
    /// Run arms interleaved (A B A B ...), each in a fresh page and target, and compare.
    Ab(ab::Args),
    /// Stock against lazy-png on the built-in fixture, two rounds, one column per run.
    Demo(demo::Args),
    /// Cold starts, arms interleaved, each round a fresh browser profile and target: socket
    /// open, first frame, first bytes and the board on screen, every round and the median.
    Startup(startup::Args),
    /// Prove each kind of loop and gesture is caused by its input: the pilot direct and
    /// through a link with added round trip, interleaved; a kind whose answers do not move
    /// by it fails.
    ///
    /// Every kind's sendToRecv and headline (a gesture's move-to-pixels) must move by the
    /// delay at the lower decile, where an answer that came sooner than the path allows
    /// shows first, and at the median, each shift with an interval over the runs; a
    /// gesture's input-to-socket must not move. Exit 0: every kind caused; 1: a kind not
    /// caused by its input, its median moved less than the delay, or its input-to-socket
    /// moved with the link; 4: a kind left unknown (the table says how many clicks would
    /// decide it). docs/pilot-file.md (Causality) has the rule.
    Verify(verify::Args),
    /// Compare runs or arms: quantiles, deltas with bootstrap intervals, Mann-Whitney p,
    /// `~` for noise, and warnings next to the figures they concern.
    Compare(compare::CompareArgs),
    /// CI gate: exit 1 only on a significant regression past a limit (2 on bad input).
    Gate(gate::GateArgs),
    /// Keep runs in a database (SQLite by default) and read them back: add, list, show, and
    /// a metric's trend over commits with its steps named.
    History(history::HistoryArgs),
    /// Write one self-contained HTML page of runs for a pull request: compare's tables with
    /// warnings beside their figures, latency plots with each loop on hover, run metadata.
    Report(report::ReportArgs),
    /// Plot runs: latency CDF per arm (log x) and a per-click timeline, SVG or PNG.
    Plot(plot::PlotArgs),
    /// Why were the slow loops slow? Each loop's stages (input → socket, socket → reply,
    /// reply → pixels) joined on one clock to the server's evidence: GC pauses from a JVM
    /// log with wall time, slow frames from a stats log.
    ///
    /// The tail table counts, for the loops over --tail and for those at or under the
    /// median, the loops each cause overlapped and the share of their time it covered,
    /// beside the same join with the evidence shifted by random offsets (chance). A cause
    /// is named only when the tail meets it more often than 95 % of the shifts and more
    /// often than the body does. Exit 2 for a log without wall time, or one that misses the
    /// run's time (it says by how much).
    Explain(explain::Args),
    /// Before measuring: from a short pilot of one arm, or the testbed's stored runs, how
    /// many runs of how many clicks would see a change of a given size (`--detect
    /// inputToPixels.p90=+10%`), and how long.
    Plan(compare::PlanCmd),
    /// Run a matrix file: cases x arms x repeats, best (or median) per cell with the start
    /// figure and % against the baseline arm, per-thread CPU beside every run.
    Matrix(matrix::MatrixArgs),
    /// Reduce server-side evidence to tables: per-frame stats lines, JVM GC logs, class
    /// loading, collapsed profiler stacks (exit 2 when a file holds nothing understood).
    Logs(logs::LogsArgs),
    /// Capture a TCP port into pcap, and account for its WebSocket bytes per direction.
    Wire(wire::WireArgs),
    /// Run the built-in fixture match (a streamed-canvas board game with tunable costs) on
    /// 127.0.0.1 until Ctrl-C; prints its URL.
    Serve(serve::ServeArgs),
    /// Open a page and record what its target sends with no input for a while: frames,
    /// bytes, B/s, gaps, sizes, runs of near-identical frames (repaints for nothing).
    Watch(watch::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(completions::CompletionsArgs),
    /// Print the man page of arena-perf and its subcommands (roff) to stdout.
    Man(completions::ManArgs),
}

/// Runs the CLI and maps errors to the documented exit codes (0 ok, 1 regression,
/// 2 bad input, 3 target failed mid-run, 130 interrupted by SIGINT or SIGTERM, 129 by
/// SIGHUP, 131 by SIGQUIT). Standard output is written through [`common::stdout`]: a
/// closed pipe (`arena-perf ... | head`) ends quietly (SIGPIPE for the commands that only
/// read and print, exit 0 for the rest), any other failed write exits 2 with a message.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if only_reads_and_prints(&cli.command) {
        arena_sys::interrupt::die_on_closed_pipe();
    }
    match run(cli) {
        Ok(code) => code,
        Err(err) if common::stdout::closed_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // After a hangup stderr may be gone: a failed write must not panic.
            let _ = writeln!(std::io::stderr(), "arena-perf: {err:#}");
            match arena_report::ExitKind::of(&err) {
                Some(arena_report::ExitKind::Interrupted) => {
                    ExitCode::from(arena_sys::interrupt::exit_code())
                }
                _ => arena_report::exit_code(&err),
            }
        }
    }
}

/// Commands that start no browser, server or child: a closed stdout may end them at once.
fn only_reads_and_prints(cmd: &Command) -> bool {
    match cmd {
        Command::Compare(_)
        | Command::Gate(_)
        | Command::Plot(_)
        | Command::Explain(_)
        | Command::Plan(_)
        | Command::Logs(_)
        | Command::Completions(_)
        | Command::Man(_) => true,
        // A screenshot drives a headless Chromium.
        Command::Report(r) => r.screenshot.is_none(),
        Command::History(h) => !matches!(h.command, history::HistoryCommand::Add(_)),
        Command::Wire(w) => matches!(w.command, wire::WireCommand::Summary(_)),
        _ => false,
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Pilot(a) => pilot::run(a),
        Command::Ab(a) => ab::run(a),
        Command::Demo(a) => demo::run(a),
        Command::Startup(a) => startup::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Compare(a) => compare::run(a),
        Command::Gate(a) => gate::run(a),
        Command::History(a) => history::run(a),
        Command::Plot(a) => plot::run(a),
        Command::Explain(a) => explain::run(a),
        Command::Plan(a) => compare::plan(a),
        Command::Report(a) => report::run(a),
        Command::Matrix(a) => matrix::run(a),
        Command::Logs(a) => logs::run(a),
        Command::Wire(a) => wire::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Watch(a) => watch::run(a),
        // Handed the definitions rather than reaching back for them: this file names
        // completions.rs, so completions.rs may not name this one.
        Command::Completions(a) => completions::completions(a, Cli::command()),
        Command::Man(a) => completions::man(a, Cli::command()),
    }
}
