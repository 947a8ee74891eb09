//! The explanation as tables for people (the tail table, then the tail's loops) and as a
//! JSON document (`docs/schema/explain.json`).

use arena_report::{Cell, Column, Table};
use serde_json::Value;

use crate::evidence::Cause;
use crate::{Explained, Joined};

fn q_name(q: f64) -> String {
    format!("p{}", (q * 100.0 * 10.0).round() / 10.0)
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "unanswered".to_string(), |v| format!("{v:.1} ms"))
}

fn cause_label(c: Cause, slow_ms: Option<f64>) -> String {
    match (c, slow_ms) {
        (Cause::SlowFrame, Some(t)) => format!("{} (≥ {t:.0} ms)", c.name()),
        _ => c.name().to_string(),
    }
}

/// The tail table and the list of the tail's loops.
pub fn table(e: &Explained) -> Vec<Table> {
    let s = &e.split;
    let c = &e.counts;
    let qn = q_name(s.quantile);
    let title = format!(
        "explain: {} ({} loops joined: {} answered + {} unanswered; {} cold and {} claimed \
         not joined); tail: the {} over the {qn} of inputToPaint ({}), body: the {} at or \
         under the p50 ({})",
        crate::short(std::path::Path::new(&e.run)),
        c.joined,
        c.joined - c.unanswered,
        c.unanswered,
        c.cold,
        c.claimed,
        s.tail.len(),
        ms(s.threshold_ms),
        s.body.len(),
        ms(s.median_ms),
    );
    let mut t = Table::new(vec![
        Column::left("cause"),
        Column::left("stage"),
        Column::right("pieces in the run"),
        Column::right("tail loops it overlapped"),
        Column::right("of the tail's time"),
        Column::right("body loops it overlapped"),
        Column::right("chance in the tail (sham)"),
        Column::left("named"),
    ])
    .with_title(title);
    for r in &e.rows {
        let named = if r.named {
            format!("yes: {} of {} over the {qn}", r.tail_hits, r.tail_n)
        } else if r.tail_hits == 0 {
            "no: in no tail loop".to_string()
        } else {
            "no: not above chance and the body".to_string()
        };
        t.push_row(vec![
            Cell::text(cause_label(r.cause, Some(e.slow_frame_ms))),
            Cell::text(r.stage.name()),
            Cell::num(r.evidence.to_string(), r.evidence as f64),
            Cell::num(
                format!("{} of {}", r.tail_hits, r.tail_n),
                r.tail_hits as f64,
            ),
            Cell::num(
                format!("{:.0} %", r.tail_cover * 100.0),
                r.tail_cover * 100.0,
            ),
            Cell::num(
                format!("{} of {}", r.body_hits, r.body_n),
                r.body_hits as f64,
            ),
            Cell::num(
                format!("{:.1} (p95 {:.0})", r.sham_mean, r.sham_p95),
                r.sham_mean,
            ),
            Cell::text(named),
        ]);
    }
    t.note(clock_note(e));
    for n in source_notes(e) {
        t.note(n);
    }
    t.note(format!(
        "chance: the same join with the evidence shifted round the run's window by {} random \
         offsets (seed {}); a cause is named when more tail loops meet it than in 95 % of the \
         shifts, and at a higher rate than the body's",
        e.shams, e.seed
    ));
    vec![t, tail_loops(e)]
}

/// A line per source read, and what the reader should know of it.
fn source_notes(e: &Explained) -> Vec<String> {
    let mut v = Vec::new();
    for src in &e.sources {
        v.push(format!(
            "{}: {} lines, {} pieces of evidence",
            src.file,
            src.lines,
            src.events.len()
        ));
        v.extend(src.note.clone());
    }
    v
}

fn clock_note(e: &Explained) -> String {
    let k = &e.clock;
    let mut s = format!(
        "clock: page to wall within ±{:.2} ms ({} brackets); the page's own timeOrigin is \
         {:+.2} ms from it",
        k.clock.error_ms, k.clock.n, k.time_origin_diff_ms
    );
    if let Some(g) = &k.sent_to_received {
        s.push_str(&format!(
            "; a reply received minus its frame sent by the stats log: {:+.2} ms (p10 {:+.2}, \
             p90 {:+.2}; n {})",
            g.p50_ms, g.p10_ms, g.p90_ms, g.n
        ));
    }
    s
}

/// The tail's loops, slowest first, with what overlapped each.
fn tail_loops(e: &Explained) -> Table {
    let mut t = Table::new(vec![
        Column::right("loop"),
        Column::left("input"),
        Column::right("inputToPaint"),
        Column::left("what overlapped it"),
    ])
    .with_title(format!(
        "the {} loops over the {}",
        e.split.tail.len(),
        q_name(e.split.quantile)
    ));
    for &i in e.split.tail.iter().rev() {
        let l: &Joined = &e.loops[i];
        t.push_row(vec![
            Cell::num(l.index.to_string(), l.index as f64),
            Cell::text(l.event.clone()),
            Cell::text(ms(l.value_ms)),
            Cell::text(overlapped(e, l)),
        ]);
    }
    t
}

/// What overlapped a loop, a clause per cause and stage: the one piece, or how many and
/// the longest of them.
fn overlapped(e: &Explained, l: &Joined) -> String {
    if l.hits.is_empty() {
        return "nothing in the evidence".into();
    }
    let all: Vec<&crate::Evidence> = e.sources.iter().flat_map(|s| &s.events).collect();
    let mut groups: Vec<(Cause, crate::Stage, Vec<&crate::join::Hit>)> = Vec::new();
    for h in &l.hits {
        match groups.iter_mut().find(|g| g.0 == h.cause && g.1 == h.stage) {
            Some(g) => g.2.push(h),
            None => groups.push((h.cause, h.stage, vec![h])),
        }
    }
    groups
        .iter()
        .map(|(cause, stage, hits)| {
            let total: f64 = hits.iter().map(|h| h.overlap_ms).sum();
            let longest = hits
                .iter()
                .max_by(|a, b| a.overlap_ms.total_cmp(&b.overlap_ms))
                .map(|h| all[h.evidence])
                .expect("a group has a hit");
            if hits.len() == 1 {
                format!(
                    "{} for {total:.1} ms of {} ({})",
                    longest.what,
                    stage.name(),
                    longest.at
                )
            } else {
                format!(
                    "{} pieces of {} for {total:.1} ms of {}, the longest {} ({})",
                    hits.len(),
                    cause.name(),
                    stage.name(),
                    longest.what,
                    longest.at
                )
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The JSON document: everything the tables say, and every joined loop with its hits.
pub fn document(e: &Explained) -> Value {
    arena_report::json::Document::new("explain", e).to_value()
}
