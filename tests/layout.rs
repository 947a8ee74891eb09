//! The root crate is the command line only (`docs/ARCHITECTURE.md`, "Layout"): clap's
//! definitions and the wiring from flags to library calls and printing. Its code lines are
//! counted as `find src -name '*.rs' | xargs cat | grep -v '^\s*$' | grep -v '^\s*//' | wc -l`
//! counts them, so logic that grows in `src/` instead of a library is seen.

use std::path::Path;

/// The most code lines `src/` may hold: the command line with its flags' glue in the
/// libraries (`arena_compare::options` and `ab`, `arena_pilot::flags`,
/// `arena_history::cli`, `arena_matrix::flags`), with a little room under it.
const MAX_LINES: usize = 1_500;

/// Lines that are neither blank nor a `//` comment (doc comments included).
fn code_lines(text: &str) -> usize {
    text.lines()
        .map(str::trim_start)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .count()
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_root_crate_stays_a_thin_command_line() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut per_file: Vec<(usize, String)> = files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            (code_lines(&text), p.display().to_string())
        })
        .collect();
    let total: usize = per_file.iter().map(|f| f.0).sum();
    per_file.sort_by(|a, b| b.cmp(a));
    let largest: Vec<String> = per_file
        .iter()
        .take(5)
        .map(|(n, p)| format!("{n} {p}"))
        .collect();
    assert!(
        total <= MAX_LINES,
        "src/ holds {total} code lines, over {MAX_LINES}: move logic into the library a \
         reader would look in (largest: {})",
        largest.join(", ")
    );
}

#[test]
fn blank_and_comment_lines_are_not_counted() {
    let text = "//! doc\n\nfn f() {\n    // why\n    /// doc\n    let x = 1; // tail\n}\n  \t\n";
    assert_eq!(code_lines(text), 3);
}
