//! The gate's limits as given on the command line: `--max METRIC.pQ=+PCT` on a latency
//! quantile, and `--max unanswered=+PTpt` on the share of loops that got no answer.

use anyhow::Result;
use arena_report::Exit;
use arena_run::Metric;
use serde::Serialize;

/// The unanswered share may rise by this many percentage points before the gate looks at
/// it: one loop in a hundred, so a single unlucky timeout in a short run is not a failure.
pub const DEFAULT_UNANSWERED_PT: f64 = 1.0;

/// The largest latency limit, percent: a quantile allowed to grow a hundredfold is already
/// no limit, and beyond it the limit's arithmetic leaves the finite numbers.
pub const MAX_LATENCY_PCT: f64 = 10_000.0;

fn bad_limit(spec: &str, why: &str) -> anyhow::Error {
    bad_flag("--max", spec, why)
}

fn bad_flag(flag: &str, spec: &str, why: &str) -> anyhow::Error {
    Exit::bad_input(format!(
        "{flag} {spec}: {why} (expected METRIC.pQ=+PCT, e.g. sendToRecv.p50=+10%, or unanswered=+PTpt, e.g. unanswered=+1pt; metrics: {})",
        Metric::ALL.map(|m| m.name()).join(", ")
    ))
    .into()
}

/// One `--max`: a latency quantile's limit, or the unanswered share's.
#[derive(Debug, Clone, PartialEq)]
pub enum GateLimit {
    Latency(Limit),
    /// Largest allowed rise of the unanswered share, percentage points.
    Unanswered {
        max_pt: f64,
    },
}

impl GateLimit {
    /// Parses one `--max` argument; errors name it and what was expected (exit 2).
    pub fn parse(spec: &str) -> Result<GateLimit> {
        let left = spec.split_once('=').map_or(spec, |(l, _)| l).trim();
        if !left.eq_ignore_ascii_case("unanswered") {
            return Limit::parse(spec).map(GateLimit::Latency);
        }
        let right = spec.split_once('=').map(|(_, r)| r.trim());
        let Some(right) = right else {
            return Err(bad_limit(spec, "no '='"));
        };
        if right.ends_with('%') {
            return Err(bad_limit(
                spec,
                "the unanswered share's limit is in percentage points, not percent: write unanswered=+1pt",
            ));
        }
        let Some(text) = right.strip_suffix("pt").map(str::trim) else {
            return Err(bad_limit(
                spec,
                "the unanswered share's limit ends in pt (percentage points), e.g. unanswered=+1pt",
            ));
        };
        let max_pt: f64 = text
            .parse()
            .map_err(|_| bad_limit(spec, "the limit is a number of points, e.g. +1pt"))?;
        if !max_pt.is_finite() || !(0.0..=100.0).contains(&max_pt) {
            return Err(bad_limit(
                spec,
                "the limit is an allowed rise of 0 to 100 points",
            ));
        }
        Ok(GateLimit::Unanswered { max_pt })
    }
}

/// One `--max METRIC.pQ=+PCT` limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Limit {
    pub metric: &'static str,
    #[serde(skip)]
    pub metric_enum: Metric,
    /// Quantile in [0, 1].
    pub q: f64,
    /// Label of the quantile as given (`p50`).
    pub stat: String,
    /// Largest allowed increase, percent of the baseline.
    pub max_pct: f64,
}

impl Limit {
    /// Parses `METRIC[.|:| ]pQ=+PCT[%]`, e.g. `sendToRecv.p50=+10%`; the quantile
    /// defaults to p50. Errors name the argument and what was expected (exit 2).
    pub fn parse(spec: &str) -> Result<Limit> {
        Limit::parse_flag("--max", spec)
    }

    /// [`Limit::parse`] for another flag of the same syntax (`plan --detect`), whose
    /// errors name that flag.
    pub fn parse_flag(flag: &str, spec: &str) -> Result<Limit> {
        let bad = |why: &str| bad_flag(flag, spec, why);
        let (left, right) = spec.split_once('=').ok_or_else(|| bad("no '='"))?;
        let (metric_text, stat) = match left
            .rsplit_once(['.', ':', ' '])
            .filter(|(_, q)| q.starts_with(['p', 'P']))
        {
            Some((m, q)) => (m.trim(), q.trim().to_ascii_lowercase()),
            None => (left.trim(), "p50".to_string()),
        };
        let metric = Metric::parse(metric_text).ok_or_else(|| bad("unknown metric"))?;
        let q: f64 = stat[1..]
            .parse()
            .map_err(|_| bad("the quantile is p followed by a percent, e.g. p90"))?;
        if !q.is_finite() {
            return Err(bad("the quantile is not a finite number"));
        }
        if !(0.0..=100.0).contains(&q) {
            return Err(bad("the quantile must be between p0 and p100"));
        }
        // One `%` at most: `trim_end_matches` would take `+10%%` (a shell-quoting slip)
        // for `+10%` without a word.
        let right = right.trim();
        let pct_text = right.strip_suffix('%').unwrap_or(right).trim();
        if pct_text.ends_with('%') {
            return Err(bad("one '%' at most"));
        }
        let max_pct: f64 = pct_text
            .parse()
            .map_err(|_| bad("the limit is a percent, e.g. +10%"))?;
        // `f64::from_str` takes `inf`, `NaN` and `1e400` (which overflows to inf): none
        // is a limit, and each deserves its own word rather than "0 or more".
        if !max_pct.is_finite() {
            return Err(bad(&format!(
                "the limit `{pct_text}` is not a finite number"
            )));
        }
        if max_pct < 0.0 {
            return Err(bad("the limit is an allowed increase, 0 or more"));
        }
        // `+1e308%` is finite but gates nothing: its product with the baseline overflows
        // to inf, and the check passes whatever the candidate did.
        if max_pct > MAX_LATENCY_PCT {
            return Err(bad(
                "the limit is an allowed increase of at most +10000% (101 times the baseline)",
            ));
        }
        Ok(Limit {
            metric: metric.name(),
            metric_enum: metric,
            q: q / 100.0,
            stat,
            max_pct,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(spec: &str) -> String {
        let e = GateLimit::parse(spec).unwrap_err();
        let msg = e.downcast_ref::<Exit>().expect("exit 2").to_string();
        let head = format!("--max {spec}: ");
        assert!(msg.starts_with(&head), "{msg}");
        msg[head.len()..].to_string()
    }

    #[test]
    fn limit_refuses_inf_nan_and_absurd_percents() {
        for spec in [
            "inputToPixels.p50=+inf%",
            "inputToPixels.p50=+NaN%",
            "inputToPixels.p50=-inf",
            "inputToPixels.p50=+1e400%",
        ] {
            assert!(why(spec).contains("is not a finite number"), "{spec}");
        }
        for spec in ["sendToRecv.p99=+1e308%", "sendToRecv.p99=+10000.001%"] {
            assert!(
                why(spec).starts_with("the limit is an allowed increase of at most +10000%"),
                "{spec}"
            );
        }
        // Units other than % are not a percent, `ms` included.
        for spec in ["sendToRecv.p50=+infms", "sendToRecv.p50=+10ms"] {
            assert!(why(spec).starts_with("the limit is a percent"), "{spec}");
        }
        assert!(why("sendToRecv.pNaN=+10%").starts_with("the quantile is not a finite number"));
    }

    #[test]
    fn limit_takes_0_to_10000_percent() {
        for (spec, pct) in [
            ("sendToRecv.p50=+0%", 0.0),
            ("sendToRecv.p50=+10000%", MAX_LATENCY_PCT),
            ("sendToRecv.p50=9999.5", 9999.5),
        ] {
            match GateLimit::parse(spec).unwrap() {
                GateLimit::Latency(l) => assert_eq!(l.max_pct, pct, "{spec}"),
                other => panic!("{spec}: {other:?}"),
            }
        }
    }

    #[test]
    fn unanswered_limit_refuses_inf_nan_and_past_100_points() {
        for spec in [
            "unanswered=+infpt",
            "unanswered=+NaNpt",
            "unanswered=+1e400pt",
            "unanswered=+100.5pt",
            "unanswered=-1pt",
        ] {
            assert!(
                why(spec).starts_with("the limit is an allowed rise of 0 to 100 points"),
                "{spec}"
            );
        }
        assert_eq!(
            GateLimit::parse("unanswered=+100pt").unwrap(),
            GateLimit::Unanswered { max_pt: 100.0 }
        );
        assert_eq!(
            GateLimit::parse("unanswered=0pt").unwrap(),
            GateLimit::Unanswered { max_pt: 0.0 }
        );
    }
}
