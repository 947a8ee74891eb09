//! What the tests that drive the `arena-perf` binary as a process share: the binary, a
//! child whose output lines are collected as they come, and the members of a process group
//! (a launched Chromium leads its own). Each test crate uses some of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_arena-perf"))
}

/// Every process in process group `pgid`, zombies included, as (pid, state letter).
pub fn group_any_state(pgid: i32) -> Vec<(i32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
            let f: Vec<&str> = rest.split_whitespace().collect();
            // fields after the name: state ppid pgrp
            if f.len() > 2 && f[2].parse::<i32>().ok() == Some(pgid) {
                out.push((pid, f[0].to_string()));
            }
        }
    }
    out
}

/// Processes in process group `pgid`, zombies aside (they hold no resources; their
/// parent's `wait` is what they wait for).
pub fn group_members(pgid: i32) -> Vec<i32> {
    group_any_state(pgid)
        .into_iter()
        .filter(|(_, state)| !state.starts_with('Z'))
        .map(|(pid, _)| pid)
        .collect()
}

/// A child process whose stdout and stderr lines are collected by two threads; killed
/// and reaped on drop (continued first, should it be stopped).
pub struct Watched {
    pub child: Child,
    pub lines: Arc<Mutex<Vec<String>>>,
}

impl Watched {
    pub fn spawn(cmd: &mut Command) -> Watched {
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

    /// The first output line holding `needle`, waited for up to `limit`.
    pub fn wait_line(&self, needle: &str, limit: Duration) -> String {
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

    /// The pid of the browser the run launched, from its progress line.
    pub fn browser_pid(&self) -> i32 {
        let l = self.wait_line("(pid ", Duration::from_secs(30));
        l.rsplit_once("(pid ")
            .and_then(|(_, r)| r.trim_end_matches(')').parse().ok())
            .expect("browser pid on stderr")
    }

    /// The exit code, waited for up to `limit` (killed and failed past it).
    pub fn wait_exit(&mut self, limit: Duration) -> i32 {
        let t = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code().unwrap_or(-1);
            }
            if t.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("no exit within {limit:?}: {:?}", self.lines.lock().unwrap());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends signal `sig` (a `kill` name: INT, HUP, STOP...) to the child.
    pub fn signal(&self, sig: &str) {
        let pid = self.child.id().to_string();
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &pid])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill -{sig} {pid}");
    }
}

/// The fixture served on its own (`serve`, line-of-sight work off so a debug build keeps
/// up), and the URL it printed.
pub fn serve_fixture() -> (Watched, String) {
    let serve =
        Watched::spawn(Command::new(bin()).args(["serve", "--port", "0", "--knob", "los_work=0"]));
    let line = serve.wait_line("http://127.0.0.1:", Duration::from_secs(20));
    let url = line[line.find("http://").unwrap()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    (serve, url)
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
