//! A target gone silent: clicks in a row that got nothing back from it.
//!
//! An unanswered click is an ordinary result (the app chose not to answer it) as long as
//! the target still sends: a click counts as silent only when no WebSocket message from
//! the target's socket arrived since its press. Paints are no sign of the target's life
//! on a page whose sockets the recorder sees (a client that animates on its own paints
//! with its server dead); only where it sees none are they the one sign there is.
//! `pacing.stall_clicks` silent clicks in a row end the run (exit 3, `status
//! target_stalled`); any click that heard something starts the count again.

use std::collections::BTreeSet;
use std::time::{Instant, SystemTime};

use arena_browser::{Record, RecordKind, SendClass};

/// The inputs that start a click: its press, or its key.
const PRESSES: [&str; 4] = ["pointerdown", "mousedown", "keydown", "touchstart"];

/// Whether the click whose records are `run[from..]` heard the target: a message received
/// at or after its press (the last trusted press among them) on a socket the run's inputs
/// were sent on (any socket before an input was sent). On a page with no socket record in
/// `run`, a paint counts instead. With no press recorded, anything in the click's records
/// counts, so a click is never taken for silent on records that cannot say.
pub(crate) fn heard(run: &[Record], from: usize) -> bool {
    let click = run.get(from..).unwrap_or_default();
    let press = click
        .iter()
        .rev()
        .find(|r| r.kind == RecordKind::Input && r.trusted && PRESSES.contains(&r.event.as_str()))
        .map(|r| r.t_ms);
    let after = |r: &Record| press.is_none_or(|t| r.t_ms >= t);
    let socket = |r: &Record| matches!(r.kind, RecordKind::WsRecv | RecordKind::WsSend);
    if !run.iter().any(socket) {
        return click
            .iter()
            .any(|r| r.kind == RecordKind::Paint && after(r));
    }
    let targets: BTreeSet<u16> = run
        .iter()
        .filter(|r| r.kind == RecordKind::WsSend && r.class == SendClass::Input)
        .map(|r| r.target)
        .collect();
    click.iter().any(|r| {
        r.kind == RecordKind::WsRecv
            && after(r)
            && (targets.is_empty() || targets.contains(&r.target))
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

    fn on(mut r: Record, socket: u16) -> Record {
        r.target = socket;
        r
    }

    fn input_send(t: f64, socket: u16) -> Record {
        Record {
            class: SendClass::Input,
            ..on(rec(RecordKind::WsSend, t, "binary"), socket)
        }
    }

    #[test]
    fn a_click_hears_a_frame_after_its_press_only() {
        // The last click's press at 100: what came before it was an earlier click's.
        let earlier = [press(0.0), frame(10.0), paint(12.0), release(50.0)];
        let silent: Vec<Record> = earlier
            .iter()
            .cloned()
            .chain([press(100.0), release(200.0)])
            .collect();
        assert!(!heard(&silent, 0));
        let mut r = silent.clone();
        r.push(frame(300.0));
        assert!(heard(&r, 0));
        // A key press starts a click too; an untrusted press does not.
        assert!(!heard(
            &[rec(RecordKind::Input, 5.0, "keydown"), release(6.0)],
            0
        ));
        let mut forged = press(400.0);
        forged.trusted = false;
        assert!(heard(&[press(100.0), frame(300.0), forged], 0));
        // No press recorded: anything received counts, nothing received is silence.
        assert!(heard(&[frame(1.0)], 0));
        assert!(!heard(&[], 0));
    }

    #[test]
    fn paints_and_other_sockets_are_no_sign_of_the_targets_life() {
        // Inputs go out on socket 2; a click's records start at index 2.
        let before = [input_send(1.0, 2), on(frame(5.0), 2)];
        let click = |after: Vec<Record>| -> Vec<Record> {
            let mut r = before.to_vec();
            r.extend([press(100.0), input_send(101.0, 2), release(180.0)]);
            r.extend(after);
            r
        };
        // A client animating on its own: paints, and a chat socket's message. Silent.
        let animating = click(vec![paint(120.0), paint(136.0), on(frame(150.0), 5)]);
        assert!(!heard(&animating, 2));
        // The target's own socket answers: heard.
        assert!(heard(&click(vec![on(frame(150.0), 2)]), 2));
        // A page whose sockets the recorder cannot see: a paint is the only sign there is.
        assert!(heard(&[press(100.0), paint(120.0)], 0));
        assert!(!heard(&[paint(50.0), press(100.0)], 0));
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
            assert_eq!(w.note(k, now(), heard(&records, 0)), None, "click {k}");
        }
    }

    #[test]
    fn a_bound_of_zero_never_stalls() {
        let mut w = StallWatch::new(0);
        assert!(!w.watching());
        assert!((0..100).all(|k| w.note(k, now(), false).is_none()));
    }
}
