//! `--until-decided` and `--budget` of `ab` and `demo`: rounds added until the verdict
//! decides, within a budget of rounds or time ([`crate::ab::run_ab`] runs them; the
//! caller's look decides, at alpha over the looks the budget allows).

use std::time::Duration;

use crate::ab::{Budget, Look, Sequential};
use crate::run::Outcome;

/// Rounds added until the verdict decides.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct SequenceArgs {
    /// After --rounds rounds, add a round at a time until every headline quantile of every
    /// arm is decided (faster, slower or the same), or --budget is spent. Each look after
    /// a round spends alpha / (the looks the budget allows: Bonferroni over the looks), so
    /// looking again never raises the false-alarm rate past alpha.
    #[cfg_attr(feature = "clap", arg(long))]
    pub until_decided: bool,
    /// What --until-decided may spend: a number of rounds (`8`, the default) or a time
    /// (`3m`, `90s`, `1h 30m`). No round starts that would end past a time budget.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "ROUNDS|TIME", value_parser = parse_budget,
            requires = "until_decided", allow_negative_numbers = true)
    )]
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

/// How a sequence looks at its runs: the runs so far and the looks planned.
pub type LookFn<'a> = &'a (dyn Fn(&[Outcome], u32) -> Look + Send + Sync);

impl SequenceArgs {
    /// The sequence these flags ask for, looking with `look`; `None` without
    /// `--until-decided`.
    pub fn sequential<'a>(&self, look: LookFn<'a>) -> Option<Sequential<'a>> {
        self.until_decided.then(|| Sequential {
            budget: self.budget.unwrap_or(DEFAULT_BUDGET),
            look,
        })
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
    fn only_until_decided_makes_a_sequence_with_the_default_budget() {
        let look = |_: &[Outcome], _: u32| Look {
            decided: true,
            line: String::new(),
        };
        assert!(SequenceArgs::default().sequential(&look).is_none());
        let on = SequenceArgs {
            until_decided: true,
            budget: None,
        };
        assert_eq!(on.sequential(&look).unwrap().budget, DEFAULT_BUDGET);
    }
}
