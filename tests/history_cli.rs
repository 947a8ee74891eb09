//! `history` and `gate --baseline-history` through the real binary, on run folders written
//! to disk and an SQLite history in a scratch folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use arena_compare::synthetic;
use serde_json::Value;

use crate::compare_common::{arena, s, Scratch};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A synthetic run of `n` loops, lognormal around `median` ms plus `shift` ms.
fn write_run(dir: &Path, arm: &str, n: usize, median: f64, shift: f64, seed: u64) -> PathBuf {
    let r = synthetic::run(
        arm,
        &synthetic::lognormal(n, median, 0.3, shift, seed),
        6000,
    );
    let out = dir.join(format!("{arm}-{seed}"));
    r.write(&out).unwrap();
    out
}

/// `history add` of `runs` on `branch` at `commit`, testbed `ci-1`.
fn add(db: &Path, branch: &str, commit: &str, runs: &[PathBuf]) -> Output {
    let mut args = vec!["history", "add", "--db", s(db), "--branch", branch];
    args.extend(["--commit", commit, "--testbed", "ci-1", "--format", "json"]);
    args.extend(runs.iter().map(|p| s(p)));
    arena(&args)
}

fn json(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", text(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

/// `doc` against `docs/schema/<name>` (the history schemas refer to no other).
fn assert_schema(name: &str, doc: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/schema")
        .join(name);
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let v = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}:\n{}\n{doc:#}", errors.join("\n"));
}

fn listed(db: &Path, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["history", "list", "--db", s(db), "--format", "json"];
    args.extend(extra);
    json(&arena(&args))["runs"].as_array().unwrap().clone()
}

#[test]
fn add_list_and_show_round_trip() {
    let d = Scratch::new("hist-rt");
    let db = d.path("h.sqlite");
    let runs: Vec<PathBuf> = (1..=3)
        .map(|i| write_run(&d.0, "stock", 40, 50.0, 0.0, i))
        .collect();
    let o = json(&add(&db, "main", "c1", &runs));
    assert_schema("history-add.json", &o);
    assert_eq!(o["kind"], "history_add");
    let stored: Vec<&str> = o["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["stored"].as_str().unwrap())
        .collect();
    assert_eq!(stored, ["added"; 3]);
    let lazy = write_run(&d.0, "lazy-png", 30, 40.0, 0.0, 9);
    json(&add(&db, "feature", "c2", std::slice::from_ref(&lazy)));

    let doc = json(&arena(&[
        "history",
        "list",
        "--db",
        s(&db),
        "--format",
        "json",
    ]));
    assert_schema("history-list.json", &doc);
    let all = listed(&db, &[]);
    assert_eq!(all.len(), 4);
    assert_eq!(all[0]["source"], s(&runs[0]));
    assert_eq!(
        (all[3]["arm"].as_str(), all[3]["branch"].as_str()),
        (Some("lazy-png"), Some("feature"))
    );
    assert_eq!(listed(&db, &["--branch", "main"]).len(), 3);
    assert_eq!(listed(&db, &["--arm", "lazy-png"]).len(), 1);
    assert_eq!(listed(&db, &["--testbed", "ci-1", "--last", "2"]).len(), 2);
    assert!(listed(&db, &["--since", "2027-01-01"]).is_empty());
    let o = arena(&["history", "list", "--db", s(&db), "--since", "yesterday"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--since yesterday"), "{}", text(&o));

    let id = all[3]["id"].as_i64().unwrap().to_string();
    let shown = json(&arena(&[
        "history",
        "show",
        &id,
        "--db",
        s(&db),
        "--format",
        "json",
    ]));
    assert_schema("history-run.json", &shown);
    assert_eq!(shown["run"]["commit"], "c2");
    assert_eq!(shown["stored"]["loops"], 30);
    let table = arena(&["history", "show", &id, "--db", s(&db)]);
    assert!(
        text(&table).contains("lazy-png") && text(&table).contains("feature"),
        "{}",
        text(&table)
    );
    let md = arena(&["history", "list", "--db", s(&db), "--format", "markdown"]);
    assert!(text(&md).contains("| id |"), "{}", text(&md));

    let o = arena(&["history", "show", "99", "--db", s(&db)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no stored run 99"), "{}", text(&o));
}

#[test]
fn a_run_added_twice_or_copied_is_stored_once() {
    let d = Scratch::new("hist-dup");
    let db = d.path("h.sqlite");
    let run = write_run(&d.0, "stock", 40, 50.0, 0.0, 1);
    let copy = d.path("copy-of-run");
    std::fs::create_dir_all(&copy).unwrap();
    for f in std::fs::read_dir(&run).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, copy.join(f.file_name().unwrap())).unwrap();
    }
    json(&add(&db, "main", "c1", std::slice::from_ref(&run)));
    let again = json(&add(&db, "main", "c1", &[run.clone(), copy]));
    let stored: Vec<&str> = again["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["stored"].as_str().unwrap())
        .collect();
    assert_eq!(stored, ["already stored"; 2]);
    assert_eq!(listed(&db, &[]).len(), 1);
}

#[test]
fn a_run_folder_failing_validation_stores_nothing() {
    let d = Scratch::new("hist-bad");
    let db = d.path("h.sqlite");
    let good = write_run(&d.0, "stock", 40, 50.0, 0.0, 1);
    let bad = write_run(&d.0, "stock", 40, 50.0, 0.0, 2);
    let loops = std::fs::read_to_string(bad.join("loops.csv")).unwrap();
    std::fs::write(
        bad.join("loops.csv"),
        loops.replacen("firing", "firing,extra", 1),
    )
    .unwrap();
    let o = add(&db, "main", "c1", &[good, bad]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("stock-2") && text(&o).contains("loops.csv"),
        "{}",
        text(&o)
    );
    assert!(!db.exists() || listed(&db, &[]).is_empty());
}

#[test]
fn eight_writers_adding_25_runs_each_store_200() {
    let d = Scratch::new("hist-conc");
    let db = d.path("h.sqlite");
    let runs: Vec<PathBuf> = (0..200)
        .map(|i| write_run(&d.0, "stock", 12, 50.0, 0.0, 1000 + i))
        .collect();
    let mut children: Vec<_> = runs
        .chunks(25)
        .map(|chunk| {
            Command::new(env!("CARGO_BIN_EXE_arena-perf"))
                .args([
                    "history",
                    "add",
                    "--db",
                    s(&db),
                    "--branch",
                    "main",
                    "--commit",
                    "c1",
                ])
                .args(["--testbed", "ci-1"])
                .args(chunk)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<Output> = children
        .drain(..)
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    for o in &outs {
        assert_eq!(o.status.code(), Some(0), "{}", text(o));
    }
    let all = listed(&db, &[]);
    assert_eq!(all.len(), 200);
    let mut sources: Vec<&str> = all.iter().map(|r| r["source"].as_str().unwrap()).collect();
    sources.sort();
    let mut want: Vec<&str> = runs.iter().map(|p| s(p)).collect();
    want.sort();
    assert_eq!(sources, want, "every run once");
    let mut hashes: Vec<&str> = all
        .iter()
        .map(|r| r["content_hash"].as_str().unwrap())
        .collect();
    hashes.sort();
    hashes.dedup();
    assert_eq!(hashes.len(), 200);
}

/// `history trend` on `db`'s main branch, as JSON.
fn trend(db: &Path) -> Value {
    let o = arena(&[
        "history",
        "trend",
        "inputToPaint.p50",
        "--branch",
        "main",
        "--db",
        s(db),
        "--format",
        "json",
    ]);
    json(&o)
}

#[test]
fn trend_names_the_step_where_the_arm_switches_to_delay40_and_none_on_a_flat_series() {
    let d = Scratch::new("hist-trend");
    let (db, flat) = (d.path("h.sqlite"), d.path("flat.sqlite"));
    for i in 0..40u64 {
        let (arm, shift) = if i < 25 {
            ("stock", 0.0)
        } else {
            ("delay40", 40.0)
        };
        let run = write_run(&d.0, arm, 120, 50.0, shift, 500 + i);
        json(&add(&db, "main", &format!("c{i:02}"), &[run]));
        let same = write_run(&d.0, "stock", 120, 50.0, 0.0, 900 + i);
        json(&add(&flat, "main", &format!("c{i:02}"), &[same]));
    }
    let t = trend(&db);
    assert_schema("history-trend.json", &t);
    assert_eq!(t["points"].as_array().unwrap().len(), 40);
    let steps = t["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert_eq!(steps[0]["at"], 25);
    assert_eq!(steps[0]["commit"], "c25");
    let size = steps[0]["size_ms"].as_f64().unwrap();
    assert!((size - 40.0).abs() <= 5.0, "{size}");
    assert!(
        steps[0]["lo_ms"].as_f64().unwrap() <= size && size <= steps[0]["hi_ms"].as_f64().unwrap()
    );
    let table = arena(&[
        "history",
        "trend",
        "inputToPaint.p50",
        "--branch",
        "main",
        "--db",
        s(&db),
    ]);
    assert!(
        text(&table).contains("step at #26") && text(&table).contains("c25"),
        "{}",
        text(&table)
    );

    // A 40 ms step is under a 50 ms floor; a floor that is not a size is refused.
    let floor = |ms: &str| {
        let args = ["history", "trend", "inputToPaint.p50", "--db", s(&db)];
        arena(&[&args[..], &[&format!("--min-step={ms}")[..]]].concat())
    };
    let o = floor("50");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("no step") && text(&o).contains("steps under 50 ms are not reported"),
        "{}",
        text(&o)
    );
    for bad in ["-1", "NaN", "inf"] {
        let o = floor(bad);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(text(&o).contains("--min-step"), "{}", text(&o));
    }

    let t = trend(&flat);
    assert!(t["steps"].as_array().unwrap().is_empty(), "{t}");

    // `report --history` draws the trend with the step marked where it starts.
    let html = d.path("r.html");
    let o = arena(&[
        "report",
        "--history-branch",
        "main",
        "--last",
        "3",
        "--testbed",
        "ci-1",
        "--db",
        s(&db),
        "--history",
        "--out",
        s(&html),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    let section = &page[page
        .find("<section id=\"history\">")
        .expect("the trend section")..];
    assert!(section.contains("<svg"), "drawn");
    assert!(section.contains("step at #26 (commit c25): +"), "marked");
    assert_eq!(section.matches("<circle").count(), 40, "a point a run");
}

fn gate(db: &Path, candidate: &[PathBuf], testbed: &str) -> Output {
    let mut args = vec![
        "gate",
        "--baseline-history",
        "main",
        "--last",
        "10",
        "--db",
        s(db),
    ];
    args.extend([
        "--testbed",
        testbed,
        "--max",
        "inputToPaint.p50=+20%",
        "--on-unknown",
        "pass",
    ]);
    args.push("--candidate");
    args.extend(candidate.iter().map(|p| s(p)));
    arena(&args)
}

#[test]
fn gate_against_history_fails_a_delay40_candidate_and_passes_a_stock_one() {
    let d = Scratch::new("hist-gate");
    let db = d.path("h.sqlite");
    // Older runs of another arm first: the baseline is the last 10 stock runs, not these.
    for i in 0..3u64 {
        json(&add(
            &db,
            "main",
            "old",
            &[write_run(&d.0, "slow", 150, 90.0, 0.0, 50 + i)],
        ));
    }
    for i in 0..12u64 {
        json(&add(
            &db,
            "main",
            &format!("c{i}"),
            &[write_run(&d.0, "stock", 150, 60.0, 0.0, 100 + i)],
        ));
    }
    // A regression of the code, not of a knob: the baseline's own arm, 40 ms slower (a
    // baseline is the candidate's arm and knobs, crates/arena-history/src/select.rs).
    let delayed: Vec<PathBuf> = (0..2)
        .map(|i| write_run(&d.0, "stock", 150, 60.0, 40.0, 300 + i))
        .collect();
    let o = gate(&db, &delayed, "ci-1");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("last 10 stored runs of main"),
        "{}",
        text(&o)
    );
    let stock: Vec<PathBuf> = (0..2)
        .map(|i| write_run(&d.0, "stock", 150, 60.0, 0.0, 400 + i))
        .collect();
    let o = gate(&db, &stock, "ci-1");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    // History flags without --baseline-history, or with --baseline too, are refused.
    let (b, c) = (s(&stock[0]), s(&stock[1]));
    let lim = "inputToPaint.p50=+20%";
    let o = arena(&[
        "gate",
        "--last",
        "3",
        "--baseline",
        b,
        "--candidate",
        c,
        "--max",
        lim,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--last chooses the history baseline"),
        "{}",
        text(&o)
    );
    let both = [
        "gate",
        "--baseline-history",
        "main",
        "--baseline",
        b,
        "--candidate",
        c,
    ];
    let o = arena(&[&both[..], &["--max", lim, "--db", s(&db)]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));

    // Another testbed's history holds nothing for this candidate.
    let o = gate(&db, &stock, "elsewhere");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("no stored run of branch main on testbed elsewhere"),
        "{}",
        text(&o)
    );
}

fn refused(db: &Path, why: &str) {
    let before = std::fs::read(db).unwrap();
    let run = PathBuf::from("fixtures/runs/stock-1");
    let o = add(db, "main", "c1", &[run]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = text(&o);
    assert!(err.contains(s(db)) && err.contains(why), "{err}");
    assert!(
        std::fs::read(db).unwrap() == before,
        "{}: the file is left as it was",
        s(db)
    );
    let o = arena(&["history", "list", "--db", s(db)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn a_db_that_is_not_this_tools_history_exits_2_naming_the_cause() {
    let d = Scratch::new("hist-db");
    let notes = d.path("notes.txt");
    std::fs::write(&notes, "not a database\n").unwrap();
    refused(&notes, "not an SQLite database");

    let other = d.path("other-app.sqlite");
    let c = rusqlite::Connection::open(&other).unwrap();
    c.execute_batch("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)")
        .unwrap();
    drop(c);
    refused(&other, "not an arena-perf history");

    let newer = d.path("newer.sqlite");
    json(&add(
        &newer,
        "main",
        "c1",
        &[PathBuf::from("fixtures/runs/stock-2")],
    ));
    let c = rusqlite::Connection::open(&newer).unwrap();
    c.execute("UPDATE schema_version SET version = version + 1", [])
        .unwrap();
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    drop(c);
    let v = arena_history::SCHEMA_VERSION;
    refused(
        &newer,
        &format!(
            "history schema version {} is newer than this arena-perf reads (version {v})",
            v + 1
        ),
    );
}

#[test]
fn compare_and_report_take_a_branchs_newest_runs_or_runs_by_id_from_the_history() {
    let d = Scratch::new("hist-sel");
    let db = d.path("h.sqlite");
    for i in 0..4u64 {
        let run = write_run(&d.0, "stock", 60, 50.0, 0.0, 700 + i);
        json(&add(&db, "main", &format!("c{i}"), &[run]));
    }
    let slower = write_run(&d.0, "stock", 60, 50.0, 30.0, 800);
    let sel = ["--db", s(&db), "--testbed", "ci-1"];
    let o = arena(
        &[
            &["compare", "--history-branch", "main", "--last", "3"][..],
            &sel,
            &[s(&slower), "--format", "markdown"],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = text(&o);
    // The stored runs are their own column, the baseline, and the note names them.
    assert!(out.contains("stock@main"), "{out}");
    assert!(out.contains("stored runs 2, 3, 4"), "{out}");
    // The folder run, 30 ms slower, reads significantly slower than the stored ones.
    let p50 = out.lines().find(|l| l.starts_with("| inputToPaint p50"));
    assert!(p50.is_some_and(|l| l.contains("**+")), "{out}");

    // `compare --by run` of two stored runs by id.
    let by_ids = |a: &str, b: &str| {
        let ids = ["--history-run", a, "--history-run", b];
        arena(&[&["compare", "--db", s(&db), "--by", "run"][..], &ids].concat())
    };
    let o = by_ids("1", "4");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("stock@#1") && text(&o).contains("stock@#4"),
        "{}",
        text(&o)
    );

    let html = d.path("r.html");
    let o = arena(
        &[
            &["report", "--history-branch", "main", "--out", s(&html)][..],
            &sel,
            &[s(&slower)],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("stock@main"), "the report's columns");

    // A --db without a selection, and a branch with nothing stored, are exit 2.
    let o = arena(&["compare", "--db", s(&db), s(&slower)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--db names the history"), "{}", text(&o));
    // One stored run named twice would be pooled as two sessions.
    let o = by_ids("4", "4");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--history-run 4 is given twice"),
        "{}",
        text(&o)
    );
    let o = arena(&[&["compare", "--history-branch", "nowhere"][..], &sel].concat());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("no stored run of branch nowhere"),
        "{}",
        text(&o)
    );
}

/// `plan` from the testbed's stored runs of an arm reads what it reads from the same runs'
/// folders: the history is a pilot's source like any other.
#[test]
fn plan_from_the_history_of_an_arm_is_the_plan_of_its_folders() {
    let d = Scratch::new("hist-plan");
    let db = d.path("h.sqlite");
    let (mut stock, mut lazy) = (Vec::new(), Vec::new());
    for i in 0..3u64 {
        stock.push(write_run(&d.0, "stock", 80, 50.0, 0.0, 900 + i));
        lazy.push(write_run(&d.0, "lazy", 80, 40.0, 0.0, 950 + i));
        json(&add(&db, "main", "c1", &[stock[i as usize].clone()]));
        json(&add(&db, "main", "c1", &[lazy[i as usize].clone()]));
    }
    let plan = |extra: &[&str]| {
        let mut args = vec![
            "plan",
            "--detect",
            "inputToPaint.p90=+10%",
            "--format",
            "json",
        ];
        args.extend(extra);
        json(&arena(&args))
    };
    let sel = [
        "--history-branch",
        "main",
        "--db",
        s(&db),
        "--testbed",
        "ci-1",
    ];
    for (arm, folders) in [("stock", &stock), ("lazy", &lazy)] {
        let stored = plan(&[&sel[..], &["--arm", arm]].concat());
        let given: Vec<&str> = folders.iter().map(|p| s(p)).collect();
        assert_eq!(stored, plan(&given), "{arm}");
        assert_eq!(stored["pilot_runs"], 3, "{arm}: {stored}");
    }
    // The newest stored run's arm without --arm; an arm never stored is exit 2 naming it.
    assert_eq!(
        plan(&sel),
        plan(&lazy.iter().map(|p| s(p)).collect::<Vec<_>>())
    );
    let o = arena(
        &[
            &["plan", "--detect", "inputToPaint.p90=+10%"][..],
            &sel,
            &["--arm", "nope"],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("of arm nope"), "{}", text(&o));
}

/// The history is an input of every command that could write over it: `--out`,
/// `--summary` and `--plot` onto the database (named by `--db`, by `ARENA_PERF_DB`, or
/// through a symlink) are exit 2, and the history is left as it was.
#[test]
fn outputs_onto_the_history_database_are_refused_and_it_is_kept() {
    let d = Scratch::new("hist-out");
    let db = d.0.join("h.sqlite");
    let runs: Vec<PathBuf> = (0..2)
        .map(|i| write_run(&d.0, "stock", 60, 50.0, 0.0, 900 + i))
        .collect();
    assert_eq!(add(&db, "main", "c1", &runs).status.code(), Some(0));
    let before = std::fs::read(&db).unwrap();
    let link = d.0.join("link.html");
    std::os::unix::fs::symlink(&db, &link).unwrap();
    let plots = d.0.join("plots");
    std::fs::create_dir_all(&plots).unwrap();
    std::os::unix::fs::symlink(&db, plots.join("latency.svg")).unwrap();
    let sel = [
        "--history-branch",
        "main",
        "--testbed",
        "ci-1",
        "--db",
        s(&db),
    ];
    let refused = |o: Output, what: &str| {
        assert_eq!(o.status.code(), Some(2), "{what}: {}", text(&o));
        assert!(text(&o).contains("would overwrite"), "{what}: {}", text(&o));
        assert_eq!(
            std::fs::read(&db).unwrap(),
            before,
            "{what}: the history is kept"
        );
    };
    refused(
        arena(&[&["report", "--out", s(&db)][..], &sel].concat()),
        "report",
    );
    refused(
        arena(&[&["report", "--out", s(&link)][..], &sel].concat()),
        "symlink",
    );
    refused(
        arena(&[&["compare", "--plot", s(&plots)][..], &sel].concat()),
        "plot",
    );
    let (b, c) = (s(&runs[0]), s(&runs[1]));
    let gate = [
        "gate",
        "--baseline",
        b,
        "--candidate",
        c,
        "--max",
        "inputToPaint.p50=+10%",
    ];
    let by_env = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .args(gate)
        .args(["--summary", s(&db)])
        .env("ARENA_PERF_DB", &db)
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    refused(by_env, "gate --summary onto $ARENA_PERF_DB");

    // A history no flag of the command names is a database all the same: a report or a
    // plot linked onto it is refused, not written over (it was, exit 0).
    refused(
        arena(&["report", b, c, "--out", s(&link)]),
        "report of run folders",
    );
    refused(
        arena(&["compare", b, c, "--plot", s(&plots)]),
        "plot of run folders",
    );
}

/// `arena-perf ARGS` as a process that may not write `db` or its folder: as root (CI),
/// as user nobody through util-linux's `setpriv`, for whom the 0444 file and 0555 folder
/// are what they say; as anyone else, the modes alone.
fn as_reader(db: &Path, args: &[&str]) -> Output {
    use std::os::unix::fs::PermissionsExt;
    let set = |p: &Path, mode| std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode));
    set(db, 0o444).unwrap();
    set(db.parent().unwrap(), 0o555).unwrap();
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let bin = env!("CARGO_BIN_EXE_arena-perf");
    let mut c = Command::new(if root { "setpriv" } else { bin });
    if root {
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", bin]);
    }
    let o = c
        .args(args)
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    set(db.parent().unwrap(), 0o755).unwrap();
    o
}

/// A history shared read-only (another user's file, a read-only mount) is listed, shown
/// and gated against as it is, with no `-shm` file SQLite could not create beside it;
/// adding to it is exit 2 naming why, and it is left as it was.
#[test]
fn a_read_only_history_is_listed_shown_and_gated_against_and_adding_is_refused() {
    let d = Scratch::new("hist-ro");
    let shared = d.path("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let db = shared.join("h.sqlite");
    let runs: Vec<PathBuf> = (0..3)
        .map(|i| write_run(&d.0, "stock", 60, 50.0, 0.0, 40 + i))
        .collect();
    json(&add(&db, "main", "c1", &runs[..2]));
    let before = std::fs::read(&db).unwrap();

    let list = json(&as_reader(
        &db,
        &["history", "list", "--db", s(&db), "--format", "json"],
    ));
    assert_eq!(list["runs"].as_array().unwrap().len(), 2, "{list}");
    let show = as_reader(&db, &["history", "show", "1", "--db", s(&db)]);
    assert_eq!(show.status.code(), Some(0), "{}", text(&show));
    let gate = as_reader(
        &db,
        &[
            "gate",
            "--baseline-history",
            "main",
            "--testbed",
            "ci-1",
            "--db",
            s(&db),
            "--candidate",
            s(&runs[2]),
            "--max",
            "inputToPaint.p50=+50%",
        ],
    );
    assert_eq!(gate.status.code(), Some(0), "{}", text(&gate));

    let o = as_reader(&db, &["history", "add", "--db", s(&db), s(&runs[2])]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("read-only"), "{}", text(&o));
    assert_eq!(std::fs::read(&db).unwrap(), before, "the history is kept");
    let beside: Vec<_> = std::fs::read_dir(&shared).unwrap().flatten().collect();
    assert_eq!(beside.len(), 1, "nothing beside it: {beside:?}");
}

/// A history the environment names is refused as the environment's, not as a `--db` the
/// user never gave.
#[test]
fn a_history_named_by_the_environment_is_refused_as_its_own() {
    let o = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .args(["history", "list"])
        .env("ARENA_PERF_DB", "http://x")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("the history $ARENA_PERF_DB names (no --db given)"),
        "{t}"
    );
    assert!(t.contains("`http://` is no database"), "{t}");
    // Given as --db, the flag is named as before, and the environment not at all.
    let o = arena(&["history", "list", "--db", "http://x"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!text(&o).contains("ARENA_PERF_DB"), "{}", text(&o));
}
