//! `arena-perf logs <stats|gc|classload|profile>`: the server-side evidence reducers
//! (`crates/arena-logs`, which also owns the flags so its own binary tests the same parsing).

use std::process::ExitCode;

use arena_logs::cli::LogsKind;

use super::common::stdout::print;
use arena_report::progress::{plain_total, Mode, Reporter};
use arena_run::outputs::{refuse_overwrite, Output};

pub use arena_logs::cli::LogsArgs;

pub fn run(args: LogsArgs) -> anyhow::Result<ExitCode> {
    // `classload --plot` and `profile --flamegraph` never land on a log they read (nor on
    // the rules file); `-` is stdin, not a file.
    let (output, rules) = match &args.kind {
        LogsKind::Classload(a) => (a.plot.as_ref().map(|p| Output::file("--plot", p)), None),
        LogsKind::Profile(a) => (
            a.flamegraph
                .as_ref()
                .map(|p| Output::file("--flamegraph", p)),
            a.rules.as_deref(),
        ),
        LogsKind::Stats(_) | LogsKind::Gc(_) => (None, None),
    };
    if let Some(out) = output {
        let logs = args.files().iter().map(|p| p.as_path());
        let db = arena_history::db_file(None);
        let inputs = logs.chain(rules).filter(|p| p.as_os_str() != "-");
        refuse_overwrite(inputs.chain(db.as_deref()), &[out])?;
    }
    // A long read shows a bar of bytes on a terminal (quiet elsewhere: the tables are the
    // record).
    let reporter = Reporter::new(Mode::terminal_only(false));
    let total = plain_total(args.files());
    let out = reporter.reading(total, &arena_logs::progress::bytes_read, || {
        arena_logs::cli::run(&args)
    })?;
    print(out)?;
    Ok(ExitCode::SUCCESS)
}
