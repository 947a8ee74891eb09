//! `verify`: proof that each kind of loop is caused by its input, on the user's own app.
//!
//! An answer caused by an input moves when the path between them gets longer. `verify`
//! runs the same plan direct and through the shaping link with added round-trip time,
//! interleaved (direct, delayed, direct, delayed), and for each input kind compares the
//! pooled warm loops of sendToRecv and of the headline (inputToPixels where the pixels or
//! js oracle closed the loops, inputToPaint under the reply oracle), direct and delayed.
//!
//! The proof is the floor: an answer its input caused cannot come sooner than the path
//! allows, so the fastest delayed answer must be at least the injected delay (less the
//! tolerance) slower than the fastest direct one. A loop closed by something its input did
//! not cause (a frame already in flight, an earlier input's follow-up, a clock of the
//! app's own) does not move, and one such loop is enough to pull the floor down. The
//! medians are printed beside it and judged too, but a median may move by less than the
//! delay for a caused answer: on a 2-core machine a target whose work no longer overlaps
//! the browser's gets faster when the path is longer (noVNC's press sendToRecv floor moved
//! +19.6 ms for +20, its median +17.8), and a headline quantized to frames moves by the
//! delay only on average over the frame phase.

use anyhow::{anyhow, Result};
use arena_report::{Cell, Column, Exit, ExitKind, Table};
use arena_run::{Metric, Outcome, Run};
use arena_stats::Summary;
use serde::Serialize;

use crate::ab::AbOutcome;
use crate::plan::{Plan, TargetPlan};

/// Fewer answered loops a side than this prove nothing either way.
pub const MIN_ANSWERS: usize = 8;

/// The two arms `verify` interleaves: `plan` direct, and `plan` through a link with
/// `rule.injected_ms` more round trip. An external target that accepts no connection now
/// is exit 3 here, before any browser starts.
pub fn verify_plans<'a>(plan: Plan<'a>, rule: VerifyRule) -> Result<Vec<Plan<'a>>> {
    if let TargetPlan::External { url } = &plan.target {
        crate::target::accepts(url).map_err(|e| {
            anyhow!(Exit::new(
                ExitKind::TargetFailed,
                format!(
                    "verify: the target {url} cannot be reached, direct or through the link: {e:#}"
                )
            ))
        })?;
    }
    let link = arena_link::LinkSpec::parse(&format!("rtt={}ms", rule.injected_ms))
        .map_err(|e| anyhow!(Exit::bad_input(format!("--rtt: {e}"))))?;
    let arm = plan.arm_name.clone();
    let mut direct = plan.clone();
    direct.link = None;
    direct.arm_name = format!("{arm}-direct");
    let mut delayed = plan;
    delayed.link = Some(link);
    delayed.arm_name = format!("{arm}-rtt{}ms", rule.injected_ms);
    Ok(vec![direct, delayed])
}

/// The verification of an interleaved outcome of [`verify_plans`]' two arms.
pub fn verify_outcome(outcome: &AbOutcome, rule: VerifyRule) -> VerifyReport {
    let side = |i: usize| -> Vec<&Run> {
        outcome
            .outcomes
            .iter()
            .skip(i)
            .step_by(2)
            .map(|o| &o.run)
            .collect()
    };
    verify_report(&side(0), &side(1), rule)
}

/// What one verification compares.
#[derive(Debug, Clone, Copy)]
pub struct VerifyRule {
    /// The round-trip time the link added, ms.
    pub injected_ms: f64,
    /// How far a median's shift may be from `injected_ms` and still prove the path, ms.
    pub tolerance_ms: f64,
}

/// How one input kind fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Both floors and both medians moved by the injected delay, within the tolerance.
    Caused,
    /// The floors moved by the delay, a median by less: every answer is caused, and the
    /// target was faster in the middle of its distribution when delayed.
    CausedMedianLess,
    /// A floor moved by less than the injected delay (beyond the tolerance): some of the
    /// answers were not caused by the inputs they were paired with (in flight before them,
    /// an earlier input's follow-up, a clock of the app's own), since an answer an input
    /// caused cannot arrive sooner than the path allows.
    NotCaused,
    /// Every median moved by at least the delay, one by more: caused, and the path counts
    /// more than once (an answer gated on an ack that crosses the link, say).
    Amplified,
    /// Too few answered loops on a side to tell.
    TooFew,
    /// No answered loop on either side: nothing was claimed, nothing to prove.
    Unanswered,
}

impl Verdict {
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Caused => "caused by its input",
            Verdict::CausedMedianLess => "caused; its median moved less than the delay",
            Verdict::NotCaused => "not caused by its input",
            Verdict::Amplified => "caused; moved more than the delay",
            Verdict::TooFew => "too few answers to tell",
            Verdict::Unanswered => "unanswered on both sides",
        }
    }

    /// Whether this kind fails the verification (exit 1).
    pub fn fails(self) -> bool {
        !matches!(
            self,
            Verdict::Caused | Verdict::CausedMedianLess | Verdict::Amplified | Verdict::Unanswered
        )
    }
}

/// One metric's medians and floors (fastest answers), direct and delayed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Shift {
    pub direct_p50_ms: f64,
    pub delayed_p50_ms: f64,
    pub shift_ms: f64,
    pub direct_min_ms: f64,
    pub delayed_min_ms: f64,
    pub floor_shift_ms: f64,
}

/// One input kind's evidence and verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KindResult {
    pub event: String,
    /// Loops of this kind, direct and delayed (every outcome).
    pub loops: [usize; 2],
    /// Warm answered loops behind the medians, direct and delayed.
    pub answered: [usize; 2],
    pub send_to_recv: Option<Shift>,
    pub headline: Option<Shift>,
    pub verdict: Verdict,
}

/// The whole verification.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifyReport {
    pub injected_ms: f64,
    pub tolerance_ms: f64,
    /// The headline metric's name (`inputToPixels` or `inputToPaint`).
    pub headline: String,
    pub runs: [usize; 2],
    pub kinds: Vec<KindResult>,
}

impl VerifyReport {
    /// The kinds that failed, for the exit message.
    pub fn failures(&self) -> Vec<&KindResult> {
        self.kinds.iter().filter(|k| k.verdict.fails()).collect()
    }
}

/// Compares `direct` runs with `delayed` ones, kind by kind, in the order kinds first
/// appear.
pub fn verify_report(direct: &[&Run], delayed: &[&Run], rule: VerifyRule) -> VerifyReport {
    let all = direct.iter().chain(delayed);
    let headline = if all
        .clone()
        .flat_map(|r| &r.loops)
        .any(|l| l.input_to_pixels.is_some())
    {
        Metric::InputToPixels
    } else {
        Metric::InputToPaint
    };
    let mut events: Vec<String> = Vec::new();
    for l in all.flat_map(|r| &r.loops) {
        if !events.contains(&l.event) {
            events.push(l.event.clone());
        }
    }
    let kinds = events
        .into_iter()
        .map(|ev| kind_result(ev, direct, delayed, headline, rule))
        .collect();
    VerifyReport {
        injected_ms: rule.injected_ms,
        tolerance_ms: rule.tolerance_ms,
        headline: headline.name().to_string(),
        runs: [direct.len(), delayed.len()],
        kinds,
    }
}

fn kind_result(
    event: String,
    direct: &[&Run],
    delayed: &[&Run],
    headline: Metric,
    rule: VerifyRule,
) -> KindResult {
    let loops = |runs: &[&Run]| {
        runs.iter()
            .flat_map(|r| &r.loops)
            .filter(|l| l.event == event)
            .count()
    };
    let values = |runs: &[&Run], m: Metric| -> Vec<f64> {
        runs.iter()
            .flat_map(|r| &r.loops)
            .filter(|l| l.event == event && !l.cold && l.outcome == Outcome::Answered)
            .filter_map(|l| m.of(l))
            .collect()
    };
    let shift = |m: Metric| {
        let (a, b) = (values(direct, m), values(delayed, m));
        let (a, b) = (Summary::of(&a)?, Summary::of(&b)?);
        Some(Shift {
            direct_p50_ms: a.p50,
            delayed_p50_ms: b.p50,
            shift_ms: b.p50 - a.p50,
            direct_min_ms: a.min,
            delayed_min_ms: b.min,
            floor_shift_ms: b.min - a.min,
        })
    };
    let answered = [
        values(direct, headline).len(),
        values(delayed, headline).len(),
    ];
    let (send_to_recv, head) = (shift(Metric::SendToRecv), shift(headline));
    let verdict = if answered == [0, 0] {
        Verdict::Unanswered
    } else if answered.iter().any(|&n| n < MIN_ANSWERS) {
        Verdict::TooFew
    } else {
        judge(&[send_to_recv, head], rule)
    };
    let loops = [loops(direct), loops(delayed)];
    KindResult {
        event,
        loops,
        answered,
        send_to_recv,
        headline: head,
        verdict,
    }
}

/// A floor short of the injected delay by more than the tolerance: not caused. Then every
/// median within it: caused; one long: amplified; one short: caused, the median less.
fn judge(shifts: &[Option<Shift>], rule: VerifyRule) -> Verdict {
    let present: Vec<Shift> = shifts.iter().flatten().copied().collect();
    if present.is_empty() {
        return Verdict::TooFew;
    }
    let (lo, hi) = (
        rule.injected_ms - rule.tolerance_ms,
        rule.injected_ms + rule.tolerance_ms,
    );
    if present.iter().any(|s| s.floor_shift_ms < lo) {
        Verdict::NotCaused
    } else if present.iter().any(|s| s.shift_ms > hi) {
        Verdict::Amplified
    } else if present.iter().any(|s| s.shift_ms < lo) {
        Verdict::CausedMedianLess
    } else {
        Verdict::Caused
    }
}

/// The verification as a table: one row per input kind.
pub fn verify_table(r: &VerifyReport) -> Table {
    let mut t = Table::new(vec![
        Column::left("input"),
        Column::right("n direct"),
        Column::right("n delayed"),
        Column::right("sendToRecv p50"),
        Column::right("shift"),
        Column::right("floor shift"),
        Column::right(format!("{} p50", r.headline)),
        Column::right("shift"),
        Column::right("floor shift"),
        Column::left("verdict"),
    ])
    .with_title(format!(
        "verify: +{} ms RTT on the link, {} runs a side interleaved; each kind's fastest answers must move by {} ± {} ms",
        fmt(r.injected_ms),
        r.runs[0],
        fmt(r.injected_ms),
        fmt(r.tolerance_ms)
    ));
    for k in &r.kinds {
        let [a, b, c] = shift_cells(k.send_to_recv);
        let [d, e, f] = shift_cells(k.headline);
        let verdict = Cell::text(k.verdict.text());
        t.push_row(vec![
            Cell::text(&k.event),
            Cell::num(k.answered[0].to_string(), k.answered[0] as f64),
            Cell::num(k.answered[1].to_string(), k.answered[1] as f64),
            a,
            b,
            c,
            d,
            e,
            f,
            if k.verdict.fails() {
                verdict.strong()
            } else {
                verdict
            },
        ]);
    }
    t.note(format!(
        "n: warm answered loops behind the figures (ms on the page clock, type 7); the delayed side went through the shaping link with {} ms more round trip; floor shift: the fastest delayed answer less the fastest direct one",
        fmt(r.injected_ms)
    ));
    t.note(format!(
        "not caused by its input: a floor moved by less than the delay, so some loop closed on something its input did not cause (an answer caused by its input cannot come sooner than the path allows); a median that moved less while the floors moved fully is a target faster when delayed (less contention with the browser), or frames: the headline moves by the delay only on average over the frame phase; fewer than {MIN_ANSWERS} answers a side prove nothing"
    ));
    t
}

fn shift_cells(s: Option<Shift>) -> [Cell; 3] {
    match s {
        None => [Cell::text("-"), Cell::text("-"), Cell::text("-")],
        Some(s) => [
            Cell::text(format!(
                "{} → {} ms",
                fmt(s.direct_p50_ms),
                fmt(s.delayed_p50_ms)
            )),
            Cell::num(format!("{:+.1} ms", s.shift_ms), s.shift_ms),
            Cell::num(format!("{:+.1} ms", s.floor_shift_ms), s.floor_shift_ms),
        ],
    }
}

fn fmt(v: f64) -> String {
    format!("{v:.1}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_run::Loop;

    fn run(presses: &[f64], releases: &[f64]) -> Run {
        let mut r = empty_run();
        let mk = |i: usize, ev: &str, v: f64| Loop {
            index: i as u64,
            event: ev.into(),
            answered: true,
            outcome: Outcome::Answered,
            t_input: 0.0,
            t_send: Some(1.0),
            t_recv: Some(1.0 + v),
            send_to_recv: Some(v),
            input_to_pixels: Some(v + 5.0),
            ..Loop::default()
        };
        for (i, &v) in presses.iter().enumerate() {
            r.loops.push(mk(2 * i, "mousedown", v));
        }
        for (i, &v) in releases.iter().enumerate() {
            r.loops.push(mk(2 * i + 1, "mouseup", v));
        }
        r
    }

    /// A run with no loops: only the loops matter here.
    fn empty_run() -> Run {
        let text = include_str!("../../../fixtures/runs/stock-1/run.json");
        Run {
            meta: serde_json::from_str(text).expect("a fixture run.json"),
            loops: Vec::new(),
            events: Vec::new(),
            setup_events: None,
            gestures: Vec::new(),
        }
    }

    const RULE: VerifyRule = VerifyRule {
        injected_ms: 30.0,
        tolerance_ms: 3.0,
    };

    #[test]
    fn kinds_that_move_by_the_delay_are_caused_and_one_that_stays_is_named() {
        let base: Vec<f64> = (0..20).map(|i| 10.0 + i as f64 * 0.1).collect();
        let moved: Vec<f64> = base.iter().map(|v| v + 30.2).collect();
        let direct = run(&base, &base);
        let delayed = run(&moved, &base);
        let r = verify_report(&[&direct], &[&delayed], RULE);
        assert_eq!(r.headline, "inputToPixels");
        let down = &r.kinds[0];
        assert_eq!(
            (down.event.as_str(), down.verdict),
            ("mousedown", Verdict::Caused)
        );
        assert!((down.send_to_recv.unwrap().shift_ms - 30.2).abs() < 1e-9);
        let up = &r.kinds[1];
        assert_eq!(
            (up.event.as_str(), up.verdict),
            ("mouseup", Verdict::NotCaused)
        );
        assert_eq!(r.failures().len(), 1);
        let text = verify_table(&r).render(arena_report::Format::Markdown);
        assert!(text.contains("not caused by its input"), "{text}");
        assert!(text.contains("+30.2 ms"), "{text}");
    }

    #[test]
    fn one_loop_closed_too_soon_pulls_the_floor_down_a_median_short_of_it_does_not() {
        let base: Vec<f64> = (0..20).map(|i| 10.0 + i as f64 * 0.5).collect();
        // Every delayed answer moved by the delay but one, which did not move at all.
        let mut one: Vec<f64> = base.iter().map(|v| v + 30.0).collect();
        one[7] = base[7];
        let r = verify_report(&[&run(&base, &[])], &[&run(&one, &[])], RULE);
        let k = &r.kinds[0];
        assert_eq!(k.verdict, Verdict::NotCaused, "{k:?}");
        assert!(
            (k.send_to_recv.unwrap().shift_ms - 30.0).abs() < 1.0,
            "{k:?}"
        );
        // The fastest moved by the delay, the middle by less: caused, the median less.
        let squeezed: Vec<f64> = base.iter().map(|v| 40.0 + (v - 10.0) * 0.3).collect();
        let r = verify_report(&[&run(&base, &[])], &[&run(&squeezed, &[])], RULE);
        let k = &r.kinds[0];
        assert_eq!(k.verdict, Verdict::CausedMedianLess, "{k:?}");
        assert!(!k.verdict.fails());
        assert!((k.send_to_recv.unwrap().floor_shift_ms - 30.0).abs() < 1e-9);
        let text = verify_table(&r).render(arena_report::Format::Markdown);
        assert!(
            text.contains("caused; its median moved less than the delay"),
            "{text}"
        );
    }

    #[test]
    fn partial_moves_too_few_answers_and_silence_are_told_apart() {
        let base: Vec<f64> = (0..20).map(|i| 10.0 + i as f64 * 0.1).collect();
        let partly: Vec<f64> = base.iter().map(|v| v + 22.0).collect();
        let r = verify_report(&[&run(&base, &[])], &[&run(&partly, &[])], RULE);
        assert_eq!(r.kinds[0].verdict, Verdict::NotCaused);
        let twice: Vec<f64> = base.iter().map(|v| v + 60.0).collect();
        let r = verify_report(&[&run(&base, &[])], &[&run(&twice, &[])], RULE);
        assert_eq!(r.kinds[0].verdict, Verdict::Amplified);
        assert!(r.failures().is_empty());
        let few = verify_report(&[&run(&base[..3], &[])], &[&run(&partly[..3], &[])], RULE);
        assert_eq!(few.kinds[0].verdict, Verdict::TooFew);
        let mut silent = run(&base, &[]);
        for l in &mut silent.loops {
            l.outcome = Outcome::Unanswered;
            l.answered = false;
        }
        let r = verify_report(&[&silent], &[&silent], RULE);
        assert_eq!(r.kinds[0].verdict, Verdict::Unanswered);
        assert!(r.failures().is_empty());
    }
}
