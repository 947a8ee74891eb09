//! Turning paired loops into a run: summary, warnings, raw events.

use std::collections::BTreeMap;
use std::time::SystemTime;

use arena_browser::Record;
use arena_run::{
    rfc3339_utc, AnswerInfo, Event, Host, Loop, LoopSettings, Run, RunMeta, RunStatus, RunSummary,
    ShamWatches, SocketSource, Warning, SCHEMA_VERSION,
};
use arena_stats::Summary;

use super::pair::{PairStats, Paired};

/// What the driver knows about a run besides its records.
#[derive(Debug, Clone)]
pub struct RunContext {
    pub arm: String,
    pub knobs: BTreeMap<String, String>,
    pub pilot_file: Option<String>,
    pub pilot_hash: String,
    pub url: String,
    pub chromium_version: String,
    pub started: SystemTime,
    pub ended: SystemTime,
    pub status: RunStatus,
    pub status_message: Option<String>,
    pub socket_source: SocketSource,
    pub seed: u64,
    pub clicks_planned: u64,
    pub clicks_made: u64,
    pub inputs_dispatched: u64,
    /// The oracle the loops were closed on, and the fallback taken.
    pub answer: Option<AnswerInfo>,
    /// Reply bytes that mark an input that made the target work (`target.idle_reply_bytes`).
    pub idle_reply_bytes: u64,
    /// The shaped link the run went through, as text.
    pub link: Option<String>,
    /// What a loop of this run is.
    pub loop_settings: Option<LoopSettings>,
    /// The sham watches made (window ms, whether it changed).
    pub shams: Vec<(f64, bool)>,
    /// A typing run's mode (`pace`, `burst`): its keys get `summary.typing`.
    pub typing: Option<String>,
    /// Inputs that went before the socket had been quiet for `settle`.
    pub quiet_lapses: u64,
    /// The page times of those lapses, where the page's clock was mapped.
    pub lapse_at: Vec<f64>,
}

fn to_event(r: &Record) -> Event {
    // Record and Event share their JSON shape; going through serde keeps the enum
    // spellings in one place (arena-browser's serde attributes).
    serde_json::to_value(r)
        .ok()
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_else(|| Event {
            seq: r.seq,
            kind: format!("{:?}", r.kind),
            t_ms: r.t_ms,
            size: r.size,
            class: format!("{:?}", r.class),
            event: r.event.clone(),
            trusted: r.trusted,
            target: r.target,
            answers: r.answers,
        })
}

/// Builds the run: summary from the loops, warnings from pairing and the run's end.
pub fn build_run(ctx: &RunContext, paired: Paired, records: &[Record]) -> Run {
    let Paired {
        mut loops,
        stats,
        mut warnings,
    } = paired;
    mark_after_lapse(&mut loops, &ctx.lapse_at);
    let mut summary = summarize(ctx, &loops, &stats);
    summary.sham = sham_watches(&ctx.shams);
    summary.typing = ctx
        .typing
        .as_deref()
        .map(|mode| crate::glyphs::typing_summary(mode, &loops));
    if let Some(ls) = &ctx.loop_settings {
        summary.input_phase = ls
            .frame_interval_ms
            .and_then(|fi| crate::phase::input_phase(records, &ls.loop_events, fi));
    }
    warnings.extend(run_warnings(ctx, &summary));
    let meta = RunMeta {
        schema_version: SCHEMA_VERSION,
        arm: ctx.arm.clone(),
        knobs: ctx.knobs.clone(),
        pilot_file: ctx.pilot_file.clone(),
        pilot_hash: ctx.pilot_hash.clone(),
        url: ctx.url.clone(),
        chromium_version: ctx.chromium_version.clone(),
        arena_perf_version: env!("CARGO_PKG_VERSION").to_string(),
        host: {
            let here = Host::current();
            Host {
                cores: crate::cpu_split::cores().unwrap_or(here.cores),
                cpu_split: crate::cpu_split::applied(),
                ..here
            }
        },
        started_at: rfc3339_utc(ctx.started),
        ended_at: rfc3339_utc(ctx.ended),
        status: ctx.status,
        status_message: ctx.status_message.clone(),
        socket_source: ctx.socket_source,
        seed: ctx.seed,
        summary,
        warnings,
        wire: None,
        answer: ctx.answer.clone(),
        link: ctx.link.clone(),
        link_connections: Vec::new(),
        trace: None,
        idle: None,
        cpu: None,
        loop_settings: ctx.loop_settings.clone(),
        browser: None,
        clock: None,
    };
    Run {
        meta,
        loops,
        events: events_of(records),
        setup_events: None,
        gestures: Vec::new(),
    }
}

/// Records as `events.jsonl` lines, in seq order.
pub fn events_of(records: &[Record]) -> Vec<Event> {
    let mut events: Vec<Event> = records.iter().map(to_event).collect();
    events.sort_by_key(|e| e.seq);
    events
}

/// The run's summary: the traffic pairing counted into it, completed with what the
/// loops give (arena-run's one definition).
fn summarize(ctx: &RunContext, loops: &[Loop], stats: &PairStats) -> RunSummary {
    let mut summary = RunSummary {
        clicks_planned: ctx.clicks_planned,
        inputs_dispatched: ctx.inputs_dispatched,
        idle_reply_bytes: ctx.idle_reply_bytes,
        coalesced_input_to_socket: Summary::of(&stats.coalesced_input_to_socket),
        input_phase: None,
        sham: None,
        ..stats.summary.clone()
    };
    summary.count_loops(loops);
    summary.quiet_lapses = ctx.quiet_lapses;
    summary.after_lapse = loops.iter().filter(|l| l.after_lapse).count() as u64;
    summary
}

/// Marks the first input after each lapse: it went with the last one's traffic in flight.
fn mark_after_lapse(loops: &mut [Loop], lapse_at: &[f64]) {
    for &t in lapse_at {
        let next = loops
            .iter_mut()
            .filter(|l| l.t_input >= t)
            .min_by(|a, b| a.t_input.total_cmp(&b.t_input));
        if let Some(l) = next {
            l.after_lapse = true;
        }
    }
}

fn sham_watches(shams: &[(f64, bool)]) -> Option<ShamWatches> {
    let windows: Vec<f64> = shams.iter().map(|s| s.0).collect();
    Some(ShamWatches {
        n: shams.len() as u64,
        changed: shams.iter().filter(|s| s.1).count() as u64,
        window_p50_ms: arena_stats::quantile(&windows, 0.5)?,
    })
}

/// One sham watch in twenty that changes is more than a quiet target's noise.
const SHAM_WARN_SHARE: f64 = 0.05;

/// One wait in twenty that ran out before the socket went quiet: the next inputs of a
/// run went with traffic in flight often enough to move its figures.
const LAPSE_WARN_SHARE: f64 = 0.05;

/// Warnings about the run as a whole: it ended early, or its target looks idle.
fn run_warnings(ctx: &RunContext, summary: &RunSummary) -> Vec<Warning> {
    let mut warnings = Vec::new();
    if ctx.status != RunStatus::Complete {
        warnings.push(Warning::new(
            "partial_run",
            format!(
                "partial run ({}): {} of {} clicks made{}",
                match ctx.status {
                    RunStatus::Interrupted => "interrupted",
                    RunStatus::TargetStalled => "target stalled",
                    _ => "target failed",
                },
                ctx.clicks_made,
                ctx.clicks_planned,
                ctx.status_message
                    .as_deref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            ),
        ));
    }
    if let Some(sh) = summary
        .sham
        .as_ref()
        .filter(|sh| sh.changed as f64 > SHAM_WARN_SHARE * sh.n as f64)
    {
        warnings.push(Warning::new(
            "sham_answers",
            format!(
                "{} of {} sham watches changed with no input within {:.0} ms (median window): the pixels at the click points change on their own (a clock, a caret, an animation), so a loop there can be closed by something its input did not cause; aim the clicks away from it, narrow `answer.radius_px`, or watch a fixed `answer.rect`",
                sh.changed, sh.n, sh.window_p50_ms
            ),
        ));
    }
    let inputs = summary.inputs_dispatched.max(1);
    if summary.quiet_lapses as f64 > LAPSE_WARN_SHARE * inputs as f64 {
        warnings.push(Warning::new(
            "quiet_lapses",
            format!(
                "{} of {} inputs' waits ended before the socket had been quiet for {} ms: the next input went with traffic still in flight (a target that streams on its own never goes quiet), so its loop may share its window with the last one's answer ({} loops marked `after_lapse` in loops.csv); lower `pacing.settle_ms` below the target's own frame gap, or raise `pacing.timeout_ms`",
                summary.quiet_lapses,
                inputs,
                ctx.loop_settings.as_ref().map_or(0, |s| s.settle_ms),
                summary.after_lapse
            ),
        ));
    }
    if let Some(ph) = summary.input_phase.as_ref().filter(|ph| ph.p < 0.01) {
        warnings.push(Warning::new(
            "input_phase",
            format!(
                "the {} inputs' phases on the {:.2} ms frame clock are not uniform (KS D = {:.3}, p = {:.2e}): they went out at a preferred point of the frame, and frame rounding biases every loop the same way (set `pacing.phase_jitter_ms` to a frame interval or more)",
                ph.n, ph.frame_interval_ms, ph.ks_d, ph.p
            ),
        ));
    }
    if summary.answered > 0
        && (summary.replies_over_idle as f64) < arena_run::IDLE_SHARE * summary.answered as f64
    {
        warnings.push(Warning::new(
            "idle",
            format!(
                "only {} of {} answered loops drew a reply of {} B or more (under {:.0} %): the target may be idle, which makes CPU look free (the threshold is the target's: set `target.idle_reply_bytes` in the pilot file to what a working answer weighs)",
                summary.replies_over_idle,
                summary.answered,
                ctx.idle_reply_bytes,
                100.0 * arena_run::IDLE_SHARE
            ),
        ));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pair::test_records::S;
    use crate::pair::{pair, PairConfig};
    use arena_browser::SendClass;

    #[test]
    fn a_run_built_from_records_round_trips_through_its_folder() {
        let mut recs = S::new(0);
        for k in 0..4 {
            let t = 100.0 * k as f64;
            recs.input(t, "mousedown")
                .send(t + 0.5, SendClass::Input)
                .recv(t + 40.0, 5000)
                .send(t + 40.5, SendClass::Ack)
                .draw(t + 41.0)
                .paint(t + 50.0);
        }
        let recs = recs.recs;
        let mut cfg = PairConfig::new("a");
        cfg.cold_loops = 1;
        let paired = pair(&recs, &cfg);
        let now = SystemTime::now();
        let ctx = RunContext {
            arm: "a".into(),
            knobs: BTreeMap::new(),
            pilot_file: None,
            pilot_hash: "0".repeat(64),
            url: "http://127.0.0.1/".into(),
            chromium_version: "test".into(),
            started: now,
            ended: now,
            status: RunStatus::Complete,
            status_message: None,
            socket_source: SocketSource::PageHook,
            seed: 1,
            clicks_planned: 4,
            clicks_made: 4,
            inputs_dispatched: 4,
            answer: None,
            idle_reply_bytes: 4096,
            link: None,
            loop_settings: None,
            shams: Vec::new(),
            // Two waits ran out: after the second input, and after the last (no input
            // follows it to mark).
            quiet_lapses: 2,
            lapse_at: vec![150.0, 450.0],
            typing: None,
        };
        let run = build_run(&ctx, paired, &recs);
        let s = &run.meta.summary;
        let marked: Vec<bool> = run.loops.iter().map(|l| l.after_lapse).collect();
        assert_eq!(marked, [false, false, true, false]);
        assert_eq!((s.quiet_lapses, s.after_lapse), (2, 1));
        let w = run.meta.warnings.iter().find(|w| w.code == "quiet_lapses");
        assert!(
            w.is_some_and(|w| w.message.starts_with("2 of 4 inputs' waits")
                && w.message.contains("1 loops marked `after_lapse`")),
            "{:?}",
            run.meta.warnings
        );
        assert_eq!((s.loops, s.cold, s.answered), (4, 1, 4));
        assert_eq!(s.send_to_recv.unwrap().n, 3);
        assert_eq!(s.send_to_recv.unwrap().p50, 39.5);
        assert_eq!(s.sends_ack, 4);
        // Pairing's counts are the summary's own fields.
        assert_eq!(
            (
                s.bytes_received,
                s.frames_received,
                s.sends_input,
                s.records
            ),
            (20000, 4, 4, recs.len() as u64)
        );
        assert_eq!(s.replies_over_4kb, 4);
        assert_eq!(run.events[1].kind, "ws_send");
        assert_eq!(run.events[1].class, "input");
        let tmp = tempfile::tempdir().unwrap();
        run.write(tmp.path()).unwrap();
        assert_eq!(Run::load(tmp.path()).unwrap(), run);
        let text = arena_compare::arm_table(&run).render(arena_report::Format::Markdown);
        assert!(
            text.contains("inputToPaint") && text.contains("50.0ms"),
            "{text}"
        );
    }
}
