//! What the pilot's benches print beside their figures: type-7 quantiles and the
//! machine's load (a shared box's load moves every figure they print).

/// The `p` quantile of `v` (type 7), NaN when empty.
pub fn q(v: &[f64], p: f64) -> f64 {
    arena_stats::quantile(v, p).unwrap_or(f64::NAN)
}

/// The machine's 1-minute load average.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}
