//! A FIFO input with no writer yet: `arena-perf logs gc FIFO` waits for the writer as any
//! reader does, and says so once on stderr after 2 s, a terminal or not (here it is a
//! pipe, as in a CI log); a writer that comes sooner is read with nothing said.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const GC_LOG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/logs/gc-g1-1m.log");

fn scratch(what: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("arena-perf-fifo-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn mkfifo(p: &Path) {
    let s = Command::new("mkfifo").arg(p).status().expect("run mkfifo");
    assert!(s.success(), "mkfifo {}", p.display());
}

/// The child, killed and reaped if a failed assertion leaves it waiting on its FIFO.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn logs_gc(fifo: &Path) -> Running {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arena-perf"));
    c.args(["logs", "gc"])
        .arg(fifo)
        .args(["--format", "markdown"]);
    Running(
        c.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run arena-perf"),
    )
}

/// Writes the fixture GC log into the FIFO and closes it.
fn write_gc_log(fifo: &Path) {
    let mut w = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
    w.write_all(&std::fs::read(GC_LOG).unwrap()).unwrap();
}

/// Lines of the child's stderr as they come, and its stdout once it ends.
fn streams(child: &mut Child) -> (mpsc::Receiver<String>, std::thread::JoinHandle<String>) {
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut out = child.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).unwrap();
        s
    });
    (rx, stdout)
}

#[test]
fn a_fifo_without_a_writer_is_announced_then_read() {
    let dir = scratch("announced");
    let fifo = dir.join("gc.fifo");
    mkfifo(&fifo);
    let start = Instant::now();
    let mut child = logs_gc(&fifo);
    let (lines, stdout) = streams(&mut child.0);
    let line = lines
        .recv_timeout(Duration::from_secs(4))
        .expect("a waiting line within 4 s");
    let waited = start.elapsed();
    assert_eq!(
        line,
        format!(
            "arena-perf: waiting for a writer on FIFO {} (a GC log (-Xlog:gc))",
            fifo.display()
        )
    );
    assert!(waited >= Duration::from_millis(1900), "{waited:?}");
    write_gc_log(&fifo);
    let status = child.0.wait().unwrap();
    let rest: Vec<String> = lines.iter().collect();
    let out = stdout.join().unwrap();
    assert!(status.success(), "{status:?} {rest:?}");
    assert!(out.contains("| pauses (n) |"), "{out}");
    assert!(rest.iter().all(|l| !l.contains("waiting")), "{rest:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_writer_within_the_first_2_s_is_read_with_nothing_said() {
    let dir = scratch("quiet");
    let fifo = dir.join("gc.fifo");
    mkfifo(&fifo);
    let mut child = logs_gc(&fifo);
    let (lines, stdout) = streams(&mut child.0);
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.0.try_wait().unwrap().is_none(),
        "it waits for the writer"
    );
    write_gc_log(&fifo);
    let status = child.0.wait().unwrap();
    let err: Vec<String> = lines.iter().collect();
    let out = stdout.join().unwrap();
    assert!(status.success(), "{status:?} {err:?}");
    assert!(out.contains("| pauses (n) |"), "{out}");
    assert!(err.iter().all(|l| !l.contains("waiting")), "{err:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
