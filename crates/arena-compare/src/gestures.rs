//! The comparison's gestures: each drag and hover of the runs (by gesture number and kind)
//! against the baseline's same gesture, a row per figure, and the counts that say what
//! each figure's n left out. Never pooled with the clicks: a move is not a click, and its
//! figures would shift the loop quantiles by how many moves a run made
//! (docs/run-format.md, "Gestures").

use std::collections::BTreeSet;

use arena_report::{fmt_count, fmt_ms, Cell, Column, Table};
use arena_run::gestures::{GestureMove, RunGesture};
use arena_stats::Summary;
use serde::Serialize;

use crate::group::Group;

/// One figure's values, read off one gesture of one run.
type Read = fn(&RunGesture) -> Vec<f64>;

/// One figure of a gesture: its JSON key, its table label, whether it is in ms (else a
/// count), and how it is read.
struct Figure {
    key: &'static str,
    label: &'static str,
    ms: bool,
    read: Read,
}

fn of_moves(g: &RunGesture, f: impl Fn(&GestureMove) -> Option<f64>) -> Vec<f64> {
    g.moves.iter().filter_map(f).collect()
}

/// The figures, in table order; the send-level ones once a send (on its carried move's
/// row), as the run's own gesture table reads them.
const FIGURES: [Figure; 6] = [
    Figure {
        key: "input_to_socket_ms",
        label: "input-to-socket",
        ms: true,
        read: |g| of_moves(g, |m| m.input_to_socket),
    },
    Figure {
        key: "move_to_pixels_ms",
        label: "move-to-pixels",
        ms: true,
        read: |g| of_moves(g, |m| m.move_to_pixels),
    },
    Figure {
        key: "moves_per_send",
        label: "moves per send",
        ms: false,
        read: |g| of_moves(g, |m| m.is_send().then_some(f64::from(m.carried))),
    },
    Figure {
        key: "oldest_age_ms",
        label: "oldest move in a send",
        ms: true,
        read: |g| of_moves(g, |m| m.oldest_age.filter(|_| m.is_send())),
    },
    Figure {
        key: "frames_behind_moves",
        label: "frames behind, moves",
        ms: false,
        read: |g| g.behind.iter().map(|b| b.moves).collect(),
    },
    Figure {
        key: "frames_behind_ms",
        label: "frames behind, ms",
        ms: true,
        read: |g| g.behind.iter().map(|b| b.ms).collect(),
    },
];

/// n and p50/p90/p99 of one figure in one column (`null` quantiles when n is 0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GestureFigure {
    /// Its key: `input_to_socket_ms`, `move_to_pixels_ms`, ...
    pub figure: &'static str,
    pub n: u64,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
}

impl GestureFigure {
    fn of(figure: &'static str, values: &[f64]) -> GestureFigure {
        let s = Summary::of(values);
        GestureFigure {
            figure,
            n: s.map_or(0, |s| s.n),
            p50: s.map(|s| s.p50),
            p90: s.map(|s| s.p90),
            p99: s.map(|s| s.p99),
        }
    }
}

/// What became of a column's moves of one gesture.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GestureCounts {
    pub answered: u64,
    pub unanswered: u64,
    pub coalesced: u64,
}

/// One column's side of one gesture: its runs' moves pooled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GestureColumn {
    pub column: String,
    /// The column's runs that made this gesture.
    pub runs: u64,
    pub counts: GestureCounts,
    /// In table order.
    pub figures: Vec<GestureFigure>,
}

/// One gesture (number and kind) across the comparison's columns, the baseline first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GestureEntry {
    pub gesture: u64,
    pub kind: String,
    pub columns: Vec<GestureColumn>,
}

/// The gestures of a comparison: the table and the same facts as data.
#[derive(Debug, Clone)]
pub struct GestureComparison {
    pub table: Table,
    pub entries: Vec<GestureEntry>,
}

/// The gestures of the columns `gs` against column `base`; `None` when no run has any.
pub fn compare_gestures(gs: &[Group<'_>], base: usize) -> Option<GestureComparison> {
    let keys: BTreeSet<(u64, &str)> = gs
        .iter()
        .flat_map(|g| &g.runs)
        .flat_map(|r| &r.run.gestures)
        .map(|g| (g.gesture, g.kind.as_str()))
        .collect();
    if keys.is_empty() {
        return None;
    }
    let order: Vec<usize> = std::iter::once(base)
        .chain((0..gs.len()).filter(|&i| i != base))
        .collect();
    let entries: Vec<GestureEntry> = keys
        .into_iter()
        .map(|(gesture, kind)| GestureEntry {
            gesture,
            kind: kind.to_string(),
            columns: order
                .iter()
                .map(|&i| column(&gs[i], gesture, kind))
                .collect(),
        })
        .collect();
    Some(GestureComparison {
        table: table(&entries),
        entries,
    })
}

/// Column `g`'s side of gesture `gesture` of `kind`.
fn column(g: &Group<'_>, gesture: u64, kind: &str) -> GestureColumn {
    let made: Vec<&RunGesture> = g
        .runs
        .iter()
        .flat_map(|r| &r.run.gestures)
        .filter(|x| x.gesture == gesture && x.kind == kind)
        .collect();
    let mut counts = GestureCounts::default();
    for x in &made {
        counts.answered += x.counts.answered;
        counts.unanswered += x.counts.unanswered;
        counts.coalesced += x.counts.coalesced;
    }
    let figures = FIGURES
        .iter()
        .map(|f| {
            let values: Vec<f64> = made.iter().flat_map(|x| (f.read)(x)).collect();
            GestureFigure::of(f.key, &values)
        })
        .collect();
    GestureColumn {
        column: g.name.clone(),
        runs: made.len() as u64,
        counts,
        figures,
    }
}

fn quantile_cell(v: Option<f64>, ms: bool) -> Cell {
    match v {
        Some(x) if ms => Cell::num(fmt_ms(x), x),
        Some(x) => Cell::num(format!("{x:.1}"), x),
        None => Cell::text("-"),
    }
}

/// The table: a row per gesture and figure, each column's n and p50/p90/p99, and a counts
/// row per gesture (answered / unanswered / coalesced).
fn table(entries: &[GestureEntry]) -> Table {
    let mut columns: Vec<Column> = ["gesture", "kind", "figure"]
        .into_iter()
        .map(Column::left)
        .collect();
    for c in entries.first().map_or(&[][..], |e| &e.columns[..]) {
        for q in ["n", "p50", "p90", "p99"] {
            columns.push(Column::right(format!("{q} {}", c.column)));
        }
    }
    let mut t = Table::new(columns)
        .with_title("gestures (each its own rows; never pooled with the clicks)");
    for e in entries {
        let lead = |label: &str| {
            vec![
                Cell::text(e.gesture.to_string()),
                Cell::text(e.kind.clone()),
                Cell::text(label),
            ]
        };
        for (k, f) in FIGURES.iter().enumerate() {
            let mut row = lead(f.label);
            for c in &e.columns {
                let v = c.figures[k];
                row.push(Cell::num(fmt_count(v.n as i64), v.n as f64));
                row.extend([v.p50, v.p90, v.p99].map(|q| quantile_cell(q, f.ms)));
            }
            t.push_row(row);
        }
        let mut row = lead("answered / unanswered / coalesced");
        for c in &e.columns {
            let n = c.counts;
            row.push(Cell::text(format!(
                "{} / {} / {}",
                n.answered, n.unanswered, n.coalesced
            )));
            row.extend((0..3).map(|_| Cell::text("")));
        }
        t.push_row(row);
    }
    t.note("each column's runs pooled per gesture; n counts the moves (sends, painted frames) that have the figure: an unanswered move has no move-to-pixels, a coalesced one no send of its own");
    t
}

#[cfg(test)]
mod tests {
    use arena_run::gestures::{GestureBehind, GestureCounts as RunCounts};
    use arena_run::Run;

    use crate::{compare, comparison_json, synthetic, CompareOptions};

    use super::*;

    /// A hover of one answered move per value of `pixels`, sent alone, and `coalesced`
    /// moves folded into the last send.
    fn hover(pixels: &[f64], coalesced: u64) -> RunGesture {
        let sent = |v: f64| GestureMove {
            t_send: Some(1.0),
            input_to_socket: Some(2.0),
            carried: 1,
            oldest_age: Some(3.0),
            move_to_pixels: Some(v),
            outcome: "answered".into(),
        };
        let folded = GestureMove {
            t_send: Some(1.0),
            input_to_socket: Some(9.0),
            carried: 2,
            oldest_age: Some(4.0),
            move_to_pixels: None,
            outcome: "coalesced".into(),
        };
        let mut moves: Vec<GestureMove> = pixels.iter().map(|&v| sent(v)).collect();
        moves.extend((0..coalesced).map(|_| folded.clone()));
        RunGesture {
            gesture: 0,
            kind: "hover".into(),
            counts: RunCounts {
                answered: pixels.len() as u64,
                coalesced,
                ..RunCounts::default()
            },
            moves,
            behind: vec![GestureBehind {
                moves: 2.0,
                ms: 40.0,
            }],
            behind_n: Some(1),
        }
    }

    fn runs(with: bool) -> Vec<Run> {
        let mut a = synthetic::run("stock", &[50.0; 40], 6000);
        let mut b = synthetic::run("fast", &[40.0; 40], 6000);
        if with {
            a.gestures = vec![hover(&[30.0, 32.0, 34.0], 0)];
            b.gestures = vec![hover(&[70.0, 72.0], 1)];
        }
        vec![a, b]
    }

    #[test]
    fn each_gesture_against_the_baselines_with_its_counts() {
        let cmp = compare(&runs(true), &CompareOptions::default()).unwrap();
        let g = cmp.gestures.expect("gestures");
        assert_eq!(g.entries.len(), 1);
        let e = &g.entries[0];
        let names: Vec<&str> = e.columns.iter().map(|c| c.column.as_str()).collect();
        assert_eq!(names, ["stock", "fast"], "the baseline first");
        let fig = |c: usize, key: &str| {
            *e.columns[c]
                .figures
                .iter()
                .find(|f| f.figure == key)
                .unwrap()
        };
        assert_eq!(
            (
                fig(0, "move_to_pixels_ms").n,
                fig(0, "move_to_pixels_ms").p50
            ),
            (3, Some(32.0))
        );
        assert_eq!(
            (
                fig(1, "move_to_pixels_ms").n,
                fig(1, "move_to_pixels_ms").p50
            ),
            (2, Some(71.0))
        );
        // A coalesced move has an input-to-socket but no send of its own.
        assert_eq!(
            (fig(1, "input_to_socket_ms").n, fig(1, "moves_per_send").n),
            (3, 2)
        );
        assert_eq!(fig(1, "frames_behind_ms").p99, Some(40.0));
        assert_eq!(
            e.columns[1].counts,
            GestureCounts {
                answered: 2,
                unanswered: 0,
                coalesced: 1
            }
        );
        let text = g.table.render(arena_report::Format::Table);
        assert!(
            text.contains("move-to-pixels") && text.contains("2 / 0 / 1"),
            "{text}"
        );
        // The clicks' figures are the clicks' alone.
        let plain = compare(&runs(false), &CompareOptions::default()).unwrap();
        assert_eq!(
            plain.table.render(arena_report::Format::Csv),
            cmp.table.render(arena_report::Format::Csv)
        );
    }

    #[test]
    fn json_has_gestures_only_when_a_run_made_some() {
        let plain = compare(&runs(false), &CompareOptions::default()).unwrap();
        assert!(plain.gestures.is_none());
        assert!(comparison_json(&plain).get("gestures").is_none());
        let cmp = compare(&runs(true), &CompareOptions::default()).unwrap();
        let v = comparison_json(&cmp);
        let col = &v["gestures"][0]["columns"][1];
        assert_eq!(col["column"], "fast");
        assert_eq!(col["counts"]["coalesced"], 1);
        assert_eq!(col["figures"][1]["figure"], "move_to_pixels_ms");
        assert_eq!(col["figures"][1]["p50"], 71.0);
        let mut without = v.clone();
        without.as_object_mut().unwrap().remove("gestures");
        assert_eq!(without, comparison_json(&plain), "nothing else changes");
    }

    #[test]
    fn the_report_has_a_gestures_section_only_when_a_run_made_some() {
        let page = |with: bool| {
            let rs = runs(with);
            let cmp = compare(&rs, &CompareOptions::default()).unwrap();
            crate::report_html(&rs, &cmp, &crate::ReportOptions::default())
        };
        let with = page(true);
        let at = with
            .find("<section id=\"gestures\">")
            .expect("a gestures section");
        let section = &with[at..];
        assert!(section.contains("<td>move-to-pixels</td>"), "{section}");
        assert!(
            section.contains("<td class=\"num\">71.0ms</td>"),
            "{section}"
        );
        let without = page(false);
        assert!(!without.contains("id=\"gestures\"") && !without.contains("{{GESTURES}}"));
    }
}
