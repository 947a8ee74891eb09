//! `arena-perf plan`: before measuring, how many runs of how many clicks would see a
//! change of a given size, and how long they take, from a short pilot of one arm.
//!
//! The pilot's runs give the quantile's spread as the decision rule counts it
//! ([`arena_stats::run_spread`]): each run's within-run variance (a loop bootstrap by kind
//! of input), which shrinks as one over the loops a run, and the between-run variance,
//! which does not (measured from two runs or more, pooled with the assumed `--run-spread`
//! as the rule pools it). For each design the runs a side are the fewest whose interval
//! would lie past 0 with the asked power ([`arena_stats::runs_needed`]); the time is the
//! pilot's own per click, both arms, plus a few seconds a run for the page.

use anyhow::Result;
use arena_report::{fmt_ms, Cell, Column, Exit, Table};
use arena_run::Run;
use serde::Serialize;

use crate::decide::hier_options;
use crate::group::RunData;
use crate::limit::Limit;
use arena_stats::{run_spread, runs_needed, NoiseRule, SpreadSource, Strata};

/// The designs a plan weighs: clicks a run.
const CLICKS: [u64; 5] = [32, 64, 128, 256, 512];
/// More runs a side than this is no plan.
const MOST_RUNS: usize = 200;
/// A run's time besides its clicks: the target, the page, its setup (measured on the
/// built-in fixture: about 1 s of setup and 2 of launch and load).
const RUN_OVERHEAD_S: f64 = 3.0;

/// What `plan` answers, as JSON prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub metric: &'static str,
    pub stat: String,
    pub detect_pct: f64,
    /// The change that is to be seen, ms: `detect_pct` of the pilot's quantile.
    pub detect_ms: f64,
    pub quantile_ms: f64,
    pub power: f64,
    pub alpha: f64,
    pub pilot_runs: usize,
    /// SD of a run's offset (ms) and where it came from.
    pub between_sd_ms: f64,
    pub between_source: SpreadSource,
    /// SD of one run's quantile from its own loops (ms), at `pilot_loops` loops a run.
    pub within_sd_ms: f64,
    pub pilot_loops: f64,
    pub loops_per_click: f64,
    pub seconds_per_click: f64,
    pub designs: Vec<Design>,
}

/// One design: clicks a run, the runs a side that see the change, their time.
#[derive(Debug, Clone, Serialize)]
pub struct Design {
    pub clicks: u64,
    /// `None`: more than [`MOST_RUNS`] a side, or nothing bounds the spread.
    pub runs_a_side: Option<usize>,
    /// Both arms' runs, minutes.
    pub minutes: Option<f64>,
}

/// The arm a run was measured as: a stored run's label (`stock@main`, `stock@#4`) less
/// the history's suffix.
fn stored_as(arm: &str) -> &str {
    arm.split_once('@').map_or(arm, |(a, _)| a)
}

/// The plan for `limit` (`METRIC.pQ=+PCT`: the change to see) from the pilot `runs`, all
/// of one arm, at `power`.
pub fn plan(runs: &[Run], limit: &Limit, power: f64, rule: &NoiseRule) -> Result<Plan> {
    let arms: Vec<&str> = runs.iter().map(|r| stored_as(&r.meta.arm)).collect();
    if arms.iter().any(|a| *a != arms[0]) {
        return Err(Exit::bad_input(format!(
            "plan: the pilot runs are of one arm, these are of {}",
            arms.join(", ")
        ))
        .into());
    }
    let data: Vec<RunData> = runs.iter().map(|r| RunData::new(r, false)).collect();
    let strata: Vec<Strata> = data
        .iter()
        .map(|d| {
            d.strata(limit.metric_enum)
                .iter()
                .map(Vec::as_slice)
                .collect()
        })
        .collect();
    let s = run_spread(&strata, limit.q, &hier_options(rule))
        .filter(|s| s.value.is_finite() && s.loops > 0.0)
        .ok_or_else(|| {
            Exit::bad_input(format!(
                "plan: the pilot runs have no {} values",
                limit.metric
            ))
        })?;
    let clicks: f64 = runs
        .iter()
        .map(|r| r.meta.summary.clicks_planned as f64)
        .sum();
    let loops_per_click = s.loops * s.runs as f64 / clicks.max(1.0);
    let seconds_per_click = runs.iter().filter_map(wall_s).sum::<f64>() / clicks.max(1.0);
    let detect_ms = limit.max_pct / 100.0 * s.value;
    let designs = CLICKS
        .iter()
        .map(|&c| {
            let k = runs_needed(
                &s,
                detect_ms,
                c as f64 * loops_per_click,
                rule.alpha,
                power,
                MOST_RUNS,
            );
            Design {
                clicks: c,
                runs_a_side: k,
                minutes: k.map(|k| {
                    2.0 * k as f64 * (RUN_OVERHEAD_S + c as f64 * seconds_per_click) / 60.0
                }),
            }
        })
        .collect();
    Ok(Plan {
        metric: limit.metric,
        stat: limit.stat.clone(),
        detect_pct: limit.max_pct,
        detect_ms,
        quantile_ms: s.value,
        power,
        alpha: rule.alpha,
        pilot_runs: s.runs,
        between_sd_ms: s.tau2.sqrt(),
        between_source: s.source,
        within_sd_ms: s.within.sqrt(),
        pilot_loops: s.loops,
        loops_per_click,
        seconds_per_click,
        designs,
    })
}

/// A run's clicking time, s: its wall time less the page's overhead.
fn wall_s(r: &Run) -> Option<f64> {
    let t = |s: &str| humantime::parse_rfc3339(s).ok();
    let d = t(&r.meta.ended_at)?
        .duration_since(t(&r.meta.started_at)?)
        .ok()?;
    Some((d.as_secs_f64() - RUN_OVERHEAD_S).max(0.0))
}

impl Plan {
    /// The plan as a table, its spread and assumptions in the notes.
    pub fn table(&self) -> Table {
        let mut t = Table::new(vec![
            Column::right("clicks a run"),
            Column::right("loops a run"),
            Column::right("runs a side"),
            Column::right("both arms, min"),
        ])
        .with_title(format!(
            "To see {} {} move by {:+} % ({:+.1} ms of {}) at {:.0} % power, two-sided α = {}",
            self.metric,
            self.stat,
            self.detect_pct,
            self.detect_ms,
            fmt_ms(self.quantile_ms),
            100.0 * self.power,
            self.alpha
        ));
        for d in &self.designs {
            t.push_row(vec![
                Cell::num(d.clicks.to_string(), d.clicks as f64),
                Cell::text(format!("{:.0}", d.clicks as f64 * self.loops_per_click)),
                match d.runs_a_side {
                    Some(k) => Cell::num(k.to_string(), k as f64),
                    None => Cell::text(format!("over {MOST_RUNS}")),
                },
                match d.minutes {
                    Some(m) => Cell::num(format!("{m:.1}"), m),
                    None => Cell::text("-"),
                },
            ]);
        }
        let between = match self.between_source {
            SpreadSource::Runs => format!("measured over {} runs", self.pilot_runs),
            SpreadSource::Assumed => {
                "assumed (--run-spread): one pilot run cannot measure it".into()
            }
            SpreadSource::Unknown => "unknown: give two pilot runs or more, or --run-spread".into(),
        };
        t.note(format!(
            "from {} pilot run(s): between runs SD {} ({between}); within a run SD {} at {:.0} loops, shrinking as one over the loops; {:.2} s a click and {RUN_OVERHEAD_S:.0} s a run for the page",
            self.pilot_runs,
            fmt_ms(self.between_sd_ms),
            fmt_ms(self.within_sd_ms),
            self.pilot_loops,
            self.seconds_per_click
        ));
        t.note("runs a side: the fewest whose interval lies past 0 with that power (the between-run spread never shrinks with clicks, so past a point more clicks buy nothing); measure them interleaved (`ab --rounds N --clicks C`)");
        t
    }
}

/// `arena-perf plan`'s flags.
#[cfg(feature = "clap")]
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// Pilot run folders of one arm (or folders of them): two or more measure the spread
    /// between runs, one leaves it to --run-spread. None with a history selection
    /// (`--history-branch main`: the testbed's own stored runs).
    #[arg(required_unless_present_any = ["history_branch", "ids"], value_name = "RUN_OR_DIR")]
    pub runs: Vec<std::path::PathBuf>,
    /// Plan from the runs of this arm only: a history's runs, or folders of an `ab`, may
    /// hold several.
    #[arg(long, value_name = "ARM")]
    pub arm: Option<String>,
    /// The change to see, as the gate's limits are written: `METRIC.pQ=+PCT`, e.g.
    /// `inputToPixels.p90=+10%`.
    #[arg(long, value_name = "METRIC.pQ=+PCT", value_parser = |s: &str| Limit::parse_flag("--detect", s))]
    pub detect: Limit,
    /// The chance the runs should see it (0.5 to 0.99).
    #[arg(long, default_value_t = 0.8, value_parser = arena_report::ranges::power)]
    pub power: f64,
    /// Output format; `json` prints the document of docs/schema/plan.json.
    #[arg(long, value_enum, default_value_t = arena_report::Format::Table)]
    pub format: arena_report::Format,
    #[command(flatten)]
    pub stats: crate::options::StatsArgs,
}

#[cfg(feature = "clap")]
impl PlanArgs {
    /// The plan the flags ask for of `runs` (the folders given, and any stored runs),
    /// rendered in their format.
    pub fn render(&self, mut runs: Vec<Run>) -> Result<String> {
        if let Some(arm) = &self.arm {
            let mut arms: Vec<&str> = runs.iter().map(|r| stored_as(&r.meta.arm)).collect();
            arms.dedup();
            let arms = arms.join(", ");
            runs.retain(|r| stored_as(&r.meta.arm) == arm);
            if runs.is_empty() {
                return Err(Exit::bad_input(format!(
                    "plan --arm {arm}: no run of that arm among those given ({arms})"
                ))
                .into());
            }
        }
        let (rule, _) = self.stats.options()?;
        let p = plan(&runs, &self.detect, self.power, &rule)?;
        use arena_report::json;
        Ok(match self.format {
            arena_report::Format::Json => {
                json::to_text(&json::document("plan", json::to_value(&p)))
            }
            f => p.table().render(f),
        })
    }
}
