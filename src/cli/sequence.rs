//! The look of `ab --until-decided` and `demo --until-decided` (`arena_compare::ab::look`)
//! over the runs a sequence has made.

use arena_compare::options::SplitArgs;
use arena_pilot::{Look, Outcome};

/// A look at the runs so far against `baseline`, at the level `looks` leaves each.
pub fn look(outcomes: &[Outcome], looks: u32, baseline: &str, split: &SplitArgs) -> Look {
    let runs: Vec<arena_run::Run> = outcomes.iter().map(|o| o.run.clone()).collect();
    let (decided, line) = arena_compare::ab::look(&runs, looks, baseline, split);
    Look { decided, line }
}
