use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use arena_compare::synthetic;
use arena_run::{CpuPhase, CpuProcess, RunCpu, Warning};

use super::*;
use crate::context::Origin;

fn origin(branch: &str) -> Origin {
    Origin {
        branch: Some(branch.into()),
        commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
        testbed: "bench-1".into(),
    }
}

/// A synthetic run with every part a store keeps: loops, records, setup records,
/// warnings and CPU by phase.
fn full_run(seed: u64) -> Run {
    let mut r = synthetic::run(
        "stock",
        &synthetic::lognormal(40, 50.0, 0.3, 0.0, seed),
        6000,
    );
    r.events = (0..30)
        .map(|i| Event {
            seq: i,
            kind: if i % 3 == 0 { "ws_recv" } else { "paint" }.into(),
            t_ms: 1000.0 + i as f64 * 7.25,
            size: (i * 100) as u32,
            class: String::new(),
            event: "mousedown".into(),
            trusted: i % 2 == 0,
            target: 1,
            answers: (i % 5 == 0).then_some(i),
        })
        .collect();
    r.setup_events = Some(r.events[..4].to_vec());
    r.meta.warnings = vec![Warning::new("unanswered", "2 of 40 loops unanswered")];
    r.meta.cpu = Some(RunCpu {
        interval_ms: 100.0,
        samples: 12,
        cores: 2,
        sampler_cpu_s: 0.01,
        phases: vec![
            CpuPhase {
                name: "setup".into(),
                start_s: 0.0,
                span_s: 0.4,
                intervals: 4,
                machine_pct: 80.0,
            },
            CpuPhase {
                name: "clicks".into(),
                start_s: 0.4,
                span_s: 0.8,
                intervals: 8,
                machine_pct: 120.0,
            },
        ],
        processes: vec![CpuProcess {
            label: "chromium".into(),
            source: "chromium".into(),
            pids: vec![10],
            exited_at_s: None,
            cpu_s: vec![0.1, 0.3],
            pct_of_core: vec![25.0, 37.5],
        }],
    });
    r
}

fn new_run(run: Run, branch: &str) -> NewRun {
    NewRun {
        run,
        origin: origin(branch),
        source: Some("runs/x".into()),
    }
}

#[test]
fn a_stored_run_loads_back_as_the_same_run() {
    let d = tempfile::tempdir().unwrap();
    let mut s = SqliteStore::open(&d.path().join("h.sqlite")).unwrap();
    let run = full_run(1);
    let id = match s.add(&new_run(run.clone(), "main")).unwrap() {
        Added::New(id) => id,
        other => panic!("{other:?}"),
    };
    assert_eq!(s.load(id, true).unwrap(), run);
    let no_events = s.load(id, false).unwrap();
    assert_eq!(
        (no_events.meta, no_events.loops),
        (run.meta.clone(), run.loops.clone())
    );
    let c = s.counts(id).unwrap();
    assert_eq!(
        c,
        StoredCounts {
            loops: 40,
            events: 34,
            warnings: 1,
            cpu: 2
        }
    );
    let row = s.row(id).unwrap();
    assert_eq!(
        (row.branch.as_deref(), row.testbed.as_str()),
        (Some("main"), "bench-1")
    );
    assert_eq!(row.pilot_hash, run.meta.pilot_hash);
    assert_eq!(row.content_hash, content_hash(&run));
}

#[test]
fn the_same_run_added_twice_is_kept_once() {
    let d = tempfile::tempdir().unwrap();
    let mut s = SqliteStore::open(&d.path().join("h.sqlite")).unwrap();
    let first = s.add(&new_run(full_run(1), "main")).unwrap();
    // Another branch name does not make it another run: the content is the same.
    let again = s.add(&new_run(full_run(1), "feature")).unwrap();
    assert_eq!(again, Added::Duplicate(first.id()));
    let other = s.add(&new_run(full_run(2), "main")).unwrap();
    assert!(matches!(other, Added::New(id) if id != first.id()));
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 2);
    let loops: i64 = s
        .conn
        .query_row("SELECT count(*) FROM loops", [], |r| r.get(0))
        .unwrap();
    assert_eq!(loops, 80);
}

#[test]
fn list_filters_and_keeps_the_order_of_adding() {
    let d = tempfile::tempdir().unwrap();
    let mut s = SqliteStore::open(&d.path().join("h.sqlite")).unwrap();
    for seed in 1..=6 {
        let mut run = full_run(seed);
        if seed % 2 == 0 {
            run.meta.arm = "lazy-png".into();
        }
        run.meta.started_at = format!("2026-11-{:02}T10:00:00.000Z", 20 + seed);
        let branch = if seed <= 4 { "main" } else { "feature" };
        s.add(&new_run(run, branch)).unwrap();
    }
    let ids = |f: Filter| -> Vec<i64> { s.list(&f).unwrap().iter().map(|r| r.id).collect() };
    assert_eq!(ids(Filter::default()), vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(
        ids(Filter {
            branch: Some("main".into()),
            ..Filter::default()
        }),
        vec![1, 2, 3, 4]
    );
    assert_eq!(
        ids(Filter {
            arm: Some("lazy-png".into()),
            ..Filter::default()
        }),
        vec![2, 4, 6]
    );
    assert_eq!(
        ids(Filter {
            since: Some("2026-11-25".into()),
            ..Filter::default()
        }),
        vec![5, 6]
    );
    assert_eq!(
        ids(Filter {
            pilot: Some("000".into()),
            last: Some(2),
            ..Filter::default()
        }),
        vec![5, 6]
    );
    assert!(ids(Filter {
        pilot: Some("f".into()),
        ..Filter::default()
    })
    .is_empty());
    assert!(ids(Filter {
        testbed: Some("elsewhere".into()),
        ..Filter::default()
    })
    .is_empty());
}

fn open_err(path: &Path) -> String {
    let e = SqliteStore::open(path).err().expect("refused");
    assert_eq!(ExitKind::of(&e), Some(ExitKind::BadInput), "{e:#}");
    format!("{e:#}")
}

#[test]
fn a_file_that_is_not_this_tools_database_is_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    let text = d.path().join("notes.txt");
    fs::write(&text, "hello, not a database\n").unwrap();
    let e = open_err(&text);
    assert!(
        e.contains("notes.txt") && e.contains("not an SQLite database"),
        "{e}"
    );
    assert_eq!(
        fs::read_to_string(&text).unwrap(),
        "hello, not a database\n"
    );

    let other = d.path().join("other.sqlite");
    let c = Connection::open(&other).unwrap();
    c.execute_batch(
        "CREATE TABLE accounts (id INTEGER, name TEXT); INSERT INTO accounts VALUES (1, 'a');",
    )
    .unwrap();
    drop(c);
    let e = open_err(&other);
    assert!(
        e.contains("other.sqlite") && e.contains("something else") && e.contains("accounts"),
        "{e}"
    );
    let n: i64 = Connection::open(&other)
        .unwrap()
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1, "nothing was created in another app's database");
}

#[test]
fn a_database_from_a_newer_version_is_refused_naming_both_versions() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("h.sqlite");
    drop(SqliteStore::open(&path).unwrap());
    let c = Connection::open(&path).unwrap();
    c.execute(
        "UPDATE schema_version SET version = ?1",
        [SCHEMA_VERSION + 1],
    )
    .unwrap();
    drop(c);
    let e = open_err(&path);
    let (newer, ours) = (
        format!("version {}", SCHEMA_VERSION + 1),
        format!("version {SCHEMA_VERSION}"),
    );
    assert!(
        e.contains("h.sqlite") && e.contains(&newer) && e.contains(&ours),
        "{e}"
    );
}

#[test]
fn a_new_database_is_created_at_the_current_version_in_wal_mode() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("sub/dir/h.sqlite");
    let s = SqliteStore::open(&path).unwrap();
    let (v, app): (i64, String) = s
        .conn
        .query_row("SELECT version, app FROM schema_version", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((v, app.as_str()), (SCHEMA_VERSION, APP));
    let mode: String = s
        .conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    drop(s);
    // Opening again applies nothing and keeps what is stored.
    let mut s = SqliteStore::open(&path).unwrap();
    s.add(&new_run(full_run(3), "main")).unwrap();
    drop(s);
    assert_eq!(
        SqliteStore::open(&path)
            .unwrap()
            .list(&Filter::default())
            .unwrap()
            .len(),
        1
    );
}

const KILL_ENV: &str = "ARENA_HISTORY_TEST_KILL_DB";
const READY: &str = "rows written, not committed";

/// Adds a run with a pause before its commit. Run by the test below in a child process
/// (with `KILL_ENV` set), where it prints `READY` and waits to be killed; run on its own,
/// it checks another connection sees none of the run until the commit.
#[test]
fn writer_pauses_before_commit() {
    let kill_db = std::env::var_os(KILL_ENV);
    let d = tempfile::tempdir().unwrap();
    let path = kill_db
        .clone()
        .map_or_else(|| d.path().join("h.sqlite"), PathBuf::from);
    let mut s = SqliteStore::open(&path).unwrap();
    let seen = std::cell::Cell::new(None);
    let added = s
        .add_with(&new_run(full_run(9), "main"), &|| {
            if kill_db.is_some() {
                println!("{READY}");
                std::thread::sleep(Duration::from_secs(60));
            }
            let other = SqliteStore::open(&path).unwrap();
            seen.set(Some(other.list(&Filter::default()).unwrap().len()));
        })
        .unwrap();
    assert_eq!(seen.get(), Some(0), "an uncommitted run is invisible");
    assert_eq!(s.list(&Filter::default()).unwrap()[0].id, added.id());
}

#[test]
fn a_writer_killed_mid_insert_leaves_no_partial_run() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("h.sqlite");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sqlite::tests::writer_pauses_before_commit",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(KILL_ENV, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let ready = BufReader::new(out)
        .lines()
        .map_while(|l| l.ok())
        .any(|l| l.contains(READY));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(ready, "the writer reached its commit");
    let mut s = SqliteStore::open(&path).unwrap();
    assert!(s.list(&Filter::default()).unwrap().is_empty());
    for table in ["runs", "loops", "events", "warnings", "cpu_phases"] {
        let n: i64 = s
            .conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0, "{table}");
    }
    assert!(matches!(
        s.add(&new_run(full_run(9), "main")).unwrap(),
        Added::New(_)
    ));
}
