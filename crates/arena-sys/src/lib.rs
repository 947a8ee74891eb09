//! Process and platform plumbing shared by the workspace's crates, Linux only.
//!
//! - [`rng`]: one seeded SplitMix64, so a seed names the same clicks, art and run orders
//!   on every machine and in every version.
//! - [`procfs`]: `/proc` stat and task readers for samplers and clean-up paths.
//! - [`sampler`]: CPU of process trees and thread groups beside a run, split by phase.
//! - [`spawn`]: children in their own process group with a parent-death signal.
//! - [`child`]: the one way to start a child for the user: group, death signal, and its
//!   whole group killed and reaped on every path.
//! - [`kill`]: signal a group or a pid, reap by pid, with deadlines, leaving no zombie.
//! - [`interrupt`]: one SIGINT/SIGTERM flag per process, for sync and async code alike.
//! - [`fifo`]: open a user-named input, saying on a terminal when a FIFO waits for a writer.
//! - `timer` (feature `tokio`): async sleeps to a fraction of a millisecond.

pub mod child;
pub mod clock;
pub mod fifo;
pub mod interrupt;
pub mod kill;
pub mod procfs;
pub mod rng;
pub mod sampler;
pub mod spawn;
#[cfg(feature = "tokio")]
pub mod timer;
