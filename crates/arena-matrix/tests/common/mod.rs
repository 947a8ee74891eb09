//! Builds the C fixtures once per test binary (gcc), into the target's temp folder.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};

fn build(name: &str, extra: &[&str]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(format!("{name}.c"));
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("arena-matrix-fixtures");
    std::fs::create_dir_all(&out_dir).expect("create fixture dir");
    let out = out_dir.join(name);
    let status = Command::new("gcc")
        .args(["-O2", "-Wall", "-o"])
        .arg(&out)
        .arg(&src)
        .args(extra)
        .status()
        .expect("gcc runs");
    assert!(status.success(), "gcc failed on {}", src.display());
    out
}

/// `burn`: named threads at known duty cycles.
pub fn burn() -> &'static Path {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| build("burn", &["-pthread"]))
}

/// `ticker`: a metric line at a known rate.
pub fn ticker() -> &'static Path {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| build("ticker", &[]))
}

/// Tests that measure CPU take this, so they do not compete with each other for the cores.
pub fn cpu_lock() -> MutexGuard<'static, ()> {
    static L: Mutex<()> = Mutex::new(());
    L.lock().unwrap_or_else(|e| e.into_inner())
}

/// A fresh folder under the target's temp folder.
pub fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("arena-matrix-tests")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Pids whose command line contains `needle` (to prove nothing was left running).
pub fn pids_with_cmdline(needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    let me = std::process::id() as i32;
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            if pid == me {
                continue;
            }
            if let Ok(c) = std::fs::read(format!("/proc/{pid}/cmdline")) {
                let c: Vec<u8> = c
                    .into_iter()
                    .map(|b| if b == 0 { b' ' } else { b })
                    .collect();
                if String::from_utf8_lossy(&c).contains(needle) {
                    // Zombies are not running.
                    let st =
                        std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                    if !st.contains(") Z ") {
                        out.push(pid);
                    }
                }
            }
        }
    }
    out
}

/// Writes `text` as `dir/matrix.toml` and runs it to the end into `dir/out`.
pub fn run_text(dir: &Path, text: &str) -> arena_matrix::MatrixResult {
    let p = dir.join("matrix.toml");
    std::fs::write(&p, text).expect("write matrix");
    let spec = arena_matrix::load(&p).expect("matrix parses");
    arena_matrix::run_matrix(
        &spec,
        &arena_matrix::MatrixOptions {
            out_dir: dir.join("out"),
        },
        &std::sync::atomic::AtomicBool::new(false),
        |_, _, _| {},
    )
}
