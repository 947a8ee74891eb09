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
    pub fn code(self) -> u8 {
        match self {
            ExitKind::Regression => 1,
            ExitKind::BadInput => 2,
            ExitKind::TargetFailed => 3,
            ExitKind::Interrupted => 130,
        }
    }
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
