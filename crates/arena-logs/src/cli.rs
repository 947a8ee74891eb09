//! The `logs` command's flags, kept beside the reducers so the root CLI stays one line and
//! the same parsing serves the crate's own binary tests.

use std::path::PathBuf;

use arena_report::{Exit, Format, Table};

pub use crate::render;
use clap::{Args, Subcommand};

use arena_report::ranges::{finite, whole};

use crate::input::STDIN;
use crate::{classload, gc, profile, stats};

/// Reduce server-side evidence (per-frame stats, GC logs, class loading, profiler stacks)
/// to tables that paste into a PERFORMANCE.md.
///
/// Every reducer streams its files in constant memory (regular files, pipes, `-` for
/// stdin, gzip by its magic bytes), reports lines it could not read (file, count, the first
/// few with line numbers) under its tables, and exits 2 when a file holds nothing it
/// understands or is binary.
#[derive(Debug, Args)]
pub struct LogsArgs {
    #[command(subcommand)]
    pub kind: LogsKind,
}

#[derive(Debug, Subcommand)]
pub enum LogsKind {
    /// Webswing-style per-frame statistics lines: n, mean, p50, p90, p99, max per metric.
    ///
    /// Reads `dd-MMM-yyyy-HH:mm:ss.SSS,<instance>,<metric>,<value>` and the older
    /// `yyyy-MM-dd HH:mm:ss,SSS <instance>,<metric>,<value>`, anywhere in a line (container
    /// prefixes are fine). Webswing's `latency` starts at frame assembly on the server, not
    /// at the input.
    Stats(StatsArgs),
    /// JVM unified-logging GC logs (G1, Parallel, ZGC): pauses by kind and cause.
    ///
    /// Several files become columns side by side with deltas against the first.
    Gc(GcArgs),
    /// `-Xlog:class+load` logs: count, span, gaps, sources (CDS, modules, jars), packages,
    /// classes per second.
    Classload(ClassloadArgs),
    /// Collapsed stacks (`frame;frame count`): shares by bucket (JIT, GC, class load,
    /// interpreter, application) and top leaves.
    Profile(ProfileArgs),
}

#[derive(Debug, Args)]
pub struct Common {
    /// Log files to read: regular files, pipes (`/dev/stdin`, FIFOs), `-` for stdin, and
    /// gzip (also concatenated members), recognised by its magic bytes whatever the name.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub common: Common,
    /// One row per instance and metric instead of per metric.
    #[arg(long)]
    pub by_instance: bool,
    /// A regex with named groups `metric` and `value` (optional `time`, `instance`) for
    /// lines in another format.
    #[arg(long, value_name = "REGEX")]
    pub pattern: Option<String>,
}

#[derive(Debug, Args)]
pub struct GcArgs {
    #[command(flatten)]
    pub common: Common,
    /// Split pauses and stalls into windows of this many seconds.
    #[arg(long, value_name = "SECS", value_parser = secs_positive, allow_negative_numbers = true)]
    pub window: Option<f64>,
}

#[derive(Debug, Args)]
pub struct ClassloadArgs {
    #[command(flatten)]
    pub common: Common,
    /// Gaps between consecutive loads longer than this many seconds are summed.
    #[arg(long, value_name = "SECS", default_value_t = 0.3,
          value_parser = secs_0_or_more, allow_negative_numbers = true)]
    pub gap: f64,
    /// How many packages, modules and jars to list.
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = count_1_or_more, allow_negative_numbers = true)]
    pub top: usize,
    /// Package prefix depth: 3 gives `com.fasterxml.jackson`.
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = depth, allow_negative_numbers = true)]
    pub depth: usize,
    /// Timeline bucket in seconds (at least 0.001).
    #[arg(long, value_name = "SECS", default_value_t = 1.0,
          value_parser = bucket_secs, allow_negative_numbers = true)]
    pub bucket: f64,
    /// Also write the timeline as an SVG bar chart.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Report when the first class starting with this prefix loads, and how many came
    /// before it (repeatable), e.g. `--mark megamek.`.
    #[arg(long, value_name = "PREFIX")]
    pub mark: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ProfileArgs {
    #[command(flatten)]
    pub common: Common,
    /// TOML file of extra bucket rules (`[[rule]] bucket = "zlib"  any = ["Deflater."]`),
    /// checked before the defaults.
    #[arg(long, value_name = "FILE.toml")]
    pub rules: Option<PathBuf>,
    /// How many leaf frames to list.
    #[arg(long, value_name = "N", default_value_t = 15,
          value_parser = count_1_or_more, allow_negative_numbers = true)]
    pub top: usize,
    /// Leave this bucket's leaves out of the top-leaves table (repeatable), e.g. `JIT`.
    #[arg(long, value_name = "BUCKET")]
    pub skip_leaves_of: Vec<String>,
    /// Also render all files as one flame graph (inferno; reads the files whole).
    #[arg(long, value_name = "FILE.svg")]
    pub flamegraph: Option<PathBuf>,
}

impl LogsArgs {
    /// The files the subcommand reads.
    pub fn files(&self) -> &[PathBuf] {
        match &self.kind {
            LogsKind::Stats(a) => &a.common.files,
            LogsKind::Gc(a) => &a.common.files,
            LogsKind::Classload(a) => &a.common.files,
            LogsKind::Profile(a) => &a.common.files,
        }
    }
}

/// Runs one `logs` subcommand and returns its rendered output.
pub fn run(args: &LogsArgs) -> anyhow::Result<String> {
    let files = args.files();
    // Stdin can be read once: the second `-` would silently read as an empty file.
    if files.iter().filter(|f| f.as_os_str() == STDIN).count() > 1 {
        return Err(Exit::bad_input(format!("`{STDIN}` (stdin) can be given once")).into());
    }
    let format = match &args.kind {
        LogsKind::Stats(a) => a.common.format,
        LogsKind::Gc(a) => a.common.format,
        LogsKind::Classload(a) => a.common.format,
        LogsKind::Profile(a) => a.common.format,
    };
    let json = format == Format::Json;
    let out = match &args.kind {
        LogsKind::Stats(a) => {
            let o = stats::StatsOptions {
                files: a.common.files.clone(),
                by_instance: a.by_instance,
                pattern: a.pattern.clone(),
            };
            match json {
                true => Out::Json(stats::run_json(&o)?),
                false => Out::Tables(stats::run(&o)?),
            }
        }
        LogsKind::Gc(a) => {
            let o = gc::GcOptions {
                files: a.common.files.clone(),
                window: a.window,
            };
            match json {
                true => Out::Json(gc::run_json(&o)?),
                false => Out::Tables(gc::run(&o)?),
            }
        }
        LogsKind::Classload(a) => {
            let o = classload::ClassLoadOptions {
                files: a.common.files.clone(),
                gap: a.gap,
                top: a.top,
                depth: a.depth,
                bucket: a.bucket,
                plot: a.plot.clone(),
                marks: a.mark.clone(),
            };
            match json {
                true => Out::Json(classload::run_json(&o)?),
                false => Out::Tables(classload::run(&o)?),
            }
        }
        LogsKind::Profile(a) => {
            let o = profile::ProfileOptions {
                files: a.common.files.clone(),
                rules: a.rules.clone(),
                top: a.top,
                skip_leaves_of: a.skip_leaves_of.clone(),
                flamegraph: a.flamegraph.clone(),
            };
            match json {
                true => Out::Json(profile::run_json(&o)?),
                false => Out::Tables(profile::run(&o)?),
            }
        }
    };
    Ok(match out {
        Out::Json(v) => crate::render_json(&v),
        Out::Tables(t) => render(&t, format),
    })
}

/// A subcommand's result: tables for people, or the JSON document.
enum Out {
    Tables(Vec<Table>),
    Json(serde_json::Value),
}

/// A window in seconds: finite, above 0 (`gc --window`).
fn secs_positive(text: &str) -> Result<f64, String> {
    finite(text, |v| v > 0.0, "a finite number of seconds above 0")
}

/// A gap in seconds: finite, 0 or more (`classload --gap`).
fn secs_0_or_more(text: &str) -> Result<f64, String> {
    finite(text, |v| v >= 0.0, "a finite number of seconds, 0 or more")
}

/// A timeline bucket: at least a millisecond, at most a day (`classload --bucket`), so a
/// log's timeline is never billions of buckets.
fn bucket_secs(text: &str) -> Result<f64, String> {
    finite(
        text,
        |v| (0.001..=86_400.0).contains(&v),
        "a number of seconds from 0.001 to 86400",
    )
}

/// How many rows to list: at least 1 (`--top`).
fn count_1_or_more(text: &str) -> Result<usize, String> {
    whole(text, 1, usize::MAX, "a whole number, 1 or more")
}

/// A package prefix depth: 1 to 64 components (`classload --depth`).
fn depth(text: &str) -> Result<usize, String> {
    whole(text, 1, 64, "a whole number from 1 to 64")
}
