//! Sleeping to a fraction of a millisecond in async code. Tokio's timer fires on the next
//! whole millisecond after a deadline and then waits for its driver to wake, which adds 1
//! to 2 ms to every sleep: too much where a sleep is a calibration truth (the fixture's
//! `delay_ms`, a shaped link's propagation delay). The last 2 ms are spent yielding.

use std::time::{Duration, Instant};

/// How long before the deadline the coarse sleep ends.
const FINE: Duration = Duration::from_millis(2);

/// Sleeps until `deadline`, to within a few microseconds on an idle runtime.
pub async fn sleep_until_exactly(deadline: Instant) {
    let now = Instant::now();
    if let Some(coarse) = deadline
        .checked_duration_since(now)
        .and_then(|d| d.checked_sub(FINE))
    {
        tokio::time::sleep(coarse).await;
    }
    while Instant::now() < deadline {
        tokio::task::yield_now().await;
    }
}

/// Sleeps `d`, as [`sleep_until_exactly`].
pub async fn sleep_exactly(d: Duration) {
    sleep_until_exactly(Instant::now() + d).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_in_the_past_returns_at_once_and_a_future_one_is_not_missed() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let t = Instant::now();
            sleep_until_exactly(t - Duration::from_millis(5)).await;
            assert!(t.elapsed() < Duration::from_millis(5));
            let deadline = Instant::now() + Duration::from_millis(7);
            sleep_until_exactly(deadline).await;
            assert!(Instant::now() >= deadline, "woke before its deadline");
        });
    }
}
