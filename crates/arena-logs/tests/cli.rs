//! The reducers through the real binary: per-frame stats and collapsed stacks with known
//! answers, every kind of input (pipes, `-`, `/dev/stdin`, FIFOs, gzip with one or more
//! members) and every kind of bad input (binary junk, executables, corrupt gzip, empty
//! file, another kind of log, text that merely ends lines in numbers, truncated last line,
//! clocks going backwards, CRLF) with its exit code and message.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const KINDS: [&str; 4] = ["stats", "gc", "classload", "profile"];

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arena-logs"))
        .args(args)
        .output()
        .expect("run arena-logs")
}

/// Runs the binary with `input` written to its stdin through a pipe (from another thread,
/// so a large input cannot dead-lock against the child's output).
fn bin_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arena-logs"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run arena-logs");
    let mut stdin = child.stdin.take().expect("stdin");
    let data = input.to_vec();
    // The child may stop reading early (a binary head): a broken pipe is fine.
    let writer = std::thread::spawn(move || drop(stdin.write_all(&data)));
    let out = child.wait_with_output().expect("wait for arena-logs");
    writer.join().unwrap();
    out
}

fn gzip(body: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(body).unwrap();
    e.finish().unwrap()
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
    assert_eq!(v["kind"], "logs.stats");
    let row = |m: &str| {
        let r = &v["metrics"][m];
        assert!(r.is_object(), "{m}: {out}");
        r
    };
    let lat = row("latency");
    assert_eq!(lat["n"], 200);
    assert_eq!(lat["unit"], "ms");
    assert_eq!(lat["mean"], 100.5);
    assert_eq!(lat["max"], 200.0);
    // numpy.percentile(range(1, 201), [50, 90]) = 100.5, 180.1; the histogram holds 3 digits.
    assert!((lat["p50"].as_f64().unwrap() - 100.5).abs() <= 0.5, "{lat}");
    assert!((lat["p90"].as_f64().unwrap() - 180.1).abs() <= 1.0, "{lat}");
    assert_eq!(row("outboundSize")["unit"], "B");
    assert_eq!(row("outboundSize")["max"], 20000.0);
    assert_eq!(row("latencyPing")["n"], 4);
    let file = &v["files"][0];
    assert_eq!(file["not_understood"], 4, "{file}");
    assert_eq!(file["lines"], 408, "{file}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("not the pilot's inputToPaint"), "{notes}");
    assert_eq!(file["backwards"], 0, "{file}");

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
    assert_eq!(v["kind"], "logs.profile");
    let (s0, s1) = (&v["files"][0], &v["files"][1]);
    assert!(s0["file"].as_str().unwrap().ends_with("stock.collapsed"));
    assert!(s1["file"].as_str().unwrap().ends_with("c1.collapsed"));
    assert_eq!(s0["samples"], 100);
    assert_eq!(s1["samples"], 50);
    let share = |f: &serde_json::Value, b: &str| f["buckets"][b]["share_pct"].as_f64().unwrap();
    assert_eq!(share(s0, "JIT"), 70.0);
    assert_eq!(s0["buckets"]["JIT"]["samples"], 70);
    assert_eq!(share(s1, "JIT"), 40.0);
    // The change in percentage points, as the table's delta column gives it.
    assert_eq!(share(s1, "JIT") - share(s0, "JIT"), -30.0);
    assert_eq!(share(s0, "GC"), 15.0);
    assert_eq!(share(s0, "class load, link, verify"), 10.0);
    assert_eq!(share(s0, "interpreter"), 3.0);
    assert_eq!(share(s0, "application"), 2.0);
    let leaves = s0["top_leaves"].as_array().unwrap();
    assert_eq!(leaves[0]["frame"], "PhaseIdealLoop::optimize");
    assert!(
        leaves.iter().any(|r| r["frame"] == "deflate_slow"),
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
            err.contains("junk.bin: binary data (") && err.contains("are not text"),
            "{kind}: {err}"
        );
        assert!(err.contains("nothing understood"), "{kind}: {err}");
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

const CL_LINES: &str = "[0.010s][info][class,load] java.lang.Object source: shared objects file\n\
[0.020s][info][class,load] java.lang.String source: jrt:/java.base\n\
[0.400s][info][class,load] a.Main source: file:/tmp/app/\n";

/// One valid input per kind, to read through every kind of source.
fn sample(kind: &str) -> Vec<u8> {
    match kind {
        "stats" => stats_log().into_bytes(),
        "gc" => GC_LINES.as_bytes().to_vec(),
        "classload" => CL_LINES.as_bytes().to_vec(),
        _ => folded().into_bytes(),
    }
}

/// The JSON output (no padding that depends on a name's length) with the input's name
/// taken out, to compare reads of one text from different sources.
fn unnamed(o: &Output, names: &[&str]) -> String {
    let (out, err) = text(o);
    assert!(o.status.success(), "{names:?}: {err}");
    names.iter().fold(out, |s, n| s.replace(n, "INPUT"))
}

#[test]
fn pipes_dash_dev_stdin_and_fifos_read_like_the_file() {
    let dir = tempfile::tempdir().unwrap();
    for kind in KINDS {
        let body = sample(kind);
        let f = write(dir.path(), "input.log", &body);
        let path = f.to_str().unwrap();
        let want = unnamed(
            &bin(&[kind, path, "--format", "json"]),
            &[path, "input.log"],
        );
        for arg in ["-", "/dev/stdin"] {
            let o = bin_stdin(&[kind, arg, "--format", "json"], &body);
            assert_eq!(unnamed(&o, &["/dev/stdin", "stdin"]), want, "{kind} {arg}");
        }
        // zcat gc.log.gz | arena-perf logs gc /dev/stdin: gzip through the pipe.
        let o = bin_stdin(&[kind, "/dev/stdin", "--format", "json"], &gzip(&body));
        assert_eq!(
            unnamed(&o, &["/dev/stdin", "stdin"]),
            want,
            "{kind} gzip pipe"
        );
    }
    // A named pipe, written by another thread while the reducer reads it.
    let fifo = dir.path().join("gc.fifo");
    let ok = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(ok.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut w = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            w.write_all(GC_LINES.as_bytes()).unwrap();
        })
    };
    let o = bin(&["gc", fifo.to_str().unwrap(), "--format", "csv"]);
    writer.join().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("all pauses,,3,1.97"), "{out}");
    // Stdin can be read once.
    let o = bin_stdin(&["gc", "-", "-"], GC_LINES.as_bytes());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("can be given once"), "{}", text(&o).1);
}

#[test]
fn gzip_is_read_by_its_magic_bytes_with_every_member() {
    let dir = tempfile::tempdir().unwrap();
    for kind in KINDS {
        let body = sample(kind);
        let plain = write(dir.path(), "plain.log", &body);
        // A rotated log's name says nothing about gzip: the magic bytes do.
        let gz = write(dir.path(), "rotated.log.1", &gzip(&body));
        let json = |f: &Path| bin(&[kind, f.to_str().unwrap(), "--format", "json"]);
        let want = unnamed(&json(&plain), &["plain.log"]);
        let got = unnamed(&json(&gz), &["rotated.log.1"]);
        assert_eq!(got, want, "{kind}");
    }
    // `cat a.gz b.gz`: both members are read, and line numbers run on through the second
    // one's decompressed text (the clock steps back at its line 1, line 7 overall).
    let mut two = gzip(GC_LINES.as_bytes());
    two.extend(gzip(GC_LINES.as_bytes()));
    let f = write(dir.path(), "two.gz", &two);
    let o = bin(&["gc", f.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("n=6 pauses"), "{out}");
    assert!(
        out.contains("time goes backwards 1 times (first at line 7: 0.003s after 0.062s)"),
        "{out}"
    );
    assert!(out.contains("two.gz: 12 lines, 12 understood"), "{out}");
    // Lines not understood are named by their line in the decompressed text.
    let cut = format!(
        "{GC_LINES}{}",
        &GC_LINES[..GC_LINES.find("5M->5M").unwrap()]
    );
    let f = write(dir.path(), "cut.gz", &gzip(cut.as_bytes()));
    let (out, _) = text(&bin(&["gc", f.to_str().unwrap()]));
    assert!(
        out.contains("line 11: \"[0.061s][info][gc] GC(2) Pause Remark \""),
        "{out}"
    );
    // A gzip of nothing is an empty log.
    let f = write(dir.path(), "empty.gz", &gzip(b""));
    let o = bin(&["gc", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("empty.gz: empty file"),
        "{}",
        text(&o).1
    );
}

/// GC lines with varied numbers (so they do not compress to nothing), `n` of them.
fn many_gc_lines(n: u32) -> String {
    (0..n)
        .map(|i| {
            format!(
                "[{}.{:03}s][info][gc] GC({i}) Pause Young (Normal) (G1 Evacuation Pause) {}M->{}M(66M) {}.{:03}ms\n",
                i / 100,
                (i * 7) % 1000,
                7 + i % 13,
                2 + i % 5,
                i % 9,
                (i * 37) % 1000
            )
        })
        .collect()
}

#[test]
fn corrupt_and_truncated_gzip_name_the_file_and_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let body = many_gc_lines(4000);
    let good = gzip(body.as_bytes());
    // Damage the deflate data well past the first 64 KB of text, so the lines before the
    // damage are read and counted first.
    let mut bad = good.clone();
    let at = bad.len() * 4 / 5;
    for b in &mut bad[at..at + 64] {
        *b ^= 0x5a;
    }
    let f = write(dir.path(), "bad.gz", &bad);
    for kind in ["gc", "profile"] {
        let o = bin(&[kind, f.to_str().unwrap()]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{kind}: {err}");
        assert!(
            err.contains("bad.gz: corrupt gzip stream at byte "),
            "{kind}: {err}"
        );
        assert!(
            err.contains("of the compressed input") && err.contains(", after line "),
            "{kind}: {err}"
        );
    }
    // Cut off mid-stream (a log still being compressed, a broken copy).
    let f = write(dir.path(), "cut.gz", &good[..good.len() / 2]);
    let o = bin(&["gc", f.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cut.gz: truncated gzip stream at byte "),
        "{err}"
    );
    // Damaged in the header: nothing was read.
    let mut hdr = good.clone();
    hdr[3] = 0xff; // reserved flag bits
    let f = write(dir.path(), "hdr.gz", &hdr);
    let o = bin(&["classload", f.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("hdr.gz: corrupt gzip stream at byte"), "{err}");
}

#[test]
fn executables_images_and_gzip_of_binary_are_binary_for_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    let me = std::env::current_exe().unwrap();
    let elf = std::fs::read(&me).unwrap();
    let gz_elf = write(dir.path(), "exe.gz", &gzip(&elf[..elf.len().min(1 << 20)]));
    // A PNG's signature and IHDR chunk, then deflate-like bytes.
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x01\0\0\0\x01\0\x08\x06\0\0\0".to_vec();
    png.extend((0..2000u32).map(|i| (i.wrapping_mul(2654435761) >> 11) as u8));
    let png = write(dir.path(), "shot.png", &png);
    let words = [
        ("stats", "not per-frame stats lines"),
        ("gc", "not a GC log"),
        ("classload", "not a class-load log"),
        ("profile", "not collapsed stacks"),
    ];
    for (kind, not) in words {
        for (f, what) in [
            (Path::new("/bin/true"), "binary data (an ELF executable"),
            (me.as_path(), "binary data (an ELF executable"),
            (
                gz_elf.as_path(),
                "binary data (decompressed, an ELF executable",
            ),
            (png.as_path(), "binary data (a PNG image)"),
        ] {
            let o = bin(&[kind, f.to_str().unwrap()]);
            let (out, err) = text(&o);
            assert_eq!(o.status.code(), Some(2), "{kind} {f:?}: {out}{err}");
            assert!(
                err.contains(what) && err.contains(not),
                "{kind} {f:?}: {err}"
            );
        }
        // The same through a pipe.
        let o = bin_stdin(&[kind, "-"], &elf);
        assert_eq!(o.status.code(), Some(2), "{kind} stdin");
        assert!(
            text(&o).1.contains("stdin: binary data (an ELF"),
            "{}",
            text(&o).1
        );
    }
    let xz = write(dir.path(), "gc.log.xz", b"\xfd7zXZ\0\0\x04\xe6\xd6\xb4F");
    let o = bin(&["gc", xz.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("compressed with xz"), "{}", text(&o).1);
}

#[test]
fn text_that_merely_ends_in_numbers_is_not_a_profile() {
    let dir = tempfile::tempdir().unwrap();
    // The printable strings of an executable, one a line (what `strings` prints): many end
    // in a number, and a handful even look like stacks (this test's own folded lines).
    let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let mut strings = Vec::new();
    for run in exe.split(|b| !(0x20..0x7f).contains(b)) {
        if run.len() >= 4 {
            strings.extend_from_slice(run);
            strings.push(b'\n');
        }
    }
    let f = write(dir.path(), "strings.txt", &strings);
    let o = bin(&["profile", f.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(
        err.contains("strings.txt: nothing understood as collapsed stacks"),
        "{err}"
    );
    // Prose with a number at the end of each line, and one real stack among 100 lines.
    let mut prose = String::from("main;a/B.c_[j] 5\n");
    for i in 0..99 {
        prose.push_str(&format!("see section {i}\nCopyright (C) 20{i:02}\n"));
    }
    let f = write(dir.path(), "notes.txt", prose.as_bytes());
    let o = bin(&["profile", f.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("notes.txt: nothing understood as collapsed stacks (frame;frame count): only 1 of 199 non-blank lines understood"),
        "{err}"
    );
    assert!(err.contains("line 2: \"see section 0\""), "{err}");
    // A profile with a stray line is still a profile, the line reported.
    let mut mostly = folded();
    mostly.push_str("see section 3\n");
    let f = write(dir.path(), "mostly.collapsed", mostly.as_bytes());
    let o = bin(&["profile", f.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("1 of 9 lines not understood"), "{out}");
}

#[test]
fn flame_graph_from_a_pipe_of_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("flame.svg");
    let o = bin_stdin(
        &["profile", "-", "--flamegraph", svg.to_str().unwrap()],
        &gzip(folded().as_bytes()),
    );
    assert!(o.status.success(), "{}", text(&o).1);
    let flame = std::fs::read_to_string(&svg).unwrap();
    assert!(flame.contains("GangWorker::loop"), "flame graph");
    // 100 samples in all, the stacks read once from stdin.
    assert!(flame.contains("100 samples"), "total in the flame graph");
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
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let file = &v["files"][0];
    assert_eq!(file["scan"]["not_understood"], 1, "{out}");
    assert_eq!(file["scan"]["lines"], 3, "{out}");
    assert_eq!(file["samples"], 3, "{out}");
    // The sample of the line not understood is bounded, not 17 MB.
    assert!(out.len() < 1 << 20, "{} bytes", out.len());
}
