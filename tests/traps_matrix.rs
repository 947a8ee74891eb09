//! The shipped traps benchmark (`fixtures/matrix/traps.toml`) stays runnable and stays the
//! comparison the README quotes: both scenarios, each trap and the fix against stock, every
//! arm one the fixture's pilot file defines, enough repeats for the matrix's U test to
//! decide, and each case's command naming its scenario and arm. Running it is a benchmark
//! (32 pilot runs), not a test.

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
    // 3 against 3 can never reach p < 0.05 in the matrix's U test (docs/matrix.md).
    assert!(spec.repeats >= 4, "{} repeats", spec.repeats);
    assert_eq!(spec.stat, Stat::Median);
    assert!(matches!(spec.figure, FigureSpec::Pilot { .. }));
    assert_eq!(
        spec.workdir.as_deref().map(|w| w.canonicalize().unwrap()),
        Some(root.canonicalize().unwrap())
    );
}
