//! `arena-perf history`: runs kept in a database (SQLite by default, or PostgreSQL), listed, shown, and
//! trended over commits with their steps named.

use std::process::ExitCode;

use arena_report::Format;

use super::common::stdout::print;

pub use arena_history::cli::{HistoryArgs, HistoryCommand};

pub fn run(a: HistoryArgs) -> anyhow::Result<ExitCode> {
    let said = a.run()?;
    print(match said.format {
        Format::Json => arena_report::json::to_text(&said.json),
        f => said.table.render(f),
    })?;
    Ok(ExitCode::SUCCESS)
}
