//! How a loop ends: the answer oracles, and the rule that one answer closes one loop.
//!
//! A loop is closed by its *answer*, not by the first message after its send:
//!
//! - [`AnswerRule::Reply`]: the first receipt after the loop's input send (of at least
//!   `min_bytes`), then the first draw on the target canvas after it and the animation
//!   frame after that draw. Judged here, from the records.
//! - [`AnswerRule::Frame`]: the page's oracle (pixels around the input point, or a page
//!   predicate) wrote an `Answer` record naming the input at the painted frame where the
//!   condition first held. The draw is the last draw on the target before that frame, and
//!   the receipt the last one between the send and that draw: the message that carried
//!   the change, which is not always the first one (a blinking cursor's frame is not).
//!   A loop with no receipt there is still answered (the page changed on its own, or its
//!   socket is not seen); one whose receipt already closed an earlier loop is claimed.
//!
//! Either way a receipt or an answer frame belongs to at most one input: a loop whose only
//! candidate already closed an earlier loop is [`Outcome::Claimed`], counted apart.

use std::collections::HashSet;

use arena_browser::{Record, RecordKind, SendClass};
use arena_run::Outcome;

/// The rule a run's loops are closed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerRule {
    /// The first reply after the send of at least this many bytes.
    Reply { min_bytes: u32 },
    /// The page oracle's `Answer` records (pixels or js).
    Frame,
}

/// Where one loop's answer chain landed (indexes into the ordered records).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Chain {
    pub outcome: Outcome,
    pub recv: Option<usize>,
    pub draw: Option<usize>,
    pub paint: Option<usize>,
    /// The page time of the answer frame (frame oracles only).
    pub t_answer: Option<f64>,
}

/// What the answer search needs about one loop.
pub struct LoopInput {
    /// Index of the input record.
    pub input: usize,
    /// Index of its input-classified send, if any.
    pub send: Option<usize>,
    /// Page time past which nothing answers it.
    pub deadline: f64,
}

/// Searches answers loop by loop, in input order, remembering which receipts and which
/// answer frames are taken.
pub struct Attribution<'a> {
    recs: &'a [&'a Record],
    rule: AnswerRule,
    draw_target: Option<u16>,
    taken_recv: HashSet<usize>,
    /// Frame answers may share a receipt (`PairConfig::shared_receipts`).
    pub shared_receipts: bool,
}

impl<'a> Attribution<'a> {
    pub fn new(recs: &'a [&'a Record], rule: AnswerRule, draw_target: Option<u16>) -> Self {
        Attribution {
            recs,
            rule,
            draw_target,
            taken_recv: HashSet::new(),
            shared_receipts: false,
        }
    }

    fn is_target_draw(&self, j: usize) -> bool {
        let r = self.recs[j];
        r.kind == RecordKind::Draw && self.draw_target.is_none_or(|t| r.target == t)
    }

    /// First index in `from..` inside the deadline matching `f`.
    fn first(&self, from: usize, deadline: f64, f: impl Fn(&Record) -> bool) -> Option<usize> {
        (from..self.recs.len())
            .take_while(|&j| self.recs[j].t_ms <= deadline)
            .find(|&j| f(self.recs[j]))
    }

    /// The answer chain of one loop; the receipt it uses is taken for later loops.
    pub fn chain(&mut self, l: &LoopInput) -> Chain {
        match self.rule {
            AnswerRule::Reply { min_bytes } => self.reply_chain(l, min_bytes),
            AnswerRule::Frame => self.frame_chain(l),
        }
    }

    fn reply_chain(&mut self, l: &LoopInput, min_bytes: u32) -> Chain {
        let Some(s) = l.send else {
            return Chain::default();
        };
        let cand = self.first(s + 1, l.deadline, |r| {
            r.kind == RecordKind::WsRecv && r.size >= min_bytes
        });
        let Some(recv) = cand else {
            return Chain::default();
        };
        if !self.taken_recv.insert(recv) {
            return Chain {
                outcome: Outcome::Claimed,
                ..Chain::default()
            };
        }
        let draw = (recv + 1..self.recs.len())
            .take_while(|&j| self.recs[j].t_ms <= l.deadline)
            .find(|&j| self.is_target_draw(j));
        let paint =
            draw.and_then(|d| self.first(d + 1, l.deadline, |r| r.kind == RecordKind::Paint));
        Chain {
            outcome: Outcome::Answered,
            recv: Some(recv),
            draw,
            paint,
            t_answer: None,
        }
    }

    fn frame_chain(&mut self, l: &LoopInput) -> Chain {
        let seq = self.recs[l.input].seq;
        let verdicts: Vec<usize> = (l.input + 1..self.recs.len())
            .take_while(|&j| self.recs[j].t_ms <= l.deadline)
            .filter(|&j| {
                let r = self.recs[j];
                r.kind == RecordKind::Answer && r.answers == Some(seq)
            })
            .collect();
        let own = verdicts
            .iter()
            .copied()
            .find(|&j| self.recs[j].class == SendClass::Input);
        let Some(a) = own else {
            let claimed = verdicts
                .iter()
                .any(|&j| self.recs[j].class == SendClass::Ack);
            return Chain {
                outcome: if claimed {
                    Outcome::Claimed
                } else {
                    Outcome::Unanswered
                },
                ..Chain::default()
            };
        };
        // The change was drawn by the last draw on the target before the answer frame,
        // and carried by the last receipt between the send and that draw.
        let draw = (l.input + 1..a).rev().find(|&j| self.is_target_draw(j));
        let recv = match (l.send, draw) {
            (Some(s), Some(d)) => (s + 1..d)
                .rev()
                .find(|&j| self.recs[j].kind == RecordKind::WsRecv),
            _ => None,
        };
        // A change carried by a receipt that already closed an earlier loop is that
        // loop's answer: this input's only candidate belonged to another.
        if let Some(j) = recv.filter(|_| !self.shared_receipts) {
            if !self.taken_recv.insert(j) {
                return Chain {
                    outcome: Outcome::Claimed,
                    ..Chain::default()
                };
            }
        }
        let paint = draw
            .and_then(|d| (d + 1..=a).find(|&j| self.recs[j].kind == RecordKind::Paint))
            .or(Some(a));
        Chain {
            outcome: Outcome::Answered,
            recv,
            draw,
            paint,
            t_answer: Some(self.recs[a].t_ms),
        }
    }
}

/// Assigns input-classified sends to loop inputs, each send to at most one input.
///
/// With page-hook sockets the page saw input and send in one thread's order, so a send
/// belongs to the input before it and never past the next input. Sockets seen through CDP
/// (a Worker's) are stamped by another process: a press's send was measured landing
/// 2.8 ms after the next DOM event (a release 2.5 ms behind the press), so there a send may
/// land up to `CDP_SEND_SLACK_MS` past the next input and goes to the earliest input still
/// without one.
pub fn assign_sends(
    recs: &[&Record],
    inputs: &[usize],
    window_ms: f64,
    cdp: bool,
) -> Vec<Option<usize>> {
    let is_input_send =
        |j: usize| recs[j].kind == RecordKind::WsSend && recs[j].class == SendClass::Input;
    let mut used = HashSet::new();
    let mut out = Vec::with_capacity(inputs.len());
    for (n, &ii) in inputs.iter().enumerate() {
        let deadline = recs[ii].t_ms + window_ms;
        let send = if cdp {
            let bound_t = inputs
                .get(n + 1)
                .map(|&nx| recs[nx].t_ms + CDP_SEND_SLACK_MS)
                .unwrap_or(f64::INFINITY)
                .min(deadline);
            (ii + 1..recs.len())
                .take_while(|&j| recs[j].t_ms <= bound_t)
                .find(|&j| is_input_send(j) && !used.contains(&j))
        } else {
            let bound = inputs.get(n + 1).copied().unwrap_or(recs.len());
            (ii + 1..bound).find(|&j| is_input_send(j) && recs[j].t_ms <= deadline)
        };
        if let Some(s) = send {
            used.insert(s);
        }
        out.push(send);
    }
    out
}

/// How far past the next input a CDP-stamped send may land and still belong to the input
/// before it, ms (ten times the lag measured between DOM event and CDP frame event).
pub const CDP_SEND_SLACK_MS: f64 = 30.0;
