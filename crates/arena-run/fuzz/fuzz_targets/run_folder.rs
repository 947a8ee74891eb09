//! Any bytes as a run folder: split at the first two NUL bytes into `run.json`,
//! `loops.csv` and `events.jsonl`, written to a scratch folder and loaded both ways.
//! Loading must return a run or a bad-input error (exit 2), never panic; and a run it
//! accepts must hold only finite values and survive a write and a second load unchanged,
//! so whatever the loader lets through is something the tool itself could have written,
//! and its summary's counts agree with its rows.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use arena_report::{Exit, ExitKind};
use arena_run::{Metric, Outcome, Run, EVENTS_JSONL, LOOPS_CSV, RUN_JSON};
use libfuzzer_sys::fuzz_target;

/// One scratch folder per fuzzing process (files are overwritten each input), so an
/// input costs three writes, not a directory.
fn scratch() -> &'static (PathBuf, PathBuf) {
    static DIR: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("arena-run-fuzz-{}", std::process::id()));
        let (input, again) = (base.join("in"), base.join("again"));
        std::fs::create_dir_all(&input).unwrap();
        (input, again)
    })
}

fn bad_input(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|e| e.downcast_ref::<Exit>())
        .any(|e| e.kind == ExitKind::BadInput)
}

/// A run the loader accepts agrees with itself: its summary counts what its rows hold
/// (the loader's cross-checks, which a fuzzed folder must not get past).
fn check_counts(run: &Run) {
    let s = &run.meta.summary;
    let count = |o: Outcome| run.loops.iter().filter(|l| l.outcome == o).count() as u64;
    assert_eq!(s.loops, run.loops.len() as u64);
    assert_eq!(s.answered, count(Outcome::Answered));
    assert_eq!(s.unanswered, count(Outcome::Unanswered));
    if s.records > 0 {
        let recv = run.events.iter().filter(|e| e.kind == "ws_recv").count() as u64;
        // Records drained twice are kept as lines and counted once: never fewer lines.
        assert!(recv >= s.frames_received, "{recv} receipts < {}", s.frames_received);
    }
}

fn check_accepted(run: &Run) {
    assert!(!run.loops.is_empty());
    check_counts(run);
    for l in &run.loops {
        assert!(l.t_input.is_finite());
        for m in Metric::ALL {
            assert!(m.of(l).is_none_or(f64::is_finite));
        }
    }
    for e in &run.events {
        assert!(e.t_ms.is_finite());
    }
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0);
    let (dir, again) = scratch();
    for name in [RUN_JSON, LOOPS_CSV, EVENTS_JSONL] {
        std::fs::write(dir.join(name), parts.next().unwrap_or_default()).unwrap();
    }
    let full = Run::load(dir);
    let light = Run::load_loops_only(dir);
    match (&full, &light) {
        (Ok(run), Ok(lr)) => {
            check_accepted(run);
            assert_eq!((&run.meta, &run.loops), (&lr.meta, &lr.loops));
            run.write(again).unwrap();
            let back = Run::load(again).expect("a run it accepted, rewritten, must load");
            assert_eq!(&back, run);
        }
        (Err(a), Err(b)) => {
            assert!(bad_input(a), "not a bad-input error: {a:#}");
            assert_eq!(format!("{a:#}"), format!("{b:#}"));
        }
        _ => panic!(
            "the loaders disagree: {:?} vs {:?}",
            full.is_ok(),
            light.is_ok()
        ),
    }
});
