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

/// Writes one hover (gesture 0) into the run folder `dir` as a pilot writes it: a move per
/// value of `move_to_pixels` (ms), each answered and sent alone, and a painted frame a
/// move; then `gestures.json` with the counts those rows add up to.
pub fn write_hover(dir: &Path, move_to_pixels: &[f64]) {
    use std::fmt::Write as _;
    let mut moves = String::from("gesture,kind,move,t_input_ms,t_delivered_ms,t_send_ms,input_to_socket_ms,carried,oldest_age_ms,t_answer_ms,move_to_pixels_ms,outcome\n");
    let mut behind = String::from("gesture,kind,t_frame_ms,moves_behind,ms_behind\n");
    for (i, v) in move_to_pixels.iter().enumerate() {
        let t = 1000.0 + 20.0 * i as f64;
        let _ = writeln!(
            moves,
            "0,hover,{i},{t:.3},{:.3},{:.3},2.000,1,3.000,{:.3},{v:.3},answered",
            t + 1.0,
            t + 3.0,
            t + v
        );
        let _ = writeln!(behind, "0,hover,{:.3},1,{v:.3}", t + v);
    }
    let n = move_to_pixels.len();
    let doc = serde_json::json!({
        "schema_version": 1, "kind": "gestures",
        "gestures": [{"gesture": 0, "kind": "hover", "counts": {
            "dispatched": n, "folded_by_browser": 0, "answered": n, "unanswered": 0,
            "coalesced": 0, "sends": n }}],
    });
    std::fs::write(dir.join("moves.csv"), moves).unwrap();
    std::fs::write(dir.join("frames_behind.csv"), behind).unwrap();
    std::fs::write(dir.join("gestures.json"), doc.to_string()).unwrap();
}
