//! What a run's summary says of its loops, defined once: the pilot writes it with
//! [`RunSummary::count_loops`], anything that builds a run (the synthetic runs of the tests
//! and benches) calls the same, and the loader checks a run's recorded figures against the
//! same computation over its rows ([`loop_figure_mismatch`]), so a summary and its rows can
//! never disagree unnoticed.

use arena_stats::Summary;

use crate::model::{Loop, Metric, Outcome, RunSummary};

/// Bytes a reply must exceed to count in `replies_over_4kb`.
pub const REPLY_4KB: u64 = 4096;

/// Warm (or cold) loops' `metric`, summarised: `None` when no loop has it.
fn summary_of(loops: &[Loop], metric: Metric, cold: bool) -> Option<Summary> {
    let v: Vec<f64> = loops
        .iter()
        .filter(|l| l.cold == cold)
        .filter_map(|l| metric.of(l))
        .collect();
    Summary::of(&v)
}

/// Answered loops whose reply carried at least `bytes`.
fn replies_of_at_least(loops: &[Loop], bytes: u64) -> u64 {
    loops
        .iter()
        .filter(|l| l.answered && l.reply_bytes >= bytes)
        .count() as u64
}

impl RunSummary {
    /// Sets every figure that comes from the loops alone: counts by outcome, cold loops,
    /// the warm quantiles per metric (and the cold inputToPaint), and the replies over 4 KB
    /// and over `idle_reply_bytes` (set that first). Traffic and records are the
    /// recorder's, and stay as they are.
    pub fn count_loops(&mut self, loops: &[Loop]) {
        let count = |o: Outcome| loops.iter().filter(|l| l.outcome == o).count() as u64;
        self.loops = loops.len() as u64;
        self.answered = count(Outcome::Answered);
        self.unanswered = count(Outcome::Unanswered);
        self.claimed = count(Outcome::Claimed);
        self.cold = loops.iter().filter(|l| l.cold).count() as u64;
        self.input_to_socket = summary_of(loops, Metric::InputToSocket, false);
        self.send_to_recv = summary_of(loops, Metric::SendToRecv, false);
        self.recv_to_draw = summary_of(loops, Metric::RecvToDraw, false);
        self.input_to_paint = summary_of(loops, Metric::InputToPaint, false);
        self.input_to_pixels = summary_of(loops, Metric::InputToPixels, false);
        self.cold_input_to_paint = summary_of(loops, Metric::InputToPaint, true);
        self.replies_over_4kb = replies_of_at_least(loops, REPLY_4KB + 1);
        self.replies_over_idle = replies_of_at_least(loops, self.idle_reply_bytes);
    }
}

/// Which loop figures a `run.json` states: those that runs made before them lack are not
/// checked against the rows.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Stated {
    pub replies_over_idle: bool,
    pub input_to_pixels: bool,
}

/// The first loop figure of `said` that the rows do not bear out, as
/// `summary.cold says 3, loops.csv holds 5`: the counts (cold loops, replies over 4 KB and
/// over the idle threshold) and each metric summary's `n` (a summary's quantiles are
/// floating point, rounded through JSON; its `n` is exact, and a row added, dropped or
/// moved between warm and cold changes it). The outcome counts are checked with the rows
/// as they are read.
pub(crate) fn loop_figure_mismatch(
    said: &RunSummary,
    loops: &[Loop],
    stated: Stated,
) -> Option<String> {
    let mut held = said.clone();
    held.count_loops(loops);
    let n = |s: &Option<Summary>| s.as_ref().map_or(0, |s| s.n);
    let mut figures = vec![
        ("cold", said.cold, held.cold),
        (
            "replies_over_4kb",
            said.replies_over_4kb,
            held.replies_over_4kb,
        ),
        (
            "input_to_socket.n",
            n(&said.input_to_socket),
            n(&held.input_to_socket),
        ),
        (
            "send_to_recv.n",
            n(&said.send_to_recv),
            n(&held.send_to_recv),
        ),
        (
            "recv_to_draw.n",
            n(&said.recv_to_draw),
            n(&held.recv_to_draw),
        ),
        (
            "input_to_paint.n",
            n(&said.input_to_paint),
            n(&held.input_to_paint),
        ),
        (
            "cold_input_to_paint.n",
            n(&said.cold_input_to_paint),
            n(&held.cold_input_to_paint),
        ),
    ];
    if stated.replies_over_idle {
        figures.push((
            "replies_over_idle",
            said.replies_over_idle,
            held.replies_over_idle,
        ));
    }
    if stated.input_to_pixels {
        figures.push((
            "input_to_pixels.n",
            n(&said.input_to_pixels),
            n(&held.input_to_pixels),
        ));
    }
    figures
        .into_iter()
        .find(|(_, says, holds)| says != holds)
        .map(|(name, says, holds)| {
            format!("summary.{name} says {says}, the rows of loops.csv give {holds}")
        })
}
