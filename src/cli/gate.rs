//! `arena-perf gate`: exit 1 on a regression past a limit: latency quantiles over every
//! loop (timeouts censored at the window), and the unanswered share.

use std::path::PathBuf;
use std::process::ExitCode;

use arena_compare::{gate, load_runs, GateLimit, GateOptions};
use arena_report::Format;

use super::common::stdout::{closed_pipe, print};
use super::compare::StatsArgs;
use arena_run::outputs::refuse_overwrite;

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
    #[command(flatten)]
    pub history: arena_history::cli::HistoryBaselineArgs,
    /// Candidate run folders (or folders of runs), pooled.
    #[arg(long, required = true, num_args = 1.., value_name = "RUNS")]
    pub candidate: Vec<PathBuf>,
    /// A limit, repeatable. `METRIC.pQ=+PCT` (e.g. `inputToPixels.p99=+20%`) fails when
    /// the interval of that quantile's change (runs the units; every loop, timeouts
    /// counted as slower than any answer) lies wholly past +PCT of the baseline, passes
    /// when it lies wholly under it, and is unknown otherwise (exit 4, see
    /// --on-unknown). `unanswered=+PTpt` sets how many percentage points the share of
    /// unanswered loops may rise, `claimed=+PTpt` the share of loops whose answer had
    /// already closed an earlier loop (both checked always; default +1pt). All checks
    /// together keep the false-alarm rate at --alpha (Bonferroni).
    #[arg(long = "max", required = true, value_name = "METRIC.pQ=+PCT")]
    pub max: Vec<String>,
    /// What a check the runs cannot decide either way (its interval straddles the limit)
    /// makes of the exit: `unknown` exits 4, `pass` exits 0 and `fail` exits 1, for a
    /// team that must always get a yes or a no. What is established fails (or passes)
    /// whatever this says.
    #[arg(long, value_enum, default_value_t = arena_compare::OnUnknown::Unknown, value_name = "WHAT")]
    pub on_unknown: arena_compare::OnUnknown,
    /// Kept for old scripts: the same as `--on-unknown pass`.
    #[arg(long, hide = true)]
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
    let files = arena_compare::SummaryFiles::new(a.summary.as_deref());
    let db = arena_history::db_file(a.history.db.as_deref());
    let runs = a.baseline.iter().chain(&a.candidate).map(|p| p.as_path());
    refuse_overwrite(runs.chain(db.as_deref()), &files.outputs())?;
    let limits = a
        .max
        .iter()
        .map(|s| GateLimit::parse(s))
        .collect::<anyhow::Result<Vec<_>>>()?;
    a.history.refuse_stray()?;
    let candidate = load_runs(&a.candidate)?;
    let (baseline, from_history) = match a.history.baseline(&candidate)? {
        Some((runs, note)) => (runs, Some(note)),
        None => (load_runs(&a.baseline)?, None),
    };
    let sides = arena_compare::sides(&baseline, &candidate);
    let mixed = arena_compare::refuse_mixed("gate", &sides, a.stats.allow_mixed)?;
    let opts = GateOptions {
        rule: verdict,
        checks,
        on_unknown: if a.allow_underpowered {
            arena_compare::OnUnknown::Pass
        } else {
            a.on_unknown
        },
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
    write_errors.extend(files.write(&result.table.render(Format::Markdown)));
    for e in write_errors.iter().filter(|e| !closed_pipe(e)) {
        eprintln!("arena-perf: {e:#}");
    }
    let (line, code) = arena_compare::gate_ending(&result);
    eprintln!("{line}");
    Ok(ExitCode::from(code))
}
