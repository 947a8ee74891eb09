//! What `verify` judges of each kind, gathered from the runs: a loop kind's sendToRecv
//! and headline, a gesture kind's move-to-pixels (which must move by the delay) and
//! input-to-socket (which must not: the app sends before the link), run by run.

use arena_run::gestures::GestureMove;
use arena_run::{Loop, Metric, Outcome, Run};

use super::report::{judge, metric_shifts, KindResult, MetricShifts, Unit, Verdict, MIN_ANSWERS};
use super::rule::{self, Band, Move};

/// One side's runs of one metric: a slice a run, ascending, unanswered at `+inf`.
type Side = Vec<Vec<f64>>;

/// One kind's rows, both sides.
pub(super) struct KindData {
    event: String,
    unit: Unit,
    /// Metrics that must move by the delay, direct then delayed: a loop kind's
    /// sendToRecv and headline, a gesture's move-to-pixels.
    moving: Vec<[Side; 2]>,
    /// A metric that must not move (a gesture's input-to-socket).
    staying: Option<[Side; 2]>,
    loops: [usize; 2],
    answered: [usize; 2],
    unanswered: [usize; 2],
    /// Mean warm (judged) and cold rows of the kind a run, for what would decide it.
    warm_per_run: f64,
    cold_per_run: f64,
}

/// Runs as the slices [`metric_shifts`] takes.
pub(super) fn slices(runs: &[Vec<f64>]) -> Vec<&[f64]> {
    runs.iter().map(Vec::as_slice).collect()
}

/// Each run's values, ascending, runs with none left out.
fn sorted_runs(runs: &[&Run], of: impl Fn(&Run) -> Vec<f64>) -> Side {
    runs.iter()
        .map(|r| {
            let mut v = of(r);
            v.sort_unstable_by(f64::total_cmp);
            v
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// A loop's value of `m`: its own when answered, `+inf` when not; a claimed loop is
/// counted apart.
fn loop_value(l: &Loop, m: Metric) -> Option<f64> {
    match l.outcome {
        Outcome::Answered => m.of(l),
        Outcome::Unanswered => Some(f64::INFINITY),
        Outcome::Claimed => None,
    }
}

fn of_event<'a>(r: &'a Run, event: &'a str) -> impl Iterator<Item = &'a Loop> {
    r.loops.iter().filter(move |l| l.event == event)
}

fn of_kind<'a>(r: &'a Run, kind: &'a str) -> impl Iterator<Item = &'a GestureMove> {
    r.gestures
        .iter()
        .filter(move |g| g.kind == kind)
        .flat_map(|g| &g.moves)
}

fn mean_per_run(sides: [&[&Run]; 2], count: impl Fn(&Run) -> usize) -> f64 {
    let runs = sides[0].iter().chain(sides[1]);
    let n = (sides[0].len() + sides[1].len()).max(1);
    runs.map(|r| count(r)).sum::<usize>() as f64 / n as f64
}

impl KindData {
    /// A loop kind (`event`): its warm loops' sendToRecv and `headline`.
    pub(super) fn loops(event: String, sides: [&[&Run]; 2], headline: Metric) -> KindData {
        let count =
            |r: &Run, f: &dyn Fn(&Loop) -> bool| of_event(r, &event).filter(|l| f(l)).count();
        let warm = |o: Outcome| move |l: &Loop| !l.cold && l.outcome == o;
        let metric = |m: Metric| {
            sides.map(|runs| {
                sorted_runs(runs, |r| {
                    of_event(r, &event)
                        .filter(|l| !l.cold)
                        .filter_map(|l| loop_value(l, m))
                        .collect()
                })
            })
        };
        let total = |f: &dyn Fn(&Loop) -> bool| sides.map(|s| s.iter().map(|r| count(r, f)).sum());
        KindData {
            moving: vec![metric(Metric::SendToRecv), metric(headline)],
            staying: None,
            loops: total(&|_| true),
            answered: total(&warm(Outcome::Answered)),
            unanswered: total(&warm(Outcome::Unanswered)),
            warm_per_run: mean_per_run(sides, |r| count(r, &|l| !l.cold)),
            cold_per_run: mean_per_run(sides, |r| count(r, &|l| l.cold)),
            unit: Unit::Loops,
            event,
        }
    }

    /// A gesture kind (`drag`, `hover`): its moves' move-to-pixels (answered moves, the
    /// unanswered at `+inf`; a coalesced move is never drawn at its own point) and
    /// input-to-socket (every move a send carried).
    pub(super) fn moves(kind: String, sides: [&[&Run]; 2]) -> KindData {
        let drawn = |r: &Run| -> Vec<f64> {
            of_kind(r, &kind)
                .filter_map(|m| match m.outcome.as_str() {
                    "answered" => m.move_to_pixels,
                    "unanswered" => Some(f64::INFINITY),
                    _ => None,
                })
                .collect()
        };
        let sent = |r: &Run| -> Vec<f64> {
            of_kind(r, &kind)
                .filter_map(|m| m.input_to_socket)
                .collect()
        };
        let count = |r: &Run, o: &str| of_kind(r, &kind).filter(|m| m.outcome == o).count();
        let total = |o: &str| sides.map(|s| s.iter().map(|r| count(r, o)).sum());
        KindData {
            moving: vec![sides.map(|runs| sorted_runs(runs, drawn))],
            staying: Some(sides.map(|runs| sorted_runs(runs, sent))),
            loops: sides.map(|s| s.iter().map(|r| of_kind(r, &kind).count()).sum()),
            answered: total("answered"),
            unanswered: total("unanswered"),
            warm_per_run: mean_per_run(sides, |r| of_kind(r, &kind).count()),
            cold_per_run: 0.0,
            unit: Unit::Moves,
            event: kind,
        }
    }

    pub(super) fn judged(&self) -> bool {
        self.answered.iter().all(|&n| n >= MIN_ANSWERS)
    }

    /// The intervals this kind adds to the family: two a metric with runs on both sides.
    pub(super) fn intervals(&self) -> usize {
        if !self.judged() {
            return 0;
        }
        let present = |m: &[Side; 2]| m.iter().all(|s| !s.is_empty());
        2 * (self.moving.iter().filter(|m| present(m)).count()
            + self.staying.iter().filter(|m| present(m)).count())
    }

    pub(super) fn result(self, band: Band, level: f64) -> KindResult {
        let judged = self.judged();
        let shifts = |m: &[Side; 2], band: Band| -> Option<MetricShifts> {
            if !judged {
                return None;
            }
            metric_shifts(&slices(&m[0]), &slices(&m[1]), band, level)
        };
        let moving: Vec<Option<MetricShifts>> =
            self.moving.iter().map(|m| shifts(m, band)).collect();
        // Judged against no delay at all: within the tolerance of 0.
        let still = Band {
            injected_ms: 0.0,
            tolerance_ms: band.tolerance_ms,
        };
        let staying = self.staying.as_ref().and_then(|m| shifts(m, still));
        let present: Vec<&MetricShifts> = moving.iter().flatten().collect();
        let verdict = if self.answered == [0, 0] {
            Verdict::Unanswered
        } else if !judged {
            Verdict::TooFew
        } else {
            match judge(&present) {
                v if v.fails() => v,
                _ if staying.is_some_and(|s| !s.both().iter().all(|q| rule::stays(q, still))) => {
                    Verdict::SocketMoved
                }
                v => v,
            }
        };
        let clicks_to_decide = matches!(verdict, Verdict::Unknown | Verdict::CausedMedianUnknown)
            .then(|| self.rows_to_decide(&present))
            .flatten();
        let (send_to_recv, headline) = match self.unit {
            Unit::Loops => (moving[0], moving.get(1).copied().flatten()),
            Unit::Moves => (None, moving[0]),
        };
        KindResult {
            event: self.event,
            unit: self.unit,
            loops: self.loops,
            answered: self.answered,
            unanswered: self.unanswered,
            send_to_recv,
            headline,
            input_to_socket: staying,
            verdict,
            clicks_to_decide,
        }
    }

    /// The clicks (moves, for a gesture) a run that would narrow every unknown interval
    /// enough: the largest factor of the rows a run any needs, applied to the warm rows,
    /// plus the cold ones.
    fn rows_to_decide(&self, present: &[&MetricShifts]) -> Option<u64> {
        let unknown = present
            .iter()
            .flat_map(|m| m.both())
            .filter(|s| s.moved == Move::Unknown);
        let mut most = 1.0_f64;
        for s in unknown {
            most = most.max(s.loops_factor?);
        }
        Some((self.warm_per_run * most + self.cold_per_run).ceil() as u64)
    }
}
