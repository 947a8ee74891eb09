//! Chromium's own trace of a tab's session (CDP `Tracing`), returned as a stream and read
//! back with `IO.read`, so a long trace never floods the CDP event channel.
//!
//! Trace timestamps (`ts`, µs) are CLOCK_MONOTONIC, the clock [`crate::monotonic_ms`]
//! reads; the page clock (`performance.now()`) is that clock less the page's time origin.
//! [`Page::trace_align`] measures the difference from the trace itself.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::io::{CloseParams, ReadParams};
use chromiumoxide::cdp::browser_protocol::tracing::{
    EndParams, EventTracingComplete, StartParams, StartTransferMode, StreamFormat, TraceConfig,
    TraceConfigRecordMode,
};
use futures::StreamExt;
use serde_json::Value;

use crate::cdp_call::cdp;
use crate::page::Page;

/// The categories a latency trace needs: the renderer's input dispatch, animation frames
/// and paints (`devtools.timeline`), the input pipeline and its latency flows (`input`,
/// `latencyInfo`, `benchmark`), the page's own `performance.mark`s (`blink.user_timing`,
/// which [`Page::trace_align`] uses), task boundaries (`toplevel`), the compositor's
/// frames, and each frame's way to the display and its presentation
/// (`graphics.pipeline`, `disabled-by-default-display.framedisplayed`): `benchmark`
/// enables both today, and naming them keeps the presentations if it ever stops.
pub const TRACE_CATEGORIES: &[&str] = &[
    "devtools.timeline",
    "disabled-by-default-devtools.timeline.frame",
    "input",
    "latencyInfo",
    "benchmark",
    "blink.user_timing",
    "toplevel",
    "graphics.pipeline",
    "disabled-by-default-display.framedisplayed",
];

/// The name of the page marks that align the page clock with the trace clock.
pub const ALIGN_MARK: &str = "arena-align";

/// A finished trace.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// The trace events, as Chromium wrote them (Chrome trace event format).
    pub events: Vec<Value>,
    /// Bytes of JSON read back from the browser.
    pub bytes: u64,
    /// Chromium said some trace data was lost (its buffer filled).
    pub data_loss: bool,
    /// Wall time from `Tracing.end` to the last byte read, ms.
    pub collect_ms: f64,
}

/// One alignment mark: the page's `startTime` and the trace's `ts` of the same mark.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlignMark {
    /// `performance.mark(...).startTime`, page clock, ms.
    pub page_ms: f64,
    /// The mark's trace event, trace clock, ms.
    pub trace_ms: f64,
    /// Process and thread of the mark's trace event (the page's renderer main thread).
    pub pid: i64,
    pub tid: i64,
}

impl AlignMark {
    /// trace clock - page clock, ms.
    pub fn offset_ms(&self) -> f64 {
        self.trace_ms - self.page_ms
    }
}

impl Page {
    /// Starts Chromium's trace of this tab's session with `categories` (see
    /// [`TRACE_CATEGORIES`]); the data stays in the browser until [`Page::trace_end`].
    pub async fn trace_start(&self, categories: &[&str]) -> Result<()> {
        let config = TraceConfig::builder()
            .record_mode(TraceConfigRecordMode::RecordAsMuchAsPossible)
            .included_categories(categories.iter().map(|c| c.to_string()))
            .build();
        let params = StartParams::builder()
            .transfer_mode(StartTransferMode::ReturnAsStream)
            .stream_format(StreamFormat::Json)
            .trace_config(config)
            .build();
        cdp(
            self.cdp_timeout(),
            "Tracing.start",
            self.cdp_page().execute(params),
        )
        .await?;
        Ok(())
    }

    /// Ends the trace and reads it back whole.
    pub async fn trace_end(&self) -> Result<Trace> {
        let t0 = Instant::now();
        let limit = self.cdp_timeout();
        let mut done = cdp(
            limit,
            "listen for Tracing.tracingComplete",
            self.cdp_page().event_listener::<EventTracingComplete>(),
        )
        .await?;
        cdp(limit, "Tracing.end", self.cdp_page().execute(EndParams {})).await?;
        // Chromium flushes every process's buffer before it says the trace is complete.
        let complete = tokio::time::timeout(limit * 3, done.next())
            .await
            .map_err(|_| {
                anyhow!(
                    "no Tracing.tracingComplete within {} ms",
                    (limit * 3).as_millis()
                )
            })?
            .ok_or_else(|| anyhow!("the tab closed before its trace was complete"))?;
        let handle = complete
            .stream
            .clone()
            .context("Tracing.tracingComplete named no stream")?;
        let mut text = Vec::new();
        loop {
            let chunk = cdp(
                limit,
                "IO.read",
                self.cdp_page().execute(
                    ReadParams::builder()
                        .handle(handle.clone())
                        .size(1 << 20)
                        .build()
                        .map_err(|e| anyhow!("IO.read parameters: {e}"))?,
                ),
            )
            .await?;
            if chunk.base64_encoded == Some(true) {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(chunk.data.as_bytes())
                    .context("decoding a base64 trace chunk")?;
                text.extend_from_slice(&bytes);
            } else {
                text.extend_from_slice(chunk.data.as_bytes());
            }
            if chunk.eof {
                break;
            }
        }
        let _ = cdp(
            limit,
            "IO.close",
            self.cdp_page().execute(CloseParams::new(handle)),
        )
        .await;
        let events = parse_trace(&text)?;
        Ok(Trace {
            events,
            bytes: text.len() as u64,
            data_loss: complete.data_loss_occurred,
            collect_ms: t0.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// Makes `n` page marks, one evaluation each (so they fall at different moments),
    /// each named [`ALIGN_MARK`] and a number of its own, and returns their names and page
    /// times. With a trace running, each is also a `blink.user_timing` event on the trace
    /// clock: [`align_marks`] pairs them.
    pub async fn trace_marks(&self, n: usize) -> Result<Vec<(String, f64)>> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let name = format!("{ALIGN_MARK}-{}", NEXT_MARK.fetch_add(1, Ordering::Relaxed));
            let v = self
                .eval_json(&format!("performance.mark({name:?}).startTime"))
                .await?;
            let t = v
                .as_f64()
                .ok_or_else(|| anyhow!("performance.mark gave {v}"))?;
            out.push((name, t));
            // Apart by more than the page clock's 100 us step, so they sample its phase.
            tokio::time::sleep(Duration::from_micros(700)).await;
        }
        Ok(out)
    }
}

static NEXT_MARK: AtomicU64 = AtomicU64::new(0);

/// Reads a JSON trace: `{"traceEvents": [...]}` or a bare array.
pub fn parse_trace(text: &[u8]) -> Result<Vec<Value>> {
    let v: Value = serde_json::from_slice(text).context("the trace is not JSON")?;
    match v {
        Value::Array(a) => Ok(a),
        Value::Object(mut o) => match o.remove("traceEvents") {
            Some(Value::Array(a)) => Ok(a),
            _ => bail!("the trace has no traceEvents array"),
        },
        _ => bail!("the trace is neither an object nor an array"),
    }
}

/// Pairs the page's alignment marks (name, page time) with their trace events. Marks the
/// trace lacks are left out.
pub fn align_marks(events: &[Value], marks: &[(String, f64)]) -> Vec<AlignMark> {
    let mut seen: HashMap<&str, (f64, i64, i64)> = HashMap::new();
    for e in events {
        let Some(name) = e.get("name").and_then(Value::as_str) else {
            continue;
        };
        if !name.starts_with(ALIGN_MARK) {
            continue;
        }
        let user_timing = e
            .get("cat")
            .and_then(Value::as_str)
            .is_some_and(|c| c.contains("blink.user_timing"));
        let (Some(ts), true) = (e.get("ts").and_then(Value::as_f64), user_timing) else {
            continue;
        };
        let pid = e.get("pid").and_then(Value::as_i64).unwrap_or(0);
        let tid = e.get("tid").and_then(Value::as_i64).unwrap_or(0);
        seen.entry(name).or_insert((ts / 1e3, pid, tid));
    }
    marks
        .iter()
        .filter_map(|(name, page_ms)| {
            let &(trace_ms, pid, tid) = seen.get(name.as_str())?;
            Some(AlignMark {
                page_ms: *page_ms,
                trace_ms,
                pid,
                tid,
            })
        })
        .collect()
}
