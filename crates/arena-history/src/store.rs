//! The one interface every database is used through, and the choice of database from
//! `--db` (or `ARENA_PERF_DB`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use arena_run::Run;

use crate::record::NewRun;

/// Where the history is when neither `--db` nor [`DB_ENV`] says.
pub const DEFAULT_DB: &str = "reports/history.sqlite";

/// The environment variable that names the database when `--db` is not given.
pub const DB_ENV: &str = "ARENA_PERF_DB";

/// What an add did: stored the run, or found it already there (same content hash).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    New(i64),
    Duplicate(i64),
}

impl Added {
    pub fn id(self) -> i64 {
        match self {
            Added::New(id) | Added::Duplicate(id) => id,
        }
    }
}

/// Which runs `list`, `trend` and the gate's baseline read. Every field set must match.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub branch: Option<String>,
    pub testbed: Option<String>,
    /// A prefix of the pilot hash (12 characters are shown; any prefix matches).
    pub pilot: Option<String>,
    pub arm: Option<String>,
    /// Runs started at or after this UTC time (RFC 3339, or a date `2026-11-29`).
    pub since: Option<String>,
    /// Only the newest this many of the runs that match (still listed oldest first).
    pub last: Option<usize>,
}

impl Filter {
    /// The WHERE clause of this filter and its parameters, in one order for every store;
    /// `placeholder(n)` writes the n-th parameter (1-based) as the store's SQL spells it.
    pub(crate) fn where_clause(
        &self,
        placeholder: impl Fn(usize) -> String,
    ) -> (String, Vec<String>) {
        let pilot = self
            .pilot
            .as_ref()
            .map(|p| format!("{}%", p.replace(['%', '_'], "")));
        let fields = [
            ("branch =", self.branch.clone()),
            ("testbed =", self.testbed.clone()),
            ("pilot_hash LIKE", pilot),
            ("arm =", self.arm.clone()),
            ("started_at >=", self.since.clone()),
        ];
        let (conds, args): (Vec<&str>, Vec<String>) = fields
            .into_iter()
            .filter_map(|(cond, v)| v.map(|v| (cond, v)))
            .unzip();
        let sql = conds
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c} {}", placeholder(i + 1)))
            .collect::<Vec<_>>();
        let sql = if sql.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", sql.join(" AND "))
        };
        (sql, args)
    }

    /// Refuses (exit 2) a `since` that is not a UTC date or RFC 3339 time: it is compared
    /// as text with the runs' start times, so anything else would select nonsense.
    pub fn check(&self) -> Result<()> {
        let Some(since) = &self.since else {
            return Ok(());
        };
        let b = since.as_bytes();
        let digits =
            |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
        let date = b.len() >= 10
            && digits(0..4)
            && b[4] == b'-'
            && digits(5..7)
            && b[7] == b'-'
            && digits(8..10);
        if date && (b.len() == 10 || b[10] == b'T') && real_date(since) {
            return Ok(());
        }
        Err(arena_report::Exit::bad_input(format!(
            "--since {since}: expected a real UTC date (2026-11-29) or RFC 3339 time (2026-11-29T10:00:00Z)"
        ))
        .into())
    }
}

/// One stored run as the lists show it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub id: i64,
    pub content_hash: String,
    pub added_at: String,
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub testbed: String,
    pub arm: String,
    pub pilot_hash: String,
    pub status: String,
    pub started_at: String,
    pub ended_at: String,
    pub knobs: BTreeMap<String, String>,
    pub loops: u64,
    pub answered: u64,
    pub unanswered: u64,
    pub source: Option<String>,
}

/// How many rows of each table one stored run holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoredCounts {
    pub loops: u64,
    pub events: u64,
    pub warnings: u64,
    pub cpu: u64,
}

/// A history database. Every add is one transaction: a run is stored whole or not at all.
pub trait Store {
    /// Stores `run` unless a run with its content hash is already there.
    fn add(&mut self, run: &NewRun) -> Result<Added>;
    /// The runs `filter` selects, in the order they were added.
    fn list(&self, filter: &Filter) -> Result<Vec<RunRow>>;
    /// One run's row; exit 2 naming the id when there is none.
    fn row(&self, id: i64) -> Result<RunRow>;
    /// The run as its folder loaded, with its records when `events` (they can be large and
    /// no table of figures needs them).
    fn load(&self, id: i64, events: bool) -> Result<Run> {
        let run = self.load_raw(id, events)?;
        self.checked(id, run)
    }
    /// The runs `ids` name, in that order, without their records: what trends read. A
    /// store may read them in fewer round trips than one [`Store::load`] each.
    fn load_many(&self, ids: &[i64]) -> Result<Vec<Run>> {
        let runs = self.load_many_raw(ids)?;
        ids.iter()
            .zip(runs)
            .map(|(id, run)| self.checked(*id, run))
            .collect()
    }
    /// [`Store::load`] as the database holds it, unchecked.
    fn load_raw(&self, id: i64, events: bool) -> Result<Run>;
    /// [`Store::load_many`] as the database holds them, unchecked.
    fn load_many_raw(&self, ids: &[i64]) -> Result<Vec<Run>> {
        ids.iter().map(|id| self.load_raw(*id, false)).collect()
    }
    /// A stored run read back is checked as a run folder is on loading: a row edited in
    /// the database (a loop of inf or -50 ms) is refused (exit 2), not compared.
    fn checked(&self, id: i64, run: Run) -> Result<Run> {
        arena_run::check_run(&run).map_err(|e| {
            arena_report::Exit::bad_input(format!(
                "{}: stored run {id} does not read back as a run: {e}",
                self.describe()
            ))
        })?;
        Ok(run)
    }
    /// Rows per table for one run.
    fn counts(&self, id: i64) -> Result<StoredCounts>;
    /// The database's schema version and what it is (`sqlite FILE`), for messages.
    fn describe(&self) -> String;
}

/// Opens the database `db` names: a `postgres://` or `postgresql://` URL (PostgreSQL), else an SQLite
/// file (created with its folder when absent). Anything that is not this tool's history
/// is refused with exit 2 naming it.
pub fn open(db: &str) -> Result<Box<dyn Store>> {
    if is_pg_url(db) {
        return Ok(Box::new(crate::pg::PgStore::open(db)?));
    }
    if let Some(scheme) = unknown_scheme(db) {
        return Err(arena_report::Exit::bad_input(format!(
            "--db {}: `{scheme}://` is no database this tool opens: give an SQLite file's path or a postgres:// URL",
            redact(db)
        ))
        .into());
    }
    Ok(Box::new(crate::sqlite::SqliteStore::open(Path::new(db))?))
}

/// The scheme of a URL-like `db` that is not PostgreSQL's (`mysql`, `http`): taken as a
/// path it made an SQLite file whose folders held the password.
fn unknown_scheme(db: &str) -> Option<&str> {
    let (scheme, _) = db.split_once("://")?;
    let plain = !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    plain.then_some(scheme)
}

/// The database named by `--db`, else by [`DB_ENV`], else [`DEFAULT_DB`]. A refusal of
/// the one the environment named says so: the user gave no `--db`.
pub fn open_default(db: Option<&str>) -> Result<Box<dyn Store>> {
    let from_env = db.is_none() && std::env::var(DB_ENV).is_ok_and(|s| !s.is_empty());
    let opened = open(&resolve(db));
    if from_env {
        return opened.with_context(|| format!("the history ${DB_ENV} names (no --db given)"));
    }
    opened
}

/// The SQLite file a command's `--db` (else [`DB_ENV`], else [`DEFAULT_DB`]) names: an
/// input of every command that could write over it, whether or not it reads the history
/// (its outputs are refused onto it). `None` for a PostgreSQL URL.
pub fn db_file(db: Option<&str>) -> Option<PathBuf> {
    let db = resolve(db);
    (!is_pg_url(&db)).then(|| PathBuf::from(db))
}

/// A PostgreSQL URL, which [`open`] connects to; anything else names an SQLite file.
fn is_pg_url(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

/// The text `open_default` opens.
pub fn resolve(db: Option<&str>) -> String {
    db.map(str::to_string)
        .or_else(|| std::env::var(DB_ENV).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_DB).display().to_string())
}

/// The date (and the time, where given to the minute) of a `since` shaped as one names a
/// real moment: 2026-13-45 or T25:61 would compare as text and select nothing, silently.
fn real_date(since: &str) -> bool {
    let num = |r: std::ops::Range<usize>| since.get(r).and_then(|t| t.parse::<u32>().ok());
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if !(1..=days).contains(&d) {
        return false;
    }
    match (num(11..13), num(14..16)) {
        _ if since.len() == 10 => true,
        (Some(h), Some(min)) => h < 24 && min < 60 && since.as_bytes().get(13) == Some(&b':'),
        _ => false,
    }
}

/// A URL with its password left out, for messages.
pub(crate) fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..s + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn a_url_of_another_database_is_refused_and_no_file_is_made() {
        let d = tempfile::tempdir().unwrap();
        for url in [
            "mysql://user:pw@host/db",
            "http://host/h.sqlite",
            "sqlite://h",
        ] {
            let e = format!("{:#}", super::open(url).err().expect("refused"));
            let scheme = url.split("://").next().unwrap();
            assert!(
                e.contains(&format!("`{scheme}://` is no database")) && !e.contains(":pw@"),
                "{e}"
            );
            let code = arena_report::ExitKind::of(&super::open(url).err().unwrap());
            assert_eq!(code.map(arena_report::ExitKind::code), Some(2));
        }
        // A path with `://` further in is still a path; nothing was made for the URLs.
        let nested = d.path().join("a://b");
        assert_eq!(super::unknown_scheme(&nested.display().to_string()), None);
        assert!(
            !std::path::Path::new("mysql:").exists() && !std::path::Path::new("http:").exists()
        );
    }

    #[test]
    fn since_takes_a_date_or_an_rfc_3339_time_only() {
        let f = |s: &str| {
            super::Filter {
                since: Some(s.into()),
                ..super::Filter::default()
            }
            .check()
        };
        assert!(f("2026-11-29").is_ok() && f("2026-11-29T10:00:00.000Z").is_ok());
        assert!(f("2024-02-29").is_ok() && f("2026-12-31T23:59:59Z").is_ok());
        // Shaped like dates, but none is a real moment: refused, not an empty listing.
        for impossible in [
            "2026-13-45",
            "2026-02-29",
            "2026-04-31",
            "2026-00-10",
            "2026-11-29T25:00Z",
            "2026-11-29T10:61Z",
            "2026-11-29T",
        ] {
            assert!(f(impossible).is_err(), "{impossible}");
        }
        for bad in ["yesterday", "2026-11", "29-11-2026", "2026-11-29 10:00", ""] {
            assert!(f(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_url_is_shown_without_its_password() {
        assert_eq!(
            redact("postgres://ci:hunter2@db:5432/h"),
            "postgres://ci:***@db:5432/h"
        );
        assert_eq!(redact("postgres://ci@db/h"), "postgres://ci@db/h");
        assert_eq!(redact("reports/history.sqlite"), "reports/history.sqlite");
    }
}
