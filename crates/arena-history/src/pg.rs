//! The PostgreSQL store: the same tables as SQLite's, for a team's runs from many
//! machines. A run's rows go in with COPY, in the transaction that inserts its `runs` row,
//! so a client that dies mid-add leaves nothing (the server rolls the transaction back).

use std::cell::RefCell;
use std::io::Write as _;

use anyhow::Result;
use arena_report::{Exit, ExitKind};
use arena_run::{Event, Loop, Run, RunMeta};
use postgres::{Client, NoTls, Transaction};

use crate::record::{content_hash, NewRun};
use crate::schema::{judge, Found, APP, PG_MIGRATIONS, SCHEMA_VERSION};
use crate::store::{redact, Added, Filter, RunRow, Store, StoredCounts};

/// Taken for the migration's transaction, so clients opening a new database at once
/// create its tables once.
const MIGRATION_LOCK: i64 = 0x4152_454e_4148;

pub struct PgStore {
    shown: String,
    client: RefCell<Client>,
}

/// A server that refused, went away or failed a statement: exit 3, naming it and why.
fn failed(shown: &str, e: &postgres::Error) -> anyhow::Error {
    let why = e
        .as_db_error()
        .map(|d| d.message().to_string())
        .or_else(|| std::error::Error::source(e).map(|s| s.to_string()))
        .unwrap_or_default();
    Exit::new(
        ExitKind::TargetFailed,
        format!("{shown}: {e} {why}").trim_end().to_string(),
    )
    .into()
}

impl PgStore {
    /// Connects to `url` and brings its schema to this build's version.
    pub fn open(url: &str) -> Result<PgStore> {
        PgStore::open_with(url, crate::sqlite::busy_wait()?)
    }

    /// [`PgStore::open`], giving up (exit 3) when the server has not answered the
    /// connection within `wait`: the client has no timeout of its own past the TCP
    /// connect, and a server that accepts and never answers held `list` and `add` forever.
    pub(crate) fn open_with(url: &str, wait: std::time::Duration) -> Result<PgStore> {
        let shown = redact(url);
        let (tx, rx) = std::sync::mpsc::channel();
        let owned = url.to_string();
        // The connecting thread is left behind on expiry: the command ends with exit 3.
        std::thread::spawn(move || {
            let _ = tx.send(Client::connect(&owned, NoTls));
        });
        let client = match rx.recv_timeout(wait) {
            Ok(connected) => connected.map_err(|e| failed(&shown, &e))?,
            Err(_) => {
                return Err(Exit::new(
                    ExitKind::TargetFailed,
                    format!(
                        "{shown}: the server did not answer the connection within {} s, the wait ({}, 60 s by default); gave up",
                        wait.as_secs_f64(),
                        crate::sqlite::DB_WAIT_ENV
                    ),
                )
                .into())
            }
        };
        let store = PgStore {
            shown,
            client: RefCell::new(client),
        };
        store.migrate()?;
        Ok(store)
    }

    fn fail(&self, e: postgres::Error) -> anyhow::Error {
        failed(&self.shown, &e)
    }

    fn version(&self, tx: &mut Transaction) -> Result<Found> {
        let tables: Vec<String> = tx
            .query(
                "SELECT table_name::text FROM information_schema.tables
                 WHERE table_schema = current_schema() ORDER BY 1",
                &[],
            )
            .map_err(|e| self.fail(e))?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let row = if tables.iter().any(|t| t == "schema_version") {
            tx.query_opt("SELECT version::bigint, app::text FROM schema_version", &[])
                .map_err(|e| self.fail(e))?
                .map(|r| (r.get(0), r.get(1)))
        } else {
            None
        };
        judge(&self.shown, &tables, row)
    }

    fn migrate(&self) -> Result<()> {
        let mut client = self.client.borrow_mut();
        let mut tx = client.transaction().map_err(|e| self.fail(e))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(|e| self.fail(e))?;
        let from = match self.version(&mut tx)? {
            Found::Version(v) if v == SCHEMA_VERSION => return Ok(()),
            Found::Version(v) => v,
            Found::Empty => {
                tx.batch_execute(
                    "CREATE TABLE schema_version (version BIGINT NOT NULL, app TEXT NOT NULL)",
                )
                .map_err(|e| self.fail(e))?;
                tx.execute("INSERT INTO schema_version VALUES (0, $1)", &[&APP])
                    .map_err(|e| self.fail(e))?;
                0
            }
        };
        for (v, sql) in PG_MIGRATIONS.iter().enumerate().skip(from as usize) {
            tx.batch_execute(sql).map_err(|e| self.fail(e))?;
            tx.execute("UPDATE schema_version SET version = $1", &[&(v as i64 + 1)])
                .map_err(|e| self.fail(e))?;
        }
        tx.commit().map_err(|e| self.fail(e))
    }

    /// [`Store::add`] with `before_commit` called once every row is written and the
    /// transaction not yet committed (tests kill the writer there).
    pub(crate) fn add_with(&self, new: &NewRun, before_commit: &dyn Fn()) -> Result<Added> {
        let mut client = self.client.borrow_mut();
        let mut tx = client.transaction().map_err(|e| self.fail(e))?;
        let hash = content_hash(&new.run);
        let Some(id) = insert_run(&mut tx, new, &hash).map_err(|e| self.fail(e))? else {
            let row = tx
                .query_one("SELECT id FROM runs WHERE content_hash = $1", &[&hash])
                .map_err(|e| self.fail(e))?;
            return Ok(Added::Duplicate(row.get(0)));
        };
        copy_rows(&mut tx, id, &new.run).map_err(|e| self.fail(e))?;
        copy_events(&mut tx, id, new, &|e| self.fail(e))?;
        before_commit();
        tx.commit().map_err(|e| self.fail(e))?;
        Ok(Added::New(id))
    }
}

fn insert_run(
    tx: &mut Transaction,
    new: &NewRun,
    hash: &str,
) -> Result<Option<i64>, postgres::Error> {
    let m = &new.run.meta;
    let meta_json = serde_json::to_string(m).unwrap_or_default();
    let knobs = serde_json::to_string(&m.knobs).unwrap_or_else(|_| "{}".into());
    let status = serde_json::to_value(m.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let added = arena_run::rfc3339_utc(std::time::SystemTime::now());
    let row = tx.query_opt(
        "INSERT INTO runs (content_hash, added_at, branch, commit_sha, testbed, arm, pilot_hash,
             status, started_at, ended_at, knobs, loops, answered, unanswered, source, meta_json,
             has_setup_events)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
         ON CONFLICT (content_hash) DO NOTHING RETURNING id",
        &[
            &hash,
            &added,
            &new.origin.branch,
            &new.origin.commit,
            &new.origin.testbed,
            &m.arm,
            &new.pilot_hash(),
            &status,
            &m.started_at,
            &m.ended_at,
            &knobs,
            &(new.run.loops.len() as i64),
            &(m.summary.answered as i64),
            &(m.summary.unanswered as i64),
            &new.source,
            &meta_json,
            &new.has_setup_events(),
        ],
    )?;
    Ok(row.map(|r| r.get(0)))
}

/// One field of COPY's text format: `\N` for none, backslash escapes for the rest.
fn field(out: &mut String, v: Option<&str>) {
    match v {
        None => out.push_str("\\N"),
        Some(s) => {
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\t' => out.push_str("\\t"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    c => out.push(c),
                }
            }
        }
    }
}

/// A row of COPY text from its fields.
fn row(out: &mut String, fields: &[Option<String>]) {
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push('\t');
        }
        field(out, f.as_deref());
    }
    out.push('\n');
}

/// A float as PostgreSQL reads it back to the same bits (Rust prints the shortest text
/// that round-trips).
fn num(v: f64) -> Option<String> {
    Some(format!("{v:?}"))
}

fn opt(v: Option<f64>) -> Option<String> {
    v.and_then(num)
}

fn int(v: impl std::fmt::Display) -> Option<String> {
    Some(v.to_string())
}

fn text(v: &str) -> Option<String> {
    Some(v.to_string())
}

fn boolean(v: bool) -> Option<String> {
    text(if v { "t" } else { "f" })
}

fn copy(tx: &mut Transaction, sql: &str, data: &str) -> Result<(), postgres::Error> {
    if data.is_empty() {
        return Ok(());
    }
    let mut w = tx.copy_in(sql)?;
    // An error writing is the server's; finish() reports it.
    let _ = w.write_all(data.as_bytes());
    w.finish().map(|_| ())
}

fn loops_text(id: i64, loops: &[Loop]) -> String {
    let mut out = String::new();
    for (i, l) in loops.iter().enumerate() {
        row(
            &mut out,
            &[
                int(id),
                int(i),
                int(l.index),
                text(&l.arm),
                text(&l.label),
                text(&l.event),
                boolean(l.cold),
                boolean(l.answered),
                text(l.outcome.name()),
                num(l.t_input),
                opt(l.t_send),
                opt(l.t_recv),
                opt(l.t_draw),
                opt(l.t_paint),
                opt(l.input_to_socket),
                opt(l.send_to_recv),
                opt(l.recv_to_draw),
                opt(l.input_to_paint),
                opt(l.t_answer),
                opt(l.input_to_pixels),
                int(l.reply_bytes),
                int(l.reply_frames),
                boolean(l.after_lapse),
            ],
        );
    }
    out
}

fn event_text(out: &mut String, id: i64, setup: bool, i: i64, e: &Event) {
    row(
        out,
        &[
            int(id),
            boolean(setup),
            int(i),
            int(e.seq),
            text(&e.kind),
            num(e.t_ms),
            int(e.size),
            text(&e.class),
            text(&e.event),
            boolean(e.trusted),
            int(e.target),
            e.answers.and_then(int),
        ],
    );
}

/// The run's records, then its setup records, in one COPY fed as they are read, 64 KiB
/// at a time. A record refused midway drops the writer unfinished, which aborts the COPY
/// and so the transaction.
fn copy_events(
    tx: &mut Transaction,
    id: i64,
    new: &NewRun,
    fail: &dyn Fn(postgres::Error) -> anyhow::Error,
) -> Result<()> {
    let mut w = tx.copy_in("COPY events FROM STDIN").map_err(fail)?;
    let mut buf = String::new();
    for setup in [false, true] {
        let mut i = 0i64;
        new.each_event(setup, &mut |e| {
            event_text(&mut buf, id, setup, i, e);
            i += 1;
            if buf.len() >= 1 << 16 {
                // An error writing is the server's; finish() reports it.
                let _ = w.write_all(buf.as_bytes());
                buf.clear();
            }
            Ok(())
        })?;
    }
    let _ = w.write_all(buf.as_bytes());
    w.finish().map(|_| ()).map_err(fail)
}

/// Every per-run row but the records, a table at a time, each with one COPY.
fn copy_rows(tx: &mut Transaction, id: i64, run: &Run) -> Result<(), postgres::Error> {
    copy(tx, "COPY loops FROM STDIN", &loops_text(id, &run.loops))?;
    let mut w = String::new();
    for (i, x) in run.meta.warnings.iter().enumerate() {
        row(&mut w, &[int(id), int(i), text(&x.code), text(&x.message)]);
    }
    copy(tx, "COPY warnings FROM STDIN", &w)?;
    let mut c = String::new();
    if let Some(cpu) = &run.meta.cpu {
        let mut ord = 0;
        for p in &cpu.processes {
            for (k, phase) in cpu.phases.iter().enumerate() {
                let cpu_s = p.cpu_s.get(k).copied().unwrap_or(0.0);
                let pct = p.pct_of_core.get(k).copied().unwrap_or(0.0);
                row(
                    &mut c,
                    &[
                        int(id),
                        text(&p.label),
                        text(&phase.name),
                        int(ord),
                        num(cpu_s),
                        num(pct),
                    ],
                );
                ord += 1;
            }
        }
    }
    copy(tx, "COPY cpu_phases FROM STDIN", &c)
}

const ROW_COLUMNS: &str = "id, content_hash, added_at, branch, commit_sha, testbed, arm, \
    pilot_hash, status, started_at, ended_at, knobs, loops, answered, unanswered, source";

fn run_row(r: &postgres::Row) -> RunRow {
    let knobs: String = r.get(11);
    RunRow {
        id: r.get(0),
        content_hash: r.get(1),
        added_at: r.get(2),
        branch: r.get(3),
        commit: r.get(4),
        testbed: r.get(5),
        arm: r.get(6),
        pilot_hash: r.get(7),
        status: r.get(8),
        started_at: r.get(9),
        ended_at: r.get(10),
        knobs: serde_json::from_str(&knobs).unwrap_or_default(),
        loops: r.get::<_, i64>(12) as u64,
        answered: r.get::<_, i64>(13) as u64,
        unanswered: r.get::<_, i64>(14) as u64,
        source: r.get(15),
    }
}

fn loop_row(r: &postgres::Row) -> Loop {
    let outcome: String = r.get(6);
    Loop {
        index: r.get::<_, i64>(0) as u64,
        arm: r.get(1),
        label: r.get(2),
        event: r.get(3),
        cold: r.get(4),
        answered: r.get(5),
        outcome: serde_json::from_value(serde_json::Value::String(outcome)).unwrap_or_default(),
        t_input: r.get(7),
        t_send: r.get(8),
        t_recv: r.get(9),
        t_draw: r.get(10),
        t_paint: r.get(11),
        input_to_socket: r.get(12),
        send_to_recv: r.get(13),
        recv_to_draw: r.get(14),
        input_to_paint: r.get(15),
        t_answer: r.get(16),
        input_to_pixels: r.get(17),
        reply_bytes: r.get::<_, i64>(18) as u64,
        reply_frames: r.get::<_, i64>(19) as u64,
        after_lapse: r.get(20),
    }
}

fn event_row(r: &postgres::Row) -> Event {
    Event {
        seq: r.get::<_, i64>(0) as u64,
        kind: r.get(1),
        t_ms: r.get(2),
        size: r.get::<_, i64>(3) as u32,
        class: r.get(4),
        event: r.get(5),
        trusted: r.get(6),
        target: r.get::<_, i32>(7) as u16,
        answers: r.get::<_, Option<i64>>(8).map(|a| a as u64),
    }
}

impl PgStore {
    fn no_run(&self, id: i64) -> anyhow::Error {
        Exit::bad_input(format!("{}: no stored run {id}", self.shown)).into()
    }
}

impl Store for PgStore {
    fn add(&mut self, run: &NewRun) -> Result<Added> {
        self.add_with(run, &|| {})
    }

    fn list(&self, f: &Filter) -> Result<Vec<RunRow>> {
        let (cond, args) = f.where_clause(|n| format!("${n}"));
        let limit = f.last.map_or(String::new(), |n| format!(" LIMIT {n}"));
        let sql = format!("SELECT {ROW_COLUMNS} FROM runs{cond} ORDER BY id DESC{limit}");
        let params: Vec<&(dyn postgres::types::ToSql + Sync)> = args
            .iter()
            .map(|a| a as &(dyn postgres::types::ToSql + Sync))
            .collect();
        let rows = self
            .client
            .borrow_mut()
            .query(&sql, &params)
            .map_err(|e| self.fail(e))?;
        Ok(rows.iter().rev().map(run_row).collect())
    }

    fn row(&self, id: i64) -> Result<RunRow> {
        let sql = format!("SELECT {ROW_COLUMNS} FROM runs WHERE id = $1");
        let row = self
            .client
            .borrow_mut()
            .query_opt(&sql, &[&id])
            .map_err(|e| self.fail(e))?;
        row.as_ref().map(run_row).ok_or_else(|| self.no_run(id))
    }

    fn load_raw(&self, id: i64, events: bool) -> Result<Run> {
        let mut c = self.client.borrow_mut();
        let row = c
            .query_opt(
                "SELECT meta_json, has_setup_events FROM runs WHERE id = $1",
                &[&id],
            )
            .map_err(|e| self.fail(e))?
            .ok_or_else(|| self.no_run(id))?;
        let (meta_json, has_setup): (String, bool) = (row.get(0), row.get(1));
        let meta: RunMeta = serde_json::from_str(&meta_json).map_err(|e| {
            Exit::bad_input(format!(
                "{}: stored run {id}: its run.json does not read back ({e})",
                self.shown
            ))
        })?;
        let loops = c
            .query(
                "SELECT idx, arm, label, event, cold, answered, outcome, t_input, t_send, t_recv,
                     t_draw, t_paint, input_to_socket, send_to_recv, recv_to_draw, input_to_paint,
                     t_answer, input_to_pixels, reply_bytes, reply_frames, after_lapse
                 FROM loops WHERE run_id = $1 ORDER BY ord",
                &[&id],
            )
            .map_err(|e| self.fail(e))?
            .iter()
            .map(loop_row)
            .collect();
        let mut read_events = |setup: bool| -> Result<Vec<Event>> {
            Ok(c.query(
                "SELECT seq, kind, t_ms, size, class, event, trusted, target, answers FROM events
                 WHERE run_id = $1 AND setup = $2 ORDER BY ord",
                &[&id, &setup],
            )
            .map_err(|e| self.fail(e))?
            .iter()
            .map(event_row)
            .collect())
        };
        let (events, setup_events) = if events {
            let setup = if has_setup {
                Some(read_events(true)?)
            } else {
                None
            };
            (read_events(false)?, setup)
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

    fn load_many_raw(&self, ids: &[i64]) -> Result<Vec<Run>> {
        let mut c = self.client.borrow_mut();
        let metas = c
            .query("SELECT id, meta_json FROM runs WHERE id = ANY($1)", &[&ids])
            .map_err(|e| self.fail(e))?;
        let mut by_id: std::collections::HashMap<i64, Run> = std::collections::HashMap::new();
        for r in &metas {
            let (id, json): (i64, String) = (r.get(0), r.get(1));
            let meta: RunMeta = serde_json::from_str(&json).map_err(|e| {
                Exit::bad_input(format!(
                    "{}: stored run {id}: its run.json does not read back ({e})",
                    self.shown
                ))
            })?;
            by_id.insert(
                id,
                Run {
                    meta,
                    loops: Vec::new(),
                    events: Vec::new(),
                    setup_events: None,
                    gestures: Vec::new(),
                },
            );
        }
        let loops = c
            .query(
                "SELECT idx, arm, label, event, cold, answered, outcome, t_input, t_send, t_recv,
                     t_draw, t_paint, input_to_socket, send_to_recv, recv_to_draw, input_to_paint,
                     t_answer, input_to_pixels, reply_bytes, reply_frames, after_lapse, run_id
                 FROM loops WHERE run_id = ANY($1) ORDER BY run_id, ord",
                &[&ids],
            )
            .map_err(|e| self.fail(e))?;
        for r in &loops {
            if let Some(run) = by_id.get_mut(&r.get::<_, i64>(21)) {
                run.loops.push(loop_row(r));
            }
        }
        ids.iter()
            .map(|id| by_id.remove(id).ok_or_else(|| self.no_run(*id)))
            .collect()
    }

    fn counts(&self, id: i64) -> Result<StoredCounts> {
        self.row(id)?;
        let mut c = self.client.borrow_mut();
        let mut count = |table: &str| -> Result<u64> {
            let sql = format!("SELECT count(*) FROM {table} WHERE run_id = $1");
            let n: i64 = c.query_one(&sql, &[&id]).map_err(|e| self.fail(e))?.get(0);
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
        format!("postgres {} (schema version {SCHEMA_VERSION})", self.shown)
    }
}
