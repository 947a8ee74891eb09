//! The store tests every database passes: each function takes a store (or a way to open
//! one) and is called by the SQLite tests here and by the PostgreSQL test
//! (`pg_tests.rs`) on a cluster of its own.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use arena_compare::synthetic;
use arena_run::{CpuPhase, CpuProcess, Event, Run, RunCpu, Warning};

use crate::context::Origin;
use crate::record::{content_hash, NewRun};
use crate::store::{Added, Filter, Store, StoredCounts};

pub fn origin(branch: &str) -> Origin {
    Origin {
        branch: Some(branch.into()),
        commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
        testbed: "bench-1".into(),
    }
}

/// A synthetic run with every part a store keeps: loops, records, setup records,
/// warnings and CPU by phase.
pub fn full_run(seed: u64) -> Run {
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
    // One loop went after a lapse: the mark is stored like every other column.
    r.loops[3].after_lapse = true;
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

pub fn new_run(run: Run, branch: &str) -> NewRun {
    NewRun {
        run,
        origin: origin(branch),
        source: Some("runs/x".into()),
        events_from: None,
    }
}

pub fn a_stored_run_loads_back_as_the_same_run(s: &mut dyn Store) {
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

/// A copy of the committed fixture run `stock-1` (a real pilot's, 301 records), with its
/// first 4 records as setup records too.
fn real_run_folder(into: &Path) -> std::path::PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/runs/stock-1");
    let dir = into.join("stock-1");
    std::fs::create_dir_all(&dir).unwrap();
    for f in [
        arena_run::RUN_JSON,
        arena_run::LOOPS_CSV,
        arena_run::EVENTS_JSONL,
    ] {
        std::fs::copy(from.join(f), dir.join(f)).unwrap();
    }
    let events = std::fs::read_to_string(dir.join(arena_run::EVENTS_JSONL)).unwrap();
    let setup: String = events.lines().take(4).map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join(arena_run::SETUP_EVENTS_JSONL), setup).unwrap();
    dir
}

/// A run added from its folder has its records read from the files as they are written,
/// not held: it loads back with every record and setup record, as the folder loads whole.
/// A record turned bad between the load and the add ends the add with nothing stored.
pub fn a_run_added_from_its_folder_streams_its_records(s: &mut dyn Store) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = real_run_folder(tmp.path());
    let whole = Run::load(&dir).unwrap();
    let new = NewRun::load(&dir, origin("main")).unwrap();
    assert!(new.run.events.is_empty(), "the records stay in the folder");
    let Added::New(id) = s.add(&new).unwrap() else {
        panic!("a new run")
    };
    assert_eq!(s.load(id, true).unwrap(), whole);
    assert_eq!(s.counts(id).unwrap().events, 301 + 4);

    let mut other = whole.clone();
    other.meta.seed += 1;
    other.write(&dir).unwrap();
    let new = NewRun::load(&dir, origin("main")).unwrap();
    let events = dir.join(arena_run::EVENTS_JSONL);
    let mut text = std::fs::read_to_string(&events).unwrap();
    text.push_str("{\"seq\": 1, \"kind\": \"paint\"\n");
    std::fs::write(&events, text).unwrap();
    let e = s.add(&new).unwrap_err();
    assert!(format!("{e:#}").contains("line 302"), "{e:#}");
    assert_eq!(
        s.list(&Filter::default()).unwrap().len(),
        1,
        "nothing stored"
    );
}

pub fn the_same_run_added_twice_is_kept_once(s: &mut dyn Store) {
    let first = s.add(&new_run(full_run(1), "main")).unwrap();
    // Another branch name does not make it another run: the content is the same.
    let again = s.add(&new_run(full_run(1), "feature")).unwrap();
    assert_eq!(again, Added::Duplicate(first.id()));
    let other = s.add(&new_run(full_run(2), "main")).unwrap();
    assert!(matches!(other, Added::New(id) if id != first.id()));
    assert_eq!(s.list(&Filter::default()).unwrap().len(), 2);
    let ids: Vec<i64> = s
        .list(&Filter::default())
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    let loops: u64 = ids.iter().map(|id| s.counts(*id).unwrap().loops).sum();
    assert_eq!(loops, 80);
}

pub fn list_filters_and_keeps_the_order_of_adding(s: &mut dyn Store) {
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

/// 8 writers, each with its own connection, adding 25 runs each at once: 200 stored, each
/// once.
pub fn eight_writers_store_200_runs(open: &(dyn Fn() -> Box<dyn Store> + Sync)) {
    std::thread::scope(|scope| {
        for w in 0..8u64 {
            scope.spawn(move || {
                let mut s = open();
                for k in 0..25 {
                    let mut run = synthetic::run(
                        "stock",
                        &synthetic::lognormal(12, 50.0, 0.3, 0.0, w * 100 + k),
                        6000,
                    );
                    run.meta.seed = w * 100 + k;
                    assert!(matches!(
                        s.add(&new_run(run, "main")).unwrap(),
                        Added::New(_)
                    ));
                }
            });
        }
    });
    let rows = open().list(&Filter::default()).unwrap();
    assert_eq!(rows.len(), 200);
    let mut hashes: Vec<&str> = rows.iter().map(|r| r.content_hash.as_str()).collect();
    hashes.sort_unstable();
    hashes.dedup();
    assert_eq!(hashes.len(), 200);
}

const KILL_ENV: &str = "ARENA_HISTORY_TEST_KILL_DB";
const READY: &str = "rows written, not committed";

/// `add_with` of the store `db` names.
fn add_paused(db: &str, new: &NewRun, before_commit: &dyn Fn()) -> Added {
    if db.starts_with("postgres") {
        crate::pg::PgStore::open(db)
            .unwrap()
            .add_with(new, before_commit)
            .unwrap()
    } else {
        crate::sqlite::SqliteStore::open(Path::new(db))
            .unwrap()
            .add_with(new, before_commit)
            .unwrap()
    }
}

/// Adds a run with a pause before its commit. Run by [`killed_writer_leaves_nothing`] in
/// a child process (with `KILL_ENV` naming the database), where it prints `READY` and
/// waits to be killed; run on its own, it checks that another connection sees none of the
/// run until the commit.
#[test]
fn writer_pauses_before_commit() {
    let kill_db = std::env::var(KILL_ENV).ok();
    // The killed child makes no folder of its own: it would outlive it.
    let d = kill_db.is_none().then(|| tempfile::tempdir().unwrap());
    let db = match (&kill_db, &d) {
        (Some(db), _) => db.clone(),
        (None, d) => d
            .as_ref()
            .unwrap()
            .path()
            .join("h.sqlite")
            .display()
            .to_string(),
    };
    crate::open(&db).unwrap();
    let seen = std::cell::Cell::new(None);
    let added = add_paused(&db, &new_run(full_run(9), "main"), &|| {
        if kill_db.is_some() {
            println!("{READY}");
            std::thread::sleep(Duration::from_secs(60));
        }
        seen.set(Some(
            crate::open(&db)
                .unwrap()
                .list(&Filter::default())
                .unwrap()
                .len(),
        ));
    });
    assert_eq!(seen.get(), Some(0), "an uncommitted run is invisible");
    assert_eq!(
        crate::open(&db).unwrap().list(&Filter::default()).unwrap()[0].id,
        added.id()
    );
}

/// Kills a writer of `db` between its last row and its commit: nothing of the run is
/// stored, and the run can then be added whole.
pub fn killed_writer_leaves_nothing(db: &str) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "suite::writer_pauses_before_commit",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(KILL_ENV, db)
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
    let mut s = crate::open(db).unwrap();
    assert!(s.list(&Filter::default()).unwrap().is_empty());
    let id = s.add(&new_run(full_run(9), "main")).unwrap();
    assert!(matches!(id, Added::New(_)));
    assert_eq!(s.counts(id.id()).unwrap().loops, 40);
}

/// Reading many runs at once gives each the run `load` gives, in the order asked.
pub fn load_many_reads_what_load_reads(s: &mut dyn Store) {
    let ids: Vec<i64> = (1..=3)
        .map(|seed| s.add(&new_run(full_run(seed), "main")).unwrap().id())
        .collect();
    let order = [ids[2], ids[0], ids[1]];
    let many = s.load_many(&order).unwrap();
    for (id, run) in order.iter().zip(&many) {
        assert_eq!(run, &s.load(*id, false).unwrap());
    }
    assert!(s.load_many(&[ids[0], 999]).is_err());
}
