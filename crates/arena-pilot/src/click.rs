//! One click as a person makes it, and the waits for its loops.
//!
//! What one click sends (CDP `Input.dispatchMouseEvent`, trusted, left button, click
//! count 1), in order:
//!
//! 1. with `clicks.move_first`, a `mouseMoved` to the point, then a wait until the page has
//!    gone quiet (a hover repaint must not land in the press's window);
//! 2. `mousePressed` (buttons 1): the `mousedown` loop;
//! 3. by default, once the press's loop has ended (its answer painted, or the timeout),
//!    `mouseReleased` (buttons 0): the `mouseup` loop. With `clicks.hold_ms = N` the
//!    release goes N ms after the press instead, answered or not.
//!
//! Releasing after the press's answer is the default because a release sent back to back
//! shares the press's window: an app that answers only the press would hand its one reply
//! to both loops, and one that answers both in one frame could not say which input the
//! frame was for. A person holds a button for about 100 ms, longer than most answers, so
//! the default is also the shape the app sees from people. A key press is `keyDown` +
//! `keyUp` back to back (only `keydown` starts a loop).

use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use arena_browser::{Page, Quiet, RecordKind};
use arena_report::{Exit, ExitKind};
use arena_run::Outcome;

use crate::answer::AnswerRule;
use crate::cancel::Cancel;
use crate::collect::{drain_into, Collected, ToolCost};
use crate::pair::{pair, PairConfig};
use crate::plan::Plan;

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
}

/// How one wait for loops ended.
struct Phase {
    complete: bool,
    /// The tool's own time on this phase's critical path, ms (see [`ToolCost`]).
    tool_ms: Option<f64>,
}

impl Clicker<'_> {
    fn loop_event(&self, ev: &str) -> bool {
        self.plan.pilot.pacing.loop_events.iter().any(|e| e == ev)
    }

    /// Makes click `k` at page point `(x, y)` (or key press `k`) and waits for its loops.
    /// Returns whether every loop ended inside its window.
    pub async fn click(
        &self,
        k: usize,
        (x, y): (f64, f64),
        col: &mut Collected,
        cost: &mut ToolCost,
    ) -> Result<bool> {
        let stopped = |e: anyhow::Error| {
            anyhow!(Exit::new(
                ExitKind::TargetFailed,
                format!("browser stopped answering at click {}: {e:#}", k + 1)
            ))
        };
        let clicks = &self.plan.pilot.clicks;
        if !clicks.keys.is_empty() {
            let from = col.records.len();
            let t = Instant::now();
            let key = &clicks.keys[k % clicks.keys.len()];
            self.page.key(key).await.map_err(stopped)?;
            cost.click_ms.push(ms(t.elapsed()));
            let expect = self.plan.loops_per_click as usize;
            let p = self
                .wait_loops(col, from, expect, self.plan.settle, t, cost)
                .await?;
            note(cost, &[p.tool_ms]);
            return Ok(p.complete);
        }
        if clicks.move_first {
            self.page.move_to(x, y).await.map_err(stopped)?;
            self.settle_after_move(col, cost).await?;
        }
        let from = col.records.len();
        let t = Instant::now();
        self.page.press(x, y).await.map_err(stopped)?;
        let mut dispatch = t.elapsed();
        let press = match clicks.hold_ms {
            Some(h) => {
                self.cancel.sleep(Duration::from_millis(h)).await;
                None
            }
            None if self.loop_event("mousedown") && self.judge.answer == AnswerRule::Frame => {
                Some(self.wait_answer(t, cost).await?)
            }
            None if self.loop_event("mousedown") => Some(
                self.wait_loops(col, from, 1, Duration::ZERO, t, cost)
                    .await?,
            ),
            None => None,
        };
        let t2 = Instant::now();
        self.page.release(x, y).await.map_err(stopped)?;
        dispatch += t2.elapsed();
        cost.click_ms.push(ms(dispatch));
        let expect = self.plan.loops_per_click as usize;
        let release = self
            .wait_loops(col, from, expect, self.plan.settle, t2, cost)
            .await?;
        let complete = release.complete && press.as_ref().is_none_or(|p| p.complete);
        let mut phases: Vec<Option<f64>> = press.iter().map(|p| p.tool_ms).collect();
        phases.push(release.tool_ms);
        note(cost, &phases);
        Ok(complete)
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

    /// Waits for the page oracle's verdict on the press just dispatched, without a drain:
    /// the press's records are judged with the release's.
    async fn wait_answer(&self, dispatched: Instant, cost: &mut ToolCost) -> Result<Phase> {
        let left = (dispatched + self.plan.timeout()).saturating_duration_since(Instant::now());
        let verdict = tokio::select! {
            v = self.page.wait_answer(left) => v.map_err(stopped_waiting)?,
            _ = self.cancel.cancelled() => None,
        };
        cost.waits += 1;
        Ok(match verdict {
            Some((t_in, Some(t_answer))) => Phase {
                complete: true,
                tool_ms: Some(ms(dispatched.elapsed()) - (t_answer - t_in)),
            },
            _ => Phase {
                complete: false,
                tool_ms: None,
            },
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
        let mut tool_ms = None;
        while Instant::now() < deadline && !self.cancel.is_cancelled() {
            let left = deadline.saturating_duration_since(Instant::now());
            let quiet = tokio::select! {
                q = self.page.wait_quiet(settle, left) => q.map_err(stopped_waiting)?,
                _ = self.cancel.cancelled() => break,
            };
            cost.waits += 1;
            if quiet == Quiet::Unsupported {
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
                    tool_ms = phase_tool_ms(dispatched.elapsed(), quiet_ms, &col.records[from..]);
                    break;
                }
                Quiet::TimedOut => break,
                Quiet::Unsupported if complete && last_recv.elapsed() >= settle => break,
                _ => {}
            }
        }
        Ok(Phase { complete, tool_ms })
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

/// The tool's time on one phase's critical path: from its dispatch to the end of its last
/// drain, less the page's own time from the phase's input to the moment it went quiet.
fn phase_tool_ms(wall: Duration, quiet_ms: f64, records: &[arena_browser::Record]) -> Option<f64> {
    let t_in = records
        .iter()
        .rev()
        .find(|r| r.kind == RecordKind::Input && r.trusted)
        .map(|r| r.t_ms)?;
    Some(ms(wall) - (quiet_ms - t_in))
}

/// One click's tool cost: the sum of its phases, when every phase that waited measured it.
fn note(cost: &mut ToolCost, phases: &[Option<f64>]) {
    let measured: Option<Vec<f64>> = phases.iter().copied().collect();
    if let Some(v) = measured {
        cost.critical_ms.push(v.iter().sum());
    }
}
