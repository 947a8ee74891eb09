//! One click as a person makes it, and the waits for its loops.
//!
//! What one click sends (CDP `Input.dispatchMouseEvent`, trusted, left button, click
//! count 1), in order:
//!
//! 1. with `clicks.move_first`, a `mouseMoved` to the point, then a wait until the page has
//!    gone quiet (a hover repaint must not land in the press's window);
//! 2. after a phase pause (below), `mousePressed` (buttons 1): the `mousedown` loop;
//! 3. by default, once the press's loop has ended (its answer painted, or the timeout), the
//!    socket has been quiet for `settle_ms`, a person's hold (drawn from
//!    `clicks.hold_range_ms`) has passed since the press, and a phase pause,
//!    `mouseReleased` (buttons 0): the `mouseup` loop. With `clicks.hold_ms = N` the
//!    release goes N ms after the press instead, answered or not.
//!
//! Releasing only once the press's loop has ended and nothing is in flight is the default
//! because a release sent earlier shares the press's window: the press's answer, its
//! follow-up frames or a frame already on its way would close the release's loop, a loop
//! its input did not cause. A person holds a button about 100 ms, longer than most
//! answers, so the default is also the shape the app sees from people.
//!
//! The phase pause: every input waits a time drawn uniformly from one frame interval
//! (measured on the page) before it goes. A release sent the moment the press's answer
//! painted sits at one fixed point of the page's frame clock and of the server's paint
//! tick, and every release is then rounded the same way; with the pause, the input's time
//! modulo the frame interval is uniform whatever the waits before it were (the run checks
//! it: `run.json` `summary.input_phase`). A key press is `keyDown` + `keyUp` back to back
//! (only `keydown` starts a loop).

use std::cell::RefCell;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use arena_browser::{Page, Quiet, RecordKind};
use arena_report::{Exit, ExitKind};
use arena_run::Outcome;
use arena_sys::rng::SplitMix64;

use crate::answer::AnswerRule;
use crate::cancel::Cancel;
use crate::collect::{drain_into, Collected, PhaseKind, ToolCost};
use crate::pair::{pair, PairConfig};
use crate::plan::Plan;
use crate::scenario::Hold;

/// Every this many clicks, a sham watch goes before the press (n = 39 for 156 clicks).
const SHAM_EVERY: usize = 4;

/// How often records are drained while waiting when the page cannot wait itself (an app's
/// own recorder, sockets seen through CDP).
const POLL: Duration = Duration::from_millis(10);

/// What one click needs besides its point.
pub(crate) struct Clicker<'a> {
    pub page: &'a Page,
    pub plan: &'a Plan<'a>,
    pub cancel: &'a Cancel,
    /// Judges the click's own records (window, loop events, draw target, answer rule).
    pub judge: PairConfig,
    /// The page's clock mapped onto CLOCK_MONOTONIC (monotonic ms = page ms + this), to
    /// pace inputs from the page's own moments; `None` where it could not be mapped.
    pub page_clock: Option<f64>,
    /// When inputs go: the phase pause and the person's hold.
    pub timing: Timing,
}

/// The random parts of a click's timing, reproducible from the run's seed.
pub(crate) struct Timing {
    rng: RefCell<SplitMix64>,
    /// The phase pause before each input is uniform in [0, this) ms.
    pub jitter_ms: f64,
}

impl Timing {
    pub fn new(seed: u64, jitter_ms: f64) -> Self {
        // Another stream than the click positions', which the same seed also draws.
        let rng = SplitMix64::new(arena_sys::rng::mix(seed ^ 0x7469_6d69_6e67));
        Timing {
            rng: RefCell::new(rng),
            jitter_ms,
        }
    }

    fn unit(&self) -> f64 {
        self.rng.borrow_mut().unit()
    }

    /// The phase pause, slept to a fraction of a millisecond (tokio's timer would round
    /// every pause up to its next whole millisecond, a grid of its own).
    pub(crate) async fn phase_pause(&self) {
        let d = self.draw_pause();
        if !d.is_zero() {
            arena_sys::timer::sleep_exactly(d).await;
        }
    }

    /// A phase pause drawn, for a caller that sleeps it from a moment of its own.
    fn draw_pause(&self) -> Duration {
        if self.jitter_ms > 0.0 {
            Duration::from_secs_f64(self.unit() * self.jitter_ms / 1e3)
        } else {
            Duration::ZERO
        }
    }

    /// A person's hold drawn from its range.
    fn person_hold(&self, min_ms: u64, max_ms: u64) -> Duration {
        let span = (max_ms - min_ms) as f64;
        Duration::from_secs_f64((min_ms as f64 + self.unit() * span) / 1e3)
    }
}

/// How one wait for loops ended.
#[derive(Default)]
struct Phase {
    complete: bool,
    /// The tool's own time in this phase, ms: from its dispatch to the moment the tool
    /// learnt the page had gone quiet, less the page's time from the input to that quiet
    /// (see [`ToolCost`]).
    tool_ms: Option<f64>,
    /// Page times of the phase's input and of the quiet that ended it, where the page
    /// said.
    t_in: Option<f64>,
    quiet: Option<f64>,
}

impl Phase {
    fn quiet_at(t_in: Option<f64>, quiet: f64) -> Phase {
        Phase {
            complete: true,
            t_in,
            quiet: Some(quiet),
            ..Phase::default()
        }
    }

    /// When a tool that cost nothing would have learnt the phase ended: its input landing
    /// at `dispatched`, the quiet the page's own time after it.
    fn zero_cost_end(&self, dispatched: Instant) -> Option<Instant> {
        let span = self.quiet? - self.t_in?;
        Some(dispatched + Duration::from_secs_f64(span.max(0.0) / 1e3))
    }
}

/// How one click ended: for the run loop's pacing, and the tool's accounting it finishes.
pub(crate) struct ClickEnd {
    pub complete: bool,
    /// When the page went quiet after the click's last input (mapped from the page's
    /// clock; when the tool learnt it where the clock is not mapped).
    ready: Instant,
    /// When a tool that cost nothing would have learnt the last input's phase ended.
    zero_cost_end: Option<Instant>,
    /// Per phase: kind, the tool's time, the part the next input waited on (the last
    /// phase's is known once the next input is due).
    phases: Vec<(PhaseKind, Option<f64>, Option<f64>)>,
}

impl Clicker<'_> {
    fn loop_event(&self, ev: &str) -> bool {
        self.plan.loop_events.iter().any(|e| e == ev)
    }

    /// Makes click `k` at page point `(x, y)` (or key press `k`) and waits for its loops.
    /// Returns whether every loop ended inside its window, and what [`Clicker::between`]
    /// paces the next click from.
    pub async fn click(
        &self,
        k: usize,
        (x, y): (f64, f64),
        col: &mut Collected,
        cost: &mut ToolCost,
    ) -> Result<ClickEnd> {
        let stopped = |e: anyhow::Error| {
            anyhow!(Exit::new(
                ExitKind::TargetFailed,
                format!("browser stopped answering at click {}: {e:#}", k + 1)
            ))
        };
        let keys = &self.plan.keys;
        if !keys.is_empty() {
            self.timing.phase_pause().await;
            let from = col.records.len();
            let t = Instant::now();
            let key = &keys[k % keys.len()];
            self.page.key(key).await.map_err(stopped)?;
            cost.click_ms.push(ms(t.elapsed()));
            cost.dispatch_ms.push((PhaseKind::Key, ms(t.elapsed())));
            let expect = self.plan.loops_per_click as usize;
            let p = self
                .wait_loops(col, from, expect, self.plan.settle, t, cost)
                .await?;
            return Ok(self.ended_click(p, t, vec![(PhaseKind::Key, None, None)]));
        }
        if k % SHAM_EVERY == SHAM_EVERY - 1 && self.judge.answer == AnswerRule::Frame {
            self.sham((x, y), col).await?;
        }
        if self.plan.move_first {
            self.page.move_to(x, y).await.map_err(stopped)?;
            self.settle_after_move(col, cost).await?;
        }
        self.timing.phase_pause().await;
        let from = col.records.len();
        let t = Instant::now();
        self.page.press(x, y).await.map_err(stopped)?;
        let mut dispatch = t.elapsed();
        cost.dispatch_ms.push((PhaseKind::Press, ms(dispatch)));
        let press = self.hold(col, from, t, cost).await?;
        let t2 = Instant::now();
        self.page.release(x, y).await.map_err(stopped)?;
        dispatch += t2.elapsed();
        cost.dispatch_ms
            .push((PhaseKind::Release, ms(t2.elapsed())));
        cost.click_ms.push(ms(dispatch));
        let release = if self.judge.answer == AnswerRule::Frame && self.loop_event("mouseup") {
            // The page says when the release was answered and when it went quiet: no drain
            // on the click's critical path (the run drains between clicks).
            self.answered_then_quiet(col, from, t2, cost).await?
        } else {
            let expect = self.plan.loops_per_click as usize;
            self.wait_loops(col, from, expect, self.plan.settle, t2, cost)
                .await?
        };
        let press_complete = press.as_ref().is_none_or(|(p, _)| p.complete);
        let phases: Vec<(PhaseKind, Option<f64>, Option<f64>)> = press
            .iter()
            .map(|(p, critical)| (PhaseKind::Press, p.tool_ms, *critical))
            .chain([(PhaseKind::Release, None, None)])
            .collect();
        let mut end = self.ended_click(release, t2, phases);
        end.complete &= press_complete;
        Ok(end)
    }

    /// A sham watch at the next click's point: watched with no input for as long as nine in
    /// ten real answers took so far (at least 100 ms, at most the timeout).
    async fn sham(&self, point: (f64, f64), col: &mut Collected) -> Result<()> {
        let p90 = arena_stats::quantile(&col.answer_ms, 0.9).unwrap_or(0.0);
        let window_ms = p90.clamp(100.0, self.plan.timeout_ms as f64);
        let window = Duration::from_secs_f64(window_ms / 1e3);
        let seen = tokio::select! {
            s = self.page.sham(point, window) => s.map_err(stopped_waiting)?,
            _ = self.cancel.cancelled() => None,
        };
        if let Some(changed) = seen {
            col.shams.push((window_ms, changed));
        }
        Ok(())
    }

    /// Holds the button after the press at `pressed`: a fixed hold, or a person's (the
    /// press's loop ended, the socket quiet for `settle`, the drawn hold passed, then a
    /// phase pause: a fixed hold stays exact). Returns the press's phase when its loop was
    /// waited for, with the part of its tool time the release waited on.
    async fn hold(
        &self,
        col: &mut Collected,
        from: usize,
        pressed: Instant,
        cost: &mut ToolCost,
    ) -> Result<Option<(Phase, Option<f64>)>> {
        let (min_ms, max_ms) = match self.plan.hold {
            Hold::Fixed(h) => {
                self.cancel.sleep(Duration::from_millis(h)).await;
                return Ok(None);
            }
            Hold::Person { min_ms, max_ms } => (min_ms, max_ms),
        };
        let person = pressed + self.timing.person_hold(min_ms, max_ms);
        let (press, quiet) = match (self.loop_event("mousedown"), self.judge.answer) {
            (false, _) => {
                let q = self.wait_quiet_after(col, from, pressed, cost).await?;
                (None, q.page_ms())
            }
            (true, AnswerRule::Frame) => {
                let p = self.answered_then_quiet(col, from, pressed, cost).await?;
                let q = p.quiet;
                (Some(p), q)
            }
            (true, _) => {
                let p = self
                    .wait_loops(col, from, 1, self.plan.settle, pressed, cost)
                    .await?;
                let q = p.quiet;
                (Some(p), q)
            }
        };
        // Paced from the moment the page went quiet, not from when the tool learnt it: a
        // person's release does not wait on the tool's round trip.
        let ready = self.ready_at(quiet);
        let pause = self.timing.draw_pause();
        self.cancel
            .sleep_until_exactly(person.max(ready) + pause)
            .await;
        let released = Instant::now();
        Ok(press.map(|p| {
            let critical = p.zero_cost_end(pressed).and_then(|z| {
                let went = released.checked_sub(pause)?;
                Some(ms(went.saturating_duration_since(person.max(z))))
            });
            (p, critical)
        }))
    }

    /// The wall moment of the page's quiet at page time `quiet`, where the page's clock is
    /// mapped; else now, when the tool learnt it.
    fn ready_at(&self, quiet: Option<f64>) -> Instant {
        let now = Instant::now();
        let (Some(q), Some(offset)) = (quiet, self.page_clock) else {
            return now;
        };
        let ago_ms = arena_browser::monotonic_ms() - (q + offset);
        if ago_ms >= 0.0 {
            now.checked_sub(Duration::from_secs_f64(ago_ms / 1e3))
                .unwrap_or(now)
        } else {
            now + Duration::from_secs_f64(-ago_ms / 1e3)
        }
    }

    /// A click's end from its last phase, dispatched at `sent`.
    fn ended_click(
        &self,
        last: Phase,
        sent: Instant,
        mut phases: Vec<(PhaseKind, Option<f64>, Option<f64>)>,
    ) -> ClickEnd {
        if let Some(p) = phases.last_mut() {
            p.1 = last.tool_ms;
        }
        ClickEnd {
            complete: last.complete,
            ready: self.ready_at(last.quiet),
            zero_cost_end: last.zero_cost_end(sent),
            phases,
        }
    }

    /// The pause between clicks: the plan's interval from the moment the page went quiet
    /// after the last click. Then books that click's tool cost, its last phase's critical
    /// part measured against the moment the next input became due.
    pub async fn between(&self, end: ClickEnd, cost: &mut ToolCost) {
        self.cancel
            .sleep_until_exactly(end.ready + self.plan.interval)
            .await;
        let mut phases = end.phases;
        if let (Some(last), Some(z)) = (phases.last_mut(), end.zero_cost_end) {
            if last.1.is_some() {
                last.2 = Instant::now()
                    .checked_sub(self.plan.interval)
                    .map(|due| ms(due.saturating_duration_since(z)));
            }
        }
        note(cost, &phases);
    }

    /// The page oracle's verdict on the input dispatched at `sent`, then the socket's quiet:
    /// both on the page's word, with no drain. The tool's time is taken at the quiet, the
    /// moment the next input may go.
    async fn answered_then_quiet(
        &self,
        col: &mut Collected,
        from: usize,
        sent: Instant,
        cost: &mut ToolCost,
    ) -> Result<Phase> {
        let t_in = self.wait_answer(sent, col, cost).await?;
        let quiet = self.wait_quiet_after(col, from, sent, cost).await?;
        Ok(match (t_in, quiet) {
            (Some(t_in), QuietEnd::At(q)) => Phase {
                tool_ms: Some(ms(sent.elapsed()) - (q - t_in)),
                ..Phase::quiet_at(Some(t_in), q)
            },
            (Some(_), QuietEnd::Polled(p)) => Phase {
                complete: true,
                ..p
            },
            // Answered, though the socket never went quiet inside the window: the loop
            // ended; only the tool's time and the page's quiet are unknown.
            (t_in, _) => Phase {
                complete: t_in.is_some(),
                t_in,
                ..Phase::default()
            },
        })
    }

    /// Waits until the socket has been quiet for `settle` after the press, bounded by the
    /// press's timeout: the page says when where it can see the socket, else drains poll.
    /// The page gives traffic two settles at least, so an answer that took the whole window
    /// still leaves the quiet a chance; silence ends the wait at once (`Quiet::Silent`).
    async fn wait_quiet_after(
        &self,
        col: &mut Collected,
        from: usize,
        pressed: Instant,
        cost: &mut ToolCost,
    ) -> Result<QuietEnd> {
        let left = (pressed + self.plan.timeout()).saturating_duration_since(Instant::now());
        let quiet = tokio::select! {
            q = self.page.wait_quiet(self.plan.settle, left) => q.map_err(stopped_waiting)?,
            _ = self.cancel.cancelled() => return Ok(QuietEnd::Never),
        };
        cost.waits += 1;
        Ok(match quiet {
            Quiet::At(q) => QuietEnd::At(q),
            Quiet::TimedOut => {
                self.lapse(cost);
                QuietEnd::Never
            }
            // Nothing came since the last wait: no lapse, nothing was in flight.
            Quiet::Silent => QuietEnd::Never,
            Quiet::Unsupported => QuietEnd::Polled(
                self.wait_loops(col, from, 0, self.plan.settle, pressed, cost)
                    .await?,
            ),
        })
    }

    /// After a `mouseMoved`: drains every `settle` until a drain brings no message (a move
    /// that changes nothing is quiet at once), bounded by the timeout.
    async fn settle_after_move(&self, col: &mut Collected, cost: &mut ToolCost) -> Result<()> {
        let deadline = Instant::now() + self.plan.timeout();
        while Instant::now() < deadline && !self.cancel.is_cancelled() {
            self.cancel.sleep(self.plan.settle.max(POLL)).await;
            let before = col.records.len();
            drain_into(self.page, col, cost)
                .await
                .map_err(stopped_waiting)?;
            if !col.records[before..]
                .iter()
                .any(|r| r.kind == RecordKind::WsRecv)
            {
                break;
            }
        }
        Ok(())
    }

    /// Waits for the page oracle's verdict on the input just dispatched, without a drain:
    /// the records are judged later. Returns the input's page time when it was answered.
    async fn wait_answer(
        &self,
        dispatched: Instant,
        col: &mut Collected,
        cost: &mut ToolCost,
    ) -> Result<Option<f64>> {
        let left = (dispatched + self.plan.timeout()).saturating_duration_since(Instant::now());
        let verdict = tokio::select! {
            v = self.page.wait_answer(left) => v.map_err(stopped_waiting)?,
            _ = self.cancel.cancelled() => None,
        };
        cost.waits += 1;
        Ok(match verdict {
            Some((t_in, Some(t_answer))) => {
                col.answer_ms.push(t_answer - t_in);
                Some(t_in)
            }
            _ => None,
        })
    }

    /// Whether the first `expect` loops among `records` have ended: answered and painted
    /// (or, judged on replies, claimed: that verdict is final there).
    fn ended(&self, records: &[arena_browser::Record], expect: usize, cdp: bool) -> bool {
        let mut cfg = self.judge.clone();
        cfg.cdp_sockets = cdp;
        let p = pair(records, &cfg);
        let reply = matches!(cfg.answer, AnswerRule::Reply { .. });
        p.loops.len() >= expect
            && p.loops.iter().take(expect).all(|l| match l.outcome {
                Outcome::Answered => l.t_paint.is_some(),
                Outcome::Claimed => reply,
                Outcome::Unanswered => false,
            })
    }

    /// [`Clicker::wait_loops`] with the plan's settle, for another gesture's stage:
    /// whether every loop ended inside its window.
    pub(crate) async fn wait_ended(
        &self,
        col: &mut Collected,
        from: usize,
        expect: usize,
        dispatched: Instant,
        cost: &mut ToolCost,
    ) -> Result<bool> {
        let p = self
            .wait_loops(col, from, expect, self.plan.settle, dispatched, cost)
            .await?;
        Ok(p.complete)
    }

    /// Waits until the first `expect` loops of the records since `from` have ended and the
    /// socket has been quiet for `settle` (a reply still in flight would otherwise land
    /// in the next input's window), or until the timeout after `dispatched`. The page says
    /// when it went quiet; the loops are judged here, on a drain.
    async fn wait_loops(
        &self,
        col: &mut Collected,
        from: usize,
        expect: usize,
        settle: Duration,
        dispatched: Instant,
        cost: &mut ToolCost,
    ) -> Result<Phase> {
        let deadline = dispatched + self.plan.timeout();
        let mut complete = expect == 0;
        let mut last_recv = Instant::now();
        let mut ended = Phase::default();
        let mut polled = false;
        while Instant::now() < deadline && !self.cancel.is_cancelled() {
            let left = deadline.saturating_duration_since(Instant::now());
            let quiet = tokio::select! {
                q = self.page.wait_quiet(settle, left) => q.map_err(stopped_waiting)?,
                _ = self.cancel.cancelled() => break,
            };
            cost.waits += 1;
            polled = quiet == Quiet::Unsupported;
            if polled {
                // Each drain runs script on the page's main thread; polling faster would
                // delay the very handlers being timed.
                tokio::time::sleep(POLL).await;
            }
            let before = col.records.len();
            drain_into(self.page, col, cost)
                .await
                .map_err(stopped_waiting)?;
            if col.records[before..]
                .iter()
                .any(|r| r.kind == RecordKind::WsRecv)
            {
                last_recv = Instant::now();
            }
            if !complete {
                let cdp = col.source == Some(arena_browser::SocketSource::Cdp);
                complete = self.ended(&col.records[from..], expect, cdp);
            }
            match quiet {
                Quiet::At(quiet_ms) if complete => {
                    let t_in = last_input(&col.records[from..]);
                    ended = Phase {
                        tool_ms: t_in.map(|t| ms(dispatched.elapsed()) - (quiet_ms - t)),
                        ..Phase::quiet_at(t_in, quiet_ms)
                    };
                    break;
                }
                Quiet::TimedOut => {
                    self.lapse(cost);
                    break;
                }
                Quiet::Silent => break,
                Quiet::Unsupported if complete && last_recv.elapsed() >= settle => break,
                _ => {}
            }
        }
        // Polled to the window's end with a message newer than the settle: a lapse too.
        let busy = last_recv.elapsed() < settle;
        if polled && busy && Instant::now() >= deadline && !self.cancel.is_cancelled() {
            self.lapse(cost);
        }
        Ok(Phase { complete, ..ended })
    }

    /// A wait for the socket's quiet ran out: counted, and dated on the page's clock where
    /// it is mapped, so the input that goes next is marked.
    fn lapse(&self, cost: &mut ToolCost) {
        cost.quiet_lapses += 1;
        if let Some(offset) = self.page_clock {
            cost.lapse_at.push(arena_browser::monotonic_ms() - offset);
        }
    }
}

/// How a wait for the socket's quiet ended.
enum QuietEnd {
    /// The page said: quiet since this page time.
    At(f64),
    /// The page cannot tell; drains polled until it was quiet.
    Polled(Phase),
    /// Timed out, or the run was cancelled.
    Never,
}

impl QuietEnd {
    fn page_ms(&self) -> Option<f64> {
        match self {
            QuietEnd::At(q) => Some(*q),
            QuietEnd::Polled(p) => p.quiet,
            QuietEnd::Never => None,
        }
    }
}

fn stopped_waiting(e: anyhow::Error) -> anyhow::Error {
    anyhow!(Exit::new(
        ExitKind::TargetFailed,
        format!("browser stopped answering: {e:#}")
    ))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The page time of the last trusted input among `records`.
fn last_input(records: &[arena_browser::Record]) -> Option<f64> {
    records
        .iter()
        .rev()
        .find(|r| r.kind == RecordKind::Input && r.trusted)
        .map(|r| r.t_ms)
}

/// One click's tool cost from its phases (kind, the tool's time, the part of it the next
/// input waited on): each measured phase on its own, and the click's sums when every
/// phase that waited measured them.
fn note(cost: &mut ToolCost, phases: &[(PhaseKind, Option<f64>, Option<f64>)]) {
    for (kind, v, _) in phases {
        if let Some(v) = v {
            cost.phase_ms.push((*kind, *v));
        }
    }
    let tool: Option<Vec<f64>> = phases.iter().map(|(_, v, _)| *v).collect();
    let critical: Option<Vec<f64>> = phases.iter().map(|(_, _, c)| *c).collect();
    if let (Some(t), Some(c)) = (tool, critical) {
        cost.tool_ms.push(t.iter().sum());
        cost.critical_ms.push(c.iter().sum());
    }
}
