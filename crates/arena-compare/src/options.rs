//! The comparison flags `compare`, `gate`, `report`, `pilot`, `ab` and `demo` take, and
//! the options they become. The flags are clap arguments behind the `clap` feature (the
//! command line's), so the crate itself builds and tests without clap.

use arena_report::{Exit, Format, Table};
use arena_run::{Metric, Run};
use arena_stats::{BootstrapOptions, NoiseRule, SmallSamples};

#[cfg(feature = "clap")]
use arena_report::ranges;

use crate::breakdown::{breakdowns, Split};
use crate::comparable::{refuse_mixed, warn_mixed, Mixed};
use crate::compare::{CompareOptions, Comparison};
use crate::findings::CheckOptions;
use crate::group::{run_names, By};

#[derive(Debug, Clone, Copy)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ByArg {
    /// One column per run: `<arm>, run N`.
    Run,
    /// One column per arm, its runs pooled.
    Arm,
}

/// Statistics flags shared by `compare`, `gate` and `report`.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct StatsArgs {
    /// Family-wise significance level: over a family of m checks (a metric's three
    /// quantiles, the gate's limits) every interval is drawn at 1 - ALPHA/m.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0.05, value_name = "A",
          value_parser = ranges::alpha_open_0_1, allow_negative_numbers = true))]
    pub alpha: f64,
    /// The practical threshold, percent of the baseline's quantile (0 to 100): a change
    /// is faster or slower only when its interval lies wholly on one side of 0 and it is
    /// at least this; it is the same when its whole interval lies within this either side
    /// of 0; anything else is unknown. `--noise-bar` is its old name.
    #[cfg_attr(feature = "clap", arg(long = "threshold", alias = "noise-bar", default_value_t = 2.0, value_name = "PCT",
          value_parser = ranges::pct_0_100, allow_negative_numbers = true))]
    pub noise_bar: f64,
    /// The spread between two runs of one arm assumed when each side has one run, percent
    /// of the baseline's quantile (0 to 100; 0 assumes sessions never differ). With two
    /// runs or more on a side the runs measure it.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = arena_stats::RUN_SPREAD_PCT, value_name = "PCT",
          value_parser = ranges::pct_0_100, allow_negative_numbers = true))]
    pub run_spread: f64,
    /// Pair the runs by round (run N of each arm, measured minutes apart, as `ab`
    /// interleaves them) and analyse the rounds' differences, so that a slow drift of
    /// the machine cancels; `independent` pools the runs' spread over both sides (more
    /// degrees of freedom; the default, docs/compare.md says why).
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value_t = arena_stats::Pairing::Independent, value_name = "HOW"))]
    pub pairing: arena_stats::Pairing,
    /// Bootstrap resamples per interval (100 to 1000000).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 2000, value_name = "N",
          value_parser = ranges::resamples, allow_negative_numbers = true))]
    pub resamples: usize,
    /// Bootstrap seed: same runs and seed, same intervals.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = BootstrapOptions::default().seed, value_name = "N"))]
    pub seed: u64,
    /// Put cold loops (first interaction of a page) into the figures; warned about.
    #[cfg_attr(feature = "clap", arg(long))]
    pub include_cold: bool,
    /// An arm whose share of answered replies of at least its target's `idle_reply_bytes`
    /// (4 KB by default) is below this looks idle (warned about); 0 to 1.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = arena_run::IDLE_SHARE, value_name = "SHARE",
          value_parser = ranges::share_0_1, allow_negative_numbers = true))]
    pub idle_share: f64,
    /// Compare runs that were not measured alike: another answer oracle or its parameters,
    /// socket source, answer window (timeout), pilot file, Chromium major version or link.
    /// Refused by default (exit 2); allowed, every table says under it what differs, and
    /// JSON carries it as a `mixed` finding.
    #[cfg_attr(feature = "clap", arg(long))]
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
            pairing: self.pairing,
            run_spread_pct: Some(self.run_spread),
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
        refuse_mixed(cmd, &run_names(runs), self.allow_mixed)
    }
}

/// What `--allow-mixed` let differ, under the comparison and every breakdown, and in its
/// findings (so in JSON and in the HTML report).
pub fn warn_comparison(mixed: &[Mixed], cmp: &mut Comparison) {
    let breakdowns = cmp.breakdowns.iter_mut().map(|b| &mut b.table);
    let tables = std::iter::once(&mut cmp.table).chain(breakdowns);
    warn_mixed(mixed, tables, &mut cmp.findings);
}

/// The metrics `--metric` names, in order; an unknown name is exit 2 listing the known.
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
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct SplitArgs {
    /// Also break the loops down into rows (repeatable): `event` (mousedown, mouseup,
    /// keydown, ...; coalesced input on its own row), `label` (the pilot file's click
    /// labels), `reply-size=1KB,10KB` (by the bytes of each loop's answer: <1KB,
    /// 1KB-10KB, >=10KB). Each row has its loops, n, p50/p90/p99 and its change against
    /// the baseline's same row.
    #[cfg_attr(feature = "clap", arg(long = "split", value_name = "SPLIT", value_parser = Split::parse))]
    pub splits: Vec<Split>,
    /// A breakdown counts the answered loops whose reply reached SIZE (e.g. 4KB; K =
    /// 1024 B). Default: the target's `idle_reply_bytes` (4KB unless the pilot file says).
    #[cfg_attr(feature = "clap", arg(long, value_name = "SIZE", value_parser = arena_report::parse_positive_size))]
    pub reply_over: Option<u64>,
}

impl SplitArgs {
    /// The breakdowns of `runs` as tables (none without `--split`).
    pub fn tables(&self, runs: &[Run]) -> anyhow::Result<Vec<Table>> {
        if self.splits.is_empty() {
            return Ok(Vec::new());
        }
        let opts = CompareOptions {
            splits: self.splits.clone(),
            reply_over: self.reply_over,
            ..CompareOptions::default()
        };
        Ok(breakdowns(runs, &opts)?
            .into_iter()
            .map(|b| b.table)
            .collect())
    }
    /// The breakdowns `--split` asks for of `runs`, each rendered in `format` after a
    /// blank line. JSON has them in `compare --format json`; a run's JSON document does
    /// not, and stderr says so (this is the command line's glue).
    pub fn rendered(&self, runs: &[Run], format: Format) -> anyhow::Result<Vec<String>> {
        if format == Format::Json && !self.splits.is_empty() {
            eprintln!("--split: as JSON, breakdowns are in `arena-perf compare RUN_FOLDER --split ... --format json`");
            return Ok(Vec::new());
        }
        let tables = self.tables(runs)?;
        Ok(tables
            .iter()
            .map(|t| format!("\n{}", t.render(format)))
            .collect())
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_metric_is_bad_input_naming_the_known_ones() {
        let err = parse_metrics(&["inputToPaint".into(), "nope".into()]).unwrap_err();
        assert_eq!(
            arena_report::ExitKind::of(&err),
            Some(arena_report::ExitKind::BadInput)
        );
        let text = err.to_string();
        assert!(text.starts_with("--metric nope: unknown metric"), "{text}");
        assert!(text.contains("inputToPaint"), "{text}");
    }

    #[test]
    fn the_stats_flags_set_the_interval_level_from_alpha() {
        let stats = StatsArgs {
            alpha: 0.1,
            noise_bar: 3.0,
            resamples: 500,
            seed: 7,
            include_cold: true,
            idle_share: 0.2,
            allow_mixed: false,
            run_spread: 4.0,
            pairing: arena_stats::Pairing::Rounds,
        };
        let (rule, checks) = stats.options().unwrap();
        assert_eq!(rule.run_spread_pct, Some(4.0));
        assert_eq!(rule.pairing, arena_stats::Pairing::Rounds);
        assert_eq!(rule.noise_bar_pct, 3.0);
        assert!((rule.bootstrap.level - 0.9).abs() < 1e-12);
        assert_eq!((rule.bootstrap.resamples, rule.bootstrap.seed), (500, 7));
        assert!(checks.include_cold);
        let opts = compare_options(ByArg::Run, None, &[], &stats, &SplitArgs::default());
        assert!(matches!(opts.unwrap().by, By::Run));
    }
}
