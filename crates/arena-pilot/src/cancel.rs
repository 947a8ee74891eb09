//! One run's interruption: set by Ctrl-C / SIGTERM, checked by every wait.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// Set by Ctrl-C / SIGTERM; every wait in a run checks it.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn new() -> Self {
        Cancel::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
    /// Sets this run's flag on SIGINT, SIGTERM, SIGHUP or SIGQUIT: the process-wide
    /// handler is `arena_sys::interrupt`, and a task wakes on it (the shared flag itself
    /// is not this `Cancel`, so cancelling one run does not read as a signal to the
    /// others).
    pub fn on_signals(&self) -> Result<()> {
        arena_sys::interrupt::install().context("installing the signal handlers")?;
        let me = self.clone();
        tokio::spawn(async move {
            arena_sys::interrupt::wait().await;
            me.cancel();
        });
        Ok(())
    }
    /// Returns once cancelled.
    pub(crate) async fn cancelled(&self) {
        while !self.is_cancelled() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    /// Sleeps `d`, waking early when cancelled.
    pub(crate) async fn sleep(&self, d: Duration) {
        let end = Instant::now() + d;
        while !self.is_cancelled() {
            let now = Instant::now();
            if now >= end {
                break;
            }
            tokio::time::sleep((end - now).min(Duration::from_millis(20))).await;
        }
    }
    /// Sleeps until `deadline` to a fraction of a millisecond (the pacing of inputs: tokio's
    /// own timer would add 1 to 2 ms to every wait), waking early when cancelled.
    pub(crate) async fn sleep_until_exactly(&self, deadline: Instant) {
        let fine = Duration::from_millis(2);
        if let Some(coarse) = deadline.checked_sub(fine) {
            self.sleep(coarse.saturating_duration_since(Instant::now()))
                .await;
        }
        if !self.is_cancelled() {
            arena_sys::timer::sleep_until_exactly(deadline).await;
        }
    }
}
