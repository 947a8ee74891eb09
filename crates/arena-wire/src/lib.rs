//! The wire layer: capture a TCP port off an interface into classic pcap, and account for
//! every byte of it per direction (TCP, WebSocket framing, permessage-deflate).
//!
//! - [`Capture::start`] captures on an AF_PACKET TPACKET_V3 ring (pure Rust, no libpcap),
//!   or, with the `pcap` cargo feature, through libpcap ([`CaptureBackend`]); it falls
//!   back to `/proc/net/dev` interface counters when raw capture is not permitted;
//!   [`CaptureHandle::stop`] returns what was captured, by which backend, and the drops.
//! - [`summarize`] reads a pcap once, in constant memory, into a [`WireSummary`]
//!   (serde), which renders as [`arena_report::Table`]s via [`WireSummary::tables`].

mod beside;
pub mod capture;
pub mod packet;
pub mod pcap;
pub mod reasm;
mod run_capture;
mod summary;
pub mod synth;
mod tables;
pub mod tshark;
pub mod ws;

pub use beside::{beside_ending, capture_beside};
pub use capture::{
    Backend, Capture, CaptureBackend, CaptureHandle, CaptureOptions, CaptureSource, CaptureStats,
    DevCounters, LIBPCAP_BUILT_IN, NO_LIBPCAP,
};
pub use run_capture::RunCapture;
pub use summary::{
    compressed_messages, default_inflate_threads, open_counted, summarize, summarize_reader,
    summarize_reader_threads, summarize_threads, ConnInfo, DirSummary, FrameRef, SummaryOptions,
    WindowCounts, WindowRow, WireSummary,
};
pub use tables::capture_table;
