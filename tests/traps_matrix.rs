//! The shipped traps benchmark (`fixtures/matrix/traps.toml`) stays runnable and stays the
//! comparison the README quotes: both scenarios, each trap and the fix against stock, every
//! arm one the fixture's pilot file defines, enough repeats for the spread between runs to
//! be measured, and each case's command naming its scenario and arm. Running it is a
//! benchmark (32 pilot runs), not a test.

use std::path::Path;

use arena_matrix::spec::{FigureSpec, Stat};

#[test]
fn the_traps_matrix_runs_every_trap_against_stock_on_both_scenarios() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = arena_matrix::load(&root.join("fixtures/matrix/traps.toml")).expect("loads");
    let pilot = arena_pilot::Pilot::load(&root.join("pilots/fixture.toml")).expect("loads");
    let arms: Vec<&str> = spec.arms.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(arms, ["stock", "lazy-png", "png6", "tick8"]);
    assert_eq!(spec.arms[spec.baseline].name, "stock");
    for a in &arms {
        assert!(
            pilot.arms.contains_key(*a),
            "{a} is no arm of pilots/fixture.toml"
        );
    }
    let cases: Vec<&str> = spec.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(cases, ["idle", "played"]);
    for c in &spec.cases {
        arena_fixture::Scenario::parse(&c.name).expect("a fixture scenario");
        assert!(
            c.command.contains(&format!("--scenario {}", c.name))
                && c.command.contains("--arm {arm}")
                && c.command.contains("--out {run_dir}/"),
            "{}",
            c.command
        );
        assert_eq!(c.arms.len(), arms.len(), "{} runs every arm", c.name);
    }
    // The cells are decided on their runs' loops, with the spread between runs measured
    // from the runs (docs/matrix.md): 4 a cell, 3 degrees of freedom a side.
    assert!(spec.repeats >= 4, "{} repeats", spec.repeats);
    assert_eq!(spec.stat, Stat::Median);
    // An idle release is never answered: a p90 of all loops would be the window's.
    assert!(
        matches!(&spec.figure, FigureSpec::Pilot { event: Some(e), .. } if e == "mousedown"),
        "{:?}",
        spec.figure
    );
    assert_eq!(
        spec.workdir.as_deref().map(|w| w.canonicalize().unwrap()),
        Some(root.canonicalize().unwrap())
    );
}

/// A pilot cell of a matrix is `compare`'s change on the same runs: the committed pilot
/// runs of `fixtures/runs` copied in as each run's folder, through the binary, the cell's
/// change at the p90 against `compare --format json`'s on those folders. The two differ
/// only in their families: the matrix's one compared cell, compare's three quantiles, so
/// compare's p is three times the matrix's (Bonferroni), capped at 1.
#[test]
fn a_pilot_cell_is_compares_change_on_the_same_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("m.toml");
    std::fs::write(
        &file,
        format!(
            r#"
repeats = 2
baseline = "stock"
workdir = "{}"
[figure]
kind = "pilot"
metric = "p90"
[[arm]]
name = "stock"
[[arm]]
name = "lazy-png"
[[case]]
name = "recorded"
command = "cp -r fixtures/runs/{{arm}}-{{repeat}} {{run_dir}}/pilot"
"#,
            root.display()
        ),
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_arena-perf");
    let json = |args: &[&str]| -> serde_json::Value {
        let o = std::process::Command::new(bin).args(args).output().unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let out = tmp.path().join("out");
    let m = json(&[
        "matrix",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let cell = m["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["arm"] == "lazy-png")
        .unwrap();
    assert_eq!(
        (cell["by_loops"].as_bool(), m["family"].as_u64()),
        (Some(true), Some(1)),
        "{cell}"
    );
    let runs: Vec<String> = ["stock-1", "stock-2", "lazy-png-1", "lazy-png-2"]
        .iter()
        .map(|r| root.join("fixtures/runs").join(r).display().to_string())
        .collect();
    let mut args = vec!["compare", "--format", "json"];
    args.extend(runs.iter().map(String::as_str));
    let c = json(&args);
    let p90 = &c["metrics"]["inputToPaint"]["changes"]["lazy-png"]["p90"];
    let (ours, theirs) = (&cell["change"], p90);
    assert_eq!(ours["delta"], theirs["delta"], "{ours} against {theirs}");
    assert_eq!(
        ours["delta_pct"], theirs["delta_pct"],
        "{ours} against {theirs}"
    );
    let p = ours["p"].as_f64().unwrap();
    let want = (3.0 * p).min(1.0);
    assert!(
        (theirs["p"].as_f64().unwrap() - want).abs() < 1e-9,
        "{ours} against {theirs}"
    );
}
