//! `--until-decided` and `--budget` of `ab` and `demo`: rounds added until the verdict
//! decides, each look at the share of alpha that keeps the whole sequence at alpha.

use std::time::Duration;

use arena_compare::ab::{pooled, verdict_at};
use arena_compare::options::SplitArgs;
use arena_compare::Verdicts;
use arena_pilot::{Budget, Look, Outcome, Sequential};
use arena_run::Run;
use arena_stats::Verdict;

/// The family-wise level of a sequence: each of its `looks` spends `ALPHA / looks`.
pub const ALPHA: f64 = 0.05;

/// Rounds added until the verdict decides.
#[derive(Debug, Clone, clap::Args)]
pub struct SequenceArgs {
    /// After --rounds rounds, add a round at a time until every headline quantile of every
    /// arm is decided (faster, slower or the same), or --budget is spent. Each look after
    /// a round spends alpha / (the looks the budget allows: Bonferroni over the looks), so
    /// looking again never raises the false-alarm rate past alpha.
    #[arg(long)]
    pub until_decided: bool,
    /// What --until-decided may spend: a number of rounds (`8`, the default) or a time
    /// (`3m`, `90s`, `1h 30m`). No round starts that would end past a time budget.
    #[arg(long, value_name = "ROUNDS|TIME", value_parser = parse_budget, requires = "until_decided",
          allow_negative_numbers = true)]
    pub budget: Option<Budget>,
}

/// The default budget of `--until-decided`.
pub const DEFAULT_BUDGET: Budget = Budget::Rounds(8);

/// What a budget must be, as a refusal says it.
const BUDGET_RANGE: &str =
    "must be a number of rounds from 1 to 4294967295 (8) or a time above 0 (3m, 90s, 1h 30m)";

/// `8` (rounds) or `3m` (time); 0 of either is refused.
pub fn parse_budget(text: &str) -> Result<Budget, String> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return match t.parse::<u32>() {
            Ok(n) if n > 0 => Ok(Budget::Rounds(n)),
            _ => Err(BUDGET_RANGE.into()),
        };
    }
    match humantime::parse_duration(t) {
        Ok(d) if d > Duration::ZERO => Ok(Budget::Time(d)),
        _ => Err(BUDGET_RANGE.into()),
    }
}

impl SequenceArgs {
    /// The sequence these flags ask for, looking with `look`; `None` without
    /// `--until-decided`.
    pub fn sequential<'a>(
        &self,
        look: &'a (dyn Fn(&[Outcome], u32) -> Look + Send + Sync),
    ) -> Option<Sequential<'a>> {
        self.until_decided.then(|| Sequential {
            budget: self.budget.unwrap_or(DEFAULT_BUDGET),
            look,
        })
    }
}

/// The level each look of `looks` is drawn at.
pub fn alpha_of(looks: Option<u32>) -> f64 {
    ALPHA / looks.unwrap_or(1).max(1) as f64
}

/// Every headline quantile of every arm decided: faster, slower or the same.
pub fn all_decided(v: &Verdicts) -> bool {
    !v.arms.is_empty()
        && v.arms.iter().all(|a| {
            a.input
                .pooled
                .iter()
                .all(|c| matches!(c.verdict, Verdict::Lower | Verdict::Higher | Verdict::Same))
        })
}

/// `lazy-png p50 faster, p90 faster, p99 unknown`.
pub fn verdict_line(v: &Verdicts) -> String {
    let arm = |a: &arena_compare::ArmVerdict| {
        let qs: Vec<String> = a
            .input
            .pooled
            .iter()
            .map(|c| format!("p{} {}", (c.q * 100.0).round(), c.verdict.word()))
            .collect();
        format!("{} {}", a.input.candidate, qs.join(", "))
    };
    v.arms.iter().map(arm).collect::<Vec<_>>().join("; ")
}

/// A look at the runs so far, at the level `looks` leaves each.
pub fn look(outcomes: &[Outcome], looks: u32, baseline: &str, split: &SplitArgs) -> Look {
    let runs: Vec<Run> = outcomes.iter().map(|o| o.run.clone()).collect();
    let alpha = alpha_of(Some(looks));
    let v = match pooled(&runs, Some(baseline.to_string()), split, alpha) {
        Ok(Some(cmp)) => verdict_at(&runs, &cmp, split, alpha),
        Ok(None) => return undecided("no run to compare yet"),
        Err(e) => return undecided(&format!("no comparison: {e:#}")),
    };
    Look {
        decided: all_decided(&v),
        line: format!(
            "{} (each look at \u{3b1} {:.4}, {looks} planned)",
            verdict_line(&v),
            alpha
        ),
    }
}

fn undecided(why: &str) -> Look {
    Look {
        decided: false,
        line: why.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_rounds_or_a_time_and_never_zero() {
        assert_eq!(parse_budget("8"), Ok(Budget::Rounds(8)));
        assert_eq!(
            parse_budget("3m"),
            Ok(Budget::Time(Duration::from_secs(180)))
        );
        assert_eq!(
            parse_budget("1h 30m"),
            Ok(Budget::Time(Duration::from_secs(5400)))
        );
        for bad in ["0", "0s", "-3", "lots", "", "99999999999"] {
            assert!(parse_budget(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn each_look_spends_its_share_of_alpha() {
        assert_eq!(alpha_of(None), 0.05);
        assert!((alpha_of(Some(7)) - 0.05 / 7.0).abs() < 1e-15);
    }
}
