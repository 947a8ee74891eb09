//! Rendering a [`WireSummary`] as report tables (the numbers are computed in `summary`).

use arena_report::{fmt_bytes, fmt_count, fmt_ms, Cell, Column, Table};
use arena_stats::Summary;

use crate::capture::{CaptureSource, CaptureStats};
use crate::summary::{DirSummary, WireSummary};

fn bytes(n: u64) -> Cell {
    Cell::num(fmt_bytes(n), n as f64)
}

fn count(n: u64) -> Cell {
    Cell::num(fmt_count(n as i64), n as f64)
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> Cell {
    match v {
        Some(x) if x.is_finite() => Cell::num(f(x), x),
        _ => Cell::text("-"),
    }
}

fn rate(v: Option<f64>) -> Cell {
    opt(v, |x| format!("{}B/s", fmt_count(x.round() as i64)))
}

fn q(s: &Option<Summary>, f: fn(&Summary) -> f64) -> Cell {
    opt(s.as_ref().map(f), |x| fmt_bytes(x.round() as u64))
}

impl WireSummary {
    /// The per-direction table, the largest frames, and (with `--window`) the windows.
    pub fn tables(&self) -> Vec<Table> {
        let mut out = vec![self.direction_table(), self.largest_table()];
        if let Some(w) = self.window_table() {
            out.push(w);
        }
        out
    }

    fn direction_table(&self) -> Table {
        let port = self.port.map(|p| format!(", port {p}")).unwrap_or_default();
        let mut t = Table::new(vec![
            Column::left(""),
            Column::right("client -> server"),
            Column::right("server -> client"),
        ])
        .with_title(format!(
            "wire summary: {}{port}, {} connection(s), {:.3}s span, n={} records",
            self.file,
            self.connections,
            self.span_s,
            fmt_count(self.records as i64)
        ));
        let (a, b) = (&self.client_to_server, &self.server_to_client);
        let mut row = |name: &str, f: &dyn Fn(&DirSummary) -> Cell| {
            t.push_row(vec![Cell::text(name), f(a), f(b)]);
        };
        tcp_rows(&mut row);
        frame_rows(&mut row);
        message_rows(&mut row);
        row("frame payload rate", &|d| {
            rate(d.frame_payload_per_s).strong()
        });
        row("TCP payload rate", &|d| rate(d.tcp_payload_per_s));
        row("median gap between frames", &|d| {
            opt(d.median_gap_ms, fmt_ms)
        });
        row("unframed bytes", &|d| bytes(d.unframed_bytes));
        row("framing", &|d| Cell::text(d.framing.clone()));
        self.direction_notes(&mut t, &port);
        t
    }

    /// Units, sample counts, what was skipped, and each direction's framing notes.
    fn direction_notes(&self, t: &mut Table, port: &str) {
        let (a, b) = (&self.client_to_server, &self.server_to_client);
        t.note(format!(
            "bytes in B; rates over the {:.3}s from first to last record; frame sizes are \
             payload bytes of data frames (n={} / {}); control frames and pure ACKs counted apart",
            self.span_s, a.frames, b.frames
        ));
        if self.ignored_records > 0 {
            t.note(format!(
                "{} records were not TCP{} and were skipped",
                fmt_count(self.ignored_records as i64),
                port
            ));
        }
        for (name, d) in [("client -> server", a), ("server -> client", b)] {
            for n in &d.framing_notes {
                t.note(format!("{name}: {n}"));
            }
            if d.app_unknown_messages > 0 {
                t.note(format!(
                    "{name}: app bytes unknown for {} message(s) (inflate failed)",
                    d.app_unknown_messages
                ));
            }
        }
        for w in &self.warnings {
            t.note(format!("warning: {w}"));
        }
    }

    fn largest_table(&self) -> Table {
        let mut t = Table::new(vec![
            Column::left("direction"),
            Column::right("rank"),
            Column::right("t (s from first record)"),
            Column::right("payload"),
        ])
        .with_title("largest data frames");
        for (name, d) in [
            ("client -> server", &self.client_to_server),
            ("server -> client", &self.server_to_client),
        ] {
            for (i, f) in d.largest_frames.iter().enumerate() {
                t.push_row(vec![
                    Cell::text(name),
                    count(i as u64 + 1),
                    Cell::num(format!("{:.3}s", f.t_s), f.t_s),
                    bytes(f.payload_bytes),
                ]);
            }
        }
        t.note("time is when the frame's last byte was captured");
        t
    }

    fn window_table(&self) -> Option<Table> {
        let w = self.window_s?;
        let mut t = Table::new(vec![
            Column::right("window start"),
            Column::right("c->s frames"),
            Column::right("c->s frame payload"),
            Column::right("s->c frames"),
            Column::right("s->c frame payload"),
            Column::right("s->c app bytes"),
            Column::right("s->c rate"),
        ])
        .with_title(format!(
            "per {w}s window (n={} windows with traffic)",
            self.windows.len()
        ));
        for r in &self.windows {
            let (a, b) = (&r.client_to_server, &r.server_to_client);
            t.push_row(vec![
                Cell::num(format!("{:.1}s", r.start_s), r.start_s),
                count(a.frames),
                bytes(a.frame_payload_bytes),
                count(b.frames),
                bytes(b.frame_payload_bytes),
                bytes(b.app_bytes),
                rate(Some(b.frame_payload_bytes as f64 / w)),
            ]);
        }
        t.note("windows without any packet are left out; rate is frame payload / window length");
        Some(t)
    }
}

impl WireSummary {
    /// `wire summary --format json`: the summary as data (`docs/schema/wire-summary.json`);
    /// byte counts are integers, sizes in bytes, times in seconds or ms as their keys say.
    pub fn to_json(&self) -> serde_json::Value {
        let body = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        arena_report::json::document("wire.summary", body)
    }
}

/// A capture's figures (`wire capture`): its source, what was written and dropped, and
/// the interface's own counters.
pub fn capture_table(s: &CaptureStats) -> Table {
    let mut t = Table::new(vec![Column::left(""), Column::right("value")]).with_title(format!(
        "capture on {}{}, {:.3}s",
        s.iface,
        s.port.map(|p| format!(" port {p}")).unwrap_or_default(),
        s.duration_s
    ));
    let n = |x: u64| Cell::num(fmt_count(x as i64), x as f64);
    match &s.source {
        CaptureSource::Pcap { path, backend } => {
            t.push_row(vec!["source".into(), Cell::text(format!("pcap {path}"))]);
            t.push_row(vec!["backend".into(), Cell::text(backend.name())]);
            t.push_row(vec!["packets written".into(), n(s.packets_written)]);
            t.push_row(vec![
                "pcap size".into(),
                Cell::num(fmt_bytes(s.pcap_bytes), s.pcap_bytes as f64),
            ]);
            t.push_row(vec![
                "kernel: packets passed the filter".into(),
                n(s.kernel_packets),
            ]);
            t.push_row(vec!["kernel: drops".into(), n(s.kernel_drops).strong()]);
        }
        CaptureSource::InterfaceCounters { reason } => {
            t.push_row(vec![
                "source".into(),
                Cell::text(format!("interface counters ({reason})")),
            ]);
        }
    }
    if let Some(i) = &s.interface {
        t.push_row(vec![
            format!("{} rx bytes (all traffic, /proc/net/dev)", s.iface).into(),
            Cell::num(fmt_bytes(i.rx_bytes), i.rx_bytes as f64),
        ]);
        t.push_row(vec![
            format!("{} rx packets (all traffic)", s.iface).into(),
            n(i.rx_packets),
        ]);
        t.push_row(vec![
            format!("{} tx bytes (all traffic)", s.iface).into(),
            Cell::num(fmt_bytes(i.tx_bytes), i.tx_bytes as f64),
        ]);
    }
    t.note("interface counters cover every flow on the interface and exclude link headers; on lo rx and tx are the same packets");
    t
}

/// A row of the direction table: its name, and its cell for each direction.
type Row<'a> = dyn FnMut(&str, &dyn Fn(&DirSummary) -> Cell) + 'a;

/// Packets and TCP bytes.
fn tcp_rows(row: &mut Row) {
    row("packets", &|d| count(d.packets));
    row("  of which pure ACKs", &|d| count(d.pure_acks));
    row("wire bytes (link headers included)", &|d| {
        bytes(d.wire_bytes)
    });
    row("TCP payload", &|d| bytes(d.tcp_payload_bytes));
    row("  retransmitted (not counted above)", &|d| {
        bytes(d.retransmitted_bytes)
    });
    row("  out-of-order segments", &|d| {
        count(d.out_of_order_segments)
    });
    row("  missing from capture", &|d| bytes(d.missing_bytes));
}

/// The upgrade and the WebSocket frames, data and control.
fn frame_rows(row: &mut Row) {
    row("HTTP upgrade", &|d| bytes(d.http_upgrade_bytes));
    row("WebSocket data frames", &|d| count(d.frames));
    row("frame payload", &|d| bytes(d.frame_payload_bytes).strong());
    row("frame p50", &|d| q(&d.frame_size, |s| s.p50));
    row("frame p90", &|d| q(&d.frame_size, |s| s.p90));
    row("frame p99", &|d| q(&d.frame_size, |s| s.p99));
    row("frame max", &|d| q(&d.frame_size, |s| s.max));
    row("frame headers", &|d| bytes(d.frame_header_bytes));
    row("control frames (ping/pong/close)", &|d| {
        count(d.control_frames)
    });
    row("control frame bytes (header+payload)", &|d| {
        bytes(d.control_header_bytes + d.control_payload_bytes)
    });
}

/// Messages, on the wire and after inflating.
fn message_rows(row: &mut Row) {
    row("messages", &|d| count(d.messages));
    row("  compressed (permessage-deflate)", &|d| {
        count(d.compressed_messages)
    });
    row("message p50 (wire)", &|d| {
        q(&d.message_wire_size, |s| s.p50)
    });
    row("message p90 (wire)", &|d| {
        q(&d.message_wire_size, |s| s.p90)
    });
    row("message p99 (wire)", &|d| {
        q(&d.message_wire_size, |s| s.p99)
    });
    row("message max (wire)", &|d| {
        q(&d.message_wire_size, |s| s.max)
    });
    row("app bytes (after inflate)", &|d| {
        bytes(d.app_bytes).strong()
    });
    row("message p50 (app)", &|d| q(&d.message_app_size, |s| s.p50));
    row("message max (app)", &|d| q(&d.message_app_size, |s| s.max));
    row("app / wire ratio", &|d| {
        opt(d.compression_ratio, |x| {
            format!("{x:.2}x (wire {:.0} % of app)", 100.0 / x)
        })
    });
}
