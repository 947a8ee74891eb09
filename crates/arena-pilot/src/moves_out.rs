//! A run's gestures in its folder: `moves.csv` (a row per move), `frames_behind.csv` (a row
//! per painted frame) and `gestures.json` (each gesture's counts and figures), every row
//! and figure keyed by gesture number and kind, never pooled with the clicks
//! (docs/run-format.md, "Gestures").

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use arena_report::{Cell, Column, Table};
use arena_stats::Summary;
use serde::Serialize;
use serde_json::Value;

use crate::moves::{GestureLoops, MoveRow};

// The names `Run::load` reads them back by.
pub use arena_run::gestures::{GestureCounts, FRAMES_BEHIND_CSV, GESTURES_JSON, MOVES_CSV};

fn cell(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_default()
}

fn moves_csv(gestures: &[GestureLoops]) -> String {
    let mut s = String::from(
        "gesture,kind,move,t_input_ms,t_delivered_ms,t_send_ms,input_to_socket_ms,carried,oldest_age_ms,t_answer_ms,move_to_pixels_ms,outcome\n",
    );
    for g in gestures {
        for m in &g.moves {
            let _ = writeln!(
                s,
                "{},{},{},{:.3},{},{},{},{},{},{},{},{}",
                g.gesture,
                g.kind.name(),
                m.index,
                m.t_input,
                cell(m.t_delivered),
                cell(m.t_send),
                cell(m.input_to_socket()),
                m.carried,
                cell(m.oldest_age_ms),
                cell(m.t_answer),
                cell(m.move_to_pixels()),
                m.outcome.name()
            );
        }
    }
    s
}

fn behind_csv(gestures: &[GestureLoops]) -> String {
    let mut s = String::from("gesture,kind,t_frame_ms,moves_behind,ms_behind\n");
    for g in gestures {
        for b in &g.behind {
            let _ = writeln!(
                s,
                "{},{},{:.3},{},{:.3}",
                g.gesture,
                g.kind.name(),
                b.t_frame,
                b.moves,
                b.ms
            );
        }
    }
    s
}

/// One gesture in `gestures.json`; the type is the document's shape.
#[derive(Debug, Clone, Serialize)]
pub struct GestureDoc {
    pub gesture: usize,
    pub kind: &'static str,
    pub counts: GestureCounts,
    pub browser_delivery_ms: FigureDoc,
    pub input_to_socket_ms: FigureDoc,
    pub move_to_pixels_ms: FigureDoc,
    pub moves_per_send: FigureDoc,
    pub oldest_age_ms: FigureDoc,
    pub frames_behind_moves: FigureDoc,
    pub frames_behind_ms: FigureDoc,
}

/// n, p50, p90 and max of a figure (ms or a count), `null` figures when there are none.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FigureDoc {
    pub n: u64,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub max: Option<f64>,
}

/// n, p50, p90 and max of `values` (ms or a count), `null` figures when there are none.
pub fn figure(values: &[f64]) -> FigureDoc {
    let s = Summary::of(values);
    FigureDoc {
        n: s.map_or(0, |s| s.n),
        p50: s.map(|s| s.p50),
        p90: s.map(|s| s.p90),
        max: s.map(|s| s.max),
    }
}

/// The figures of one gesture's moves.
pub fn of_moves(rows: &[MoveRow], f: impl Fn(&MoveRow) -> Option<f64>) -> Vec<f64> {
    rows.iter().filter_map(f).collect()
}

/// One gesture's document: counts that add up, and each figure with its n.
pub fn gesture_doc(g: &GestureLoops) -> GestureDoc {
    let c = g.counts;
    // The send-level figures once per send: on its carried (newest) move's row.
    let sent =
        |m: &MoveRow| m.outcome != crate::moves::MoveOutcome::Coalesced && m.t_send.is_some();
    let behind = |f: fn(&crate::moves::BehindRow) -> f64| {
        figure(&g.behind.iter().map(f).collect::<Vec<_>>())
    };
    GestureDoc {
        gesture: g.gesture,
        kind: g.kind.name(),
        counts: GestureCounts {
            dispatched: c.dispatched,
            folded_by_browser: c.folded,
            unseen: c.unseen,
            answered: c.answered,
            unanswered: c.unanswered,
            coalesced: c.coalesced,
            sends: c.sends,
        },
        browser_delivery_ms: figure(&of_moves(&g.moves, MoveRow::browser_delivery)),
        input_to_socket_ms: figure(&of_moves(&g.moves, MoveRow::input_to_socket)),
        move_to_pixels_ms: figure(&of_moves(&g.moves, MoveRow::move_to_pixels)),
        moves_per_send: figure(&of_moves(&g.moves, |m| {
            sent(m).then_some(f64::from(m.carried))
        })),
        oldest_age_ms: figure(&of_moves(&g.moves, |m| {
            if sent(m) {
                m.oldest_age_ms
            } else {
                None
            }
        })),
        frames_behind_moves: behind(|b| f64::from(b.moves)),
        frames_behind_ms: behind(|b| b.ms),
    }
}

/// [`gesture_doc`] as a JSON value, for reading a figure by its key.
pub fn gesture_json(g: &GestureLoops) -> Value {
    arena_report::json::to_value(&gesture_doc(g))
}

/// `gestures.json`: every gesture of the run.
#[derive(Debug, Clone, Serialize)]
pub struct GesturesDoc {
    pub gestures: Vec<GestureDoc>,
}

/// Writes the three files into the run folder `dir` (nothing when the run had no gestures).
pub fn write(dir: &Path, gestures: &[GestureLoops]) -> Result<()> {
    if gestures.is_empty() {
        return Ok(());
    }
    let doc = arena_report::json::Document::new(
        "gestures",
        GesturesDoc {
            gestures: gestures.iter().map(gesture_doc).collect(),
        },
    );
    let files = [
        (MOVES_CSV, moves_csv(gestures)),
        (FRAMES_BEHIND_CSV, behind_csv(gestures)),
        (
            GESTURES_JSON,
            format!("{}\n", serde_json::to_string_pretty(&doc)?),
        ),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).with_context(|| format!("writing {name}"))?;
    }
    Ok(())
}

/// The figures of [`gesture_json`] a table shows, with their units.
const TABLE_FIGURES: [(&str, &str); 7] = [
    ("browser_delivery_ms", "browser's hold of a move, ms"),
    ("input_to_socket_ms", "input-to-socket, ms"),
    ("moves_per_send", "moves a send carried"),
    ("oldest_age_ms", "oldest move in a send, ms"),
    ("move_to_pixels_ms", "move-to-pixels, ms"),
    ("frames_behind_moves", "frames behind, moves"),
    ("frames_behind_ms", "frames behind, ms"),
];

/// One table of the run's gestures: a row per gesture and figure, its n beside it, and a
/// note per gesture with the counts that add up to the moves dispatched.
pub fn gesture_table(gestures: &[GestureLoops]) -> Table {
    let mut t = Table::new(
        ["gesture", "kind", "figure"]
            .into_iter()
            .map(Column::left)
            .chain(["n", "p50", "p90", "max"].into_iter().map(Column::right))
            .collect(),
    )
    .with_title("gestures (each its own rows; never pooled with the clicks)");
    for g in gestures {
        let doc = gesture_json(g);
        for (key, label) in TABLE_FIGURES {
            let f = &doc[key];
            let num = |k: &str| match f[k].as_f64() {
                Some(v) => Cell::num(format!("{v:.1}"), v),
                None => Cell::text("-"),
            };
            t.push_row(vec![
                Cell::text(g.gesture.to_string()),
                Cell::text(g.kind.name()),
                Cell::text(label),
                Cell::num(f["n"].to_string(), f["n"].as_f64().unwrap_or(0.0)),
                num("p50"),
                num("p90"),
                num("max"),
            ]);
        }
        let c = g.counts;
        t.note(format!(
            "gesture {} ({}): {} moves dispatched = {} answered + {} unanswered + {} coalesced into a later move's send + {} folded by the browser before the page saw them (its pointermoves' coalesced events) + {} unseen (neither recorded nor reported folded); {} sends",
            g.gesture, g.kind.name(), c.dispatched, c.answered, c.unanswered, c.coalesced, c.folded, c.unseen, c.sends
        ));
    }
    if !gestures.is_empty() {
        t.note(MOVES_UNPROVEN);
    }
    t
}

/// What move-to-pixels is and is not, said under every gesture table: at a person's pace
/// a frame that changes the pixels at a move's point may be a neighbour's answer or one
/// already on its way, and `verify` is what tells.
pub const MOVES_UNPROVEN: &str = "move-to-pixels pairs each move with the first frame that changed the pixels at its point; at a person's pace that frame may answer a neighbouring move or be already on its way, so it is not proven caused by its move: `arena-perf verify` with this pilot file judges it (docs/pilot-file.md, Causality)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_with_no_values_is_n_zero_and_null_quantiles() {
        let none = serde_json::to_value(figure(&[])).unwrap();
        assert_eq!(
            none,
            serde_json::json!({"n": 0, "p50": null, "p90": null, "max": null})
        );
        let some = serde_json::to_value(figure(&[4.0, 1.0, 2.0])).unwrap();
        assert_eq!(
            (some["n"].as_u64(), some["max"].as_f64()),
            (Some(3), Some(4.0))
        );
        assert_eq!(some["p50"], 2.0);
    }
}
