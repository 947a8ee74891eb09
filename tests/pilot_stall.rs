//! A target that stops answering mid-run without going away: `serve` frozen with SIGSTOP
//! still accepts connections (the kernel completes the handshakes), so only the clicks
//! that hear nothing at all can tell. The run must end as stalled (exit 3, `status
//! target_stalled`), keep what it measured, and leave no Chromium behind.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arena_run::{Run, RunStatus};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_arena-perf"))
}

/// A child process whose stdout and stderr lines are collected by two threads; killed
/// and reaped on drop (continued first, should it be stopped).
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
                "no `{needle}` within {limit:?}: {:?}",
                self.lines.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait_exit(&mut self, limit: Duration) -> i32 {
        let t = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code().unwrap_or(-1);
            }
            assert!(
                t.elapsed() < limit,
                "no exit within {limit:?}: {:?}",
                self.lines.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn signal(&self, sig: &str) {
        let pid = self.child.id().to_string();
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &pid])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill -{sig} {pid}");
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.signal("CONT");
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Processes in process group `pgid`, zombies aside (a launched Chromium leads its own).
fn group_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
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
    out
}

#[test]
fn a_frozen_target_ends_the_run_as_stalled_with_exit_3_and_a_partial_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut serve =
        Watched::spawn(Command::new(bin()).args(["serve", "--port", "0", "--knob", "los_work=0"]));
    let line = serve.wait_line("http://127.0.0.1:", Duration::from_secs(20));
    let url = line[line.find("http://").unwrap()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let mut w = Watched::spawn(
        Command::new(bin())
            .args([
                "pilot",
                "--clicks",
                "40",
                "--interval",
                "10",
                "--timeout",
                "400",
                "--url",
                &url,
                "--out",
            ])
            .arg(&dir),
    );
    let chrome: i32 = {
        let l = w.wait_line("(pid ", Duration::from_secs(30));
        l.rsplit_once("(pid ")
            .and_then(|(_, r)| r.trim_end_matches(')').parse().ok())
            .expect("browser pid on stderr")
    };
    // 25 clicks measured, then the target freezes: its socket stays open, nothing comes.
    w.wait_line("click 25/40", Duration::from_secs(60));
    serve.signal("STOP");
    let t = Instant::now();
    // Three silent clicks of at most 2 x 400 ms each, and the run's writing: well inside
    // the 15 clicks left, which a run that did not notice would make (exit 0).
    let code = w.wait_exit(Duration::from_secs(12));
    eprintln!(
        "frozen target noticed and the run written {:?} after SIGSTOP",
        t.elapsed()
    );
    let all = w.lines.lock().unwrap().join("\n");
    assert_eq!(code, 3, "{all}");
    assert!(
        all.contains(&format!(
            "the target at {url} stopped answering: 3 clicks in a row"
        )) && all.contains("got no WebSocket message and no paint: silent since click"),
        "{all}"
    );
    serve.signal("CONT");
    serve.child.kill().unwrap();
    serve.child.wait().expect("serve reaped");
    // The loader validates: the loops measured before the freeze stand.
    let run = Run::load(&dir).expect("partial run folder");
    assert_eq!(run.meta.status, RunStatus::TargetStalled);
    let msg = run.meta.status_message.as_deref().unwrap_or_default();
    assert!(msg.contains("3 clicks in a row"), "{msg}");
    let s = &run.meta.summary;
    assert!(s.answered >= 40, "{s:?}");
    assert!(s.loops < 80 && s.unanswered >= 6, "{s:?}");
    assert!(
        run.meta
            .warnings
            .iter()
            .any(|w| w.code == "partial_run" && w.message.contains("target stalled")),
        "{:?}",
        run.meta.warnings
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        group_members(chrome),
        Vec::<i32>::new(),
        "Chromium left behind"
    );
}
