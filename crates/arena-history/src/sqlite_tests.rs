use rusqlite::Connection;

use super::*;
use crate::suite::{self, full_run, new_run};

fn store(d: &tempfile::TempDir) -> SqliteStore {
    SqliteStore::open(&d.path().join("h.sqlite")).unwrap()
}

#[test]
fn a_stored_run_loads_back_as_the_same_run() {
    let d = tempfile::tempdir().unwrap();
    suite::a_stored_run_loads_back_as_the_same_run(&mut store(&d));
}

#[test]
fn a_run_added_from_its_folder_streams_its_records() {
    let d = tempfile::tempdir().unwrap();
    suite::a_run_added_from_its_folder_streams_its_records(&mut store(&d));
}

#[test]
fn the_same_run_added_twice_is_kept_once() {
    let d = tempfile::tempdir().unwrap();
    suite::the_same_run_added_twice_is_kept_once(&mut store(&d));
}

#[test]
fn list_filters_and_keeps_the_order_of_adding() {
    let d = tempfile::tempdir().unwrap();
    suite::list_filters_and_keeps_the_order_of_adding(&mut store(&d));
}

#[test]
fn load_many_reads_what_load_reads() {
    let d = tempfile::tempdir().unwrap();
    suite::load_many_reads_what_load_reads(&mut store(&d));
}

#[test]
fn eight_writers_store_200_runs() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("h.sqlite");
    suite::eight_writers_store_200_runs(&|| Box::new(SqliteStore::open(&path).unwrap()));
}

#[test]
fn a_writer_killed_mid_insert_leaves_no_partial_run() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("h.sqlite");
    suite::killed_writer_leaves_nothing(&path.display().to_string());
    let s = SqliteStore::open(&path).unwrap();
    for table in ["loops", "events", "warnings", "cpu_phases"] {
        let n: i64 = s
            .conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap();
        let want = [40, 34, 1, 2][["loops", "events", "warnings", "cpu_phases"]
            .iter()
            .position(|t| *t == table)
            .unwrap()];
        assert_eq!(n, want, "{table}: only the run added after the kill");
    }
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
fn a_version_1_database_is_migrated_and_its_loops_read_unmarked() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("h.sqlite");
    let mut run = full_run(7);
    let id = store(&d).add(&new_run(run.clone(), "main")).unwrap().id();
    // Back to version 1 as it was: no after_lapse column.
    let c = Connection::open(&path).unwrap();
    c.execute_batch(
        "ALTER TABLE loops DROP COLUMN after_lapse; UPDATE schema_version SET version = 1;",
    )
    .unwrap();
    drop(c);
    let s = store(&d);
    let v: i64 = s
        .conn
        .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, SCHEMA_VERSION, "opened, the database is migrated");
    let back = s.load(id, false).unwrap();
    assert!(back.loops.iter().all(|l| !l.after_lapse));
    run.loops.iter_mut().for_each(|l| l.after_lapse = false);
    assert_eq!(back.loops, run.loops, "the rest of each loop is kept");
}

#[test]
fn a_stored_loop_edited_to_inf_or_below_zero_is_refused_on_reading() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("h.sqlite");
    let id = store(&d).add(&new_run(full_run(3), "main")).unwrap().id();
    // The last edit keeps each metric the difference of its times: only the loop's order
    // (its paint 50 ms before its input) gives it away, as it does in a folder's loops.csv.
    let edits = [
        "send_to_recv = 1e999, t_recv = t_send + 1e999",
        "send_to_recv = -50, t_recv = t_send - 50",
        "input_to_paint = -50, t_paint = t_input - 50",
    ];
    for (bad, fresh) in edits.iter().zip([false, false, true]) {
        if fresh {
            for f in ["h.sqlite", "h.sqlite-wal", "h.sqlite-shm"] {
                let _ = std::fs::remove_file(d.path().join(f));
            }
            let again = store(&d).add(&new_run(full_run(3), "main")).unwrap().id();
            assert_eq!(again, id);
        }
        let c = Connection::open(&path).unwrap();
        c.execute_batch(&format!("UPDATE loops SET {bad} WHERE ord = 2"))
            .unwrap();
        drop(c);
        let s = store(&d);
        for e in [
            s.load(id, false).unwrap_err(),
            s.load_many(&[id]).unwrap_err(),
        ] {
            let msg = format!("{e:#}");
            assert_eq!(
                arena_report::ExitKind::of(&e).map(arena_report::ExitKind::code),
                Some(2),
                "{msg}"
            );
            assert!(
                msg.contains(&format!("stored run {id} does not read back"))
                    && msg.contains("loop 2"),
                "{bad}: {msg}"
            );
        }
    }
}

#[test]
fn a_database_held_locked_gives_up_within_the_wait_with_exit_3() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("h.sqlite");
    drop(store(&d));
    // Held as `PRAGMA locking_mode=EXCLUSIVE` holds it: readers wait too, even in WAL.
    let holder = Connection::open(&path).unwrap();
    holder
        .execute_batch("PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT;")
        .unwrap();
    let wait = std::time::Duration::from_millis(800);
    let t = std::time::Instant::now();
    let e = SqliteStore::open_with(&path, wait).err().expect("locked");
    let took = t.elapsed();
    let msg = format!("{e:#}");
    assert_eq!(
        arena_report::ExitKind::of(&e).map(arena_report::ExitKind::code),
        Some(3),
        "{msg}"
    );
    assert!(
        msg.contains("locked by another process for 0.8 s") && msg.contains("ARENA_PERF_DB_WAIT"),
        "{msg}"
    );
    // One wait, never the minutes opening took when each retry waited a whole one.
    assert!(took >= wait && took < 10 * wait, "{took:?}");
    drop(holder);
    assert!(
        SqliteStore::open_with(&path, wait).is_ok(),
        "released, it opens"
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
