//! `--split reply-size` on the real fixture: the `phase` knob decides what a click costs
//! in bytes, so the buckets must hold exactly what each phase's clicks drew.
//!
//! What the fixture sends (crates/arena-fixture/src/session.rs, `press`/`release`, and
//! its unit test `firing_click_repaints_an_arc_and_deploy_moves_a_cursor`): a firing press
//! repaints an arc and ships its new composites (three or more tile PNGs, over 4 KB,
//! unless the client already holds them); a firing release ships the marker tile's
//! composite (1-4 KB); a deploy click only moves a cursor outline over cached tiles (no
//! image, about 100 B).

use super::*;
use arena_compare::{breakdown, By, CompareOptions, Split};
use arena_report::Format;

fn warm_answered(r: &Run, event: &str) -> u64 {
    r.loops
        .iter()
        .filter(|l| !l.cold && l.answered && l.event == event)
        .count() as u64
}

#[test]
fn reply_size_split_separates_firing_replies_from_deploy_ones() {
    let _g = shared();
    let pilot = Pilot::builtin().expect("built-in pilot");
    let tmp = tempfile::tempdir().unwrap();
    // Seed 1's first ten clicks land on ten different tiles, so no click finds its images
    // already on the client (a repeated shot ships under 1 KB whatever the phase).
    let phase = |p: &str| Overrides {
        knobs: knobs(&[("phase", p)]),
        seed: Some(1),
        ..base_overrides(10)
    };
    let outs = run_arms(
        &pilot,
        vec![("firing", phase("firing")), ("deploy", phase("deploy"))],
        tmp.path(),
    );
    let runs: Vec<Run> = outs
        .iter()
        .map(|o| Run::load(&o.dir).expect("run folder loads"))
        .collect();
    let (firing, deploy) = (&runs[0], &runs[1]);
    assert_eq!(
        firing.meta.knobs.get("phase").map(String::as_str),
        Some("firing")
    );
    assert_eq!(
        deploy.meta.knobs.get("phase").map(String::as_str),
        Some("deploy")
    );

    let split = Split::parse("reply-size=1KB,4KB").unwrap();
    let opts = CompareOptions {
        by: By::Arm,
        splits: vec![split.clone()],
        ..CompareOptions::default()
    };
    let b = breakdown(&runs, &split, &opts).expect("breakdown");
    let md = b.table.render(Format::Markdown);
    println!("{md}");
    let cell = |row: &str, col: &str| {
        b.cells
            .iter()
            .find(|c| c.row == row && c.column == col)
            .unwrap_or_else(|| panic!("{row} / {col}\n{md}"))
    };
    let loops = |r: &Run| r.loops.len() as u64;

    // Deploy: every loop, answered or not, drew under 1 KB.
    let d = cell("<1KB", "deploy");
    assert_eq!(d.loops, loops(deploy), "{md}");
    assert_eq!(d.unanswered, deploy.meta.summary.unanswered, "{md}");
    assert_eq!(
        cell("1KB-4KB", "deploy").loops + cell(">=4KB", "deploy").loops,
        0,
        "{md}"
    );

    // Firing: nothing under 1 KB, and both of its populations present: releases in the
    // middle, presses (most of them: a shot whose composites the client already holds
    // ships less) at the top, every top answer counted as a big one, no middle one.
    assert_eq!(cell("<1KB", "firing").loops, 0, "{md}");
    let (mid, top) = (cell("1KB-4KB", "firing"), cell(">=4KB", "firing"));
    assert_eq!(mid.loops + top.loops, loops(firing), "{md}");
    // n counts a warm unanswered loop too, censored at the window.
    let unanswered = firing
        .loops
        .iter()
        .filter(|l| !l.cold && l.outcome == arena_run::Outcome::Unanswered)
        .count() as u64;
    let warm = warm_answered(firing, "mousedown") + warm_answered(firing, "mouseup");
    assert_eq!(mid.n + top.n, warm + unanswered, "{md}");
    assert!(mid.n >= warm_answered(firing, "mouseup"), "{md}");
    assert!(top.n * 2 >= warm_answered(firing, "mousedown"), "{md}");
    assert_eq!(
        (top.replies_over, mid.replies_over),
        (top.answered, 0),
        "{md}"
    );

    // The top bucket's change is against the baseline's same (here empty) bucket: none.
    assert!(
        md.contains("| >=4KB | deploy | 0 | 0 | - | - | - |"),
        "{md}"
    );
}
