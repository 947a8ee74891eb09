//! The quiet-socket rule on a target that streams on its own: a wait for the socket's quiet
//! that runs out is counted, warned about with its numbers, and the input that goes next
//! is marked `after_lapse` in loops.csv. A wait that heard nothing at all (a dropped
//! reply) is no lapse: nothing was in flight.

use super::*;

/// A pilot run of 4 clicks on the fixture with `knob`, through the binary: (run, output).
fn pilot(knob: &str, settle_ms: &str, dir: &Path) -> (Run, String) {
    let out = dir.join(format!("settle-{settle_ms}"));
    let o = Command::new(bin())
        .args(["pilot", "--clicks", "4", "--knob", knob])
        .args(["--settle", settle_ms, "--timeout", "600", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let text = format!("{}{err}", String::from_utf8_lossy(&o.stdout));
    assert!(o.status.success(), "{text}");
    (Run::load(&out).expect("loads"), text)
}

#[test]
fn waits_that_outlast_the_targets_frame_gap_are_counted_warned_and_mark_the_next_loop() {
    let _g = shared();
    let tmp = tempfile::tempdir().unwrap();
    // 300 ms of quiet never comes between repaints 250 ms apart (the setup's 200 ms does).
    let (run, text) = pilot("blink_ms=250", "300", tmp.path());
    let s = &run.meta.summary;
    let marked = run.loops.iter().filter(|l| l.after_lapse).count() as u64;
    assert!(
        s.quiet_lapses * 4 >= s.inputs_dispatched * 3,
        "{} lapses of {} inputs",
        s.quiet_lapses,
        s.inputs_dispatched
    );
    // Every lapse marks the input after it, but the last one, which no input follows.
    assert_eq!(s.after_lapse, marked);
    assert!(
        marked + 1 >= s.quiet_lapses && marked <= s.quiet_lapses,
        "{marked}"
    );
    let warned = format!(
        "{} of {} inputs' waits ended before the socket had been quiet for 300 ms",
        s.quiet_lapses, s.inputs_dispatched
    );
    assert!(text.contains(&warned), "{text}");
    assert!(text.contains(&format!("({marked} loops marked `after_lapse`")));
    // Every other reply dropped: those loops are unanswered, and their waits hear nothing
    // at all. Silence is no lapse.
    let (dropped, text) = pilot("drop_every=2", "100", tmp.path());
    let d = &dropped.meta.summary;
    assert!(d.unanswered >= 2, "{text}");
    assert_eq!((d.quiet_lapses, d.after_lapse), (0, 0), "{text}");
    assert!(!text.contains("quiet_lapses"), "{text}");
}
