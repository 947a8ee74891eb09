//! The run model and the run folder: the one file format every command after the pilot
//! reads (`compare`, `gate`, `plot`, `report`), so an old run can be re-reported without
//! a browser. The format is documented in `docs/run-format.md`.
//!
//! A run folder holds `run.json` ([`RunMeta`]: arm, knobs, pilot hash, versions, host,
//! status, summary, warnings), `loops.csv` (one [`Loop`] a row) and `events.jsonl` (one
//! raw recorder [`Event`] a line). [`Run::load`] validates and every error names the file
//! and exits 2 (via [`arena_report::Exit`]): the files' shape, and past it every value
//! finite and in range, the `loops.csv` header, metrics that agree with their times, the
//! loop invariant against what `run.json` recorded; [`check_distinct`] refuses a run
//! given twice. Loading holds at most about [`MAX_LINE_BYTES`] of a line or row, and
//! [`MAX_RUN_JSON_BYTES`] of `run.json`, and refuses a device, FIFO or socket in a run
//! file's place unread.

mod bounded;
mod cpu;
mod figures;
mod folder;
pub mod gestures;
mod layout;
mod model;
pub mod outputs;
mod staging;
mod startup;
mod time;
mod validate;

pub use bounded::{MAX_LINE_BYTES, MAX_RUN_JSON_BYTES};
pub use cpu::{CpuPhase, CpuProcess, RunCpu};
pub use figures::REPLY_4KB;
pub use folder::{
    default_run_dir, EVENTS_JSONL, LOOPS_CSV, LOOP_COLUMNS, RUN_JSON, SETUP_EVENTS_JSONL,
    TRACE_JSON, WIRE_JSON, WIRE_PCAP,
};
pub use model::{
    AnswerInfo, BrowserSettings, Event, Host, IdleFrame, IdleWindow, InputPhase, LinkConnection,
    Loop, LoopSettings, Metric, Outcome, PageClock, Run, RunMeta, RunStatus, RunSummary,
    ShamWatches, SocketSource, TraceInfo, TraceOverhead, TracePresented, TypingSummary, Warning,
    WireDirection, WireFigures, IDLE_SHARE, SCHEMA_VERSION,
};
pub use staging::Staging;
pub use startup::{Milestone, RoundStatus, StartupRound};
pub use time::rfc3339_utc;
pub use validate::{check_distinct, check_run, LATER_COLUMNS, MAX_DURATION_MS, MAX_TIME_MS};
