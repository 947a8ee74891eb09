//! Whether the run's inputs went out at a person's timing: each input's phase on the
//! page's frame clock, tested for uniformity.
//!
//! The frame clock is read off the records: the recorder writes a `Paint` record in the
//! animation-frame callback after each draw, so the latest one before an input is a frame
//! boundary (to within the callback's own offset), and the input's phase is its distance
//! from that boundary modulo the frame interval measured on the page before the clicks.

use arena_browser::{Record, RecordKind};
use arena_run::InputPhase;

/// Fewer inputs than this say nothing about a distribution.
const MIN_INPUTS: usize = 8;

/// The phases of the trusted loop inputs in `records` (any order) and their KS test against
/// the uniform distribution; `None` with fewer than [`MIN_INPUTS`] inputs after a painted
/// frame, or no usable interval.
pub fn input_phase(
    records: &[Record],
    loop_events: &[String],
    frame_interval_ms: f64,
) -> Option<InputPhase> {
    if !(frame_interval_ms.is_finite() && frame_interval_ms > 0.0) {
        return None;
    }
    let mut paints: Vec<f64> = records
        .iter()
        .filter(|r| r.kind == RecordKind::Paint)
        .map(|r| r.t_ms)
        .collect();
    paints.sort_by(f64::total_cmp);
    let phases: Vec<f64> = records
        .iter()
        .filter(|r| r.kind == RecordKind::Input && r.trusted)
        .filter(|r| loop_events.contains(&r.event))
        .filter_map(|r| {
            let before = paints.partition_point(|&p| p <= r.t_ms);
            let frame = *paints.get(before.checked_sub(1)?)?;
            Some(((r.t_ms - frame) / frame_interval_ms).rem_euclid(1.0))
        })
        .collect();
    if phases.len() < MIN_INPUTS {
        return None;
    }
    let ks = arena_stats::ks_uniform(&phases)?;
    Some(InputPhase {
        n: ks.n as u64,
        frame_interval_ms,
        ks_d: ks.d,
        p: ks.p,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_browser::SendClass;

    fn rec(seq: u64, kind: RecordKind, t_ms: f64, event: &str) -> Record {
        Record {
            seq,
            kind,
            t_ms,
            size: 0,
            class: SendClass::Other,
            event: event.into(),
            trusted: true,
            target: 0,
            answers: None,
        }
    }

    /// Frames every 16.667 ms; one press per 10 frames at the given offsets into a frame.
    fn run(offsets: impl Iterator<Item = f64>) -> Vec<Record> {
        let p = 1000.0 / 60.0;
        let mut out = Vec::new();
        for (k, off) in offsets.enumerate() {
            let frame = k as f64 * 10.0 * p;
            out.push(rec(out.len() as u64, RecordKind::Paint, frame, "raf"));
            out.push(rec(
                out.len() as u64,
                RecordKind::Input,
                frame + 3.0 * p + off,
                "mousedown",
            ));
        }
        out
    }

    #[test]
    fn inputs_at_one_point_of_the_frame_fail_and_spread_ones_pass() {
        let events = vec!["mousedown".to_string()];
        let p = 1000.0 / 60.0;
        let stuck = input_phase(&run((0..100).map(|_| 1.5)), &events, p).unwrap();
        assert_eq!(stuck.n, 100);
        assert!(stuck.p < 1e-6, "{stuck:?}");
        let mut rng = arena_sys::rng::SplitMix64::new(3);
        let spread = input_phase(&run((0..100).map(|_| rng.unit() * p)), &events, p).unwrap();
        assert!(spread.p > 0.01, "{spread:?}");
        // Another event kind, an untrusted input, or too few inputs: nothing to judge.
        assert!(input_phase(&run((0..100).map(|_| 1.5)), &["keydown".into()], p).is_none());
        assert!(input_phase(&run((0..5).map(|_| 1.5)), &events, p).is_none());
        assert!(input_phase(&run((0..50).map(|_| 1.5)), &events, 0.0).is_none());
    }
}
