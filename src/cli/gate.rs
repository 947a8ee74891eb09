//! `arena-perf gate`: exit 1 on a regression past a limit: latency quantiles over every
//! loop (timeouts censored at the window), and the unanswered share.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::anyhow;
use arena_compare::{gate, load_runs, GateLimit, GateOptions};
use arena_report::{Exit, Format};

use super::common::stdout::{closed_pipe, print};
use super::compare::StatsArgs;
use arena_run::outputs::{refuse_overwrite, Output};

#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// Baseline run folders (or folders of runs), pooled.
    #[arg(
        long,
        required_unless_present = "baseline_history",
        conflicts_with = "baseline_history",
        num_args = 1..,
        value_name = "RUNS"
    )]
    pub baseline: Vec<PathBuf>,
    /// Take the baseline from the run history instead: the newest --last runs of BRANCH
    /// on --testbed with the candidate's pilot hash that the comparability rules find
    /// measured like the candidate.
    #[arg(long, value_name = "BRANCH")]
    pub baseline_history: Option<String>,
    /// How many stored runs make the history baseline (default 10).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub last: Option<u32>,
    /// The history's database, an SQLite file or a postgres:// URL (default:
    /// $ARENA_PERF_DB, else reports/history.sqlite).
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<String>,
    /// The testbed the history baseline was measured on (default: this machine's hostname).
    #[arg(long)]
    pub testbed: Option<String>,
    /// Candidate run folders (or folders of runs), pooled.
    #[arg(long, required = true, num_args = 1.., value_name = "RUNS")]
    pub candidate: Vec<PathBuf>,
    /// A limit, repeatable. `METRIC.pQ=+PCT` (e.g. `inputToPixels.p99=+20%`) fails when
    /// the run-level bootstrap interval of that quantile's change, over every loop with
    /// timeouts counted as slower than any answer, lies wholly past +PCT of the baseline.
    /// `unanswered=+PTpt` sets how many percentage points the share of unanswered loops
    /// may rise (checked always; default +1pt). All checks together keep the false-alarm
    /// rate at --alpha (Holm).
    #[arg(long = "max", required = true, value_name = "METRIC.pQ=+PCT")]
    pub max: Vec<String>,
    /// Decide limits the runs are too small to see (a p99 of under 200 loops is a side's
    /// maximum; a limit under the smallest change detectable at 80 % power) instead of
    /// refusing them with exit 2; each is then warned about under the table.
    #[arg(long)]
    pub allow_underpowered: bool,
    /// Also write the result as Markdown to FILE (and it is appended to
    /// $GITHUB_STEP_SUMMARY when that is set). Neither may be a file the gate reads nor lie
    /// inside a run folder given (exit 2). A failed write of either, or of stdout, is said
    /// on stderr and the exit code stays the verdict's.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Output format; `json` prints the document of docs/schema/gate.json.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub stats: StatsArgs,
}

pub fn run(a: GateArgs) -> anyhow::Result<ExitCode> {
    let (verdict, checks) = a.stats.options()?;
    let step_summary = std::env::var_os("GITHUB_STEP_SUMMARY")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    let outputs: Vec<Output> = a
        .summary
        .iter()
        .map(|p| Output::file("--summary", p))
        .chain(
            step_summary
                .iter()
                .map(|p| Output::file("$GITHUB_STEP_SUMMARY", p)),
        )
        .collect();
    let inputs = a.baseline.iter().chain(&a.candidate).map(|p| p.as_path());
    refuse_overwrite(inputs, &outputs)?;
    let limits = a
        .max
        .iter()
        .map(|s| GateLimit::parse(s))
        .collect::<anyhow::Result<Vec<_>>>()?;
    refuse_history_flags(&a)?;
    let candidate = load_runs(&a.candidate)?;
    let (baseline, from_history) = match &a.baseline_history {
        Some(branch) => history_baseline(&a, branch, &candidate)?,
        None => (load_runs(&a.baseline)?, None),
    };
    let sides = arena_compare::sides(&baseline, &candidate);
    let mixed = arena_compare::refuse_mixed("gate", &sides, a.stats.allow_mixed)?;
    let opts = GateOptions {
        rule: verdict,
        checks,
        allow_underpowered: a.allow_underpowered,
    };
    let mut result = gate(&baseline, &candidate, &limits, &opts)?;
    arena_compare::warn_mixed(&mixed, [&mut result.table], &mut result.findings);
    if let Some(note) = from_history {
        result.table.note(note);
    }
    // The verdict is decided: a failed write from here on is said on stderr and the exit
    // code stays the verdict's (1 for a regression, 0 for a pass).
    let mut write_errors: Vec<anyhow::Error> = Vec::new();
    let text = match a.format {
        Format::Json => arena_report::json::to_text(&arena_compare::gate_json(&result)),
        f => result.table.render(f),
    };
    write_errors.extend(print(text).err());
    let md = result.table.render(Format::Markdown);
    if let Some(path) = &a.summary {
        if let Err(e) = std::fs::write(path, &md) {
            write_errors.push(anyhow!("{}: writing the summary: {e}", path.display()));
        }
    }
    if let Some(path) = step_summary {
        if let Err(e) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(format!("{md}\n").as_bytes()))
        {
            write_errors.push(anyhow!("{}: $GITHUB_STEP_SUMMARY: {e}", path.display()));
        }
    }
    for e in write_errors.iter().filter(|e| !closed_pipe(e)) {
        eprintln!("arena-perf: {e:#}");
    }
    let (failed, total) = (result.failures(), result.count());
    if !failed.is_empty() {
        eprintln!(
            "arena-perf gate: {} of {total} checks failed: {}",
            failed.len(),
            failed.join(", ")
        );
        Ok(ExitCode::from(1))
    } else {
        eprintln!("arena-perf gate: all {total} checks passed");
        Ok(ExitCode::SUCCESS)
    }
}

/// The history baseline's flags are refused without `--baseline-history`: beside a folder
/// baseline they would be silently ignored.
fn refuse_history_flags(a: &GateArgs) -> anyhow::Result<()> {
    let history_only = [
        ("--last", a.last.is_some()),
        ("--db", a.db.is_some()),
        ("--testbed", a.testbed.is_some()),
    ];
    if let (None, Some((flag, _))) = (&a.baseline_history, history_only.iter().find(|f| f.1)) {
        return Err(Exit::bad_input(format!(
            "{flag} chooses the history baseline: give it with --baseline-history BRANCH"
        ))
        .into());
    }
    Ok(())
}

/// The baseline from the history, and the note that says which runs it is.
fn history_baseline(
    a: &GateArgs,
    branch: &str,
    candidate: &[arena_run::Run],
) -> anyhow::Result<(Vec<arena_run::Run>, Option<String>)> {
    let testbed = a
        .testbed
        .clone()
        .unwrap_or_else(arena_history::default_testbed);
    let last = a.last.unwrap_or(10) as usize;
    let (runs, note) =
        arena_history::history_baseline(a.db.as_deref(), branch, &testbed, candidate, last)?;
    Ok((runs, Some(note)))
}
