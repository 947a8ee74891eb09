//! `verify`'s rule on simulated runs with a known truth (`arena_pilot::verify::sim`): for
//! each scenario, the share of verifications called caused, not caused, median less,
//! amplified and unknown. `just verify-sim [TRIALS]` runs it; `docs/pilot-file.md`
//! (Causality) holds its table.

use arena_pilot::verify::sim::{simulate, VerifySim};
use arena_pilot::verify::{Band, Verdict};

fn main() {
    let trials: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(400);
    let band = Band {
        injected_ms: 30.0,
        tolerance_ms: 3.0,
    };
    let d = VerifySim::default();
    let scenarios: Vec<(&str, VerifySim)> = vec![
        ("every answer moved by the delay", d),
        (
            "the same, shown on a 16.7 ms frame clock",
            VerifySim {
                frame_ms: Some(16.7),
                ..d
            },
        ),
        ("the same, runs 15 % apart", VerifySim { run_sd: 0.15, ..d }),
        (
            "a busy target: median 130 ms, runs 15 % apart",
            VerifySim {
                median_ms: 130.0,
                run_sd: 0.15,
                ..d
            },
        ),
        (
            "the same, 4 runs a side",
            VerifySim {
                median_ms: 130.0,
                run_sd: 0.15,
                runs: 4,
                ..d
            },
        ),
        (
            "every answer moved, 1 run of 14 warm loops a side",
            VerifySim {
                runs: 1,
                loops: 14,
                ..d
            },
        ),
        ("no answer moved", VerifySim { moved: 0.0, ..d }),
        ("a fifth did not move", VerifySim { moved: 0.8, ..d }),
        ("a tenth did not move", VerifySim { moved: 0.9, ..d }),
        (
            "moved by half the delay",
            VerifySim {
                shift_ratio: 0.5,
                ..d
            },
        ),
        (
            "moved, the target 30 % faster when delayed",
            VerifySim {
                delayed_scale: 0.7,
                ..d
            },
        ),
        (
            "moved by twice the delay",
            VerifySim {
                shift_ratio: 2.0,
                ..d
            },
        ),
    ];
    let verdicts = [
        Verdict::Caused,
        Verdict::CausedMedianUnknown,
        Verdict::NotCaused,
        Verdict::MedianLess,
        Verdict::Amplified,
        Verdict::Unknown,
    ];
    println!(
        "verify's rule, {trials} simulated verifications a scenario: +30 ms, tolerance 3 ms, 2 runs of 29 warm loops a side unless said, median 15 ms, runs 5 % apart, 8 intervals at 1 - 0.05/8\n"
    );
    print!("| scenario |");
    for v in verdicts {
        print!(" {} |", v.text());
    }
    println!("\n|---|{}", "---:|".repeat(verdicts.len()));
    for (i, (name, s)) in scenarios.iter().enumerate() {
        let t = simulate(s, band, trials, 0xC0FFEE + i as u64);
        print!("| {name} |");
        for v in verdicts {
            print!(" {:.1} % |", 100.0 * t.share(v));
        }
        println!();
    }
}
