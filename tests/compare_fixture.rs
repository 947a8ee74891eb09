//! The gate and the warnings on real runs: the built-in fixture driven by the real binary
//! in headless Chromium (`arena-perf pilot`), then `gate` and `compare` on the folders.

use std::path::{Path, PathBuf};
use std::process::Output;

mod compare_common;
use compare_common::{arena, s};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// One pilot run of `arm` (plus extra knobs) into `dir`: 20 clicks, 40 loops.
fn record(dir: &Path, arm: &str, knobs: &[&str]) -> PathBuf {
    let mut args = vec![
        "pilot",
        "--arm",
        arm,
        "--out",
        s(dir),
        "--clicks",
        "20",
        "--quiet",
    ];
    for k in knobs {
        args.extend(["--knob", k]);
    }
    let o = arena(&args);
    assert_eq!(o.status.code(), Some(0), "pilot {arm}: {}", text(&o));
    dir.to_path_buf()
}

#[test]
fn fixture_delay_fails_the_gate_same_arm_never_does_and_deploy_looks_idle() {
    let root = std::env::temp_dir().join(format!("arena-compare-fixture-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();

    // Both arms alike but for delay_ms: the fixture runs inside this debug build, where
    // the firing phase's line-of-sight work and eager PNG encodes cost far more than in
    // release and would drown a 40 ms step in CPU noise on a loaded machine.
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
        ])
    };

    // delay_ms=0 against delay_ms=40, two runs a side: a real regression, caught.
    let o = gate([&stock[0], &stock[1]], [&slow[0], &slow[1]]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("FAIL: significant regression past the limit"),
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
