//! Run history in a database: runs from many machines and commits kept in one place, so
//! the question can be "when did main get slower" and not only "is B slower than A".
//!
//! One interface, [`Store`], over the databases (SQLite by default, [`open`] picks by the
//! `--db` text). A run is stored whole, in one transaction: its `run.json` as written, its
//! loops (the statistics need the raw loops), its recorder records (WebSocket frames,
//! draws, paints), its warnings and its CPU by phase, with where it came from (branch,
//! commit, testbed). A stored run loads back as the same [`arena_run::Run`], so the gate,
//! compare and the tables run on it unchanged. [`trend`] takes a run-level quantile per
//! run with its bootstrap interval and finds the steps in that series
//! ([`changepoint`]: PELT, Killick, Fearnhead & Eckley 2012, with a permutation test).
//! `docs/history.md` has the schema, its cost and the method.

pub mod changepoint;
#[cfg(feature = "cli")]
pub mod cli;
mod context;
#[cfg(feature = "cli")]
pub mod from_history;
mod pg;
#[cfg(test)]
mod pg_tests;
mod record;
mod schema;
mod select;
mod sink;
mod sqlite;
mod store;
#[cfg(test)]
mod suite;
mod tables;
mod trend;

pub use context::{default_testbed, git_branch, git_commit, Origin};
pub use record::{content_hash, NewRun};
pub use schema::SCHEMA_VERSION;
pub use select::{
    baseline_runs, history_baseline, selected_runs, with_stored, Baseline, Selection,
};
pub use sink::{Sink, Stored};
pub use store::{
    db_file, open, open_default, resolve, Added, Filter, RunRow, Store, StoredCounts, DB_ENV,
    DEFAULT_DB,
};
pub use tables::{
    add_json, add_table, branch_trend_section, list_json, list_table, show_json, show_table,
    trend_json, trend_section, trend_table,
};
pub use trend::{trend, Point, Step, Trend, TrendOptions};
