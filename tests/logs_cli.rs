//! `arena-perf logs` through the real binary: the subcommand is wired, tables print, a
//! file of the wrong kind exits 2 naming the file, and pipes, `-`, gzip and executables are
//! handled the same as by the crate's own binary. (The reducers' own end-to-end tests are
//! in crates/arena-logs/tests.)

use std::io::Write;
use std::process::{Command, Stdio};

fn arena_perf(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .args(args)
        .output()
        .expect("run arena-perf")
}

#[test]
fn logs_gc_stats_and_wrong_kind() {
    let dir = tempfile_dir();
    let gc = dir.join("gc.log");
    std::fs::write(
        &gc,
        "[0.003s][info][gc] Using G1\n\
         [0.053s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 7M->2M(66M) 1.232ms\n\
         [0.058s][info][gc] GC(1) Pause Young (Concurrent Start) (G1 Humongous Allocation) 5M->4M(66M) 0.444ms\n",
    )
    .unwrap();
    let o = arena_perf(&["logs", "gc", gc.to_str().unwrap(), "--format", "markdown"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("| of which humongous (n) | 1 |"), "{out}");
    assert!(out.contains("| pauses (n) | 2 |"), "{out}");

    // The fixture match's own stats-line format, read with no flag.
    let stats = dir.join("stats.log");
    std::fs::write(
        &stats,
        "12-Mar-2021-10:15:42.123,fixture-3,latencyServerRendering,3.000\n\
         12-Mar-2021-10:15:42.150,fixture-3,latencyServerRendering,5.000\n",
    )
    .unwrap();
    let o = arena_perf(&["logs", "stats", stats.to_str().unwrap(), "--format", "csv"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(out.contains("latencyServerRendering,ms,2,4,"), "{out}");

    let o = arena_perf(&["logs", "classload", gc.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("gc.log: nothing understood as a class-load log"),
        "{err}"
    );
    assert!(err.contains("line 1: "), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `zcat gc.log.gz | arena-perf logs gc /dev/stdin`, the issue's own command: the pipe and
/// the gzip file read like the log, and an executable is binary for every kind.
#[test]
fn logs_read_pipes_and_gzip_and_refuse_executables() {
    let dir = tempfile_dir_named("pipes");
    let gc = dir.join("gc.log");
    let log = "[0.003s][info][gc] Using G1\n\
         [0.053s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 7M->2M(66M) 1.232ms\n\
         [0.058s][info][gc] GC(1) Pause Young (Concurrent Start) (G1 Humongous Allocation) 5M->4M(66M) 0.444ms\n";
    std::fs::write(&gc, log).unwrap();
    let ok = Command::new("gzip")
        .arg("-k")
        .arg(&gc)
        .status()
        .expect("gzip");
    assert!(ok.success());
    let gz = dir.join("gc.log.gz");
    let gz_bytes = std::fs::read(&gz).unwrap();
    for arg in ["/dev/stdin", "-"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
            .args(["logs", "gc", arg, "--format", "csv"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run arena-perf");
        child.stdin.take().unwrap().write_all(&gz_bytes).unwrap();
        let o = child.wait_with_output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{arg}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(out.contains("all pauses,,2,"), "{arg}: {out}");
    }
    let o = arena_perf(&["logs", "gc", gz.to_str().unwrap(), "--format", "csv"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("all pauses,,2,"));
    for kind in ["stats", "gc", "classload", "profile"] {
        let o = arena_perf(&["logs", kind, "/bin/true"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{kind}: {err}");
        assert!(
            err.contains("/bin/true: binary data (an ELF"),
            "{kind}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempfile_dir() -> std::path::PathBuf {
    tempfile_dir_named("cli")
}

fn tempfile_dir_named(what: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("arena-perf-logs-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `arena-perf ... | head` must end like any Unix tool once its reader is gone: killed by
/// SIGPIPE, with no panic on stderr (the reducers; a closed read end from the start makes
/// the first write fail every time).
#[test]
fn a_reader_that_goes_away_ends_the_reducers_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let root = env!("CARGO_MANIFEST_DIR");
    for args in [
        &["logs", "gc", "fixtures/logs/gc-g1-1m.log"][..],
        &[
            "wire",
            "summary",
            "fixtures/wire/fixture-session.pcap",
            "--port",
            "18087",
        ][..],
        &["compare", "fixtures/runs", "--baseline", "stock"][..],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
            .args(args)
            .current_dir(root)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        // SIGPIPE is 13 on Linux.
        assert_eq!(
            out.status.signal(),
            Some(13),
            "{args:?}: {:?} {err}",
            out.status
        );
    }
}
