//! `verify`: proof that each kind of loop is caused by its input, on the user's own app.
//!
//! An answer caused by an input moves when the path between them gets longer. `verify`
//! runs the same plan direct and through the shaping link with added round-trip time,
//! interleaved (direct, delayed, direct, delayed), and for each input kind compares the
//! warm loops of sendToRecv and of the headline (inputToPixels where the pixels or js
//! oracle closed the loops, inputToPaint under the reply oracle), direct and delayed, run
//! by run.
//!
//! Each metric of a kind is judged at two quantiles ([`rule`]): its lower decile, where an
//! answer that came sooner than the path allows shows first, and its median, each shift
//! with an interval over the runs. A kind is caused when every interval meets the delay
//! and leaves 0 out; not caused when a lower decile's lies wholly under the delay, or a
//! median's reaches 0 under it; its median moved less when a median's lies between 0 and
//! the delay; unknown when an interval holds both (and then it says how many clicks a
//! run would decide it). Unanswered loops stand at the top of each run, censored, so a
//! kind that goes silent when delayed is not judged on its answers alone.

use anyhow::{anyhow, Result};
use arena_report::{Exit, ExitKind};
use arena_run::{Metric, Run};

use crate::ab::AbOutcome;
use crate::plan::{Plan, TargetPlan};

mod kinds;
mod report;
pub mod rule;
pub mod sim;
mod table;

use kinds::KindData;
pub use report::{
    judge, metric_shifts, KindResult, MetricShifts, Unit, Verdict, VerifyEnd, VerifyReport,
    MIN_ANSWERS,
};
pub use rule::{Band, Move, QuantileShift, ALPHA, LOW_Q};
pub use table::{moves_table, verify_table, verify_text};

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
    verify_runs(&outcome.outcomes, rule)
}

/// The verification of the runs so far of [`verify_plans`]' two arms, interleaved (a
/// look of `--until-decided` judges these).
pub fn verify_runs(outcomes: &[crate::Outcome], rule: VerifyRule) -> VerifyReport {
    let side =
        |i: usize| -> Vec<&Run> { outcomes.iter().skip(i).step_by(2).map(|o| &o.run).collect() };
    verify_report(&side(0), &side(1), rule)
}

/// A look of `verify --until-decided` at the runs so far, at `rule`'s alpha over
/// `looks`: decided when no kind is left unknown at its fast end.
pub fn look(outcomes: &[crate::Outcome], looks: u32, rule: VerifyRule) -> crate::Look {
    let r = verify_runs(outcomes, rule.at_looks(Some(looks)));
    let open: Vec<&str> = r.undecided().iter().map(|k| k.event.as_str()).collect();
    crate::Look {
        decided: open.is_empty(),
        line: if open.is_empty() {
            "every kind decided".into()
        } else {
            format!("undecided: {}", open.join(", "))
        },
    }
}

/// What one verification compares.
#[derive(Debug, Clone, Copy)]
pub struct VerifyRule {
    /// The round-trip time the link added, ms.
    pub injected_ms: f64,
    /// How far a quantile's shift may be from `injected_ms` and still be the delay, ms:
    /// what the frame clock and the link's pacing blur, not the noise (the intervals
    /// carry that).
    pub tolerance_ms: f64,
    /// The family-wise error rate ([`ALPHA`]; less, spent over the looks of a sequence).
    pub alpha: f64,
}

impl VerifyRule {
    /// The rule with its alpha spent over `looks` looks of a sequence (Bonferroni).
    pub fn at_looks(self, looks: Option<u32>) -> VerifyRule {
        VerifyRule {
            alpha: self.alpha / looks.unwrap_or(1).max(1) as f64,
            ..self
        }
    }

    pub fn band(self) -> Band {
        Band {
            injected_ms: self.injected_ms,
            tolerance_ms: self.tolerance_ms,
        }
    }
}

/// Names in the order they first appear, each once.
fn first_seen<'a>(names: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.contains(n) {
            out.push(n.clone());
        }
    }
    out
}

/// Compares `direct` runs with `delayed` ones, kind by kind (loop kinds, then gesture
/// kinds), in the order kinds first appear.
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
    let sides = [direct, delayed];
    let mut data: Vec<KindData> = first_seen(all.clone().flat_map(|r| &r.loops).map(|l| &l.event))
        .into_iter()
        .map(|ev| KindData::loops(ev, sides, headline))
        .collect();
    data.extend(
        first_seen(all.flat_map(|r| &r.gestures).map(|g| &g.kind))
            .into_iter()
            .map(|kind| KindData::moves(kind, sides)),
    );
    let intervals: usize = data.iter().map(KindData::intervals).sum();
    let level = 1.0 - rule.alpha / intervals.max(1) as f64;
    let kinds = data
        .into_iter()
        .map(|k| k.result(rule.band(), level))
        .collect();
    VerifyReport {
        injected_ms: rule.injected_ms,
        tolerance_ms: rule.tolerance_ms,
        alpha: rule.alpha,
        level,
        intervals,
        low_q: LOW_Q,
        headline: headline.name().to_string(),
        runs: [direct.len(), delayed.len()],
        kinds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_run::{Loop, Outcome};

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
        let text = include_str!("../../../../fixtures/runs/stock-1/run.json");
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
        alpha: ALPHA,
    };

    fn base(n: usize, step: f64) -> Vec<f64> {
        (0..n).map(|i| 10.0 + i as f64 * step).collect()
    }

    #[test]
    fn kinds_that_move_by_the_delay_are_caused_and_one_that_stays_is_named() {
        let base = base(30, 0.1);
        let moved: Vec<f64> = base.iter().map(|v| v + 30.2).collect();
        let direct = run(&base, &base);
        let delayed = run(&moved, &base);
        let r = verify_report(&[&direct], &[&delayed], RULE);
        assert_eq!(r.headline, "inputToPixels");
        // Two kinds, two metrics, two quantiles.
        assert_eq!(r.intervals, 8);
        assert!((r.level - (1.0 - 0.05 / 8.0)).abs() < 1e-12);
        let down = &r.kinds[0];
        assert_eq!(
            (down.event.as_str(), down.verdict),
            ("mousedown", Verdict::Caused)
        );
        let s = down.send_to_recv.unwrap().median;
        assert!((s.shift_ms - 30.2).abs() < 1e-9, "{s:?}");
        assert!(s.lo_ms < 30.2 && s.hi_ms > 30.2, "{s:?}");
        let up = &r.kinds[1];
        assert_eq!(
            (up.event.as_str(), up.verdict),
            ("mouseup", Verdict::NotCaused)
        );
        assert_eq!(up.headline.unwrap().low.moved, Move::None);
        assert_eq!(r.failures().len(), 1);
        assert_eq!(
            r.end(),
            VerifyEnd::Failed(
                "verify: mouseup: not caused by its input (a +30 ms round trip)".into()
            )
        );
        let text = verify_table(&r).render(arena_report::Format::Markdown);
        assert!(text.contains("not caused by its input"), "{text}");
        assert!(text.contains("+30.2 ms ("), "{text}");
    }

    #[test]
    fn unmoved_answers_are_caught_at_the_fast_end_by_their_share_and_a_squeezed_median_is_named() {
        let base = base(20, 1.0);
        let moved: Vec<f64> = base.iter().map(|v| v + 30.0).collect();
        let unmoved = |at: &[usize]| {
            let mut v = moved.clone();
            for &i in at {
                v[i] = base[i];
            }
            verify_report(&[&run(&base, &[])], &[&run(&v, &[])], RULE)
        };
        // Six of twenty delayed answers did not move: the lower decile lands on them.
        let r = unmoved(&[1, 4, 8, 11, 14, 17]);
        let k = &r.kinds[0];
        assert_eq!(k.verdict, Verdict::NotCaused, "{k:?}");
        assert!(matches!(
            k.send_to_recv.unwrap().low.moved,
            Move::None | Move::Less
        ));
        // Three of twenty: the lower decile sits between the unmoved and the moved, its
        // resamples on either side. Not caused is not proven, and caused is not either.
        let r = unmoved(&[4, 11, 17]);
        let k = &r.kinds[0];
        assert_eq!(k.verdict, Verdict::Unknown, "{k:?}");
        assert!(k.clicks_to_decide.is_some_and(|n| n > 20), "{k:?}");
        // One of twenty: the fastest answer alone would say so, the lower decile does
        // not (docs/pilot-file.md, Causality: what the rule trades for its robustness).
        let r = unmoved(&[7]);
        assert_eq!(r.kinds[0].verdict, Verdict::Caused, "{:?}", r.kinds[0]);
        // The fast end moved by the delay, the middle by less: named, and a failure.
        let base = super::tests::base(60, 0.33);
        let squeezed: Vec<f64> = base.iter().map(|v| 40.0 + (v - 10.0) * 0.1).collect();
        let r = verify_report(&[&run(&base, &[])], &[&run(&squeezed, &[])], RULE);
        let k = &r.kinds[0];
        assert_eq!(k.verdict, Verdict::MedianLess, "{k:?}");
        assert!(k.verdict.fails());
        assert_eq!(k.send_to_recv.unwrap().low.moved, Move::AsInjected, "{k:?}");
        let text = verify_table(&r).render(arena_report::Format::Markdown);
        assert!(
            text.contains("its median moved less than the delay"),
            "{text}"
        );
    }

    #[test]
    fn partial_moves_too_few_answers_silence_and_a_wide_spread_are_told_apart() {
        let base = base(30, 0.1);
        let partly: Vec<f64> = base.iter().map(|v| v + 22.0).collect();
        let r = verify_report(&[&run(&base, &[])], &[&run(&partly, &[])], RULE);
        assert_eq!(r.kinds[0].verdict, Verdict::NotCaused);
        let twice: Vec<f64> = base.iter().map(|v| v + 60.0).collect();
        let r = verify_report(&[&run(&base, &[])], &[&run(&twice, &[])], RULE);
        assert_eq!(r.kinds[0].verdict, Verdict::Amplified);
        assert!(r.failures().is_empty() && r.undecided().is_empty());
        let few = verify_report(&[&run(&base[..3], &[])], &[&run(&partly[..3], &[])], RULE);
        assert_eq!(few.kinds[0].verdict, Verdict::TooFew);
        assert!(few.kinds[0].verdict.undecided());
        let mut silent = run(&base, &[]);
        for l in &mut silent.loops {
            l.outcome = Outcome::Unanswered;
            l.answered = false;
        }
        let r = verify_report(&[&silent], &[&silent], RULE);
        assert_eq!(r.kinds[0].verdict, Verdict::Unanswered);
        assert!(r.failures().is_empty());
        // Answers spread over 120 ms: a +15 ms median shift holds both 0 and the delay,
        // and the verdict says how many clicks a run would decide it.
        let wide =
            |at: f64| -> Vec<f64> { (0..24).map(|i| at + ((i * 7) % 24) as f64 * 5.0).collect() };
        let r = verify_report(
            &[&run(&wide(10.0), &[]), &run(&wide(10.0), &[])],
            &[&run(&wide(25.0), &[]), &run(&wide(25.0), &[])],
            RULE,
        );
        let k = &r.kinds[0];
        assert_eq!(k.verdict, Verdict::Unknown, "{k:?}");
        assert!(matches!(r.end(), VerifyEnd::Undecided(m) if m.contains("mousedown: unknown")));
        let n = k.clicks_to_decide.expect("more clicks decide it");
        assert!(n > 24, "{k:?}");
        let text = verify_table(&r).render(arena_report::Format::Markdown);
        assert!(
            text.contains(&format!("about --clicks {n} would decide it")),
            "{text}"
        );
    }

    #[test]
    fn unanswered_delayed_loops_stand_at_the_top_and_open_the_median() {
        let base = base(30, 0.1);
        let mut moved: Vec<f64> = base.iter().map(|v| v + 30.0).collect();
        let mut delayed = run(&moved, &[]);
        for l in delayed.loops.iter_mut().skip(10) {
            l.outcome = Outcome::Unanswered;
            l.answered = false;
        }
        let r = verify_report(&[&run(&base, &[])], &[&delayed], RULE);
        let k = &r.kinds[0];
        assert_eq!(k.unanswered, [0, 20]);
        assert_eq!(k.answered, [30, 10]);
        let m = k.send_to_recv.unwrap().median;
        assert!(m.hi_ms.is_infinite() && m.shift_ms.is_infinite(), "{m:?}");
        moved.truncate(10);
        let text = verify_table(&r).render(arena_report::Format::Markdown);
        assert!(text.contains("10 + 20 unanswered"), "{text}");
    }
    /// A run whose one gesture of `kind` has moves answered after `pixels` ms, sent after
    /// `socket` ms, and one coalesced move between each two.
    fn gesture_run(kind: &str, pixels: &[f64], socket: f64) -> Run {
        use arena_run::gestures::{GestureCounts, GestureMove, RunGesture};
        let mv = |outcome: &str, pix: Option<f64>, i: usize| GestureMove {
            t_send: Some(i as f64),
            input_to_socket: Some(socket + (i % 5) as f64 * 0.2),
            carried: 1,
            oldest_age: None,
            move_to_pixels: pix,
            outcome: outcome.into(),
        };
        let moves = pixels
            .iter()
            .enumerate()
            .flat_map(|(i, &p)| [mv("answered", Some(p), i), mv("coalesced", None, i)])
            .collect();
        let mut r = run(&base(30, 0.1), &[]);
        r.gestures.push(RunGesture {
            gesture: 0,
            kind: kind.into(),
            counts: GestureCounts::default(),
            moves,
            behind: Vec::new(),
            behind_n: None,
        });
        r
    }

    #[test]
    fn a_gestures_move_to_pixels_must_move_and_its_input_to_socket_must_not() {
        let pix = base(40, 0.5);
        let moved: Vec<f64> = pix.iter().map(|v| v + 30.0).collect();
        let r = verify_report(
            &[&gesture_run("drag", &pix, 5.0)],
            &[&gesture_run("drag", &moved, 5.0)],
            RULE,
        );
        let k = r
            .kinds
            .iter()
            .find(|k| k.event == "drag")
            .expect("a drag row");
        assert_eq!((k.unit, k.verdict), (Unit::Moves, Verdict::Caused), "{k:?}");
        // Answered moves only: the coalesced ones are never drawn at their own point.
        assert_eq!((k.loops, k.answered), ([80, 80], [40, 40]));
        assert!(k.send_to_recv.is_none() && k.input_to_socket.is_some());
        // One loop kind and one gesture, two metrics each, two quantiles each.
        assert_eq!(r.intervals, 8);
        // Sends that wait on the link: the answers moved, and so did the socket.
        let r = verify_report(
            &[&gesture_run("hover", &pix, 5.0)],
            &[&gesture_run("hover", &moved, 35.0)],
            RULE,
        );
        let k = r.kinds.iter().find(|k| k.event == "hover").unwrap();
        assert_eq!(k.verdict, Verdict::SocketMoved, "{k:?}");
        assert!(k.verdict.fails());
        let text = moves_table(&r)
            .expect("a moves table")
            .render(arena_report::Format::Markdown);
        assert!(
            text.contains("| hover |") && text.contains("moved |"),
            "{text}"
        );
        assert!(
            text.contains("input-to-socket moved with the link"),
            "{text}"
        );
        // A pilot with no gestures has no moves table.
        assert!(moves_table(&verify_report(
            &[&run(&pix, &[])],
            &[&run(&moved, &[])],
            RULE
        ))
        .is_none());
    }
}
