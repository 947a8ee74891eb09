//! Turning paired loops into a run (summary, warnings, raw events) and the arm's table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use arena_browser::Record;
use arena_report::{fmt_bytes, fmt_count, fmt_ms, Cell, Column, Table};
use arena_run::{
    rfc3339_utc, AnswerInfo, Event, Host, Loop, Metric, Outcome, Run, RunMeta, RunStatus,
    RunSummary, SocketSource, Warning, WireFigures, SCHEMA_VERSION, WIRE_PCAP,
};
use arena_stats::Summary;

use super::pair::Paired;

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

fn summary_of(loops: &[Loop], metric: Metric, cold: bool) -> Option<Summary> {
    let v: Vec<f64> = loops
        .iter()
        .filter(|l| l.cold == cold)
        .filter_map(|l| metric.of(l))
        .collect();
    Summary::of(&v)
}

/// Builds the run: summary from the loops, warnings from pairing and the run's end.
pub fn build_run(ctx: &RunContext, paired: Paired, records: &[Record]) -> Run {
    let Paired {
        loops,
        stats,
        mut warnings,
    } = paired;
    let count = |o: Outcome| loops.iter().filter(|l| l.outcome == o).count() as u64;
    let answered = count(Outcome::Answered);
    let over = |bytes: u64| {
        loops
            .iter()
            .filter(|l| l.answered && l.reply_bytes >= bytes)
            .count() as u64
    };
    let summary = RunSummary {
        clicks_planned: ctx.clicks_planned,
        inputs_dispatched: ctx.inputs_dispatched,
        loops: loops.len() as u64,
        answered,
        unanswered: count(Outcome::Unanswered),
        claimed: count(Outcome::Claimed),
        cold: loops.iter().filter(|l| l.cold).count() as u64,
        input_to_socket: summary_of(&loops, Metric::InputToSocket, false),
        send_to_recv: summary_of(&loops, Metric::SendToRecv, false),
        recv_to_draw: summary_of(&loops, Metric::RecvToDraw, false),
        input_to_paint: summary_of(&loops, Metric::InputToPaint, false),
        input_to_pixels: summary_of(&loops, Metric::InputToPixels, false),
        cold_input_to_paint: summary_of(&loops, Metric::InputToPaint, true),
        bytes_received: stats.bytes_received,
        frames_received: stats.frames_received,
        bytes_sent: stats.bytes_sent,
        sends_input: stats.sends_input,
        sends_ack: stats.sends_ack,
        sends_other: stats.sends_other,
        replies_over_4kb: over(4097),
        idle_reply_bytes: ctx.idle_reply_bytes,
        replies_over_idle: over(ctx.idle_reply_bytes),
        coalesced_inputs: stats.coalesced_inputs,
        coalesced_input_to_socket: Summary::of(&stats.coalesced_input_to_socket),
        records: stats.records,
        dropped_records: stats.dropped,
        stale_records: stats.stale,
        invariant_violations: stats.invariant_violations,
    };
    if ctx.status != RunStatus::Complete {
        warnings.push(Warning::new(
            "partial_run",
            format!(
                "partial run ({}): {} of {} clicks made{}",
                match ctx.status {
                    RunStatus::Interrupted => "interrupted",
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
    let meta = RunMeta {
        schema_version: SCHEMA_VERSION,
        arm: ctx.arm.clone(),
        knobs: ctx.knobs.clone(),
        pilot_file: ctx.pilot_file.clone(),
        pilot_hash: ctx.pilot_hash.clone(),
        url: ctx.url.clone(),
        chromium_version: ctx.chromium_version.clone(),
        arena_perf_version: env!("CARGO_PKG_VERSION").to_string(),
        host: Host::current(),
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
    };
    let mut events: Vec<Event> = records.iter().map(to_event).collect();
    events.sort_by_key(|e| e.seq);
    Run {
        meta,
        loops,
        events,
    }
}

/// `reports/<UTC start, compact>-<arm>` (made unique with a counter if it exists).
pub fn default_run_dir(base: &Path, started: SystemTime, arm: &str) -> PathBuf {
    let stamp: String = rfc3339_utc(started)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == 'T')
        .collect();
    let safe_arm: String = arm
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut dir = base.join(format!("{stamp}-{safe_arm}"));
    let mut n = 2;
    while dir.exists() {
        dir = base.join(format!("{stamp}-{safe_arm}-{n}"));
        n += 1;
    }
    dir
}

/// The arm's table: rows per loop metric (warm, answered, discrete input), then counts;
/// coalesced input on its own line.
pub fn arm_table(run: &Run) -> Table {
    let s = &run.meta.summary;
    let mut t = Table::new(vec![
        Column::left(""),
        Column::right("n"),
        Column::right("p50"),
        Column::right("p90"),
        Column::right("p99"),
        Column::right("max"),
    ])
    .with_title(format!(
        "arm {}: {} loops of discrete input ({}); {}",
        run.meta.arm,
        fmt_count(s.loops as i64),
        run.meta.url,
        run.meta
            .answer
            .as_ref()
            .map(AnswerInfo::label)
            .unwrap_or_else(|| "answer: reply".into())
    ));
    let row = |name: &str, sum: &Option<Summary>| -> Vec<Cell> {
        match sum {
            Some(x) => vec![
                Cell::text(name),
                Cell::num(fmt_count(x.n as i64), x.n as f64),
                Cell::num(fmt_ms(x.p50), x.p50),
                Cell::num(fmt_ms(x.p90), x.p90),
                Cell::num(fmt_ms(x.p99), x.p99),
                Cell::num(fmt_ms(x.max), x.max),
            ],
            None => vec![Cell::text(name), Cell::num("0", 0.0)],
        }
    };
    let headline = if s.input_to_pixels.is_some() {
        ("inputToPixels", Metric::InputToPixels)
    } else {
        ("inputToPaint", Metric::InputToPaint)
    };
    t.push_row(row("inputToSocket", &s.input_to_socket));
    t.push_row(row("sendToRecv", &s.send_to_recv));
    t.push_row(row("recvToDraw", &s.recv_to_draw));
    let strong = |cells: Vec<Cell>| cells.into_iter().map(Cell::strong).collect();
    for (name, sum) in [
        ("inputToPaint", &s.input_to_paint),
        ("inputToPixels", &s.input_to_pixels),
    ] {
        if name == "inputToPaint" || sum.is_some() {
            let cells = row(name, sum);
            t.push_row(if name == headline.0 {
                strong(cells)
            } else {
                cells
            });
        }
    }
    // Per input kind beside the headline, when a run has more than one.
    let events: std::collections::BTreeSet<&str> =
        run.loops.iter().map(|l| l.event.as_str()).collect();
    if events.len() > 1 {
        for ev in events {
            let v: Vec<f64> = run
                .loops
                .iter()
                .filter(|l| !l.cold && l.event == ev)
                .filter_map(|l| headline.1.of(l))
                .collect();
            t.push_row(row(&format!("  {} {ev}", headline.0), &Summary::of(&v)));
        }
    }
    t.push_row(row("cold inputToPaint", &s.cold_input_to_paint));
    t.push_row(row("coalesced inputToSocket", &s.coalesced_input_to_socket));
    t.note(format!(
        "loops: {} ({} answered, {} unanswered, {} claimed, {} cold); bytes received {} in {} messages; {} of {} answered replies of {} B or more",
        fmt_count(s.loops as i64),
        fmt_count(s.answered as i64),
        fmt_count(s.unanswered as i64),
        fmt_count(s.claimed as i64),
        fmt_count(s.cold as i64),
        fmt_bytes(s.bytes_received),
        fmt_count(s.frames_received as i64),
        fmt_count(s.replies_over_idle as i64),
        fmt_count(s.answered as i64),
        fmt_count(s.idle_reply_bytes as i64),
    ));
    t.note(format!(
        "sends: {} input, {} ack, {} other; records {} ({} dropped, {} stale); socket source {:?}",
        fmt_count(s.sends_input as i64),
        fmt_count(s.sends_ack as i64),
        fmt_count(s.sends_other as i64),
        fmt_count(s.records as i64),
        fmt_count(s.dropped_records as i64),
        fmt_count(s.stale_records as i64),
        run.meta.socket_source
    ));
    if let Some(w) = &run.meta.wire {
        t.note(wire_note(w));
    }
    t.note("times in ms on the page clock; n = loops; quantiles type 7");
    for w in &run.meta.warnings {
        t.note(format!("warning ({}): {}", w.code, w.message));
    }
    t
}

/// One line of wire figures under the arm's table; says its source, since interface
/// counters cannot split directions or frames.
fn wire_note(w: &WireFigures) -> String {
    match (&w.server_to_client, &w.client_to_server) {
        (Some(s2c), Some(c2s)) => format!(
            "wire ({}, whole session, {} kernel drops): server->client {} frames, {} payload, {} app bytes; client->server {} frames, {} payload, {} app bytes",
            WIRE_PCAP,
            fmt_count(w.kernel_drops as i64),
            fmt_count(s2c.frames as i64),
            fmt_bytes(s2c.frame_payload_bytes),
            fmt_bytes(s2c.app_bytes),
            fmt_count(c2s.frames as i64),
            fmt_bytes(c2s.frame_payload_bytes),
            fmt_bytes(c2s.app_bytes),
        ),
        _ => format!(
            "wire: interface counters only ({}): {} on lo during the run, no direction split",
            w.reason.as_deref().unwrap_or("capture not permitted"),
            w.interface_bytes.map(fmt_bytes).unwrap_or_else(|| "-".into()),
        ),
    }
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
        };
        let run = build_run(&ctx, paired, &recs);
        let s = &run.meta.summary;
        assert_eq!((s.loops, s.cold, s.answered), (4, 1, 4));
        assert_eq!(s.send_to_recv.unwrap().n, 3);
        assert_eq!(s.send_to_recv.unwrap().p50, 39.5);
        assert_eq!(s.sends_ack, 4);
        assert_eq!(s.replies_over_4kb, 4);
        assert_eq!(run.events[1].kind, "ws_send");
        assert_eq!(run.events[1].class, "input");
        let tmp = tempfile::tempdir().unwrap();
        run.write(tmp.path()).unwrap();
        assert_eq!(Run::load(tmp.path()).unwrap(), run);
        let text = arm_table(&run).render(arena_report::Format::Markdown);
        assert!(
            text.contains("inputToPaint") && text.contains("50.0ms"),
            "{text}"
        );
    }

    #[test]
    fn run_dirs_do_not_collide() {
        let tmp = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        let a = default_run_dir(tmp.path(), now, "lazy png");
        std::fs::create_dir_all(&a).unwrap();
        let b = default_run_dir(tmp.path(), now, "lazy png");
        assert_ne!(a, b);
        assert!(a
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with("-lazy_png"));
    }
}
