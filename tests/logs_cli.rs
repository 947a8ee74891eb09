//! `arena-perf logs` through the real binary: the subcommand is wired, tables print, and a
//! file of the wrong kind exits 2 naming the file. (The reducers' own end-to-end tests are
//! in crates/arena-logs/tests.)

use std::process::Command;

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

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("arena-perf-logs-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}
