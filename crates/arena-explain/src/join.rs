//! Each loop's stages on the page clock, and the evidence that overlapped each: a pause
//! is only held against the stage it can lengthen (`Cause::stage`).

use arena_run::{Loop, Outcome};
use serde::Serialize;

use crate::evidence::{Cause, Evidence, Stage};

/// Evidence placed on the page clock: ms, sorted by start.
#[derive(Debug, Clone)]
pub struct Placed {
    pub cause: Cause,
    pub start_ms: f64,
    pub end_ms: f64,
    /// Its index in the evidence list it came from.
    pub index: usize,
}

/// Puts `evidence` on the page clock (page ms = Unix ms − `unix_offset_ms`), sorted by
/// start.
pub fn place(evidence: &[Evidence], unix_offset_ms: f64) -> Vec<Placed> {
    let mut v: Vec<Placed> = evidence
        .iter()
        .enumerate()
        .map(|(index, e)| Placed {
            cause: e.cause,
            start_ms: e.start_unix_ms - unix_offset_ms,
            end_ms: e.end_unix_ms - unix_offset_ms,
            index,
        })
        .collect();
    v.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));
    v
}

/// One stage of one loop, page ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Span {
    pub stage: Stage,
    pub start_ms: f64,
    pub end_ms: f64,
}

/// The stages a loop has times for. An unanswered loop's server stage runs from its send
/// to the end of its window: whatever held its reply held it there.
pub fn stages(l: &Loop, window_ms: f64) -> Vec<Span> {
    let mut v = Vec::new();
    let mut push = |stage, a: Option<f64>, b: Option<f64>| {
        if let (Some(a), Some(b)) = (a, b) {
            if b >= a {
                v.push(Span {
                    stage,
                    start_ms: a,
                    end_ms: b,
                });
            }
        }
    };
    push(Stage::Browser, Some(l.t_input), l.t_send);
    let reply = match l.outcome {
        Outcome::Unanswered => Some(l.t_input + window_ms),
        _ => l.t_recv,
    };
    push(Stage::Server, l.t_send, reply);
    push(Stage::Paint, l.t_recv, l.t_paint);
    v
}

/// One piece of evidence overlapping one stage of a loop.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Hit {
    pub cause: Cause,
    pub stage: Stage,
    /// How much of the stage it covered, ms.
    pub overlap_ms: f64,
    /// Its index in the evidence list.
    pub evidence: usize,
}

/// The evidence overlapping `spans`, each held only against its own stage. `placed` is
/// sorted by start and `longest_ms` bounds every piece's length, so only the pieces that
/// start within `longest_ms` before a stage are looked at.
pub fn hits(spans: &[Span], placed: &[Placed], longest_ms: f64, shift_ms: f64) -> Vec<Hit> {
    let mut out = Vec::new();
    for s in spans {
        let (a, b) = (s.start_ms - shift_ms, s.end_ms - shift_ms);
        let first = placed.partition_point(|p| p.start_ms < a - longest_ms);
        for p in placed[first..].iter().take_while(|p| p.start_ms < b) {
            if p.cause.stage() != s.stage {
                continue;
            }
            let overlap = p.end_ms.min(b) - p.start_ms.max(a);
            if overlap > 0.0 || (overlap == 0.0 && a == b) {
                out.push(Hit {
                    cause: p.cause,
                    stage: s.stage,
                    overlap_ms: overlap.max(0.0),
                    evidence: p.index,
                });
            }
        }
    }
    out
}

/// The longest piece of `placed`, ms (0 for none).
pub fn longest(placed: &[Placed]) -> f64 {
    placed
        .iter()
        .map(|p| p.end_ms - p.start_ms)
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(cause: Cause, a: f64, b: f64, index: usize) -> Placed {
        Placed {
            cause,
            start_ms: a,
            end_ms: b,
            index,
        }
    }

    fn server(a: f64, b: f64) -> Span {
        Span {
            stage: Stage::Server,
            start_ms: a,
            end_ms: b,
        }
    }

    #[test]
    fn a_pause_counts_only_where_it_overlaps_and_by_how_much() {
        let p = vec![
            placed(Cause::GcPause, 0.0, 10.0, 0),
            placed(Cause::GcPause, 95.0, 120.0, 1),
            placed(Cause::SlowFrame, 200.0, 400.0, 2),
        ];
        let l = longest(&p);
        assert_eq!(l, 200.0);
        let h = hits(&[server(100.0, 150.0)], &p, l, 0.0);
        assert_eq!(h.len(), 1);
        assert_eq!((h[0].evidence, h[0].overlap_ms), (1, 20.0));
        // Touching is not overlapping: the pause ended as the stage began.
        assert!(hits(&[server(120.0, 150.0)], &p, l, 0.0).is_empty());
        // A long piece that started well before the stage is still found.
        let h = hits(&[server(390.0, 420.0)], &p, l, 0.0);
        assert_eq!((h[0].evidence, h[0].overlap_ms), (2, 10.0));
        // Shifted evidence (the sham) is the stage moved the other way.
        let h = hits(&[server(100.0, 150.0)], &p, l, 100.0);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].evidence, 0);
    }

    #[test]
    fn server_evidence_is_never_held_against_the_browser_stage() {
        let p = vec![placed(Cause::GcPause, 0.0, 100.0, 0)];
        let browser = Span {
            stage: Stage::Browser,
            start_ms: 10.0,
            end_ms: 20.0,
        };
        assert!(hits(&[browser], &p, 100.0, 0.0).is_empty());
    }
}
