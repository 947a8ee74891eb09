//! The table of one run of one arm, as the pilot prints it: rows per loop metric (warm,
//! answered, discrete input), per input kind beside the headline, then the counts, the
//! wire figures and the run's warnings as notes.

use arena_report::{fmt_bytes, fmt_count, fmt_ms, Cell, Column, Table};
use arena_run::{AnswerInfo, Metric, Run, TraceInfo, WireDirection, WireFigures, WIRE_PCAP};
use arena_stats::Summary;

/// The arm's table: rows per loop metric (warm, answered, discrete input), then counts;
/// coalesced input on its own line.
pub fn arm_table(run: &Run) -> Table {
    let s = &run.meta.summary;
    let mut t = Table::new(figure_columns()).with_title(format!(
        "arm {}: {} loops of discrete input ({}), figures of the answered ones; {}{}{}",
        run.meta.arm,
        fmt_count(s.loops as i64),
        run.meta.url,
        run.meta
            .answer
            .as_ref()
            .map(AnswerInfo::label)
            .unwrap_or_else(|| "answer: reply".into()),
        run.meta
            .link
            .as_deref()
            .map(|l| format!("; link {l}"))
            .unwrap_or_default(),
        run.meta
            .browser
            .map(|b| format!("; browser {}", b.label()))
            .unwrap_or_default()
    ));
    let headline = if s.input_to_pixels.is_some() {
        ("inputToPixels", Metric::InputToPixels)
    } else {
        ("inputToPaint", Metric::InputToPaint)
    };
    t.push_row(figure_row("inputToSocket", &s.input_to_socket));
    t.push_row(figure_row("sendToRecv", &s.send_to_recv));
    t.push_row(figure_row("recvToDraw", &s.recv_to_draw));
    for (name, sum) in [
        ("inputToPaint", &s.input_to_paint),
        ("inputToPixels", &s.input_to_pixels),
    ] {
        if name == "inputToPaint" || sum.is_some() {
            let cells = figure_row(name, sum);
            t.push_row(if name == headline.0 {
                cells.into_iter().map(Cell::strong).collect()
            } else {
                cells
            });
        }
    }
    per_event_rows(&mut t, run, headline);
    t.push_row(figure_row("cold inputToPaint", &s.cold_input_to_paint));
    t.push_row(figure_row(
        "coalesced inputToSocket",
        &s.coalesced_input_to_socket,
    ));
    notes(&mut t, run);
    t
}

/// One figure row: label, n and the quantiles in ms, or n = 0 when nothing had the figure.
pub(crate) fn figure_row(name: &str, sum: &Option<Summary>) -> Vec<Cell> {
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
}

/// Per input kind beside the headline, when a run has more than one.
fn per_event_rows(t: &mut Table, run: &Run, (name, metric): (&str, Metric)) {
    let events: std::collections::BTreeSet<&str> =
        run.loops.iter().map(|l| l.event.as_str()).collect();
    if events.len() < 2 {
        return;
    }
    for ev in events {
        let v: Vec<f64> = run
            .loops
            .iter()
            .filter(|l| !l.cold && l.event == ev)
            .filter_map(|l| metric.of(l))
            .collect();
        t.push_row(figure_row(&format!("  {name} {ev}"), &Summary::of(&v)));
    }
}

/// Counts, traffic, wire figures, units and the run's warnings under the table.
fn notes(t: &mut Table, run: &Run) {
    let s = &run.meta.summary;
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
    if let Some(tr) = &run.meta.trace {
        t.note(trace_note(tr));
    }
    if let Some(sh) = &s.sham {
        t.note(format!(
            "sham watches: {} of {} click points changed with no input within {:.0} ms (median window; each watched like an input, before every 4th click)",
            sh.changed, sh.n, sh.window_p50_ms
        ));
    }
    t.note("times in ms on the page clock; n = loops; quantiles type 7");
    for w in &run.meta.warnings {
        t.note(format!("warning ({}): {}", w.code, w.message));
    }
}

/// One line under the arm's table: where the trace is, how well it is aligned, what it cost.
fn trace_note(tr: &TraceInfo) -> String {
    let o = &tr.overhead;
    format!(
        "trace ({}, {}): {} loop slices, {} Chromium events; page clock aligned to within {} ms ({} marks; inputs within {} ms, n={}); collecting it took {} ms",
        tr.file,
        fmt_bytes(o.file_bytes),
        fmt_count(tr.loop_slices as i64),
        fmt_count(tr.events as i64),
        format_args!("{:.3}", tr.alignment_error_ms),
        fmt_count(tr.alignment_marks as i64),
        tr.input_error_ms
            .map(|e| format!("{e:.3}"))
            .unwrap_or_else(|| "-".into()),
        fmt_count(tr.inputs_checked as i64),
        format_args!("{:.0}", o.start_ms + o.collect_ms + o.write_ms),
    )
}

/// A direction's app/wire ratio (permessage-deflate's, 1.00x without it), as ` (app/wire
/// 1.61x: the wire carries 62 %)`; nothing when no message's app bytes are known.
fn ratio_note(d: &WireDirection) -> String {
    match d.compression_ratio {
        Some(r) if r > 0.0 => format!(" (app/wire {r:.2}x: the wire carries {:.0} %)", 100.0 / r),
        _ => String::new(),
    }
}

/// One line of wire figures under the arm's table; says its source, since interface
/// counters cannot split directions or frames.
fn wire_note(w: &WireFigures) -> String {
    match (&w.server_to_client, &w.client_to_server) {
        (Some(s2c), Some(c2s)) => format!(
            "wire ({}, whole session, {} kernel drops): server->client {} frames, {} payload, {} app bytes{}; client->server {} frames, {} payload, {} app bytes{}",
            WIRE_PCAP,
            fmt_count(w.kernel_drops as i64),
            fmt_count(s2c.frames as i64),
            fmt_bytes(s2c.frame_payload_bytes),
            fmt_bytes(s2c.app_bytes),
            ratio_note(s2c),
            fmt_count(c2s.frames as i64),
            fmt_bytes(c2s.frame_payload_bytes),
            fmt_bytes(c2s.app_bytes),
            ratio_note(c2s),
        ),
        _ => format!(
            "wire: interface counters only ({}): {} on lo during the run, no direction split",
            w.reason.as_deref().unwrap_or("capture not permitted"),
            w.interface_bytes.map(fmt_bytes).unwrap_or_else(|| "-".into()),
        ),
    }
}

/// The columns of a run's figure table: a label, then n and the quantiles of each row.
pub(crate) fn figure_columns() -> Vec<Column> {
    vec![
        Column::left(""),
        Column::right("n"),
        Column::right("p50"),
        Column::right("p90"),
        Column::right("p99"),
        Column::right("max"),
    ]
}
