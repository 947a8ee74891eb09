//! Pairing raw recorder records into loops (the loop model):
//!
//! ```text
//! input (discrete, trusted)                        t_input
//!   -> its INPUT-classified send                   t_send   inputToSocket = t_send - t_input
//!   -> the receipt that carried its answer         t_recv   sendToRecv    = t_recv - t_send
//!   -> the draw on the target canvas               t_draw   recvToDraw    = t_draw - t_recv
//!   -> the animation frame that painted it         t_paint  inputToPaint  = t_paint - t_input
//!   -> the frame the answer oracle accepted        t_answer inputToPixels = t_answer - t_input
//! ```
//!
//! What counts as the answer, and the rule that one answer closes one loop, are in
//! `answer.rs`. Pure: records in, loops and accounting out, so every trap the field notes
//! describe is a unit test on a synthetic stream. Order is by `seq` (the recorder's write
//! order), which is the order the page observed things in; times are only subtracted.

use std::collections::{BTreeMap, HashSet};

use arena_browser::{Record, RecordKind, SendClass};
use arena_run::{Loop, Outcome, RunSummary, Warning};

use super::answer::{assign_sends, AnswerRule, Attribution, Chain, LoopInput};

/// What pairing needs to know beyond the records.
#[derive(Debug, Clone)]
pub struct PairConfig {
    /// Arm name written into every loop.
    pub arm: String,
    /// DOM event types that start a loop (default mousedown, mouseup, keydown).
    pub loop_events: Vec<String>,
    /// A loop whose first receive does not arrive within this many ms of its input is
    /// unanswered; draws and paints are also looked for only inside it.
    pub window_ms: f64,
    /// The first this many loops of the page are cold (its first interaction).
    pub cold_loops: usize,
    /// Label per loop, in input order (from the click generator); missing ones get
    /// `default_label`.
    pub labels: Vec<String>,
    pub default_label: String,
    /// Records with a smaller seq predate the clear on attach.
    pub cleared_at_seq: u64,
    /// Records the page's ring buffer overwrote before a drain (sum over drains).
    pub dropped: u64,
    /// When set, only draws on this canvas index count as the loop's draw.
    pub draw_target: Option<u16>,
    /// WebSocket records came from CDP: they have their own seq space and a clock mapped
    /// onto the page's, so records are ordered by time, and seq checks (stale, holes,
    /// duplicates) apply to each seq space apart.
    pub cdp_sockets: bool,
    /// What closes a loop (`answer.rs`).
    pub answer: AnswerRule,
    /// Under a frame oracle, one receipt may carry the answers of several loops: typing,
    /// where each key watches its own glyph's region and one frame can show several
    /// glyphs. Off, a receipt closes one loop (the causality rule).
    pub shared_receipts: bool,
}

impl PairConfig {
    pub fn new(arm: &str) -> Self {
        PairConfig {
            arm: arm.to_string(),
            loop_events: vec!["mousedown".into(), "mouseup".into(), "keydown".into()],
            window_ms: 2000.0,
            cold_loops: 2,
            labels: Vec::new(),
            default_label: String::new(),
            cleared_at_seq: 0,
            dropped: 0,
            draw_target: None,
            cdp_sockets: false,
            answer: AnswerRule::Reply { min_bytes: 0 },
            shared_receipts: false,
        }
    }
}

/// Everything pairing counted besides the loops; the run summary and warnings come from
/// here.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PairStats {
    /// The run summary's traffic and record counts, counted here into its own fields
    /// (`records`, `stale_records`, `dropped_records`, `bytes_received`, `sends_*`,
    /// `coalesced_inputs`, `invariant_violations`): `write::summarize` completes this
    /// summary rather than copying them. `records` is after removing stale and duplicate
    /// records; `dropped_records` is what the drain reports overwritten in the ring
    /// buffer or what is missing from the seq sequence, whichever is larger.
    pub summary: RunSummary,
    pub duplicates: u64,
    pub untrusted_inputs: u64,
    /// inputToSocket of coalesced input that reached an input-classified send.
    pub coalesced_input_to_socket: Vec<f64>,
    /// Discrete inputs with no input-classified send before the next one.
    pub inputs_without_send: u64,
    /// First loop index where the invariant failed, for the warning text.
    pub first_violation: Option<u64>,
    /// Loops whose only candidate answer already closed an earlier loop.
    pub claimed: u64,
    /// Answered loops with no draw on the target canvas before their answer.
    pub answered_without_draw: u64,
    /// Loops the page oracle left unanswered although a reply after their send drew on
    /// the target canvas before the next input: the change was drawn where nobody looked.
    pub unanswered_drawn: u64,
    /// Inputs the page oracle could not judge, by reason (`unreadable`, `js_error`, ...).
    pub unjudged: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Default)]
pub struct Paired {
    pub loops: Vec<Loop>,
    pub stats: PairStats,
    pub warnings: Vec<Warning>,
}

/// Pairs `records` (any order; several drains concatenated) into loops.
pub fn pair(records: &[Record], cfg: &PairConfig) -> Paired {
    let mut stats = PairStats::default();
    let recs = clean(records, cfg, &mut stats);
    count_traffic(&recs, &mut stats);
    let inputs = loop_inputs(&recs, cfg, &mut stats);
    let sends = assign_sends(&recs, &inputs, cfg.window_ms, cfg.cdp_sockets);
    let mut attribution = Attribution::new(&recs, cfg.answer, cfg.draw_target);
    attribution.shared_receipts = cfg.shared_receipts;
    let mut loops = Vec::with_capacity(inputs.len());
    for (n, (&input, &send)) in inputs.iter().zip(&sends).enumerate() {
        let deadline = recs[input].t_ms + cfg.window_ms;
        if send.is_none() {
            stats.inputs_without_send += 1;
        }
        let chain = attribution.chain(&LoopInput {
            input,
            send,
            deadline,
        });
        match chain.outcome {
            Outcome::Claimed => stats.claimed += 1,
            Outcome::Answered if chain.draw.is_none() => stats.answered_without_draw += 1,
            Outcome::Unanswered if cfg.answer == AnswerRule::Frame => {
                let end = inputs
                    .get(n + 1)
                    .map_or(deadline, |&nx| recs[nx].t_ms.min(deadline));
                if drawn_after_reply(&recs, send, end, cfg.draw_target) {
                    stats.unanswered_drawn += 1;
                }
            }
            _ => {}
        }
        loops.push(make_loop(&recs, cfg, n, input, send, &chain, &mut stats));
    }
    for r in &recs {
        if r.kind == RecordKind::Answer && r.class == SendClass::Other {
            *stats.unjudged.entry(r.event.clone()).or_insert(0) += 1;
        }
    }
    coalesced(&recs, cfg, &mut stats);
    let warnings = warnings_for(&loops, &stats, cfg);
    Paired {
        loops,
        stats,
        warnings,
    }
}

/// Whether a receipt after `send` was followed by a draw on the target canvas, both by
/// `end` (page time).
fn drawn_after_reply(recs: &[&Record], send: Option<usize>, end: f64, target: Option<u16>) -> bool {
    let Some(s) = send else {
        return false;
    };
    let mut received = false;
    for r in recs[s + 1..].iter().take_while(|r| r.t_ms <= end) {
        match r.kind {
            RecordKind::WsRecv => received = true,
            RecordKind::Draw if received && target.is_none_or(|t| r.target == t) => return true,
            _ => {}
        }
    }
    false
}

/// The records that belong to the run, in causal order. Stale and duplicate records go
/// first: either means the buffer was not cleared or a drain returned more than "since
/// the last drain", and both would silently mix another run's (or an earlier
/// iteration's) observations into this one. Holes in seq between the clear and the last
/// record are records lost to wrap-around even if a drain did not say so.
fn clean<'r>(records: &'r [Record], cfg: &PairConfig, stats: &mut PairStats) -> Vec<&'r Record> {
    let is_ws = |r: &Record| matches!(r.kind, RecordKind::WsSend | RecordKind::WsRecv);
    let own_space = |r: &Record| !(cfg.cdp_sockets && is_ws(r));
    let mut seen = HashSet::with_capacity(records.len());
    let mut recs: Vec<&Record> = Vec::with_capacity(records.len());
    for r in records {
        if own_space(r) && r.seq < cfg.cleared_at_seq {
            stats.summary.stale_records += 1;
        } else if !seen.insert((r.seq, own_space(r))) {
            stats.duplicates += 1;
        } else {
            recs.push(r);
        }
    }
    if cfg.cdp_sockets {
        // Ties (100 us clock granularity) keep the causal order of the loop model.
        let rank = |k: RecordKind| match k {
            RecordKind::Input | RecordKind::InputCoalesced => 0,
            RecordKind::WsSend => 1,
            RecordKind::WsRecv => 2,
            RecordKind::Draw => 3,
            RecordKind::Paint => 4,
            RecordKind::Answer | RecordKind::RegionPainted => 5,
            RecordKind::WsOpen => 1,
        };
        recs.sort_by(|a, b| {
            a.t_ms
                .total_cmp(&b.t_ms)
                .then(rank(a.kind).cmp(&rank(b.kind)))
                .then(a.seq.cmp(&b.seq))
        });
    } else {
        recs.sort_by_key(|r| r.seq);
    }
    stats.summary.records = recs.len() as u64;
    let own: Vec<u64> = recs
        .iter()
        .filter(|r| own_space(r))
        .map(|r| r.seq)
        .collect();
    let holes = match own.iter().max() {
        Some(&last) => {
            (last + 1 - cfg.cleared_at_seq.min(last + 1)).saturating_sub(own.len() as u64)
        }
        None => 0,
    };
    stats.summary.dropped_records = cfg.dropped.max(holes);
    recs
}

/// Bytes and messages each way, sends by class.
fn count_traffic(recs: &[&Record], stats: &mut PairStats) {
    for r in recs {
        match r.kind {
            RecordKind::WsRecv => {
                stats.summary.bytes_received += u64::from(r.size);
                stats.summary.frames_received += 1;
            }
            RecordKind::WsSend => {
                stats.summary.bytes_sent += u64::from(r.size);
                match r.class {
                    SendClass::Input => stats.summary.sends_input += 1,
                    SendClass::Ack => stats.summary.sends_ack += 1,
                    SendClass::Other => stats.summary.sends_other += 1,
                }
            }
            _ => {}
        }
    }
}

/// Indices of the trusted discrete inputs that start loops; untrusted ones are counted.
fn loop_inputs(recs: &[&Record], cfg: &PairConfig, stats: &mut PairStats) -> Vec<usize> {
    let is_loop_input =
        |r: &Record| r.kind == RecordKind::Input && cfg.loop_events.iter().any(|e| e == &r.event);
    (0..recs.len())
        .filter(|&i| {
            let r = recs[i];
            if is_loop_input(r) && !r.trusted {
                stats.untrusted_inputs += 1;
            }
            is_loop_input(r) && r.trusted
        })
        .collect()
}

/// Loop `n`, from its input, its send and its attributed chain.
fn make_loop(
    recs: &[&Record],
    cfg: &PairConfig,
    n: usize,
    input: usize,
    send: Option<usize>,
    chain: &Chain,
    stats: &mut PairStats,
) -> Loop {
    let t_input = recs[input].t_ms;
    let deadline = t_input + cfg.window_ms;
    let (reply_bytes, reply_frames) = reply_size(recs, send, chain.paint, deadline);
    let t = |i: Option<usize>| i.map(|i| recs[i].t_ms);
    let (t_send, t_recv, t_draw, t_paint) = (t(send), t(chain.recv), t(chain.draw), t(chain.paint));
    let diff = |a: Option<f64>, b: Option<f64>| Some(a? - b?);
    let index = n as u64;
    let chain_t = [Some(t_input), t_send, t_recv, t_draw, t_paint];
    let present: Vec<f64> = chain_t.iter().flatten().copied().collect();
    if present.windows(2).any(|w| w[0] > w[1]) {
        stats.summary.invariant_violations += 1;
        stats.first_violation.get_or_insert(index);
    }
    Loop {
        index,
        arm: cfg.arm.clone(),
        label: cfg
            .labels
            .get(n)
            .cloned()
            .unwrap_or_else(|| cfg.default_label.clone()),
        event: recs[input].event.clone(),
        cold: n < cfg.cold_loops,
        answered: chain.outcome == Outcome::Answered,
        outcome: chain.outcome,
        t_input,
        t_send,
        t_recv,
        t_draw,
        t_paint,
        input_to_socket: diff(t_send, Some(t_input)),
        send_to_recv: diff(t_recv, t_send),
        recv_to_draw: diff(t_draw, t_recv),
        input_to_paint: diff(t_paint, Some(t_input)),
        t_answer: chain.t_answer,
        input_to_pixels: diff(chain.t_answer, Some(t_input)),
        reply_bytes,
        reply_frames,
        after_lapse: false,
    }
}

/// Reply (bytes, messages): everything received after the send up to the paint, or to the
/// end of the window when the loop did not complete.
fn reply_size(
    recs: &[&Record],
    send: Option<usize>,
    paint: Option<usize>,
    deadline: f64,
) -> (u64, u64) {
    let Some(s) = send else { return (0, 0) };
    let end = paint.unwrap_or(recs.len());
    recs[s + 1..end]
        .iter()
        .take_while(|r| r.t_ms <= deadline)
        .filter(|r| r.kind == RecordKind::WsRecv)
        .fold((0, 0), |(b, f), r| (b + u64::from(r.size), f + 1))
}

/// Coalesced input: its own population, never a loop (the browser flushes it on its own
/// schedule, so its latency is partly the flush timer's).
fn coalesced(recs: &[&Record], cfg: &PairConfig, stats: &mut PairStats) {
    let coalesced: Vec<usize> = (0..recs.len())
        .filter(|&i| recs[i].kind == RecordKind::InputCoalesced)
        .collect();
    stats.summary.coalesced_inputs = coalesced.len() as u64;
    for (n, &ci) in coalesced.iter().enumerate() {
        let bound = coalesced.get(n + 1).copied().unwrap_or(recs.len());
        let deadline = recs[ci].t_ms + cfg.window_ms;
        if let Some(s) = (ci + 1..bound).find(|&j| {
            recs[j].kind == RecordKind::WsSend
                && recs[j].class == SendClass::Input
                && recs[j].t_ms <= deadline
        }) {
            stats
                .coalesced_input_to_socket
                .push(recs[s].t_ms - recs[ci].t_ms);
        }
    }
}

/// The run's warnings about its loops and records, in a fixed order: answers first, then
/// the records' health, then the loops'.
fn warnings_for(loops: &[Loop], s: &PairStats, cfg: &PairConfig) -> Vec<Warning> {
    let mut w = Vec::new();
    answer_warnings(&mut w, loops, s, cfg);
    record_warnings(&mut w, s);
    loop_warnings(&mut w, loops, s);
    w
}

/// Adds a warning when `n` things went wrong.
fn warn(w: &mut Vec<Warning>, n: u64, code: &str, msg: String) {
    if n > 0 {
        w.push(Warning::new(code, msg));
    }
}

fn answer_warnings(w: &mut Vec<Warning>, loops: &[Loop], s: &PairStats, cfg: &PairConfig) {
    warn(w, s.claimed, "claimed", format!(
        "{} of {} loops had only a candidate answer that already closed an earlier input's loop (one answer closes one loop): counted apart, out of the figures",
        s.claimed,
        loops.len()
    ));
    let no_draw = if cfg.draw_target.is_some() {
        s.answered_without_draw
    } else {
        0
    };
    warn(w, no_draw, "no_draw_on_target", format!(
        "{no_draw} answered loops drew nothing on the target canvas: the canvas selector may aim at the wrong canvas"
    ));
    warn(w, s.unanswered_drawn, "answer_elsewhere", format!(
        "{} unanswered loops had replies that drew on the target canvas while nothing changed in the watched region around the pointer: the app may draw its answer elsewhere (a status line, a side panel); watch that region with `answer.rect`, or close loops on replies with `oracle = \"reply\"`",
        s.unanswered_drawn
    ));
    for (why, &n) in &s.unjudged {
        warn(
            w,
            n,
            "oracle_unjudged",
            format!("{n} inputs the answer oracle could not judge ({why}): counted unanswered"),
        );
    }
}

fn record_warnings(w: &mut Vec<Warning>, s: &PairStats) {
    warn(w, s.summary.stale_records, "stale_records", format!(
        "{} records predate the clear on attach and were ignored: the recorder was not cleared, so earlier activity would have been counted",
        s.summary.stale_records
    ));
    warn(w, s.duplicates, "counts_climb", format!(
        "{} records were drained more than once: the recorder returns more than \"since the last drain\", so record counts climb across iterations; duplicates ignored",
        s.duplicates
    ));
    warn(w, s.summary.dropped_records, "dropped_records", format!(
        "{} records were overwritten in the page's ring buffer before they could be read: loops near them may be mispaired; raise the recorder capacity or drain more often",
        s.summary.dropped_records
    ));
}

fn loop_warnings(w: &mut Vec<Warning>, loops: &[Loop], s: &PairStats) {
    let unanswered = loops
        .iter()
        .filter(|l| l.outcome == Outcome::Unanswered)
        .count();
    warn(
        w,
        unanswered as u64,
        "unanswered",
        format!(
            "{unanswered} of {} loops unanswered inside the window (counted, not dropped)",
            loops.len()
        ),
    );
    warn(
        w,
        s.inputs_without_send,
        "no_input_send",
        format!(
            "{} inputs reached no input-classified send: check the classifier",
            s.inputs_without_send
        ),
    );
    warn(
        w,
        s.summary.invariant_violations,
        "invariant",
        format!(
            "{} loops break t_input <= t_send <= t_recv <= t_draw <= t_paint (first: loop {})",
            s.summary.invariant_violations,
            s.first_violation.unwrap_or(0)
        ),
    );
    warn(
        w,
        s.untrusted_inputs,
        "untrusted_input",
        format!(
            "{} discrete inputs were not trusted (synthesised by the page) and were ignored",
            s.untrusted_inputs
        ),
    );
    warn(
        w,
        loops.is_empty() as u64,
        "no_loops",
        "no discrete input was recorded".into(),
    );
}

/// Compact record streams for the pilot's unit tests (pairing, run building).
#[cfg(test)]
pub(crate) mod test_records {
    use arena_browser::{Record, RecordKind, SendClass};

    /// Builds a stream with consecutive seqs from compact (kind, t, size, class, event).
    pub(crate) struct S {
        pub(crate) recs: Vec<Record>,
        seq: u64,
    }

    impl S {
        pub(crate) fn new(first_seq: u64) -> Self {
            S {
                recs: Vec::new(),
                seq: first_seq,
            }
        }
        pub(crate) fn push(
            &mut self,
            kind: RecordKind,
            t: f64,
            size: u32,
            class: SendClass,
            ev: &str,
        ) {
            self.recs.push(Record {
                seq: self.seq,
                kind,
                t_ms: t,
                size,
                class,
                event: ev.into(),
                trusted: true,
                target: 0,
                answers: None,
            });
            self.seq += 1;
        }
        pub(crate) fn input(&mut self, t: f64, ev: &str) -> &mut Self {
            self.push(RecordKind::Input, t, 0, SendClass::Other, ev);
            self
        }
        pub(crate) fn send(&mut self, t: f64, class: SendClass) -> &mut Self {
            self.push(RecordKind::WsSend, t, 14, class, "binary");
            self
        }
        pub(crate) fn recv(&mut self, t: f64, size: u32) -> &mut Self {
            self.push(RecordKind::WsRecv, t, size, SendClass::Other, "binary");
            self
        }
        pub(crate) fn draw(&mut self, t: f64) -> &mut Self {
            self.push(RecordKind::Draw, t, 0, SendClass::Other, "drawImage");
            self
        }
        pub(crate) fn paint(&mut self, t: f64) -> &mut Self {
            self.push(RecordKind::Paint, t, 0, SendClass::Other, "raf");
            self
        }
        /// The page oracle's verdict on the input with seq `input` (`Input`: answered,
        /// `Ack`: claimed, `Other`: could not judge).
        pub(crate) fn answer(&mut self, t: f64, input: u64, verdict: SendClass) -> &mut Self {
            self.push(RecordKind::Answer, t, 1, verdict, "pixels");
            if let Some(r) = self.recs.last_mut() {
                r.answers = Some(input);
            }
            self
        }
        /// The seq the next record gets.
        pub(crate) fn next_seq(&self) -> u64 {
            self.seq
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_records::S;
    use super::*;

    fn cfg() -> PairConfig {
        let mut c = PairConfig::new("a");
        c.cold_loops = 0;
        c.window_ms = 500.0;
        c
    }

    #[test]
    fn one_full_loop_gives_the_four_metrics() {
        let mut s = S::new(0);
        s.input(10.0, "mousedown")
            .send(10.5, SendClass::Input)
            .recv(60.0, 6000)
            .draw(61.0)
            .paint(70.0);
        let p = pair(&s.recs, &cfg());
        assert_eq!(p.loops.len(), 1);
        let l = &p.loops[0];
        assert!(l.answered);
        assert_eq!(l.input_to_socket, Some(0.5));
        assert_eq!(l.send_to_recv, Some(49.5));
        assert_eq!(l.recv_to_draw, Some(1.0));
        assert_eq!(l.input_to_paint, Some(60.0));
        assert_eq!((l.reply_bytes, l.reply_frames), (6000, 1));
        assert_eq!(p.stats.summary.invariant_violations, 0);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn ack_trap_an_ack_never_starts_a_loop() {
        // The client acks a frame right after the click: pairing with it would read a
        // sendToRecv measured from the ack, i.e. the cadence of frames, not the click.
        let mut s = S::new(0);
        s.recv(5.0, 100)
            .input(10.0, "mousedown")
            .send(10.2, SendClass::Ack)
            .send(12.0, SendClass::Input)
            .send(13.0, SendClass::Ack)
            .recv(52.0, 6000)
            .send(52.1, SendClass::Ack)
            .draw(53.0)
            .paint(60.0);
        let p = pair(&s.recs, &cfg());
        let l = &p.loops[0];
        assert_eq!(l.t_send, Some(12.0));
        assert_eq!(l.send_to_recv, Some(40.0));
        assert_eq!(p.stats.summary.sends_ack, 3);
        assert_eq!(p.stats.summary.sends_input, 1);
    }

    #[test]
    fn a_mousedown_does_not_steal_its_mouseups_send() {
        // An app that only sends on mouseup: the mousedown has no send of its own.
        let mut s = S::new(0);
        s.input(10.0, "mousedown")
            .input(11.0, "mouseup")
            .send(11.5, SendClass::Input)
            .recv(40.0, 10)
            .draw(41.0)
            .paint(50.0);
        let p = pair(&s.recs, &cfg());
        assert_eq!(p.loops.len(), 2);
        assert_eq!(p.loops[0].t_send, None);
        assert!(!p.loops[0].answered);
        assert_eq!(p.loops[1].t_send, Some(11.5));
        assert_eq!(p.stats.inputs_without_send, 1);
        assert!(p.warnings.iter().any(|w| w.code == "no_input_send"));
    }

    #[test]
    fn unanswered_loops_are_counted_not_dropped() {
        let mut s = S::new(0);
        s.input(0.0, "mousedown").send(0.5, SendClass::Input);
        // The reply comes after the window: unanswered, and it must not be paired.
        s.recv(900.0, 100).draw(901.0).paint(905.0);
        s.input(1000.0, "mousedown")
            .send(1000.5, SendClass::Input)
            .recv(1040.0, 100)
            .draw(1041.0)
            .paint(1050.0);
        let p = pair(&s.recs, &cfg());
        assert_eq!(p.loops.len(), 2);
        assert!(!p.loops[0].answered);
        assert_eq!(p.loops[0].send_to_recv, None);
        assert_eq!(p.loops[0].input_to_socket, Some(0.5));
        assert_eq!(p.loops[0].reply_bytes, 0);
        assert!(p.loops[1].answered);
        let w = p.warnings.iter().find(|w| w.code == "unanswered").unwrap();
        assert!(w.message.starts_with("1 of 2"), "{}", w.message);
    }

    #[test]
    fn coalesced_input_is_reported_apart() {
        let mut s = S::new(0);
        s.push(
            RecordKind::InputCoalesced,
            1.0,
            0,
            SendClass::Other,
            "mousemove",
        );
        s.send(21.0, SendClass::Input);
        s.push(
            RecordKind::InputCoalesced,
            30.0,
            0,
            SendClass::Other,
            "mousemove",
        );
        s.input(40.0, "mousedown")
            .send(40.5, SendClass::Input)
            .recv(80.0, 10)
            .draw(81.0)
            .paint(90.0);
        let p = pair(&s.recs, &cfg());
        assert_eq!(p.loops.len(), 1, "a mousemove is never a loop");
        assert_eq!(p.stats.summary.coalesced_inputs, 2);
        // The second mousemove's next input send is the click's: 10.5 ms.
        assert_eq!(p.stats.coalesced_input_to_socket, vec![20.0, 10.5]);
    }

    #[test]
    fn cold_loops_are_marked() {
        let mut s = S::new(0);
        for k in 0..3 {
            let t = k as f64 * 100.0;
            s.input(t, "mousedown")
                .send(t + 1.0, SendClass::Input)
                .recv(t + 20.0, 10)
                .draw(t + 21.0)
                .paint(t + 30.0);
        }
        let mut c = cfg();
        c.cold_loops = 2;
        c.labels = vec!["firing".into()];
        c.default_label = "x".into();
        let p = pair(&s.recs, &c);
        let cold: Vec<bool> = p.loops.iter().map(|l| l.cold).collect();
        assert_eq!(cold, vec![true, true, false]);
        assert_eq!(p.loops[0].label, "firing");
        assert_eq!(p.loops[2].label, "x");
    }

    #[test]
    fn records_from_before_the_clear_are_ignored_and_flagged() {
        let mut s = S::new(100);
        // A click made before attach (seq 100..104), then the clear at seq 105.
        s.input(1.0, "mousedown")
            .send(1.5, SendClass::Input)
            .recv(20.0, 10)
            .draw(21.0)
            .paint(30.0);
        s.input(200.0, "mousedown")
            .send(200.5, SendClass::Input)
            .recv(220.0, 10)
            .draw(221.0)
            .paint(230.0);
        let mut c = cfg();
        c.cleared_at_seq = 105;
        let p = pair(&s.recs, &c);
        assert_eq!(p.loops.len(), 1);
        assert_eq!(p.loops[0].t_input, 200.0);
        assert_eq!(p.stats.summary.stale_records, 5);
        assert!(p.warnings.iter().any(|w| w.code == "stale_records"));
    }

    #[test]
    fn duplicated_records_mean_counts_climb() {
        let mut s = S::new(0);
        s.input(1.0, "mousedown")
            .send(1.5, SendClass::Input)
            .recv(20.0, 10)
            .draw(21.0)
            .paint(30.0);
        let mut twice = s.recs.clone();
        twice.extend(s.recs.iter().cloned());
        let p = pair(&twice, &cfg());
        assert_eq!(p.loops.len(), 1);
        assert_eq!(p.stats.duplicates, 5);
        assert!(p.warnings.iter().any(|w| w.code == "counts_climb"));
    }

    #[test]
    fn dropped_records_are_reported_from_the_drain_or_from_seq_holes() {
        let mut s = S::new(0);
        s.input(1.0, "mousedown")
            .send(1.5, SendClass::Input)
            .recv(20.0, 10)
            .draw(21.0)
            .paint(30.0);
        let mut holed = s.recs.clone();
        holed.remove(1);
        let p = pair(&holed, &cfg());
        assert_eq!(p.stats.summary.dropped_records, 1);
        let mut c = cfg();
        c.dropped = 40;
        let p = pair(&s.recs, &c);
        assert_eq!(p.stats.summary.dropped_records, 40);
        assert!(p.warnings.iter().any(|w| w.code == "dropped_records"));
    }

    #[test]
    fn invariant_violations_are_counted() {
        let mut s = S::new(0);
        // A receive stamped before the send (clock trouble) must not pass silently.
        s.input(10.0, "mousedown")
            .send(12.0, SendClass::Input)
            .recv(11.0, 10)
            .draw(13.0)
            .paint(20.0);
        let p = pair(&s.recs, &cfg());
        assert_eq!(p.stats.summary.invariant_violations, 1);
        assert!(p.warnings.iter().any(|w| w.code == "invariant"));
    }

    #[test]
    fn untrusted_and_non_loop_events_do_not_start_loops() {
        let mut s = S::new(0);
        s.input(1.0, "click");
        s.input(2.0, "mousedown");
        s.recs[1].trusted = false;
        let p = pair(&s.recs, &cfg());
        assert!(p.loops.is_empty());
        assert_eq!(p.stats.untrusted_inputs, 1);
        assert!(p.warnings.iter().any(|w| w.code == "no_loops"));
    }

    #[test]
    fn cdp_socket_records_have_their_own_seq_space_and_are_ordered_by_time() {
        let mut s = S::new(10);
        s.input(10.0, "mousedown").draw(61.0).paint(70.0);
        // CDP frames: seq from 0, interleaved by time.
        let mut send = s.recs[0].clone();
        send.kind = RecordKind::WsSend;
        send.class = SendClass::Input;
        send.seq = 0;
        send.t_ms = 10.5;
        let mut recv = send.clone();
        recv.kind = RecordKind::WsRecv;
        recv.class = SendClass::Other;
        recv.seq = 1;
        recv.t_ms = 60.0;
        recv.size = 700;
        s.recs.push(send);
        s.recs.push(recv);
        let mut c = cfg();
        c.cdp_sockets = true;
        c.cleared_at_seq = 10;
        let p = pair(&s.recs, &c);
        assert_eq!(p.stats.summary.stale_records, 0);
        assert_eq!(p.stats.duplicates, 0);
        assert_eq!(p.stats.summary.dropped_records, 0);
        let l = &p.loops[0];
        assert_eq!(
            (l.t_send, l.t_recv, l.t_draw),
            (Some(10.5), Some(60.0), Some(61.0))
        );
        assert_eq!(l.reply_bytes, 700);
    }

    #[test]
    fn one_reply_answers_one_input_the_release_that_borrows_it_is_claimed() {
        // Press and release back to back; the app answers the press only. The release's
        // first reply after its send is the press's: it must not close a second loop.
        let mut s = S::new(0);
        s.input(10.0, "mousedown")
            .send(10.2, SendClass::Input)
            .input(10.5, "mouseup")
            .send(10.6, SendClass::Input)
            .recv(60.0, 500)
            .draw(61.0)
            .paint(70.0);
        let p = pair(&s.recs, &cfg());
        assert_eq!(p.loops[0].outcome, Outcome::Answered);
        assert_eq!(p.loops[0].send_to_recv, Some(49.8));
        assert_eq!(p.loops[1].outcome, Outcome::Claimed);
        assert!(!p.loops[1].answered);
        assert_eq!(p.loops[1].t_recv, None);
        assert_eq!(p.stats.claimed, 1);
        assert!(p.warnings.iter().any(|w| w.code == "claimed"));
        assert!(!p.warnings.iter().any(|w| w.code == "unanswered"));
    }

    #[test]
    fn a_release_sent_after_the_press_was_answered_is_unanswered_when_nothing_comes() {
        let mut s = S::new(0);
        s.input(10.0, "mousedown")
            .send(10.2, SendClass::Input)
            .recv(35.0, 500)
            .draw(36.0)
            .paint(40.0)
            .input(41.0, "mouseup")
            .send(41.2, SendClass::Input);
        let p = pair(&s.recs, &cfg());
        assert_eq!(p.loops[0].outcome, Outcome::Answered);
        assert_eq!(p.loops[1].outcome, Outcome::Unanswered);
        assert_eq!(p.stats.claimed, 0);
    }

    #[test]
    fn min_bytes_skips_small_replies() {
        let mut s = S::new(0);
        s.input(10.0, "mousedown")
            .send(10.2, SendClass::Input)
            .recv(20.0, 40)
            .draw(21.0)
            .paint(30.0)
            .recv(50.0, 6000)
            .draw(51.0)
            .paint(60.0);
        let mut c = cfg();
        c.answer = AnswerRule::Reply { min_bytes: 1000 };
        let l = &pair(&s.recs, &c).loops[0];
        assert_eq!((l.t_recv, l.t_paint), (Some(50.0), Some(60.0)));
        c.answer = AnswerRule::Reply { min_bytes: 0 };
        assert_eq!(pair(&s.recs, &c).loops[0].t_recv, Some(20.0));
    }

    #[test]
    fn the_pixels_answer_closes_the_loop_not_the_blink_that_came_first() {
        // A blink frame arrives 3 ms after the send and repaints elsewhere; the answer's
        // frame comes 40 ms later and changes the pixels under the click.
        let mut s = S::new(0);
        let press = s.next_seq();
        s.input(10.0, "mousedown")
            .send(10.2, SendClass::Input)
            .recv(13.0, 200)
            .draw(13.5)
            .paint(16.0)
            .recv(50.0, 6000)
            .draw(51.0)
            .paint(60.0)
            .answer(60.0, press, SendClass::Input);
        let mut c = cfg();
        c.answer = AnswerRule::Frame;
        let p = pair(&s.recs, &c);
        let l = &p.loops[0];
        assert_eq!(l.outcome, Outcome::Answered);
        assert_eq!(l.t_recv, Some(50.0), "the receipt that drew the change");
        assert_eq!(l.send_to_recv, Some(39.8));
        assert_eq!(
            (l.t_draw, l.t_paint, l.t_answer),
            (Some(51.0), Some(60.0), Some(60.0))
        );
        assert_eq!(l.input_to_pixels, Some(50.0));
        assert_eq!(l.reply_bytes, 6200);
        // Under the reply oracle the blink would have closed it.
        assert_eq!(pair(&s.recs, &cfg()).loops[0].t_recv, Some(13.0));
    }

    #[test]
    fn replies_drawn_on_the_target_with_no_watched_change_are_diagnosed() {
        // Two presses under the pixels oracle: each gets a reply that draws on the target
        // canvas, neither gets a verdict (the change was drawn away from the pointer).
        // A third gets no reply at all: plainly unanswered, not diagnosed.
        let mut s = S::new(0);
        s.input(10.0, "mousedown")
            .send(10.2, SendClass::Input)
            .recv(20.0, 6000)
            .draw(21.0)
            .paint(30.0)
            .input(200.0, "mousedown")
            .send(200.2, SendClass::Input)
            .recv(210.0, 6000)
            .draw(211.0)
            .paint(220.0)
            .input(400.0, "mousedown")
            .send(400.2, SendClass::Input);
        let mut c = cfg();
        c.answer = AnswerRule::Frame;
        let p = pair(&s.recs, &c);
        assert!(p.loops.iter().all(|l| l.outcome == Outcome::Unanswered));
        assert_eq!(p.stats.unanswered_drawn, 2);
        let w = p
            .warnings
            .iter()
            .find(|w| w.code == "answer_elsewhere")
            .expect("the diagnosis");
        assert!(w.message.starts_with("2 unanswered loops"), "{}", w.message);
        assert!(w.message.contains("answer.rect"), "{}", w.message);
        // A draw on another canvas is not the target's.
        c.draw_target = Some(3);
        assert_eq!(pair(&s.recs, &c).stats.unanswered_drawn, 0);
    }

    #[test]
    fn frame_verdicts_claimed_and_unjudged_are_not_answers() {
        let mut s = S::new(0);
        let press = s.next_seq();
        s.input(10.0, "mousedown").send(10.2, SendClass::Input);
        let release = s.next_seq();
        s.input(10.5, "mouseup")
            .send(10.6, SendClass::Input)
            .recv(40.0, 900)
            .draw(41.0)
            .paint(50.0)
            .answer(50.0, press, SendClass::Input)
            .answer(50.0, release, SendClass::Ack);
        let key = s.next_seq();
        s.input(300.0, "keydown")
            .answer(300.5, key, SendClass::Other);
        let mut c = cfg();
        c.answer = AnswerRule::Frame;
        let p = pair(&s.recs, &c);
        let outcomes: Vec<Outcome> = p.loops.iter().map(|l| l.outcome).collect();
        assert_eq!(
            outcomes,
            vec![Outcome::Answered, Outcome::Claimed, Outcome::Unanswered]
        );
        assert_eq!(p.loops[0].t_recv, Some(40.0));
        assert_eq!(p.loops[1].t_recv, None, "the receipt is the press's");
        assert_eq!(p.stats.unjudged.get("pixels"), Some(&1));
        assert!(p.warnings.iter().any(|w| w.code == "oracle_unjudged"));
    }

    #[test]
    fn two_keys_whose_glyphs_one_frame_shows_share_its_receipt_only_when_typing() {
        // A burst: two keydowns sent, one reply carrying both glyphs, one frame showing
        // both, each key's own region answered (class Input) by it.
        let mut s = S::new(0);
        let a = s.next_seq();
        s.input(10.0, "keydown").send(10.3, SendClass::Input);
        let b = s.next_seq();
        s.input(11.0, "keydown")
            .send(11.2, SendClass::Input)
            .recv(30.0, 60)
            .draw(31.0)
            .paint(40.0)
            .answer(40.0, a, SendClass::Input)
            .answer(40.0, b, SendClass::Input);
        let mut c = cfg();
        c.answer = AnswerRule::Frame;
        let outcomes = |c: &PairConfig| -> Vec<Outcome> {
            pair(&s.recs, c).loops.iter().map(|l| l.outcome).collect()
        };
        assert_eq!(outcomes(&c), vec![Outcome::Answered, Outcome::Claimed]);
        c.shared_receipts = true;
        assert_eq!(outcomes(&c), vec![Outcome::Answered, Outcome::Answered]);
        let p = pair(&s.recs, &c);
        assert_eq!(p.loops[1].t_recv, Some(30.0));
        assert_eq!(p.loops[1].input_to_pixels, Some(29.0));
    }

    #[test]
    fn a_cdp_send_that_lands_after_the_next_input_still_belongs_to_its_own() {
        // A Worker's socket: the press's frameSent is stamped 2.8 ms after the release's
        // DOM event.
        let mut s = S::new(10);
        s.input(10.0, "mousedown").input(12.5, "mouseup");
        let mut c = cfg();
        c.cdp_sockets = true;
        c.cleared_at_seq = 10;
        let add = |seq: u64, kind: RecordKind, t: f64, class: SendClass| {
            let mut r = s.recs[0].clone();
            (r.seq, r.kind, r.t_ms, r.class) = (seq, kind, t, class);
            r
        };
        let extra = vec![
            add(0, RecordKind::WsSend, 15.3, SendClass::Input),
            add(1, RecordKind::WsSend, 15.9, SendClass::Input),
            add(2, RecordKind::WsRecv, 40.0, SendClass::Other),
        ];
        s.recs.extend(extra);
        s.draw(41.0).paint(50.0);
        let p = pair(&s.recs, &c);
        assert_eq!(p.loops[0].t_send, Some(15.3));
        assert_eq!(p.loops[1].t_send, Some(15.9));
        assert_eq!(p.stats.inputs_without_send, 0);
        assert_eq!(p.loops[0].outcome, Outcome::Answered);
        assert_eq!(p.loops[1].outcome, Outcome::Claimed);
    }

    #[test]
    fn draws_on_another_canvas_are_skipped_when_a_target_is_set() {
        let mut s = S::new(0);
        s.input(1.0, "mousedown")
            .send(1.5, SendClass::Input)
            .recv(20.0, 10)
            .draw(20.5)
            .draw(22.0)
            .paint(30.0);
        s.recs[3].target = 1;
        let mut c = cfg();
        c.draw_target = Some(0);
        let p = pair(&s.recs, &c);
        assert_eq!(p.loops[0].t_draw, Some(22.0));
        c.draw_target = None;
        assert_eq!(pair(&s.recs, &c).loops[0].t_draw, Some(20.5));
    }
}
