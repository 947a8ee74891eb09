//! Numeric flags are range-checked as they are parsed: a value out of range (inf, NaN,
//! 1e308, a negative share, a zero count) is exit 2 naming the flag and its range, before
//! any run is read; a value in range still gives the command's own answer.

use std::path::{Path, PathBuf};
use std::process::Output;

use arena_compare::synthetic;

use crate::compare_common::{arena, s, Scratch};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Writes a synthetic run of `n` loops (lognormal around `median` ms) and returns its folder.
fn write_run(dir: &Path, arm: &str, n: usize, median: f64, seed: u64) -> PathBuf {
    let r = synthetic::run(arm, &synthetic::lognormal(n, median, 0.3, 0.0, seed), 6000);
    let out = dir.join(format!("{arm}-{seed}"));
    r.write(&out).unwrap();
    out
}

/// Exit 2, and clap's message naming the flag, the value and the range.
fn refused(o: &Output, value: &str, flag: &str, range: &str) {
    let all = text(o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    let want = format!("error: invalid value '{value}' for '{flag}': must be {range}");
    assert!(all.contains(&want), "wanted `{want}` in:\n{all}");
}

/// Baseline at 60 ms, candidate at 120 ms: `--max sendToRecv.p50=+10%` fails (exit 1). One
/// run a side leans on the assumed run spread, so the step is wide enough to be decided with
/// the gate's whole family (the limit and its two shares) sharing alpha.
fn regression(d: &Scratch) -> (PathBuf, PathBuf) {
    (
        write_run(&d.0, "stock", 200, 60.0, 101),
        write_run(&d.0, "slow", 200, 120.0, 201),
    )
}

fn gate(base: &Path, cand: &Path, max: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "gate",
        "--baseline",
        s(base),
        "--candidate",
        s(cand),
        "--max",
        max,
    ];
    args.extend_from_slice(extra);
    arena(&args)
}

#[test]
fn threshold_out_of_0_to_100_cannot_pass_a_failing_gate() {
    let d = Scratch::new("threshold");
    let (base, cand) = regression(&d);
    let limit = "sendToRecv.p50=+10%";
    // `inf` and `1e308` called the regression noise and the gate exited 0; `-5` and `NaN`
    // were taken as they came. `--noise-bar` is the flag's old name, refused alike.
    for flag in ["--threshold", "--noise-bar"] {
        for v in ["inf", "1e308", "-5", "NaN", "100.5"] {
            let o = gate(&base, &cand, limit, &[flag, v]);
            refused(&o, v, "--threshold <PCT>", "a finite number from 0 to 100");
        }
    }
    let o = gate(&base, &cand, limit, &["--threshold=-5"]);
    refused(
        &o,
        "-5",
        "--threshold <PCT>",
        "a finite number from 0 to 100",
    );
    for v in ["-5", "NaN", "200"] {
        let o = gate(&base, &cand, limit, &["--run-spread", v]);
        refused(&o, v, "--run-spread <PCT>", "a finite number from 0 to 100");
    }
    // In range, the regression still fails the gate, at both ends of what bars nothing.
    for v in ["0", "5"] {
        let o = gate(&base, &cand, limit, &["--threshold", v]);
        assert_eq!(o.status.code(), Some(1), "--threshold {v}: {}", text(&o));
    }
}

#[test]
fn alpha_and_resamples_are_refused_as_parsed() {
    let d = Scratch::new("alpha");
    let (base, cand) = regression(&d);
    let limit = "sendToRecv.p50=+10%";
    for v in ["0", "1", "NaN", "-0.05"] {
        let o = gate(&base, &cand, limit, &["--alpha", v]);
        refused(&o, v, "--alpha <A>", "a number above 0 and below 1");
    }
    for v in ["99", "0", "1000001"] {
        let o = gate(&base, &cand, limit, &["--resamples", v]);
        refused(
            &o,
            v,
            "--resamples <N>",
            "a whole number from 100 to 1000000",
        );
    }
    let o = gate(
        &base,
        &cand,
        limit,
        &["--alpha", "0.1", "--resamples", "1000"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

#[test]
fn idle_share_is_a_share_from_0_to_1() {
    let d = Scratch::new("idle-share");
    let run = write_run(&d.0, "stock", 150, 50.0, 1);
    for v in ["NaN", "-1", "inf", "1.5"] {
        let o = arena(&["compare", s(&run), "--idle-share", v]);
        refused(&o, v, "--idle-share <SHARE>", "a finite number from 0 to 1");
    }
    for v in ["0", "1"] {
        let o = arena(&["compare", s(&run), "--idle-share", v]);
        assert_eq!(o.status.code(), Some(0), "--idle-share {v}: {}", text(&o));
    }
}

#[test]
fn burst_gap_is_above_0() {
    let d = Scratch::new("burst-gap");
    let run = write_run(&d.0, "stock", 50, 50.0, 1);
    for v in ["0", "-3", "inf", "NaN"] {
        let o = arena(&["compare", s(&run), "--frames", "--burst-gap", v]);
        refused(&o, v, "--burst-gap <MS>", "a finite number above 0");
    }
}

#[test]
fn counts_and_waits_have_their_minimum_and_a_day_at_most() {
    // Refused before the pilot file is read or a browser starts.
    let o = arena(&["pilot", "--clicks", "0"]);
    refused(&o, "0", "--clicks <N>", "a whole number, 1 or more");
    let o = arena(&["pilot", "--clicks", "-1"]);
    refused(&o, "-1", "--clicks <N>", "a whole number, 1 or more");
    let o = arena(&["pilot", "--timeout", "0"]);
    refused(
        &o,
        "0",
        "--timeout <MS>",
        "a whole number of ms from 1 to 86400000 (a day)",
    );
    let o = arena(&["ab", "--arms", "a,b", "--interval", "86400001"]);
    refused(
        &o,
        "86400001",
        "--interval <MS>",
        "a whole number of ms from 0 to 86400000 (a day)",
    );
    // The person's browser: refused before the pilot file is read or a browser starts.
    let o = arena(&["pilot", "--dpr", "0"]);
    refused(&o, "0", "--dpr <RATIO>", "a number above 0 and at most 8");
    let o = arena(&["ab", "--arms", "a,b", "--cpu-throttle", "0.5"]);
    refused(
        &o,
        "0.5",
        "--cpu-throttle <RATE>",
        "a number from 1 (no slowdown) to 20",
    );
    for v in ["50x600", "1280", "1280x9000", "x"] {
        let o = arena(&["pilot", "--viewport", v]);
        refused(
            &o,
            v,
            "--viewport <WxH>",
            "WIDTHxHEIGHT in CSS px, each side from 100 to 8192",
        );
    }
    let o = arena(&["pilot", "--idle", "inf"]);
    refused(
        &o,
        "inf",
        "--idle <SECONDS>",
        "a number of seconds from 0.001 to 86400",
    );
    for v in ["NaN", "0", "-5", "inf"] {
        let o = arena(&["verify", "--rtt", v]);
        refused(
            &o,
            v,
            "--rtt <MS>",
            "a number of ms above 0 and at most 2000",
        );
    }
    let o = arena(&["verify", "--rounds", "0"]);
    refused(
        &o,
        "0",
        "--rounds <R>",
        "a whole number from 1 to 4294967295",
    );
    let o = arena(&["wire", "capture", "--port", "0", "--out", "x.pcap"]);
    refused(&o, "0", "--port <PORT>", "a TCP port from 1 to 65535");
    let o = arena(&[
        "wire",
        "capture",
        "--port",
        "9",
        "--out",
        "x.pcap",
        "--duration",
        "1e300",
    ]);
    refused(
        &o,
        "1e300",
        "--duration <SECONDS>",
        "a number of seconds from 0.001 to 86400",
    );
    // A sequence's budget: rounds or a time, never 0; and only with --until-decided.
    for v in ["0", "0s", "-3", "lots"] {
        let o = arena(&["ab", "--arms", "a,b", "--until-decided", "--budget", v]);
        refused(
            &o,
            v,
            "--budget <ROUNDS|TIME>",
            "a number of rounds from 1 to 4294967295 (8) or a time above 0 (3m, 90s, 1h 30m)",
        );
    }
    let o = arena(&["demo", "--budget", "3m"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--until-decided"), "{}", text(&o));
    for v in ["0", "1001"] {
        let o = arena(&["matrix", "m.toml", "--repeats", v]);
        refused(
            &o,
            v,
            "--repeats <REPEATS>",
            "a whole number from 1 to 1000",
        );
    }
    let o = arena(&["matrix", "m.toml", "--noise-pct", "1e308"]);
    refused(
        &o,
        "1e308",
        "--noise-pct <PCT>",
        "a finite number from 0 to 100",
    );
}

#[test]
fn a_max_limit_past_the_finite_and_sane_is_exit_2() {
    let d = Scratch::new("max");
    let (base, cand) = regression(&d);
    // `+1e308%` overflowed to no limit at all: the regression passed with exit 0.
    for (spec, why) in [
        (
            "sendToRecv.p50=+1e308%",
            "the limit is an allowed increase of at most +10000%",
        ),
        ("sendToRecv.p50=+inf%", "is not a finite number"),
        ("sendToRecv.p50=+NaN%", "is not a finite number"),
        ("sendToRecv.p50=+infms", "the limit is a percent"),
        (
            "unanswered=+infpt",
            "the limit is an allowed rise of 0 to 100 points",
        ),
    ] {
        let o = gate(&base, &cand, spec, &[]);
        let all = text(&o);
        assert_eq!(o.status.code(), Some(2), "{spec}: {all}");
        let head = format!("--max {spec}: ");
        let msg = all.split_once(&head).map(|(_, m)| m).unwrap_or_default();
        assert!(msg.contains(why), "{spec}: {all}");
    }
    // The largest limit allowed is a limit: the regression is within it.
    let o = gate(&base, &cand, "sendToRecv.p50=+10000%", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn logs_windows_buckets_gaps_and_counts_have_their_ranges() {
    let log = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/logs")
            .join(name)
            .to_string_lossy()
            .into_owned()
    };
    let (gc, cl) = (log("gc-g1-1m.log"), log("classload.log"));
    let secs_above_0 = "a finite number of seconds above 0";
    for (args, value, flag, range) in [
        (
            vec!["gc", "--window", "NaN", &gc],
            "NaN",
            "--window <SECS>",
            secs_above_0,
        ),
        (
            vec!["gc", "--window", "0", &gc],
            "0",
            "--window <SECS>",
            secs_above_0,
        ),
        (
            vec!["classload", "--bucket", "1e-300", &cl],
            "1e-300",
            "--bucket <SECS>",
            "a number of seconds from 0.001 to 86400",
        ),
        (
            vec!["classload", "--gap", "-1", &cl],
            "-1",
            "--gap <SECS>",
            "a finite number of seconds, 0 or more",
        ),
        (
            vec!["classload", "--depth", "0", &cl],
            "0",
            "--depth <N>",
            "a whole number from 1 to 64",
        ),
        (
            vec!["profile", "--top", "0", &cl],
            "0",
            "--top <N>",
            "a whole number, 1 or more",
        ),
    ] {
        let mut all = vec!["logs"];
        all.extend(args);
        refused(&arena(&all), value, flag, range);
    }
    // In range, the reducer answers.
    let o = arena(&["logs", "gc", "--window", "0.5", &gc]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("n=21 pauses"), "{}", text(&o));
}

#[test]
fn a_pilot_or_matrix_file_that_never_ends_is_read_to_a_bound() {
    // /dev/zero was read until memory ran out (the kernel's OOM killer ended one try).
    for args in [
        &["pilot", "--pilot", "/dev/zero"][..],
        &["serve", "--pilot", "/dev/zero", "--arm", "stock"][..],
        &["matrix", "/dev/zero"][..],
    ] {
        let o = arena(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("longer than 16 MiB"),
            "{args:?}: {}",
            text(&o)
        );
    }
}

/// A count past what its type holds is out of range like any other, said with the range
/// (clap's own message was "number too large to fit in target type").
#[test]
fn history_counts_past_their_type_say_their_range() {
    let big = "18446744073709551616";
    let o = arena(&["history", "list", "--last", big]);
    refused(&o, big, "--last <N>", "a whole number from 1 to 1000000");
    let o = arena(&["history", "list", "--last", "0"]);
    refused(&o, "0", "--last <N>", "a whole number from 1 to 1000000");
    let o = arena(&[
        "gate",
        "--baseline-history",
        "main",
        "--last",
        big,
        "--candidate",
        "x",
        "--max",
        "inputToPaint.p50=+10%",
    ]);
    refused(&o, big, "--last <N>", "a whole number from 1 to 10000");
}
