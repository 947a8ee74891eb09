//! The verdict under `ab`'s and `demo`'s tables, on runs built in memory: its figures are
//! compare's and its intervals the gate's (one rule, `crates/arena-compare/src/decide.rs`),
//! and its sentence says only what those verdicts say.

use arena_compare::{
    compare, gate, synthetic, verdicts, CompareOptions, GateLimit, GateOptions, Metric,
};
use arena_run::Run;
use arena_stats::Verdict;

/// Two rounds of stock and a candidate, interleaved as `ab` runs them; 300 loops a run
/// (lognormal around the median, ms).
fn rounds(candidate: &str, median: f64, bytes: u64) -> Vec<Run> {
    let run = |arm: &str, m: f64, b: u64, seed: u64| {
        synthetic::run(arm, &synthetic::lognormal(300, m, 0.3, 0.0, seed), b)
    };
    vec![
        run("stock", 50.0, 6000, 1),
        run(candidate, median, bytes, 2),
        run("stock", 50.0, 6000, 3),
        run(candidate, median, bytes, 4),
    ]
}

fn opts() -> CompareOptions {
    CompareOptions {
        baseline: Some("stock".into()),
        ..CompareOptions::default()
    }
}

#[test]
fn the_verdict_holds_compares_changes_and_the_gates_intervals() {
    let runs = rounds("lazy-png", 40.0, 6000);
    let cmp = compare(&runs, &opts()).unwrap();
    let v = verdicts(&runs, &cmp, &opts());
    assert_eq!(v.baseline, "stock");
    // Synthetic runs close loops on paint only: the headline is inputToPaint.
    assert_eq!(v.metric, Metric::InputToPaint.name());
    let [arm] = v.arms.as_slice() else {
        panic!("one candidate: {:?}", v.arms.len())
    };
    let table = cmp
        .changes
        .iter()
        .find(|c| c.column == "lazy-png" && c.metric == v.metric)
        .unwrap();
    assert_eq!(arm.input.pooled, table.quantiles);
    assert_eq!((arm.input.n_baseline, arm.input.n_candidate), (600, 600));
    // The gate asked about the same quantile draws the same interval.
    let g = gate(
        &runs[..].iter().step_by(2).cloned().collect::<Vec<_>>(),
        &runs[1..].iter().step_by(2).cloned().collect::<Vec<_>>(),
        // One limit and the two shares: three checks, as compare's three quantiles, so
        // both draw their intervals at the same level.
        &["inputToPaint.p90=+10%"].map(|l| GateLimit::parse(l).unwrap()),
        &GateOptions::default(),
    )
    .unwrap();
    let p90 = arm.input.pooled.iter().find(|c| c.q == 0.9).unwrap();
    assert_eq!(g.checks[0].change.ci, p90.ci);
    assert_eq!(g.checks[0].change.delta, p90.delta);
    // A fifth off every quantile, on 600 loops a side: real, and both rounds agree.
    assert_eq!(p90.verdict, Verdict::Lower);
    assert_eq!(arm.agree, Some(true), "{:?}", arm.disagreements);
    assert_eq!(arm.input.rounds.len(), 2);
    assert!(arm.bytes.identical);
    assert!(arm.sentence.starts_with("lazy-png: "), "{}", arm.sentence);
    assert!(arm.sentence.contains("% off the p90"), "{}", arm.sentence);
    assert!(arm.sentence.contains("identical bytes; both runs agree"));
}

#[test]
fn each_run_pair_is_compare_of_those_two_runs_alone() {
    let runs = rounds("lazy-png", 40.0, 6000);
    let cmp = compare(&runs, &opts()).unwrap();
    let v = verdicts(&runs, &cmp, &opts());
    for r in &v.arms[0].input.rounds {
        let i = 2 * (r.round - 1);
        let alone = compare(&runs[i..i + 2], &opts()).unwrap();
        let ch = alone
            .changes
            .iter()
            .find(|c| c.column == "lazy-png" && c.metric == v.metric)
            .unwrap();
        assert_eq!(r.quantiles, ch.quantiles, "round {}", r.round);
    }
}

/// Whatever the rule decides on a candidate of the same distribution, the sentence says
/// exactly that: "off" only for a real drop, "slower" only for a real rise, "the same"
/// and "unknown" for the rest.
#[test]
fn the_sentence_says_what_the_rule_decided_and_nothing_more() {
    for (candidate, median, bytes) in [("same", 50.0, 6000), ("slow", 65.0, 7000)] {
        let runs = rounds(candidate, median, bytes);
        let cmp = compare(&runs, &opts()).unwrap();
        let v = verdicts(&runs, &cmp, &opts());
        let arm = &v.arms[0];
        for c in &arm.input.pooled {
            let name = if c.q == 0.5 {
                "the median"
            } else if c.q == 0.9 {
                "the p90"
            } else {
                "the p99"
            };
            let off = arm.sentence.contains(&format!("off {name}"));
            let slower = arm.sentence.contains(&format!("slower at {name}"));
            assert_eq!(off, c.verdict == Verdict::Lower, "{}", arm.sentence);
            assert_eq!(slower, c.verdict == Verdict::Higher, "{}", arm.sentence);
        }
        for (verdict, words) in [
            (Verdict::Same, "the same at"),
            (Verdict::Unknown, "unknown at"),
        ] {
            let any = arm.input.pooled.iter().any(|c| c.verdict == verdict);
            assert_eq!(arm.sentence.contains(words), any, "{}", arm.sentence);
        }
        assert!(
            !arm.sentence.contains("no significant change"),
            "{}",
            arm.sentence
        );
        assert_eq!(arm.bytes.identical, bytes == 6000, "{}", arm.sentence);
    }
    // 30 % slower on 600 loops a side is real at the median and the p90 (the p99 of
    // two runs a side may not be).
    let runs = rounds("slow", 65.0, 7000);
    let cmp = compare(&runs, &opts()).unwrap();
    let arm = &verdicts(&runs, &cmp, &opts()).arms[0];
    assert!(
        arm.input
            .pooled
            .iter()
            .filter(|c| c.q < 0.95)
            .all(|c| c.verdict == Verdict::Higher),
        "{:?}",
        arm.input.pooled
    );
    assert!(
        arm.sentence.contains("page bytes +17 % per run"),
        "{}",
        arm.sentence
    );
}

#[test]
fn a_run_pair_against_the_pooled_change_makes_the_runs_disagree() {
    // Round 2's candidate run is slower than its stock run; round 1's is much faster.
    let run = |arm: &str, m: f64, seed: u64| {
        synthetic::run(arm, &synthetic::lognormal(300, m, 0.3, 0.0, seed), 6000)
    };
    let runs = vec![
        run("stock", 50.0, 1),
        run("lazy-png", 30.0, 2),
        run("stock", 50.0, 3),
        run("lazy-png", 55.0, 4),
    ];
    let cmp = compare(&runs, &opts()).unwrap();
    let arm = &verdicts(&runs, &cmp, &opts()).arms[0];
    let r2 = &arm.input.rounds[1];
    assert!(r2.quantiles.iter().all(|c| c.delta > 0.0), "{r2:?}");
    let r1 = &arm.input.rounds[0];
    assert!(
        r1.quantiles.iter().all(|c| c.verdict == Verdict::Lower),
        "{r1:?}"
    );
    // Run 1 is really faster, run 2 went the other way: whatever pools, they disagree.
    assert_eq!(arm.agree, Some(false), "{}", arm.sentence);
    assert!(
        arm.sentence.contains("; the runs disagree: "),
        "{}",
        arm.sentence
    );
}
