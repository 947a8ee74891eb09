//! `arena-perf explain`'s flags, and the text they print: the command line's file only
//! calls [`output`] and prints it.

use std::path::PathBuf;

use anyhow::Result;
use arena_report::{ranges, Format};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run folder to explain (made by `pilot` or `ab`: its run.json holds the page
    /// clock's wall-clock origin).
    #[arg(value_name = "RUN")]
    pub run: PathBuf,
    /// A JVM GC log whose lines carry wall time, repeatable: `-Xlog:gc*:file=gc.log:time,uptime`
    /// (an uptime alone cannot be placed on the run's clock; exit 2 says so).
    #[arg(long, value_name = "FILE")]
    pub gc: Vec<PathBuf>,
    /// A stats log (`dd-MMM-yyyy-HH:mm:ss.SSS,<instance>,<metric>,<value>`, read as UTC;
    /// `serve --stats-log` writes one), repeatable: its frames of --slow-frame ms or more
    /// are evidence, and every frame checks the clocks against the replies received.
    #[arg(long, value_name = "FILE")]
    pub stats: Vec<PathBuf>,
    /// The tail is the loops over this quantile of inputToPaint, unanswered loops past
    /// every one: `p90`, `p99`, or a share such as `0.95`.
    #[arg(long, value_name = "pQ", default_value = "p90", value_parser = tail_quantile)]
    pub tail: f64,
    /// A stats-log frame that took this long or longer (latencyServerRendering) is
    /// evidence, ms.
    #[arg(long, value_name = "MS", default_value_t = 50.0,
          value_parser = ranges::positive_f64, allow_negative_numbers = true)]
    pub slow_frame: f64,
    /// Random shifts of the evidence the chance control (sham) draws.
    #[arg(long, value_name = "N", default_value_t = 200,
          value_parser = clap::value_parser!(u32).range(20..=100_000))]
    pub shams: u32,
    /// The sham's seed: the same seed, the same chance column.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// `p90` as 0.9, or a share in (0.5, 1).
fn tail_quantile(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let ok = |v: f64| v > 0.5 && v < 1.0;
    let range = "a quantile over the median: p90, p99 or a share such as 0.95";
    match t.strip_prefix('p') {
        Some(pct) => ranges::finite(pct, |v| ok(v / 100.0), range).map(|v| v / 100.0),
        None => ranges::finite(t, ok, range),
    }
}

/// What `explain` prints for `a`.
pub fn output(a: Args) -> Result<String> {
    let opts = crate::Options {
        run: a.run,
        gc: a.gc,
        stats: a.stats,
        quantile: a.tail,
        slow_frame_ms: a.slow_frame,
        shams: a.shams as usize,
        seed: a.seed,
    };
    let e = crate::explain(&opts)?;
    Ok(match a.format {
        Format::Json => arena_report::json::to_text(&crate::document(&e)),
        f => arena_logs::render(&crate::table(&e), f),
    })
}

#[cfg(test)]
mod tests {
    use super::tail_quantile;

    #[test]
    fn a_tail_is_a_quantile_over_the_median() {
        assert_eq!(tail_quantile("p90"), Ok(0.9));
        assert!((tail_quantile("p99.9").unwrap() - 0.999).abs() < 1e-12);
        assert_eq!(tail_quantile("0.95"), Ok(0.95));
        for bad in ["p50", "p100", "0.5", "1", "NaN", "pinf", "p", "-0.9", "90"] {
            assert!(tail_quantile(bad).is_err(), "{bad}");
        }
    }
}
