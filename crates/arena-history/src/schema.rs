//! The history schema and its migrations. A database records its version in
//! `schema_version`, with the name of the tool that made it; opening one applies the
//! migrations it lacks, in order, in one transaction, and refuses one from a newer version
//! (its tables may mean something this build does not know).

/// The version this build writes, and the newest it reads.
pub const SCHEMA_VERSION: i64 = 1;

/// What `schema_version.app` holds in this tool's databases.
pub const APP: &str = "arena-perf history";

/// Migration `i` takes a database from version `i` to `i + 1`.
pub const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [V1];

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
