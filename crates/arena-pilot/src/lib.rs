//! The latency pilot. A command resolves a [`Plan`] per arm from the pilot file
//! ([`scenario`]) and the command line ([`Overrides`]) once; the stages of a run then read
//! only the plan, in this order:
//!
//! 1. [`target`]: start the target: the in-process fixture, or the arm's setup command
//!    for an external page (and the capture, from `arena-wire`).
//! 2. [`prepare`]: a fresh page with the recorder; the canvas, the setup steps, the clear
//!    on attach, the viewport check; then [`oracle`]: what closes the loops.
//!    With `--idle`, [`idle`] leaves the page alone for a while first.
//! 3. [`click`]: each click shaped like a person's, waited for on the page's word;
//!    drains land in [`collect`]; `stall` ends the run when the target goes silent.
//! 4. [`pair`]: records into loops, each closed by its [`answer`] at most once.
//! 5. [`write`]: the run (summary, warnings, events), written as a run folder; with
//!    `--trace`, [`trace`] merges the loops into Chromium's trace of the clicks.
//!
//! After the clicks, [`gesture`] makes the file's drags and hovers, and [`moves`] accounts
//! for every move of each (its own rows, never pooled with the clicks).
//!
//! [`run`] chains them for one arm, [`ab`] interleaves arms; [`startup`] measures cold
//! starts, round by round, with the same target and interleaving. Progress goes through a
//! callback ([`progress`]); nothing here prints.

pub mod ab;
pub mod answer;
pub mod cancel;
pub mod click;
pub mod collect;
pub mod cpu;
pub mod cpu_split;
pub mod flags;
pub mod gesture;
pub mod glyphs;
pub mod idle;
mod link;
pub mod moves;
pub mod moves_out;
pub mod oracle;
pub mod pair;
pub mod phase;
pub mod plan;
pub mod prepare;
pub mod progress;
pub mod ranges;
pub mod run;
pub mod scenario;
pub mod sequence;
mod stall;
pub mod startup;
pub mod target;
pub mod trace;
pub mod type_spec;
pub mod typist;
pub mod verify;
pub mod watch;
pub mod write;

use std::future::Future;

pub use ab::{planned_looks, run_ab, AbOutcome, AbRequest, Budget, Look, Sequential};
pub use cancel::Cancel;
pub use collect::{PhaseKind, ToolCost};
pub use cpu::{resolve_samples, CpuWatch, SampleTarget};
pub use plan::{BrowserOptions, Overrides, Plan, TargetPlan};
pub use progress::{silent, OnProgress, Progress};
pub use run::{run_arm, run_one, OutDir, Outcome, RunRequest};
pub use scenario::{Arm, Pilot};
pub use sequence::SequenceArgs;
pub use startup::{run_startup, BoardRule, StartupOptions, StartupOutcome, StartupRequest};
pub use watch::{page_url, watch, WatchRequest, Watched};

/// Runs `f` to completion on the one runtime every browser-driving command uses, with
/// Ctrl-C and SIGTERM setting the returned future's [`Cancel`].
pub fn block_on<T, F>(f: impl FnOnce(Cancel) -> F) -> anyhow::Result<T>
where
    F: Future<Output = anyhow::Result<T>>,
{
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let cancel = Cancel::new();
        cancel.on_signals()?;
        f(cancel).await
    })
}
