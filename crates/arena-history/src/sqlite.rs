//! The SQLite store: one file, nothing to start, in WAL mode so readers never wait for a
//! writer and several writers (CI jobs on one machine) take turns on the write lock.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use arena_report::{Exit, ExitKind};
use arena_run::{Event, Loop, Run, RunMeta};
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};

use crate::record::{content_hash, NewRun};
use crate::schema::{judge, Found, APP, MIGRATIONS, SCHEMA_VERSION};
use crate::store::{Added, Filter, RunRow, Store, StoredCounts};

/// How long an operation waits for another's lock before giving up (exit 3): an add of a
/// large run takes tens of ms, so this covers a queue of many jobs.
const BUSY_WAIT: Duration = Duration::from_secs(60);

/// Seconds to wait instead of [`BUSY_WAIT`] (above 0, at most 3600).
pub const DB_WAIT_ENV: &str = "ARENA_PERF_DB_WAIT";

/// The wait for a lock (and for a PostgreSQL server's answer to a connection):
/// [`DB_WAIT_ENV`], else [`BUSY_WAIT`].
pub(crate) fn busy_wait() -> Result<Duration> {
    let Ok(v) = std::env::var(DB_WAIT_ENV) else {
        return Ok(BUSY_WAIT);
    };
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0 && *s <= 3600.0)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| {
            Exit::bad_input(format!(
                "{DB_WAIT_ENV}={v}: expected seconds above 0 and at most 3600"
            ))
            .into()
        })
}

/// The database stayed locked by another process for the whole wait.
fn locked(path: &Path, wait: Duration, e: impl std::fmt::Display) -> anyhow::Error {
    let wait = wait.as_secs_f64();
    Exit::new(
        ExitKind::TargetFailed,
        format!(
            "{}: locked by another process for {wait} s, the wait for a lock ({DB_WAIT_ENV}, 60 s by default); gave up ({e})",
            path.display()
        ),
    )
    .into()
}

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// SQLite answered busy while opening, where its busy handler is not called: two openers
/// of a new file each holding a read lock while one sets WAL mode (which needs the file to
/// itself) is a deadlock SQLite breaks by failing one. That opener starts over.
#[derive(Debug)]
struct Busy(String);

impl std::fmt::Display for Busy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Busy {}

pub struct SqliteStore {
    path: PathBuf,
    conn: Connection,
    /// SQLite opened the file for reading only (the operating system would not let this
    /// process write it): it is listed and read as it is, and adding to it is refused.
    read_only: bool,
}

fn bad(path: &Path, why: impl std::fmt::Display) -> anyhow::Error {
    Exit::bad_input(format!("--db {}: {why}", path.display())).into()
}

/// A database failure past opening (a full disk, a lock never released): the store, not
/// the input, failed (exit 3); the transaction under way is rolled back whole.
fn failed(path: &Path, e: rusqlite::Error) -> anyhow::Error {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy) | Some(rusqlite::ErrorCode::DatabaseLocked) => {
            locked(path, busy_wait().unwrap_or(BUSY_WAIT), e)
        }
        _ => Exit::new(ExitKind::TargetFailed, format!("{}: {e}", path.display())).into(),
    }
}

/// Refuses, before SQLite sees it, a file that is not an SQLite database: SQLite would
/// open it and fail only at the first statement, with a message that names no file.
fn check_file(path: &Path) -> Result<()> {
    let Ok(meta) = fs::metadata(path) else {
        return Ok(());
    };
    if !meta.is_file() {
        return Err(bad(path, "not a regular file, so not a history database"));
    }
    let mut head = Vec::with_capacity(16);
    fs::File::open(path)
        .and_then(|f| f.take(16).read_to_end(&mut head))
        .map_err(|e| bad(path, e))?;
    if !head.is_empty() && head.as_slice() != SQLITE_MAGIC {
        return Err(bad(
            path,
            "not an SQLite database (its first bytes are not SQLite's header), so not an arena-perf history",
        ));
    }
    Ok(())
}

impl SqliteStore {
    /// Opens `path`, creating it (and its folder) when absent, and brings its schema to
    /// this build's version.
    pub fn open(path: &Path) -> Result<SqliteStore> {
        SqliteStore::open_with(path, busy_wait()?)
    }

    /// [`SqliteStore::open`], waiting at most `wait` for another's lock, here and in every
    /// operation after.
    pub(crate) fn open_with(path: &Path, wait: Duration) -> Result<SqliteStore> {
        check_file(path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|e| bad(path, format!("creating its folder: {e}")))?;
        }
        // The whole opening, retries included, within one wait (each try waited a whole
        // one: a file held locked hung `history list` past 150 s).
        let deadline = Instant::now() + wait;
        let mut tries = 0;
        loop {
            let left = deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1));
            match SqliteStore::open_once(path, left) {
                Err(e) if e.downcast_ref::<Busy>().is_some() && Instant::now() < deadline => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(5 + 10 * (tries % 8)));
                }
                Err(e) => {
                    return Err(match e.downcast::<Busy>() {
                        Ok(b) => locked(path, wait, b.0),
                        Err(e) => e,
                    })
                }
                Ok(store) => {
                    store.conn.busy_timeout(wait).map_err(|e| failed(path, e))?;
                    return Ok(store);
                }
            }
        }
    }

    fn open_once(path: &Path, wait: Duration) -> Result<SqliteStore> {
        let mut conn = Connection::open(path).map_err(|e| bad(path, e))?;
        let read_only = conn
            .is_readonly(rusqlite::MAIN_DB)
            .map_err(|e| bad(path, e))?;
        if read_only && !wal_of(path).exists() {
            conn = open_immutable(path).map_err(|e| bad(path, e))?;
        }
        let store = SqliteStore {
            path: path.to_path_buf(),
            conn,
            read_only,
        };
        store.conn.busy_timeout(wait).map_err(|e| bad(path, e))?;
        // Another application's database is refused before anything is written to it
        // (WAL mode is recorded in the file itself).
        let version = store.version(&store.conn, false)?;
        if read_only {
            return store.read_as_is(version);
        }
        store.configure()?;
        if version != Some(SCHEMA_VERSION) {
            store.migrate()?;
        }
        Ok(store)
    }

    /// A history this process may only read (a file it cannot write, a team's history
    /// shared read-only) is read as it is: its mode and schema are whatever its writers
    /// left, so only a schema this build reads is taken.
    fn read_as_is(self, version: Option<i64>) -> Result<SqliteStore> {
        match version {
            Some(SCHEMA_VERSION) => Ok(self),
            None => Err(bad(
                &self.path,
                "read-only and empty: no history has been stored in it, and this process may not create one",
            )),
            Some(v) => Err(bad(
                &self.path,
                format!(
                    "read-only, at schema version {v}: this build reads version {SCHEMA_VERSION}, and upgrading it needs a process that may write the file"
                ),
            )),
        }
    }

    fn configure(&self) -> Result<()> {
        let c = &self.conn;
        // WAL is a property of the file: the first opener sets it; synchronous=NORMAL is
        // safe in WAL against a crashed writer (a commit is whole or absent), and loses at
        // most the last commits on power loss.
        let mode: String = c
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| self.open_error(e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(bad(
                &self.path,
                format!("could not be put in WAL mode ({mode})"),
            ));
        }
        c.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
            .map_err(|e| self.open_error(e))
    }

    /// Errors while opening: a file SQLite cannot read as a database is bad input.
    fn open_error(&self, e: rusqlite::Error) -> anyhow::Error {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseBusy) | Some(rusqlite::ErrorCode::DatabaseLocked) => {
                Busy(format!("{}: {e}", self.path.display())).into()
            }
            Some(rusqlite::ErrorCode::NotADatabase)
            | Some(rusqlite::ErrorCode::DatabaseCorrupt) => {
                bad(&self.path, format!("not a usable SQLite database ({e})"))
            }
            _ => failed(&self.path, e),
        }
    }

    /// Creates or upgrades the schema in one immediate transaction, so that processes
    /// opening a new file at once create it once (a database already at this version is
    /// only read on opening, which so never waits for a writer).
    fn migrate(&self) -> Result<()> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(|e| self.open_error(e))?;
        let from = self.version(&tx, true)?.unwrap_or(0);
        for (v, sql) in MIGRATIONS.iter().enumerate().skip(from as usize) {
            tx.execute_batch(sql).map_err(|e| failed(&self.path, e))?;
            tx.execute(
                "UPDATE schema_version SET version = ?1",
                params![v as i64 + 1],
            )
            .map_err(|e| failed(&self.path, e))?;
        }
        tx.commit().map_err(|e| failed(&self.path, e))
    }

    /// The database's version, refusing another tool's database and a newer version. A
    /// new, empty database is `None`, or with `create` version 0 once its
    /// `schema_version` table is made.
    fn version(&self, c: &Connection, create: bool) -> Result<Option<i64>> {
        let tables = user_tables(c).map_err(|e| self.open_error(e))?;
        let row: Option<(i64, String)> = if tables.iter().any(|t| t == "schema_version") {
            c.query_row("SELECT version, app FROM schema_version", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
            .map_err(|e| match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::DatabaseBusy)
                | Some(rusqlite::ErrorCode::DatabaseLocked) => self.open_error(e),
                _ => bad(
                    &self.path,
                    format!("its schema_version table is not this tool's ({e})"),
                ),
            })?
        } else {
            None
        };
        match judge(&self.path.display().to_string(), &tables, row)? {
            Found::Version(v) => Ok(Some(v)),
            Found::Empty if !create => Ok(None),
            Found::Empty => {
                c.execute_batch(
                    "CREATE TABLE schema_version (version INTEGER NOT NULL, app TEXT NOT NULL)",
                )
                .map_err(|e| failed(&self.path, e))?;
                c.execute("INSERT INTO schema_version VALUES (0, ?1)", params![APP])
                    .map_err(|e| failed(&self.path, e))?;
                Ok(Some(0))
            }
        }
    }

    /// [`Store::add`] with `before_commit` called once every row is written and the
    /// transaction not yet committed (tests kill the writer there).
    pub(crate) fn add_with(&mut self, new: &NewRun, before_commit: &dyn Fn()) -> Result<Added> {
        let path = self.path.clone();
        let fail = |e| failed(&path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        let hash = content_hash(&new.run);
        let Some(id) = insert_run(&tx, new, &hash).map_err(fail)? else {
            let id = tx
                .query_row(
                    "SELECT id FROM runs WHERE content_hash = ?1",
                    [&hash],
                    |r| r.get(0),
                )
                .map_err(fail)?;
            return Ok(Added::Duplicate(id));
        };
        insert_rows(&tx, id, &new.run).map_err(fail)?;
        insert_events(&tx, id, new, &fail)?;
        before_commit();
        tx.commit().map_err(fail)?;
        Ok(Added::New(id))
    }
}

/// The write-ahead log SQLite keeps beside `path` while a writer has it open.
fn wal_of(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push("-wal");
    PathBuf::from(p)
}

/// Opens a read-only file whose writers left no write-ahead log as immutable: SQLite
/// otherwise needs a shared-memory file beside it (`-shm`) even to read a WAL database,
/// and a process that may not write the folder cannot create one ("attempt to write a
/// readonly database"). Immutable also skips locking: a writer that starts while this
/// reads is not seen, which a listing of a history shared read-only can live with.
fn open_immutable(path: &Path) -> rusqlite::Result<Connection> {
    // SQLite's URI names a file by its path with `%`, `?` and `#` percent-encoded.
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' | '?' | '#' => uri.push_str(&format!("%{:02X}", c as u32)),
            c => uri.push(c),
        }
    }
    uri.push_str("?immutable=1");
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
        | rusqlite::OpenFlags::SQLITE_OPEN_URI
        | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(uri, flags)
}

fn user_tables(c: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut st = c.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )?;
    let names = st.query_map([], |r| r.get(0))?.collect();
    names
}

/// The run's row; `None` when a run with its hash is already stored.
fn insert_run(tx: &Transaction, new: &NewRun, hash: &str) -> rusqlite::Result<Option<i64>> {
    let m = &new.run.meta;
    let meta_json =
        serde_json::to_string(m).map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
    let knobs = serde_json::to_string(&m.knobs).unwrap_or_else(|_| "{}".into());
    let status = serde_json::to_value(m.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let n = tx.execute(
        "INSERT INTO runs (content_hash, added_at, branch, commit_sha, testbed, arm, pilot_hash,
             status, started_at, ended_at, knobs, loops, answered, unanswered, source, meta_json,
             has_setup_events)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
         ON CONFLICT (content_hash) DO NOTHING",
        params![
            hash,
            arena_run::rfc3339_utc(std::time::SystemTime::now()),
            new.origin.branch,
            new.origin.commit,
            new.origin.testbed,
            m.arm,
            new.pilot_hash(),
            status,
            m.started_at,
            m.ended_at,
            knobs,
            new.run.loops.len() as i64,
            m.summary.answered as i64,
            m.summary.unanswered as i64,
            new.source,
            meta_json,
            new.has_setup_events(),
        ],
    )?;
    Ok((n == 1).then(|| tx.last_insert_rowid()))
}

/// Every per-run row, each table through one prepared statement reused for all its rows.
fn insert_rows(tx: &Transaction, id: i64, run: &Run) -> rusqlite::Result<()> {
    let mut st = tx.prepare_cached(
        "INSERT INTO loops VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,
             ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)",
    )?;
    for (i, l) in run.loops.iter().enumerate() {
        st.execute(params![
            id,
            i as i64,
            l.index as i64,
            l.arm,
            l.label,
            l.event,
            l.cold,
            l.answered,
            l.outcome.name(),
            l.t_input,
            l.t_send,
            l.t_recv,
            l.t_draw,
            l.t_paint,
            l.input_to_socket,
            l.send_to_recv,
            l.recv_to_draw,
            l.input_to_paint,
            l.t_answer,
            l.input_to_pixels,
            l.reply_bytes as i64,
            l.reply_frames as i64,
            l.after_lapse
        ])?;
    }
    let mut st = tx.prepare_cached("INSERT INTO warnings VALUES (?1, ?2, ?3, ?4)")?;
    for (i, w) in run.meta.warnings.iter().enumerate() {
        st.execute(params![id, i as i64, w.code, w.message])?;
    }
    let Some(cpu) = &run.meta.cpu else {
        return Ok(());
    };
    let mut st = tx.prepare_cached("INSERT INTO cpu_phases VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
    let mut ord = 0i64;
    for p in &cpu.processes {
        for (k, phase) in cpu.phases.iter().enumerate() {
            let cpu_s = p.cpu_s.get(k).copied().unwrap_or(0.0);
            let pct = p.pct_of_core.get(k).copied().unwrap_or(0.0);
            st.execute(params![id, p.label, phase.name, ord, cpu_s, pct])?;
            ord += 1;
        }
    }
    Ok(())
}

/// The run's records and then its setup records, each written as it is read.
fn insert_events(
    tx: &Transaction,
    id: i64,
    new: &NewRun,
    fail: &dyn Fn(rusqlite::Error) -> anyhow::Error,
) -> Result<()> {
    let mut st = tx
        .prepare_cached(
            "INSERT INTO events VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )
        .map_err(fail)?;
    for setup in [false, true] {
        let mut i = 0i64;
        new.each_event(setup, &mut |e| {
            insert_event(&mut st, id, setup, i, e).map_err(fail)?;
            i += 1;
            Ok(())
        })?;
    }
    Ok(())
}

fn insert_event(
    st: &mut rusqlite::CachedStatement,
    id: i64,
    setup: bool,
    i: i64,
    e: &Event,
) -> rusqlite::Result<()> {
    st.execute(params![
        id,
        setup,
        i,
        e.seq as i64,
        e.kind,
        e.t_ms,
        e.size,
        e.class,
        e.event,
        e.trusted,
        e.target,
        e.answers.map(|a| a as i64)
    ])?;
    Ok(())
}

const ROW_COLUMNS: &str = "id, content_hash, added_at, branch, commit_sha, testbed, arm, \
    pilot_hash, status, started_at, ended_at, knobs, loops, answered, unanswered, source";

fn run_row(r: &rusqlite::Row) -> rusqlite::Result<RunRow> {
    let knobs: String = r.get(11)?;
    Ok(RunRow {
        id: r.get(0)?,
        content_hash: r.get(1)?,
        added_at: r.get(2)?,
        branch: r.get(3)?,
        commit: r.get(4)?,
        testbed: r.get(5)?,
        arm: r.get(6)?,
        pilot_hash: r.get(7)?,
        status: r.get(8)?,
        started_at: r.get(9)?,
        ended_at: r.get(10)?,
        knobs: serde_json::from_str(&knobs).unwrap_or_default(),
        loops: r.get::<_, i64>(12)? as u64,
        answered: r.get::<_, i64>(13)? as u64,
        unanswered: r.get::<_, i64>(14)? as u64,
        source: r.get(15)?,
    })
}

fn loop_row(r: &rusqlite::Row) -> rusqlite::Result<Loop> {
    let outcome: String = r.get(6)?;
    Ok(Loop {
        index: r.get::<_, i64>(0)? as u64,
        arm: r.get(1)?,
        label: r.get(2)?,
        event: r.get(3)?,
        cold: r.get(4)?,
        answered: r.get(5)?,
        outcome: serde_json::from_value(serde_json::Value::String(outcome)).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(6, rusqlite::types::Type::Text, e.into())
        })?,
        t_input: r.get(7)?,
        t_send: r.get(8)?,
        t_recv: r.get(9)?,
        t_draw: r.get(10)?,
        t_paint: r.get(11)?,
        input_to_socket: r.get(12)?,
        send_to_recv: r.get(13)?,
        recv_to_draw: r.get(14)?,
        input_to_paint: r.get(15)?,
        t_answer: r.get(16)?,
        input_to_pixels: r.get(17)?,
        reply_bytes: r.get::<_, i64>(18)? as u64,
        reply_frames: r.get::<_, i64>(19)? as u64,
        after_lapse: r.get(20)?,
    })
}

fn event_row(r: &rusqlite::Row) -> rusqlite::Result<Event> {
    Ok(Event {
        seq: r.get::<_, i64>(0)? as u64,
        kind: r.get(1)?,
        t_ms: r.get(2)?,
        size: r.get(3)?,
        class: r.get(4)?,
        event: r.get(5)?,
        trusted: r.get(6)?,
        target: r.get(7)?,
        answers: r.get::<_, Option<i64>>(8)?.map(|a| a as u64),
    })
}

impl SqliteStore {
    fn events(&self, id: i64, setup: bool) -> rusqlite::Result<Vec<Event>> {
        let mut st = self.conn.prepare_cached(
            "SELECT seq, kind, t_ms, size, class, event, trusted, target, answers FROM events
             WHERE run_id = ?1 AND setup = ?2 ORDER BY ord",
        )?;
        let rows = st.query_map(params![id, setup], event_row)?.collect();
        rows
    }

    fn loops(&self, id: i64) -> rusqlite::Result<Vec<Loop>> {
        let mut st = self.conn.prepare_cached(
            "SELECT idx, arm, label, event, cold, answered, outcome, t_input, t_send, t_recv,
                 t_draw, t_paint, input_to_socket, send_to_recv, recv_to_draw, input_to_paint,
                 t_answer, input_to_pixels, reply_bytes, reply_frames, after_lapse
             FROM loops WHERE run_id = ?1 ORDER BY ord",
        )?;
        let rows = st.query_map([id], loop_row)?.collect();
        rows
    }

    fn no_run(&self, id: i64) -> anyhow::Error {
        Exit::bad_input(format!("{}: no stored run {id}", self.path.display())).into()
    }
}

impl Store for SqliteStore {
    fn add(&mut self, run: &NewRun) -> Result<Added> {
        if self.read_only {
            return Err(bad(
                &self.path,
                "read-only to this process (its file permissions, or a read-only file system): runs cannot be added to it",
            ));
        }
        self.add_with(run, &|| {})
    }

    fn list(&self, f: &Filter) -> Result<Vec<RunRow>> {
        let (cond, args) = f.where_clause(|_| "?".to_string());
        let limit = f.last.map_or(String::new(), |n| format!(" LIMIT {n}"));
        let sql = format!("SELECT {ROW_COLUMNS} FROM runs{cond} ORDER BY id DESC{limit}");
        let fail = |e| failed(&self.path, e);
        let mut st = self.conn.prepare(&sql).map_err(fail)?;
        let mut rows = st
            .query_map(rusqlite::params_from_iter(args.iter()), run_row)
            .map_err(fail)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(fail)?;
        rows.reverse();
        Ok(rows)
    }

    fn row(&self, id: i64) -> Result<RunRow> {
        let sql = format!("SELECT {ROW_COLUMNS} FROM runs WHERE id = ?1");
        self.conn
            .query_row(&sql, [id], run_row)
            .optional()
            .map_err(|e| failed(&self.path, e))?
            .ok_or_else(|| self.no_run(id))
    }

    fn load_raw(&self, id: i64, events: bool) -> Result<Run> {
        let fail = |e| failed(&self.path, e);
        let row: Option<(String, bool)> = self
            .conn
            .query_row(
                "SELECT meta_json, has_setup_events FROM runs WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(fail)?;
        let (meta_json, has_setup) = row.ok_or_else(|| self.no_run(id))?;
        let meta: RunMeta = serde_json::from_str(&meta_json).map_err(|e| {
            bad(
                &self.path,
                format!("stored run {id}: its run.json does not read back ({e})"),
            )
        })?;
        let loops = self.loops(id).map_err(fail)?;
        let (events, setup_events) = if events {
            let setup = if has_setup {
                Some(self.events(id, true).map_err(fail)?)
            } else {
                None
            };
            (self.events(id, false).map_err(fail)?, setup)
        } else {
            (Vec::new(), None)
        };
        Ok(Run {
            meta,
            loops,
            events,
            setup_events,
            gestures: Vec::new(),
        })
    }

    fn counts(&self, id: i64) -> Result<StoredCounts> {
        self.row(id)?;
        let count = |table: &str| -> Result<u64> {
            let sql = format!("SELECT count(*) FROM {table} WHERE run_id = ?1");
            let n: i64 = self
                .conn
                .query_row(&sql, [id], |r| r.get(0))
                .map_err(|e| failed(&self.path, e))?;
            Ok(n as u64)
        };
        Ok(StoredCounts {
            loops: count("loops")?,
            events: count("events")?,
            warnings: count("warnings")?,
            cpu: count("cpu_phases")?,
        })
    }

    fn describe(&self) -> String {
        format!(
            "sqlite {} (schema version {SCHEMA_VERSION})",
            self.path.display()
        )
    }
}

#[cfg(test)]
#[path = "sqlite_tests.rs"]
mod tests;
