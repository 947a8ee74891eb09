//! What a run collects from the page: the drained records with the accounting that
//! travels with them, and the tool's own cost.

use std::time::Instant;

use anyhow::Result;
use arena_browser::{Drain, Page, Record};

/// Which input a phase of a click waited on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseKind {
    Press,
    Release,
    Key,
}

/// Measurements of the tool itself during a run (for the benchmark).
#[derive(Debug, Clone, Default)]
pub struct ToolCost {
    /// Wall time of each click's CDP dispatch (mousePressed + mouseReleased), ms.
    pub click_ms: Vec<f64>,
    /// Wall time of each drain (Runtime.evaluate + decode), ms.
    pub drain_ms: Vec<f64>,
    /// Waits for a click's answer: in the page (one pending evaluation each) or, where
    /// the page cannot tell, poll intervals.
    pub waits: u64,
    /// Per answered click, the tool's own time, ms: over its phases (press, release; or
    /// a key), from the start of each CDP dispatch to the moment the tool learnt the page
    /// had gone quiet, less the page's time from the input event to that quiet. That is
    /// input delivery plus learning of the answer; CDP time that overlaps the app's own
    /// work is not counted.
    pub tool_ms: Vec<f64>,
    /// Per answered click, the part of `tool_ms` on the click's critical path, ms: the time
    /// the next input waited on the tool. A press's tool time that a person's hold
    /// outlasted delayed nothing (the release was due later anyway); a release's delays
    /// the next click in full.
    pub critical_ms: Vec<f64>,
    /// Each phase's tool time (press, release or key), ms, and each dispatch's own CDP
    /// round trip.
    pub phase_ms: Vec<(PhaseKind, f64)>,
    pub dispatch_ms: Vec<(PhaseKind, f64)>,
    /// Wall time of the whole run, from target start to folder written, ms.
    pub wall_ms: f64,
    /// Wall time of the click loop only, ms.
    pub clicking_ms: f64,
    /// Waits whose window ended before the socket had been quiet for `settle`: the next
    /// input went anyway, with something still in flight.
    pub quiet_lapses: u64,
    /// The page time of each lapse where the page's clock is mapped: the next input after
    /// it is marked `after_lapse`.
    pub lapse_at: Vec<f64>,
}

/// Accumulates drains and the accounting that travels with them.
#[derive(Default)]
pub(crate) struct Collected {
    pub records: Vec<Record>,
    pub dropped: u64,
    pub cleared_at_seq: Option<u64>,
    pub source: Option<arena_browser::SocketSource>,
    /// The largest clock-map error any drain of CDP-seen sockets reported, ms.
    pub clock_error_ms: Option<f64>,
    /// Input-to-answer times the page reported while the clicks ran (presses and releases
    /// waited for on its word), ms: the sham watches' window is their p90.
    pub answer_ms: Vec<f64>,
    /// Sham watches: each one's window (ms) and whether its pixels changed.
    pub shams: Vec<(f64, bool)>,
}

impl Collected {
    fn take(&mut self, d: Drain) -> usize {
        self.dropped += d.dropped;
        self.cleared_at_seq.get_or_insert(d.cleared_at_seq);
        if let Some(e) = d.clock_error_ms {
            self.clock_error_ms = Some(self.clock_error_ms.map_or(e, |c: f64| c.max(e)));
        }
        if self.source.is_none()
            || d.records.iter().any(|r| {
                matches!(
                    r.kind,
                    arena_browser::RecordKind::WsSend | arena_browser::RecordKind::WsRecv
                )
            })
        {
            self.source = Some(d.socket_source);
        }
        let n = d.records.len();
        self.records.extend(d.records);
        n
    }
}

pub(crate) async fn drain_into(
    page: &Page,
    c: &mut Collected,
    cost: &mut ToolCost,
) -> Result<usize> {
    let t = Instant::now();
    let d = page.drain().await?;
    cost.drain_ms.push(t.elapsed().as_secs_f64() * 1e3);
    Ok(c.take(d))
}
