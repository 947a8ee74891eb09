//! Preparing the page before the first measured click: the canvas is there, the pilot
//! file's setup steps have run (their records are cleared with the recorder), and every
//! click point lies inside the viewport.

use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use arena_browser::{Drain, Page, Record, SocketChoice};
use arena_report::{Exit, ExitKind};

use crate::cancel::Cancel;
use crate::plan::Plan;

/// What the page recorded before the clear on attach, kept by every drain of the setup
/// (the frame tables' cold window), and what the ring overwrote of it.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    pub records: Vec<Record>,
    pub dropped: u64,
}

impl Kept {
    pub(crate) fn take(&mut self, d: Drain) {
        self.dropped += d.dropped;
        self.records.extend(d.records);
    }
}

/// Drains the page (keeping the records) and returns (payload bytes received, whether any
/// message arrived).
async fn received_since_last_drain(page: &Page, kept: &mut Kept) -> Result<(u64, bool)> {
    let d = page.drain().await?;
    let recvs = d
        .records
        .iter()
        .filter(|r| r.kind == arena_browser::RecordKind::WsRecv);
    let (mut bytes, mut any) = (0u64, false);
    for r in recvs {
        bytes += u64::from(r.size);
        any = true;
    }
    kept.take(d);
    Ok((bytes, any))
}

/// Setup steps: waits drain the recorder to watch received bytes (those records predate
/// the clear: kept in `kept`, never paired).
pub(crate) async fn run_setup(
    page: &Page,
    plan: &Plan<'_>,
    cancel: &Cancel,
    kept: &mut Kept,
) -> Result<()> {
    let mut received: u64 = 0;
    let mut last_recv = Instant::now();
    for (i, step) in plan.setup.iter().enumerate() {
        let limit = Duration::from_millis(step.timeout_ms.unwrap_or(15_000));
        let start = Instant::now();
        let what = format!("{}: setup[{i}]", plan.source);
        let waiting = step.wait_bytes.is_some() || step.quiet_ms.is_some();
        // A wait step loops until its condition holds; other steps act once.
        if waiting {
            loop {
                // Drain before judging, so messages that arrived during an earlier step count.
                let (bytes, any) = received_since_last_drain(page, kept).await?;
                received += bytes;
                if any {
                    last_recv = Instant::now();
                }
                let done = match (step.wait_bytes, step.quiet_ms) {
                    (Some(n), _) => received >= n,
                    (_, Some(q)) => last_recv.elapsed() >= Duration::from_millis(q),
                    _ => true,
                };
                if done {
                    break;
                }
                if cancel.is_cancelled() {
                    return Err(anyhow!(Exit::new(
                        ExitKind::Interrupted,
                        "interrupted during setup"
                    )));
                }
                if start.elapsed() > limit {
                    let msg = match (step.wait_bytes, step.quiet_ms) {
                        (Some(n), _) => format!(
                            "{what}: waited {} ms for {n} bytes, got {received}{}",
                            limit.as_millis(),
                            if received == 0 && plan.recorder.sockets == SocketChoice::PageHook {
                                " (the recorder watches only the page's own WebSocket, `recorder.sockets = \"page_hook\"`: a socket in a Web Worker is seen with \"auto\" or \"cdp\")"
                            } else {
                                ""
                            }
                        ),
                        (_, q) => format!(
                            "{what}: no {} ms without a WebSocket message within {} ms",
                            q.unwrap_or(0),
                            limit.as_millis()
                        ),
                    };
                    return Err(anyhow!(Exit::new(ExitKind::TargetFailed, msg)));
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            continue;
        }
        if let Some([fx, fy]) = step.click {
            let rect = page.canvas_rect(&plan.canvas).await?;
            let (x, y) = rect.page_fraction(fx, fy);
            page.click(x, y).await.with_context(|| what.clone())?;
        } else if let Some(k) = &step.key {
            page.key(k).await.with_context(|| what.clone())?;
        } else if let Some(js) = &step.eval {
            page.eval_json(js).await.with_context(|| what.clone())?;
        }
    }
    Ok(())
}

/// Waits until the canvas exists (the page script has run).
pub(crate) async fn wait_canvas(
    page: &Page,
    plan: &Plan<'_>,
    cancel: &Cancel,
) -> Result<arena_browser::CanvasRect> {
    let start = Instant::now();
    loop {
        match page.canvas_rect(&plan.canvas).await {
            Ok(r) if r.width > 0.0 && r.height > 0.0 => return Ok(r),
            Err(e) if e.downcast_ref::<arena_browser::SeveralCanvases>().is_some() => {
                return Err(anyhow!(Exit::bad_input(format!(
                    "{}: `target.canvas`: {e}",
                    plan.source
                ))))
            }
            Ok(_) | Err(_)
                if start.elapsed() < Duration::from_secs(15) && !cancel.is_cancelled() =>
            {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            Ok(_) => {
                return Err(anyhow!(Exit::new(
                    ExitKind::TargetFailed,
                    format!("canvas `{}` has no size on the page", plan.canvas)
                )))
            }
            Err(e) => {
                return Err(anyhow!(Exit::new(
                    if cancel.is_cancelled() {
                        ExitKind::Interrupted
                    } else {
                        ExitKind::TargetFailed
                    },
                    format!("canvas `{}` not found on the page: {e:#}", plan.canvas)
                )))
            }
        }
    }
}

/// Every click must land inside the viewport, or it reaches no element and every loop of
/// the run would read as unanswered for a reason that has nothing to do with the target.
pub(crate) async fn check_viewport(
    page: &Page,
    plan: &Plan<'_>,
    rect: &arena_browser::CanvasRect,
) -> Result<()> {
    if !plan.keys.is_empty() {
        return Ok(());
    }
    let v = page.eval_json("[innerWidth, innerHeight]").await?;
    let (w, h) = match (
        v.get(0).and_then(|x| x.as_f64()),
        v.get(1).and_then(|x| x.as_f64()),
    ) {
        (Some(w), Some(h)) => (w, h),
        _ => return Ok(()),
    };
    for &(fx, fy) in &plan.positions {
        let (x, y) = rect.page_fraction(fx, fy);
        if x < 0.0 || y < 0.0 || x >= w || y >= h {
            return Err(anyhow!(Exit::bad_input(format!(
                "{}: `clicks.region`: a click at canvas fraction ({fx:.3}, {fy:.3}) lands at page ({x:.0}, {y:.0}), outside the {w:.0}x{h:.0} viewport; shrink the region",
                plan.source
            ))));
        }
    }
    Ok(())
}

/// The person's browser as the page sees it, for `run.json`: an arm's setting the page does
/// not show was not applied, and the run would measure another browser under its name.
pub(crate) async fn read_browser(
    page: &Page,
    plan: &Plan<'_>,
) -> Result<arena_run::BrowserSettings> {
    let v = page
        .eval_json("[devicePixelRatio, innerWidth, innerHeight]")
        .await?;
    let num = |i: usize| v.get(i).and_then(|x| x.as_f64());
    let (Some(dpr), Some(w), Some(h)) = (num(0), num(1), num(2)) else {
        return Err(anyhow!(
            "the page did not say its devicePixelRatio and viewport: {v}"
        ));
    };
    let asked = plan.emulation.unwrap_or_default();
    let mut off = Vec::new();
    if let Some(d) = asked.dpr.filter(|d| (d - dpr).abs() > 1e-6) {
        off.push(format!("dpr {d} (the page has {dpr})"));
    }
    if let Some((aw, ah)) = asked
        .viewport
        .filter(|&(aw, ah)| (f64::from(aw), f64::from(ah)) != (w, h))
    {
        off.push(format!("viewport {aw}x{ah} (the page has {w}x{h})"));
    }
    if !off.is_empty() {
        return Err(anyhow!(Exit::new(
            ExitKind::TargetFailed,
            format!(
                "arm `{}`: the browser did not take its {}",
                plan.arm_name,
                off.join(", ")
            )
        )));
    }
    Ok(arena_run::BrowserSettings {
        dpr,
        viewport_w: w.max(0.0).min(f64::from(u32::MAX)) as u32,
        viewport_h: h.max(0.0).min(f64::from(u32::MAX)) as u32,
        cpu_throttle: asked.cpu_throttle.unwrap_or(1.0),
        headful: None,
    })
}
