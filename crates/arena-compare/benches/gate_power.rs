//! The gate's false-alarm rate and power, on real recorded loops.
//!
//! `benches/data/` holds the `loops.csv` of four runs of the fixture's stock arm, 156
//! clicks each, recorded by `arena-perf ab --arms stock --rounds 4 --clicks 156` (see
//! `benches/data/README.md`). A simulated run is one of those runs, picked at random, its
//! warm loops resampled with replacement (its unanswered loops stay unanswered): so two
//! simulated runs differ as two real sessions did, not only by sampling. Each pair is 2
//! runs a side, and the gate runs with its own defaults (alpha 0.05, Bonferroni over its
//! checks, the unanswered share checked at +1 pt) and two limits:
//! `inputToPixels.p50=+5%` and `inputToPixels.p99=+20%`.
//!
//! - A/A: both sides from the stock runs. Any failed check is a false alarm; the goal is
//!   at most alpha. A check the gate cannot clear either way is unknown (exit 4), counted
//!   apart: unknown is neither a pass nor a fail.
//! - Power against +10 % on every candidate loop: how often the p50 limit fails.
//! - Power against one loop in 20 delayed 150 ms: how often the p99 limit fails (and, for
//!   contrast, the p50's).
//!
//! `cargo bench -p arena-compare --bench gate_power` (1,000 pairs a scenario;
//! `GATE_POWER_PAIRS=N` for fewer).

use std::path::Path;
use std::time::Instant;

use arena_compare::{gate, synthetic, GateLimit, GateOptions, GateResult};
use arena_run::Run;
use arena_stats::Rng;

/// One real run's warm loops: `Some(inputToPixels)` answered, `None` unanswered.
type Real = Vec<Option<f64>>;

fn load(path: &Path) -> Real {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let head = r.headers().expect("a header").clone();
    let col = |name: &str| {
        head.iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{}: no column {name}", path.display()))
    };
    let (cold, pixels, outcome) = (col("cold"), col("inputToPixels"), col("outcome"));
    let mut out = Vec::new();
    for row in r.records() {
        let row = row.expect("a row");
        if &row[cold] == "true" || &row[outcome] == "claimed" {
            continue;
        }
        out.push(row[pixels].parse::<f64>().ok());
    }
    out
}

/// A simulated run: a random real run's loops resampled, `shift` applied to the answered.
fn simulate(arm: &str, real: &[Real], rng: &mut Rng, shift: &dyn Fn(usize, f64) -> f64) -> Run {
    let src = &real[((rng.uniform() * real.len() as f64) as usize).min(real.len() - 1)];
    let n = src.len();
    let drawn: Vec<Option<f64>> = (0..n)
        .map(|_| src[((rng.uniform() * n as f64) as usize).min(n - 1)])
        .collect();
    let values: Vec<f64> = drawn
        .iter()
        .enumerate()
        .map(|(i, v)| v.map_or(0.0, |x| shift(i, x)))
        .collect();
    let mut run = synthetic::run(arm, &values, 6000);
    // Distinct start times: the gate refuses a run given twice.
    run.meta.started_at = format!("2026-12-02T00:00:00.{:03}Z", (rng.uniform() * 1e3) as u32);
    run.meta.seed = (rng.uniform() * 1e15) as u64;
    synthetic::unanswer(&mut run, |i, _| drawn[i].is_none());
    run
}

struct Tally {
    any: u32,
    p50: u32,
    p99: u32,
    unknown: u32,
    refused: u32,
    /// Each decided pair's detectable rise of the p50 and p99 limits, percent.
    mde: [Vec<f64>; 2],
}

fn scenario(real: &[Real], pairs: u32, seed: u64, shift: &dyn Fn(usize, f64) -> f64) -> Tally {
    let limits: Vec<GateLimit> = ["inputToPaint.p50=+5%", "inputToPaint.p99=+20%"]
        .iter()
        .map(|s| GateLimit::parse(s).expect("a limit"))
        .collect();
    let opts = GateOptions::default();
    let same = |_: usize, x: f64| x;
    let mut rng = Rng::new(seed);
    let mut t = Tally {
        any: 0,
        p50: 0,
        p99: 0,
        unknown: 0,
        refused: 0,
        mde: [Vec::new(), Vec::new()],
    };
    for k in 0..pairs {
        let b: Vec<Run> = (0..2)
            .map(|_| simulate("stock", real, &mut rng, &same))
            .collect();
        let c: Vec<Run> = (0..2)
            .map(|_| simulate("cand", real, &mut rng, shift))
            .collect();
        // A baseline whose p99 lands on an unanswered loop cannot carry a percent limit:
        // the gate refuses it (exit 2), neither a pass nor a fail.
        let r: GateResult = match gate(&b, &c, &limits, &opts) {
            Ok(r) => r,
            Err(_) => {
                t.refused += 1;
                continue;
            }
        };
        for (k, c) in r.checks.iter().enumerate().take(2) {
            t.mde[k].push(c.power.mde_pct);
        }
        t.any += u32::from(r.failed());
        let failed = r.failures();
        t.p50 += u32::from(failed.iter().any(|f| f.ends_with("p50")));
        t.p99 += u32::from(failed.iter().any(|f| f.ends_with("p99")));
        t.unknown += u32::from(!r.failed() && !r.unknowns().is_empty());
        if (k + 1) % 250 == 0 {
            eprintln!("  {} of {pairs} pairs", k + 1);
        }
    }
    t
}

fn pct(k: u32, n: u32) -> String {
    format!("{:.1} % ({k} of {n})", 100.0 * k as f64 / n as f64)
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("benches/data")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    files.sort();
    let real: Vec<Real> = files.iter().map(|p| load(p)).collect();
    let loops: usize = real.iter().map(Vec::len).sum();
    let unanswered: usize = real.iter().flatten().filter(|v| v.is_none()).count();
    println!(
        "gate_power: {} real runs, {loops} warm loops ({unanswered} unanswered); 2 simulated runs a side, each one real run resampled",
        real.len()
    );
    let pairs: u32 = std::env::var("GATE_POWER_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let t0 = Instant::now();
    let aa = scenario(&real, pairs, 1, &|_, x| x);
    let shift = scenario(&real, pairs, 2, &|_, x| x * 1.10);
    let tail = scenario(&real, pairs, 3, &|i, x| {
        if i % 20 == 19 {
            x + 150.0
        } else {
            x
        }
    });
    println!("limits: inputToPixels p50 +5 %, p99 +20 %, unanswered share +1 pt (default); alpha 0.05, Bonferroni over 3 checks");
    println!(
        "A/A, any check failed (false alarm; goal at most 5 %): {}",
        pct(aa.any, pairs)
    );
    println!(
        "  of which p50 {}, p99 {}",
        pct(aa.p50, pairs),
        pct(aa.p99, pairs)
    );
    println!(
        "+10 % on every loop: p50 limit failed (power) {}",
        pct(shift.p50, pairs)
    );
    println!(
        "1 loop in 20 +150 ms: p99 limit failed (power) {}; p50 limit failed {}",
        pct(tail.p99, pairs),
        pct(tail.p50, pairs)
    );
    println!(
        "pairs the gate called unknown (exit 4, nothing failed): A/A {}, +10 % {}, tail {}",
        pct(aa.unknown, pairs),
        pct(shift.unknown, pairs),
        pct(tail.unknown, pairs)
    );
    let med = |v: &[f64]| arena_stats::quantile(v, 0.5).unwrap_or(f64::NAN);
    println!(
        "A/A, what the limits can see (median over pairs): p50 a rise of +{:.1} % past its limit, p99 +{:.1} %",
        med(&aa.mde[0]),
        med(&aa.mde[1])
    );
    println!(
        "pairs refused, a baseline p99 beyond the window (exit 2): A/A {}, +10 % {}, tail {}",
        pct(aa.refused, pairs),
        pct(shift.refused, pairs),
        pct(tail.refused, pairs)
    );
    println!("({} pairs a scenario in {:.1?})", pairs, t0.elapsed());
}
