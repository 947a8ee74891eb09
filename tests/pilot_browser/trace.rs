//! `--trace`: Chromium's trace of the clicks with the run's loops merged in, aligned to
//! the trace clock, against the real fixture.

use super::*;
use arena_pilot::trace::{
    loop_end, FLOW_CAT, FRAME_DISPLAYED, LOOP_CAT, PIPELINE, PRESENTED_CAT, SOURCE_LINKED,
};
use arena_run::Outcome as LoopOutcome;
use serde_json::Value;

fn s<'a>(e: &'a Value, k: &str) -> &'a str {
    e.get(k).and_then(Value::as_str).unwrap_or("")
}

fn f(e: &Value, k: &str) -> f64 {
    e.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN)
}

fn i(e: &Value, k: &str) -> i64 {
    e.get(k).and_then(Value::as_i64).unwrap_or(-1)
}

/// Headless Chromium's frame interval (60 Hz begin frames), ms.
const FRAME_MS: f64 = 1000.0 / 60.0;

#[test]
fn a_traced_run_has_one_aligned_slice_per_answered_loop_around_its_input() {
    let _g = exclusive();
    let pilot = Pilot::builtin().expect("built-in pilot");
    let tmp = tempfile::tempdir().unwrap();
    let ov = Overrides {
        trace: true,
        ..base_overrides(12)
    };
    let outs = run_arms(&pilot, vec![("stock", ov)], tmp.path());
    let o = &outs[0];
    assert_eq!(o.run.meta.status, RunStatus::Complete);
    let run = Run::load(&o.dir).expect("the traced run folder loads");
    let info = run.meta.trace.clone().expect("run.json records the trace");
    assert!(!info.data_loss, "{info:?}");

    // trace.json is a trace-event document.
    let bytes = std::fs::read(o.dir.join(&info.file)).expect("trace.json");
    assert_eq!(bytes.len() as u64, info.overhead.file_bytes);
    let events = arena_browser::parse_trace(&bytes).expect("trace.json parses");
    assert!(events.len() as u64 > info.events, "{} events", events.len());

    // The documented bound: the marks agree to within 0.1 ms (the page clock's coarsest
    // step), and so does each input's own timestamp in the renderer.
    let err = info.alignment_error_ms;
    assert_eq!(info.alignment_marks, 16, "{info:?}");
    assert!(err < 0.1, "alignment error {err} ms");
    assert_eq!(info.inputs_checked, run.loops.len() as u64, "{info:?}");
    let input_err = info.input_error_ms.expect("inputs checked");
    assert!(input_err < 0.1 + err, "input error {input_err} ms");

    // One loop slice per answered loop, each starting at t_input and lasting to its answer.
    let answered: Vec<&arena_run::Loop> = run
        .loops
        .iter()
        .filter(|l| l.outcome == LoopOutcome::Answered)
        .collect();
    assert!(answered.len() >= 12, "{} answered", answered.len());
    let mut slices: Vec<&Value> = events
        .iter()
        .filter(|e| s(e, "cat") == LOOP_CAT && s(e, "ph") == "X")
        .collect();
    slices.sort_by(|a, b| f(a, "ts").total_cmp(&f(b, "ts")));
    assert_eq!(slices.len(), answered.len());
    assert_eq!(info.loop_slices, answered.len() as u64);
    for (sl, l) in slices.iter().zip(&answered) {
        assert_eq!(sl["args"]["index"].as_u64(), Some(l.index), "{sl}");
        let start = f(sl, "ts") / 1e3 - info.offset_ms;
        assert!((start - l.t_input).abs() <= err + 1e-3, "{sl} vs {l:?}");
        let want = l.input_to_pixels.or(l.input_to_paint).unwrap();
        assert!(
            (f(sl, "dur") / 1e3 - want).abs() <= err + 1e-3,
            "{sl} vs {l:?}"
        );
        assert_eq!(loop_end(l).map(|e| e - l.t_input), Some(want));
    }

    // The page's renderer main thread: where the alignment marks were made.
    let mark = events
        .iter()
        .find(|e| s(e, "name").starts_with(arena_browser::ALIGN_MARK))
        .expect("alignment marks in trace.json");
    let (rpid, rtid) = (i(mark, "pid"), i(mark, "tid"));
    let dispatch: Vec<&Value> = events
        .iter()
        .filter(|e| s(e, "name") == "EventDispatch" && i(e, "pid") == rpid && i(e, "tid") == rtid)
        .filter(|e| {
            matches!(
                e.pointer("/args/data/type").and_then(Value::as_str),
                Some("mousedown" | "mouseup")
            )
        })
        .collect();
    // Every trusted press and release was dispatched once, and each answered one lies
    // inside its loop's slice.
    assert_eq!(dispatch.len(), run.loops.len(), "dispatches vs loops");
    for (sl, l) in slices.iter().zip(&answered) {
        let (a, b) = (f(sl, "ts"), f(sl, "ts") + f(sl, "dur"));
        let inside: Vec<&&Value> = dispatch
            .iter()
            .filter(|d| d.pointer("/args/data/type").and_then(Value::as_str) == Some(&l.event))
            .filter(|d| f(d, "ts") >= a && f(d, "ts") + f(d, "dur") <= b)
            .collect();
        assert_eq!(inside.len(), 1, "loop {}: {sl}", l.index);
    }

    // Flows: from each slice to its input's dispatch and to its animation frame.
    assert_eq!(info.input_flows, answered.len() as u64, "{info:?}");
    assert_eq!(info.frame_flows, answered.len() as u64, "{info:?}");
    let ends: Vec<&Value> = events
        .iter()
        .filter(|e| s(e, "cat") == FLOW_CAT && s(e, "ph") == "f")
        .collect();
    assert_eq!(ends.len(), 2 * answered.len());
    for e in ends.iter().filter(|e| s(e, "name") == "input") {
        let t = f(e, "ts");
        assert!(
            dispatch
                .iter()
                .any(|d| f(d, "ts") <= t && t <= f(d, "ts") + f(d, "dur")),
            "input flow end {e} lands on no dispatch"
        );
    }

    // Presentation: every answer is placed at a presentation of the display, never before
    // the answer and within three frame intervals of it, and the page's renderer
    // submitted a compositor frame in between (the frame that carried the answer);
    // run.json holds what the `presented` slices show.
    let p = info
        .presented
        .as_ref()
        .expect("run.json records the presentations");
    assert_eq!(p.source.as_deref(), Some(SOURCE_LINKED), "{p:?}");
    assert_eq!(
        (p.matched, p.unmatched),
        (answered.len() as u64, 0),
        "{p:?}"
    );
    assert!(!run
        .meta
        .warnings
        .iter()
        .any(|w| w.code == "trace_no_presentation"));
    let mut presented: Vec<&Value> = events
        .iter()
        .filter(|e| s(e, "cat") == PRESENTED_CAT && s(e, "ph") == "X")
        .collect();
    presented.sort_by(|a, b| f(a, "ts").total_cmp(&f(b, "ts")));
    assert_eq!(presented.len(), answered.len());
    let displayed: Vec<f64> = events
        .iter()
        .filter(|e| s(e, "name") == FRAME_DISPLAYED)
        .map(|e| f(e, "ts"))
        .collect();
    let submitted: Vec<f64> = events
        .iter()
        .filter(|e| s(e, "name") == PIPELINE && i(e, "pid") == rpid)
        .filter(|e| {
            e.pointer("/args/chrome_graphics_pipeline/step")
                .and_then(Value::as_str)
                == Some("STEP_SUBMIT_COMPOSITOR_FRAME")
        })
        .map(|e| f(e, "ts"))
        .collect();
    let mut gaps = Vec::new();
    for (sl, l) in presented.iter().zip(&answered) {
        assert_eq!(sl["args"]["loop"].as_u64(), Some(l.index), "{sl}");
        let start = f(sl, "ts") / 1e3 - info.offset_ms;
        assert!(
            (start - loop_end(l).unwrap()).abs() <= err + 1e-3,
            "{sl} vs {l:?}"
        );
        let gap = f(sl, "dur") / 1e3;
        assert!(
            (0.0..3.0 * FRAME_MS).contains(&gap),
            "loop {}: {gap} ms",
            l.index
        );
        let (a, b) = (f(sl, "ts"), f(sl, "ts") + f(sl, "dur"));
        assert!(
            displayed.iter().any(|t| (t - b).abs() < 0.01),
            "loop {}: {sl} ends at no {FRAME_DISPLAYED}",
            l.index
        );
        assert!(
            submitted.iter().any(|t| a <= *t && *t <= b),
            "loop {}: the page submitted no frame inside {sl}",
            l.index
        );
        gaps.push(gap);
    }
    let g = p.answer_to_presented_ms.expect("the gaps' summary");
    let want = Summary::of(&gaps).unwrap();
    assert_eq!(g.n, p.matched);
    for (got, want) in [(g.p50, want.p50), (g.p90, want.p90), (g.max, want.max)] {
        assert!((got - want).abs() < 1e-3, "{g:?} vs the slices' {want:?}");
    }
}
