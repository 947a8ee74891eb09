//! arena-perf: click-to-pixel latency for apps streamed to the browser, and the
//! server-side evidence beside it. This crate is the command line only; see
//! `docs/ARCHITECTURE.md` for the crates that do the work.

pub mod cli;
