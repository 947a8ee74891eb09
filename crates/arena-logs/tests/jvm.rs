//! Real JVM logs: the machine's JDK 17 runs the fixture programs under G1, Parallel and ZGC
//! with `-Xlog:gc`, `-Xlog:gc*` (full decorations) and `-Xlog:class+load`, once per test
//! binary, and every reducer's counts are checked against an independent count of the same
//! file done here with plain string matching.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use arena_logs::classload::{self, ClassLoadOptions};
use arena_logs::gc::{self, GcOptions};
use arena_report::Format;

struct Logs {
    _dir: tempfile::TempDir,
    g1_stdout: PathBuf,
    g1_full: PathBuf,
    g1_1m: PathBuf,
    g1_8m: PathBuf,
    parallel_stdout: PathBuf,
    parallel_full: PathBuf,
    zgc_stdout: PathBuf,
    zgc_full: PathBuf,
    classes_stdout: PathBuf,
    classes_full: PathBuf,
    classes_debug: PathBuf,
    classes_noshare: PathBuf,
    classes_jar: PathBuf,
    jar: PathBuf,
}

/// Allocation steps per GC run: enough for dozens of pauses per collector, about a
/// quarter of a second each on an idle machine.
const ALLOC_STEPS: u32 = 12000;

/// The Java programs under the workspace's `fixtures/src` (they also made `fixtures/logs`).
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/src")
}

fn run_ok(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e} (is a JDK 17 installed?)"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Compiles the fixtures and runs every JVM at once (they are short; two cores share them).
fn logs() -> &'static Logs {
    static LOGS: OnceLock<Logs> = OnceLock::new();
    LOGS.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().to_path_buf();
        let classes = d.join("classes");
        run_ok(
            Command::new("javac")
                .arg("-d")
                .arg(&classes)
                .arg(fixtures().join("Alloc.java"))
                .arg(fixtures().join("Loader.java")),
        );
        let jar = d.join("loader.jar");
        run_ok(
            Command::new("jar")
                .arg("cf")
                .arg(&jar)
                .arg("-C")
                .arg(&classes)
                .arg("."),
        );
        let p = |n: &str| d.join(n);
        let deco = "time,uptime,level,tags";
        // (log file, JVM arguments, whether the log is the JVM's stdout)
        let file_log =
            |sel: &str, name: &str| format!("-Xlog:{sel}:file={}:{deco}", p(name).display());
        let alloc = |gc: &str, heap: &str, extra: &[&str], log: String| -> Vec<String> {
            let mut v = vec![gc.to_string(), heap.to_string()];
            v.extend(extra.iter().map(|x| x.to_string()));
            v.extend([log, "Alloc".to_string(), ALLOC_STEPS.to_string()]);
            v
        };
        let loader = |extra: &[&str], log: String, gap: &str| -> Vec<String> {
            let mut v: Vec<String> = extra.iter().map(|x| x.to_string()).collect();
            v.extend([log, "Loader".to_string(), gap.to_string()]);
            v
        };
        let runs: Vec<(PathBuf, Vec<String>, bool)> = vec![
            (
                p("g1.log"),
                alloc("-XX:+UseG1GC", "-Xmx64m", &[], "-Xlog:gc".into()),
                true,
            ),
            (
                p("g1full.log"),
                alloc(
                    "-XX:+UseG1GC",
                    "-Xmx64m",
                    &[],
                    file_log("gc*", "g1full.log"),
                ),
                false,
            ),
            (
                p("g1-1m.log"),
                alloc(
                    "-XX:+UseG1GC",
                    "-Xmx128m",
                    &["-XX:G1HeapRegionSize=1m"],
                    "-Xlog:gc,gc+init".into(),
                ),
                true,
            ),
            (
                p("g1-8m.log"),
                alloc(
                    "-XX:+UseG1GC",
                    "-Xmx128m",
                    &["-XX:G1HeapRegionSize=8m"],
                    "-Xlog:gc,gc+init".into(),
                ),
                true,
            ),
            (
                p("par.log"),
                alloc("-XX:+UseParallelGC", "-Xmx64m", &[], "-Xlog:gc".into()),
                true,
            ),
            (
                p("parfull.log"),
                alloc(
                    "-XX:+UseParallelGC",
                    "-Xmx64m",
                    &[],
                    file_log("gc*", "parfull.log"),
                ),
                false,
            ),
            (
                p("z.log"),
                alloc("-XX:+UseZGC", "-Xmx64m", &[], "-Xlog:gc".into()),
                true,
            ),
            (
                p("zfull.log"),
                alloc("-XX:+UseZGC", "-Xmx64m", &[], file_log("gc*", "zfull.log")),
                false,
            ),
            (
                p("cl.log"),
                loader(&[], "-Xlog:class+load".into(), "400"),
                true,
            ),
            (
                p("clfull.log"),
                loader(&[], file_log("class+load", "clfull.log"), "400"),
                false,
            ),
            (
                p("cldebug.log"),
                loader(&[], file_log("class+load=debug", "cldebug.log"), "10"),
                false,
            ),
            (
                p("clnoshare.log"),
                loader(&["-Xshare:off"], "-Xlog:class+load".into(), "10"),
                true,
            ),
        ];
        let mut children = Vec::new();
        for (out, args, to_stdout) in &runs {
            let mut cmd = Command::new("java");
            cmd.arg("-cp")
                .arg(&classes)
                .args(args)
                .stderr(Stdio::piped());
            if *to_stdout {
                cmd.stdout(std::fs::File::create(out).expect("log file"));
            } else {
                cmd.stdout(Stdio::null());
            }
            children.push((
                cmd.spawn().expect("java (is a JDK 17 installed?)"),
                out.clone(),
            ));
        }
        let mut jar_run = Command::new("java");
        jar_run
            .arg("-cp")
            .arg(&jar)
            .args(["-Xlog:class+load", "Loader", "10"])
            .stdout(std::fs::File::create(p("cljar.log")).expect("log file"));
        children.push((jar_run.spawn().expect("java"), p("cljar.log")));
        for (child, out) in children {
            let o = child.wait_with_output().expect("wait for java");
            assert!(
                o.status.success(),
                "{}: {}",
                out.display(),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        Logs {
            g1_stdout: p("g1.log"),
            g1_full: p("g1full.log"),
            g1_1m: p("g1-1m.log"),
            g1_8m: p("g1-8m.log"),
            parallel_stdout: p("par.log"),
            parallel_full: p("parfull.log"),
            zgc_stdout: p("z.log"),
            zgc_full: p("zfull.log"),
            classes_stdout: p("cl.log"),
            classes_full: p("clfull.log"),
            classes_debug: p("cldebug.log"),
            classes_noshare: p("clnoshare.log"),
            classes_jar: p("cljar.log"),
            jar,
            _dir: dir,
        }
    })
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .expect("read log")
        .lines()
        .map(str::to_string)
        .collect()
}

/// Independent count: a pause summary line is one with " Pause " that ends in a duration.
fn count_pause_lines(p: &Path, also: &str) -> u64 {
    lines(p)
        .iter()
        .filter(|l| l.contains(" Pause ") && l.ends_with("ms") && l.contains(also))
        .count() as u64
}

fn kind_count(s: &gc::GcSummary, kind: &str) -> u64 {
    s.by_kind
        .iter()
        .filter(|(k, _, _)| k.starts_with(kind))
        .map(|(_, _, st)| st.ms.count())
        .sum()
}

#[test]
fn g1_pauses_match_an_independent_count() {
    let l = logs();
    for path in [&l.g1_stdout, &l.g1_full] {
        let s = gc::summarize(path, None).unwrap();
        let pauses = count_pause_lines(path, "");
        assert!(
            pauses > 10,
            "{}: too few pauses to test ({pauses})",
            path.display()
        );
        assert_eq!(s.all.ms.count(), pauses, "{}", path.display());
        assert_eq!(s.all.humongous, count_pause_lines(path, "Humongous"));
        assert!(
            s.all.humongous > 0,
            "the fixture must provoke humongous allocations"
        );
        assert_eq!(
            kind_count(&s, "Full"),
            count_pause_lines(path, "Pause Full")
        );
        assert_eq!(
            kind_count(&s, "Remark"),
            count_pause_lines(path, "Pause Remark")
        );
        let cycles = lines(path)
            .iter()
            .filter(|l| {
                l.contains("GC(")
                    && l.contains(" Concurrent ")
                    && l.contains(" Cycle ")
                    && l.ends_with("ms")
            })
            .count() as u64;
        assert_eq!(s.cycles.iter().map(|c| c.1).sum::<u64>(), cycles);
        let total: f64 = lines(path)
            .iter()
            .filter(|l| l.contains(" Pause ") && l.ends_with("ms"))
            .filter_map(|l| {
                l.rsplit(' ')
                    .next()?
                    .strip_suffix("ms")?
                    .parse::<f64>()
                    .ok()
            })
            .sum();
        assert!(
            (s.all.ms.sum() - total).abs() < 1e-6,
            "{} vs {total}",
            s.all.ms.sum()
        );
        assert_eq!(s.collector.as_deref(), Some("G1"));
        assert!(s.span.is_some_and(|(a, b)| b > a));
    }
    // With -Xlog:gc to stdout the program's own output line is the one not understood.
    let s = gc::summarize(&l.g1_stdout, None).unwrap();
    assert_eq!(s.scan.unknown, 1);
    assert!(s.scan.samples[0].text.starts_with("allocated "));
    // -Xlog:gc* decorations are read: every line is understood, region size is known.
    let s = gc::summarize(&l.g1_full, None).unwrap();
    assert_eq!(s.scan.unknown, 0, "{:?}", s.scan.samples);
    assert_eq!(s.region_size, Some(1 << 20));
}

#[test]
fn parallel_and_zgc_match_an_independent_count() {
    let l = logs();
    for path in [&l.parallel_stdout, &l.parallel_full] {
        let s = gc::summarize(path, None).unwrap();
        assert_eq!(s.collector.as_deref(), Some("Parallel"));
        assert_eq!(s.all.ms.count(), count_pause_lines(path, ""));
        assert_eq!(
            kind_count(&s, "Young"),
            count_pause_lines(path, "Pause Young")
        );
        assert_eq!(
            kind_count(&s, "Full"),
            count_pause_lines(path, "Pause Full")
        );
        assert!(s
            .by_kind
            .iter()
            .any(|(k, c, _)| k == "Young" && c == "Allocation Failure"));
    }
    let stalls = |p: &Path| {
        lines(p)
            .iter()
            .filter(|l| {
                (l.contains("Allocation Stall (") || l.contains("Relocation Stall ("))
                    && l.ends_with("ms")
            })
            .count() as u64
    };
    for path in [&l.zgc_stdout, &l.zgc_full] {
        let s = gc::summarize(path, None).unwrap();
        assert_eq!(s.collector.as_deref(), Some("The Z Garbage Collector"));
        assert_eq!(s.stalls.count(), stalls(path), "{}", path.display());
        let cycles = lines(path)
            .iter()
            .filter(|l| {
                l.contains("] GC(") && l.contains("Garbage Collection (") && l.contains("->")
            })
            .count() as u64;
        assert!(cycles > 0);
        assert_eq!(s.cycles.iter().map(|c| c.1).sum::<u64>(), cycles);
    }
    // ZGC's pauses are only in gc,phases (the -Xlog:gc* file): three per cycle.
    let s = gc::summarize(&l.zgc_full, None).unwrap();
    let pauses = count_pause_lines(&l.zgc_full, "[gc,phases");
    assert!(pauses > 0);
    assert_eq!(s.all.ms.count(), pauses);
    for k in ["Mark Start", "Mark End", "Relocate Start"] {
        assert_eq!(
            kind_count(&s, k),
            count_pause_lines(&l.zgc_full, &format!("Pause {k} "))
        );
    }
    assert_eq!(s.scan.unknown, 0, "{:?}", s.scan.samples);
}

#[test]
fn region_sizes_side_by_side_with_deltas() {
    let l = logs();
    let tables = gc::run(&GcOptions {
        files: vec![l.g1_1m.clone(), l.g1_8m.clone()],
        window: None,
    })
    .unwrap();
    let overview = tables.last().unwrap();
    let md = overview.render(Format::Markdown);
    assert!(md.contains("g1-1m.log (1M regions)"), "{md}");
    assert!(md.contains("g1-8m.log (8M regions)"), "{md}");
    assert!(md.contains("Δ g1-8m.log"), "{md}");
    let one = gc::summarize(&l.g1_1m, None).unwrap();
    let eight = gc::summarize(&l.g1_8m, None).unwrap();
    // 600-1200 KB arrays are humongous in 1 MB regions and ordinary in 8 MB ones.
    assert!(one.all.humongous > 0);
    assert_eq!(eight.all.humongous, 0);
    let v = gc::run_json(&gc::GcOptions {
        files: vec![l.g1_1m.clone(), l.g1_8m.clone()],
        window: None,
    })
    .unwrap();
    assert_eq!(v["files"][0]["region_size_bytes"], 1 << 20);
    assert_eq!(v["files"][1]["region_size_bytes"], 8 << 20);
    assert_eq!(v["files"][0]["pauses"]["humongous"], one.all.humongous);
    assert_eq!(v["files"][1]["pauses"]["humongous"], 0);
    let change = &v["changes"][0];
    assert_eq!(change["humongous_pct"], serde_json::json!(-100.0));
    let expected = (eight.all.ms.count() as f64 - one.all.ms.count() as f64)
        / one.all.ms.count() as f64
        * 100.0;
    assert!((change["pauses_pct"].as_f64().unwrap() - expected).abs() < 1e-9);
}

#[test]
fn windows_partition_the_pauses() {
    let l = logs();
    let s = gc::summarize(&l.g1_full, Some(0.05)).unwrap();
    assert!(s.windows.len() >= 3, "{}", s.windows.len());
    let n: u64 = s.windows.iter().map(|w| w.1.ms.count()).sum();
    assert_eq!(n, s.all.ms.count());
    let h: u64 = s.windows.iter().map(|w| w.1.humongous).sum();
    assert_eq!(h, s.all.humongous);
    let tables = gc::run(&GcOptions {
        files: vec![l.g1_full.clone()],
        window: Some(0.05),
    })
    .unwrap();
    assert!(tables.iter().any(|t| t
        .title
        .as_deref()
        .is_some_and(|x| x.starts_with("GC pauses per 0.05 s window"))));
}

fn uptimes(p: &Path) -> Vec<(f64, String)> {
    lines(p)
        .iter()
        .filter(|l| l.contains(" source: ") && !l.contains("[debug"))
        .map(|l| {
            // The uptime decoration is the one that ends in "s]" and parses as a number.
            let t = l
                .split('[')
                .skip(1)
                .filter_map(|seg| seg.split(']').next())
                .filter_map(|v| v.trim().strip_suffix('s')?.parse::<f64>().ok())
                .next()
                .expect("uptime");
            (t, l.clone())
        })
        .collect()
}

#[test]
fn classload_matches_an_independent_count() {
    let l = logs();
    let opts = ClassLoadOptions::default();
    for path in [&l.classes_stdout, &l.classes_full] {
        let s = classload::summarize(path, &opts).unwrap();
        let ts = uptimes(path);
        assert!(ts.len() > 300);
        assert_eq!(s.classes, ts.len() as u64);
        assert_eq!(
            s.cds,
            ts.iter()
                .filter(|(_, l)| l.ends_with("source: shared objects file"))
                .count() as u64
        );
        assert_eq!(
            s.modules.values().sum::<u64>(),
            ts.iter()
                .filter(|(_, l)| l.contains("source: jrt:/"))
                .count() as u64
        );
        assert!(s.modules.get("java.desktop").is_some_and(|n| *n > 10));
        assert!(s.hidden > 0, "lambdas and LambdaForms are hidden classes");
        assert_eq!(s.first, Some(ts[0].0));
        assert_eq!(
            s.last,
            Some(ts.iter().map(|t| t.0).fold(f64::MIN, f64::max))
        );
        // Gaps: the fixture sleeps 400 ms twice between bursts.
        let (mut gaps, mut total) = (0, 0.0);
        for w in ts.windows(2) {
            let g = w[1].0 - w[0].0;
            if g > 0.3 {
                gaps += 1;
                total += g;
            }
        }
        assert!(gaps >= 2, "{gaps}");
        assert_eq!(s.gaps, gaps);
        assert!((s.gap_total - total).abs() < 1e-9);
        assert!(s.timeline.values().sum::<u64>() == s.classes);
    }
    // =debug adds a klass line per class; they are understood and not counted as classes.
    let s = classload::summarize(&l.classes_debug, &opts).unwrap();
    assert_eq!(s.classes, uptimes(&l.classes_debug).len() as u64);
    assert_eq!(s.scan.unknown, 0, "{:?}", s.scan.samples);
    assert!(s.scan.known > 0);
    // No CDS: nothing from the archive ("0 of 4,827").
    let s = classload::summarize(&l.classes_noshare, &opts).unwrap();
    assert_eq!(s.cds, 0);
    assert!(s.modules.get("java.base").is_some_and(|n| *n > 300));
    // From a jar: the class path row names it.
    let s = classload::summarize(&l.classes_jar, &opts).unwrap();
    let jar = l.jar.display().to_string();
    assert_eq!(s.class_path.get(&jar), Some(&2), "{:?}", s.class_path);
}

#[test]
fn classload_tables_marks_and_plot() {
    let l = logs();
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("timeline.svg");
    let opts = ClassLoadOptions {
        files: vec![l.classes_stdout.clone(), l.classes_noshare.clone()],
        plot: Some(plot.clone()),
        marks: vec!["javax.xml.".into()],
        bucket: 0.1,
        ..ClassLoadOptions::default()
    };
    let tables = classload::run(&opts).unwrap();
    let md = arena_logs::render(&tables, Format::Markdown);
    assert!(md.contains("| from the CDS archive |"), "{md}");
    assert!(md.contains("| 0 of "), "{md}");
    assert!(md.contains("first `javax.xml.` class"), "{md}");
    assert!(md.contains("java.desktop"), "{md}");
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.matches("<rect").count() > 3,
        "{svg}"
    );
    // The mark's count is the number of classes before the first javax.xml class.
    let s = classload::summarize(&l.classes_stdout, &opts).unwrap();
    let ts = uptimes(&l.classes_stdout);
    let before = ts
        .iter()
        .position(|(_, l)| l.contains("] javax.xml."))
        .unwrap() as u64;
    assert_eq!(s.marks[0].1.map(|m| m.1), Some(before));
}

#[test]
fn parallel_chunks_give_the_single_thread_tables() {
    let l = logs();
    for path in [&l.g1_full, &l.zgc_full, &l.parallel_stdout] {
        let one = gc::summarize_with(path, None, 1).unwrap();
        let three = gc::summarize_with(path, None, 3).unwrap();
        let render = |s: &gc::GcSummary| {
            let by_kind: Vec<String> = s
                .by_kind
                .iter()
                .map(|(k, c, st)| {
                    format!(
                        "{k}|{c}|{}|{:.6}|{:?}",
                        st.ms.count(),
                        st.ms.sum(),
                        st.ms.quantile(0.9)
                    )
                })
                .collect();
            format!(
                "{by_kind:?} {:?} {:?} {} {} {:?} {:?} {:?}",
                s.span,
                s.collector,
                s.all.humongous,
                s.stalls.count(),
                s.cycles.iter().map(|c| (&c.0, c.1)).collect::<Vec<_>>(),
                s.heap_after_mb.quantile(0.5),
                s.region_size
            )
        };
        assert_eq!(render(&one), render(&three), "{}", path.display());
        assert_eq!(one.scan, three.scan);
    }
}

/// Compresses `path` into `out` as two gzip members split at a line, the way `cat` joins
/// a rotated pair (`gc.log.0.gz` + `gc.log.1.gz`).
fn gzip_two_members(path: &Path, out: &Path) {
    use std::io::Write;
    let text = std::fs::read(path).unwrap();
    let cut = text[..text.len() / 2]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let mut gz = Vec::new();
    for part in [&text[..cut], &text[cut..]] {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(part).unwrap();
        gz.extend(e.finish().unwrap());
    }
    std::fs::write(out, gz).unwrap();
}

#[test]
fn gzip_of_real_logs_reads_like_the_logs() {
    let l = logs();
    let dir = tempfile::tempdir().unwrap();
    for (i, path) in [&l.g1_full, &l.zgc_full, &l.parallel_stdout]
        .into_iter()
        .enumerate()
    {
        let gz = dir.path().join(format!("gc.log.{i}"));
        gzip_two_members(path, &gz);
        let plain = gc::summarize(path, None).unwrap();
        let packed = gc::summarize(&gz, None).unwrap();
        let render = |s: &gc::GcSummary| {
            let mut scan = s.scan.clone();
            scan.file.clear();
            format!(
                "{:?} {:?} {:?} {} {:?} {:?}",
                scan,
                s.by_kind
                    .iter()
                    .map(|(k, c, st)| (k, c, st.ms.count(), st.ms.sum()))
                    .collect::<Vec<_>>(),
                s.span,
                s.all.humongous,
                s.collector,
                s.heap_after_mb.quantile(0.5)
            )
        };
        assert_eq!(render(&plain), render(&packed), "{}", path.display());
        assert!(plain.all.ms.count() > 0, "{}", path.display());
    }
    let gz = dir.path().join("classes.log.1");
    gzip_two_members(&l.classes_full, &gz);
    let opts = ClassLoadOptions::default();
    let plain = classload::summarize(&l.classes_full, &opts).unwrap();
    let packed = classload::summarize(&gz, &opts).unwrap();
    assert_eq!(
        (
            plain.classes,
            plain.cds,
            plain.first,
            plain.last,
            &plain.modules
        ),
        (
            packed.classes,
            packed.cds,
            packed.first,
            packed.last,
            &packed.modules
        )
    );
    assert_eq!(plain.scan.lines, packed.scan.lines);
}
