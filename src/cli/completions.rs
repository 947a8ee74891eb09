//! `arena-perf completions SHELL` and `arena-perf man`: generated from the same clap
//! definitions the parser uses, so they cannot drift from the flags.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use clap_complete::Shell;

use super::common::stdout::print;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for; the script goes to stdout, e.g.
    /// `arena-perf completions bash > /etc/bash_completion.d/arena-perf`.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The completion script of `cmd`, the command line's definitions.
pub fn completions(a: CompletionsArgs, mut cmd: clap::Command) -> Result<ExitCode> {
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "arena-perf", &mut out);
    if a.shell == Shell::Bash {
        out = fix_bash_states(&out);
    }
    write_out(&out)
}

/// clap_complete's bash script spells a hyphenated binary's states two ways: its loop
/// arrives at `arena__perf__subcmd__pilot` while the case arms read
/// `arena__subcmd__perf__subcmd__pilot` (clap-rs/clap#6421), so no subcommand's flags
/// ever completed. The arms are respelled the way the loop spells them.
fn fix_bash_states(script: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(script)
        .replace("arena__subcmd__perf", "arena__perf")
        .into_bytes()
}

#[derive(Debug, Args)]
pub struct ManArgs {}

/// The man page (roff) of the command and every subcommand, one after the other, to stdout:
/// `arena-perf man | man -l -`.
pub fn man(_: ManArgs, cmd: clap::Command) -> Result<ExitCode> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut out)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("arena-perf-{}", sub.get_name());
        let version = cmd.get_version().unwrap_or_default().to_string();
        let sub = sub
            .clone()
            .name(name.clone())
            .bin_name(name)
            .version(version);
        clap_mangen::Man::new(sub).render(&mut out)?;
    }
    write_out(&out)
}

/// A closed pipe (`| head`) ends quietly with 0; any other failed write exits 2.
fn write_out(bytes: &[u8]) -> Result<ExitCode> {
    print(bytes)?;
    Ok(ExitCode::SUCCESS)
}
