//! Reading runs holds bounded memory, through the real binary: a run whose `events.jsonl`
//! is linked to `/dev/zero` is refused at once (exit 2, naming the file and what it is)
//! instead of being read until memory runs out. (The reader's own cases, FIFOs and lines
//! past the bound among them, are in crates/arena-run/tests/folder.rs.)
//!
//! The peak RSS checked is the child's own, from `wait4` on its pid: other tests of this
//! binary start children of their own (Chromium among them), so the largest of all reaped
//! children (`RUSAGE_CHILDREN`) would be theirs.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use arena_compare::synthetic;

/// Writes a synthetic run of `n` loops and returns its folder.
fn write_run(dir: &Path, arm: &str, n: usize, seed: u64) -> PathBuf {
    let r = synthetic::run(arm, &synthetic::lognormal(n, 50.0, 0.3, 0.0, seed), 6000);
    let out = dir.join(format!("{arm}-{seed}"));
    r.write(&out).unwrap();
    out
}

/// Reaps `pid` if it has exited, with its own resource use: its exit code (`None` when a
/// signal ended it) and its largest resident set in KiB. Linux counts a child's memory
/// before its exec too, so that is at most an overestimate of the binary's. `None` while it
/// runs, unless `block`.
fn reap_with_peak_rss(pid: i32, block: bool) -> Option<(Option<i32>, i64)> {
    let mut status = 0;
    // SAFETY: wait4 fills the status and the struct we own.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    let flags = if block { 0 } else { libc::WNOHANG };
    let r = unsafe { libc::wait4(pid, &mut status, flags, &mut u) };
    assert!(r >= 0, "wait4({pid}): {}", std::io::Error::last_os_error());
    (r == pid).then(|| {
        let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
        (code, u.ru_maxrss)
    })
}

#[test]
fn compare_refuses_events_linked_to_dev_zero_at_once_in_little_memory() {
    const LIMIT: Duration = Duration::from_secs(1);
    const MAX_RSS_KIB: i64 = 50 * 1024;
    let tmp = tempfile::tempdir().unwrap();
    let a = write_run(tmp.path(), "stock", 50, 1);
    let b = write_run(tmp.path(), "stock", 50, 2);
    let events = b.join("events.jsonl");
    std::fs::remove_file(&events).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &events).unwrap();

    let start = Instant::now();
    // Reaped by `reap_with_peak_rss` (wait4 on its pid), which `Child` cannot see.
    #[allow(clippy::zombie_processes)]
    let mut child = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .arg("compare")
        .args([&a, &b])
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let (code, peak) = loop {
        if let Some(done) = reap_with_peak_rss(pid, false) {
            break done;
        }
        if start.elapsed() > LIMIT {
            // Reading /dev/zero grows without end: stop it rather than wait.
            child.kill().unwrap();
            let (_, peak) = reap_with_peak_rss(pid, true).unwrap();
            panic!("compare did not exit within {LIMIT:?} (peak RSS {peak} KiB)");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = start.elapsed();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    eprintln!("exit {code:?} in {took:?}, peak RSS {peak} KiB: {err}");

    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{}: a character device (linked to /dev/zero), not a regular file",
            events.display()
        )),
        "{err}"
    );
    assert!(
        peak < MAX_RSS_KIB,
        "peak RSS {peak} KiB, over {MAX_RSS_KIB}"
    );
}
