//! `arena-perf logs <stats|gc|classload|profile>`: the server-side evidence reducers
//! (`crates/arena-logs`, which also owns the flags so its own binary tests the same parsing).

use std::io::IsTerminal;
use std::process::ExitCode;

use super::common::progress::{plain_total, Mode, Reporter};

pub use arena_logs::cli::LogsArgs;

pub fn run(args: LogsArgs) -> anyhow::Result<ExitCode> {
    // A long read shows a bar of bytes on a terminal (quiet elsewhere: the tables are the
    // record).
    let reporter = Reporter::new(match std::io::stderr().is_terminal() {
        true => Mode::detect(false),
        false => Mode::Quiet,
    });
    let total = plain_total(args.files());
    let out = reporter.reading(total, &arena_logs::progress::bytes_read, || {
        arena_logs::cli::run(&args)
    })?;
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}
