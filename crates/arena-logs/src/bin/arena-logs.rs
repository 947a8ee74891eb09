//! `arena-logs`: the reducers of `arena-perf logs` on their own, for hosts that only need
//! the server-side tables (and for this crate's end-to-end tests).

use std::process::ExitCode;

use arena_logs::cli::{run, LogsArgs};
use clap::Parser;

#[derive(Debug, Parser)]
#[command(
    name = "arena-logs",
    version,
    about = "Reduce server-side evidence logs to tables"
)]
struct Cli {
    #[command(flatten)]
    logs: LogsArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli.logs) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("arena-logs: {err:#}");
            arena_report::exit_code(&err)
        }
    }
}
