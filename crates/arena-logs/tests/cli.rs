//! The reducers through the real binary: per-frame stats and collapsed stacks with known
//! answers, and every kind of bad input (binary junk, empty file, another kind of log,
//! truncated last line, clocks going backwards, CRLF) with its exit code and message.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const KINDS: [&str; 4] = ["stats", "gc", "classload", "profile"];

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arena-logs"))
        .args(args)
        .output()
        .expect("run arena-logs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn write(dir: &Path, name: &str, body: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

const GC_LINES: &str = "[0.003s][info][gc] Using G1\n\
[0.053s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 7M->2M(66M) 1.232ms\n\
[0.058s][info][gc] GC(1) Pause Young (Concurrent Start) (G1 Humongous Allocation) 5M->4M(66M) 0.444ms\n\
[0.059s][info][gc] GC(2) Concurrent Mark Cycle\n\
[0.061s][info][gc] GC(2) Pause Remark 5M->5M(66M) 0.301ms\n\
[0.062s][info][gc] GC(2) Concurrent Mark Cycle 2.202ms\n";

/// Webswing's stats lines: latency 1..=200 ms on two instances, sizes, old-launcher lines,
/// a container prefix and unrelated log lines in between.
fn stats_log() -> String {
    let mut s = String::new();
    for i in 1..=200u32 {
        let inst = if i % 2 == 0 { "user1@s1" } else { "user2@s2" };
        let sec = i / 10;
        s.push_str(&format!(
            "12-Mar-2021-10:15:{:02}.{:03},{inst},latency,{i}\n",
            sec,
            i % 1000
        ));
        s.push_str(&format!(
            "app-1  | 12-Mar-2021-10:15:{:02}.{:03},{inst},outboundSize,{}\n",
            sec,
            i % 1000,
            i * 100
        ));
        if i % 50 == 0 {
            s.push_str("2021-03-12 10:16:00,000 INFO some other logger said something\n");
            s.push_str(&format!(
                "2021-03-12 10:15:{sec:02},{:03} {inst},latencyPing,{}\n",
                i % 1000,
                i / 10
            ));
        }
    }
    s
}

#[test]
fn stats_per_metric_and_instance() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "stats.log", stats_log().as_bytes());
    let o = bin(&["stats", f.to_str().unwrap(), "--format", "json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v[0]["rows"].as_array().unwrap();
    let row = |m: &str| {
        rows.iter()
            .find(|r| r["metric"] == m)
            .unwrap_or_else(|| panic!("{m}: {out}"))
    };
    let lat = row("latency");
    assert_eq!(lat["n"], 200.0);
    assert_eq!(lat["unit"], "ms");
    assert_eq!(lat["mean"], 100.5);
    assert_eq!(lat["max"], 200.0);
    // numpy.percentile(range(1, 201), [50, 90]) = 100.5, 180.1; the histogram holds 3 digits.
    assert!((lat["p50"].as_f64().unwrap() - 100.5).abs() <= 0.5, "{lat}");
    assert!((lat["p90"].as_f64().unwrap() - 180.1).abs() <= 1.0, "{lat}");
    assert_eq!(row("outboundSize")["unit"], "B");
    assert_eq!(row("outboundSize")["max"], 20000.0);
    assert_eq!(row("latencyPing")["n"], 4.0);
    let notes = v[0]["notes"].to_string();
    assert!(notes.contains("4 of 408 lines not understood"), "{notes}");
    assert!(notes.contains("not the pilot's inputToPaint"), "{notes}");
    assert!(!notes.contains("backwards"), "{notes}");

    let o = bin(&[
        "stats",
        f.to_str().unwrap(),
        "--by-instance",
        "--format",
        "csv",
    ]);
    let (out, _) = text(&o);
    assert!(
        out.starts_with("instance,metric,unit,n,mean,p50,p90,p99,max\n"),
        "{out}"
    );
    assert!(out.contains("user1@s1,latency,ms,100,101,"), "{out}");

    let custom = write(
        dir.path(),
        "custom.log",
        b"t=1.0 frame_ms=10\nt=2.0 frame_ms=30\nnoise\n",
    );
    let o = bin(&[
        "stats",
        custom.to_str().unwrap(),
        "--pattern",
        r"t=(?P<time>\S+) (?P<metric>\w+)=(?P<value>\d+)",
        "--format",
        "csv",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("frame_ms,as logged,2,20,"), "{out}");
}

/// Folded stacks with JDK 17 frames (no profiler runs here; these are written, not recorded).
fn folded() -> String {
    [
        "[C2 CompilerThre tid=11];thread_native_entry;Thread::call_run;JavaThread::thread_main_inner;CompileBroker::compiler_thread_loop;CompileBroker::invoke_compiler_on_method;C2Compiler::compile_method;Compile::Compile;PhaseIdealLoop::optimize 50",
        "[C1 CompilerThre tid=12];thread_native_entry;Thread::call_run;CompileBroker::compiler_thread_loop;CompileBroker::invoke_compiler_on_method;Compiler::compile_method;Compilation::Compilation;LinearScan::allocate_registers 20",
        "[GC Thread#0 tid=13];thread_native_entry;Thread::call_run;GangWorker::run;GangWorker::loop;G1EvacuateRegionsBaseTask::work;G1ParEvacuateFollowersClosure::do_void 10",
        "[VM Thread tid=14];thread_native_entry;Thread::call_run;VMThread::run;VMThread::evaluate_operation;VM_Operation::evaluate;VM_G1CollectForAllocation::doit;G1CollectedHeap::do_collection_pause_at_safepoint 5",
        "[main tid=1];java/lang/Thread.run_[j];a/Main.main_[j];java/lang/ClassLoader.loadClass_[j];SystemDictionary::resolve_or_fail;ClassFileParser::parse_stream 8",
        "[main tid=1];java/lang/Thread.run_[j];a/Main.main_[j];InstanceKlass::link_class_impl;Verifier::verify;ClassVerifier::verify_method 2",
        "[main tid=1];java/lang/Thread.run_[j];a/Main.loop_[0];Interpreter 3",
        "[main tid=1];java/lang/Thread.run_[j];a/Main.loop_[j];java/util/zip/Deflater.deflateBytes_[j];deflate_slow_[k] 2",
    ]
    .join("\n")
        + "\n"
}

#[test]
fn profile_shares_side_by_side_rules_and_flamegraph() {
    let dir = tempfile::tempdir().unwrap();
    let stock = write(dir.path(), "stock.collapsed", folded().as_bytes());
    // The "C1 only" arm: no C2 stacks.
    let c1: String = folded()
        .lines()
        .filter(|l| !l.contains("C2 CompilerThre"))
        .map(|l| format!("{l}\n"))
        .collect();
    let c1 = write(dir.path(), "c1.collapsed", c1.as_bytes());
    let svg = dir.path().join("flame.svg");
    let o = bin(&[
        "profile",
        stock.to_str().unwrap(),
        c1.to_str().unwrap(),
        "--flamegraph",
        svg.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v[0]["rows"].as_array().unwrap();
    let row = |m: &str| {
        rows.iter()
            .find(|r| r[""] == m)
            .unwrap_or_else(|| panic!("{m}: {out}"))
    };
    assert_eq!(row("samples (n)")["stock.collapsed"], 100.0);
    assert_eq!(row("samples (n)")["c1.collapsed"], 50.0);
    assert_eq!(row("of which JIT")["stock.collapsed"], 70.0);
    assert_eq!(row("of which JIT")["c1.collapsed"], 40.0);
    assert_eq!(row("of which JIT")["Δ c1.collapsed"], -30.0);
    assert_eq!(row("of which GC")["stock.collapsed"], 15.0);
    assert_eq!(
        row("of which class load, link, verify")["stock.collapsed"],
        10.0
    );
    assert_eq!(row("of which interpreter")["stock.collapsed"], 3.0);
    assert_eq!(row("of which application")["stock.collapsed"], 2.0);
    let leaves = v[1]["rows"].as_array().unwrap();
    assert_eq!(leaves[0]["leaf frame"], "PhaseIdealLoop::optimize");
    assert!(
        leaves.iter().any(|r| r["leaf frame"] == "deflate_slow"),
        "annotation stripped: {out}"
    );
    let flame = std::fs::read_to_string(&svg).unwrap();
    assert!(
        flame.contains("<svg") && flame.contains("GangWorker::loop"),
        "flame graph"
    );

    let rules = write(
        dir.path(),
        "rules.toml",
        b"[[rule]]\nbucket = \"zlib\"\nany = [\"java/util/zip/\"]\n",
    );
    let o = bin(&[
        "profile",
        stock.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--skip-leaves-of",
        "JIT",
        "--format",
        "markdown",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("| of which zlib | 2.0 % (2) |"), "{out}");
    assert!(
        !out.contains("PhaseIdealLoop::optimize"),
        "JIT leaves left out: {out}"
    );
    let bad_rules = write(dir.path(), "bad.toml", b"[[rule]]\nbuckt = 1\n");
    let o = bin(&[
        "profile",
        stock.to_str().unwrap(),
        "--rules",
        bad_rules.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o)
            .1
            .contains("bad.toml:2: `rule[0].buckt`: unknown field"),
        "{}",
        text(&o).1
    );
}

#[test]
fn junk_and_empty_files_exit_2_for_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    let mut junk = Vec::new();
    let mut x: u32 = 0x9E37_79B9;
    for _ in 0..5000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        junk.push((x & 0xff) as u8);
    }
    let junk = write(dir.path(), "junk.bin", &junk);
    let empty = write(dir.path(), "empty.log", b"");
    for kind in KINDS {
        let o = bin(&[kind, junk.to_str().unwrap()]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{kind}: {err}");
        assert!(
            err.contains("junk.bin: nothing understood as"),
            "{kind}: {err}"
        );
        assert!(
            err.contains("lines not understood") && err.contains("  line 1: "),
            "{kind}: {err}"
        );
        assert!(!err.contains("panicked"), "{kind}: {err}");
        let o = bin(&[kind, empty.to_str().unwrap()]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{kind}: {err}");
        assert!(err.contains("empty.log: empty file"), "{kind}: {err}");
    }
    let o = bin(&["gc", dir.path().join("missing.log").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("missing.log: cannot open"));
}

#[test]
fn a_log_of_another_kind_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let gc = write(dir.path(), "gc.log", GC_LINES.as_bytes());
    let o = bin(&["classload", gc.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("gc.log: nothing understood as a class-load log"),
        "{err}"
    );
    assert!(err.contains("6 of 6 lines not understood"), "{err}");
    assert!(
        err.contains("line 1: \"[0.003s][info][gc] Using G1\""),
        "{err}"
    );
    assert!(err.contains("try `arena-perf logs gc`"), "{err}");
    let cl = write(
        dir.path(),
        "cl.log",
        b"[0.058s][info][class,load] java.lang.Object source: shared objects file\n",
    );
    let o = bin(&["gc", cl.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("try `arena-perf logs classload`"), "{err}");
    for kind in ["stats", "profile"] {
        let o = bin(&[kind, gc.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{kind}");
    }
}

#[test]
fn truncated_backwards_and_crlf_are_read_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let lf = write(dir.path(), "lf.log", GC_LINES.as_bytes());
    let crlf = write(
        dir.path(),
        "crlf.log",
        GC_LINES.replace('\n', "\r\n").as_bytes(),
    );
    let a = bin(&["gc", lf.to_str().unwrap(), "--format", "csv"]);
    let b = bin(&["gc", crlf.to_str().unwrap(), "--format", "csv"]);
    assert!(a.status.success() && b.status.success());
    assert_eq!(
        text(&a).0,
        text(&b).0.replace("crlf.log", "lf.log"),
        "CRLF reads the same as LF"
    );
    assert!(text(&a).0.contains("all pauses,,3,1.97"), "{}", text(&a).0);

    // Cut mid-line (inside the Remark pause): the whole lines still count, the last is
    // reported.
    let cut = &GC_LINES[..GC_LINES.find("5M->5M").unwrap()];
    let t = write(dir.path(), "cut.log", cut.as_bytes());
    let o = bin(&["gc", t.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("cut.log: 1 of 5 lines not understood"),
        "{out}"
    );
    assert!(
        out.contains("line 5: \"[0.061s][info][gc] GC(2) Pause Remark \""),
        "{out}"
    );
    assert!(out.contains("last line (5) has no newline"), "{out}");
    assert!(out.contains("n=2 pauses"), "{out}");

    // A clock going backwards (two logs concatenated) is read and said.
    let two = format!("{GC_LINES}{GC_LINES}");
    let t = write(dir.path(), "two.log", two.as_bytes());
    let o = bin(&["gc", t.to_str().unwrap()]);
    let (out, _) = text(&o);
    assert!(o.status.success());
    assert!(
        out.contains("time goes backwards 1 times (first at line 7: 0.003s after 0.062s)"),
        "{out}"
    );
    assert!(out.contains("n=6 pauses"), "{out}");

    let cl = write(dir.path(), "cl.log", b"[0.5s][info][class,load] a.B source: jrt:/java.base\r\n[0.1s][info][class,load] a.C source: jrt:/java.base\r\n[0.2s][info][class,load] a.D source: jrt:/java.ba");
    let o = bin(&["classload", cl.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("time goes backwards 1 times"), "{out}");
    assert!(out.contains("last line (3) has no newline"), "{out}");
    assert!(
        out.contains("│ classes (n)             ┆      3 │"),
        "{out}"
    );
    assert!(
        out.contains("│ span                    ┆ 0.400s │"),
        "{out}"
    );
}

#[test]
fn very_long_lines_stay_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let mut body = b"a;b 1\n".to_vec();
    body.extend(std::iter::repeat_n(b'x', 17 << 20));
    body.extend_from_slice(b"\nc;d 2\n");
    let f = write(dir.path(), "long.collapsed", &body);
    let o = bin(&["profile", f.to_str().unwrap(), "--format", "json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("1 of 3 lines not understood"), "{out}");
    assert!(out.contains("\"samples (n)\""), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["rows"][0]["long.collapsed"], 3.0);
}
