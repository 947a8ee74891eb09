//! The cold-start model: one round of `arena-perf startup` (a fresh browser profile and a
//! fresh target, from navigation to the board on screen) as the times its milestones were
//! reached. Measured by `arena-pilot`'s `startup`, tabled by `arena-compare`'s.

use serde::{Deserialize, Serialize};

/// A named point of a cold start, in the order a page reaches them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Milestone {
    /// The page's WebSocket opened: the in-process fixture's upgrade of it, else its
    /// handshake as Chromium's network layer saw it (CDP), else the page's `open` event,
    /// whichever is first.
    SocketOpen,
    /// The first message arrived on it.
    FirstFrame,
    /// The messages received reached the round's first-bytes threshold.
    FirstBytes,
    /// The board's last byte arrived: the receipt that reached the board-bytes threshold,
    /// or the last receipt before the board region painted.
    BoardReceived,
    /// The board on screen: the first painted frame after its bytes, or the first frame
    /// whose board region is no longer blank.
    BoardPaint,
}

impl Milestone {
    pub const ALL: [Milestone; 5] = [
        Milestone::SocketOpen,
        Milestone::FirstFrame,
        Milestone::FirstBytes,
        Milestone::BoardReceived,
        Milestone::BoardPaint,
    ];

    /// The JSON key.
    pub fn key(self) -> &'static str {
        match self {
            Milestone::SocketOpen => "socket_open",
            Milestone::FirstFrame => "first_frame",
            Milestone::FirstBytes => "first_bytes",
            Milestone::BoardReceived => "board_received",
            Milestone::BoardPaint => "board_paint",
        }
    }

    /// The words a table uses.
    pub fn label(self) -> &'static str {
        match self {
            Milestone::SocketOpen => "socket open",
            Milestone::FirstFrame => "first frame",
            Milestone::FirstBytes => "first bytes",
            Milestone::BoardReceived => "board bytes received",
            Milestone::BoardPaint => "board on screen",
        }
    }

    fn index(self) -> usize {
        Milestone::ALL.iter().position(|m| *m == self).unwrap_or(0)
    }
}

/// How a round ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundStatus {
    /// Every milestone reached.
    Complete,
    /// The timeout passed first: the milestones not reached are counted as such.
    TimedOut,
    /// Ctrl-C (or SIGTERM) ended it; what was reached is kept.
    Interrupted,
    /// The browser or the target failed.
    Failed,
}

/// One cold round of one arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartupRound {
    pub arm: String,
    /// From 1.
    pub round: u32,
    /// Page-clock ms from navigation start (`performance.now()`), per milestone in
    /// [`Milestone::ALL`] order; `None`: not reached.
    pub at_ms: [Option<f64>; 5],
    /// Payload bytes of the messages from socket open to the board's last receipt.
    pub board_bytes: Option<u64>,
    /// Messages and payload bytes received in the round.
    pub frames: u64,
    pub bytes: u64,
    /// How long the round waited for its milestones, ms.
    pub timeout_ms: u64,
    /// The in-process fixture only: when its board left (the `startup_ms` hold over and
    /// the board built), page-clock ms from navigation.
    pub board_sent_ms: Option<f64>,
    pub status: RoundStatus,
    /// Why it ended early, in words.
    pub message: Option<String>,
    /// CPU by process over the round (phase `cold start`): the in-process fixture's
    /// threads, Chromium, what `--sample` named; `None` when the sampler did not start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<crate::cpu::RunCpu>,
}

impl StartupRound {
    /// When `m` was reached, ms from navigation start.
    pub fn at(&self, m: Milestone) -> Option<f64> {
        self.at_ms[m.index()]
    }

    /// When `m` was reached, ms after the socket opened.
    pub fn after_open(&self, m: Milestone) -> Option<f64> {
        Some(self.at(m)? - self.at(Milestone::SocketOpen)?)
    }

    /// The page's own handling of the board: its last receipt to its paint, ms.
    pub fn board_decode_ms(&self) -> Option<f64> {
        Some(self.at(Milestone::BoardPaint)? - self.at(Milestone::BoardReceived)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_after_open_and_decode_need_both_ends() {
        let mut r = StartupRound {
            arm: "a".into(),
            round: 1,
            at_ms: [
                Some(100.0),
                Some(950.0),
                Some(960.0),
                Some(960.0),
                Some(1010.0),
            ],
            board_bytes: Some(1),
            frames: 1,
            bytes: 1,
            timeout_ms: 5000,
            board_sent_ms: None,
            status: RoundStatus::Complete,
            message: None,
            cpu: None,
        };
        assert_eq!(r.after_open(Milestone::BoardPaint), Some(910.0));
        assert_eq!(r.board_decode_ms(), Some(50.0));
        r.at_ms[0] = None;
        assert_eq!(r.after_open(Milestone::BoardPaint), None);
        assert_eq!(r.at(Milestone::FirstFrame), Some(950.0));
        r.at_ms[4] = None;
        assert_eq!(r.board_decode_ms(), None);
    }
}
