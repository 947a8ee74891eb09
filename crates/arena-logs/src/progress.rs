//! How far the reducers have read, for a progress bar: one process-wide count of the
//! bytes of text scanned (decompressed bytes for gzip), added once per block read, so the
//! count costs nothing per line and the library still prints nothing.

use std::sync::atomic::{AtomicU64, Ordering};

static READ: AtomicU64 = AtomicU64::new(0);

/// Bytes of text the line scanner has read in this process so far.
pub fn bytes_read() -> u64 {
    READ.load(Ordering::Relaxed)
}

pub(crate) fn add(n: u64) {
    READ.fetch_add(n, Ordering::Relaxed);
}
