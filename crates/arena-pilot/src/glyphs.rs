//! What a typing run's keydown loops give (`run.json` `summary.typing`): keydown to
//! socket, keydown to glyph, and how far the glyphs trailed the keys.

use std::collections::BTreeMap;

use arena_run::{Loop, Outcome, TypingSummary};
use arena_stats::Summary;

/// The typing figures of `loops` (their keydowns; a typing run has no other loops).
pub fn typing_summary(mode: &str, loops: &[Loop]) -> TypingSummary {
    let keys: Vec<&Loop> = loops.iter().filter(|l| l.event == "keydown").collect();
    let count = |o: Outcome| keys.iter().filter(|l| l.outcome == o).count() as u64;
    let to_socket: Vec<f64> = keys.iter().filter_map(|l| l.input_to_socket).collect();
    let to_glyph: Vec<f64> = keys
        .iter()
        .filter(|l| l.outcome == Outcome::Answered)
        .filter_map(|l| l.input_to_pixels)
        .collect();
    // Glyph frames by their time, with the keys each showed (a frame's time is exact: the
    // oracle stamps every key it answers with the same frame time).
    let mut frames: BTreeMap<u64, u64> = BTreeMap::new();
    for t in answers(&keys) {
        *frames.entry(t.to_bits()).or_default() += 1;
    }
    TypingSummary {
        mode: mode.to_string(),
        keys: keys.len() as u64,
        answered: count(Outcome::Answered),
        unanswered: count(Outcome::Unanswered),
        claimed: count(Outcome::Claimed),
        keydown_to_socket: Summary::of(&to_socket),
        keydown_to_glyph: Summary::of(&to_glyph),
        glyph_frames: frames.len() as u64,
        frames_with_several: frames.values().filter(|n| **n > 1).count() as u64,
        max_keys_behind: max_keys_behind(&keys),
    }
}

fn answers<'a>(keys: &'a [&'a Loop]) -> impl Iterator<Item = f64> + 'a {
    keys.iter()
        .filter(|l| l.outcome == Outcome::Answered)
        .filter_map(|l| l.t_answer)
}

/// The most keys typed and not yet shown as of any glyph frame: at frame time f, the keys
/// with keydown at or before f whose glyph had not appeared by f (unanswered keys never
/// appear).
fn max_keys_behind(keys: &[&Loop]) -> u64 {
    answers(keys)
        .map(|f| {
            keys.iter()
                .filter(|l| l.t_input <= f)
                .filter(|l| match (l.outcome, l.t_answer) {
                    (Outcome::Answered, Some(a)) => a > f,
                    _ => true,
                })
                .count() as u64
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(t_input: f64, t_answer: Option<f64>) -> Loop {
        Loop {
            event: "keydown".into(),
            outcome: if t_answer.is_some() {
                Outcome::Answered
            } else {
                Outcome::Unanswered
            },
            answered: t_answer.is_some(),
            t_input,
            t_send: Some(t_input + 0.5),
            input_to_socket: Some(0.5),
            t_answer,
            input_to_pixels: t_answer.map(|a| a - t_input),
            ..Loop::default()
        }
    }

    #[test]
    fn a_burst_shown_by_two_frames_is_three_keys_behind_at_the_first() {
        // Keys at 0, 1, 2, 3; frame 20 shows the first, frame 36 the other three.
        let loops = vec![
            key(0.0, Some(20.0)),
            key(1.0, Some(36.0)),
            key(2.0, Some(36.0)),
            key(3.0, Some(36.0)),
        ];
        let s = typing_summary("burst", &loops);
        assert_eq!((s.keys, s.answered, s.unanswered), (4, 4, 0));
        assert_eq!((s.glyph_frames, s.frames_with_several), (2, 1));
        assert_eq!(s.max_keys_behind, 3);
        let g = s.keydown_to_glyph.unwrap();
        assert_eq!((g.n, g.min, g.max), (4, 20.0, 35.0));
        assert_eq!(s.keydown_to_socket.unwrap().n, 4);
    }

    #[test]
    fn an_unanswered_key_is_counted_and_stays_behind() {
        let loops = vec![
            key(0.0, None),
            key(100.0, Some(130.0)),
            key(200.0, Some(230.0)),
        ];
        let s = typing_summary("pace", &loops);
        assert_eq!((s.keys, s.answered, s.unanswered), (3, 2, 1));
        assert_eq!(s.keydown_to_glyph.unwrap().n, 2);
        // Each frame shows its own key: only the lost one is behind, at both.
        assert_eq!(s.max_keys_behind, 1);
        let clicks = vec![Loop {
            event: "mousedown".into(),
            ..key(0.0, Some(5.0))
        }];
        assert_eq!(
            typing_summary("pace", &clicks).keys,
            0,
            "clicks are not keys"
        );
    }
}
