//! `compare`, `gate` and `plot` through the real binary, on run folders written to disk.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use arena_compare::synthetic;

use crate::compare_common::{arena, s, Scratch};

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Writes a synthetic run of `n` loops (lognormal around `median` ms) and returns its folder.
fn write_run(dir: &Path, arm: &str, n: usize, median: f64, seed: u64) -> PathBuf {
    let r = synthetic::run(arm, &synthetic::lognormal(n, median, 0.3, 0.0, seed), 6000);
    let out = dir.join(format!("{arm}-{seed}"));
    r.write(&out).unwrap();
    out
}

#[test]
fn bad_input_exits_2_naming_the_file() {
    let d = Scratch::new("bad");
    let good = write_run(&d.0, "stock", 150, 50.0, 1);

    // A folder that is not a run.
    let not_run = d.path("not-a-run");
    std::fs::create_dir_all(&not_run).unwrap();
    std::fs::write(not_run.join("notes.txt"), "hello").unwrap();
    let o = arena(&["compare", s(&good), s(&not_run)]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(text(&o).1.contains("not-a-run"), "{}", text(&o).1);

    // Another schema version.
    let v2 = write_run(&d.0, "stock", 150, 50.0, 2);
    let meta = std::fs::read_to_string(v2.join("run.json")).unwrap();
    std::fs::write(
        v2.join("run.json"),
        meta.replace("\"schema_version\": 1", "\"schema_version\": 2"),
    )
    .unwrap();
    let o = arena(&["compare", s(&good), s(&v2)]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o).1;
    assert!(
        err.contains("run.json") && err.contains("schema_version 2"),
        "{err}"
    );
    assert!(err.contains("stock-2"), "{err}");

    // Mixed pilots.
    let other = write_run(&d.0, "lazy-png", 150, 40.0, 3);
    let meta = std::fs::read_to_string(other.join("run.json")).unwrap();
    std::fs::write(
        other.join("run.json"),
        meta.replace(&"0".repeat(64), &"f".repeat(64)),
    )
    .unwrap();
    let o = arena(&["compare", s(&good), s(&other)]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o).1;
    assert!(
        err.contains("lazy-png-3/run.json") && err.contains("different pilots"),
        "{err}"
    );
    let o = arena(&[
        "gate",
        "--baseline",
        s(&good),
        "--candidate",
        s(&other),
        "--max",
        "sendToRecv.p50=+10%",
    ]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));

    // An empty run.
    let empty = d.path("empty");
    synthetic::run("stock", &[], 6000).write(&empty).unwrap();
    let o = arena(&["compare", s(&good), s(&empty)]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o).1;
    assert!(
        err.contains("empty/loops.csv") && err.contains("empty run"),
        "{err}"
    );

    // Bad flags are bad input too.
    let o = arena(&[
        "gate",
        "--baseline",
        s(&good),
        "--candidate",
        s(&good),
        "--max",
        "sendToRecv.p50",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("--max sendToRecv.p50"),
        "{}",
        text(&o).1
    );
    let o = arena(&["compare", s(&good), "--metric", "latency"]);
    assert_eq!(o.status.code(), Some(2));
    let o = arena(&["compare", s(&good), "--baseline", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("nope"));
}

#[test]
fn compare_marks_noise_and_real_changes() {
    let d = Scratch::new("cmp");
    let a1 = write_run(&d.0, "stock", 300, 60.0, 11);
    let b1 = write_run(&d.0, "slow", 300, 90.0, 12);
    let c1 = write_run(&d.0, "same", 300, 60.0, 13);
    let o = arena(&[
        "compare",
        s(&a1),
        s(&b1),
        s(&c1),
        "--metric",
        "inputToPaint",
        "--format",
        "markdown",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let md = text(&o).0;
    let p50 = md
        .lines()
        .find(|l| l.starts_with("| inputToPaint p50 |"))
        .unwrap();
    let cells: Vec<&str> = p50.split('|').map(str::trim).collect();
    // | label | stock | slow | Δ slow | CI slow | p slow | same | Δ same | CI same | p same |
    assert!(
        cells[4].starts_with("**+") && !cells[4].contains('~'),
        "{p50}"
    );
    // The interval's p, times the metric's 3 quantiles.
    let p: f64 = cells[6].parse().unwrap_or(1.0);
    assert!(p <= 0.01, "{p50}");
    assert!(cells[8].ends_with('~') || cells[8].ends_with('='), "{p50}");
    assert!(md.contains("times the metric's 3 quantiles"), "{md}");

    // JSON carries the same facts as data.
    let o = arena(&[
        "compare",
        s(&a1),
        s(&b1),
        "--metric",
        "sendToRecv",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["baseline"], "stock");
    let cand = v["columns"][1].as_str().unwrap();
    let m = &v["metrics"]["sendToRecv"];
    // `.metrics.sendToRecv.p50[...]` is a number, `.n[...]` an integer.
    assert!(m["p50"][cand].as_f64().unwrap() > m["p50"]["stock"].as_f64().unwrap());
    assert!(m["n"]["stock"].is_u64(), "{m}");
    let q = &m["changes"][cand]["p50"];
    assert_eq!(q["verdict"], "higher");
    assert!(q["ci_low"].as_f64().unwrap() > 0.0);

    // Same seed, same intervals: the output is reproducible.
    let again = arena(&[
        "compare",
        s(&a1),
        s(&b1),
        "--metric",
        "sendToRecv",
        "--format",
        "json",
    ]);
    assert_eq!(o.stdout, again.stdout);

    // Per run: columns named "<arm>, run N".
    let a2 = write_run(&d.0, "stock", 300, 60.0, 14);
    let o = arena(&[
        "compare",
        s(&a1),
        s(&b1),
        s(&a2),
        "--by",
        "run",
        "--format",
        "csv",
    ]);
    let header = text(&o).0.lines().next().unwrap().to_string();
    assert!(
        header.contains("\"stock, run 1\"") && header.contains("\"stock, run 2\""),
        "{header}"
    );
    assert!(header.contains("\"slow, run 1\""), "{header}");
}

#[test]
fn idle_arm_and_cold_mixing_are_warned_next_to_the_figure() {
    let d = Scratch::new("warn");
    let busy = write_run(&d.0, "stock", 200, 60.0, 21);
    // The fixture's deploy phase: small replies, phase label `deploy`.
    let mut idle = synthetic::run(
        "deploy",
        &synthetic::lognormal(200, 50.0, 0.3, 0.0, 22),
        900,
    );
    for l in &mut idle.loops {
        l.label = "deploy".into();
    }
    idle.meta.knobs.insert("phase".into(), "deploy".into());
    let idle_dir = d.path("deploy");
    idle.write(&idle_dir).unwrap();
    let o = arena(&[
        "compare",
        s(&busy),
        s(&idle_dir),
        "--metric",
        "inputToPaint",
        "--format",
        "markdown",
    ]);
    let md = text(&o).0;
    let header = md.lines().find(|l| l.starts_with("|  | stock")).unwrap();
    assert!(header.contains("| deploy \u{26a0}"), "{header}");
    assert!(!header.contains("stock \u{26a0}"), "{header}");
    assert!(md.contains("deploy: looks idle: phase 'deploy'"), "{md}");

    // Cold loops: out of the figures by default; in with --include-cold, and then warned.
    let mut cold = synthetic::run(
        "stock",
        &synthetic::lognormal(200, 60.0, 0.3, 0.0, 23),
        6000,
    );
    cold.loops[0].cold = true;
    cold.loops[0].input_to_paint = Some(839.0);
    cold.loops[0].t_paint = Some(cold.loops[0].t_input + 839.0);
    // The summary says what the rows hold, as the pilot's does (the loader checks it).
    cold.meta.summary.count_loops(&cold.loops);
    let cold_dir = d.path("cold");
    cold.write(&cold_dir).unwrap();
    let o = arena(&[
        "compare",
        s(&cold_dir),
        "--metric",
        "inputToPaint",
        "--format",
        "markdown",
    ]);
    let md = text(&o).0;
    assert!(
        !md.contains("839.0ms") && !md.contains("cold_mixed"),
        "{md}"
    );
    assert!(md.contains("| cold loops | 1 |"), "{md}");
    let o = arena(&[
        "compare",
        s(&cold_dir),
        "--metric",
        "inputToPaint",
        "--include-cold",
        "--format",
        "markdown",
    ]);
    let md = text(&o).0;
    assert!(md.contains("| inputToPaint max | 839.0ms |"), "{md}");
    assert!(
        md.contains("1 cold loops mixed into the warm figures"),
        "{md}"
    );

    // A cold loop the pilot did not mark: the first loop far above the rest.
    cold.loops[0].cold = false;
    cold.meta.summary.count_loops(&cold.loops);
    let unmarked = d.path("unmarked");
    cold.write(&unmarked).unwrap();
    let o = arena(&[
        "compare",
        s(&unmarked),
        "--metric",
        "inputToPaint",
        "--format",
        "markdown",
    ]);
    let md = text(&o).0;
    let max = md
        .lines()
        .find(|l| l.starts_with("| inputToPaint max |"))
        .unwrap();
    assert!(max.contains("839.0ms \u{26a0}"), "{max}");
    assert!(md.contains("looks cold but is not marked cold"), "{md}");
}

#[test]
fn gate_fails_only_on_a_significant_regression_past_the_limit() {
    let d = Scratch::new("gate");
    let base: Vec<PathBuf> = (0..2)
        .map(|i| write_run(&d.0, "stock", 200, 60.0, 100 + i))
        .collect();
    let slow: Vec<PathBuf> = (0..2)
        .map(|i| write_run(&d.0, "slow", 200, 82.0, 200 + i))
        .collect();
    let summary = d.path("summary.md");
    let step = d.path("step.md");
    std::fs::write(&step, "earlier step\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .args([
            "gate",
            "--baseline",
            s(&base[0]),
            s(&base[1]),
            "--candidate",
            s(&slow[0]),
            s(&slow[1]),
        ])
        .args([
            "--max",
            "sendToRecv.p50=+10%",
            "--max",
            "inputToPaint:p90=+50%",
        ])
        .args(["--summary", s(&summary)])
        .env("GITHUB_STEP_SUMMARY", &step)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("sendToRecv p50") && out.contains("FAIL: regression past the limit"),
        "{out}"
    );
    assert!(
        out.contains("inputToPaint p90") && out.contains("pass: within the limit"),
        "{out}"
    );
    assert!(
        err.contains("1 of 4 checks failed: sendToRecv p50"),
        "{err}"
    );
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.contains("| sendToRecv p50 |") && md.contains("**FAIL"),
        "{md}"
    );
    let step = std::fs::read_to_string(&step).unwrap();
    assert!(
        step.starts_with("earlier step\n") && step.contains("| sendToRecv p50 |"),
        "{step}"
    );

    // Improvements never fail.
    let o = arena(&[
        "gate",
        "--baseline",
        s(&slow[0]),
        "--candidate",
        s(&base[0]),
        "--max",
        "sendToRecv.p50=+0%",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
}

#[test]
fn gate_raises_no_false_alarm_on_ten_same_arm_comparisons() {
    let d = Scratch::new("noalarm");
    let mut fails = 0;
    for k in 0..10u64 {
        let b = write_run(&d.0, "stock", 150, 60.0, 1000 + 2 * k);
        let c = write_run(&d.0, "stock", 150, 60.0, 1001 + 2 * k);
        let o = arena(&[
            "gate",
            "--baseline",
            s(&b),
            "--candidate",
            s(&c),
            "--max",
            "sendToRecv.p50=+10%",
            "--max",
            "inputToPaint.p90=+10%",
        ]);
        // One run of 150 loops a side may not clear +10 % (exit 4, unknown); the false
        // alarms are the point.
        match o.status.code() {
            Some(0) | Some(4) => {}
            Some(1) => fails += 1,
            other => panic!("exit {other:?}: {:?}", text(&o)),
        }
    }
    assert_eq!(fails, 0, "same-arm comparisons failed the gate");
}

#[test]
fn plot_writes_svg_and_png_by_extension() {
    let d = Scratch::new("plot");
    let a = write_run(&d.0, "stock", 150, 60.0, 31);
    let b = write_run(&d.0, "lazy-png", 150, 45.0, 32);
    for name in ["p.svg", "p.png"] {
        let out = d.path(name);
        let o = arena(&["plot", s(&a), s(&b), "--out", s(&out)]);
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
        assert!(
            text(&o).0.contains("2 arms (stock, lazy-png)"),
            "{}",
            text(&o).0
        );
        let bytes = std::fs::read(&out).unwrap();
        if name.ends_with(".png") {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        } else {
            assert!(bytes.starts_with(b"<svg"));
        }
    }
    let o = arena(&["plot", s(&a), "--out", s(&d.path("p.gif"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("p.gif"));

    // compare --plot writes both beside the table.
    let dir = d.path("plots");
    let o = arena(&["compare", s(&a), s(&b), "--plot", s(&dir)]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(dir.join("latency.svg").is_file() && dir.join("latency.png").is_file());
}

/// Sets `columns` of loops.csv rows `rows` (0-based loop index; row i is line i + 2) to
/// `value`. Synthetic runs hold no quotes or commas in a cell, so a split is exact.
fn set_cells(run: &Path, rows: std::ops::Range<usize>, columns: &[&str], value: &str) {
    let path = run.join("loops.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let header: Vec<String> = lines[0].split(',').map(String::from).collect();
    for c in columns {
        let k = header.iter().position(|h| h == c).unwrap();
        for line in &mut lines[rows.start + 1..rows.end + 1] {
            let mut cells: Vec<&str> = line.split(',').collect();
            cells[k] = value;
            *line = cells.join(",");
        }
    }
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
}

fn gate_p90(base: &Path, cand: &Path) -> Output {
    arena(&[
        "gate",
        "--baseline",
        s(base),
        "--candidate",
        s(cand),
        "--max",
        "sendToRecv.p90=+10%",
    ])
}

#[test]
fn a_candidate_with_inf_or_nan_loops_makes_gate_exit_2_naming_file_and_line() {
    // The reported file: rows 10-59 of 310 with inf (or NaN) times and metrics. The
    // gate used to pass it as "not significant (~)", or drop the NaN rows (n 310 -> 260).
    let d = Scratch::new("nonfinite");
    let base = write_run(&d.0, "stock", 310, 60.0, 41);
    for (k, value) in ["inf", "NaN", "-inf"].into_iter().enumerate() {
        let cand = write_run(&d.0, "stock", 310, 60.0, 42 + k as u64);
        set_cells(
            &cand,
            10..60,
            &["sendToRecv", "inputToPaint", "t_recv"],
            value,
        );
        let o = gate_p90(&base, &cand);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{value}: {out}{err}");
        let at = format!(
            "{}: line 12: t_recv is {value}, not a finite number",
            cand.join("loops.csv").display()
        );
        assert!(err.contains(&at), "{value}: {err}");
        assert!(!out.contains("pass"), "{out}");
        // compare and plot read the same way.
        let o = arena(&["compare", s(&base), s(&cand)]);
        assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
        assert!(text(&o).1.contains(&at), "{}", text(&o).1);
    }
}

#[test]
fn impossible_loop_values_exit_2() {
    let d = Scratch::new("impossible");
    let base = write_run(&d.0, "stock", 150, 60.0, 51);
    // 1e308 used to print as 9,223,372,036,854,775,807ms.
    let huge = write_run(&d.0, "stock", 150, 60.0, 52);
    set_cells(&huge, 3..4, &["inputToPaint"], "1e308");
    let o = arena(&["compare", s(&base), s(&huge)]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(
        err.contains("loops.csv: line 5: inputToPaint is 1e308 ms: out of range"),
        "{err}"
    );
    assert!(!out.contains("9,223,372"), "{out}");
    // -5 used to pass without an invariant warning: it disagrees with its own times.
    let neg = write_run(&d.0, "stock", 150, 60.0, 53);
    set_cells(&neg, 7..8, &["sendToRecv"], "-5");
    let o = gate_p90(&base, &neg);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("loops.csv: line 9: sendToRecv is -5 but t_recv - t_send is"),
        "{err}"
    );
}

#[test]
fn a_renamed_loops_column_exits_2_naming_line_1() {
    // compare and plot used to show the metric as `-` (n=0) and exit 0; gate blamed
    // "every loop unanswered or cold?".
    let d = Scratch::new("renamed");
    let base = write_run(&d.0, "stock", 150, 60.0, 61);
    let cand = write_run(&d.0, "stock", 150, 60.0, 62);
    let path = cand.join("loops.csv");
    let csv = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, csv.replacen("sendToRecv", "sendToRecvMs", 1)).unwrap();
    let plot = d.path("p.svg");
    let runs = [
        arena(&["compare", s(&base), s(&cand)]),
        arena(&["plot", s(&base), s(&cand), "--out", s(&plot)]),
        gate_p90(&base, &cand),
    ];
    for o in runs {
        let err = text(&o).1;
        assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
        assert!(
            err.contains(&format!(
                "{}: line 1: unknown column `sendToRecvMs`; missing column `sendToRecv`",
                path.display()
            )),
            "{err}"
        );
        assert!(!err.contains("unanswered or cold"), "{err}");
    }
    assert!(!plot.exists());
}

#[test]
fn a_garbage_events_line_exits_2() {
    // Tables never keep the events, but they are read: docs/run-format.md promises
    // `events.jsonl: line L` for a malformed line.
    let d = Scratch::new("events");
    let base = write_run(&d.0, "stock", 150, 60.0, 71);
    let cand = write_run(&d.0, "stock", 150, 60.0, 72);
    let ev = r#"{"seq":1,"kind":"ws_send","t_ms":5231.105,"size":14,"class":"input","event":"","trusted":false,"target":0}"#;
    std::fs::write(
        cand.join("events.jsonl"),
        format!("{ev}\n{ev}\n{{\"seq\": oops\n"),
    )
    .unwrap();
    let want = format!("{}: line 3:", cand.join("events.jsonl").display());
    for o in [
        arena(&["compare", s(&base), s(&cand)]),
        gate_p90(&base, &cand),
    ] {
        assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
        assert!(text(&o).1.contains(&want), "{}", text(&o).1);
    }
}

#[test]
fn the_same_run_given_twice_exits_2() {
    // `gate --baseline runs/good runs/good` used to count two runs and drive the
    // run-level bootstrap on one run's copy.
    let d = Scratch::new("twice");
    let good = write_run(&d.0, "stock", 150, 60.0, 81);
    let other = write_run(&d.0, "stock", 150, 60.0, 82);
    let slow = write_run(&d.0, "slow", 150, 90.0, 83);
    let copy = d.path("copy");
    std::fs::create_dir_all(&copy).unwrap();
    for f in ["run.json", "loops.csv", "events.jsonl"] {
        std::fs::copy(good.join(f), copy.join(f)).unwrap();
    }
    let dotted = d.0.join(".").join("stock-81");
    let gate2 = |b: [&Path; 2], c: &Path| {
        arena(&[
            "gate",
            "--baseline",
            s(b[0]),
            s(b[1]),
            "--candidate",
            s(c),
            "--max",
            "sendToRecv.p50=+10%",
            "--on-unknown",
            "pass",
        ])
    };
    for (o, why) in [
        (
            gate2([&good, &good], &slow),
            "the same run folder, given twice",
        ),
        (
            gate2([&good, &dotted], &slow),
            "the same run folder, given twice",
        ),
        (gate2([&good, &copy], &slow), "a copy of it"),
        (
            arena(&["compare", s(&good), s(&slow), s(&good)]),
            "given twice",
        ),
        (gate2([&good, &other], &copy), "are the same run"),
    ] {
        let err = text(&o).1;
        assert_eq!(o.status.code(), Some(2), "{why}: {err}");
        assert!(
            err.contains(why) && err.contains("a run counts once"),
            "{why}: {err}"
        );
    }
    // Two sessions of one arm are two runs.
    let o = gate2([&good, &other], &slow);
    assert_eq!(o.status.code(), Some(1), "{:?}", text(&o));
}

#[test]
fn max_limits_must_be_finite_percents() {
    let d = Scratch::new("limits");
    let good = write_run(&d.0, "stock", 150, 60.0, 91);
    let other = write_run(&d.0, "stock", 150, 60.0, 92);
    for (limit, why) in [
        ("sendToRecv.p90=+10%%", "one '%' at most"),
        (
            "sendToRecv.p90=+1e400%",
            "the limit `+1e400` is not a finite number",
        ),
        (
            "sendToRecv.p90=+inf%",
            "the limit `+inf` is not a finite number",
        ),
        (
            "sendToRecv.p90=NaN",
            "the limit `NaN` is not a finite number",
        ),
        (
            "sendToRecv.pNaN=+10%",
            "the quantile is not a finite number",
        ),
        (
            "sendToRecv.p90=-5%",
            "the limit is an allowed increase, 0 or more",
        ),
        (
            "unanswered=+2%",
            "the unanswered share's limit is in percentage points, not percent",
        ),
        (
            "sendToRecv.p120=+10%",
            "the quantile must be between p0 and p100",
        ),
        (
            "inputToPixels.p50=+10%",
            "the baseline runs have no inputToPixels values",
        ),
    ] {
        let o = arena(&[
            "gate",
            "--baseline",
            s(&good),
            "--candidate",
            s(&other),
            "--max",
            limit,
        ]);
        let err = text(&o).1;
        assert_eq!(o.status.code(), Some(2), "{limit}: {err}");
        assert!(
            err.contains(&format!("--max {limit}: {why}")),
            "{limit}: {err}"
        );
    }
    let o = arena(&[
        "gate",
        "--baseline",
        s(&good),
        "--candidate",
        s(&other),
        "--max",
        "sendToRecv.p90=+10 %",
    ]);
    // Parsed (the space is taken), then decided: one run of 150 loops a side cannot clear
    // +10 % either way, which is unknown (exit 4), not bad input.
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(
        err.contains(
            "1 of 3 checks unknown (sendToRecv p90): the runs cannot tell either way; exit 4"
        ),
        "{err}"
    );
}

#[test]
fn bad_splits_exit_2_listing_what_is_accepted_before_any_work() {
    let d = Scratch::new("split");
    let run = write_run(&d.0, "stock", 40, 50.0, 1);
    for (split, says) in [
        (
            "colour",
            "unknown split `colour` (one of event, label, reply-size=SIZE[,SIZE...]",
        ),
        ("reply-size=1KB,lots", "`lots`: not a size"),
        (
            "reply-size=10KB,1KB",
            "bounds must ascend (10KB before 1KB)",
        ),
        ("reply-size=4KB,4096B", "4KB given twice"),
        ("reply-size", "needs its bucket bounds"),
    ] {
        let o = arena(&["compare", s(&run), "--split", split]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{split}: {out}{err}");
        assert!(err.contains(says), "{split}: {err}");
        assert!(out.is_empty(), "{split}: nothing printed: {out}");
    }
    let o = arena(&[
        "compare",
        s(&run),
        "--split",
        "event",
        "--reply-over",
        "4QB",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("`4QB`: not a size"), "{}", text(&o).1);
    // Every command that takes it refuses a bad split before any work (for the pilot,
    // ab and demo that would be a browser and a run).
    let html = d.path("r.html");
    for args in [
        &["pilot", "--clicks", "1"][..],
        &["ab", "--arms", "stock,lazy-png", "--clicks", "1"],
        &["demo", "--clicks", "1"],
        &["report", s(&run), "--out", s(&html)],
    ] {
        let mut a = args.to_vec();
        a.extend(["--split", "colour"]);
        let o = arena(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}");
        assert!(
            text(&o).1.contains("unknown split `colour`"),
            "{a:?}: {}",
            text(&o).1
        );
    }
    assert!(!html.exists());
}

#[test]
fn compare_prints_a_breakdown_per_split_after_the_comparison() {
    let d = Scratch::new("splits");
    let a = write_run(&d.0, "stock", 40, 50.0, 1);
    let b = write_run(&d.0, "slow", 40, 80.0, 2);
    let o = arena(&[
        "compare",
        s(&a),
        s(&b),
        "--split",
        "event",
        "--split",
        "reply-size=1KB,10KB",
        "--format",
        "markdown",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let at = |needle: &str| {
        out.find(needle)
            .unwrap_or_else(|| panic!("{needle}: {out}"))
    };
    let (cmp, event, size) = (
        at("### Against stock"),
        at("### inputToPaint by input kind, ms; \u{394} against stock's same row"),
        at("### inputToPaint by reply size, ms"),
    );
    assert!(cmp < event && event < size, "{out}");
    // Every synthetic reply is 6,000 B: the middle bucket has all 40 loops of each arm,
    // the others are shown empty.
    assert!(out.contains("| 1KB-10KB | stock | 40 | 40 |"), "{out}");
    assert!(
        out.contains("| <1KB | slow | 0 | 0 | - | - | - | - | - | - |"),
        "{out}"
    );
    assert!(
        out.contains("empty rows (no loop in any column): <1KB, >=10KB"),
        "{out}"
    );
}

/// A copy of `fixtures/runs/NAME` in `d`, its `run.json` changed by `edit`.
fn fixture_copy(d: &Scratch, name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/runs")
        .join(name);
    let to = d.path(name);
    std::fs::create_dir_all(&to).unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
    let path = to.join("run.json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut meta);
    std::fs::write(&path, serde_json::to_string_pretty(&meta).unwrap()).unwrap();
    to
}

/// `compare`, `gate` and `report` on `base` against `cand`, each with the labels its
/// messages give the two runs.
fn three_commands<'a>(
    base: &'a Path,
    cand: &'a Path,
    html: &'a Path,
) -> [(Vec<&'a str>, [&'static str; 2]); 3] {
    let by_column = ["[stock, run 1]", "[lazy-png, run 1]"];
    [
        (vec!["compare", s(base), s(cand)], by_column),
        (
            vec![
                "gate",
                "--baseline",
                s(base),
                "--candidate",
                s(cand),
                "--max",
                "sendToRecv.p50=+10%",
            ],
            ["[baseline run 1 (stock)]", "[candidate run 1 (lazy-png)]"],
        ),
        (
            vec!["report", s(base), s(cand), "--out", s(html)],
            by_column,
        ),
    ]
}

#[test]
fn runs_with_another_answer_oracle_are_refused_unless_allowed() {
    let d = Scratch::new("mixed-oracle");
    let stock = fixture_copy(&d, "stock-1", |_| {});
    // `auto` fell back to the reply oracle on this run; the other got pixels.
    let lazy = fixture_copy(&d, "lazy-png-1", |m| {
        m["answer"]["oracle"] = "reply".into();
        m["answer"]["requested"] = "auto".into();
        m["answer"]["detail"] = "first reply after the send".into();
        m["answer"]["fallback"] = "no canvas to read".into();
    });
    let html = d.path("report.html");
    for (args, err) in
        refused_by_all_three(&stock, &lazy, &html, "answer.oracle", ["pixels", "reply"])
    {
        assert!(err.contains("--allow-mixed"), "{args:?}: {err}");
    }
    assert!(!html.exists(), "report wrote a page of runs it refused");

    // Allowed, the figures come with the warning: under the table, and in JSON.
    let o = arena(&["compare", s(&stock), s(&lazy), "--allow-mixed"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let note = out
        .lines()
        .find(|l| l.contains("answer.oracle differs"))
        .unwrap_or_else(|| panic!("no warning under the table: {out}"));
    assert!(
        note.contains("[stock, run 1]") && note.contains("--allow-mixed"),
        "{note}"
    );
    let o = arena(&[
        "compare",
        s(&stock),
        s(&lazy),
        "--allow-mixed",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mixed: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "mixed")
        .collect();
    assert_eq!(mixed.len(), 1, "{}", v["findings"]);
    assert!(mixed[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("answer.oracle differs: pixels"));
    let o = arena(&[
        "report",
        s(&stock),
        s(&lazy),
        "--out",
        s(&html),
        "--allow-mixed",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(text(&o).1.contains("answer.oracle differs"));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("\"code\":\"mixed\""),
        "the page's data lacks it"
    );
}

/// Runs `compare`, `gate` and `report` on the two runs: each must exit 2 with a line naming
/// `setting`, both values and both runs. Returns each command's arguments and stderr.
fn refused_by_all_three(
    a: &Path,
    b: &Path,
    html: &Path,
    setting: &str,
    values: [&str; 2],
) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    for (args, labels) in three_commands(a, b, html) {
        let o = arena(&args);
        let err = text(&o).1;
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let line = err
            .lines()
            .find(|l| l.contains(setting))
            .unwrap_or_else(|| panic!("{args:?} names no setting: {err}"));
        for word in [values[0], values[1], labels[0], labels[1]] {
            assert!(line.contains(word), "{args:?}: {word} missing from {line}");
        }
        out.push((args.iter().map(|x| x.to_string()).collect(), err));
    }
    out
}

#[test]
fn runs_whose_sockets_were_seen_another_way_are_refused() {
    let d = Scratch::new("mixed-socket");
    let stock = fixture_copy(&d, "stock-1", |_| {});
    let lazy = fixture_copy(&d, "lazy-png-1", |m| m["socket_source"] = "cdp".into());
    let html = d.path("report.html");
    for (_, err) in
        refused_by_all_three(&stock, &lazy, &html, "socket_source", ["page_hook", "cdp"])
    {
        assert!(!err.contains("answer.oracle"), "only what differs: {err}");
    }
    // The recorded runs themselves are alike: arms of one pilot differ only in knobs.
    let lazy = fixture_copy(&d, "lazy-png-2", |_| {});
    let o = arena(&["compare", s(&stock), s(&lazy)]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert!(!text(&o).0.contains("mixed runs"));
}

/// `ab` and `demo` print the verdict under their tables and, with `--format json`, add it
/// to their document as `verdict`. Both need a browser; the verdict itself does not: here
/// it is made from the recorded fixture runs as the binary makes it, set into the
/// document as the binary sets it, and checked against `docs/schema/ab.json`.
#[test]
fn the_verdict_of_the_fixture_runs_fits_the_ab_schema() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dirs: Vec<PathBuf> = ["stock-1", "lazy-png-1", "stock-2", "lazy-png-2"]
        .iter()
        .map(|d| root.join("fixtures/runs").join(d))
        .collect();
    let runs: Vec<arena_run::Run> = dirs
        .iter()
        .map(|d| arena_run::Run::load(d).unwrap())
        .collect();
    let opts = arena_compare::CompareOptions {
        baseline: Some("stock".into()),
        ..Default::default()
    };
    let cmp = arena_compare::compare(&runs, &opts).unwrap();
    let v = arena_compare::verdicts(&runs, &cmp, &opts);
    let list: Vec<_> = runs
        .iter()
        .zip(&dirs)
        .map(|(r, d)| (r, Some(d.as_path())))
        .collect();
    let mut doc = arena_compare::ab_json("demo", &list, Some(&cmp));
    doc["verdict"] = v.to_json();
    let arm = &doc["verdict"]["arms"][0];
    assert_eq!(arm["arm"], "lazy-png");
    assert_eq!(arm["rounds"].as_array().unwrap().len(), 2);
    assert_eq!(arm["bytes"]["identical"], true, "{arm:#}");
    assert!(arm["sentence"].as_str().unwrap().starts_with("lazy-png: "));
    // Two runs a side: the between-run spread is measured, and with the loops' spread it
    // makes the whole of the interval's variance.
    let spread = &arm["quantiles"]["p90"]["spread"];
    assert_eq!(spread["source"], "runs", "{spread:#}");
    assert!(spread["run_sd_ms"].as_f64().unwrap() >= 0.0);
    assert!(spread["loop_sd_ms"].as_f64().unwrap() > 0.0);
    assert!((0.0..=1.0).contains(&spread["between_share"].as_f64().unwrap()));
    let validator = ab_schema(&root);
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{doc:#}");
    // The schema is closed: a verdict figure as text, or a key it does not know, fails.
    let mut bad = doc.clone();
    bad["verdict"]["arms"][0]["quantiles"]["p50"]["delta"] = serde_json::json!("-1.0ms");
    assert!(!validator.is_valid(&bad));
    let mut bad = doc;
    bad["verdict"]["arms"][0]["faster"] = serde_json::json!(true);
    assert!(!validator.is_valid(&bad));
}

/// `docs/schema/ab.json` with the schemas it refers to registered under their `$id`.
fn ab_schema(root: &Path) -> jsonschema::Validator {
    let dir = root.join("docs/schema");
    let read = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let mut registry = jsonschema::Registry::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let s = read(&p);
            let id = s["$id"].as_str().unwrap().to_string();
            registry = registry.add(id, s).unwrap();
        }
    }
    let registry = registry.prepare().unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_registry(&registry)
        .build(&read(&dir.join("ab.json")))
        .unwrap()
}

#[test]
fn compare_shows_gestures_apart_from_the_clicks_and_refuses_a_damaged_move_row() {
    let d = Scratch::new("gestures");
    let a = write_run(&d.0, "stock", 150, 50.0, 1);
    let b = write_run(&d.0, "lazy", 150, 50.0, 2);
    let plain = arena(&["compare", s(&a), s(&b)]);
    assert_eq!(plain.status.code(), Some(0), "{:?}", text(&plain));
    assert!(!text(&plain).0.contains("gestures"), "{}", text(&plain).0);
    crate::compare_common::write_hover(&a, &[30.0; 40]);
    crate::compare_common::write_hover(&b, &[70.0; 50]);
    let o = arena(&["compare", s(&a), s(&b)]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let out = text(&o).0;
    // The clicks' table is the same as without the gestures; the gestures follow it.
    assert!(out.starts_with(text(&plain).0.trim_end()), "{out}");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("hover \u{2506} move-to-pixels"))
        .collect();
    assert_eq!(rows.len(), 1, "{out}");
    for want in ["40", "30.0ms", "50", "70.0ms"] {
        assert!(rows[0].contains(want), "{want} in {}", rows[0]);
    }
    assert!(
        out.contains("40 / 0 / 0") && out.contains("50 / 0 / 0"),
        "{out}"
    );

    // A damaged row: its file and line.
    let csv = std::fs::read_to_string(b.join("moves.csv")).unwrap();
    std::fs::write(
        b.join("moves.csv"),
        csv.replacen(",answered\n", ",answred\n", 3),
    )
    .unwrap();
    let o = arena(&["compare", s(&a), s(&b)]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    let err = text(&o).1;
    assert!(
        err.contains("moves.csv: line 2") && err.contains("answred"),
        "{err}"
    );
}
