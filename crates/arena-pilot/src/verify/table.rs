//! `verify`'s table: one row per input kind, each metric's median and the shifts of its
//! lower decile and median with their intervals.

use arena_report::{Cell, Column, Table};

use super::report::{KindResult, MetricShifts, Unit, Verdict, VerifyReport, MIN_ANSWERS};
use super::rule::{stays, Band, QuantileShift};

/// The verification's tables in `format`: the loop kinds', then the gestures' if any.
pub fn verify_text(r: &VerifyReport, format: arena_report::Format) -> String {
    let mut text = verify_table(r).render(format);
    if let Some(moves) = moves_table(r) {
        text.push('\n');
        text.push_str(&moves.render(format));
    }
    text
}

/// The verification as a table: one row per input kind.
pub fn verify_table(r: &VerifyReport) -> Table {
    let low = pct(r.low_q);
    let mut t = Table::new(vec![
        Column::left("input"),
        Column::right("n direct"),
        Column::right("n delayed"),
        Column::right("sendToRecv p50"),
        Column::right(format!("{low} shift")),
        Column::right("p50 shift"),
        Column::right(format!("{} p50", r.headline)),
        Column::right(format!("{low} shift")),
        Column::right("p50 shift"),
        Column::left("verdict"),
    ])
    .with_title(format!(
        "verify: +{} ms RTT on the link, {} run{} a side interleaved; each kind's {low} and p50 must move by {} ± {} ms",
        fmt(r.injected_ms),
        r.runs[0],
        if r.runs[0] == 1 { "" } else { "s" },
        fmt(r.injected_ms),
        fmt(r.tolerance_ms)
    ));
    for k in r.kinds.iter().filter(|k| k.unit == Unit::Loops) {
        let [a, b, c] = metric_cells(k.send_to_recv.as_ref());
        let [d, e, f] = metric_cells(k.headline.as_ref());
        t.push_row(vec![
            Cell::text(&k.event),
            answered_cell(k, 0),
            answered_cell(k, 1),
            a,
            b,
            c,
            d,
            e,
            f,
            verdict_cell(k),
        ]);
    }
    notes(&mut t, r);
    t
}

/// The gestures' moves as a table, when the runs made any: move-to-pixels must move by
/// the delay, input-to-socket must not.
pub fn moves_table(r: &VerifyReport) -> Option<Table> {
    let moves: Vec<&KindResult> = r.kinds.iter().filter(|k| k.unit == Unit::Moves).collect();
    if moves.is_empty() {
        return None;
    }
    let low = pct(r.low_q);
    let mut t = Table::new(vec![
        Column::left("gesture"),
        Column::right("moves answered, direct"),
        Column::right("delayed"),
        Column::right("input-to-socket p50"),
        Column::right("p50 shift (must stay 0)"),
        Column::right("move-to-pixels p50"),
        Column::right(format!("{low} shift")),
        Column::right("p50 shift"),
        Column::left("verdict"),
    ])
    .with_title(format!(
        "verify, moves: move-to-pixels' {low} and p50 must move by {} ± {} ms, input-to-socket's {low} and p50 stay within ± {} ms of 0",
        fmt(r.injected_ms),
        fmt(r.tolerance_ms),
        fmt(r.tolerance_ms)
    ));
    for k in moves {
        let still = Band {
            injected_ms: 0.0,
            tolerance_ms: r.tolerance_ms,
        };
        let (socket_p50, socket) = match &k.input_to_socket {
            Some(m) => {
                let word = if stays(&m.median, still) {
                    "stays"
                } else {
                    "moved"
                };
                (median_cell(m), shift_cell_as(&m.median, word))
            }
            None => (Cell::text("-"), Cell::text("-")),
        };
        let [d, e, f] = metric_cells(k.headline.as_ref());
        t.push_row(vec![
            Cell::text(&k.event),
            answered_cell(k, 0),
            answered_cell(k, 1),
            socket_p50,
            socket,
            d,
            e,
            f,
            verdict_cell(k),
        ]);
    }
    t.note(format!(
        "moves: every move a send carried is judged for input-to-socket; answered moves (+ unanswered ones at the top) for move-to-pixels, coalesced ones never being drawn at their own point; intervals as in the table above ({:.2} %)",
        r.level * 100.0
    ));
    Some(t)
}

fn verdict_cell(k: &KindResult) -> Cell {
    let verdict = Cell::text(verdict_text(k));
    if k.verdict.fails() {
        verdict.strong()
    } else {
        verdict
    }
}
fn notes(t: &mut Table, r: &VerifyReport) {
    let low = pct(r.low_q);
    t.note(format!(
        "n: warm answered loops a side (+ unanswered ones, which stand at the top of each run); ms on the page clock, type 7; the delayed side went through the shaping link with {} ms more round trip; shift: delayed less direct, with its {:.2} % interval over the runs ({} intervals, \u{3b1} = {} family-wise, Bonferroni)",
        fmt(r.injected_ms),
        r.level * 100.0,
        r.intervals,
        r.alpha
    ));
    t.note(format!(
        "caused: every interval meets the delay (\u{b1} {} ms) and leaves 0 out. Not caused: a {low} moved wholly less than the delay, or a p50 not at all: some loop closed on something its input did not cause (an answer caused by its input cannot come sooner than the path allows). Its median moved less: the fast end moved by the delay, the middle less (a target faster when delayed). Unknown: the {low}'s interval holds both 0 and the delay (exit 4); a p50's that does is said beside a caused fast end (exit 0); fewer than {MIN_ANSWERS} answers a side prove nothing",
        fmt(r.tolerance_ms)
    ));
}

fn answered_cell(k: &KindResult, side: usize) -> Cell {
    let (n, u) = (k.answered[side], k.unanswered[side]);
    let text = if u == 0 {
        n.to_string()
    } else {
        format!("{n} + {u} unanswered")
    };
    Cell::num(text, n as f64)
}

/// A kind's verdict, with what would decide it when it is unknown.
fn verdict_text(k: &KindResult) -> String {
    let what = match k.unit {
        Unit::Moves => "moves a run",
        Unit::Loops => "--clicks",
    };
    let more = |n: Option<u64>| match (n, k.unit) {
        (Some(n), Unit::Moves) => format!("about {n} {what} would decide it"),
        (Some(n), Unit::Loops) => format!("about {what} {n} would decide it"),
        (None, _) => "the runs disagree; more --rounds, not clicks, would decide it".into(),
    };
    match k.verdict {
        Verdict::Unknown | Verdict::CausedMedianUnknown => {
            format!("{}: {}", k.verdict.text(), more(k.clicks_to_decide))
        }
        Verdict::TooFew => format!("{} (under {MIN_ANSWERS} a side)", k.verdict.text()),
        v => v.text().into(),
    }
}

fn metric_cells(m: Option<&MetricShifts>) -> [Cell; 3] {
    match m {
        None => [Cell::text("-"), Cell::text("-"), Cell::text("-")],
        Some(m) => [median_cell(m), shift_cell(&m.low), shift_cell(&m.median)],
    }
}

fn median_cell(m: &MetricShifts) -> Cell {
    Cell::text(format!(
        "{} → {} ms",
        fmt(m.median.direct_ms),
        fmt(m.median.delayed_ms)
    ))
}

fn shift_cell(s: &QuantileShift) -> Cell {
    shift_cell_as(s, s.moved.word())
}

fn shift_cell_as(s: &QuantileShift, word: &str) -> Cell {
    let text = format!(
        "{:+.1} ms ({} … {}) {word}",
        s.shift_ms,
        bound(s.lo_ms),
        bound(s.hi_ms),
    );
    Cell::num(text, s.shift_ms)
}

fn bound(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 { "+∞" } else { "−∞" }.into()
    } else {
        format!("{v:+.1}")
    }
}

fn pct(q: f64) -> String {
    format!("p{}", (q * 100.0).round())
}

fn fmt(v: f64) -> String {
    format!("{v:.1}")
}
