//! Standard output for every subcommand: a failed write is an error, never a panic.
//! A closed pipe (the reader, e.g. `head`, had enough) ends the command quietly: SIGPIPE
//! for the commands that only read and print, exit 0 for those that keep SIGPIPE ignored
//! (browsers, servers, children to reap); any other failure (a full disk, `/dev/full`, an I/O error) exits 2 with
//! "writing to standard output: ..." on stderr. `gate` keeps its verdict code instead.

use std::fmt;
use std::io::{self, Write};

/// A write to standard output failed. Carried in an `anyhow::Error` to `main`, which
/// tells a closed pipe from the rest by [`closed_pipe`].
#[derive(Debug)]
pub struct StdoutFailed(pub io::Error);

impl fmt::Display for StdoutFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "writing to standard output: {}", self.0)
    }
}

impl std::error::Error for StdoutFailed {}

/// Writes `text` to standard output and flushes it, so a failure shows here and not in
/// a buffer dropped at exit.
pub fn print(text: impl AsRef<[u8]>) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_ref())
        .and_then(|()| out.flush())
        .map_err(|e| StdoutFailed(e).into())
}

/// True when `err` is a write to a closed pipe: the reader went away, nothing is wrong.
pub fn closed_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<StdoutFailed>()
            .is_some_and(|s| s.0.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// The CPU table of `runs` (`--sample`, the fixture's threads, Chromium), after a blank
/// line; nothing when no run was sampled. JSON documents carry it as `cpu` instead.
pub fn print_cpu(runs: &[arena_run::Run], format: arena_report::Format) -> anyhow::Result<()> {
    if format == arena_report::Format::Json {
        return Ok(());
    }
    if let Some(t) = arena_compare::runs_cpu_table(runs) {
        print(format!("\n{}", t.render(format)))?;
    }
    Ok(())
}

/// The comparison's gestures table after a blank line, in the table's format; nothing when
/// no run made gestures (JSON documents carry them as `gestures` instead).
pub fn print_gestures(
    cmp: Option<&arena_compare::Comparison>,
    format: arena_report::Format,
) -> anyhow::Result<()> {
    match cmp.and_then(|c| c.gestures.as_ref()) {
        Some(g) if format != arena_report::Format::Json => {
            print(format!("\n{}", g.table.render(format)))
        }
        _ => Ok(()),
    }
}
