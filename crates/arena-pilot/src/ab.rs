//! A/B runs: arms interleaved (A B A B ...), each run in a fresh page and a fresh target
//! session, so drift over time (thermal, caches, other load) falls on every arm alike
//! instead of on whichever arm ran last.

use std::path::PathBuf;

use anyhow::{anyhow, Result};
use arena_report::Exit;

use super::drive::{run_arm, BrowserOptions, Cancel, OutDir, Outcome, Overrides, RunRequest};
use super::scenario::Pilot;

pub struct AbRequest<'a> {
    pub pilot: &'a Pilot,
    pub arms: Vec<String>,
    pub rounds: u32,
    pub overrides: Overrides,
    /// Run folders go under this folder.
    pub out_base: PathBuf,
    pub browser: BrowserOptions,
    pub progress: bool,
    pub cancel: Cancel,
}

/// The run order: round-major, arms in the order given.
pub fn schedule(arms: &[String], rounds: u32) -> Vec<(u32, String)> {
    (0..rounds)
        .flat_map(|r| arms.iter().map(move |a| (r, a.clone())))
        .collect()
}

/// Every run made, in order; `error` is set when a run ended early (the runs before it and
/// the partial one are kept and written).
pub struct AbOutcome {
    pub outcomes: Vec<Outcome>,
    pub error: Option<anyhow::Error>,
}

pub async fn run_ab(req: AbRequest<'_>) -> Result<AbOutcome> {
    if req.arms.is_empty() {
        return Err(anyhow!(Exit::bad_input("--arms: name at least one arm")));
    }
    if req.rounds == 0 {
        return Err(anyhow!(Exit::bad_input("--rounds: must be at least 1")));
    }
    // Every arm is resolved before any browser starts, so a typo costs nothing.
    let mut arms = Vec::new();
    for name in &req.arms {
        arms.push(req.pilot.arm(Some(name))?);
    }
    let browser = req.browser.launch().await?;
    let mut outcomes = Vec::new();
    let mut error = None;
    let plan = schedule(&req.arms, req.rounds);
    for (i, (round, name)) in plan.iter().enumerate() {
        let arm = arms
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, a)| a.clone())
            .unwrap_or_default();
        if req.progress {
            eprintln!(
                "run {}/{}: arm {name}, round {}",
                i + 1,
                plan.len(),
                round + 1
            );
        }
        let res = run_arm(
            &browser,
            RunRequest {
                pilot: req.pilot,
                arm_name: name.clone(),
                arm,
                overrides: &req.overrides,
                out: OutDir::Under(req.out_base.clone()),
                progress: req.progress,
                cancel: &req.cancel,
            },
        )
        .await;
        match res {
            Ok(o) => {
                let stop = o.exit_error();
                outcomes.push(o);
                if let Some(e) = stop {
                    error = Some(e);
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
        let s = schedule(&["a".into(), "b".into()], 2);
        let order: Vec<String> = s.iter().map(|(r, a)| format!("{a}{r}")).collect();
        assert_eq!(order, vec!["a0", "b0", "a1", "b1"]);
    }
}
