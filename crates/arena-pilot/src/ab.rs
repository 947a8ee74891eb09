//! A/B runs: arms interleaved (A B A B ...), each run in a fresh page and a fresh target
//! session, so drift over time (thermal, caches, other load) falls on every arm alike
//! instead of on whichever arm ran last.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use arena_report::Exit;

use crate::cancel::Cancel;
use crate::plan::{BrowserOptions, Plan};
use crate::progress::{OnProgress, Progress};
use crate::run::{run_arm, OutDir, Outcome, RunRequest};

pub struct AbRequest<'a> {
    /// One plan per arm, in the order given; the first is the baseline. Every arm is
    /// resolved before any browser starts, so a typo costs nothing.
    pub plans: Vec<Plan<'a>>,
    /// Rounds to run; with [`AbRequest::until`], the rounds before the first look.
    pub rounds: u32,
    /// Add rounds until the runs decide, within a budget (`--until-decided`).
    pub until: Option<Sequential<'a>>,
    /// Run folders go under this folder.
    pub out_base: PathBuf,
    pub browser: BrowserOptions,
    pub progress: OnProgress<'a>,
    pub cancel: &'a Cancel,
}

/// How much a sequence of rounds may spend (`--budget`): rounds, or time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    Rounds(u32),
    Time(Duration),
}

impl std::fmt::Display for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Budget::Rounds(1) => write!(f, "1 round"),
            Budget::Rounds(n) => write!(f, "{n} rounds"),
            Budget::Time(d) => write!(f, "{}", fmt_secs(*d)),
        }
    }
}

/// What a look at the runs so far found: every quantile decided or not, and a line for
/// progress.
pub struct Look {
    pub decided: bool,
    pub line: String,
}

/// Sequential rounds: after each round from [`AbRequest::rounds`] on, `look` is asked
/// about the runs so far, with the number of looks the budget allows (planned once, after
/// the first round, so the caller can hold the whole sequence at alpha by spending
/// alpha / looks on each).
pub struct Sequential<'a> {
    pub budget: Budget,
    pub look: &'a (dyn Fn(&[Outcome], u32) -> Look + Send + Sync),
}

/// The run order: round-major, arms in the order given (indices into the arms).
pub fn schedule(arms: usize, rounds: u32) -> Vec<(u32, usize)> {
    (0..rounds)
        .flat_map(|r| (0..arms).map(move |a| (r, a)))
        .collect()
}

/// Every run made, in order; `error` is set when a run ended early (the runs before it and
/// the partial one are kept and written).
pub struct AbOutcome {
    pub outcomes: Vec<Outcome>,
    pub error: Option<anyhow::Error>,
    /// The looks a sequence planned (`--until-decided`); `None` without one.
    pub looks: Option<u32>,
    /// Why a sequence stopped, in words (decided, or the budget spent).
    pub stopped: Option<String>,
}

/// Interleaved arms need an arm and a round (exit 2 otherwise).
pub(crate) fn check_arms_and_rounds(arms: usize, rounds: u32) -> Result<()> {
    if arms == 0 {
        return Err(anyhow!(Exit::bad_input("--arms: name at least one arm")));
    }
    if rounds == 0 {
        return Err(anyhow!(Exit::bad_input("--rounds: must be at least 1")));
    }
    Ok(())
}

/// `1m 20s`, `45s`.
pub(crate) fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 60, s % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m {s}s"),
    }
}

/// The looks a budget allows when the first look comes after `first` rounds and one
/// round took `round`: at least one.
pub fn planned_looks(budget: Budget, first: u32, round: Duration) -> u32 {
    let most = match budget {
        Budget::Rounds(n) => n,
        Budget::Time(_) if round.is_zero() => first,
        Budget::Time(t) => (t.as_secs_f64() / round.as_secs_f64()).floor() as u32,
    };
    (most + 1).saturating_sub(first).max(1)
}

/// Where a sequence stands between rounds.
struct Pace {
    started: Instant,
    /// The first round's length, once it ended.
    round: Option<Duration>,
    looks: Option<u32>,
}

impl Pace {
    /// Why no further round starts: the budget would be spent before it ended.
    fn spent(&self, budget: Budget, rounds_done: u32) -> Option<String> {
        match budget {
            Budget::Rounds(n) if rounds_done >= n => {
                Some(format!("the budget of {budget} is spent"))
            }
            Budget::Rounds(_) => None,
            Budget::Time(t) => {
                let next = self.round.unwrap_or_default();
                let elapsed = self.started.elapsed();
                (elapsed + next > t).then(|| {
                    format!(
                        "the budget of {budget} is spent ({} so far, a round takes {})",
                        fmt_secs(elapsed),
                        fmt_secs(next)
                    )
                })
            }
        }
    }
}

pub async fn run_ab(req: AbRequest<'_>) -> Result<AbOutcome> {
    check_arms_and_rounds(req.plans.len(), req.rounds)?;
    let browser = req.browser.launch().await?;
    (req.progress)(Progress::Browser {
        version: browser.version(),
        pid: browser.pid(),
    });
    let mut out = AbOutcome {
        outcomes: Vec::new(),
        error: None,
        looks: None,
        stopped: None,
    };
    let mut pace = Pace {
        started: Instant::now(),
        round: None,
        looks: None,
    };
    let planned = match &req.until {
        Some(Sequential {
            budget: Budget::Rounds(n),
            ..
        }) => (*n).max(req.rounds),
        Some(_) => u32::MAX,
        None => req.rounds,
    };
    let arms = req.plans.len();
    for round in 0..planned {
        if let Some(seq) = &req.until {
            if let Some(why) = pace.spent(seq.budget, round) {
                out.stopped = Some(if round < req.rounds {
                    format!(
                        "{why}, before the first look (after {} rounds): the runs made are kept, their verdict drawn as one look",
                        req.rounds
                    )
                } else {
                    why
                });
                break;
            }
        }
        let round_start = Instant::now();
        for (arm, plan) in req.plans.iter().enumerate() {
            let index = round as usize * arms + arm + 1;
            let runs = if planned == u32::MAX {
                0
            } else {
                planned as usize * arms
            };
            (req.progress)(Progress::Run {
                index,
                runs,
                arm: &plan.arm_name,
                round: round + 1,
            });
            if !run_one_arm(&browser, &req, plan, &mut out).await {
                break;
            }
        }
        if out.error.is_some() {
            break;
        }
        pace.round.get_or_insert(round_start.elapsed());
        let Some(seq) = &req.until else { continue };
        if round + 1 < req.rounds {
            continue;
        }
        let looks = *pace.looks.get_or_insert_with(|| {
            planned_looks(seq.budget, req.rounds, pace.round.unwrap_or_default())
        });
        out.looks = Some(looks);
        let look = (seq.look)(&out.outcomes, looks);
        (req.progress)(Progress::Look {
            round: round + 1,
            line: &look.line,
        });
        if look.decided {
            out.stopped = Some(format!("decided after {} rounds", round + 1));
            break;
        }
    }
    if let (Some(seq), None, None) = (&req.until, &out.stopped, &out.error) {
        out.stopped = Some(format!("the budget of {} is spent", seq.budget));
    }
    let _ = browser.close().await;
    Ok(out)
}

/// One run of `plan`, its outcome kept; false when the series must stop (the error is
/// in `out`).
async fn run_one_arm(
    browser: &arena_browser::Browser,
    req: &AbRequest<'_>,
    plan: &Plan<'_>,
    out: &mut AbOutcome,
) -> bool {
    let run = RunRequest {
        plan,
        out: OutDir::Under(req.out_base.clone()),
        progress: req.progress,
        cancel: req.cancel,
    };
    match run_arm(browser, run).await {
        Ok(o) => {
            let stop = o.exit_error();
            (req.progress)(Progress::RunWritten {
                arm: &plan.arm_name,
                dir: &o.dir,
                complete: stop.is_none(),
            });
            out.outcomes.push(o);
            out.error = stop;
            out.error.is_none()
        }
        Err(e) => {
            out.error = Some(e);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arms_are_interleaved_round_by_round() {
        let arms = ["a", "b"];
        let s = schedule(arms.len(), 2);
        let order: Vec<String> = s.iter().map(|(r, a)| format!("{}{r}", arms[*a])).collect();
        assert_eq!(order, vec!["a0", "b0", "a1", "b1"]);
    }

    #[test]
    fn a_budget_plans_its_looks_from_the_first_look_on() {
        let min = Duration::from_secs(60);
        // 8 rounds, the first look after 2: looks at 2, 3, ..., 8.
        assert_eq!(planned_looks(Budget::Rounds(8), 2, min), 7);
        assert_eq!(planned_looks(Budget::Rounds(2), 2, min), 1);
        // Three minutes of 80-second rounds: two rounds, one look.
        let t = Budget::Time(Duration::from_secs(180));
        assert_eq!(planned_looks(t, 2, Duration::from_secs(80)), 1);
        assert_eq!(planned_looks(t, 2, Duration::from_secs(20)), 8);
        assert_eq!(format!("{t}"), "3m");
        assert_eq!(fmt_secs(Duration::from_secs(95)), "1m 35s");
    }

    #[test]
    fn a_time_budget_stops_before_a_round_that_would_overrun_it() {
        let pace = Pace {
            started: Instant::now() - Duration::from_secs(100),
            round: Some(Duration::from_secs(50)),
            looks: None,
        };
        let why = pace
            .spent(Budget::Time(Duration::from_secs(120)), 2)
            .unwrap();
        assert!(
            why.starts_with("the budget of 2m is spent (1m 40s so far"),
            "{why}"
        );
        assert!(pace
            .spent(Budget::Time(Duration::from_secs(200)), 2)
            .is_none());
        assert!(pace.spent(Budget::Rounds(2), 2).is_some());
        assert!(pace.spent(Budget::Rounds(3), 2).is_none());
    }
}
