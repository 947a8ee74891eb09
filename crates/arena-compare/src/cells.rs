//! How a comparison's figures read: a quantile (or `> window`), a signed change in ms, a
//! p-value, and the change cells every table of a comparison shows (compare, its
//! breakdowns, the gate, the verdicts).

use arena_report::{fmt_ms, fmt_pct_change, Cell};
use arena_stats::{is_censored, QuantileChange, Verdict};

/// The quantiles every comparison shows.
pub const QUANTILES: [(f64, &str); 3] = [(0.5, "p50"), (0.9, "p90"), (0.99, "p99")];

/// A signed millisecond figure with the true minus sign: `+3.1ms`, `−12.0ms`.
pub fn fmt_ms_signed(ms: f64) -> String {
    let s = fmt_ms(ms.abs());
    if ms == f64::INFINITY {
        // A change onto an unanswered loop: longer than the window, by how much unknown.
        "+\u{221e}".into()
    } else if ms == f64::NEG_INFINITY {
        "\u{2212}\u{221e}".into()
    } else if !ms.is_finite() {
        s
    } else if ms < 0.0 {
        format!("\u{2212}{s}")
    } else {
        format!("+{s}")
    }
}

pub fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// A quantile in ms. One that lands on an unanswered loop reads `≥ 69.5ms`, what is
/// known of it (`floor`: [`arena_stats::censored_floor`]), or `> 2,000ms (window)` when
/// nothing under the window is (the window when the runs record it).
pub fn quantile_text(v: f64, floor: Option<f64>, window_ms: Option<u64>) -> String {
    if !is_censored(v) {
        return fmt_ms(v);
    }
    match (floor, window_ms) {
        (Some(f), Some(w)) if f < w as f64 => format!("\u{2265} {}", fmt_ms(f)),
        (Some(f), None) if f.is_finite() => format!("\u{2265} {}", fmt_ms(f)),
        (_, Some(w)) => format!("> {} (window)", fmt_ms(w as f64)),
        (_, None) => "> window".into(),
    }
}

/// Quantile `q` of a column's sorted values (unanswered loops `+inf` at the top) as a
/// cell: a number, or the text of what is known of it ([`quantile_text`]).
pub fn quantile_cell(sorted: &[f64], q: f64, window_ms: Option<u64>) -> Cell {
    match arena_stats::quantile_sorted(sorted, q) {
        Some(x) if is_censored(x) => {
            let floor = window_ms.and_then(|w| arena_stats::censored_floor(sorted, q, w as f64));
            Cell::text(quantile_text(x, floor, window_ms))
        }
        Some(x) => Cell::num(fmt_ms(x), x),
        None => Cell::text("-"),
    }
}

/// The change of one quantile as a cell: `−21 % (−12.0ms)`, with ` ~` unless the
/// verdict calls it real.
pub fn delta_cell(c: &QuantileChange) -> Cell {
    let mut text = if is_censored(c.candidate) && !is_censored(c.baseline) {
        "beyond the window".to_string()
    } else if is_censored(c.baseline) {
        "-".to_string()
    } else {
        format!(
            "{} ({})",
            fmt_pct_change(c.delta_pct),
            fmt_ms_signed(c.delta)
        )
    };
    text.push_str(verdict_mark(c.verdict));
    let cell = if c.delta_pct.is_finite() {
        Cell::num(text, c.delta_pct)
    } else {
        Cell::text(text)
    };
    if c.verdict.is_real() {
        cell.strong()
    } else {
        cell
    }
}

/// The mark after a change that is not real: ` =` the same (its interval lies within the
/// threshold), ` ~` undecided (benchstat's mark for "no significant change").
pub fn verdict_mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Lower | Verdict::Higher => "",
        Verdict::Same => " =",
        Verdict::Unknown | Verdict::Noise | Verdict::NotSignificant => " ~",
    }
}

/// Δ, interval and p of one quantile change: the three cells every comparison shows.
pub fn change_cells(c: &QuantileChange) -> [Cell; 3] {
    let ci = match c.ci {
        Some(ci) => Cell::text(format!(
            "{} \u{2026} {}",
            fmt_ms_signed(ci.lo),
            fmt_ms_signed(ci.hi)
        )),
        None => Cell::text("-"),
    };
    let p = match c.p {
        Some(p) => Cell::num(fmt_p(p), p),
        None => Cell::text("-"),
    };
    [delta_cell(c), ci, p]
}

/// A minimum detectable change in percent: `+12 %`, or `none` when the runs cannot pin
/// the quantile down at all.
pub fn fmt_mde(pct: f64) -> String {
    if pct.is_finite() {
        fmt_pct_change(pct)
    } else {
        "none".into()
    }
}
