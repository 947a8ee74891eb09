//! What every request and connection of one fixture server shares: the server
//! (`crate::server`) makes it, each connection (`crate::conn`) reads it.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use tokio::sync::{watch, Semaphore};

use crate::art::Board;
use crate::bots::Turns;
use crate::knobs::Knobs;
use crate::stats::ServerStats;

/// What every request and connection of one server shares.
pub(crate) struct Shared {
    pub knobs: Knobs,
    pub index_html: String,
    pub board: Arc<Board>,
    pub stats: Arc<ServerStats>,
    pub next_conn: AtomicU64,
    pub shutdown: watch::Receiver<bool>,
    /// One permit per connection under `max_connections`, held until its session thread
    /// has returned.
    pub slots: Arc<Semaphore>,
    /// The bots' turns, started by inputs (`bot_turn_ms`).
    pub bot_turns: Arc<Turns>,
}
