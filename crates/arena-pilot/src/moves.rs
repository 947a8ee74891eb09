//! Pure accounting of a gesture's moves: records in, one row per move and one per frame
//! out. A move is the page's trusted `mousemove` (Chromium may fold several dispatched
//! moves into one event before the page sees it: those are counted apart, as folded).
//!
//! - **Carried**: an input send carries the newest move before it; the older moves since
//!   the previous send were *coalesced* into it (the app's flush timer, made visible as
//!   `carried` and the age of the oldest move in the send). Every move's input-to-socket
//!   runs from when the page had it to the send that carried it or its newer neighbour;
//!   the browser's hold before that (Chromium hands a `mousemove` over at its next
//!   animation frame, its `timeStamp` being the OS's) is a figure of its own.
//! - **Answered**: a carried move whose point the app drew: the page oracle's first frame
//!   that changed the pixels at its point (`crates/arena-browser/assets/recorder.js`, moves
//!   judged alone). A carried move with no such frame is *unanswered*.
//! - **Frames behind**: at each painted frame, the newest move drawn by then against the
//!   moves the pointer had made, in moves and ms.

use arena_browser::{Record, RecordKind, SendClass};

use crate::gesture::{GestureKind, GestureRecords};

/// What became of one move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveOutcome {
    Answered,
    Unanswered,
    /// Folded into a later move's send: never drawn at its own point.
    Coalesced,
}

impl MoveOutcome {
    pub fn name(self) -> &'static str {
        match self {
            MoveOutcome::Answered => "answered",
            MoveOutcome::Unanswered => "unanswered",
            MoveOutcome::Coalesced => "coalesced",
        }
    }
}

/// One move's row (page clock, ms).
#[derive(Debug, Clone, PartialEq)]
pub struct MoveRow {
    pub index: usize,
    /// The event's `timeStamp`.
    pub t_input: f64,
    /// When the page had it (the recorder's listener ran); `None` where not watched.
    pub t_delivered: Option<f64>,
    /// The send that carried it (its own or a newer move's); `None`: no send followed.
    pub t_send: Option<f64>,
    /// Moves that send carried (this one among them).
    pub carried: u32,
    /// Age of the oldest move in that send at the send, ms.
    pub oldest_age_ms: Option<f64>,
    pub t_answer: Option<f64>,
    pub outcome: MoveOutcome,
}

impl MoveRow {
    /// From when the page had the move (its timeStamp where that is unknown) to the send.
    pub fn input_to_socket(&self) -> Option<f64> {
        self.t_send
            .map(|s| s - self.t_delivered.unwrap_or(self.t_input))
    }
    /// How long the browser held the move before the page had it.
    pub fn browser_delivery(&self) -> Option<f64> {
        self.t_delivered.map(|d| d - self.t_input)
    }
    pub fn move_to_pixels(&self) -> Option<f64> {
        self.t_answer.map(|a| a - self.t_input)
    }
}

/// At one painted frame: how far the drawn state trails the pointer.
#[derive(Debug, Clone, PartialEq)]
pub struct BehindRow {
    pub t_frame: f64,
    /// Moves the pointer made after the newest move drawn by this frame.
    pub moves: u32,
    /// The frame's time minus the input time of the newest move drawn, ms.
    pub ms: f64,
}

/// Counts that add up: `dispatched = folded + unseen + answered + unanswered + coalesced`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MoveCounts {
    pub dispatched: u64,
    /// Folded by the browser into a later move before the page saw it, as the page reports
    /// (each trusted `pointermove`'s coalesced events beyond itself).
    pub folded: u64,
    /// Dispatched, and neither seen by the recorder nor reported folded: lost records, or
    /// moves the page never had.
    pub unseen: u64,
    pub answered: u64,
    pub unanswered: u64,
    pub coalesced: u64,
    pub sends: u64,
}

/// The moves the browser folded into others, as the page reported them: each trusted
/// `pointermove` carries its coalesced events, itself included, in `size`.
fn folded_by_browser(recs: &[&Record]) -> u64 {
    recs.iter()
        .filter(|r| r.kind == RecordKind::InputCoalesced && r.trusted && r.event == "pointermove")
        .map(|r| u64::from(r.size.saturating_sub(1)))
        .sum()
}

/// One gesture accounted for.
#[derive(Debug, Clone)]
pub struct GestureLoops {
    pub gesture: usize,
    pub kind: GestureKind,
    pub moves: Vec<MoveRow>,
    pub behind: Vec<BehindRow>,
    pub counts: MoveCounts,
}

/// Accounts for gesture number `gesture` from its records (one drain, any order) and its
/// moves' delivery times.
pub fn account(gesture: usize, made: &GestureRecords, records: &[Record]) -> GestureLoops {
    let (kind, dispatched) = (made.kind, made.dispatched);
    let delivered = |seq: u64| made.delivered.iter().find(|d| d.0 == seq).map(|d| d.1);
    let mut recs: Vec<&Record> = records.iter().collect();
    recs.sort_by_key(|r| r.seq);
    let moves: Vec<&Record> = recs
        .iter()
        .copied()
        .filter(|r| r.kind == RecordKind::InputCoalesced && r.trusted && r.event == "mousemove")
        .collect();
    let sends: Vec<(u64, f64)> = recs
        .iter()
        .filter(|r| r.kind == RecordKind::WsSend && r.class == SendClass::Input)
        .map(|r| (r.seq, r.t_ms))
        .collect();
    let answer_of = |seq: u64| {
        recs.iter()
            .find(|r| {
                r.kind == RecordKind::Answer
                    && r.answers == Some(seq)
                    && r.class == SendClass::Input
            })
            .map(|r| r.t_ms)
    };
    let mut rows = carry(&moves, &sends, answer_of);
    for r in &mut rows {
        r.t_delivered = delivered(moves[r.index].seq);
    }
    let paints: Vec<f64> = recs
        .iter()
        .filter(|r| r.kind == RecordKind::Paint)
        .map(|r| r.t_ms)
        .collect();
    let behind = frames_behind(&rows, &paints);
    let count = |o| rows.iter().filter(|m| m.outcome == o).count() as u64;
    let missing = dispatched.saturating_sub(rows.len() as u64);
    // More folded than missing would count a move twice: the page's own report is capped.
    let folded = folded_by_browser(&recs).min(missing);
    let counts = MoveCounts {
        dispatched,
        folded,
        unseen: missing - folded,
        answered: count(MoveOutcome::Answered),
        unanswered: count(MoveOutcome::Unanswered),
        coalesced: count(MoveOutcome::Coalesced),
        sends: rows
            .iter()
            .filter(|m| m.outcome != MoveOutcome::Coalesced && m.t_send.is_some())
            .count() as u64,
    };
    GestureLoops {
        gesture,
        kind,
        moves: rows,
        behind,
        counts,
    }
}

/// Groups the moves by the first input send recorded after each, the newest of a group
/// being the one carried. Record order, not time: a move's `timeStamp` is when the OS saw
/// it, and Chromium hands it to the page up to a frame later, so a send stamped after a
/// move can have gone before the page had that move.
fn carry(
    moves: &[&Record],
    sends: &[(u64, f64)],
    answer_of: impl Fn(u64) -> Option<f64>,
) -> Vec<MoveRow> {
    let send_of = |m: &Record| sends.iter().find(|&&(seq, _)| seq > m.seq).map(|&(_, t)| t);
    let mut rows: Vec<MoveRow> = Vec::with_capacity(moves.len());
    let mut k = 0;
    while k < moves.len() {
        let t_send = send_of(moves[k]);
        let mut end = k + 1;
        while end < moves.len() && send_of(moves[end]) == t_send && t_send.is_some() {
            end += 1;
        }
        let oldest = t_send.map(|s| s - moves[k].t_ms);
        for (i, m) in moves.iter().enumerate().take(end).skip(k) {
            let newest = i + 1 == end;
            let t_answer = if newest && t_send.is_some() {
                answer_of(m.seq)
            } else {
                None
            };
            let outcome = match (t_send, newest, t_answer) {
                (None, _, _) | (Some(_), true, None) => MoveOutcome::Unanswered,
                (Some(_), false, _) => MoveOutcome::Coalesced,
                (Some(_), true, Some(_)) => MoveOutcome::Answered,
            };
            rows.push(MoveRow {
                index: i,
                t_input: m.t_ms,
                t_delivered: None,
                t_send,
                carried: (end - k) as u32,
                oldest_age_ms: oldest,
                t_answer,
                outcome,
            });
        }
        k = end;
    }
    // Moves no send followed are each their own group above, carried by nothing: the
    // pointer's last moves that the app never sent read unanswered, not coalesced.
    rows
}

/// At each paint after the first answer: the newest move answered by then, and the moves
/// made since.
fn frames_behind(rows: &[MoveRow], paints: &[f64]) -> Vec<BehindRow> {
    let mut out = Vec::new();
    for &t in paints {
        let drawn = rows
            .iter()
            .filter(|m| m.t_answer.is_some_and(|a| a <= t))
            .max_by_key(|m| m.index);
        let Some(d) = drawn else { continue };
        let made = rows.iter().filter(|m| m.t_input <= t).count();
        out.push(BehindRow {
            t_frame: t,
            moves: made.saturating_sub(d.index + 1) as u32,
            ms: t - d.t_input,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(seq: u64, kind: RecordKind, t: f64) -> Record {
        Record {
            seq,
            kind,
            t_ms: t,
            size: 0,
            class: SendClass::Other,
            event: if kind == RecordKind::InputCoalesced {
                "mousemove".into()
            } else {
                String::new()
            },
            trusted: true,
            target: 0,
            answers: None,
        }
    }
    fn send(seq: u64, t: f64) -> Record {
        Record {
            class: SendClass::Input,
            ..rec(seq, RecordKind::WsSend, t)
        }
    }
    fn answer(seq: u64, t: f64, of: u64) -> Record {
        Record {
            class: SendClass::Input,
            answers: Some(of),
            ..rec(seq, RecordKind::Answer, t)
        }
    }

    #[test]
    fn every_move_is_answered_unanswered_or_coalesced_and_the_counts_add_up() {
        use RecordKind::{InputCoalesced as M, Paint};
        // Moves at 0, 8, 16 (one send at 20 carries 16), 24 (send at 40, answered at 70),
        // 50 (no send: the pointer stopped before the flush). An ack is not a move's send.
        let r = vec![
            rec(0, M, 0.0),
            rec(1, M, 8.0),
            rec(2, M, 16.0),
            send(3, 20.0),
            rec(4, M, 24.0),
            Record {
                class: SendClass::Ack,
                ..rec(5, RecordKind::WsSend, 30.0)
            },
            send(6, 40.0),
            rec(7, M, 50.0),
            answer(8, 60.0, 1), // a coalesced move's pixels changed: still coalesced
            rec(9, Paint, 60.0),
            answer(10, 70.0, 4),
            rec(11, Paint, 70.0),
            // The page reports one move folded into this pointermove (two events in one).
            Record {
                event: "pointermove".into(),
                size: 2,
                ..rec(12, M, 8.0)
            },
        ];
        let made = GestureRecords {
            kind: GestureKind::Drag,
            dispatched: 7,
            records: Vec::new(),
            // The page had move 1 at 12 (the browser held it 4 ms); the rest unknown.
            delivered: vec![(1, 12.0)],
        };
        let g = account(0, &made, &r);
        let o: Vec<_> = g.moves.iter().map(|m| m.outcome).collect();
        use MoveOutcome::*;
        assert_eq!(o, [Coalesced, Coalesced, Unanswered, Answered, Unanswered]);
        let c = g.counts;
        // Seven dispatched, five seen: one folded as the page says, one the page never
        // showed the recorder.
        assert_eq!(
            (
                c.folded,
                c.unseen,
                c.answered,
                c.unanswered,
                c.coalesced,
                c.sends
            ),
            (1, 1, 1, 2, 2, 2)
        );
        assert_eq!(
            c.folded + c.unseen + c.answered + c.unanswered + c.coalesced,
            c.dispatched
        );
        // The first send carried three moves, the oldest 20 ms old; each move's
        // input-to-socket ends at it.
        assert_eq!(g.moves[0].carried, 3);
        assert_eq!(g.moves[2].oldest_age_ms, Some(20.0));
        assert_eq!(g.moves[1].input_to_socket(), Some(8.0));
        assert_eq!(g.moves[1].browser_delivery(), Some(4.0));
        assert_eq!(g.moves[0].input_to_socket(), Some(20.0));
        assert_eq!(g.moves[3].input_to_socket(), Some(16.0));
        assert_eq!(g.moves[3].move_to_pixels(), Some(46.0));
        assert_eq!(g.moves[4].t_send, None);
        // Frames behind: none before the first answer; at 70 the drawn move (24) trails
        // the pointer by one move (50) and 46 ms.
        assert_eq!(
            g.behind,
            [BehindRow {
                t_frame: 70.0,
                moves: 1,
                ms: 46.0
            }]
        );
    }

    #[test]
    fn folded_moves_come_from_the_page_and_never_count_a_move_twice() {
        let made = |dispatched| GestureRecords {
            kind: GestureKind::Hover,
            dispatched,
            records: Vec::new(),
            delivered: Vec::new(),
        };
        let pointer = |seq, folded_into| Record {
            event: "pointermove".into(),
            size: folded_into,
            ..rec(seq, RecordKind::InputCoalesced, seq as f64)
        };
        // Two moves seen, three events each on the page's word: four folded of six.
        let r = vec![
            rec(0, RecordKind::InputCoalesced, 0.0),
            pointer(1, 3),
            rec(2, RecordKind::InputCoalesced, 2.0),
            pointer(3, 3),
        ];
        let c = account(0, &made(6), &r).counts;
        assert_eq!((c.folded, c.unseen), (4, 0));
        // Ten dispatched: the four the page never reported are unseen, not folded.
        let c = account(0, &made(10), &r).counts;
        assert_eq!((c.folded, c.unseen), (4, 4));
        // Five dispatched: the page's report is capped at the three not seen.
        let c = account(0, &made(5), &r).counts;
        assert_eq!((c.folded, c.unseen), (3, 0));
    }
}
