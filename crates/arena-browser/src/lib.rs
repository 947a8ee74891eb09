//! The browser layer of arena-perf: find, launch and kill Chromium, drive it over CDP with
//! trusted input, and read the in-page recorder (see `docs/recorder.md`).
//!
//! Every Chromium this crate starts lives in its own process group with a parent-death
//! signal, is killed by `Browser::close`, by `Drop`, by [`kill_all`] (for Ctrl-C handlers),
//! and by the kernel if this process is SIGKILLed.

mod browser;
mod cdp_call;
mod emulation;
mod idle;
mod launch;
mod net;
mod page;
pub mod record;
pub mod recorder;
mod screenshot;
mod trace;

/// True while a pid runs; a zombie counts as gone (killed, only its parent's wait is
/// missing). Tests use it to prove no browser process outlived them.
pub use browser::{Browser, LaunchOptions};
pub use emulation::{Emulation, CPU_THROTTLE, DPR_MAX, VIEWPORT_PX};
pub use idle::IdleReport;
pub use launch::{find_chromium, kill_all, live_groups, sweep_stale_profiles};
pub use page::{monotonic_ms, CanvasRect, ClockMap, Page, Quiet, SeveralCanvases};
pub use record::{
    BytesAt, ClassifierSpec, Drain, Endian, IntAt, Matcher, Record, RecordKind, SendClass,
    SocketSource, NO_TARGET,
};
pub use recorder::{
    AppFields, AppRecorder, PageOracle, PageOracleKind, RecorderConfig, SocketChoice, StartupWatch,
    DEFAULT_MOVE_RADIUS_PX, DEFAULT_RADIUS_PX, RECORDER_JS,
};
pub use screenshot::screenshot_file;
pub use trace::{align_marks, parse_trace, AlignMark, Trace, ALIGN_MARK, TRACE_CATEGORIES};

/// Re-exported so callers can build raw CDP mouse events without depending on chromiumoxide.
pub use chromiumoxide::cdp::browser_protocol::input::DispatchMouseEventType;
