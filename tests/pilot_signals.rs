//! `pilot` against real Chromium and the built-in fixture, stopped by SIGINT, SIGHUP (the
//! terminal closed) or SIGQUIT: every time the run folder keeps what was measured (status
//! interrupted), Chromium is killed and reaped, and the exit code is 128 + the signal.
//!
//! Tests take a global lock: two pilots sharing two cores would measure each other.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use arena_run::{Run, RunStatus};

use crate::support::watched::{bin, group_members, Watched};

use crate::support::machine::shared;

/// `pilot` on the built-in fixture into `dir`: 400 clicks 10 ms apart, far from their end
/// when a test's signal lands after 25. SIGHUP starts at its default, as under a terminal,
/// or ignored, as `nohup` leaves it (and as a test run started under `nohup` would pass it
/// on to every child).
fn pilot_of_400_clicks(dir: &std::path::Path, hangup_ignored: bool) -> Watched {
    let mut cmd = Command::new(bin());
    cmd.args([
        "pilot",
        "--clicks",
        "400",
        "--interval",
        "10",
        "--knob",
        "los_work=0",
        "--out",
    ])
    .arg(dir);
    let hangup = if hangup_ignored {
        libc::SIG_IGN
    } else {
        libc::SIG_DFL
    };
    // SAFETY: signal() is async-signal-safe, and the closure touches nothing else.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGHUP, hangup);
            Ok(())
        });
    }
    Watched::spawn(&mut cmd)
}

/// A `pilot_of_400_clicks` into a fresh temporary folder, returned once it has clicked 25
/// times: the folder (kept alive by the guard), the run path asked for, and the child.
fn pilot_at_click_25(hangup_ignored: bool) -> (tempfile::TempDir, PathBuf, Watched) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let w = pilot_of_400_clicks(&dir, hangup_ignored);
    w.wait_line("click 25/400", Duration::from_secs(60));
    (tmp, dir, w)
}

/// Runs `pilot` on the built-in fixture, sends `signal` (a `kill` name) once it has
/// clicked 25 times, and checks what the signal left: the exit code, a partial run that
/// loads, and no Chromium process of the run.
fn signalled_mid_run_keeps_the_partial_run(signal: &str, code: i32) {
    let _g = shared();
    // Progress lines (stderr is a pipe) tell when clicking is under way and the browser's
    // pid.
    let (_tmp, dir, mut w) = pilot_at_click_25(false);
    let chrome = w.browser_pid();
    w.signal(signal);
    let exit = w.wait_exit(Duration::from_secs(20));
    assert_eq!(exit, code, "SIG{signal}: {:?}", w.lines.lock().unwrap());
    // Checked at once: the tool killed and reaped its Chromium before it exited.
    assert_eq!(
        group_members(chrome),
        Vec::<i32>::new(),
        "Chromium left behind after SIG{signal}"
    );
    // The loader validates run.json and every loop it reads.
    let run = Run::load(&dir).expect("partial run folder");
    assert_eq!(run.meta.status, RunStatus::Interrupted);
    assert!(
        run.meta.summary.loops >= 50 && run.meta.summary.loops < 800,
        "{}",
        run.meta.summary.loops
    );
    assert_eq!(run.loops.len() as u64, run.meta.summary.loops);
    assert!(run.meta.warnings.iter().any(|w| w.code == "partial_run"));
    let all = w.lines.lock().unwrap().join("\n");
    assert!(all.contains("run folder:"), "{all}");
}

#[test]
fn sigint_mid_run_writes_the_partial_run_and_exits_130() {
    signalled_mid_run_keeps_the_partial_run("INT", 130);
}

#[test]
fn sighup_mid_run_writes_the_partial_run_and_exits_129() {
    signalled_mid_run_keeps_the_partial_run("HUP", 129);
}

#[test]
fn sigquit_mid_run_writes_the_partial_run_and_exits_131() {
    signalled_mid_run_keeps_the_partial_run("QUIT", 131);
}

/// Under `nohup` SIGHUP is ignored, and stays so: the run goes on past the hangup, and a
/// SIGINT after it still keeps the partial run.
#[test]
fn sighup_under_nohup_is_ignored_and_the_run_goes_on() {
    let _g = shared();
    let (_tmp, dir, mut w) = pilot_at_click_25(true);
    w.signal("HUP");
    w.wait_line("click 75/400", Duration::from_secs(30));
    assert!(
        w.child.try_wait().unwrap().is_none(),
        "exited on an ignored SIGHUP"
    );
    w.signal("INT");
    assert_eq!(w.wait_exit(Duration::from_secs(20)), 130);
    let run = Run::load(&dir).expect("partial run folder");
    assert_eq!(run.meta.status, RunStatus::Interrupted);
}

/// SIGKILL gives the tool no chance to write: what it leaves must not pass for a run. The
/// run is written into a hidden sibling and renamed into place once whole, so the folder
/// asked for does not exist, the hidden one does, and a folder of runs does not list it.
#[test]
fn sigkill_mid_run_leaves_no_run_folder_only_a_hidden_partial_one() {
    let _g = shared();
    let (tmp, dir, mut w) = pilot_at_click_25(false);
    let pid = w.child.id();
    w.signal("KILL");
    assert_eq!(w.wait_exit(Duration::from_secs(20)), -1);
    assert!(!dir.exists(), "a killed run left {}", dir.display());
    let left: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec![format!(".run.partial-{pid}")]);
    let o = Command::new(bin())
        .arg("compare")
        .arg(tmp.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(text.contains("holds no run folders"), "{text}");
}
