//! `pilot` against real Chromium and the built-in fixture, stopped by SIGHUP (the terminal
//! closed) or SIGQUIT: like SIGINT, the run folder keeps what was measured (status
//! interrupted), Chromium is killed and reaped, and the exit code is 128 + the signal.
//!
//! Tests take a global lock: two pilots sharing two cores would measure each other.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use arena_run::{Run, RunStatus};

static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_arena-perf"))
}

/// Processes in process group `pgid` (a launched Chromium leads its own group), zombies
/// left out.
fn group_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/proc") {
        for e in rd.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
                let f: Vec<&str> = rest.split_whitespace().collect();
                // fields after the name: state ppid pgrp
                if f.len() > 2 && f[2].parse::<i32>().ok() == Some(pgid) && !f[0].starts_with('Z') {
                    out.push(pid);
                }
            }
        }
    }
    out
}

/// A child process whose stdout and stderr lines are collected by two threads.
struct Watched {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Watched {
    fn spawn(cmd: &mut Command) -> Watched {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn arena-perf");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let out: Box<dyn std::io::Read + Send> = Box::new(child.stdout.take().unwrap());
        let err: Box<dyn std::io::Read + Send> = Box::new(child.stderr.take().unwrap());
        for stream in [out, err] {
            let l2 = lines.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    l2.lock().unwrap().push(line);
                }
            });
        }
        Watched { child, lines }
    }

    fn wait_line(&self, needle: &str, limit: Duration) -> String {
        let t = Instant::now();
        loop {
            if let Some(l) = self
                .lines
                .lock()
                .unwrap()
                .iter()
                .find(|l| l.contains(needle))
            {
                return l.clone();
            }
            assert!(
                t.elapsed() < limit,
                "no `{needle}` on stderr within {limit:?}: {:?}",
                self.lines.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn browser_pid(&self) -> i32 {
        let l = self.wait_line("(pid ", Duration::from_secs(30));
        l.rsplit_once("(pid ")
            .and_then(|(_, r)| r.trim_end_matches(')').parse().ok())
            .expect("browser pid on stderr")
    }

    fn wait_exit(&mut self, limit: Duration) -> i32 {
        let t = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code().unwrap_or(-1);
            }
            if t.elapsed() > limit {
                let _ = self.child.kill();
                panic!("no exit within {limit:?}: {:?}", self.lines.lock().unwrap());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs `pilot` on the built-in fixture, sends `signal` (a `kill` name) once it has
/// clicked 25 times, and checks what the signal left: the exit code, a partial run that
/// loads, and no Chromium process of the run.
fn signalled_mid_run_keeps_the_partial_run(signal: &str, code: i32) {
    let _g = lock();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    // Progress lines (stderr is a pipe) tell the browser's pid and when clicking is under
    // way; 400 clicks 10 ms apart leave the run far from its end when the signal lands.
    let mut w = Watched::spawn(
        Command::new(bin())
            .args([
                "pilot",
                "--clicks",
                "400",
                "--interval",
                "10",
                "--knob",
                "los_work=0",
                "--out",
            ])
            .arg(&dir),
    );
    let chrome = w.browser_pid();
    w.wait_line("click 25/400", Duration::from_secs(60));
    let pid = w.child.id().to_string();
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &pid])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(sent, "kill -{signal} {pid}");
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
fn sighup_mid_run_writes_the_partial_run_and_exits_129() {
    signalled_mid_run_keeps_the_partial_run("HUP", 129);
}

#[test]
fn sigquit_mid_run_writes_the_partial_run_and_exits_131() {
    signalled_mid_run_keeps_the_partial_run("QUIT", 131);
}
