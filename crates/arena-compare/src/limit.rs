//! The gate's limits as given on the command line: `--max METRIC.pQ=+PCT` on a latency
//! quantile, `--max unanswered=+PTpt` on the share of loops that got no answer, and
//! `--max claimed=+PTpt` on the share whose answer had already closed an earlier loop.

use anyhow::Result;
use arena_report::Exit;
use arena_run::Metric;
use serde::Serialize;

/// A share (unanswered, claimed) may rise by this many percentage points before the gate
/// looks at it: one loop in a hundred, so a single unlucky timeout in a short run is not a
/// failure.
pub const DEFAULT_UNANSWERED_PT: f64 = 1.0;

/// A share of the loops the gate always checks, besides the latency limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Share {
    /// Loops nothing answered within the window, of the answered and unanswered ones.
    Unanswered,
    /// Loops whose answer had already closed an earlier loop (an app that merges answers
    /// leaves its later inputs claimed), of every loop.
    Claimed,
}

impl Share {
    pub const ALL: [Share; 2] = [Share::Unanswered, Share::Claimed];

    /// As `--max` and the table name it.
    pub fn name(self) -> &'static str {
        match self {
            Share::Unanswered => "unanswered",
            Share::Claimed => "claimed",
        }
    }
}

/// The largest latency limit, percent: a quantile allowed to grow a hundredfold is already
/// no limit, and beyond it the limit's arithmetic leaves the finite numbers.
pub const MAX_LATENCY_PCT: f64 = 10_000.0;

fn bad_limit(spec: &str, why: &str) -> anyhow::Error {
    bad_flag("--max", spec, why)
}

fn bad_flag(flag: &str, spec: &str, why: &str) -> anyhow::Error {
    Exit::bad_input(format!(
        "{flag} {spec}: {why} (expected METRIC.pQ=+PCT, e.g. sendToRecv.p50=+10%, or a share's unanswered=+PTpt or claimed=+PTpt, e.g. unanswered=+1pt; metrics: {})",
        Metric::ALL.map(|m| m.name()).join(", ")
    ))
    .into()
}

/// One `--max`: a latency quantile's limit, or a share's.
#[derive(Debug, Clone, PartialEq)]
pub enum GateLimit {
    Latency(Limit),
    /// Largest allowed rise of a share, percentage points.
    Share {
        share: Share,
        max_pt: f64,
    },
}

impl GateLimit {
    /// Parses one `--max` argument; errors name it and what was expected (exit 2).
    pub fn parse(spec: &str) -> Result<GateLimit> {
        let left = spec.split_once('=').map_or(spec, |(l, _)| l).trim();
        let Some(share) = Share::ALL
            .into_iter()
            .find(|s| left.eq_ignore_ascii_case(s.name()))
        else {
            return Limit::parse(spec).map(GateLimit::Latency);
        };
        let name = share.name();
        let right = spec.split_once('=').map(|(_, r)| r.trim());
        let Some(right) = right else {
            return Err(bad_limit(spec, "no '='"));
        };
        if right.ends_with('%') {
            return Err(bad_limit(
                spec,
                &format!("the {name} share's limit is in percentage points, not percent: write {name}=+1pt"),
            ));
        }
        let Some(text) = right.strip_suffix("pt").map(str::trim) else {
            return Err(bad_limit(
                spec,
                &format!(
                    "the {name} share's limit ends in pt (percentage points), e.g. {name}=+1pt"
                ),
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
        Ok(GateLimit::Share { share, max_pt })
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
    fn share_limits_refuse_inf_nan_and_past_100_points() {
        for name in ["unanswered", "claimed"] {
            for bad in ["+infpt", "+NaNpt", "+1e400pt", "+100.5pt", "-1pt"] {
                let spec = format!("{name}={bad}");
                assert!(
                    why(&spec).starts_with("the limit is an allowed rise of 0 to 100 points"),
                    "{spec}"
                );
            }
            assert!(why(&format!("{name}=+1%"))
                .starts_with(&format!("the {name} share's limit is in percentage points")));
            assert!(why(&format!("{name}=+1")).contains("ends in pt"));
        }
        let share = |spec: &str| match GateLimit::parse(spec).unwrap() {
            GateLimit::Share { share, max_pt } => (share, max_pt),
            other => panic!("{spec}: {other:?}"),
        };
        assert_eq!(share("unanswered=+100pt"), (Share::Unanswered, 100.0));
        assert_eq!(share("unanswered=0pt"), (Share::Unanswered, 0.0));
        assert_eq!(share("Claimed=+2.5pt"), (Share::Claimed, 2.5));
    }
}
