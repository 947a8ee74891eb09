//! The built-in fixture match: a small but real streamed-canvas board game. The server
//! renders a tile board, streams binary frames of draw ops and PNG image constants over one
//! WebSocket, and puts known, tunable costs on the send path (see [`Knobs`] and
//! docs/fixture-protocol.md).

pub mod alloc;
pub mod art;
mod bots;
mod conn;
mod deflate;
#[cfg(feature = "browser")]
pub mod drive;
mod jitter;
pub mod knobs;
pub mod los;
pub mod pngenc;
mod pointer;
pub mod proto;
pub mod scenario;
pub mod server;
pub mod session;
mod shared;
pub mod stats;
pub mod strip;

pub use knobs::{AckMode, Knobs, Phase};
pub use scenario::Scenario;
pub use server::{Server, ServerHandle, ServerOptions};
pub use stats::{Counters, FrameStat, StatsLog};

/// A JS condition, true in the fixture's page once it has painted frame `frame_id` (for a
/// driver's wait, e.g. after [`ServerHandle::wait_answered`]).
pub fn painted_js(frame_id: u32) -> String {
    format!("!!(window.fixture && window.fixture.paintedFrameId >= {frame_id})")
}
