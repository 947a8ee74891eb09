use std::fmt;

/// Why a command ended other than with success; maps to the process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    /// A gate failed or a regression was found (exit 1).
    Regression,
    /// Usage or bad input; the message names the file and line (exit 2).
    BadInput,
    /// The target or browser failed mid-run; partial results were written (exit 3).
    TargetFailed,
    /// Interrupted by a signal; partial results were written (exit 130).
    Interrupted,
}

impl ExitKind {
    /// The kind of the first [`Exit`] in `err`'s chain: an exit-coded error keeps its code
    /// however much context is wrapped around it.
    pub fn of(err: &anyhow::Error) -> Option<ExitKind> {
        err.chain()
            .find_map(|c| c.downcast_ref::<Exit>())
            .map(|e| e.kind)
    }

    pub fn code(self) -> u8 {
        match self {
            ExitKind::Regression => 1,
            ExitKind::BadInput => 2,
            ExitKind::TargetFailed => 3,
            ExitKind::Interrupted => 130,
        }
    }
}

/// The process exit code a command that failed with `err` ends with: its [`Exit`]'s code,
/// else 2, since an error no one classified is taken for bad input. One mapping for every
/// binary, so the documented codes cannot drift apart.
pub fn exit_code(err: &anyhow::Error) -> std::process::ExitCode {
    std::process::ExitCode::from(ExitKind::of(err).unwrap_or(ExitKind::BadInput).code())
}

/// An error that carries its exit code. Wrap it in `anyhow::Error`; the CLI looks for it
/// in the chain and exits with its code (any other error exits 2).
#[derive(Debug)]
pub struct Exit {
    pub kind: ExitKind,
    pub message: String,
}

impl Exit {
    pub fn new(kind: ExitKind, message: impl Into<String>) -> Self {
        Exit {
            kind,
            message: message.into(),
        }
    }
    pub fn bad_input(message: impl Into<String>) -> Self {
        Exit::new(ExitKind::BadInput, message)
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Exit {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_survives_context_and_defaults_to_bad_input() {
        let e = anyhow::Error::new(Exit::new(ExitKind::Interrupted, "stopped")).context("run");
        assert_eq!(ExitKind::of(&e), Some(ExitKind::Interrupted));
        assert_eq!(exit_code(&e), std::process::ExitCode::from(130));
        let plain = anyhow::anyhow!("no kind");
        assert_eq!(ExitKind::of(&plain), None);
        assert_eq!(exit_code(&plain), std::process::ExitCode::from(2));
    }
}
