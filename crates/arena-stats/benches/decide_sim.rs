//! The decision rule on simulated runs with a known truth (`arena_stats::sim`): coverage
//! of nominal 95 % intervals, false alarms of an A/A comparison, and power to call a
//! +10 % change, by runs a side and loops a run; then sequential rounds.
//! `cargo bench -p arena-stats --bench decide_sim` (`just sim`). `ARENA_SIM_TRIALS` sets
//! the trials a cell (default 2,000); an argument `kinds` prints the presses-and-releases
//! table alone.

use arena_stats::sim::{sequential, simulate, Scenario, Tally};
use arena_stats::{sparse, Pairing};

/// `s` as an A/A comparison, and with the candidate +10 %: 95 % intervals, a 2 %
/// threshold, seeds `seed` and `seed + 1`.
fn same_and_shifted(s: &Scenario, trials: usize, seed: u64) -> (Tally, Tally) {
    let up = Scenario {
        shift_pct: 10.0,
        ..*s
    };
    (
        simulate(s, trials, 0.95, 2.0, seed),
        simulate(&up, trials, 0.95, 2.0, seed + 1),
    )
}

fn main() {
    let trials: usize = std::env::var("ARENA_SIM_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    // `just sim kinds`: the presses-and-releases table alone.
    if std::env::args().any(|a| a == "kinds") {
        two_kinds(trials);
        return;
    }
    println!(
        "{trials} trials a cell; lognormal loops (median 15 ms, sigma 0.5, 1 in 20 three times slower), \
run offset SD 5 %, round drift SD 3 %, 0.5 % of loops unanswered; threshold 2 %"
    );
    for pairing in [Pairing::Rounds, Pairing::Independent] {
        println!("\n{pairing:?}");
        println!("| q | runs a side | loops a run | coverage | A/A false alarms | power at +10 % | half-width, ms |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        for q in [0.5, 0.9, 0.99] {
            for runs in [1, 2, 3, 5, 8, 12] {
                for loops in [30, 60, 156, 254] {
                    let s = Scenario {
                        runs,
                        loops,
                        q,
                        pairing,
                        drift_sd: 0.03,
                        ..Scenario::default()
                    };
                    if sparse(loops, q) {
                        println!(
                            "| p{} | {runs} | {loops} | does not apply: under 2 loops a run above it | | | |",
                            (q * 100.0) as u32
                        );
                        continue;
                    }
                    let (aa, up) = same_and_shifted(&s, trials, 1);
                    println!(
                        "| p{} | {runs} | {loops} | {:.1} % | {:.1} % | {:.1} % | {:.2} |",
                        (q * 100.0) as u32,
                        100.0 * aa.coverage(),
                        100.0 * aa.false_alarms(),
                        100.0 * up.power(),
                        aa.mean_half_width
                    );
                }
            }
        }
    }
    println!(
        "\nRuns that spread twice what is assumed (true run SD 10 %, --run-spread 5 %), independent, 156 loops a run:"
    );
    println!("| q | runs a side | coverage | A/A false alarms | power at +10 % |");
    println!("|---|---:|---:|---:|---:|");
    for q in [0.5, 0.9] {
        for runs in [1, 2, 3, 5, 8] {
            let s = Scenario {
                runs,
                loops: 156,
                q,
                pairing: Pairing::Independent,
                drift_sd: 0.03,
                run_sd: 0.10,
                assumed_sd: Some(0.05),
                ..Scenario::default()
            };
            let (aa, up) = same_and_shifted(&s, trials, 3);
            println!(
                "| p{} | {runs} | {:.1} % | {:.1} % | {:.1} % |",
                (q * 100.0) as u32,
                100.0 * aa.coverage(),
                100.0 * aa.false_alarms(),
                100.0 * up.power()
            );
        }
    }
    two_kinds(trials);
    println!("\nSequential rounds, 60 loops a run, looks from 2 to 8 rounds, each at 1 - 0.05/7 (paired):");
    println!("| q | A/A false alarms | power at +10 % |");
    println!("|---|---:|---:|");
    for q in [0.5, 0.9] {
        let s = Scenario {
            runs: 8,
            loops: 60,
            q,
            drift_sd: 0.03,
            ..Scenario::default()
        };
        let (aa, _) = sequential(&s, 2, 8, 0.05, trials, 7);
        let (_, power) = sequential(
            &Scenario {
                shift_pct: 10.0,
                ..s
            },
            2,
            8,
            0.05,
            trials,
            8,
        );
        println!(
            "| p{} | {:.1} % | {:.1} % |",
            (q * 100.0) as u32,
            100.0 * aa,
            100.0 * power
        );
    }
}

/// A click's press and release, two modes (release medians 1/16 and 1/4 of the press's,
/// and one mode for reference), 64 loops a run, the median: each kind resampled at its
/// size, and the loops pooled. The A/A rows at the 2 % threshold; power at +40 ms.
fn two_kinds(trials: usize) {
    println!("\nPresses and releases (every other loop a release), p50, 64 loops a run, paired; power at +40 ms:");
    println!("| release / press | runs a side | resampled | coverage | A/A false alarms | power at +40 ms | half-width, ms |");
    println!("|---:|---:|---|---:|---:|---:|---:|");
    for ratio in [1.0 / 16.0, 0.25, 1.0] {
        for runs in [1, 3] {
            for pooled in [false, true] {
                let s = Scenario {
                    runs,
                    loops: 64,
                    q: 0.5,
                    median: 16.0,
                    release_ratio: Some(ratio),
                    pooled,
                    drift_sd: 0.03,
                    ..Scenario::default()
                };
                let up = Scenario {
                    shift_pct: 100.0 * 40.0 / arena_stats::sim::arm_quantile(&s),
                    ..s
                };
                let aa = simulate(&s, trials, 0.95, 2.0, 5);
                let p = simulate(&up, trials, 0.95, 2.0, 6);
                println!(
                    "| {ratio:.3} | {runs} | {} | {:.1} % | {:.1} % | {:.1} % | {:.2} |",
                    if pooled { "pooled" } else { "by kind" },
                    100.0 * aa.coverage(),
                    100.0 * aa.false_alarms(),
                    100.0 * p.power(),
                    aa.mean_half_width
                );
            }
        }
    }
}
