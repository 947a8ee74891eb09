//! Runs built in memory from chosen latencies, for tests and the benchmark: the same
//! `arena_run::Run` a pilot writes, with every field filled the way a real run fills it.

use std::collections::BTreeMap;

use arena_run::{Host, Loop, Run, RunMeta, RunStatus, RunSummary, SocketSource, SCHEMA_VERSION};

/// One loop per value of `input_to_paint` (ms); the other metrics are fixed shares of it
/// so each metric has its own scale. `reply_bytes` is per loop.
pub fn run(arm: &str, input_to_paint: &[f64], reply_bytes: u64) -> Run {
    let loops: Vec<Loop> = input_to_paint
        .iter()
        .enumerate()
        .map(|(i, &v)| answered(arm, i, v, reply_bytes))
        .collect();
    let n = loops.len() as u64;
    let mut summary = RunSummary {
        clicks_planned: n.div_ceil(2),
        inputs_dispatched: n,
        bytes_received: reply_bytes * n,
        frames_received: n,
        ..RunSummary::default()
    };
    summary.count_loops(&loops);
    Run {
        meta: meta(arm, summary),
        loops,
        events: Vec::new(),
        setup_events: None,
        gestures: Vec::new(),
    }
}

/// Loop `i`, a press or a release in turn, answered `v` ms after its input.
fn answered(arm: &str, i: usize, v: f64, reply_bytes: u64) -> Loop {
    let t_input = 1000.0 + i as f64 * 250.0;
    let its = 0.5 + v * 0.01;
    let s2r = v * 0.6;
    let r2d = v * 0.2;
    Loop {
        index: i as u64,
        arm: arm.to_string(),
        label: "firing".into(),
        event: if i & 1 == 0 { "mousedown" } else { "mouseup" }.into(),
        cold: false,
        answered: true,
        outcome: arena_run::Outcome::Answered,
        t_input,
        t_send: Some(t_input + its),
        t_recv: Some(t_input + its + s2r),
        t_draw: Some(t_input + its + s2r + r2d),
        t_paint: Some(t_input + v),
        input_to_socket: Some(its),
        send_to_recv: Some(s2r),
        recv_to_draw: Some(r2d),
        input_to_paint: Some(v),
        reply_bytes,
        reply_frames: 1,
        t_answer: None,
        input_to_pixels: None,
        after_lapse: false,
    }
}

/// A complete run's `run.json` of `arm` with `summary`, every other field a fixed one.
fn meta(arm: &str, summary: RunSummary) -> RunMeta {
    RunMeta {
        schema_version: SCHEMA_VERSION,
        arm: arm.to_string(),
        knobs: BTreeMap::new(),
        pilot_file: None,
        pilot_hash: "0".repeat(64),
        url: "http://127.0.0.1:1/".into(),
        chromium_version: "synthetic".into(),
        arena_perf_version: env!("CARGO_PKG_VERSION").into(),
        host: Host {
            cores: 1,
            kernel: "synthetic".into(),
            cpu_split: None,
        },
        started_at: "2026-11-29T19:00:00.000Z".into(),
        ended_at: "2026-11-29T19:01:00.000Z".into(),
        status: RunStatus::Complete,
        status_message: None,
        socket_source: SocketSource::PageHook,
        seed: 1,
        summary,
        warnings: Vec::new(),
        wire: None,
        answer: None,
        link: None,
        link_connections: Vec::new(),
        trace: None,
        idle: None,
        cpu: None,
        loop_settings: None,
        browser: None,
        clock: None,
    }
}

/// `n` latencies from a seeded lognormal around `median` ms (spread `sigma`), shifted by
/// `shift` ms: latency-shaped data with a tail.
pub fn lognormal(n: usize, median: f64, sigma: f64, shift: f64, seed: u64) -> Vec<f64> {
    let mut rng = arena_stats::Rng::new(seed);
    (0..n)
        .map(|_| shift + median * (sigma * rng.normal()).exp())
        .collect()
}

/// Makes the loops `which` picks unanswered, as a pilot records a loop whose answer never
/// came inside the window: no receipt, no paint, no figure past inputToSocket.
pub fn unanswer(run: &mut Run, which: impl Fn(usize, &Loop) -> bool) {
    strip_answers(run, arena_run::Outcome::Unanswered, which);
}

/// Marks the answered loops `which` picks as claimed: their answer had already closed an
/// earlier loop (an app that merges answers), so they have no latency and are not
/// unanswered either.
pub fn claim(run: &mut Run, which: impl Fn(usize, &Loop) -> bool) {
    strip_answers(run, arena_run::Outcome::Claimed, which);
}

fn strip_answers(run: &mut Run, outcome: arena_run::Outcome, which: impl Fn(usize, &Loop) -> bool) {
    for (i, l) in run.loops.iter_mut().enumerate() {
        if !l.answered || !which(i, l) {
            continue;
        }
        l.answered = false;
        l.outcome = outcome;
        (l.t_recv, l.t_draw, l.t_paint) = (None, None, None);
        (l.send_to_recv, l.recv_to_draw, l.input_to_paint) = (None, None, None);
        l.input_to_pixels = None;
        l.reply_bytes = 0;
    }
    run.meta.summary.count_loops(&run.loops);
}
