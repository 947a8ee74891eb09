//! Throughput of the GC and collapsed-stack reducers on 1 GB inputs, side by side with
//! `grep -c Pause` on the same GC log, and of `logs gc` on that log gzipped beside
//! `zcat | grep -c Pause`, in one run.
//!
//! The inputs are generated once into `$ARENA_LOGS_BENCH_DIR` (default
//! `/tmp/arena-logs-bench`) and reused: the GC log repeats a real `-Xlog:gc*` G1 log from
//! this machine's JDK (the Alloc fixture) with its uptime shifted forward on each pass; the
//! collapsed file is folded stacks built from JDK 17 frame names (no profiler runs here).
//! Each figure is the median of 5 runs after one warm-up run (page cache warm); our runs
//! and grep's alternate so both see the same machine load. Wall and CPU time are printed:
//! the reducers read large files on up to 4 threads, grep on one.

use std::fmt::Write as _;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use arena_logs::{gc, profile};
use arena_stats::quantile;

const SIZE: u64 = 1 << 30;
const RUNS: usize = 5;

fn dir() -> PathBuf {
    let d = std::env::var_os("ARENA_LOGS_BENCH_DIR")
        .map_or_else(|| PathBuf::from("/tmp/arena-logs-bench"), PathBuf::from);
    std::fs::create_dir_all(&d).expect("bench dir");
    d
}

/// A real G1 `-Xlog:gc*` log from the fixture, made once.
fn real_gc_log(d: &Path) -> Vec<String> {
    let log = d.join("seed-g1full.log");
    if !log.exists() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/src");
        let classes = d.join("classes");
        let ok = Command::new("javac")
            .arg("-d")
            .arg(&classes)
            .arg(fixtures.join("Alloc.java"))
            .status()
            .expect("javac");
        assert!(ok.success());
        let ok = Command::new("java")
            .arg("-cp")
            .arg(&classes)
            .args(["-XX:+UseG1GC", "-Xmx64m"])
            .arg(format!(
                "-Xlog:gc*:file={}:time,uptime,level,tags",
                log.display()
            ))
            .args(["Alloc", "20000"])
            .stdout(std::process::Stdio::null())
            .status()
            .expect("java");
        assert!(ok.success());
    }
    std::fs::read_to_string(&log)
        .expect("seed log")
        .lines()
        .map(str::to_string)
        .collect()
}

fn gc_input(d: &Path) -> PathBuf {
    let out = d.join("gc-1g.log");
    if out.metadata().is_ok_and(|m| m.len() >= SIZE) {
        return out;
    }
    let seed = real_gc_log(d);
    // Split each line around its uptime decoration `[0.060s]` so passes can shift it.
    let parts: Vec<(String, f64, String)> = seed
        .iter()
        .filter_map(|l| {
            let i = l.find("s][")?;
            let open = l[..i].rfind('[')?;
            let t: f64 = l[open + 1..i].parse().ok()?;
            Some((l[..open + 1].to_string(), t, l[i..].to_string()))
        })
        .collect();
    let span = parts.last().map_or(1.0, |p| p.1) + 0.001;
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(&out).expect("create"));
    let (mut written, mut pass) = (0u64, 0u64);
    let mut line = String::new();
    while written < SIZE {
        for (pre, t, post) in &parts {
            line.clear();
            let _ = writeln!(line, "{pre}{:.3}{post}", t + pass as f64 * span);
            w.write_all(line.as_bytes()).expect("write");
            written += line.len() as u64;
        }
        pass += 1;
    }
    w.flush().expect("flush");
    out
}

/// The GC log gzipped (fast level, as logrotate's `compresscmd` defaults are not needed to
/// measure the reader), made once.
fn gz_input(d: &Path, plain: &Path) -> PathBuf {
    let out = d.join("gc-1g.log.gz");
    if out.exists() {
        return out;
    }
    let tmp = d.join("gc-1g.log.gz.part");
    let mut r = std::fs::File::open(plain).expect("gc log");
    let w = BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp).expect("create"));
    let mut e = flate2::write::GzEncoder::new(w, flate2::Compression::fast());
    std::io::copy(&mut r, &mut e).expect("compress");
    e.finish().expect("finish").flush().expect("flush");
    std::fs::rename(&tmp, &out).expect("rename");
    out
}

fn collapsed_input(d: &Path) -> PathBuf {
    let out = d.join("stacks-1g.collapsed");
    if out.metadata().is_ok_and(|m| m.len() >= SIZE) {
        return out;
    }
    let roots: [&[&str]; 5] = [
        &[
            "[C2 CompilerThre tid=21]",
            "thread_native_entry",
            "Thread::call_run",
            "JavaThread::thread_main_inner",
            "CompileBroker::compiler_thread_loop",
            "CompileBroker::invoke_compiler_on_method",
            "C2Compiler::compile_method",
            "Compile::Compile",
            "Compile::Optimize",
            "PhaseIdealLoop::build_and_optimize",
        ],
        &[
            "[GC Thread#0 tid=14]",
            "thread_native_entry",
            "Thread::call_run",
            "GangWorker::run",
            "GangWorker::loop",
            "G1EvacuateRegionsBaseTask::work",
            "G1EvacuateRegionsTask::evacuate_live_objects",
            "G1ParEvacuateFollowersClosure::do_void",
        ],
        &[
            "[main tid=1]",
            "java/lang/Thread.run_[j]",
            "org/webswing/toolkit/WebToolkit$1.run_[j]",
            "java/awt/EventDispatchThread.run_[j]",
            "java/awt/EventDispatchThread.pumpEvents_[j]",
            "java/awt/EventQueue.dispatchEvent_[j]",
            "javax/swing/RepaintManager.paintDirtyRegions_[j]",
            "javax/swing/JComponent.paint_[j]",
            "megamek/client/ui/swing/boardview/BoardView.paintComponent_[j]",
        ],
        &[
            "[main tid=1]",
            "java/lang/Thread.run_[j]",
            "a/Main.main_[j]",
            "java/lang/ClassLoader.loadClass_[j]",
            "jdk/internal/loader/BuiltinClassLoader.loadClass_[j]",
            "java/lang/ClassLoader.defineClass1_[j]",
            "JVM_DefineClassWithSource",
            "SystemDictionary::resolve_from_stream",
            "ClassFileParser::ClassFileParser",
            "ClassFileParser::parse_stream",
        ],
        &[
            "[VM Thread tid=9]",
            "thread_native_entry",
            "Thread::call_run",
            "VMThread::run",
            "VMThread::inner_execute",
            "VMThread::evaluate_operation",
            "VM_Operation::evaluate",
            "VM_G1CollectForAllocation::doit",
            "G1CollectedHeap::do_collection_pause_at_safepoint",
        ],
    ];
    let leaves = [
        "java/util/zip/Deflater.deflateBytes_[j]",
        "deflate_slow_[k]",
        "sun/java2d/loops/Blit.Blit_[j]",
        "Interpreter",
        "memcpy_[k]",
        "java/util/HashMap.getNode_[i]",
        "ObjectMonitor::enter",
        "SpinPause",
    ];
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(&out).expect("create"));
    let mut written = 0u64;
    let mut line = String::new();
    while written < SIZE {
        line.clear();
        let r = roots[(next() % roots.len() as u64) as usize];
        line.push_str(&r.join(";"));
        // Deep application stacks like a Swing app's: 10 to 60 more frames.
        for i in 0..(10 + next() % 50) {
            let _ = write!(
                line,
                ";megamek/common/Frame{}.method{}_[j]",
                next() % 400,
                i
            );
        }
        let _ = writeln!(
            line,
            ";{} {}",
            leaves[(next() % leaves.len() as u64) as usize],
            1 + next() % 20
        );
        w.write_all(line.as_bytes()).expect("write");
        written += line.len() as u64;
    }
    w.flush().expect("flush");
    out
}

/// (own user+system CPU, waited-for children's user+system CPU) in seconds, from
/// /proc/self/stat (clock ticks of 1/100 s, Linux's USER_HZ).
fn cpu() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map_or("", |x| x.1);
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    // rest[0] is field 3 (state); utime, stime, cutime, cstime are fields 14..=17.
    let g = |i: usize| f.get(i - 3).copied().unwrap_or(0.0) / 100.0;
    (g(14) + g(15), g(16) + g(17))
}

/// One timed run: (wall seconds, CPU seconds) where CPU is the process's own (`child` false)
/// or its children's.
fn timed<F: FnMut()>(f: &mut F, child: bool) -> (f64, f64) {
    let c0 = cpu();
    let t = Instant::now();
    f();
    let wall = t.elapsed().as_secs_f64();
    let c1 = cpu();
    (wall, if child { c1.1 - c0.1 } else { c1.0 - c0.0 })
}

fn mbps(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / 1e6 / secs
}

/// Runs `a` and `b` alternately (so both see the same machine load), after one warm-up
/// each; returns the medians (wall, CPU) of each.
fn interleaved<A: FnMut(), B: FnMut()>(
    mut a: A,
    a_child: bool,
    mut b: B,
    b_child: bool,
) -> ((f64, f64), (f64, f64)) {
    a();
    b();
    let (mut wa, mut ca, mut wb, mut cb) = (vec![], vec![], vec![], vec![]);
    for _ in 0..RUNS {
        let (w, c) = timed(&mut a, a_child);
        wa.push(w);
        ca.push(c);
        let (w, c) = timed(&mut b, b_child);
        wb.push(w);
        cb.push(c);
    }
    (
        (
            quantile(&wa, 0.5).unwrap_or(f64::NAN),
            quantile(&ca, 0.5).unwrap_or(f64::NAN),
        ),
        (
            quantile(&wb, 0.5).unwrap_or(f64::NAN),
            quantile(&cb, 0.5).unwrap_or(f64::NAN),
        ),
    )
}

fn main() {
    // `cargo bench` passes --bench; nothing else to parse.
    let d = dir();
    let gc_log = gc_input(&d);
    let stacks = collapsed_input(&d);
    let gc_bytes = gc_log.metadata().expect("gc log").len();
    let st_bytes = stacks.metadata().expect("stacks").len();
    let threads = arena_logs::scan::threads_for(&gc_log);

    let mut pauses = 0;
    let mut grep_count = String::new();
    let ((ours, ours_cpu), (grep, grep_cpu)) = interleaved(
        || {
            let s = gc::summarize(&gc_log, None).expect("gc log reduces");
            pauses = s.all.ms.count();
        },
        false,
        || {
            let o = Command::new("grep")
                .arg("-c")
                .arg("Pause")
                .arg(&gc_log)
                .output()
                .expect("grep");
            grep_count = String::from_utf8_lossy(&o.stdout).trim().to_string();
        },
        true,
    );
    let gz = gz_input(&d, &gc_log);
    let gz_bytes = gz.metadata().expect("gz").len();
    let (mut gz_pauses, mut zgrep_count) = (0, String::new());
    let ((ours_gz, ours_gz_cpu), (zgrep, zgrep_cpu)) = interleaved(
        || {
            let s = gc::summarize(&gz, None).expect("gzip log reduces");
            gz_pauses = s.all.ms.count();
        },
        false,
        || {
            let o = Command::new("sh")
                .arg("-c")
                .arg(format!("zcat '{}' | grep -c Pause", gz.display()))
                .output()
                .expect("zcat | grep");
            zgrep_count = String::from_utf8_lossy(&o.stdout).trim().to_string();
        },
        true,
    );
    let classifier = profile::load_rules(None).expect("default rules");
    let mut samples = 0;
    let ((prof, prof_cpu), _) = interleaved(
        || {
            let s = profile::summarize(&stacks, &classifier).expect("stacks reduce");
            samples = s.samples;
        },
        false,
        || {},
        false,
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();

    println!("arena-logs throughput: medians of {RUNS} interleaved runs after a warm-up (page cache warm)");
    println!(
        "  reducers use {threads} threads on these files; load average {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "  logs gc        {:>6.0} MB/s wall  {:.3} s wall  {:.2} s CPU  {} MB G1 -Xlog:gc* log, {pauses} pauses",
        mbps(gc_bytes, ours),
        ours,
        ours_cpu,
        gc_bytes / 1_000_000
    );
    println!(
        "  grep -c Pause  {:>6.0} MB/s wall  {:.3} s wall  {:.2} s CPU  same file, {grep_count} matching lines",
        mbps(gc_bytes, grep),
        grep,
        grep_cpu
    );
    println!(
        "  ratio          logs gc / grep: {:.2}x the speed in wall time, {:.2}x the CPU time",
        grep / ours,
        ours_cpu / grep_cpu.max(1e-9)
    );
    println!(
        "  logs gc, gzip  {:>6.0} MB/s wall  {:.3} s wall  {:.2} s CPU  same log gzipped ({} MB), {gz_pauses} pauses; MB/s of text",
        mbps(gc_bytes, ours_gz),
        ours_gz,
        ours_gz_cpu,
        gz_bytes / 1_000_000
    );
    println!(
        "  zcat | grep -c {:>6.0} MB/s wall  {:.3} s wall  {:.2} s CPU  same gzip, {zgrep_count} matching lines",
        mbps(gc_bytes, zgrep),
        zgrep,
        zgrep_cpu
    );
    println!(
        "  logs profile   {:>6.0} MB/s wall  {:.3} s wall  {:.2} s CPU  {} MB collapsed stacks, {samples} samples",
        mbps(st_bytes, prof),
        prof,
        prof_cpu,
        st_bytes / 1_000_000
    );
    let floor = 200.0;
    println!(
        "  floor {floor:.0} MB/s: gc {}, profile {}; gc faster than grep -c Pause: {}",
        if mbps(gc_bytes, ours) >= floor {
            "met"
        } else {
            "MISSED"
        },
        if mbps(st_bytes, prof) >= floor {
            "met"
        } else {
            "MISSED"
        },
        if ours < grep { "yes" } else { "NO" }
    );
}
