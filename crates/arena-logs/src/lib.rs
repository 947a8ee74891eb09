//! Reducers for server-side evidence: per-frame stats lines, JVM GC logs, class loading
//! and collapsed profiler stacks.
//!
//! Shaped like inferno's `collapse/`: one module per log kind, each a [`scan::LineParser`]
//! (one line in, one typed record out) driven by the one streaming reader in [`scan`], so
//! every kind gets the same speed, constant memory and the same "lines not understood"
//! report (file, count, first few with line numbers). Each module then folds its records
//! into `arena_report::Table`s; nothing here prints. [`input`] opens what the scanner
//! reads: files, pipes, stdin (`-`) and gzip, in one pass, refusing binary data.
//! `cli` (feature `cli`) holds the `logs` command's flags, and is the only part that
//! needs clap.

pub mod classload;
#[cfg(feature = "cli")]
pub mod cli;
pub mod gc;
pub mod input;
pub mod profile;
pub mod progress;
pub mod scan;
pub mod stats;
pub mod unified;

use arena_report::{fmt_count, Format, Table};

use crate::scan::ScanReport;

/// Renders several tables; JSON becomes one array so the output stays one document.
pub fn render(tables: &[Table], format: Format) -> String {
    match format {
        Format::Json => {
            let v: Vec<serde_json::Value> = tables.iter().map(Table::to_json).collect();
            let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
            s.push('\n');
            s
        }
        _ => tables
            .iter()
            .map(|t| t.render(format))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// What `--format json` prints for one `logs` subcommand: its tables are for people, this
/// is the data (`docs/schema/logs-<kind>.json`).
pub fn render_json(doc: &serde_json::Value) -> String {
    arena_report::json::to_text(doc)
}

/// A streamed summary as `{n, sum, min, mean, p50, p90, p99, max}` (3 significant digits
/// for the quantiles), or `null` when it saw nothing.
pub(crate) fn streaming_json(s: &arena_stats::StreamingSummary) -> serde_json::Value {
    use arena_report::num;
    match s.summary() {
        Some(x) => serde_json::json!({
            "n": x.n,
            "sum": num(s.sum()),
            "min": num(x.min),
            "mean": num(x.mean),
            "p50": num(x.p50),
            "p90": num(x.p90),
            "p99": num(x.p99),
            "max": num(x.max),
        }),
        None => serde_json::Value::Null,
    }
}

/// What the scanner read of one file, as data.
pub(crate) fn scan_json(scan: &ScanReport) -> serde_json::Value {
    serde_json::json!({
        "file": scan.file,
        "bytes": scan.bytes,
        "lines": scan.lines,
        "understood": scan.understood(),
        "records": scan.records,
        "not_understood": scan.unknown,
        "not_understood_samples": scan
            .samples
            .iter()
            .map(|x| serde_json::json!({ "line": x.line, "text": x.text }))
            .collect::<Vec<_>>(),
        "truncated_last_line": scan.truncated_last_line,
        "backwards": scan.backwards,
    })
}

/// Adds the shared notes about what could not be read to a table.
pub(crate) fn scan_notes(t: &mut Table, scan: &ScanReport, kind: &str) {
    t.note(format!(
        "{}: {} lines, {} understood ({} records)",
        scan.file,
        fmt_count(scan.lines as i64),
        fmt_count(scan.understood() as i64),
        fmt_count(scan.records as i64)
    ));
    if let Some(p) = scan.problems(kind) {
        t.note(p);
    }
}

/// Bytes as MB/GB the way HotSpot writes them (`1M`, `8M`, `1.5G`).
pub(crate) fn fmt_mb(bytes: u64) -> String {
    let mb = bytes as f64 / 1048576.0;
    if mb >= 1024.0 {
        format!("{:.1}G", mb / 1024.0)
    } else if mb >= 1.0 && mb.fract() == 0.0 {
        format!("{mb:.0}M")
    } else if mb >= 1.0 {
        format!("{mb:.1}M")
    } else {
        format!("{}K", bytes / 1024)
    }
}

/// Seconds with a unit: `34.9s`, `0.010s`.
pub(crate) fn fmt_secs(s: f64) -> String {
    if !s.is_finite() {
        "-".into()
    } else if s.abs() >= 10.0 {
        format!("{s:.1}s")
    } else {
        format!("{s:.3}s")
    }
}
