//! A failed write to standard output or to a file the tool writes is an error with a
//! message, never a panic: exit 2, or the gate's verdict code once the verdict is decided.
//! A closed pipe ends quietly: SIGPIPE for the commands that only read and print (see
//! tests/logs_cli.rs), exit 0 for the rest (here `serve`).

use std::fs::File;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use arena_compare::synthetic;

use crate::compare_common::Scratch;

fn write_run(dir: &Path, arm: &str, n: usize, median: f64, seed: u64) -> String {
    let r = synthetic::run(arm, &synthetic::lognormal(n, median, 0.3, 0.0, seed), 6000);
    let out = dir.join(format!("{arm}-{seed}"));
    r.write(&out).unwrap();
    out.to_str().unwrap().to_string()
}

fn dev_full() -> Stdio {
    Stdio::from(File::options().write(true).open("/dev/full").unwrap())
}

fn arena() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arena-perf"));
    c.env_remove("GITHUB_STEP_SUMMARY");
    c
}

/// Runs `arena-perf ARGS` with stdout on /dev/full.
fn to_full(args: &[&str]) -> Output {
    arena().args(args).stdout(dev_full()).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit `code`, the write failure named, no panic.
fn assert_write_failure(o: &Output, code: i32, names: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains(names), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
}

/// Two slow runs against two baselines: a regression `sendToRecv.p50=+10%` fails.
fn regression(d: &Scratch) -> (Vec<String>, Vec<String>) {
    let base = (0..2)
        .map(|i| write_run(&d.0, "stock", 200, 60.0, 100 + i))
        .collect();
    let slow = (0..2)
        .map(|i| write_run(&d.0, "slow", 200, 82.0, 200 + i))
        .collect();
    (base, slow)
}

fn gate_args<'a>(base: &'a [String], cand: &'a [String], max: &'a str) -> Vec<&'a str> {
    let mut v = vec!["gate", "--baseline"];
    v.extend(base.iter().map(|s| s.as_str()));
    v.push("--candidate");
    v.extend(cand.iter().map(|s| s.as_str()));
    v.extend(["--max", max]);
    v
}

#[test]
fn compare_on_a_full_stdout_exits_2_naming_the_write() {
    let d = Scratch::new("compare");
    let a = write_run(&d.0, "stock", 150, 50.0, 1);
    let b = write_run(&d.0, "lazy", 150, 55.0, 2);
    let o = to_full(&["compare", &a, &b]);
    assert_write_failure(&o, 2, "writing to standard output");
    let o = to_full(&["compare", &a, &b, "--format", "json"]);
    assert_write_failure(&o, 2, "writing to standard output");
}

#[test]
fn gate_keeps_its_verdict_when_its_output_cannot_be_written() {
    let d = Scratch::new("gate");
    let (base, slow) = regression(&d);
    // A regression stays exit 1 (it was 101, a panic), the write failure said.
    let o = to_full(&gate_args(&base, &slow, "sendToRecv.p50=+10%"));
    assert_write_failure(&o, 1, "writing to standard output");
    assert!(stderr(&o).contains("checks failed"), "{}", stderr(&o));
    // A pass stays 0: the verdict decided it; the lost output is said on stderr.
    let o = to_full(&gate_args(&slow, &base, "sendToRecv.p50=+0%"));
    assert_write_failure(&o, 0, "writing to standard output");
    assert!(stderr(&o).contains("checks passed"), "{}", stderr(&o));
}

#[test]
fn gate_summary_on_a_full_disk_keeps_the_verdict_and_says_so() {
    let d = Scratch::new("summary");
    let (base, slow) = regression(&d);
    let mut args = gate_args(&base, &slow, "sendToRecv.p50=+10%");
    args.extend(["--summary", "/dev/full"]);
    let o = arena().args(&args).output().unwrap();
    assert_write_failure(&o, 1, "/dev/full: writing the summary");
    // $GITHUB_STEP_SUMMARY too.
    let args = gate_args(&slow, &base, "sendToRecv.p50=+0%");
    let o = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .args(&args)
        .env("GITHUB_STEP_SUMMARY", "/dev/full")
        .output()
        .unwrap();
    assert_write_failure(&o, 0, "$GITHUB_STEP_SUMMARY");
}

#[test]
fn completions_and_man_on_a_full_stdout_exit_2() {
    // Both used to exit 0 with their output lost.
    assert_write_failure(
        &to_full(&["completions", "bash"]),
        2,
        "writing to standard output",
    );
    assert_write_failure(&to_full(&["man"]), 2, "writing to standard output");
}

#[test]
fn a_logs_reducer_on_a_full_stdout_exits_2() {
    let gc = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/logs/gc-g1-1m.log");
    let o = to_full(&["logs", "gc", gc]);
    assert_write_failure(&o, 2, "writing to standard output");
}

/// `serve` keeps SIGPIPE ignored (it must reap what it started): a closed stdout used to
/// panic in the URL's `println!` (exit 101). Now the failed write is quiet, the server runs
/// until stopped, and it exits 0.
#[test]
fn serve_on_a_closed_pipe_ends_quietly_with_0() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = arena()
        .args(["serve", "--port", "0"])
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    let gone_early = child.try_wait().unwrap();
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(
        gone_early.is_none(),
        "serve ended on its own: {gone_early:?} {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{:?} {err}", o.status);
}
