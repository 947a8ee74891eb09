//! The idle stage (`--idle S`, and `watch`): the page is left alone for S seconds and every
//! message the target sends is kept with how alike it was to the one before (in bytes and
//! in the pixels it left on the canvas; `assets/recorder.js`, "the idle window"). Its
//! records are a population of their own: drained at the end, never paired, and the
//! pilot clears again after it, so the loops' window starts with the first click.

use std::time::{Duration, SystemTime};

use anyhow::{anyhow, Context, Result};
use arena_browser::{IdleReport, Page, Record, RecordKind};
use arena_report::{Exit, ExitKind};
use arena_run::{rfc3339_utc, IdleFrame, IdleWindow};

use crate::cancel::Cancel;
use crate::plan::Plan;

/// The pilot's idle stage: nothing without `--idle`; with it, the window, then a clear.
pub(crate) async fn idle_stage(
    page: &Page,
    plan: &Plan<'_>,
    cancel: &Cancel,
) -> Result<Option<IdleWindow>> {
    let Some(length) = plan.idle else {
        return Ok(None);
    };
    let canvas = Some(plan.canvas.as_str());
    let (window, _) = idle_window(page, canvas, length, cancel).await?;
    page.clear()
        .await
        .context("clearing the recorder after the idle window")?;
    Ok(Some(window))
}

/// One idle window on `page`: opened now, closed after `length` (or at an interruption,
/// exit 130), then drained. Returns the window and the records it drained.
pub async fn idle_window(
    page: &Page,
    canvas: Option<&str>,
    length: Duration,
    cancel: &Cancel,
) -> Result<(IdleWindow, Vec<Record>)> {
    let started = SystemTime::now();
    page.idle_start(canvas)
        .await
        .context("opening the idle window")?;
    cancel.sleep(length).await;
    let report = page.idle_stop().await.context("closing the idle window")?;
    let ended = SystemTime::now();
    let drain = page.drain().await.context("draining the idle window")?;
    if cancel.is_cancelled() {
        return Err(anyhow!(Exit::new(
            ExitKind::Interrupted,
            "interrupted in the idle window"
        )));
    }
    let mut w = window_of(&report, &drain.records, length);
    w.started_at = rfc3339_utc(started);
    w.ended_at = rfc3339_utc(ended);
    Ok((w, drain.records))
}

/// The window from the page's report and the records drained with it: every message
/// received between its bounds, with its likeness to the one before in percent. Pixels
/// judge where the canvas could be read (what the player saw), bytes otherwise.
pub fn window_of(report: &IdleReport, records: &[Record], length: Duration) -> IdleWindow {
    let pct = |v: Option<f64>| v.map(|x| (x * 100.0).clamp(0.0, 100.0));
    let frames = records
        .iter()
        .filter(|r| r.kind == RecordKind::WsRecv && r.t_ms >= report.t0 && r.t_ms <= report.t1)
        .map(|r| {
            let at = report.seq.iter().position(|&s| s == r.seq);
            let pixels = report.pixels.as_ref();
            IdleFrame {
                seq: r.seq,
                t_ms: r.t_ms,
                size: r.size,
                bytes_pct: pct(at.and_then(|i| report.bytes.get(i).copied().flatten())),
                pixels_pct: pct(at.and_then(|i| pixels.and_then(|p| p.get(i).copied().flatten()))),
            }
        })
        .collect();
    IdleWindow {
        requested_s: length.as_secs_f64(),
        start_ms: report.t0,
        end_ms: report.t1,
        started_at: String::new(),
        ended_at: String::new(),
        similarity: if report.pixels.is_some() {
            "pixels"
        } else {
            "bytes"
        }
        .into(),
        pixels_unavailable: report.pixels_why.clone(),
        bytes_unavailable: report.bytes_why.clone(),
        pixel_checks: report.checks,
        pixel_check_ms: report.check_ms,
        frames,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_browser::SendClass;

    fn recv(seq: u64, t_ms: f64, size: u32) -> Record {
        Record {
            seq,
            kind: RecordKind::WsRecv,
            t_ms,
            size,
            class: SendClass::Other,
            event: "binary".into(),
            trusted: true,
            target: 0,
            answers: None,
        }
    }

    #[test]
    fn frames_inside_the_window_get_their_likeness_in_percent() {
        let report = IdleReport {
            t0: 100.0,
            t1: 600.0,
            seq: vec![5, 7],
            bytes: vec![None, Some(0.95)],
            pixels: Some(vec![Some(0.9999), Some(1.0)]),
            ..IdleReport::default()
        };
        let recs = [recv(3, 90.0, 10), recv(5, 200.0, 73), recv(7, 700.0, 73)];
        let w = window_of(&report, &recs, Duration::from_millis(500));
        assert_eq!(
            w.frames.len(),
            1,
            "the receipt before and after are outside"
        );
        assert_eq!(w.frames[0].pixels_pct, Some(99.99));
        assert_eq!(w.frames[0].bytes_pct, None);
        assert_eq!(w.similarity, "pixels");
        let mut bytes_only = report.clone();
        bytes_only.pixels = None;
        bytes_only.t1 = 800.0;
        let w = window_of(&bytes_only, &recs, Duration::from_millis(700));
        assert_eq!(w.similarity, "bytes");
        assert_eq!(w.frames[1].bytes_pct, Some(95.0));
        assert_eq!(w.frames[1].pixels_pct, None);
    }
}
