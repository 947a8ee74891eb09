//! A target gone silent: clicks in a row that got nothing back at all.
//!
//! An unanswered click is an ordinary result (the app chose not to answer it) as long as
//! the target still sends: a click counts as silent only when no WebSocket message and no
//! paint arrived since its press. `pacing.stall_clicks` silent clicks in a row end the
//! run (exit 3, `status target_stalled`); any click that heard something starts the count
//! again.

use std::time::{Instant, SystemTime};

use arena_browser::{Record, RecordKind};

/// The inputs that start a click: its press, or its key.
const PRESSES: [&str; 4] = ["pointerdown", "mousedown", "keydown", "touchstart"];

/// Whether the click whose records close `records` heard anything: a message received or
/// a paint at or after its press (the last trusted press among them). With no press
/// recorded, anything in `records` counts, so a click is never taken for silent on
/// records that cannot say.
pub(crate) fn heard(records: &[Record]) -> bool {
    let press = records
        .iter()
        .rev()
        .find(|r| r.kind == RecordKind::Input && r.trusted && PRESSES.contains(&r.event.as_str()))
        .map(|r| r.t_ms);
    records.iter().any(|r| {
        matches!(r.kind, RecordKind::WsRecv | RecordKind::Paint)
            && press.is_none_or(|t| r.t_ms >= t)
    })
}

/// Silent clicks in a row that end a run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stall {
    /// Silent clicks in a row.
    pub clicks: u32,
    /// The first of them (0-based) and when it was made.
    pub first: usize,
    pub since: Instant,
    pub since_wall: SystemTime,
}

/// Counts silent clicks in a row against the bound (`pacing.stall_clicks`; 0: never).
#[derive(Debug)]
pub(crate) struct StallWatch {
    bound: u32,
    silent: u32,
    first: Option<(usize, Instant, SystemTime)>,
}

impl StallWatch {
    pub fn new(bound: u32) -> Self {
        StallWatch {
            bound,
            silent: 0,
            first: None,
        }
    }

    /// Whether a click's records need judging: a complete click heard its answer.
    pub fn watching(&self) -> bool {
        self.bound > 0
    }

    /// Notes click `k`, made at `at` (`wall`): whether it heard anything. Returns the stall
    /// once `bound` clicks in a row heard nothing.
    pub fn note(&mut self, k: usize, at: (Instant, SystemTime), heard: bool) -> Option<Stall> {
        if heard || self.bound == 0 {
            self.silent = 0;
            self.first = None;
            return None;
        }
        self.silent += 1;
        let (first, since, since_wall) = *self.first.get_or_insert((k, at.0, at.1));
        (self.silent >= self.bound).then_some(Stall {
            clicks: self.silent,
            first,
            since,
            since_wall,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_browser::SendClass;

    fn rec(kind: RecordKind, t_ms: f64, event: &str) -> Record {
        Record {
            seq: 0,
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

    fn press(t: f64) -> Record {
        rec(RecordKind::Input, t, "mousedown")
    }

    fn release(t: f64) -> Record {
        rec(RecordKind::Input, t, "mouseup")
    }

    fn frame(t: f64) -> Record {
        rec(RecordKind::WsRecv, t, "binary")
    }

    fn paint(t: f64) -> Record {
        rec(RecordKind::Paint, t, "raf")
    }

    fn now() -> (Instant, SystemTime) {
        (Instant::now(), SystemTime::now())
    }

    #[test]
    fn a_click_hears_a_frame_or_a_paint_after_its_press_only() {
        // The last click's press at 100: what came before it was an earlier click's.
        let earlier = [press(0.0), frame(10.0), paint(12.0), release(50.0)];
        let silent: Vec<Record> = earlier
            .iter()
            .cloned()
            .chain([press(100.0), release(200.0)])
            .collect();
        assert!(!heard(&silent));
        for late in [frame(300.0), paint(300.0)] {
            let mut r = silent.clone();
            r.push(late);
            assert!(heard(&r));
        }
        // A key press starts a click too; an untrusted press does not.
        assert!(!heard(&[
            rec(RecordKind::Input, 5.0, "keydown"),
            release(6.0)
        ]));
        let mut forged = press(400.0);
        forged.trusted = false;
        assert!(heard(&[press(100.0), frame(300.0), forged]));
        // No press recorded: anything received counts, nothing received is silence.
        assert!(heard(&[frame(1.0)]));
        assert!(!heard(&[]));
    }

    #[test]
    fn silent_clicks_in_a_row_stall_at_the_bound() {
        let mut w = StallWatch::new(3);
        assert_eq!(w.note(0, now(), true), None);
        let at = now();
        assert_eq!(w.note(1, at, false), None);
        assert_eq!(w.note(2, now(), false), None);
        let s = w.note(3, now(), false).expect("three silent clicks stall");
        assert_eq!((s.clicks, s.first, s.since), (3, 1, at.0));
    }

    #[test]
    fn a_click_that_heard_a_frame_starts_the_count_again() {
        let mut w = StallWatch::new(3);
        for k in 0..2 {
            assert_eq!(w.note(k, now(), false), None);
        }
        assert_eq!(w.note(2, now(), true), None);
        assert_eq!(w.note(3, now(), false), None);
        assert_eq!(w.note(4, now(), false), None);
        let s = w.note(5, now(), false).expect("stall");
        assert_eq!((s.clicks, s.first), (3, 3));
    }

    #[test]
    fn unanswered_clicks_while_frames_flow_never_stall() {
        // Each click unanswered, but the target kept sending after each press.
        let mut w = StallWatch::new(2);
        for k in 0..10 {
            let t = 1000.0 * k as f64;
            let records = [
                press(t),
                release(t + 80.0),
                frame(t + 120.0),
                paint(t + 130.0),
            ];
            assert_eq!(w.note(k, now(), heard(&records)), None, "click {k}");
        }
    }

    #[test]
    fn a_bound_of_zero_never_stalls() {
        let mut w = StallWatch::new(0);
        assert!(!w.watching());
        assert!((0..100).all(|k| w.note(k, now(), false).is_none()));
    }
}
