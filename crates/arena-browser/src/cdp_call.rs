//! Every CDP call under a timeout of its own (`docs/ARCHITECTURE.md`: nothing of a
//! browser outlives the command), one helper for the browser, its pages, their emulation
//! and tracing.

use std::time::Duration;

use anyhow::{anyhow, Result};

/// Runs a CDP future under our own timeout, naming the call on failure.
pub(crate) async fn cdp<T, E, F>(limit: Duration, what: &str, fut: F) -> Result<T>
where
    F: std::future::Future<Output = std::result::Result<T, E>>,
    E: std::fmt::Display,
{
    match tokio::time::timeout(limit, fut).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(anyhow!("CDP {what}: {e}")),
        Err(_) => Err(anyhow!(
            "CDP {what}: no answer within {} ms",
            limit.as_millis()
        )),
    }
}
