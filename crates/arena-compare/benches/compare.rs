//! Speed of `compare` at scale: 1,000,000 loops across 4 arms (2 runs each), all four loop
//! metrics, bootstrap intervals and U tests included. Budget: under 2 s.
//!
//! Also measured in the same run, side by side: one bootstrap interval of a p99
//! difference with the O(1)-per-replicate order-statistic sampler against the textbook
//! resample of every value, to show why the first is the one `compare` uses.
//!
//! `cargo bench -p arena-compare --bench compare`

use std::time::{Duration, Instant};

use arena_compare::{compare, synthetic, CompareOptions};
use arena_run::Run;
use arena_stats::{bootstrap_quantile_diff, quantile, quantile_sorted, BootstrapOptions, Rng};

/// Type-7 median of repeat times (arena-stats' quantile, in seconds).
fn median(v: Vec<Duration>) -> Duration {
    let secs: Vec<f64> = v.iter().map(Duration::as_secs_f64).collect();
    Duration::from_secs_f64(quantile(&secs, 0.5).unwrap_or(0.0))
}

fn main() {
    let arms = [
        ("stock", 60.0),
        ("lazy-png", 45.0),
        ("png6", 90.0),
        ("tick8", 61.0),
    ];
    let per_run = 125_000;
    let t = Instant::now();
    let mut runs: Vec<Run> = Vec::new();
    for round in 0..2u64 {
        for (k, (arm, median)) in arms.iter().enumerate() {
            let v = synthetic::lognormal(per_run, *median, 0.35, 0.0, round * 10 + k as u64);
            runs.push(synthetic::run(arm, &v, 6000));
        }
    }
    let loops: usize = runs.iter().map(|r| r.loops.len()).sum();
    println!(
        "built {} runs, {} loops in memory in {:.2?}",
        runs.len(),
        loops,
        t.elapsed()
    );

    let opts = CompareOptions::default();
    let reps = 5;
    let mut times = Vec::new();
    let mut rows = 0;
    for _ in 0..reps {
        let t = Instant::now();
        let c = compare(&runs, &opts).expect("compare");
        times.push(t.elapsed());
        rows = c.table.rows.len();
        std::hint::black_box(&c);
    }
    let m = median(times.clone());
    println!(
        "compare: {loops} loops, 4 arms, 4 metrics, {} resamples per interval, {rows} rows: median {:.3?} of {reps} (min {:.3?}, max {:.3?}); budget 2 s: {}",
        opts.verdict.bootstrap.resamples,
        m,
        times.iter().min().unwrap(),
        times.iter().max().unwrap(),
        if m < Duration::from_secs(2) { "met" } else { "MISSED" }
    );

    // One interval, two samplers, same data: 250,000 values a side, p99.
    let mut a = synthetic::lognormal(250_000, 60.0, 0.35, 0.0, 1);
    let mut b = synthetic::lognormal(250_000, 62.0, 0.35, 0.0, 2);
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let resamples = 50;
    let o = BootstrapOptions {
        resamples,
        ..BootstrapOptions::default()
    };
    let mut fast = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        std::hint::black_box(bootstrap_quantile_diff(&a, &b, 0.99, &o));
        fast.push(t.elapsed());
    }
    let mut slow = Vec::new();
    let mut scratch_a = vec![0.0; a.len()];
    let mut scratch_b = vec![0.0; b.len()];
    for _ in 0..3 {
        let t = Instant::now();
        let mut rng = Rng::new(1);
        let mut diffs = Vec::with_capacity(resamples);
        for _ in 0..resamples {
            for (dst, src) in [(&mut scratch_a, &a), (&mut scratch_b, &b)] {
                for x in dst.iter_mut() {
                    *x = src[(rng.uniform() * src.len() as f64) as usize];
                }
            }
            let k = ((a.len() - 1) as f64 * 0.99) as usize;
            let qa = *scratch_a.select_nth_unstable_by(k, f64::total_cmp).1;
            let qb = *scratch_b.select_nth_unstable_by(k, f64::total_cmp).1;
            diffs.push(qb - qa);
        }
        diffs.sort_by(f64::total_cmp);
        std::hint::black_box(quantile_sorted(&diffs, 0.025));
        slow.push(t.elapsed());
    }
    let (f, s) = (median(fast), median(slow));
    println!(
        "one p99 interval, 250,000 vs 250,000 values, {resamples} resamples: order-statistic sampler {:.3?} (median of {reps}), textbook resample {:.3?} (median of 3): {:.0}x",
        f,
        s,
        s.as_secs_f64() / f.as_secs_f64().max(1e-9)
    );
}
