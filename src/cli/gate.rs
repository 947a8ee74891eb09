//! `arena-perf gate`: exit 1 only on a significant regression past a limit.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use arena_compare::{gate, load_runs, Limit};
use arena_report::{Exit, Format};

use super::compare::StatsArgs;

#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// Baseline run folders (or folders of runs), pooled.
    #[arg(long, required = true, num_args = 1.., value_name = "RUNS")]
    pub baseline: Vec<PathBuf>,
    /// Candidate run folders (or folders of runs), pooled.
    #[arg(long, required = true, num_args = 1.., value_name = "RUNS")]
    pub candidate: Vec<PathBuf>,
    /// A limit, repeatable: METRIC.pQ=+PCT, e.g. `sendToRecv.p50=+10%`. Fails only when
    /// the increase is larger and significant.
    #[arg(long = "max", required = true, value_name = "METRIC.pQ=+PCT")]
    pub max: Vec<String>,
    /// Also write the result as Markdown to FILE (and it is appended to
    /// $GITHUB_STEP_SUMMARY when that is set).
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub stats: StatsArgs,
}

pub fn run(a: GateArgs) -> anyhow::Result<ExitCode> {
    let (verdict, checks) = a.stats.options()?;
    let limits = a
        .max
        .iter()
        .map(|s| Limit::parse(s))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let baseline = load_runs(&a.baseline)?;
    let candidate = load_runs(&a.candidate)?;
    let sides = arena_compare::sides(&baseline, &candidate);
    let mixed = arena_compare::refuse_mixed("gate", &sides, a.stats.allow_mixed)?;
    let mut result = gate(&baseline, &candidate, &limits, &verdict, &checks)?;
    arena_compare::warn_mixed(&mixed, [&mut result.table], &mut result.findings);
    if a.format == Format::Json {
        print!(
            "{}",
            arena_report::json::to_text(&arena_compare::gate_json(&result))
        );
    } else {
        print!("{}", result.table.render(a.format));
    }
    let md = result.table.render(Format::Markdown);
    if let Some(path) = &a.summary {
        std::fs::write(path, &md).map_err(|e| {
            Exit::bad_input(format!("{}: writing the summary: {e}", path.display()))
        })?;
    }
    if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(format!("{md}\n").as_bytes()))
            .map_err(|e| {
                Exit::bad_input(format!("{}: $GITHUB_STEP_SUMMARY: {e}", path.display()))
            })?;
    }
    let failed = result
        .checks
        .iter()
        .filter(|c| c.status == arena_compare::CheckStatus::Fail)
        .count();
    if failed > 0 {
        eprintln!(
            "arena-perf gate: {failed} of {} checks failed",
            result.checks.len()
        );
        Ok(ExitCode::from(1))
    } else {
        eprintln!("arena-perf gate: all {} checks passed", result.checks.len());
        Ok(ExitCode::SUCCESS)
    }
}
