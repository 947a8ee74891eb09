//! The history schema and its migrations. A database records its version in
//! `schema_version`, with the name of the tool that made it; opening one applies the
//! migrations it lacks, in order, in one transaction, and refuses one from a newer version
//! (its tables may mean something this build does not know).

/// The version this build writes, and the newest it reads.
pub const SCHEMA_VERSION: i64 = 2;

/// What `schema_version.app` holds in this tool's databases.
pub const APP: &str = "arena-perf history";

/// Migration `i` takes a database from version `i` to `i + 1`.
pub const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [V1, V2];

/// Version 2: a loop keeps its `after_lapse` mark (it went before the socket had been quiet
/// for the settle); loops stored before it read unmarked, as their run.json had no mark.
const V2: &str = "ALTER TABLE loops ADD COLUMN after_lapse INTEGER NOT NULL DEFAULT 0;";

/// [`V2`] for PostgreSQL.
const PG_V2: &str = "ALTER TABLE loops ADD COLUMN after_lapse BOOLEAN NOT NULL DEFAULT FALSE;";

/// Version 1. A run is a row of `runs` (its `run.json` whole, and the columns lists filter
/// on) and its rows in the per-run tables, keyed by run and position. `WITHOUT ROWID` keeps
/// each per-run table one B-tree in key order, so a run's rows are read in one range scan.
const V1: &str = "
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    content_hash TEXT NOT NULL UNIQUE,
    added_at TEXT NOT NULL,
    branch TEXT,
    commit_sha TEXT,
    testbed TEXT NOT NULL,
    arm TEXT NOT NULL,
    pilot_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT NOT NULL,
    knobs TEXT NOT NULL,
    loops INTEGER NOT NULL,
    answered INTEGER NOT NULL,
    unanswered INTEGER NOT NULL,
    source TEXT,
    meta_json TEXT NOT NULL,
    has_setup_events INTEGER NOT NULL
);
CREATE INDEX runs_by_branch ON runs (branch, testbed, pilot_hash, id);
CREATE TABLE loops (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ord INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    arm TEXT NOT NULL,
    label TEXT NOT NULL,
    event TEXT NOT NULL,
    cold INTEGER NOT NULL,
    answered INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    t_input REAL NOT NULL,
    t_send REAL, t_recv REAL, t_draw REAL, t_paint REAL,
    input_to_socket REAL, send_to_recv REAL, recv_to_draw REAL, input_to_paint REAL,
    t_answer REAL, input_to_pixels REAL,
    reply_bytes INTEGER NOT NULL,
    reply_frames INTEGER NOT NULL,
    PRIMARY KEY (run_id, ord)
) WITHOUT ROWID;
CREATE TABLE events (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    setup INTEGER NOT NULL,
    ord INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    t_ms REAL NOT NULL,
    size INTEGER NOT NULL,
    class TEXT NOT NULL,
    event TEXT NOT NULL,
    trusted INTEGER NOT NULL,
    target INTEGER NOT NULL,
    answers INTEGER,
    PRIMARY KEY (run_id, setup, ord)
) WITHOUT ROWID;
CREATE TABLE warnings (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ord INTEGER NOT NULL,
    code TEXT NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (run_id, ord)
) WITHOUT ROWID;
CREATE TABLE cpu_phases (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    process TEXT NOT NULL,
    phase TEXT NOT NULL,
    ord INTEGER NOT NULL,
    cpu_s REAL NOT NULL,
    pct_of_core REAL NOT NULL,
    PRIMARY KEY (run_id, ord)
) WITHOUT ROWID;
";

/// What opening found: a database with none of this tool's tables yet, or its version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Empty,
    Version(i64),
}

/// The one judgement of a database every store makes on opening, from its table names and
/// its `schema_version` row: another tool's database, or a newer version, is refused
/// (exit 2) naming `db`.
pub fn judge(db: &str, tables: &[String], row: Option<(i64, String)>) -> anyhow::Result<Found> {
    let bad = |why: String| -> anyhow::Error {
        arena_report::Exit::bad_input(format!("--db {db}: {why}")).into()
    };
    if !tables.iter().any(|t| t == "schema_version") {
        if tables.is_empty() {
            return Ok(Found::Empty);
        }
        return Err(bad(format!(
            "a database of something else, not an arena-perf history: it has no schema_version table (its tables: {})",
            tables.join(", ")
        )));
    }
    match row {
        Some((_, app)) if app != APP => Err(bad(format!(
            "a database of {app:?}, not an arena-perf history"
        ))),
        Some((v, _)) if v > SCHEMA_VERSION => Err(bad(format!(
            "history schema version {v} is newer than this arena-perf reads (version {SCHEMA_VERSION}); use a newer arena-perf"
        ))),
        Some((v, _)) if v >= 0 => Ok(Found::Version(v)),
        _ => Err(bad("its schema_version table holds no valid version".into())),
    }
}

/// The same schema for PostgreSQL, migration `i` to `i + 1` (types spelled as PostgreSQL
/// spells them; the tables, columns and keys are those of [`MIGRATIONS`]).
pub const PG_MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [PG_V1, PG_V2];

const PG_V1: &str = "
CREATE TABLE runs (
    id BIGSERIAL PRIMARY KEY,
    content_hash TEXT NOT NULL UNIQUE,
    added_at TEXT NOT NULL,
    branch TEXT,
    commit_sha TEXT,
    testbed TEXT NOT NULL,
    arm TEXT NOT NULL,
    pilot_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT NOT NULL,
    knobs TEXT NOT NULL,
    loops BIGINT NOT NULL,
    answered BIGINT NOT NULL,
    unanswered BIGINT NOT NULL,
    source TEXT,
    meta_json TEXT NOT NULL,
    has_setup_events BOOLEAN NOT NULL
);
CREATE INDEX runs_by_branch ON runs (branch, testbed, pilot_hash, id);
CREATE TABLE loops (
    run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ord BIGINT NOT NULL,
    idx BIGINT NOT NULL,
    arm TEXT NOT NULL,
    label TEXT NOT NULL,
    event TEXT NOT NULL,
    cold BOOLEAN NOT NULL,
    answered BOOLEAN NOT NULL,
    outcome TEXT NOT NULL,
    t_input DOUBLE PRECISION NOT NULL,
    t_send DOUBLE PRECISION, t_recv DOUBLE PRECISION, t_draw DOUBLE PRECISION,
    t_paint DOUBLE PRECISION, input_to_socket DOUBLE PRECISION,
    send_to_recv DOUBLE PRECISION, recv_to_draw DOUBLE PRECISION,
    input_to_paint DOUBLE PRECISION, t_answer DOUBLE PRECISION,
    input_to_pixels DOUBLE PRECISION,
    reply_bytes BIGINT NOT NULL,
    reply_frames BIGINT NOT NULL,
    PRIMARY KEY (run_id, ord)
);
CREATE TABLE events (
    run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    setup BOOLEAN NOT NULL,
    ord BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    t_ms DOUBLE PRECISION NOT NULL,
    size BIGINT NOT NULL,
    class TEXT NOT NULL,
    event TEXT NOT NULL,
    trusted BOOLEAN NOT NULL,
    target INTEGER NOT NULL,
    answers BIGINT,
    PRIMARY KEY (run_id, setup, ord)
);
CREATE TABLE warnings (
    run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ord BIGINT NOT NULL,
    code TEXT NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (run_id, ord)
);
CREATE TABLE cpu_phases (
    run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    process TEXT NOT NULL,
    phase TEXT NOT NULL,
    ord BIGINT NOT NULL,
    cpu_s DOUBLE PRECISION NOT NULL,
    pct_of_core DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, ord)
);
";
