//! The monotonic clock as CDP and Chromium's trace stamp it, read here because it is a raw
//! libc call and this crate holds every such call (`docs/ARCHITECTURE.md`).

/// CLOCK_MONOTONIC in ms: the clock of CDP network timestamps and of trace events.
pub fn monotonic_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

#[cfg(test)]
mod tests {
    #[test]
    fn it_never_goes_back() {
        let a = super::monotonic_ms();
        let b = super::monotonic_ms();
        assert!(a > 0.0 && b >= a, "{a} {b}");
    }
}
