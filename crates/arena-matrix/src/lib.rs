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

/// `reports/matrix-<UTC time>`, e.g. `reports/matrix-20261129-191500` (`-2`, `-3`, ... after
/// it when that folder exists).
pub fn default_out_dir() -> std::path::PathBuf {
    let t = arena_run::rfc3339_utc(std::time::SystemTime::now());
    let stamp: String = t
        .chars()
        .take(19)
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .map(|c| if c == 'T' { '-' } else { c })
        .collect();
    let base = std::path::PathBuf::from("reports").join(format!("matrix-{stamp}"));
    // Two matrices started within one second each get a folder of their own.
    (1..1000)
        .map(|i| match i {
            1 => base.clone(),
            _ => base.with_file_name(format!("matrix-{stamp}-{i}")),
        })
        .find(|d| !d.exists())
        .unwrap_or(base)
}

/// Makes `dir`, the matrix's output folder, refusing (exit 2) one that holds anything
/// already or cannot be made: an earlier matrix's folder would have one file appended to
/// and another replaced, and a file or a device in its place left nothing written.
pub fn new_out_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    let bad = |why: String| -> anyhow::Error {
        arena_report::Exit::bad_input(format!("--out {}: {why}", dir.display())).into()
    };
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(bad(
                    "the folder holds files already (an earlier matrix?): a matrix never writes over one; give a new folder".into(),
                ));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|e| bad(format!("cannot make the folder: {e}")))
        }
        Err(e) => Err(bad(format!("not a folder this matrix can write into: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_out_dir_is_new_or_empty_and_a_folder() {
        let d = tempfile::tempdir().unwrap();
        let fresh = d.path().join("a/b");
        super::new_out_dir(&fresh).unwrap();
        assert!(fresh.is_dir());
        super::new_out_dir(&fresh).unwrap();
        std::fs::write(fresh.join("runs.jsonl"), "{}\n").unwrap();
        let e = format!("{:#}", super::new_out_dir(&fresh).unwrap_err());
        assert!(e.contains("holds files already"), "{e}");
        let file = d.path().join("f");
        std::fs::write(&file, "x").unwrap();
        for not_dir in [file.as_path(), std::path::Path::new("/dev/full")] {
            let e = super::new_out_dir(not_dir).unwrap_err();
            assert_eq!(
                arena_report::ExitKind::of(&e).map(arena_report::ExitKind::code),
                Some(2),
                "{e:#}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "x",
            "left as it was"
        );
    }
}
