//! The gate on runs built in memory: it never passes on data it could not read, and a run
//! counts once. (`Run::load` refuses such files; a library caller can still build them.)

use arena_compare::{gate, synthetic, CheckOptions, Limit};
use arena_report::{Exit, ExitKind};
use arena_run::Run;
use arena_stats::NoiseRule;

fn bad_input(err: &anyhow::Error) -> String {
    let kind = err
        .chain()
        .find_map(|e| e.downcast_ref::<Exit>())
        .map(|e| e.kind);
    assert_eq!(kind, Some(ExitKind::BadInput), "{err:#}");
    format!("{err:#}")
}

fn run(arm: &str, median: f64, seed: u64) -> Run {
    synthetic::run(
        arm,
        &synthetic::lognormal(200, median, 0.3, 0.0, seed),
        6000,
    )
}

fn run_gate(b: &[Run], c: &[Run], limit: &str) -> anyhow::Result<arena_compare::GateResult> {
    let limits = [Limit::parse(limit).unwrap()];
    gate(
        b,
        c,
        &limits,
        &NoiseRule::default(),
        &CheckOptions::default(),
    )
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
fn limits_are_finite_percents() {
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
            "sendToRecv.p90=-1%",
            "the limit is an allowed increase, 0 or more",
        ),
    ] {
        let msg = bad_input(&Limit::parse(spec).unwrap_err());
        assert!(msg.starts_with(&format!("--max {spec}: {why}")), "{msg}");
    }
    let l = Limit::parse("sendToRecv.p90=+10 %").unwrap();
    assert_eq!((l.q, l.max_pct), (0.9, 10.0));
    assert_eq!(Limit::parse("inputToPaint=0").unwrap().max_pct, 0.0);
}
