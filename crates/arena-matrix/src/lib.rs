//! Command matrices and CPU samplers.
//!
//! A matrix file names cases (rows), arms (columns), repeats, a timeout, a baseline arm, and
//! how a run's figure is read (a metric line, steady windows of a periodic log, wall time,
//! or a nested pilot run). [`run_matrix`] runs every case x arm x repeat interleaved, each
//! run in its own process group and folder with per-thread CPU sampled beside it;
//! failures are data. [`reduce`] decides each cell (figure and noise verdict, by
//! `arena-stats`); [`table`] renders the result as the tables the field notes print.

pub mod exec;
pub mod figure;
pub mod flags;
pub mod json;
pub mod lines;
pub mod machine;
pub mod matrix;
pub mod reduce;
pub mod sampler;
pub mod schedule;
pub mod spec;
pub mod table;

pub use json::matrix_json;
pub use matrix::{run_matrix, MatrixOptions, MatrixResult, RunResult, RunStatus};
pub use spec::{load, parse, MatrixSpec};

/// `reports/matrix-<UTC time>`, e.g. `reports/matrix-20261129-191500`.
pub fn default_out_dir() -> std::path::PathBuf {
    let t = arena_run::rfc3339_utc(std::time::SystemTime::now());
    let stamp: String = t
        .chars()
        .take(19)
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .map(|c| if c == 'T' { '-' } else { c })
        .collect();
    std::path::PathBuf::from("reports").join(format!("matrix-{stamp}"))
}
