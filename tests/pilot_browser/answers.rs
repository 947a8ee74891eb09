//! How loops end, against servers and pages that are not the fixture's own pairing: a
//! server that answers only presses, blink frames that are not answers, a socket in a
//! Worker, and oracles that cannot work on the target.

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use super::*;
use arena_run::Outcome as LoopOutcome;

#[path = "../../crates/arena-browser/tests/support/server.rs"]
pub(crate) mod server;

/// A canvas that paints a square at the point each reply names; presses are sent as
/// `[1, x, y]`, releases as `[2, x, y]` (u16 big-endian), to the press-only server with the
/// delay given in the page's `d` parameter.
const PRESS_PAGE: &str = r#"<!doctype html><html><body style="margin:0">
<canvas id="c" width="400" height="300"></canvas>
<script>
const c = document.getElementById('c'), ctx = c.getContext('2d');
ctx.fillStyle = '#202830'; ctx.fillRect(0, 0, 400, 300);
const d = new URLSearchParams(location.search).get('d') || '0';
const ws = new WebSocket('{{PRESS}}' + d); ws.binaryType = 'arraybuffer';
ws.onopen = () => { window.ready = true; };
let n = 0;
function msg(kind, e) {
  const r = c.getBoundingClientRect(), b = new DataView(new ArrayBuffer(5));
  b.setUint8(0, kind); b.setUint16(1, e.clientX - r.left); b.setUint16(3, e.clientY - r.top);
  ws.send(b.buffer);
}
c.addEventListener('mousedown', (e) => msg(1, e));
c.addEventListener('mouseup', (e) => msg(2, e));
ws.onmessage = (m) => {
  const v = new DataView(m.data); n++;
  ctx.fillStyle = n % 2 ? '#e04040' : '#40e040';
  ctx.fillRect(v.getUint16(1) - 12, v.getUint16(3) - 12, 24, 24);
};
</script></body></html>"#;

/// The same protocol on a WebGL canvas, which the pixels oracle cannot read without
/// preserveDrawingBuffer.
const WEBGL_PAGE: &str = r#"<!doctype html><html><body style="margin:0">
<canvas id="c" width="400" height="300"></canvas>
<script>
const c = document.getElementById('c'), gl = c.getContext('webgl');
if (gl) { gl.clearColor(0.1, 0.2, 0.3, 1); gl.clear(gl.COLOR_BUFFER_BIT); }
const ws = new WebSocket('{{PRESS}}5'); ws.binaryType = 'arraybuffer';
ws.onopen = () => { window.ready = true; };
c.addEventListener('mousedown', () => ws.send(new Uint8Array([1, 0, 0, 0, 0]).buffer));
</script></body></html>"#;

const PRESS_PILOT: &str = r##"
[target]
canvas = "#c"
idle_reply_bytes = 1

[[setup]]
eval = "new Promise((ok) => { const t = setInterval(() => { if (window.ready) { clearInterval(t); ok(true); } }, 10); })"

[clicks]
region = [0.1, 0.1, 0.9, 0.9]
count = 30
warmup = 1

[pacing]
interval_ms = 10
timeout_ms = 300
settle_ms = 30

[classifier]
input = [{ first_byte = [1, 2] }]
"##;

fn press_pilot(extra: &str) -> Pilot {
    Pilot::parse("press.toml", &format!("{PRESS_PILOT}{extra}")).expect("pilot")
}

/// Runs one arm against the test server's page; `Err` is run_arm's own error.
fn run_page(pilot: &Pilot, url: String, clicks: u64) -> anyhow::Result<Outcome> {
    rt().block_on(async {
        let srv = server::TestServer::start().await?;
        srv.add("/press.html", "text/html", PRESS_PAGE);
        srv.add("/webgl.html", "text/html", WEBGL_PAGE);
        let browser = BrowserOptions::default().launch().await?;
        let pids = browser.pids();
        let tmp = tempfile::tempdir()?;
        let ov = Overrides {
            url: Some(srv.url(&url)),
            clicks: Some(clicks),
            ..Overrides::default()
        };
        let plan = Plan::new(pilot, "press".into(), Arm::default(), &ov)?;
        let out = run_arm(
            &browser,
            RunRequest {
                plan: &plan,
                out: OutDir::Exactly(tmp.path().join("run")),
                progress: &silent,
                cancel: &Cancel::new(),
            },
        )
        .await;
        browser.close().await?;
        assert_eq!(alive(&pids), Vec::<i32>::new(), "Chromium processes left");
        let replies = srv.press_replies.load(Ordering::SeqCst);
        out.inspect(|o| {
            eprintln!("{url}: the server sent {replies} replies");
            assert!(
                o.run.meta.summary.answered <= replies,
                "more answered loops than replies sent"
            );
        })
    })
}

fn by_event<'a>(r: &'a Run, ev: &str) -> Vec<&'a arena_run::Loop> {
    r.loops.iter().filter(|l| l.event == ev).collect()
}

#[test]
fn a_server_that_answers_presses_only_leaves_every_release_unanswered() {
    let _g = shared();
    let pilot = press_pilot("");
    let mut p50s = Vec::new();
    for d in [25.0, 60.0] {
        let o = run_page(&pilot, format!("/press.html?d={d}"), 30).expect("run");
        let r = &o.run;
        assert_eq!(r.meta.status, RunStatus::Complete);
        assert_eq!(r.meta.answer.as_ref().unwrap().oracle, "pixels");
        let (down, up) = (by_event(r, "mousedown"), by_event(r, "mouseup"));
        assert_eq!((down.len(), up.len()), (30, 30));
        assert!(down.iter().all(|l| l.outcome == LoopOutcome::Answered));
        assert!(
            up.iter().all(|l| l.outcome == LoopOutcome::Unanswered),
            "a release borrowed an answer: {:?}",
            up.iter().map(|l| l.outcome).collect::<Vec<_>>()
        );
        let s = &r.meta.summary;
        assert_eq!((s.answered, s.unanswered, s.claimed), (30, 30, 0));
        // No receipt closes two loops.
        let recvs: HashSet<u64> = down.iter().map(|l| l.t_recv.unwrap().to_bits()).collect();
        assert_eq!(recvs.len(), 30);
        assert!(r.meta.warnings.iter().any(|w| w.code == "unanswered"));
        assert_invariant(r);
        let v: Vec<f64> = down
            .iter()
            .filter(|l| !l.cold)
            .filter_map(|l| l.send_to_recv)
            .collect();
        let p = Summary::of(&v).unwrap().p50;
        eprintln!(
            "press-only server, D = {d} ms: mousedown sendToRecv p50 {p:.2} ms (n = {})",
            v.len()
        );
        // The server's timer and a loaded machine can only add to D; the constant part
        // cancels in the difference below, which is what proves the reply closed the loop.
        assert!(
            p >= d - 0.5,
            "sendToRecv p50 {p:.2} ms, below the server's {d} ms"
        );
        p50s.push(p);
    }
    let moved = p50s[1] - p50s[0];
    assert!(
        (moved - 35.0).abs() <= 3.0,
        "sendToRecv p50 moved {moved:.2} ms from D = 25 to 60 ms, want 35 +- 3"
    );
}

#[test]
fn a_release_sent_back_to_back_is_claimed_not_answered_twice() {
    let _g = shared();
    let pilot = press_pilot("[answer]\noracle = \"reply\"\n");
    let mut pilot = pilot;
    pilot.clicks.hold = Some(arena_pilot::scenario::Hold::Fixed(0));
    let o = run_page(&pilot, "/press.html?d=25".into(), 15).expect("run");
    let s = &o.run.meta.summary;
    assert_eq!(o.run.meta.answer.as_ref().unwrap().oracle, "reply");
    assert_eq!(
        (s.answered, s.claimed, s.unanswered),
        (15, 15, 0),
        "{:?}",
        o.run.meta.warnings
    );
    assert!(by_event(&o.run, "mouseup")
        .iter()
        .all(|l| l.outcome == LoopOutcome::Claimed && l.t_recv.is_none()));
    assert!(o.run.meta.warnings.iter().any(|w| w.code == "claimed"));
}

#[test]
fn an_oracle_that_cannot_work_is_an_error_before_measuring_or_a_named_fallback() {
    let _g = shared();
    let kind = |e: &anyhow::Error| {
        e.chain()
            .find_map(|c| c.downcast_ref::<arena_report::Exit>())
            .map(|x| x.kind)
    };
    let e = run_page(
        &press_pilot("[answer]\noracle = \"pixels\"\n"),
        "/webgl.html".into(),
        3,
    )
    .err()
    .expect("explicit pixels on a WebGL canvas must fail");
    assert_eq!(kind(&e), Some(arena_report::ExitKind::BadInput), "{e:#}");
    assert!(
        format!("{e:#}").contains("cannot work on this target"),
        "{e:#}"
    );

    let o = run_page(&press_pilot(""), "/webgl.html".into(), 3).expect("auto falls back");
    let a = o.run.meta.answer.clone().unwrap();
    assert_eq!((a.oracle.as_str(), a.requested.as_str()), ("reply", "auto"));
    assert!(
        a.fallback
            .as_deref()
            .is_some_and(|f| f.contains("cannot be read")),
        "{a:?}"
    );

    let e = run_page(
        &press_pilot("[answer]\noracle = \"js\"\njs = \"window.nothing.here\"\n"),
        "/press.html?d=5".into(),
        3,
    )
    .err()
    .expect("a js oracle that throws must fail");
    assert_eq!(kind(&e), Some(arena_report::ExitKind::BadInput), "{e:#}");
    assert!(format!("{e:#}").contains("js threw"), "{e:#}");
}

/// The fixture with a blinking cursor repainting the chat strip every 40 ms, replies held
/// 40 ms, and no settle or interval: blink frames land inside every press's window.
fn blink_run(oracle: &str) -> Run {
    let mut pilot = Pilot::builtin().unwrap();
    // Clicks stay off the bottom row, where the chat strip blinks.
    pilot.clicks.region = [0.3, 0.1, 0.95, 0.8];
    // A socket that blinks every 40 ms is never quiet for the built-in setup's 200 ms.
    pilot.setup.truncate(1);
    if oracle == "reply" {
        pilot.answer.oracle = arena_pilot::scenario::Requested::Reply;
    }
    let ov = Overrides {
        clicks: Some(30),
        settle_ms: Some(0),
        interval_ms: Some(0),
        knobs: knobs(&[
            ("blink_ms", "40"),
            ("delay_ms", "40"),
            ("los_work", "0"),
            ("tick_ms", "1"),
        ]),
        ..Overrides::default()
    };
    let tmp = tempfile::tempdir().unwrap();
    run_arms(&pilot, vec![("blink", ov)], tmp.path())
        .remove(0)
        .run
}

#[test]
fn no_loop_is_answered_by_a_blink_frame_under_the_pixels_oracle() {
    let _g = shared();
    let floor = 38.0; // the server holds every reply 40 ms
    let pixels = blink_run("pixels");
    assert_eq!(
        pixels.meta.status,
        RunStatus::Complete,
        "{:?}",
        pixels.meta.status_message
    );
    assert_eq!(pixels.meta.answer.as_ref().unwrap().oracle, "pixels");
    let down: Vec<_> = by_event(&pixels, "mousedown");
    let answered = down.iter().filter(|l| l.answered).count();
    assert!(answered >= 29, "{answered} of 30 presses answered");
    for l in pixels.loops.iter().filter(|l| l.answered) {
        let i2p = l
            .input_to_pixels
            .expect("an answered loop has its answer frame");
        let s2r = l.send_to_recv.unwrap_or(f64::INFINITY);
        assert!(
            s2r >= floor && i2p >= floor,
            "loop {} ({}) closed below the server's 40 ms floor: sendToRecv {s2r:.1}, inputToPixels {i2p:.1}",
            l.index,
            l.event
        );
    }
    assert_invariant(&pixels);
    // The trap is real: judged on the first reply, blink frames close loops early.
    let reply = blink_run("reply");
    let early = reply
        .loops
        .iter()
        .filter(|l| l.send_to_recv.is_some_and(|v| v < floor))
        .count();
    eprintln!(
        "blink: {early} of {} loops closed below the floor by the reply oracle, 0 by pixels",
        reply.loops.len()
    );
    assert!(
        early > 0,
        "the reply oracle should have been fooled at least once"
    );
}

#[test]
fn a_worker_socket_seen_through_cdp_keeps_each_send_with_its_input() {
    let _g = shared();
    let mut pilot = Pilot::builtin().unwrap();
    pilot.recorder.sockets = arena_browser::SocketChoice::Auto;
    pilot.clicks.region = [0.3, 0.1, 0.95, 0.8];
    // Press and release back to back: the press's send reaches CDP after the release.
    pilot.clicks.hold = Some(arena_pilot::scenario::Hold::Fixed(0));
    let ov = Overrides {
        clicks: Some(40),
        knobs: knobs(&[("worker", "true"), ("los_work", "0")]),
        ..Overrides::default()
    };
    let tmp = tempfile::tempdir().unwrap();
    let r = run_arms(&pilot, vec![("worker", ov)], tmp.path())
        .remove(0)
        .run;
    assert_eq!(r.meta.socket_source, SocketSource::Cdp);
    let down = by_event(&r, "mousedown");
    let answered = down.iter().filter(|l| l.answered).count();
    assert!(
        answered * 100 >= 95 * down.len(),
        "{answered} of {} presses answered",
        down.len()
    );
    assert!(
        !r.meta.warnings.iter().any(|w| w.code == "no_input_send"),
        "{:?}",
        r.meta.warnings
    );
    // The fixture sends exactly one input message per press and per release, in order:
    // sends given to the right inputs are distinct and ordered like their inputs.
    let sends: Vec<f64> = r
        .loops
        .iter()
        .map(|l| l.t_send.expect("every input sent"))
        .collect();
    assert!(
        sends.windows(2).all(|w| w[0] < w[1]),
        "sends out of input order: {sends:?}"
    );
    assert_invariant(&r);
}

#[test]
fn move_first_moves_the_pointer_and_the_press_still_answers() {
    let _g = shared();
    let mut pilot = press_pilot("");
    pilot.clicks.move_first = true;
    let o = run_page(&pilot, "/press.html?d=10".into(), 8).expect("run");
    let s = &o.run.meta.summary;
    // The move is coalesced input, never a loop; a page that ignores it is quiet at once.
    assert!(s.coalesced_inputs >= 8, "{s:?}");
    assert_eq!((s.loops, s.answered), (16, 8), "{:?}", o.run.meta.warnings);
    assert!(
        o.cost.wall_ms < 8.0 * 1500.0,
        "{} ms for 8 clicks",
        o.cost.wall_ms
    );
}
