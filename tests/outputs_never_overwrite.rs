//! Outputs never overwrite inputs: `report --out`, `gate --summary`, `plot --out`,
//! `compare --plot`, `logs profile --flamegraph` onto a file the command reads or into a run
//! folder it reads exit 2 and leave the input as it was, however the path is spelled
//! (`..`, a symlink); a fresh path still works. `pilot --out` onto an existing run is
//! refused before any browser starts, unless `--force`, which replaces the folder whole.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use arena_compare::synthetic;
use arena_run::Run;

use crate::compare_common::{arena, s};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A synthetic run of `n` loops (lognormal around `median` ms) in `dir/<name>`.
fn write_run(dir: &Path, name: &str, n: usize, median: f64, seed: u64) -> PathBuf {
    let r = synthetic::run(
        "stock",
        &synthetic::lognormal(n, median, 0.3, 0.0, seed),
        6000,
    );
    let out = dir.join(name);
    r.write(&out).unwrap();
    out
}

/// Every file under `dir`, with its bytes, sorted by path.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(snapshot(&p));
        } else {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    out.sort();
    out
}

/// Asserts exit 2 with a message naming `flag` and `names`, and that `run` is untouched.
fn refused(o: &Output, flag: &str, names: &str, run: &Path, before: &[(PathBuf, Vec<u8>)]) {
    assert_eq!(o.status.code(), Some(2), "{}", text(o));
    let err = stderr(o);
    assert!(
        err.contains(flag) && err.contains(names) && err.contains("which this command reads"),
        "{err}"
    );
    assert!(snapshot(run) == before, "{} changed", run.display());
}

#[test]
fn report_out_onto_a_runs_record_exits_2_and_leaves_it_byte_for_byte() {
    let d = tempfile::tempdir().unwrap();
    let run = write_run(d.path(), "run", 160, 50.0, 1);
    let before = snapshot(&run);
    let run_json = run.join("run.json");

    // The old behaviour: run.json replaced by HTML, exit 0.
    let o = arena(&["report", s(&run), "--out", s(&run_json)]);
    refused(&o, "--out", s(&run), &run, &before);
    // A new file inside the run folder is refused too: the folder would lie about itself.
    let o = arena(&["report", s(&run), "--out", s(&run.join("report.html"))]);
    refused(&o, "--out", s(&run), &run, &before);
    // So is the screenshot.
    let html = d.path().join("report.html");
    let png = run.join("report.png");
    let o = arena(&[
        "report",
        s(&run),
        "--out",
        s(&html),
        "--screenshot",
        s(&png),
    ]);
    refused(&o, "--screenshot", s(&run), &run, &before);
    assert!(!html.exists(), "nothing is written before the refusal");

    // A fresh path works.
    let o = arena(&["report", s(&run), "--out", s(&html)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));
    assert!(snapshot(&run) == before);
}

#[test]
fn gate_summary_onto_the_loops_it_reads_exits_2_and_leaves_them_byte_for_byte() {
    let d = tempfile::tempdir().unwrap();
    let base = write_run(d.path(), "base", 400, 50.0, 11);
    let cand = write_run(d.path(), "cand", 400, 50.0, 12);
    let before = snapshot(&cand);
    let gate = |summary: &Path, step: Option<&Path>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_arena-perf"));
        c.args(["gate", "--baseline", s(&base), "--candidate", s(&cand)])
            .args(["--max", "inputToPaint.p50=+20%", "--on-unknown", "pass"])
            .args(["--summary", s(summary)])
            .env_remove("GITHUB_STEP_SUMMARY");
        if let Some(step) = step {
            c.env("GITHUB_STEP_SUMMARY", step);
        }
        c.output().unwrap()
    };

    // The old behaviour: loops.csv replaced by the Markdown table, exit 0.
    let o = gate(&cand.join("loops.csv"), None);
    refused(&o, "--summary", s(&cand), &cand, &before);
    // Appending the step summary to a run's file would corrupt it just the same.
    let fresh = d.path().join("summary.md");
    let o = gate(&fresh, Some(&cand.join("events.jsonl")));
    refused(&o, "$GITHUB_STEP_SUMMARY", s(&cand), &cand, &before);
    assert!(!fresh.exists(), "nothing is written before the refusal");

    // A fresh path works.
    let step = d.path().join("step.md");
    let o = gate(&fresh, Some(&step));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(std::fs::read_to_string(&fresh)
        .unwrap()
        .contains("| inputToPaint p50 |"));
    assert!(std::fs::read_to_string(&step)
        .unwrap()
        .contains("| inputToPaint p50 |"));
    assert!(snapshot(&cand) == before);
}

#[test]
fn a_path_spelled_through_dotdot_or_a_symlink_is_caught() {
    let d = tempfile::tempdir().unwrap();
    let runs = d.path().join("runs");
    let run = write_run(&runs, "a", 160, 50.0, 21);
    let before = snapshot(&run);

    // `./runs/a/../a/run.json`, relative to the working folder.
    let o = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .current_dir(d.path())
        .args(["report", "runs/a", "--out", "./runs/a/../a/run.json"])
        .output()
        .unwrap();
    refused(&o, "--out ./runs/a/../a/run.json", "runs/a", &run, &before);

    // A symlink to the run folder, given as the folder of runs it sits in.
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&run, &link).unwrap();
    let o = arena(&["report", s(&runs), "--out", s(&link.join("run.json"))]);
    refused(&o, "--out", s(&run), &run, &before);
    // A symlink to run.json itself, not yet resolved by anything.
    let file_link = d.path().join("out.svg");
    std::os::unix::fs::symlink(run.join("run.json"), &file_link).unwrap();
    let o = arena(&["plot", s(&link), "--out", s(&file_link)]);
    refused(&o, "--out", s(&link), &run, &before);
    // `compare --plot` into the run folder, through the symlink.
    let o = arena(&["compare", s(&run), "--plot", s(&link)]);
    refused(&o, "--plot", s(&run), &run, &before);

    // Beside the runs, in the folder that holds them, is fine.
    let svg = runs.join("latency.svg");
    let o = arena(&["plot", s(&runs), "--out", s(&svg)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    let o = arena(&["compare", s(&run), "--plot", s(&d.path().join("plots"))]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(snapshot(&run) == before);
}

#[test]
fn a_flame_graph_onto_the_stacks_it_reads_exits_2() {
    let d = tempfile::tempdir().unwrap();
    let stacks = d.path().join("stacks.txt");
    let collapsed = "main;work;deflate 30\nmain;work;paint 70\n";
    std::fs::write(&stacks, collapsed).unwrap();

    let o = arena(&["logs", "profile", s(&stacks), "--flamegraph", s(&stacks)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(stderr(&o).contains("--flamegraph"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&stacks).unwrap(), collapsed);

    let svg = d.path().join("flame.svg");
    let o = arena(&["logs", "profile", s(&stacks), "--flamegraph", s(&svg)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(svg.is_file());
}

#[test]
fn pilot_out_onto_an_existing_run_is_refused_before_any_browser_starts() {
    let d = tempfile::tempdir().unwrap();
    let run = write_run(d.path(), "run", 160, 50.0, 31);
    std::fs::write(run.join("wire.pcap"), "old capture").unwrap();
    let before = snapshot(&run);
    // No Chromium at this path: a run that got as far as the browser would say so instead.
    let pilot = |extra: &[&str]| {
        let mut args = vec!["pilot", "--chrome", "/nonexistent/chromium", "--quiet"];
        args.extend(extra);
        arena(&args)
    };

    // The old behaviour: the run replaced, the old wire.pcap left beside the new run.json.
    let o = pilot(&["--out", s(&run)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = stderr(&o);
    assert!(
        err.contains(s(&run)) && err.contains("already holds a run") && err.contains("--force"),
        "{err}"
    );
    assert!(!err.contains("nonexistent"), "the browser was tried: {err}");
    assert!(snapshot(&run) == before);

    // A folder with only a loops.csv or an events.jsonl is a run too.
    let half = d.path().join("half");
    std::fs::create_dir_all(&half).unwrap();
    std::fs::write(half.join("events.jsonl"), "").unwrap();
    let o = pilot(&["--out", s(&half)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));

    // A folder holding the pilot file read would lose it.
    let own = d.path().join("own");
    std::fs::create_dir_all(&own).unwrap();
    let pilot_file = own.join("pilot.toml");
    std::fs::write(&pilot_file, "").unwrap();
    let o = pilot(&["--pilot", s(&pilot_file), "--out", s(&own)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        stderr(&o).contains("--out") && stderr(&o).contains("pilot.toml"),
        "{}",
        stderr(&o)
    );

    // `--force` needs `--out`; with it the refusal is lifted (and the browser is tried).
    let o = pilot(&["--force"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(stderr(&o).contains("--out"), "{}", stderr(&o));
    let o = pilot(&["--out", s(&run), "--force"]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        !stderr(&o).contains("already holds a run"),
        "{}",
        stderr(&o)
    );
    // The browser never started: the old run stays, no staging folder is left.
    assert!(snapshot(&run) == before);
    let names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
}

#[test]
fn pilot_out_force_replaces_the_whole_folder() {
    // A real pilot run: it shares the machine only with tests that do not measure.
    let _g = crate::support::machine::shared();
    let d = tempfile::tempdir().unwrap();
    let run = write_run(d.path(), "run", 160, 50.0, 41);
    std::fs::write(run.join("wire.pcap"), "old capture").unwrap();
    std::fs::write(run.join("trace.json"), "{}").unwrap();

    let o = arena(&[
        "pilot",
        "--out",
        s(&run),
        "--force",
        "--clicks",
        "5",
        "--knob",
        "los_work=0",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        stderr(&o).contains(&format!("run folder: {}", run.display())),
        "{}",
        stderr(&o)
    );
    let new = Run::load(&run).expect("the new run");
    assert!(new.meta.summary.loops < 160, "{}", new.meta.summary.loops);
    assert!(
        !run.join("wire.pcap").exists() && !run.join("trace.json").exists(),
        "the old run's files stayed beside the new"
    );
    let names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["run"], "a staging or old folder was left");
}
