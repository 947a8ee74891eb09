//! A/B runs: arms interleaved (A B A B ...), each run in a fresh page and a fresh target
//! session, so drift over time (thermal, caches, other load) falls on every arm alike
//! instead of on whichever arm ran last.

use std::path::PathBuf;

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
    pub rounds: u32,
    /// Run folders go under this folder.
    pub out_base: PathBuf,
    pub browser: BrowserOptions,
    pub progress: OnProgress<'a>,
    pub cancel: &'a Cancel,
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

pub async fn run_ab(req: AbRequest<'_>) -> Result<AbOutcome> {
    check_arms_and_rounds(req.plans.len(), req.rounds)?;
    let browser = req.browser.launch().await?;
    (req.progress)(Progress::Browser {
        version: browser.version(),
        pid: browser.pid(),
    });
    let (mut outcomes, mut error) = (Vec::new(), None);
    let order = schedule(req.plans.len(), req.rounds);
    for (i, &(round, arm)) in order.iter().enumerate() {
        let plan = &req.plans[arm];
        (req.progress)(Progress::Run {
            index: i + 1,
            runs: order.len(),
            arm: &plan.arm_name,
            round: round + 1,
        });
        let run = RunRequest {
            plan,
            out: OutDir::Under(req.out_base.clone()),
            progress: req.progress,
            cancel: req.cancel,
        };
        match run_arm(&browser, run).await {
            Ok(o) => {
                let stop = o.exit_error();
                (req.progress)(Progress::RunWritten {
                    arm: &plan.arm_name,
                    dir: &o.dir,
                    complete: stop.is_none(),
                });
                outcomes.push(o);
                if stop.is_some() {
                    error = stop;
                    break;
                }
            }
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let _ = browser.close().await;
    Ok(AbOutcome { outcomes, error })
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
}
