//! How the fixture's sessions use glibc's allocator, measured (docs/fixture-protocol.md,
//! "Connections and memory").
//!
//! glibc starts with a 128 KiB mmap threshold and raises it to the size of each mmapped
//! block freed (up to 32 MiB). After the first session's first frame (672 KB, grown to 1 MiB
//! by doubling, then copied into the WebSocket write buffer) is freed, every later first
//! frame comes from the malloc arenas instead of mmap, and arenas keep what is freed: 64
//! sessions building their boards held 240-490 MB of RSS (3.5-7 MB a session), still held
//! after they closed. The blocks between 256 KiB and 1 MiB are the ones that matter (a
//! fixed threshold of 256 KiB gave 47-57 MB, one of 1 MiB 240-276 MB).

/// Blocks from this size on always come from mmap and go back to the kernel when freed.
/// Above every per-encode buffer of the PNG path (the largest, miniz_oxide's, is 85 KB),
/// so the costs the fixture measures keep their allocation pattern.
pub const MMAP_THRESHOLD: usize = 256 * 1024;

/// Fixes glibc's mmap threshold at [`MMAP_THRESHOLD`]. Process-wide, so it is for a process
/// that is the server (`arena-perf serve`, the flood test); a process that only embeds a
/// fixture server for a pilot keeps its allocator as it was. No-op off glibc.
pub fn tune_for_serving() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; any value is valid to pass.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
    }
}

/// Gives the kernel back the free pages inside the malloc arenas. Called when the last
/// session has ended: an idle server then holds what it needs, not what its busiest moment
/// left behind. Takes a few ms; never on a session's path.
pub(crate) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the kernel; live blocks are untouched.
    unsafe {
        libc::malloc_trim(0);
    }
}
