//! The person's browser as an arm axis: a 2x screen changes what the page paints, never
//! what crosses the wire, and a slow CPU slows the page's side of every loop.

use super::*;
use arena_pilot::scenario::BUILTIN_FIXTURE_PILOT;

/// The fixture's page throws, failing the setup, unless `#board` keeps its 960 CSS px and
/// has a backing store of `Math.ceil(devicePixelRatio)` times that.
const BACKING_STORE_CHECK: &str = "(() => { const b = document.getElementById('board'); \
     const k = Math.ceil(devicePixelRatio); \
     if (b.width !== 960 * k || b.getBoundingClientRect().width !== 960 || window.fixture.backingScale !== k) \
     throw new Error('backing store ' + b.width + ' at dpr ' + devicePixelRatio); return k; })()";

/// p50 of `f` over the warm answered loops of `run`, ms, and its n.
fn p50_of(run: &Run, f: impl Fn(&arena_run::Loop) -> Option<f64>) -> (f64, usize) {
    let v: Vec<f64> = run
        .loops
        .iter()
        .filter(|l| !l.cold && l.answered)
        .filter_map(f)
        .collect();
    let s = Summary::of(&v).unwrap_or_else(|| panic!("{}: no loops", run.meta.arm));
    (s.p50, v.len())
}

fn recv_to_draw(run: &Run) -> (f64, usize) {
    p50_of(run, |l| l.recv_to_draw)
}

/// From the draw that carried the answer to the animation frame that painted it: where a
/// larger backing store costs (the canvas's draw calls are recorded, and rastered for the
/// frame).
fn draw_to_paint(run: &Run) -> (f64, usize) {
    p50_of(run, |l| Some(l.t_paint? - l.t_draw?))
}

#[test]
fn dpr_2_paints_later_on_the_same_bytes_and_a_4x_slower_cpu_draws_later() {
    let _g = exclusive();
    let tmp = tempfile::tempdir().unwrap();
    let text = format!(
        "{BUILTIN_FIXTURE_PILOT}\n[[setup]]\neval = \"{BACKING_STORE_CHECK}\"\n\
         [arms.dpr1.browser]\ndpr = 1\n[arms.dpr2.browser]\ndpr = 2\n\
         [arms.cpu4.browser]\ndpr = 1\ncpu_throttle = 4\n"
    );
    let pilot = Pilot::parse("browser-arms.toml", &text).unwrap();
    // Server work off and a short tick: the arms differ only in the browser.
    let ov = || {
        let mut ov = base_overrides(20);
        ov.knobs = knobs(&[("los_work", "0"), ("tick_ms", "1")]);
        ov
    };
    let outs = run_arms(
        &pilot,
        vec![("dpr1", ov()), ("dpr2", ov()), ("cpu4", ov())],
        tmp.path(),
    );
    for o in &outs {
        let r = &o.run;
        let s = &r.meta.summary;
        assert_eq!(
            r.meta.status,
            RunStatus::Complete,
            "{:?}",
            r.meta.status_message
        );
        let ((r2d, n), (d2p, m)) = (recv_to_draw(r), draw_to_paint(r));
        eprintln!(
            "{}: {}; received {} B in {} frames, sent {} B; recvToDraw p50 {r2d:.2} ms (n = {n}), \
             draw to paint p50 {d2p:.2} ms (n = {m}); answered {} of {} loops",
            r.meta.arm,
            r.meta.browser.map(|b| b.label()).unwrap_or_default(),
            s.bytes_received,
            s.frames_received,
            s.bytes_sent,
            s.answered,
            s.loops
        );
        assert!(s.answered * 10 >= s.loops * 9, "{s:?}");
        // What the run folder keeps is what the page had.
        assert_eq!(Run::load(&o.dir).unwrap().meta.browser, r.meta.browser);
    }
    let [one, two, slow] = [&outs[0].run, &outs[1].run, &outs[2].run];
    let dpr = |r: &Run| r.meta.browser.map(|b| (b.dpr, b.cpu_throttle));
    assert_eq!(dpr(one), Some((1.0, 1.0)));
    assert_eq!(dpr(two), Some((2.0, 1.0)));
    assert_eq!(dpr(slow), Some((1.0, 4.0)));
    // The same clicks on the same board: the same bytes each way, whatever the screen.
    let bytes = |r: &Run| {
        let s = &r.meta.summary;
        (s.bytes_received, s.frames_received, s.bytes_sent)
    };
    assert_eq!(bytes(one), bytes(two));
    assert_eq!(bytes(one), bytes(slow));
    // Four times the pixels: the answer's frame comes later after its draw.
    let (d1, d2) = (draw_to_paint(one).0, draw_to_paint(two).0);
    assert!(
        d2 > d1,
        "draw to paint p50 at dpr 2 {d2:.2} ms, at 1 {d1:.2} ms"
    );
    // A 4x slower CPU: the page's own work on each reply (decode, draw) takes longer.
    let (r1, r4) = (recv_to_draw(one).0, recv_to_draw(slow).0);
    assert!(
        r4 > 1.5 * r1,
        "recvToDraw p50 at cpu 4x {r4:.2} ms, at 1x {r1:.2} ms"
    );
}
