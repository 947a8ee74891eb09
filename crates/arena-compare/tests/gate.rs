//! The gate on runs built in memory: timeouts and tails are regressions, noise is not,
//! what is established fails whatever the power, a limit the runs cannot clear is
//! unknown (not bad input), it never passes on data it could not read, and a run counts
//! once. (`Run::load` refuses bad files; a library caller can still build
//! them.)

use arena_compare::{
    gate, synthetic, CheckStatus, GateLimit, GateOptions, GateOutcome, GateResult, Limit,
    OnUnknown, Share,
};
use arena_report::{Exit, ExitKind};
use arena_run::Run;

fn bad_input(err: &anyhow::Error) -> String {
    let kind = err
        .chain()
        .find_map(|e| e.downcast_ref::<Exit>())
        .map(|e| e.kind);
    assert_eq!(kind, Some(ExitKind::BadInput), "{err:#}");
    format!("{err:#}")
}

fn run_n(arm: &str, n: usize, median: f64, seed: u64) -> Run {
    synthetic::run(arm, &synthetic::lognormal(n, median, 0.3, 0.0, seed), 6000)
}

fn run(arm: &str, median: f64, seed: u64) -> Run {
    run_n(arm, 200, median, seed)
}

fn limits(specs: &[&str]) -> Vec<GateLimit> {
    specs.iter().map(|s| GateLimit::parse(s).unwrap()).collect()
}

fn gate_with(b: &[Run], c: &[Run], specs: &[&str]) -> anyhow::Result<GateResult> {
    gate(b, c, &limits(specs), &GateOptions::default())
}

fn run_gate(b: &[Run], c: &[Run], limit: &str) -> anyhow::Result<GateResult> {
    gate_with(b, c, &[limit])
}

/// Two runs a side of `n` loops each around `median` ms, seeds from `seed`.
fn side(arm: &str, n: usize, median: f64, seed: u64) -> Vec<Run> {
    vec![
        run_n(arm, n, median, seed),
        run_n(arm, n, median, seed + 100),
    ]
}

#[test]
fn like_runs_pass_every_check() {
    let (b, c) = (side("stock", 300, 40.0, 1), side("stock", 300, 40.0, 2));
    let r = gate_with(&b, &c, &["inputToPaint.p50=+10%", "inputToPaint.p90=+20%"]).unwrap();
    assert!(
        !r.failed(),
        "{}",
        r.table.render(arena_report::Format::Markdown)
    );
    assert_eq!(r.count(), 4, "two limits and the two shares");
    for share in Share::ALL {
        let s = r.share(share);
        assert!(s.default && s.max_pt == 1.0, "{s:?}");
        assert_eq!(s.status, CheckStatus::Pass, "{s:?}");
    }
}

#[test]
fn slow_clicks_that_turn_into_timeouts_fail_as_a_regression_not_a_speed_up() {
    // The slowest 15 % of the candidate's clicks miss the window: over answered loops
    // alone its p90 would drop; over every loop the p90 is beyond the window.
    let b = side("stock", 300, 40.0, 1);
    let mut c = side("slow", 300, 40.0, 2);
    for r in &mut c {
        let mut v: Vec<f64> = r.loops.iter().filter_map(|l| l.input_to_paint).collect();
        v.sort_by(f64::total_cmp);
        let cut = v[(v.len() as f64 * 0.85) as usize];
        synthetic::unanswer(r, |_, l| l.input_to_paint.is_some_and(|x| x >= cut));
    }
    let r = gate_with(&b, &c, &["inputToPaint.p90=+20%"]).unwrap();
    let md = r.table.render(arena_report::Format::Markdown);
    assert!(r.failed(), "{md}");
    let p90 = &r.checks[0];
    assert!(arena_stats::is_censored(p90.change.candidate), "{md}");
    assert_eq!(p90.status, arena_compare::CheckStatus::Fail, "{md}");
    assert!(md.contains("> window"), "{md}");
    assert!(p90.censored_candidate >= 80, "{:?}", p90.censored_candidate);
    // And the share itself fails on its own.
    assert_eq!(
        r.share(Share::Unanswered).status,
        arena_compare::CheckStatus::Fail,
        "{md}"
    );
    assert!(r.failures().contains(&"unanswered share".to_string()));
}

#[test]
fn a_fifth_of_clicks_unanswered_fails_on_the_share_with_latency_limits_only() {
    let b = side("stock", 150, 40.0, 1);
    let mut c = side("drop", 150, 40.0, 2);
    for r in &mut c {
        synthetic::unanswer(r, |i, _| i % 5 == 4);
    }
    // Dropped at random, the answered loops' p50 does not move.
    let r = gate_with(&b, &c, &["inputToPaint.p50=+10%"]).unwrap();
    assert!(r.failed());
    assert_eq!(r.failures(), vec!["unanswered share".to_string()]);
    let u = r.share(Share::Unanswered);
    assert!((u.rise_pt - 20.0).abs() < 0.5, "{u:?}");
    // A limit of +25 points lets it through.
    let r = gate_with(&b, &c, &["inputToPaint.p50=+10%", "unanswered=+25pt"]).unwrap();
    let u = r.share(Share::Unanswered);
    assert!(!u.default);
    assert_eq!(u.status, arena_compare::CheckStatus::Pass);
}

#[test]
fn a_candidate_with_every_loop_unanswered_fails_its_limits_not_bad_input() {
    let mut b = side("stock", 150, 40.0, 1);
    let mut c = side("dead", 150, 40.0, 2);
    for r in &mut c {
        synthetic::unanswer(r, |_, _| true);
    }
    // Every quantile is past the window: a regression, not a figure nobody measured.
    let r = gate_with(&b, &c, &["inputToPaint.p50=+10%"]).unwrap();
    let table = r.table.render(arena_report::Format::Markdown);
    assert!(r.failed() && table.contains("(window)"), "{table}");
    let failures = r.failures();
    assert!(
        failures.contains(&"unanswered share".to_string())
            && failures.iter().any(|f| f.starts_with("inputToPaint p50")),
        "{failures:?}"
    );
    // A baseline with no loop answered is still refused: there is nothing to compare with.
    let e = gate_with(&c, &b, &["inputToPaint.p50=+10%"]).unwrap_err();
    assert!(bad_input(&e).contains("the baseline runs have no inputToPaint values"));

    // Under the pixels oracle too: no reply painted is none come within the window, not
    // a figure the candidate does not measure (it was bad input, exit 2, and hid the
    // failing share).
    for r in b.iter_mut().chain(c.iter_mut()) {
        r.meta.answer = Some(arena_run::AnswerInfo {
            oracle: "pixels".into(),
            requested: "auto".into(),
            detail: "r=8px".into(),
            fallback: None,
        });
    }
    let r = gate_with(&b, &c, &["inputToPaint.p50=+10%"]).unwrap();
    let failures = r.failures();
    assert!(
        failures.contains(&"unanswered share".to_string())
            && failures.iter().any(|f| f.starts_with("inputToPaint p50")),
        "{failures:?}"
    );
}

#[test]
fn a_candidate_that_merges_answers_fails_on_the_claimed_share_though_no_figure_moves() {
    // Every fourth loop's answer already closed the loop before it: those loops have no
    // latency and are not unanswered, so only the claimed share sees them.
    let b = side("stock", 200, 40.0, 1);
    let mut c = side("merged", 200, 40.0, 2);
    for r in &mut c {
        synthetic::claim(r, |i, _| i % 4 == 3);
    }
    let r = gate_with(&b, &c, &["inputToPaint.p50=+10%"]).unwrap();
    let md = r.table.render(arena_report::Format::Markdown);
    assert_eq!(r.failures(), vec!["claimed share".to_string()], "{md}");
    let claimed = r.share(Share::Claimed);
    assert_eq!((claimed.baseline.count, claimed.candidate.count), (0, 100));
    assert_eq!(claimed.candidate.loops, 400, "a share of every loop");
    assert!((claimed.rise_pt - 25.0).abs() < 1e-9, "{claimed:?}");
    assert_eq!(r.share(Share::Unanswered).status, CheckStatus::Pass);
    assert!(
        md.contains(
            "| claimed share (default) | 0.0 % (0 of 400) | 25.0 % (100 of 400) | +25.0 pt"
        ),
        "{md}"
    );
    assert!(
        md.contains("FAIL: the claimed share rose +25.0 pt, past +1 pt"),
        "{md}"
    );
    // Its own limit lets it through, and names itself.
    let r = gate_with(&b, &c, &["inputToPaint.p50=+10%", "claimed=+30pt"]).unwrap();
    assert!(
        !r.failed(),
        "{}",
        r.table.render(arena_report::Format::Markdown)
    );
    assert!(!r.share(Share::Claimed).default);
    // One claimed loop more than the baseline is no failure: past +1 pt only by chance.
    let mut c = side("one", 200, 40.0, 2);
    synthetic::claim(&mut c[0], |i, _| i == 7);
    let r = gate_with(&b, &c, &["inputToPaint.p50=+10%"]).unwrap();
    assert_eq!(r.share(Share::Claimed).status, CheckStatus::Pass);
}

#[test]
fn a_tail_only_regression_fails_its_p99_and_not_its_p50() {
    // One loop in 20 waits 150 ms more: the p50 barely moves, the p99 is in the tail.
    let b = side("stock", 400, 40.0, 1);
    let mut c = side("tail", 400, 40.0, 2);
    for r in &mut c {
        for (i, l) in r.loops.iter_mut().enumerate() {
            if i % 20 == 19 {
                l.input_to_paint = l.input_to_paint.map(|v| v + 150.0);
            }
        }
    }
    let r = run_gate(&b, &c, "inputToPaint.p99=+20%").unwrap();
    assert!(
        r.failed(),
        "{}",
        r.table.render(arena_report::Format::Markdown)
    );
    assert!(r.checks[0].p_adjusted < 0.05);
    let r = run_gate(&b, &c, "inputToPaint.p50=+10%").unwrap();
    assert!(
        !r.failed(),
        "{}",
        r.table.render(arena_report::Format::Markdown)
    );
}

#[test]
fn a_limit_the_runs_cannot_clear_is_unknown_with_what_would_clear_it() {
    // 58 loops a side, one run each: the p99 is a side's maximum and nothing bounds it.
    let (b, c) = (run_n("stock", 58, 40.0, 1), run_n("stock", 58, 40.0, 2));
    let r = run_gate(
        std::slice::from_ref(&b),
        std::slice::from_ref(&c),
        "inputToPaint.p99=+20%",
    )
    .unwrap();
    let md = r.table.render(arena_report::Format::Markdown);
    assert_eq!(r.checks[0].status, CheckStatus::Unknown, "{md}");
    assert_eq!(r.outcome(), GateOutcome::Unknown, "{md}");
    assert_eq!(r.outcome().exit_code(), 4);
    assert!(!r.failed());
    assert_eq!(r.unknowns(), vec!["inputToPaint p99".to_string()]);
    assert!(r.checks[0].reason.contains("loops a run would"), "{md}");
    // --on-unknown turns it into a yes or a no, and nothing else.
    for (on, want) in [
        (OnUnknown::Pass, GateOutcome::Pass),
        (OnUnknown::Fail, GateOutcome::Fail),
    ] {
        let opts = GateOptions {
            on_unknown: on,
            ..GateOptions::default()
        };
        let r = gate(
            std::slice::from_ref(&b),
            std::slice::from_ref(&c),
            &limits(&["inputToPaint.p99=+20%"]),
            &opts,
        )
        .unwrap();
        assert_eq!(r.outcome(), want);
    }
}

#[test]
fn an_established_regression_fails_with_one_run_a_side() {
    // 4x the latency, one run of 60 loops each: whatever the power, it is past +10 %.
    let (b, c) = (run_n("stock", 60, 10.0, 1), run_n("slow", 60, 40.0, 2));
    let r = run_gate(std::slice::from_ref(&b), &[c], "inputToPaint.p50=+10%").unwrap();
    let md = r.table.render(arena_report::Format::Markdown);
    assert_eq!(r.checks[0].status, CheckStatus::Fail, "{md}");
    assert_eq!(r.outcome(), GateOutcome::Fail);
    // And a like run a side is not called a regression.
    let same = run_n("stock", 60, 10.0, 3);
    let r = run_gate(&[b], &[same], "inputToPaint.p50=+10%").unwrap();
    assert_ne!(
        r.outcome(),
        GateOutcome::Fail,
        "{}",
        r.table.render(arena_report::Format::Markdown)
    );
}

#[test]
fn non_finite_values_are_bad_input_not_a_pass() {
    let base = run("stock", 60.0, 1);
    for bad in [f64::INFINITY, f64::NAN] {
        let mut cand = run("stock", 60.0, 2);
        for l in &mut cand.loops[10..60] {
            l.send_to_recv = Some(bad);
        }
        let err =
            run_gate(std::slice::from_ref(&base), &[cand], "sendToRecv.p90=+10%").unwrap_err();
        let msg = bad_input(&err);
        assert!(
            msg.contains("the candidate runs hold a sendToRecv value of"),
            "{msg}"
        );
    }
}

#[test]
fn a_limit_on_a_metric_no_run_has_names_the_flag() {
    let (b, c) = (run("stock", 60.0, 1), run("stock", 60.0, 2));
    let msg = bad_input(&run_gate(&[b], &[c], "inputToPixels.p50=+10%").unwrap_err());
    assert!(
        msg.starts_with(
            "--max inputToPixels.p50=+10%: the baseline runs have no inputToPixels values"
        ),
        "{msg}"
    );
}

#[test]
fn a_run_counts_once() {
    let (a, b) = (run("stock", 60.0, 1), run("stock", 60.0, 2));
    let slow = run("slow", 90.0, 3);
    let err = run_gate(
        &[a.clone(), a.clone()],
        std::slice::from_ref(&slow),
        "sendToRecv=+10%",
    )
    .unwrap_err();
    assert!(bad_input(&err).contains("baseline run 2 and baseline run 1 are the same run"));
    let err = run_gate(
        &[a.clone(), b.clone()],
        std::slice::from_ref(&b),
        "sendToRecv=+10%",
    )
    .unwrap_err();
    assert!(bad_input(&err).contains("candidate run 1 and baseline run 2 are the same run"));
    assert!(run_gate(&[a, b], &[slow], "sendToRecv=+10%")
        .unwrap()
        .failed());
}

#[test]
fn limits_are_finite_percents_and_the_share_is_in_points() {
    for (spec, why) in [
        ("sendToRecv.p90=+10%%", "one '%' at most"),
        (
            "sendToRecv.p90=+1e400%",
            "the limit `+1e400` is not a finite number",
        ),
        (
            "sendToRecv.p90=inf",
            "the limit `inf` is not a finite number",
        ),
        (
            "sendToRecv.p90=NaN%",
            "the limit `NaN` is not a finite number",
        ),
        (
            "sendToRecv.pinf=+10%",
            "the quantile is not a finite number",
        ),
        (
            "sendToRecv.p101=+10%",
            "the quantile must be between p0 and p100",
        ),
        (
            "sendToRecv.p90=-1%",
            "the limit is an allowed increase, 0 or more",
        ),
        (
            "unanswered=+5%",
            "the unanswered share's limit is in percentage points, not percent",
        ),
        ("unanswered=+5", "the unanswered share's limit ends in pt"),
        (
            "unanswered=+500pt",
            "the limit is an allowed rise of 0 to 100 points",
        ),
        ("claimed=+5", "the claimed share's limit ends in pt"),
    ] {
        let msg = bad_input(&GateLimit::parse(spec).unwrap_err());
        assert!(msg.starts_with(&format!("--max {spec}: {why}")), "{msg}");
    }
    let l = Limit::parse("sendToRecv.p90=+10 %").unwrap();
    assert_eq!((l.q, l.max_pct), (0.9, 10.0));
    assert_eq!(Limit::parse("inputToPaint=0").unwrap().max_pct, 0.0);
    assert_eq!(
        GateLimit::parse("Unanswered=+2.5pt").unwrap(),
        GateLimit::Share {
            share: Share::Unanswered,
            max_pt: 2.5
        }
    );
}
