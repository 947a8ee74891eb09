//! `arena-perf report`: the comparison as one self-contained HTML file (no network: inline
//! CSS, script and SVG), with `compare --format json`'s document embedded and every figure
//! drawn from it.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use arena_compare::{compare, report_html, Metric, ReportOptions};

use super::common::stdout::print;
use super::compare::{
    compare_options, load_with_history, warn_comparison, ByArg, SplitArgs, StatsArgs,
};
use arena_run::outputs::{parent_exists, refuse_overwrite, Output};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  arena-perf report fixtures/runs --out report.html
  arena-perf report runs/ --by run --baseline stock --out report.html
  arena-perf report runs/ --out report.html --screenshot report.png

The page embeds exactly what `arena-perf compare --format json` prints for the same runs
and flags (in <script id=\"data\">), so its tables and the JSON cannot disagree.")]
pub struct ReportArgs {
    /// Run folders, or folders holding run folders (as for `compare`; none with a
    /// history selection).
    #[arg(required_unless_present_any = ["history_branch", "ids"], value_name = "RUN_OR_DIR")]
    pub runs: Vec<PathBuf>,
    #[command(flatten)]
    pub history: arena_history::from_history::FromHistoryArgs,
    /// Add the trend of --history-branch's stored runs on the testbed with the compared
    /// runs' pilot (METRIC.pQ, default inputToPaint.p50), drawn with its steps marked.
    #[arg(long = "history", value_name = "METRIC.pQ", num_args = 0..=1,
          default_missing_value = "inputToPaint.p50", requires = "history_branch")]
    pub trend: Option<String>,
    /// The HTML file to write; its folder must exist, and it may not be a file the command
    /// reads nor lie inside a run folder given (exit 2).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Arm (or column, e.g. "stock, run 2") the others are compared against; the first
    /// arm by default.
    #[arg(long, value_name = "ARM")]
    pub baseline: Option<String>,
    /// Columns per run or pooled per arm.
    #[arg(long, value_enum, default_value = "arm")]
    pub by: ByArg,
    /// Loop metric to show (repeatable); all by default. The plots open on the first.
    #[arg(long = "metric", value_name = "M")]
    pub metrics: Vec<String>,
    /// Also open the written page in headless Chromium and save a full-page PNG of it
    /// (for a pull request comment, where HTML does not render).
    #[arg(long, value_name = "PNG")]
    pub screenshot: Option<PathBuf>,
    #[command(flatten)]
    pub stats: StatsArgs,
    #[command(flatten)]
    pub split: SplitArgs,
}

pub fn run(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let opts = compare_options(a.by, a.baseline.clone(), &a.metrics, &a.stats, &a.split)?;
    let (metrics, verdict, checks) = (opts.metrics.clone(), opts.verdict, opts.checks);
    parent_exists(&a.out, "--out")?;
    let mut outputs = vec![Output::file("--out", &a.out)];
    if let Some(png) = &a.screenshot {
        parent_exists(png, "--screenshot")?;
        outputs.push(Output::file("--screenshot", png));
    }
    let db = arena_history::db_file(a.history.db.as_deref());
    let inputs = a.runs.iter().map(|p| p.as_path()).chain(db.as_deref());
    refuse_overwrite(inputs, &outputs)?;
    let (runs, from_history) = load_with_history(&a.runs, &a.history)?;
    let mixed = a.stats.refuse_mixed("report", &runs)?;
    let mut cmp = compare(&runs, &opts)?;
    warn_comparison(&mixed, &mut cmp);
    if let Some(note) = from_history {
        cmp.table.note(note);
    }
    // The page lists them with its findings; the terminal only says where it wrote it.
    for m in &mixed {
        eprintln!("{}", m.warning());
    }
    let trend = match &a.trend {
        Some(metric) => Some(trend_section(&a.history, metric, &runs)?),
        None => None,
    };
    let page = report_html(
        &runs,
        &cmp,
        &ReportOptions {
            level_pct: 100.0 * (1.0 - verdict.alpha),
            include_cold: checks.include_cold,
            metrics: metrics.clone(),
            plot_metric: metrics.first().copied().unwrap_or(Metric::InputToPaint),
            trend,
        },
    );
    std::fs::write(&a.out, page).with_context(|| format!("writing {}", a.out.display()))?;
    print(format!(
        "wrote {}: {} against {}, {} runs\n",
        a.out.display(),
        cmp.candidates(),
        cmp.baseline,
        runs.len()
    ))?;
    if let Some(png) = &a.screenshot {
        let bytes = arena_pilot::block_on(|_cancel| {
            arena_browser::screenshot_file(
                &a.out,
                "document.documentElement.dataset.rendered === 'ok'",
            )
        })?;
        std::fs::write(png, bytes).with_context(|| format!("writing {}", png.display()))?;
        print(format!("wrote {}\n", png.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The trend `--history METRIC.pQ` draws: the branch's stored runs on the testbed, with
/// the pilot of the first compared run.
fn trend_section(
    h: &arena_history::from_history::FromHistoryArgs,
    metric: &str,
    runs: &[arena_run::Run],
) -> anyhow::Result<arena_compare::html::TrendSection> {
    let testbed = h.testbed.clone();
    arena_history::branch_trend_section(
        h.db.as_deref(),
        h.history_branch.clone(),
        testbed.unwrap_or_else(arena_history::default_testbed),
        runs.first().map(|r| r.meta.pilot_hash.clone()),
        metric,
    )
}
