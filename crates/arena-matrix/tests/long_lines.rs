//! Output lines far longer than the taps read (`lines::MATCH_LINE_CAP`, 64 KiB): the matrix
//! holds none of them whole, a matching line right after one still gives the figure, and a
//! run whose only long line did not match says that line was cut.
//!
//! The peak-memory checks read this test process's own peak RSS, so the tests here take one
//! lock and run one at a time.

mod common;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use arena_matrix::{run_matrix, MatrixOptions, RunResult, RunStatus};

/// One line of 200 MB of `x` (its `\n` not included).
const LONG_LINE: &str = "head -c 200000000 /dev/zero | tr '\\0' x";

/// How much the peak RSS may grow while a run reads 200 MB of output.
const RSS_BUDGET_KIB: i64 = 32 * 1024;

fn serial() -> MutexGuard<'static, ()> {
    static L: Mutex<()> = Mutex::new(());
    L.lock().unwrap_or_else(|e| e.into_inner())
}

/// This process's peak resident set, KiB: `VmHWM`, which (unlike `getrusage`'s
/// `ru_maxrss`) does not carry over the RSS of the process that started this one.
fn peak_rss_kib() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Brings the peak down to the present RSS, where the kernel allows it.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Runs a one-case, one-arm, one-repeat matrix whose figure is `value=N` read from
/// `source`; returns the run, and how much the peak RSS grew meanwhile.
fn run_one(name: &str, command: &str, source: &str) -> (RunResult, i64) {
    let dir = common::scratch(name);
    let text = format!(
        r#"
repeats = 1
timeout_s = 120

[figure]
kind = "regex"
pattern = '^value=(?P<value>[0-9]+)$'
{source}

[[arm]]
name = "a"

[[case]]
name = "c"
command = '''{command}'''
"#
    );
    let path = dir.join("matrix.toml");
    std::fs::write(&path, text).unwrap();
    let spec = arena_matrix::load(&path).unwrap();
    reset_peak_rss();
    let before = peak_rss_kib();
    let t = Instant::now();
    let mut m = run_matrix(
        &spec,
        &MatrixOptions {
            out_dir: dir.join("out"),
        },
        &AtomicBool::new(false),
        |_, _, _| {},
    );
    let grew = peak_rss_kib() - before;
    eprintln!(
        "{name}: run {:.2} s, matrix {:.2} s, peak RSS {} KiB -> {} KiB",
        m.runs[0].wall_s,
        t.elapsed().as_secs_f64(),
        before,
        before + grew
    );
    remove(&dir);
    (m.runs.remove(0), grew)
}

fn remove(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}

fn value_of(r: &RunResult) -> f64 {
    assert_eq!(r.status, RunStatus::Ok, "{:?}", r.status);
    r.figure.as_ref().expect("a figure").value
}

/// A 200 MB stdout line, then the matching line: the figure is the matching line's value,
/// and reading the 200 MB line grows the peak RSS by far less than the line.
#[test]
fn stdout_line_after_a_200_mb_line_gives_the_figure_in_bounded_memory() {
    let _g = serial();
    let cmd = format!("{LONG_LINE}; echo; echo value=42");
    let (r, grew) = run_one("long-stdout", &cmd, "");
    assert_eq!(value_of(&r), 42.0);
    assert!(grew < RSS_BUDGET_KIB, "peak RSS grew by {grew} KiB");
}

/// The same through a tailed log file: the tailer reads what the command appended in
/// bounded pieces, not all of it at once.
#[test]
fn file_line_after_a_200_mb_line_gives_the_figure_in_bounded_memory() {
    let _g = serial();
    let cmd = format!("{{ {LONG_LINE}; echo; echo value=7; }} > $ARENA_RUN_DIR/app.log");
    let source = "source = \"file\"\nfile = \"{run_dir}/app.log\"";
    let (r, grew) = run_one("long-file", &cmd, source);
    assert_eq!(value_of(&r), 7.0);
    assert!(grew < RSS_BUDGET_KIB, "peak RSS grew by {grew} KiB");
}

/// No line matched, and one line was longer than the taps read: the reason says so, with
/// the line's length.
#[test]
fn a_cut_line_that_did_not_match_is_named_in_the_reason() {
    let _g = serial();
    let cmd = "head -c 1000000 /dev/zero | tr '\\0' x; echo; echo done";
    let (r, _) = run_one("long-cut", cmd, "");
    assert_eq!(
        r.status,
        RunStatus::NoFigure(
            "no line matched the pattern; a line of 1000000 bytes was longer than the 64 KiB \
             the matcher reads, and its first 64 KiB did not match"
                .into()
        )
    );
    let cmd = "for n in 70000 90000; do head -c $n /dev/zero | tr '\\0' x; echo; done";
    let (r, _) = run_one("long-cut-2", cmd, "");
    assert_eq!(
        r.status,
        RunStatus::NoFigure(
            "no line matched the pattern; 2 lines were longer than the 64 KiB the matcher \
             reads (the longest 90000 bytes), and their first 64 KiB did not match"
                .into()
        )
    );
}

/// Ordinary output reads as it always did: CRLF line ends, a last line without one, the
/// last matching line picked.
#[test]
fn ordinary_output_still_matches() {
    let _g = serial();
    let cmd = "printf 'value=1\\r\\nnoise\\nvalue=2\\r\\nvalue=3'";
    let (r, _) = run_one("ordinary", cmd, "");
    assert_eq!(value_of(&r), 3.0);
    assert_eq!(r.figure.as_ref().unwrap().n, 3);
    let (r, _) = run_one("ordinary-none", "echo nothing here", "");
    assert_eq!(
        r.status,
        RunStatus::NoFigure("no line matched the pattern".into())
    );
}
