//! The two boards a fixture figure can be taken on. The field notes' main lesson is to
//! measure against a match somebody is playing: knobs that win on an idle board (a higher
//! PNG level, a shorter tick) lose once the server is busy, because CPU on the send path
//! is what a tail is made of when the cores are shared. A scenario is a preset of knobs
//! under the arm's own, so an arm still changes exactly what it names.
//!
//! - `idle`: the deployment-phase board, no bots. A click moves a highlight; the server
//!   has the cores to itself.
//! - `played`: the firing phase (line-of-sight work and an arc repaint per click, every
//!   image constant encoded on the send path as stock does), its costs in the shares of
//!   the notes' event-thread profile (eager PNG encode 45 % of the send path's CPU, so
//!   `los_work=700`), and two bots that think for `bot_turn_ms` after each input at
//!   `bot_duty` percent each: together about 1.55 of 2 cores on their turns, the share the
//!   notes measured for the match host during bot turns (docs/fixture-protocol.md,
//!   "Scenarios").

use serde::{Deserialize, Serialize};

/// A preset of knobs the arm's own knobs go on top of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scenario {
    Idle,
    Played,
}

impl Scenario {
    pub const NAMES: [&'static str; 2] = ["idle", "played"];

    /// `idle` or `played`; anything else names both.
    pub fn parse(text: &str) -> Result<Scenario, String> {
        match text {
            "idle" => Ok(Scenario::Idle),
            "played" => Ok(Scenario::Played),
            other => Err(format!(
                "unknown scenario `{other}`: expected {}",
                Scenario::NAMES.join(" or ")
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scenario::Idle => "idle",
            Scenario::Played => "played",
        }
    }

    /// The knobs it sets, as `(name, value)` pairs for [`crate::Knobs::from_pairs`].
    pub fn knobs(self) -> Vec<(String, String)> {
        let pairs: &[(&str, &str)] = match self {
            Scenario::Idle => &[("phase", "deploy"), ("bots", "0")],
            Scenario::Played => &[
                ("phase", "firing"),
                ("los_work", "700"),
                ("bots", "2"),
                ("bot_duty", "78"),
                ("bot_turn_ms", "400"),
            ],
        };
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Knobs, Phase};

    #[test]
    fn each_scenario_is_a_valid_knob_set_the_arm_goes_on_top_of() {
        let idle = Knobs::from_pairs(&Scenario::Idle.knobs()).unwrap();
        assert_eq!((idle.phase, idle.bots), (Phase::Deploy, 0));
        let mut pairs = Scenario::Played.knobs();
        pairs.push(("lazy_png".into(), "true".into()));
        pairs.push(("bots".into(), "1".into()));
        let played = Knobs::from_pairs(&pairs).unwrap();
        assert_eq!(played.phase, Phase::Firing);
        assert!(played.lazy_png);
        assert_eq!(played.bots, 1, "the arm's knob wins over the scenario's");
        assert!(played.bot_turn_ms > 0 && played.bot_duty > 0);
    }

    #[test]
    fn names_round_trip_and_a_wrong_one_names_both() {
        for n in Scenario::NAMES {
            assert_eq!(Scenario::parse(n).unwrap().name(), n);
        }
        let e = Scenario::parse("busy").unwrap_err();
        assert!(e.contains("idle or played"), "{e}");
    }
}
