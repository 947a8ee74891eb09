//! Why was this click slow? Each loop of a run is split into its stages (input → socket,
//! socket → reply, reply → pixels) on the page clock, the server's evidence (GC pauses,
//! slow frames of its stats log) is put on the same clock through the run's wall-clock
//! origin (`run.json`'s `clock`), and what overlapped each stage is listed. The tail
//! table counts, for the loops over a quantile and for those at or under the median, the
//! loops each cause overlapped, beside what the same join gives with the evidence shifted
//! by random offsets: a cause is named only when the tail beats both.

#[cfg(feature = "clap")]
pub mod cli;
pub mod evidence;
pub mod join;
mod render;
pub mod tail;

use std::path::{Path, PathBuf};

use anyhow::Result;
use arena_report::Exit;
use arena_run::{Loop, Outcome, PageClock, Run};
use serde::Serialize;

pub use evidence::{Cause, Evidence, Source, Stage};
pub use render::{document, table};
pub use tail::{Joined, Row, Split};

/// What to explain and with what.
#[derive(Debug, Clone)]
pub struct Options {
    pub run: PathBuf,
    pub gc: Vec<PathBuf>,
    pub stats: Vec<PathBuf>,
    /// The tail is the loops over this quantile of inputToPaint (0.9: the p90).
    pub quantile: f64,
    /// A stats-log frame this slow or slower is evidence, ms.
    pub slow_frame_ms: f64,
    /// Random shifts of the sham.
    pub shams: usize,
    pub seed: u64,
}

/// The loops of the run and what was not joined, counted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    pub loops: usize,
    /// Warm answered and unanswered loops: the ones joined.
    pub joined: usize,
    pub unanswered: usize,
    /// First interactions: a population of their own, not joined.
    pub cold: usize,
    /// Loops whose answer had closed an earlier loop: not joined.
    pub claimed: usize,
}

/// The clock's figures: the run's own, and the stats log's frames seen on both clocks.
#[derive(Debug, Clone, Serialize)]
pub struct ClockCheck {
    pub clock: PageClock,
    /// The page's `performance.timeOrigin` minus the bracketed origin, ms.
    pub time_origin_diff_ms: f64,
    /// Each answered loop's reply, received (page clock on the wall) minus the nearest
    /// frame a stats log says was sent; absent without a stats log. On one machine this is
    /// the wire's time plus the two clocks' disagreement.
    pub sent_to_received: Option<Gap>,
}

/// A distribution of gaps, ms.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Gap {
    pub p10_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub n: usize,
}

/// The explanation of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Explained {
    pub run: String,
    pub counts: Counts,
    pub clock: ClockCheck,
    pub sources: Vec<Source>,
    pub split: Split,
    pub rows: Vec<Row>,
    pub loops: Vec<Joined>,
    pub shams: usize,
    pub seed: u64,
    pub slow_frame_ms: f64,
}

/// Reads the run and the sources and joins them.
pub fn explain(o: &Options) -> Result<Explained> {
    if !(o.quantile > 0.5 && o.quantile < 1.0) {
        return Err(Exit::bad_input(format!(
            "--tail {}: the tail is over a quantile between the median and the maximum (e.g. 0.9)",
            o.quantile
        ))
        .into());
    }
    if o.gc.is_empty() && o.stats.is_empty() {
        return Err(Exit::bad_input("nothing to join: give --gc FILE or --stats FILE").into());
    }
    let run = Run::load(&o.run)?;
    let clock = run.meta.clock.ok_or_else(|| {
        Exit::bad_input(format!(
            "{}: run.json has no `clock` (the page clock on the wall clock): the run was made \
             before it was recorded; record it again to join server logs",
            o.run.display()
        ))
    })?;
    let window_ms = run
        .meta
        .loop_settings
        .as_ref()
        .map_or(2000.0, |s| s.timeout_ms as f64);
    let (counts, mut loops) = population(&run.loops, window_ms);
    let page = run_window(&loops);
    let unix = (page.0 + clock.unix_offset_ms, page.1 + clock.unix_offset_ms);
    let mut sources = Vec::new();
    for p in &o.gc {
        sources.push(evidence::gc_log(p)?);
    }
    for p in &o.stats {
        sources.push(evidence::stats_log(p, o.slow_frame_ms)?);
    }
    for s in sources.iter_mut() {
        s.note = evidence::check_overlap(s, unix)?;
    }
    let all: Vec<Evidence> = sources.iter().flat_map(|s| s.events.clone()).collect();
    let placed = join::place(&all, clock.unix_offset_ms);
    let longest = join::longest(&placed);
    for l in loops.iter_mut() {
        l.hits = join::hits(&l.spans, &placed, longest, 0.0);
    }
    let split = tail::split(&loops, o.quantile);
    let causes = causes_present(&sources, &placed, page);
    let kinds: Vec<Cause> = causes.iter().map(|c| c.0).collect();
    let in_window: Vec<join::Placed> = placed
        .iter()
        .filter(|p| p.end_ms > page.0 && p.start_ms < page.1)
        .cloned()
        .collect();
    let counts_sham = tail::sham(
        &loops,
        &split.tail,
        &in_window,
        page,
        &kinds,
        o.shams,
        o.seed,
    );
    let rows = tail::rows(&loops, &split, &causes, &counts_sham);
    let check = clock_check(clock, &run.loops, &sources);
    Ok(Explained {
        run: o.run.display().to_string(),
        counts,
        clock: check,
        sources,
        split,
        rows,
        loops,
        shams: o.shams,
        seed: o.seed,
        slow_frame_ms: o.slow_frame_ms,
    })
}

/// The loops joined (warm, answered or unanswered), with the others counted.
fn population(all: &[Loop], window_ms: f64) -> (Counts, Vec<Joined>) {
    let mut c = Counts {
        loops: all.len(),
        ..Counts::default()
    };
    let mut joined = Vec::new();
    for l in all {
        if l.cold {
            c.cold += 1;
            continue;
        }
        match l.outcome {
            Outcome::Claimed => {
                c.claimed += 1;
                continue;
            }
            Outcome::Unanswered => c.unanswered += 1,
            Outcome::Answered => {}
        }
        joined.push(Joined {
            index: l.index,
            event: l.event.clone(),
            outcome: l.outcome,
            value_ms: match l.outcome {
                Outcome::Answered => l.input_to_paint,
                _ => None,
            },
            spans: join::stages(l, window_ms),
            hits: Vec::new(),
        });
    }
    c.joined = joined.len();
    (c, joined)
}

/// The page-clock window the joined loops lie in: first input to last stage's end.
fn run_window(loops: &[Joined]) -> (f64, f64) {
    let spans = loops.iter().flat_map(|l| &l.spans);
    let lo = spans
        .clone()
        .map(|s| s.start_ms)
        .fold(f64::INFINITY, f64::min);
    let hi = spans.map(|s| s.end_ms).fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() && hi.is_finite() {
        (lo, hi)
    } else {
        (0.0, 0.0)
    }
}

/// Each kind of evidence the sources can give, with its pieces in the run's window (a
/// kind the sources give none of still gets its row: "0 pieces" is an answer).
fn causes_present(
    sources: &[Source],
    placed: &[join::Placed],
    window: (f64, f64),
) -> Vec<(Cause, usize)> {
    let mut kinds: Vec<Cause> = sources
        .iter()
        .map(|s| match s.kind {
            "gc" => Cause::GcPause,
            _ => Cause::SlowFrame,
        })
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
        .into_iter()
        .map(|c| {
            let n = placed
                .iter()
                .filter(|p| p.cause == c && p.end_ms > window.0 && p.start_ms < window.1)
                .count();
            (c, n)
        })
        .collect()
}

/// The alignment as measured: every answered loop's reply receipt against the nearest
/// frame a stats log says was sent.
fn clock_check(clock: PageClock, loops: &[Loop], sources: &[Source]) -> ClockCheck {
    let mut sent: Vec<f64> = sources
        .iter()
        .flat_map(|s| s.frames_sent.iter().copied())
        .collect();
    sent.sort_by(f64::total_cmp);
    let mut gaps: Vec<f64> = Vec::new();
    if !sent.is_empty() {
        for r in loops.iter().filter_map(|l| l.t_recv) {
            let at = r + clock.unix_offset_ms;
            let i = sent.partition_point(|s| *s < at);
            let near = [i.checked_sub(1), Some(i)]
                .into_iter()
                .flatten()
                .filter_map(|k| sent.get(k))
                .min_by(|a, b| (at - **a).abs().total_cmp(&(at - **b).abs()));
            if let Some(s) = near {
                gaps.push(at - s);
            }
        }
    }
    gaps.sort_by(f64::total_cmp);
    let q = |p: f64| gaps[((p * (gaps.len() - 1) as f64).round() as usize).min(gaps.len() - 1)];
    ClockCheck {
        clock,
        time_origin_diff_ms: clock.time_origin_ms - clock.unix_offset_ms,
        sent_to_received: (!gaps.is_empty()).then(|| Gap {
            p10_ms: q(0.1),
            p50_ms: q(0.5),
            p90_ms: q(0.9),
            n: gaps.len(),
        }),
    }
}

/// A run folder's name for messages.
pub fn short(p: &Path) -> String {
    p.file_name()
        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
}
