//! Reading runs holds bounded memory, through the real binary: a run whose `events.jsonl`
//! is linked to `/dev/zero` is refused at once (exit 2, naming the file and what it is)
//! instead of being read until memory runs out. (The reader's own cases, FIFOs and lines
//! past the bound among them, are in crates/arena-run/tests/folder.rs.)
//!
//! This is the only test in this file on purpose: the peak RSS it checks is
//! `getrusage(RUSAGE_CHILDREN)`'s, the largest of this process's reaped children, so no
//! other test here may start one.

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

/// The largest resident set, in KiB, of any child this process has reaped. Linux counts a
/// child's memory before its exec too, so this is at most an overestimate of the binary's.
fn children_peak_rss_kib() -> i64 {
    // SAFETY: getrusage fills the struct we own.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) }, 0);
    u.ru_maxrss
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
    let mut child = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .arg("compare")
        .args([&a, &b])
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > LIMIT {
            // Reading /dev/zero grows without end: stop it rather than wait.
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "compare did not exit within {LIMIT:?} (peak RSS by then {} KiB)",
                children_peak_rss_kib()
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = start.elapsed();
    let peak = children_peak_rss_kib();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    eprintln!("exit {status} in {took:?}, peak RSS {peak} KiB: {err}");

    assert_eq!(status.code(), Some(2), "{err}");
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
