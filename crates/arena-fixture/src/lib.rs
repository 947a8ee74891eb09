//! The built-in fixture match: a small but real streamed-canvas board game. The server
//! renders a tile board, streams binary frames of draw ops and PNG image constants over one
//! WebSocket, and puts known, tunable costs on the send path (see [`Knobs`] and
//! docs/fixture-protocol.md).

pub mod art;
pub mod knobs;
pub mod los;
pub mod pilot;
pub mod pngenc;
pub mod proto;
pub mod server;
pub mod session;
pub mod stats;

pub use knobs::{AckMode, Knobs, Phase};
pub use server::{Server, ServerHandle, ServerOptions};
pub use stats::{Counters, FrameStat, StatsLog};
