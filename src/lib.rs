//! arena-perf: click-to-pixel latency for apps streamed to the browser, and the
//! server-side evidence beside it. See `docs/ARCHITECTURE.md` for the module map.

pub mod cli;
pub mod pilot;
