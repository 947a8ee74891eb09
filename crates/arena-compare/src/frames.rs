//! Frame tables per run, from the page's own receipts (`ws_recv` records), in the field
//! notes' layout: frames, total, p50/p90/p99 frame, largest, and the first-paint burst;
//! wire figures beside them when the run was captured.
//!
//! A run has two windows. **cold** is what the page received from navigation to the clear
//! on attach (the load and the setup steps, `setup_events.jsonl`): a board's first paint
//! lands here. **warm** is the measured window after the clear (`events.jsonl`): the
//! clicks' replies, with every constant the board needs already held by the page.
//!
//! The **first-paint burst** is the heaviest group of cold receipts that follow each other
//! with gaps under `gap_ms` (1 s by default): a first paint is one board's worth of frames
//! arriving back to back (the fixture's is one 672 KB message; the notes' three frames came
//! 620 and 682 ms apart), while lounge chatter before it is small, so the group with the
//! most bytes is the board whatever the target. A periodic small frame closer than the gap
//! joins it, which moves its bytes by that frame's size only. Its start is page time, which
//! counts from the navigation (`performance.now()`). The warm window has no burst by this
//! definition; its largest frame says whether a board was sent again.

use arena_report::{fmt_bytes, fmt_count, fmt_ms, Cell, Column, Table};
use arena_run::{Event, Run, WireDirection};
use arena_stats::quantile_sorted;
use serde::Serialize;
use serde_json::Value;

/// The default gap that ends a burst, ms.
pub const BURST_GAP_MS: f64 = 1000.0;

/// One receipt: page time (ms) and payload bytes.
pub type Receipt = (f64, u64);

/// The receipts of one source (a run, or a watched page), by window.
#[derive(Debug, Clone, Default)]
pub struct FrameSource {
    pub name: String,
    /// Before the clear; `None` when not recorded (a run made before it was kept).
    pub cold: Option<Vec<Receipt>>,
    pub warm: Vec<Receipt>,
    /// What the wire carried server to client over the whole session, when captured.
    pub wire: Option<WireDirection>,
}

/// The receipts among `events`, in order.
pub fn receipts(events: &[Event]) -> Vec<Receipt> {
    events
        .iter()
        .filter(|e| e.kind == "ws_recv")
        .map(|e| (e.t_ms, e.size as u64))
        .collect()
}

impl FrameSource {
    /// A run's two windows (`name` is its column, e.g. `stock, run 1`).
    pub fn of_run(name: String, run: &Run) -> FrameSource {
        FrameSource {
            name,
            cold: run.setup_events.as_deref().map(receipts),
            warm: receipts(&run.events),
            wire: run
                .meta
                .wire
                .as_ref()
                .and_then(|w| w.server_to_client.clone()),
        }
    }
}

/// Runs named as `compare --by run` names them: `<arm>, run N`.
pub fn run_sources(runs: &[Run]) -> Vec<FrameSource> {
    crate::group::numbered_runs(runs)
        .into_iter()
        .map(|(name, r)| FrameSource::of_run(name, r))
        .collect()
}

/// Frames, bytes and the size quantiles (type 7) of one window; serialized as
/// `docs/schema/frames.json` writes a window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameFigures {
    pub frames: u64,
    pub bytes: u64,
    #[serde(rename = "p50_bytes")]
    pub p50: Option<f64>,
    #[serde(rename = "p90_bytes")]
    pub p90: Option<f64>,
    #[serde(rename = "p99_bytes")]
    pub p99: Option<f64>,
    #[serde(rename = "largest_bytes")]
    pub largest: Option<u64>,
}

pub fn figures(r: &[Receipt]) -> FrameFigures {
    let mut sizes: Vec<f64> = r.iter().map(|x| x.1 as f64).collect();
    sizes.sort_by(f64::total_cmp);
    FrameFigures {
        frames: r.len() as u64,
        bytes: r.iter().map(|x| x.1).sum(),
        p50: quantile_sorted(&sizes, 0.5),
        p90: quantile_sorted(&sizes, 0.9),
        p99: quantile_sorted(&sizes, 0.99),
        largest: r.iter().map(|x| x.1).max(),
    }
}

/// The first-paint burst (see the module's words).
#[derive(Debug, Clone, PartialEq)]
pub struct Burst {
    pub frames: u64,
    pub bytes: u64,
    /// Page time of its first and last receipt, ms since navigation.
    pub start_ms: f64,
    pub end_ms: f64,
}

pub fn first_paint_burst(r: &[Receipt], gap_ms: f64) -> Option<Burst> {
    let mut best: Option<Burst> = None;
    let mut cur: Option<Burst> = None;
    for &(t, size) in r {
        cur = match cur {
            Some(mut b) if t - b.end_ms < gap_ms => {
                b.frames += 1;
                b.bytes += size;
                b.end_ms = t;
                Some(b)
            }
            done => {
                best = heavier(best, done);
                Some(Burst {
                    frames: 1,
                    bytes: size,
                    start_ms: t,
                    end_ms: t,
                })
            }
        };
    }
    heavier(best, cur)
}

fn heavier(a: Option<Burst>, b: Option<Burst>) -> Option<Burst> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.bytes > a.bytes { b } else { a }),
        (a, b) => a.or(b),
    }
}

fn size_cell(v: Option<f64>) -> Cell {
    match v {
        Some(x) => Cell::num(fmt_bytes(x.round() as u64), x),
        None => Cell::text("-"),
    }
}

fn window_cells(f: &FrameFigures) -> Vec<Cell> {
    vec![
        Cell::num(fmt_count(f.frames as i64), f.frames as f64),
        Cell::num(fmt_bytes(f.bytes), f.bytes as f64),
        size_cell(f.p50),
        size_cell(f.p90),
        size_cell(f.p99),
        size_cell(f.largest.map(|x| x as f64)),
    ]
}

fn burst_cells(b: Option<&Burst>) -> Vec<Cell> {
    match b {
        Some(b) => vec![
            Cell::num(fmt_bytes(b.bytes), b.bytes as f64),
            Cell::num(fmt_count(b.frames as i64), b.frames as f64),
            Cell::num(fmt_ms(b.end_ms - b.start_ms), b.end_ms - b.start_ms),
            Cell::num(fmt_ms(b.start_ms), b.start_ms),
        ],
        None => (0..4).map(|_| Cell::text("-")).collect(),
    }
}

/// The frame table: per source a cold row, a warm row, and with a capture a row of what
/// the wire carried over the whole session.
pub fn frames_table(sources: &[FrameSource], gap_ms: f64) -> Table {
    let mut cols = vec![Column::left("run"), Column::left("window")];
    for c in [
        "frames",
        "total",
        "p50 frame",
        "p90 frame",
        "p99 frame",
        "largest",
        "first paint",
        "its frames",
        "its window",
        "its start",
    ] {
        cols.push(Column::right(c));
    }
    let mut t = Table::new(cols).with_title(format!(
        "frames received by the page, payload bytes; first paint: the heaviest burst of cold receipts with gaps under {}, its start in page time since navigation",
        fmt_ms(gap_ms)
    ));
    for s in sources {
        let lead = |w: &str| vec![Cell::text(s.name.clone()), Cell::text(w)];
        let mut row = lead("cold: load + setup");
        match &s.cold {
            Some(c) => {
                row.extend(window_cells(&figures(c)));
                row.extend(burst_cells(first_paint_burst(c, gap_ms).as_ref()));
            }
            None => row.extend((0..10).map(|_| Cell::text("not recorded"))),
        }
        t.push_row(row);
        let mut row = lead("warm: after the clear");
        row.extend(window_cells(&figures(&s.warm)));
        row.extend(burst_cells(None));
        t.push_row(row);
        if let Some(w) = &s.wire {
            let mut row = lead("wire, whole session");
            row.push(Cell::num(fmt_count(w.frames as i64), w.frames as f64));
            row.push(Cell::num(fmt_bytes(w.app_bytes), w.app_bytes as f64));
            row.extend((0..8).map(|_| Cell::text("-")));
            t.push_row(row);
        }
    }
    t.note("cold: navigation to the clear on attach (the load and the setup steps); warm: the measured window after it. The first paint is looked for in the cold window only.");
    t
}

/// A cold window's figures with its first-paint burst (`null` when it received nothing).
#[derive(Debug, Clone, Serialize)]
pub struct ColdDoc {
    #[serde(flatten)]
    pub figures: FrameFigures,
    pub first_paint: Option<BurstDoc>,
}

/// The first-paint burst as the documents write it.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct BurstDoc {
    pub bytes: u64,
    pub frames: u64,
    pub window_ms: f64,
    pub start_ms: f64,
}

/// `--format json` of the frame table (`docs/schema/frames.json`).
#[derive(Debug, Clone, Serialize)]
pub struct FramesDoc<'a> {
    pub burst_gap_ms: f64,
    pub runs: Vec<FrameRunDoc<'a>>,
}

/// One run's cold and warm windows and what the wire carried.
#[derive(Debug, Clone, Serialize)]
pub struct FrameRunDoc<'a> {
    pub run: &'a str,
    pub cold: Option<ColdDoc>,
    pub warm: FrameFigures,
    pub wire: Option<WireFramesDoc>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct WireFramesDoc {
    pub frames: u64,
    pub app_bytes: u64,
}

pub(crate) fn cold_doc(c: &[Receipt], gap_ms: f64) -> ColdDoc {
    ColdDoc {
        figures: figures(c),
        first_paint: first_paint_burst(c, gap_ms).map(|b| BurstDoc {
            bytes: b.bytes,
            frames: b.frames,
            window_ms: b.end_ms - b.start_ms,
            start_ms: b.start_ms,
        }),
    }
}

/// A cold window's figures with its first-paint burst, as a JSON value.
pub(crate) fn cold_json(c: &[Receipt], gap_ms: f64) -> Value {
    arena_report::json::to_value(&cold_doc(c, gap_ms))
}

/// `--format json` of the frame table (`docs/schema/frames.json`).
pub fn frames_json(sources: &[FrameSource], gap_ms: f64) -> Value {
    let runs = sources
        .iter()
        .map(|s| FrameRunDoc {
            run: &s.name,
            cold: s.cold.as_ref().map(|c| cold_doc(c, gap_ms)),
            warm: figures(&s.warm),
            wire: s.wire.as_ref().map(|w| WireFramesDoc {
                frames: w.frames,
                app_bytes: w.app_bytes,
            }),
        })
        .collect();
    let doc = FramesDoc {
        burst_gap_ms: gap_ms,
        runs,
    };
    arena_report::json::Document::new("frames", doc).to_value()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cold_window_is_its_figures_with_the_first_paint_burst() {
        let r = [(26_000.0, 400), (26_620.0, 100), (30_000.0, 5)];
        let v = cold_json(&r, BURST_GAP_MS);
        assert_eq!(
            (v["frames"].as_u64(), v["largest_bytes"].as_u64()),
            (Some(3), Some(400))
        );
        assert_eq!(v["first_paint"]["window_ms"], 620.0);
        assert_eq!(v["first_paint"]["bytes"], 500);
        let empty = cold_json(&[], BURST_GAP_MS);
        assert!(empty["first_paint"].is_null() && empty["p50_bytes"].is_null());
        assert_eq!(empty["frames"], 0);
    }

    #[test]
    fn the_heaviest_gap_separated_group_is_the_first_paint() {
        // Lounge chatter, then three board frames 620 and 682 ms apart, then a blink.
        let r = [
            (100.0, 200),
            (900.0, 300),
            (26_000.0, 473_246),
            (26_620.0, 168_529),
            (27_302.0, 240_000),
            (28_900.0, 6_000),
        ];
        let b = first_paint_burst(&r, BURST_GAP_MS).unwrap();
        assert_eq!((b.frames, b.bytes), (3, 881_775));
        assert_eq!((b.start_ms, b.end_ms), (26_000.0, 27_302.0));
        assert_eq!(first_paint_burst(&[], BURST_GAP_MS), None);
        let f = figures(&r);
        assert_eq!((f.frames, f.largest), (6, Some(473_246)));
    }

    #[test]
    fn markdown_has_a_cold_and_a_warm_row_per_run_and_a_wire_row_when_captured() {
        let a = FrameSource {
            name: "stock, run 1".into(),
            cold: Some(vec![(1500.0, 672_173)]),
            warm: vec![(5000.0, 900), (5100.0, 2100)],
            wire: Some(WireDirection {
                frames: 4,
                app_bytes: 675_500,
                ..Default::default()
            }),
        };
        let b = FrameSource {
            name: "stock, run 2".into(),
            cold: None,
            ..a.clone()
        };
        let md = frames_table(&[a, b], BURST_GAP_MS).render(arena_report::Format::Markdown);
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| stock")).collect();
        assert_eq!(rows.len(), 6, "{md}");
        assert!(md.contains("| run | window | frames | total |"), "{md}");
        assert!(
            rows[0].contains("672,173B") && rows[0].contains("1,500ms"),
            "{md}"
        );
        assert!(rows[3].contains("not recorded"), "{md}");
    }
}
