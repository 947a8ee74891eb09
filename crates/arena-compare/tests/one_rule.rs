//! One pair of samples, four readers. `compare` and `gate` share one rule (the decide
//! module of `arena_compare`): asked about a family of the same size, they must report
//! the same percent change and the same interval. The matrix's reduction and the GC log overview (repeats
//! of a command, pauses of a log: no runs, no timeouts) share `arena_stats::noise_verdict`.
//! A reader with its own rule (its own bar, test, interval or division) reads one of these
//! pairs differently.

use std::path::PathBuf;

use arena_compare::{compare, gate, synthetic, CompareOptions, GateLimit, GateOptions, Metric};
use arena_logs::gc::{self, GcOptions};
use arena_matrix::reduce::{self, CellSummary, CellVerdict};
use arena_matrix::spec::{Better, Stat};
use arena_stats::{noise_verdict, NoiseRule, QuantileChange, Verdict};

/// 1,505 pauses (ms): every whole µs from 1.000 to 1.300 five times, in a scrambled
/// order. Under 2.048 ms at the GC summary's µs resolution the histogram holds them
/// exactly, so the log table sees the very same sample.
fn baseline() -> Vec<f64> {
    (0..1505u64)
        .map(|i| 1.0 + ((i * 37) % 301) as f64 / 1000.0)
        .collect()
}

/// `f` of each baseline value, rounded to the µs.
fn shifted(f: impl Fn(f64) -> f64) -> Vec<f64> {
    baseline()
        .into_iter()
        .map(|v| (f(v) * 1000.0).round() / 1000.0)
        .collect()
}

fn sorted(v: &[f64]) -> Vec<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

/// compare's and the gate's rule, with no spread between runs assumed: each side is one
/// sample here, as it is to the matrix and the GC log, so the four read the same thing.
fn rule() -> NoiseRule {
    NoiseRule {
        run_spread_pct: Some(0.0),
        ..NoiseRule::default()
    }
}

/// What compare says about the p50 of inputToPaint.
fn by_compare(b: &[f64], c: &[f64]) -> QuantileChange {
    let runs = [
        synthetic::run("base", b, 6000),
        synthetic::run("cand", c, 6000),
    ];
    let opts = CompareOptions {
        metrics: vec![Metric::InputToPaint],
        verdict: rule(),
        ..CompareOptions::default()
    };
    let cmp = compare(&runs, &opts).unwrap();
    let ch = cmp
        .changes
        .iter()
        .find(|m| m.metric == Metric::InputToPaint.name())
        .unwrap();
    *ch.quantiles.iter().find(|q| q.q == 0.5).unwrap()
}

/// What the gate says about the same quantile. One limit and the two shares (unanswered,
/// claimed) make three checks, as compare's three quantiles of a metric do: the same
/// family size.
fn by_gate(b: &[f64], c: &[f64]) -> QuantileChange {
    let limits = ["inputToPaint.p50=+50%"].map(|l| GateLimit::parse(l).unwrap());
    let r = gate(
        &[synthetic::run("base", b, 6000)],
        &[synthetic::run("cand", c, 6000)],
        &limits,
        &GateOptions {
            rule: rule(),
            ..GateOptions::default()
        },
    )
    .unwrap();
    r.checks[0].change
}

/// What a matrix cell of median-of-runs figures says against its baseline cell.
fn by_matrix(b: &[f64], c: &[f64]) -> QuantileChange {
    let cell = |v: &[f64]| CellSummary {
        ok: v.iter().map(|x| (*x, None)).collect(),
        failures: vec![],
        value: arena_stats::quantile(v, 0.5),
        start: None,
        runs: v.len(),
        at_least: false,
    };
    let q = reduce::quantile_of(Stat::Median, Better::Lower);
    // The matrix's own rule: its default 2 % bar and alpha.
    match reduce::cell_verdict(&cell(c), &cell(b), q, &reduce::rule(2.0)) {
        CellVerdict::Compared(ch) => ch,
        other => panic!("matrix: {other:?}"),
    }
}

/// What the GC overview of two logs with these pauses says in its `median pause` row:
/// (the percent it holds, whether its text calls the change real).
fn by_gc_log(b: &[f64], c: &[f64]) -> (f64, bool) {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, pauses: &[f64]| -> PathBuf {
        let mut text = String::new();
        for (i, ms) in pauses.iter().enumerate() {
            text.push_str(&format!(
                "[{:.3}s][info][gc] GC({i}) Pause Young (Normal) (G1 Evacuation Pause) 7M->2M(66M) {ms:.3}ms\n",
                0.1 + i as f64 * 0.01
            ));
        }
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let files = vec![write("base.log", b), write("cand.log", c)];
    let tables = gc::run(&GcOptions {
        files,
        window: None,
    })
    .unwrap();
    let overview = tables.last().unwrap();
    let delta = overview
        .columns
        .iter()
        .position(|c| c.name.starts_with('\u{394}'))
        .unwrap();
    let row = overview
        .rows
        .iter()
        .find(|r| r[0].text == "median pause")
        .unwrap();
    let cell = &row[delta];
    (cell.value.unwrap(), !cell.text.ends_with('~'))
}

/// Compare and gate agree with each other; the matrix and the GC log with
/// `noise_verdict`; and all four call the change real or not alike. Returns compare's
/// verdict.
fn all_four_read(b: &[f64], c: &[f64]) -> Verdict {
    let own = noise_verdict(&[&sorted(b)], &[&sorted(c)], 0.5, &NoiseRule::default()).unwrap();
    let (cmp, gate, matrix) = (by_compare(b, c), by_gate(b, c), by_matrix(b, c));
    assert_eq!(
        (gate.delta_pct, gate.ci),
        (cmp.delta_pct, cmp.ci),
        "gate: {gate:?}"
    );
    assert_eq!(cmp.delta_pct, own.delta_pct, "compare: {cmp:?}");
    assert_eq!(matrix.delta_pct, own.delta_pct, "matrix: {matrix:?}");
    assert_eq!(matrix.verdict, own.verdict, "matrix: {matrix:?}");
    assert_eq!((matrix.p, matrix.ci), (own.p, own.ci), "matrix: {matrix:?}");
    assert_eq!(
        cmp.verdict.is_real(),
        own.verdict.is_real(),
        "compare: {cmp:?}"
    );
    let (pct, real) = by_gc_log(b, c);
    assert_eq!(pct, own.delta_pct, "gc log");
    assert_eq!(real, own.verdict.is_real(), "gc log");
    cmp.verdict
}

#[test]
fn a_real_change_reads_the_same_in_compare_gate_matrix_and_the_gc_log() {
    let (b, c) = (baseline(), shifted(|v| v * 1.2));
    assert_eq!(all_four_read(&b, &c), Verdict::Higher);
    let own = noise_verdict(&[&sorted(&b)], &[&sorted(&c)], 0.5, &NoiseRule::default()).unwrap();
    assert!((own.delta_pct - 20.0).abs() < 0.1, "{own:?}");
}

#[test]
fn a_significant_step_under_the_noise_bar_is_real_in_none_of_the_four() {
    // +20 µs on 1.15 ms: the U test and the interval see it, the 2 % bar does not.
    let (b, c) = (baseline(), shifted(|v| v + 0.02));
    let own = noise_verdict(&[&sorted(&b)], &[&sorted(&c)], 0.5, &NoiseRule::default()).unwrap();
    assert!(
        own.p.unwrap() < 0.05 && own.ci.unwrap().excludes_zero(),
        "{own:?}"
    );
    assert!(own.delta_pct > 0.0 && own.delta_pct < 2.0, "{own:?}");
    assert_eq!(own.verdict, Verdict::Noise);
    // compare's interval reaches past the 2 % threshold: not the same, not real.
    assert_eq!(all_four_read(&b, &c), Verdict::Unknown);
}

#[test]
fn a_step_the_test_sees_but_the_interval_does_not_is_real_in_none_of_the_four() {
    // Two modes, 1.000-1.049 ms and exactly 1.300 ms. The baseline's median is the top of
    // the low mode; the candidate moved 51 values up, so its median is 1.300: +24 %, and
    // the U test calls the shift significant. But half the baseline's resamples put
    // their median at 1.300 too, so the interval of the median's difference reaches 0:
    // a rule of bar and U test alone would call this real.
    let mode = |low: usize, high: usize| -> Vec<f64> {
        (0..low)
            .map(|i| 1.0 + (i % 50) as f64 / 1000.0)
            .chain(std::iter::repeat_n(1.3, high))
            .collect()
    };
    let (b, c) = (mode(501, 500), mode(450, 551));
    let own = noise_verdict(&[&sorted(&b)], &[&sorted(&c)], 0.5, &NoiseRule::default()).unwrap();
    assert!(own.p.unwrap() < 0.05 && own.delta_pct > 2.0, "{own:?}");
    assert!(!own.ci.unwrap().excludes_zero(), "{own:?}");
    assert_eq!(own.verdict, Verdict::NotSignificant);
    assert_eq!(all_four_read(&b, &c), Verdict::Unknown);
}
