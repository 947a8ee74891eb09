//! `arena-perf logs <stats|gc|classload|profile>`: the server-side evidence reducers
//! (`crates/arena-logs`, which also owns the flags so its own binary tests the same parsing).

use std::process::ExitCode;

pub use arena_logs::cli::LogsArgs;

pub fn run(args: LogsArgs) -> anyhow::Result<ExitCode> {
    print!("{}", arena_logs::cli::run(&args)?);
    Ok(ExitCode::SUCCESS)
}
