//! The gate and the warnings on real runs: the built-in fixture driven by the real binary
//! in headless Chromium (`arena-perf pilot`), then `gate` and `compare` on the folders.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::compare_common::{arena, s};
use crate::support::machine::{exclusive, shared};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// One pilot run of `arm` (plus extra knobs) into `dir`: 20 clicks, 40 loops. A 400 ms
/// window: replies land within tens of ms, and a loop the board leaves unanswered (every
/// release on the deploy board) would otherwise spend 2 s of the run waiting for nothing.
fn record(dir: &Path, arm: &str, knobs: &[&str]) -> PathBuf {
    record_with(dir, arm, knobs, &["--clicks", "20", "--timeout", "400"])
}

/// One pilot run of `arm` with extra knobs and flags into `dir`.
fn record_with(dir: &Path, arm: &str, knobs: &[&str], flags: &[&str]) -> PathBuf {
    let mut args = vec!["pilot", "--arm", arm, "--out", s(dir), "--quiet"];
    args.extend(flags);
    for k in knobs {
        args.extend(["--knob", k]);
    }
    let o = arena(&args);
    assert_eq!(o.status.code(), Some(0), "pilot {arm}: {}", text(&o));
    dir.to_path_buf()
}

#[test]
fn fixture_delay_fails_the_gate_same_arm_never_does_and_deploy_looks_idle() {
    // The machine alone: like runs are recorded minutes apart, and on the fixture's
    // ~3 ms sendToRecv p50 a neighbour's load between them (+4 ms once) is a real change
    // the gate rightly fails, not a false alarm.
    let _g = exclusive();
    let root = std::env::temp_dir().join(format!("arena-compare-fixture-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();

    // Both arms alike but for delay_ms: the firing phase's line-of-sight work and eager
    // PNG encodes would drown a 40 ms step in CPU noise on a loaded machine.
    let quiet = ["los_work=0", "lazy_png=true"];
    // Interleaved, as `ab` records: stock, delay40, stock, delay40, then more stock.
    // The fixture's `delay40` arm is delay_ms=40 before every reply frame.
    let rec = |name: &str, arm: &str| record(&root.join(name), arm, &quiet);
    let mut stock = vec![rec("stock-0", "stock")];
    let mut slow = vec![rec("delay40-0", "delay40")];
    stock.push(rec("stock-1", "stock"));
    slow.push(rec("delay40-1", "delay40"));
    for i in 2..5 {
        stock.push(rec(&format!("stock-{i}"), "stock"));
    }
    let deploy = record(&root.join("deploy"), "stock", &["phase=deploy"]);

    let gate = |base: [&Path; 2], cand: [&Path; 2]| {
        arena(&[
            "gate",
            "--baseline",
            s(base[0]),
            s(base[1]),
            "--candidate",
            s(cand[0]),
            s(cand[1]),
            "--max",
            "sendToRecv.p50=+10%",
            // 40 loops a run cannot see +10 % (the gate says +100 % or so); what is
            // checked here is that a real step fails and like runs never do.
            "--on-unknown",
            "pass",
        ])
    };

    // delay_ms=0 against delay_ms=40, two runs a side: a real regression, caught.
    let o = gate([&stock[0], &stock[1]], [&slow[0], &slow[1]]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("FAIL: regression past the limit"),
        "{}",
        text(&o)
    );

    // Runs of the same arm: no false alarm in 10 comparisons of recorded run sets (two
    // runs against two others, every split of four of the five).
    let mut splits = Vec::new();
    for out in 0..5 {
        let four: Vec<usize> = (0..5).filter(|&i| i != out).collect();
        for (a, b) in [((0, 1), (2, 3)), ((0, 2), (1, 3)), ((0, 3), (1, 2))] {
            splits.push(([four[a.0], four[a.1]], [four[b.0], four[b.1]]));
        }
    }
    for (b, c) in splits.into_iter().take(10) {
        let o = gate([&stock[b[0]], &stock[b[1]]], [&stock[c[0]], &stock[c[1]]]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "stock runs {b:?} vs {c:?}: {}",
            text(&o)
        );
    }

    // The deploy phase is an idle board: warned next to its column.
    let o = arena(&[
        "compare",
        s(&stock[0]),
        s(&deploy),
        "--by",
        "run",
        "--metric",
        "inputToPaint",
        "--format",
        "markdown",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let md = text(&o);
    let header = md
        .lines()
        .find(|l| l.starts_with("|  |"))
        .unwrap_or_default();
    assert!(header.contains("stock, run 2 \u{26a0}"), "{md}");
    assert!(md.contains("looks idle: phase 'deploy'"), "{md}");

    let _ = std::fs::remove_dir_all(&root);
}

/// The gate's reason to exist, on real runs: clicks that turn into timeouts and a tail
/// that only the p99 sees both fail it; a like arm does not.
#[test]
fn timeouts_and_a_true_tail_fail_the_gate_and_a_like_arm_passes() {
    let _g = shared();
    let root = std::env::temp_dir().join(format!("arena-gate-fixture-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    // 60 clicks, 120 loops a run, 240 a side: a p99 has two loops above it. A 400 ms
    // window keeps a dropped reply from costing 2 s; every run has it (the window is part
    // of what a loop is, and the gate refuses runs that differ in it).
    // Seed 3's clicks all land where the fixture's answer changes the pixels under the
    // pointer; seed 1 (the pilot's) has one press a run whose answer is drawn elsewhere,
    // an unanswered loop that would sit right above a p99 of 240 loops.
    let flags = ["--clicks", "60", "--timeout", "400", "--seed", "3"];
    let rec = |name: &str, knobs: &[&str]| {
        let mut k = vec!["los_work=0", "lazy_png=true"];
        k.extend(knobs);
        record_with(&root.join(name), "stock", &k, &flags)
    };
    let drop = ["drop_every=5"];
    // Every 20th reply 300 ms late: a tail past what a busy machine does to a stock run's
    // p99 on its own (with one core taken by another process: 56 ms, and one run's p99
    // bootstrapped against the other's; a 150 ms tail was not told from that).
    let tail = ["tail_every=20", "tail_ms=300"];
    // Interleaved, as `ab` records, the like arm too: a machine that drifts over the
    // minutes this takes (a debug build's fixture on 2 shared cores does, by 20 % on a
    // p50) then drifts under both sides alike, where stock runs recorded last would carry
    // the drift as a regression of their own.
    let (mut stock, mut like, mut dropped, mut tailed) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..2 {
        stock.push(rec(&format!("stock-{i}"), &[]));
        dropped.push(rec(&format!("drop-{i}"), &drop));
        like.push(rec(&format!("like-{i}"), &[]));
        tailed.push(rec(&format!("tail-{i}"), &tail));
    }
    let gate = |cand: &[PathBuf], limits: &[&str]| {
        let mut args = vec![
            "gate",
            "--baseline",
            s(&stock[0]),
            s(&stock[1]),
            "--candidate",
        ];
        args.extend(cand.iter().map(|p| s(p)));
        for l in limits {
            args.extend(["--max", l]);
        }
        args.extend(["--on-unknown", "pass"]);
        arena(&args)
    };
    let (p50, p99) = ("inputToPixels.p50=+10%", "inputToPixels.p99=+20%");

    // 240 loops a side see +20 % on a p99 only just (the gate printed +16 % as what it
    // detects, on a quiet machine); a loaded one can make it refuse the limit as
    // underpowered, so these checks are decided either way: what is tested is the verdict.
    let o = gate(&like, &[p50, p99]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "stock against stock: {}",
        text(&o)
    );

    // A fifth of the loops unanswered is the unanswered check's to catch. Censored at the
    // window they also lift the p50 (it becomes about the answered loops' p62), so the p50
    // check may fail beside it: both are right, and which way it goes depends on the run.
    let o = gate(&dropped, &[p50]);
    assert_eq!(o.status.code(), Some(1), "drop_every=5: {}", text(&o));
    let failed = text(&o)
        .lines()
        .find(|l| l.starts_with("arena-perf gate:"))
        .unwrap_or_default()
        .to_string();
    assert!(failed.contains("unanswered share"), "{}", text(&o));

    let o = gate(&tailed, &[p99]);
    assert_eq!(o.status.code(), Some(1), "tail, p99: {}", text(&o));
    assert!(
        text(&o).contains("checks failed: inputToPixels p99"),
        "{}",
        text(&o)
    );
    let o = gate(&tailed, &[p50]);
    assert_eq!(o.status.code(), Some(0), "tail, p50 alone: {}", text(&o));

    let _ = std::fs::remove_dir_all(&root);
}

/// `ab --until-decided` on the built-in fixture: rounds go on after the first look until
/// the budget, each look says where the quantiles stand, the final verdict is drawn at
/// alpha over the looks, and a time budget spent before the first look keeps its runs.
#[test]
fn until_decided_looks_after_each_round_and_stops_at_its_budget() {
    let _g = shared();
    let d = crate::compare_common::Scratch::new("until-decided");
    let pilot = crate::compare_common::cheap_pilot(&d.0);
    let ab = |out: &str, budget: &str| {
        arena(&[
            "ab",
            "--pilot",
            s(&pilot),
            "--arms",
            "stock,delay40",
            "--rounds",
            "2",
            "--clicks",
            "8",
            "--knob",
            "los_work=0",
            "--until-decided",
            "--budget",
            budget,
            "--out",
            s(&d.path(out)),
            "--format",
            "json",
        ])
    };
    // 8 loops a run: the p99 is near each run's maximum and never decided, so the rounds
    // run to the budget: looks after rounds 2 and 3, each at 0.05 / 2.
    let o = ab("rounds", "3");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    for want in [
        "after round 2: delay40 p50 ",
        "after round 3: delay40 p50 ",
        "(each look at \u{3b1} 0.0250, 2 planned)",
        "rounds stopped: the budget of 3 rounds is spent",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
    assert!(!err.contains("after round 1:"), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["runs"].as_array().unwrap().len(), 6);
    assert_eq!(doc["verdict"]["alpha"], 0.025);
    let p99 = &doc["verdict"]["arms"][0]["quantiles"]["p99"];
    assert_eq!(p99["verdict"], "unknown", "{p99}");
    // A second of budget is spent before the first look: the first round's runs are kept.
    let o = ab("time", "1s");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("rounds stopped: the budget of 1s is spent")
            && err.contains("before the first look (after 2 rounds)"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["runs"].as_array().unwrap().len(), 2);
}
