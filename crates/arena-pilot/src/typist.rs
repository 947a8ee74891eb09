//! Typing: the keys of `[typing]` sent as a person types them (an interval per key) or in
//! one burst, each keydown a loop closed by the first frame whose pixels changed in its
//! glyph's region (`crates/arena-browser/assets/recorder.js`, `typeRegions`). Keys are
//! never waited for one by one: a person does not wait for a glyph before the next key,
//! and a burst is Typometer's asynchronous mode. Each key's watch is its own region, so
//! one frame that shows several glyphs answers each of their keys.

use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use arena_browser::Page;
use arena_report::{Exit, ExitKind};
use arena_run::AnswerInfo;

use crate::answer::AnswerRule;
use crate::click::Clicker;
use crate::collect::{Collected, PhaseKind, ToolCost};
use crate::type_spec::{GlyphRegion, TypeMode, TypingPlan};

/// At a person's pace, a sham watch of the coming key's region before every this many
/// keys: the control that a caret blinking beside the glyph does not answer.
const SHAM_EVERY: usize = 4;

/// The shortest sham watch, ms: long enough to see a caret blinking at a few Hz.
const SHAM_MIN_MS: f64 = 100.0;

/// Before any key: every key's region must be readable on the typing canvas (exit 2 naming
/// the key that set it otherwise); then the page learns the regions, in key order.
pub(crate) async fn resolve_typing_answer(
    page: &Page,
    source: &str,
    t: &TypingPlan,
) -> Result<(AnswerRule, AnswerInfo)> {
    let key = match t.region {
        GlyphRegion::Fixed(_) => "typing.rect",
        GlyphRegion::Line { .. } => "typing.area",
    };
    let cells = t.region.cells().min(t.regions.len());
    for r in &t.regions[..cells] {
        if let Err(why) = page.probe_region(*r).await {
            let key = if format!("{why}").starts_with("no canvas") {
                "typing.canvas"
            } else {
                key
            };
            return Err(anyhow!(Exit::bad_input(format!(
                "{source}: `{key}`: region {r:?} is not on the target canvas `{}`: {why:#}",
                t.canvas
            ))));
        }
    }
    page.type_regions(&t.regions).await?;
    let info = AnswerInfo {
        oracle: "pixels".into(),
        requested: "pixels".into(),
        detail: t.detail(),
        fallback: None,
    };
    Ok((AnswerRule::Frame, info))
}

/// Types every key of the plan, then waits until every key's loop has ended and the
/// socket is quiet (or the window after the last key has passed). Returns the keys sent.
pub(crate) async fn type_all(
    clicker: &Clicker<'_>,
    t: &TypingPlan,
    col: &mut Collected,
    cost: &mut ToolCost,
) -> Result<u64> {
    let (page, plan) = (clicker.page, clicker.plan);
    let from = col.records.len();
    let mut due = Instant::now();
    let mut last = Instant::now();
    for (k, key) in t.keys.iter().enumerate() {
        if clicker.cancel.is_cancelled() {
            return Err(anyhow!(Exit::new(
                ExitKind::Interrupted,
                format!("interrupted after {k} of {} keys", t.keys.len())
            )));
        }
        if let TypeMode::Pace { interval_ms } = t.mode {
            if k % SHAM_EVERY == SHAM_EVERY - 1 {
                sham(page, t.regions[k], interval_ms, plan.timeout_ms, col).await?;
            }
            clicker.cancel.sleep_until_exactly(due).await;
            clicker.timing.phase_pause().await;
        }
        last = Instant::now();
        page.key(key).await.map_err(|e| {
            anyhow!(Exit::new(
                ExitKind::TargetFailed,
                format!("browser stopped answering at key {}: {e:#}", k + 1)
            ))
        })?;
        let took = last.elapsed().as_secs_f64() * 1e3;
        cost.dispatch_ms.push((PhaseKind::Key, took));
        cost.click_ms.push(took);
        if let TypeMode::Pace { interval_ms } = t.mode {
            due = last + Duration::from_millis(interval_ms);
        }
    }
    let n = t.keys.len();
    clicker.wait_ended(col, from, n, last, cost).await?;
    Ok(n as u64)
}

/// A sham watch of `region` with no key, as long as a key's pace (at least
/// [`SHAM_MIN_MS`], at most the window), booked with the run's other sham watches.
async fn sham(
    page: &Page,
    region: [f64; 4],
    interval_ms: u64,
    timeout_ms: u64,
    col: &mut Collected,
) -> Result<()> {
    let window_ms = (interval_ms as f64).clamp(SHAM_MIN_MS, timeout_ms.max(1) as f64);
    let seen = page
        .sham_rect(region, Duration::from_secs_f64(window_ms / 1e3))
        .await
        .map_err(|e| {
            anyhow!(Exit::new(
                ExitKind::TargetFailed,
                format!("browser stopped answering: {e:#}")
            ))
        })?;
    if let Some(changed) = seen {
        col.shams.push((window_ms, changed));
    }
    Ok(())
}
