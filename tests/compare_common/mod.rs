//! Helpers shared by the test binaries that run the real binary on run folders written to
//! disk: run it, read its output, and a scratch folder for the runs. Each binary uses some.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

pub fn arena(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .args(args)
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap()
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A scratch folder removed on drop (tests run in parallel: pid + counter).
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "arena-test-{}-{}-{tag}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The built-in fixture pilot made cheap for tests of many real runs, written into `dir`:
/// the press is the only loop (on the idle board a release paints nothing and would wait
/// out the timeout), the hold is a fixed 20 ms and the window 500 ms.
pub fn cheap_pilot(dir: &Path) -> PathBuf {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("pilots/fixture.toml");
    let toml = std::fs::read_to_string(base).unwrap();
    let loops = "loop_events = [\"mousedown\", \"mouseup\", \"keydown\"]";
    assert!(toml.contains(loops) && toml.contains("\nwarmup = 1\n"));
    assert!(toml.contains("\ntimeout_ms = 2000\n"));
    // A press on the tile the idle board's cursor is already on changes no pixel (seed 1's
    // first click is one): it is unanswered, and a 2 s window would be 2 s of each run
    // spent waiting for nothing. Replies land within tens of ms.
    let toml = toml
        .replace(loops, "loop_events = [\"mousedown\"]")
        .replace("\nwarmup = 1\n", "\nwarmup = 1\nhold_ms = 20\n")
        .replace("\ntimeout_ms = 2000\n", "\ntimeout_ms = 500\n");
    let p = dir.join("pilot.toml");
    std::fs::write(&p, toml).unwrap();
    p
}
