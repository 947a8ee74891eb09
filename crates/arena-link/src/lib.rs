//! A shaped link between the browser and the target, in user space (no `netem`, no root):
//! a loopback relay that gives each direction a propagation delay (half the RTT), a
//! serialising rate limit with a bounded queue (a big frame delays the ones behind it, as
//! on a real link) and jitter that never reorders a connection.
//!
//! The relay forwards one port to one target. The proxy ([`Proxy`], SOCKS5) carries
//! whatever loopback host:port the browser asks for, each connection shaped the same way:
//! a page that picks its socket's port from its own query string is shaped too.
//!
//! ```no_run
//! # async fn f(target: std::net::SocketAddr) -> anyhow::Result<()> {
//! let link = arena_link::LinkSpec::parse("rtt=20ms,rate=25mbit").map_err(anyhow::Error::msg)?;
//! let relay = arena_link::Relay::start(target, link).await?;
//! // point the page at relay.addr() instead of target
//! relay.stop().await;
//! # Ok(()) }
//! ```

mod pipe;
mod proxy;
mod relay;
mod socks;
mod spec;

pub use proxy::{Carried, ConnKind, Proxy, Refusal};
pub use relay::{Relay, RelayStats};
pub use socks::is_loopback_host;
pub use spec::LinkSpec;
