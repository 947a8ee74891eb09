//! Where the gate's Markdown goes beside standard output (`--summary FILE` and
//! `$GITHUB_STEP_SUMMARY`), and how its verdict ends the command. The verdict is decided
//! before any of it is written, so a failed write is said and never changes the exit code.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use arena_run::outputs::Output;

use crate::gate::GateResult;

/// The files the gate's Markdown is written to.
pub struct SummaryFiles {
    /// `--summary FILE`: replaced.
    pub summary: Option<PathBuf>,
    /// `$GITHUB_STEP_SUMMARY`, when set and not empty: appended to.
    pub step_summary: Option<PathBuf>,
}

impl SummaryFiles {
    /// `--summary`'s file, and `$GITHUB_STEP_SUMMARY`'s from the environment.
    pub fn new(summary: Option<&Path>) -> SummaryFiles {
        let step_summary = std::env::var_os("GITHUB_STEP_SUMMARY")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from);
        SummaryFiles {
            summary: summary.map(Path::to_path_buf),
            step_summary,
        }
    }

    /// Each file as an output named by its flag, to be checked against the inputs.
    pub fn outputs(&self) -> Vec<Output<'_>> {
        let summary = self.summary.iter().map(|p| Output::file("--summary", p));
        let step = self.step_summary.iter();
        summary
            .chain(step.map(|p| Output::file("$GITHUB_STEP_SUMMARY", p)))
            .collect()
    }

    /// Writes `md` to every file; what failed, to be said on stderr.
    pub fn write(&self, md: &str) -> Vec<anyhow::Error> {
        let mut errors = Vec::new();
        if let Some(path) = &self.summary {
            if let Err(e) = std::fs::write(path, md) {
                errors.push(anyhow!("{}: writing the summary: {e}", path.display()));
            }
        }
        if let Some(path) = &self.step_summary {
            if let Err(e) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| f.write_all(format!("{md}\n").as_bytes()))
            {
                errors.push(anyhow!("{}: $GITHUB_STEP_SUMMARY: {e}", path.display()));
            }
        }
        errors
    }
}

/// The line the gate ends with on stderr, and its exit code (0 pass, 1 fail, 4
/// unknown, or what `--on-unknown` makes of unknown).
pub fn gate_ending(result: &GateResult) -> (String, u8) {
    let (failed, unknown, total) = (result.failures(), result.unknowns(), result.count());
    let outcome = result.outcome();
    if !failed.is_empty() {
        let line = format!(
            "arena-perf gate: {} of {total} checks failed: {}",
            failed.len(),
            failed.join(", ")
        );
        return (line, outcome.exit_code());
    }
    if unknown.is_empty() {
        return (
            format!("arena-perf gate: all {total} checks passed"),
            outcome.exit_code(),
        );
    }
    let then = match result.on_unknown {
        crate::gate::OnUnknown::Unknown => "exit 4",
        crate::gate::OnUnknown::Pass => "passed (--on-unknown pass)",
        crate::gate::OnUnknown::Fail => "failed (--on-unknown fail)",
    };
    let line = format!(
        "arena-perf gate: {} of {total} checks unknown ({}): the runs cannot tell either way; {then}",
        unknown.len(),
        unknown.join(", ")
    );
    (line, outcome.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_replaced_and_the_step_summary_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let (summary, step) = (dir.path().join("s.md"), dir.path().join("step.md"));
        std::fs::write(&summary, "old").unwrap();
        std::fs::write(&step, "before\n").unwrap();
        let files = SummaryFiles {
            summary: Some(summary.clone()),
            step_summary: Some(step.clone()),
        };
        assert_eq!(files.outputs().len(), 2);
        assert!(files.write("| t |").is_empty());
        assert_eq!(std::fs::read_to_string(&summary).unwrap(), "| t |");
        assert_eq!(std::fs::read_to_string(&step).unwrap(), "before\n| t |\n");
    }

    #[test]
    fn a_failed_write_is_returned_naming_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let files = SummaryFiles {
            summary: Some(dir.path().join("missing/s.md")),
            step_summary: None,
        };
        let errors = files.write("x");
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].to_string().contains("writing the summary"),
            "{}",
            errors[0]
        );
    }
}
