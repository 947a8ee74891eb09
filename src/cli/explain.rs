//! `arena-perf explain`: why a run's slow loops were slow, from the server's evidence
//! joined to each loop's stages on one clock (crates/arena-explain).

use std::process::ExitCode;

use super::common::stdout::print;

pub use arena_explain::cli::Args;

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    print(arena_explain::cli::output(a)?)?;
    Ok(ExitCode::SUCCESS)
}
