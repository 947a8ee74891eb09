//! What a run tells while it works. The stages report events through a callback and never
//! print: the command line decides how they look (a line per 25 clicks when stderr is not
//! a terminal, one rewritten line when it is, nothing with `--quiet`).

/// One step of a command's progress.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Progress<'a> {
    /// The browser every run of the command shares is up.
    Browser { version: &'a str, pid: i32 },
    /// Run `index` (from 1) of `runs` starts: arm `arm`, round `round` (from 1); `runs`
    /// is 0 when a sequence has no set end.
    Run {
        index: usize,
        runs: usize,
        arm: &'a str,
        round: u32,
    },
    /// Click `done` of `of` in a run of `arm` has ended (answered or not).
    Click { arm: &'a str, done: u64, of: u64 },
    /// The run's click loop ended, all clicks made.
    ClicksDone { arm: &'a str },
    /// A sequence looked at its runs after `round` rounds (`ab --until-decided`).
    Look { round: u32, line: &'a str },
    /// A run of `ab` was written to `dir`; `complete` unless it ended early.
    RunWritten {
        arm: &'a str,
        dir: &'a std::path::Path,
        complete: bool,
    },
}

/// Receives progress; `&|_| {}` says nothing.
pub type OnProgress<'a> = &'a (dyn Fn(Progress<'_>) + Send + Sync);

/// The callback that ignores everything.
pub fn silent(_: Progress<'_>) {}

impl Progress<'_> {
    /// How the command line shows this step: the browser and each run as a line, each
    /// click as a step of the bar, which ends with the clicks.
    pub fn shown(&self) -> arena_report::progress::Shown {
        use arena_report::progress::Shown;
        match *self {
            Progress::Browser { version, pid } => {
                Shown::Line(format!("browser: {version} (pid {pid})"))
            }
            Progress::Run {
                index,
                runs: 0,
                arm,
                round,
            } => Shown::Line(format!("run {index}: arm {arm}, round {round}")),
            Progress::Run {
                index,
                runs,
                arm,
                round,
            } => Shown::Line(format!("run {index}/{runs}: arm {arm}, round {round}")),
            Progress::Look { round, line } => Shown::Line(format!("after round {round}: {line}")),
            Progress::Click { arm, done, of } => Shown::Step {
                what: format!("arm {arm}: click"),
                done,
                of,
            },
            Progress::ClicksDone { .. } => Shown::Done,
            Progress::RunWritten { .. } => Shown::Nothing,
        }
    }
}
