//! `arena-perf compare`: per-arm and per-run tables over run folders, with deltas, intervals,
//! U-test p-values, `~` for noise, and warnings next to the figures.

use std::path::PathBuf;
use std::process::ExitCode;

use arena_compare::{
    compare, load_runs, By, CheckOptions, CompareOptions, Comparison, Metric, Mixed,
};
use arena_report::{Exit, Format};
use arena_run::Run;
use arena_stats::{BootstrapOptions, NoiseRule, SmallSamples};

use super::common::stdout::print;
use arena_report::ranges;
use arena_run::outputs::{refuse_overwrite, Output};

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ByArg {
    /// One column per run: `<arm>, run N`.
    Run,
    /// One column per arm, its runs pooled.
    Arm,
}

/// Statistics flags shared by `compare`, `gate` and `report`.
#[derive(Debug, Clone, clap::Args)]
pub struct StatsArgs {
    /// Significance level: a difference with p >= ALPHA is noise (`~`); intervals are at
    /// 1 - ALPHA.
    #[arg(long, default_value_t = 0.05, value_name = "A",
          value_parser = ranges::alpha_open_0_1, allow_negative_numbers = true)]
    pub alpha: f64,
    /// Smallest change, in percent, ever called real (0 to 100).
    #[arg(long, default_value_t = 2.0, value_name = "PCT",
          value_parser = ranges::pct_0_100, allow_negative_numbers = true)]
    pub noise_bar: f64,
    /// Bootstrap resamples per interval (100 to 1000000).
    #[arg(long, default_value_t = 2000, value_name = "N",
          value_parser = ranges::resamples, allow_negative_numbers = true)]
    pub resamples: usize,
    /// Bootstrap seed: same runs and seed, same intervals.
    #[arg(long, default_value_t = BootstrapOptions::default().seed, value_name = "N")]
    pub seed: u64,
    /// Put cold loops (first interaction of a page) into the figures; warned about.
    #[arg(long)]
    pub include_cold: bool,
    /// An arm whose share of answered replies of at least its target's `idle_reply_bytes`
    /// (4 KB by default) is below this looks idle (warned about); 0 to 1.
    #[arg(long, default_value_t = arena_run::IDLE_SHARE, value_name = "SHARE",
          value_parser = ranges::share_0_1, allow_negative_numbers = true)]
    pub idle_share: f64,
    /// Compare runs that were not measured alike: another answer oracle or its parameters,
    /// socket source, answer window (timeout), pilot file, Chromium major version or link.
    /// Refused by default (exit 2); allowed, every table says under it what differs, and
    /// JSON carries it as a `mixed` finding.
    #[arg(long)]
    pub allow_mixed: bool,
}

impl StatsArgs {
    /// The rule and checks of these flags; their ranges were checked as clap parsed them.
    pub fn options(&self) -> anyhow::Result<(NoiseRule, CheckOptions)> {
        let bootstrap = BootstrapOptions {
            resamples: self.resamples,
            seed: self.seed,
            level: 1.0 - self.alpha,
        };
        let verdict = NoiseRule {
            alpha: self.alpha,
            noise_bar_pct: self.noise_bar,
            bootstrap,
            small_samples: SmallSamples::Test,
        };
        let checks = CheckOptions {
            include_cold: self.include_cold,
            idle_share: self.idle_share,
            ..CheckOptions::default()
        };
        Ok((verdict, checks))
    }

    /// Refuses `runs` measured differently unless `--allow-mixed`, naming each run as
    /// `compare --by run` names its column; returns what may differ, to be warned about.
    pub fn refuse_mixed(&self, cmd: &str, runs: &[Run]) -> anyhow::Result<Vec<Mixed>> {
        arena_compare::refuse_mixed(cmd, &arena_compare::run_names(runs), self.allow_mixed)
    }
}

/// What `--allow-mixed` let differ, under the comparison and every breakdown, and in its
/// findings (so in JSON and in the HTML report).
pub fn warn_comparison(mixed: &[Mixed], cmp: &mut Comparison) {
    let breakdowns = cmp.breakdowns.iter_mut().map(|b| &mut b.table);
    let tables = std::iter::once(&mut cmp.table).chain(breakdowns);
    arena_compare::warn_mixed(mixed, tables, &mut cmp.findings);
}

pub fn parse_metrics(names: &[String]) -> anyhow::Result<Vec<Metric>> {
    names
        .iter()
        .map(|n| {
            Metric::parse(n).ok_or_else(|| {
                Exit::bad_input(format!(
                    "--metric {n}: unknown metric (one of {})",
                    Metric::ALL.map(|m| m.name()).join(", ")
                ))
                .into()
            })
        })
        .collect()
}

/// Breakdown flags shared by `compare`, `report`, `pilot`, `ab` and `demo`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SplitArgs {
    /// Also break the loops down into rows (repeatable): `event` (mousedown, mouseup,
    /// keydown, ...; coalesced input on its own row), `label` (the pilot file's click
    /// labels), `reply-size=1KB,10KB` (by the bytes of each loop's answer: <1KB,
    /// 1KB-10KB, >=10KB). Each row has its loops, n, p50/p90/p99 and its change against
    /// the baseline's same row.
    #[arg(long = "split", value_name = "SPLIT", value_parser = arena_compare::Split::parse)]
    pub splits: Vec<arena_compare::Split>,
    /// A breakdown counts the answered loops whose reply reached SIZE (e.g. 4KB; K =
    /// 1024 B). Default: the target's `idle_reply_bytes` (4KB unless the pilot file says).
    #[arg(long, value_name = "SIZE", value_parser = arena_report::parse_size)]
    pub reply_over: Option<u64>,
}

impl SplitArgs {
    /// The breakdowns of `runs` as tables, in `format` (none without `--split`). JSON has
    /// them in `compare --format json`; a run's JSON document does not, and says so.
    pub fn print(&self, runs: &[Run], format: Format) -> anyhow::Result<()> {
        if self.splits.is_empty() {
            return Ok(());
        }
        if format == Format::Json {
            eprintln!("--split: as JSON, breakdowns are in `arena-perf compare RUN_FOLDER --split ... --format json`");
            return Ok(());
        }
        let opts = CompareOptions {
            splits: self.splits.clone(),
            reply_over: self.reply_over,
            ..CompareOptions::default()
        };
        for b in arena_compare::breakdowns(runs, &opts)? {
            print(format!("\n{}", b.table.render(format)))?;
        }
        Ok(())
    }
}

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Run folders, or folders holding run folders (none with a history selection).
    #[arg(required_unless_present_any = ["history_branch", "ids"], value_name = "RUN_OR_DIR")]
    pub runs: Vec<PathBuf>,
    #[command(flatten)]
    pub history: super::common::from_history::FromHistoryArgs,
    /// Arm (or column, e.g. "stock, run 2") the others are compared against; the first
    /// arm by default.
    #[arg(long, value_name = "ARM")]
    pub baseline: Option<String>,
    /// Columns per run or pooled per arm.
    #[arg(long, value_enum, default_value = "arm")]
    pub by: ByArg,
    /// Loop metric to show (repeatable): inputToSocket, sendToRecv, recvToDraw,
    /// inputToPaint. All four by default.
    #[arg(long = "metric", value_name = "M")]
    pub metrics: Vec<String>,
    /// Output format; `json` prints the document of docs/schema/compare.json.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also show each run's CPU by process and phase (runs made with the fixture or
    /// `--sample`); in JSON, as `cpu`, one entry a run.
    #[arg(long)]
    pub cpu: bool,
    /// Also write the latency plots (latency.svg, latency.png) into DIR; not into a run
    /// folder given (exit 2).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Instead of the comparison: each run's frame table (frames, total, p50/p90/p99
    /// frame, largest, the first-paint burst), cold (load + setup) and warm (after the
    /// clear) side by side, with wire figures when captured.
    #[arg(long)]
    pub frames: bool,
    /// With --frames: the gap, ms, that ends a first-paint burst (above 0).
    #[arg(long, value_name = "MS", default_value_t = arena_compare::frames::BURST_GAP_MS,
          value_parser = ranges::positive_f64, allow_negative_numbers = true)]
    pub burst_gap: f64,
    #[command(flatten)]
    pub stats: StatsArgs,
    #[command(flatten)]
    pub split: SplitArgs,
}

/// `compare --frames`: the frame table of every run given.
fn frames(a: &CompareArgs) -> anyhow::Result<ExitCode> {
    use arena_compare::frames::{frames_json, frames_table, run_sources};
    let sources = run_sources(&arena_compare::load_runs_with_events(&a.runs)?);
    match a.format {
        Format::Json => print(arena_report::json::to_text(&frames_json(
            &sources,
            a.burst_gap,
        )))?,
        f => print(frames_table(&sources, a.burst_gap).render(f))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The comparison the flags ask for (`compare` and `report` take the same ones).
pub fn compare_options(
    by: ByArg,
    baseline: Option<String>,
    metrics: &[String],
    stats: &StatsArgs,
    split: &SplitArgs,
) -> anyhow::Result<CompareOptions> {
    let (verdict, checks) = stats.options()?;
    Ok(CompareOptions {
        by: match by {
            ByArg::Run => By::Run,
            ByArg::Arm => By::Arm,
        },
        baseline,
        metrics: parse_metrics(metrics)?,
        verdict,
        checks,
        splits: split.splits.clone(),
        reply_over: split.reply_over,
    })
}

/// The run folders `paths`, after the stored runs `history` selects (none given is
/// fine with a selection).
pub fn load_with_history(
    paths: &[PathBuf],
    history: &super::common::from_history::FromHistoryArgs,
) -> anyhow::Result<(Vec<Run>, Option<String>)> {
    let folders = if paths.is_empty() && history.any() {
        Vec::new()
    } else {
        load_runs(paths)?
    };
    history.with(folders)
}

/// What `--plot DIR` writes into DIR.
const PLOTS: [&str; 2] = ["latency.svg", "latency.png"];

pub fn run(a: CompareArgs) -> anyhow::Result<ExitCode> {
    if a.frames {
        return frames(&a);
    }
    let opts = compare_options(a.by, a.baseline, &a.metrics, &a.stats, &a.split)?;
    let metrics = opts.metrics.clone();
    if let Some(dir) = &a.plot {
        let plots = PLOTS.map(|name| dir.join(name));
        let outputs = plots.each_ref().map(|p| Output::file("--plot", p));
        refuse_overwrite(a.runs.iter().map(|p| p.as_path()), &outputs)?;
    }
    let (runs, from_history) = load_with_history(&a.runs, &a.history)?;
    let mixed = a.stats.refuse_mixed("compare", &runs)?;
    let mut cmp = compare(&runs, &opts)?;
    warn_comparison(&mixed, &mut cmp);
    if let Some(note) = from_history {
        cmp.table.note(note);
    }
    if a.format == Format::Json {
        let v = arena_compare::comparison_cpu_json(&cmp, a.cpu.then_some(runs.as_slice()));
        print(format!("{}\n", serde_json::to_string_pretty(&v)?))?;
    } else {
        print(cmp.table.render(a.format))?;
        for b in &cmp.breakdowns {
            print(format!("\n{}", b.table.render(a.format)))?;
        }
        super::common::stdout::print_gestures(Some(&cmp), a.format)?;
        if a.cpu {
            super::common::stdout::print_cpu(&runs, a.format)?;
        }
    }
    if let Some(dir) = a.plot {
        std::fs::create_dir_all(&dir)
            .map_err(|e| Exit::bad_input(format!("{}: {e}", dir.display())))?;
        let metric = metrics.first().copied().unwrap_or(Metric::InputToPaint);
        for name in PLOTS {
            let out = dir.join(name);
            arena_compare::plot::plot(&runs, metric, &out)?;
            eprintln!("wrote {}", out.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
