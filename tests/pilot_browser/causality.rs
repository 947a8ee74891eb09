//! Loops caused by their inputs: a press answered in two steps leaves every release
//! unanswered, `verify` names a release closed by the press's second step, inputs go
//! out uniform on the frame clock, and an answer drawn in the app's own animation-frame
//! callback or after an async decode is timed to the frame that showed it.

use super::*;
use arena_run::Outcome as LoopOutcome;

use super::answers::server;

#[test]
fn a_press_answered_in_two_steps_leaves_every_release_unanswered() {
    let _g = shared();
    let tmp = tempfile::tempdir().unwrap();
    let pilot = Pilot::builtin().unwrap();
    let mut ov = base_overrides(20);
    ov.knobs = knobs(&[("two_step_ms", "50"), ("los_work", "0")]);
    let r = run_arms(&pilot, vec![("two-step", ov)], tmp.path())
        .remove(0)
        .run;
    assert_eq!(r.meta.status, RunStatus::Complete);
    let ups: Vec<_> = r.loops.iter().filter(|l| l.event == "mouseup").collect();
    assert_eq!(ups.len(), 20);
    assert!(
        ups.iter().all(|l| l.outcome == LoopOutcome::Unanswered),
        "a release closed on the press's second step: {:?}",
        ups.iter().map(|l| l.outcome).collect::<Vec<_>>()
    );
    let downs = r.loops.iter().filter(|l| l.event == "mousedown");
    assert!(downs.filter(|l| l.answered).count() >= 18);
}

/// `arena-perf verify` on the fixture with `args`; its exit code and output.
fn verify(args: &[&str], out: &Path) -> (i32, String) {
    let o = Command::new(bin())
        .arg("verify")
        .args(args)
        .args(["--quiet", "--out"])
        .arg(out)
        .output()
        .expect("run arena-perf verify");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    eprintln!("{text}");
    (o.status.code().unwrap_or(-1), text)
}

/// The stock fixture's kinds are proven by the README's `verify` example, which
/// `tests/fixtures_examples.rs` runs with the fixture's press work on.
#[test]
fn verify_names_releases_closed_by_a_second_step() {
    let _g = exclusive();
    let tmp = tempfile::tempdir().unwrap();
    // The release goes 40 ms after the press's first frame went quiet (no person's hold
    // to speak of), before the second frame, which comes 120 ms after the first and then
    // changes the pixels under it: a loop its input did not cause. Both frames move with
    // the link and the release with the first, so its "answer" does not move, and verify
    // names it. (A release timed from the press, by a hold, would move with the press's
    // second frame: verify cannot tell that from a caused answer.)
    let pilot = tmp.path().join("two-step.toml");
    let text_of = include_str!("../../pilots/fixture.toml")
        .replace("warmup = 1\n", "warmup = 1\nhold_range_ms = [0, 1]\n");
    assert!(
        text_of.contains("hold_range_ms"),
        "the [clicks] table moved"
    );
    std::fs::write(&pilot, text_of).unwrap();
    let pilot = pilot.to_string_lossy().into_owned();
    let (code, text) = verify(
        &[
            "--pilot",
            &pilot,
            "--clicks",
            "20",
            "--rounds",
            "1",
            "--settle",
            "40",
            "--knob",
            "two_step_ms=120",
        ],
        &tmp.path().join("two-step"),
    );
    assert_eq!(code, 1, "{text}");
    // One round of 19 holds the presses' lower decile at a run's second-fastest loop:
    // unknown, whatever they did; the releases' median did not move at all.
    let up = text
        .lines()
        .find(|l| l.contains("mouseup"))
        .expect("a mouseup row");
    assert!(up.contains("not caused by its input"), "{text}");
    assert!(text.contains("mouseup: not caused by its input"), "{text}");
}

#[test]
fn verify_on_a_target_nothing_listens_on_is_exit_3_naming_it_and_bad_settings_exit_2() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/");
    let (code, text) = verify(&["--url", &url], tmp.path());
    assert_eq!(code, 3, "{text}");
    assert!(
        text.contains(&url) && text.contains("cannot be reached"),
        "{text}"
    );
    let (code, text) = verify(&["--rtt", "4", "--tolerance", "3"], tmp.path());
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("--tolerance"), "{text}");
    let pilot = tmp.path().join("hold.toml");
    std::fs::write(
        &pilot,
        "[pacing]\ntimeout_ms = 500\n[clicks]\nhold_ms = 800\n",
    )
    .unwrap();
    let o = Command::new(bin())
        .args(["pilot", "--quiet", "--pilot"])
        .arg(&pilot)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("hold.toml:4: `clicks.hold_ms`"), "{err}");
}

#[test]
fn inputs_go_out_uniform_on_the_frame_clock_over_156_clicks() {
    let _g = exclusive();
    let tmp = tempfile::tempdir().unwrap();
    let pilot = Pilot::builtin().unwrap();
    let mut ov = base_overrides(156);
    ov.knobs = knobs(&[("los_work", "0"), ("lazy_png", "true")]);
    // The phase pause makes an input's phase uniform whatever the waits before it: a
    // 40 ms settle (the quiet fixture sends nothing unasked) tests that as well as the
    // default 100 ms, in two thirds of the time.
    ov.settle_ms = Some(40);
    let r = run_arms(&pilot, vec![("stock", ov)], tmp.path())
        .remove(0)
        .run;
    let ph = r
        .meta
        .summary
        .input_phase
        .as_ref()
        .expect("the run tests its inputs' phases");
    eprintln!(
        "input phase: n = {}, frame {:.3} ms, KS D = {:.4}, p = {:.3}",
        ph.n, ph.frame_interval_ms, ph.ks_d, ph.p
    );
    assert!(ph.n >= 300, "{ph:?}");
    assert!(ph.p > 0.01, "inputs sit at a preferred phase: {ph:?}");
    assert!(!r.meta.warnings.iter().any(|w| w.code == "input_phase"));
    // The control: nothing on the stock board changes without input.
    let sham = r.meta.summary.sham.as_ref().expect("sham watches");
    assert_eq!((sham.n, sham.changed), (39, 0), "{sham:?}");
    assert!(!r.meta.warnings.iter().any(|w| w.code == "sham_answers"));
}

#[test]
fn a_blinking_caret_answers_sham_watches_and_a_settle_past_its_blink_lapses_every_wait() {
    let _g = exclusive();
    let tmp = tempfile::tempdir().unwrap();
    let mut pilot = Pilot::builtin().unwrap();
    // Every click on the caret the chat strip blinks every 40 ms (tile 1 of the bottom row).
    pilot.clicks.region = [0.055, 0.955, 0.07, 0.98];
    // A socket that blinks every 40 ms is never quiet for the built-in setup's 200 ms.
    pilot.setup.truncate(1);
    let mut ov = base_overrides(24);
    ov.settle_ms = Some(20);
    ov.knobs = knobs(&[("blink_ms", "40"), ("los_work", "0")]);
    // The same caret with a settle longer than its blink: the socket is never quiet for
    // it, so every wait runs to its window and each input goes with a frame in flight.
    let mut never_quiet = base_overrides(6);
    never_quiet.settle_ms = Some(100);
    never_quiet.timeout_ms = Some(300);
    never_quiet.knobs = ov.knobs.clone();
    let mut outs = run_arms(
        &pilot,
        vec![("blink", ov), ("blink", never_quiet)],
        tmp.path(),
    );
    let lapsed = outs.remove(1).run;
    let s = &lapsed.meta.summary;
    eprintln!(
        "blink 40 ms, settle 100 ms: {} quiet lapses for {} inputs",
        s.quiet_lapses, s.inputs_dispatched
    );
    assert!(s.quiet_lapses >= s.inputs_dispatched, "{s:?}");
    let w = lapsed
        .meta
        .warnings
        .iter()
        .find(|w| w.code == "quiet_lapses");
    assert!(
        w.is_some_and(|w| w.message.contains("traffic still in flight")),
        "{:?}",
        lapsed.meta.warnings
    );
    let r = outs.remove(0).run;
    assert!(
        r.meta.warnings.iter().all(|w| w.code != "quiet_lapses"),
        "a 20 ms settle between 40 ms blinks: {} lapses, {:?}",
        r.meta.summary.quiet_lapses,
        r.meta.warnings
    );
    let sham = r.meta.summary.sham.as_ref().expect("sham watches");
    eprintln!("blink: {} of {} sham watches changed", sham.changed, sham.n);
    assert_eq!(sham.n, 6);
    assert!(sham.changed >= 5, "{sham:?}");
    let w = r
        .meta
        .warnings
        .iter()
        .find(|w| w.code == "sham_answers")
        .expect("a warning");
    assert!(w.message.contains("change on their own"), "{}", w.message);
}

/// The press-only server's protocol; each reply is drawn by `DRAW` (a function of the
/// reply's point and a colour index), which the two pages below define.
const ANSWER_PAGE: &str = r#"<!doctype html><html><body style="margin:0">
<canvas id="c" width="400" height="300"></canvas>
<script>
const c = document.getElementById('c'), ctx = c.getContext('2d');
ctx.fillStyle = '#202830'; ctx.fillRect(0, 0, 400, 300);
const ws = new WebSocket('{{PRESS}}5'); ws.binaryType = 'arraybuffer';
let n = 0;
function msg(kind, e) {
  const r = c.getBoundingClientRect(), b = new DataView(new ArrayBuffer(5));
  b.setUint8(0, kind); b.setUint16(1, e.clientX - r.left); b.setUint16(3, e.clientY - r.top);
  ws.send(b.buffer);
}
c.addEventListener('mousedown', (e) => msg(1, e));
c.addEventListener('mouseup', (e) => msg(2, e));
SETUP
ws.onopen = () => { READY };
ws.onmessage = (m) => { const v = new DataView(m.data); n++; DRAW(v.getUint16(1), v.getUint16(3), n % 2); };
</script></body></html>"#;

/// Draws the answer inside the page's own animation-frame callback.
const RAF_DRAW: (&str, &str) = (
    "function DRAW(x, y, k) { requestAnimationFrame(() => { ctx.fillStyle = k ? '#e04040' : '#40e040'; ctx.fillRect(x - 12, y - 12, 24, 24); }); }",
    "window.ready = true;",
);

/// Decodes a real PNG (made by the browser at load) before drawing it.
const DECODE_DRAW: (&str, &str) = (
    "const pngs = [];
function png(colour) { const t = document.createElement('canvas'); t.width = t.height = 24;
  const g = t.getContext('2d'); g.fillStyle = colour; g.fillRect(0, 0, 24, 24);
  return new Promise((ok) => t.toBlob(ok, 'image/png')); }
function DRAW(x, y, k) { createImageBitmap(pngs[k]).then((b) => ctx.drawImage(b, x - 12, y - 12)); }",
    "Promise.all([png('#e04040'), png('#40e040')]).then((p) => { pngs.push(...p); window.ready = true; });",
);

const ANSWER_PILOT: &str = r##"
[target]
canvas = "#c"
idle_reply_bytes = 1

[[setup]]
eval = "new Promise((ok) => { const t = setInterval(() => { if (window.ready) { clearInterval(t); ok(true); } }, 10); })"

[clicks]
region = [0.1, 0.1, 0.9, 0.9]
warmup = 1

[pacing]
interval_ms = 10
timeout_ms = 500
settle_ms = 30
loop_events = ["mousedown"]

[classifier]
input = [{ first_byte = [1, 2] }]

[answer]
oracle = "pixels"
"##;

/// Presses against a page drawing its answers with `draw`; every answered loop's gap from
/// the draw that made the change to the frame that showed it, and the frame interval.
fn answer_gaps(draw: (&str, &str), clicks: u64) -> (Vec<f64>, f64, usize) {
    let page = ANSWER_PAGE
        .replace("SETUP", draw.0)
        .replace("READY", draw.1);
    let pilot = Pilot::parse("answer.toml", ANSWER_PILOT).expect("pilot");
    let run = rt().block_on(async {
        let srv = server::TestServer::start().await.unwrap();
        srv.add("/a.html", "text/html", &page);
        let browser = BrowserOptions::default().launch().await.unwrap();
        let pids = browser.pids();
        let tmp = tempfile::tempdir().unwrap();
        let ov = Overrides {
            url: Some(srv.url("/a.html")),
            clicks: Some(clicks),
            ..Overrides::default()
        };
        let plan = Plan::new(&pilot, "page".into(), Arm::default(), &ov).unwrap();
        let req = RunRequest {
            plan: &plan,
            out: OutDir::Exactly(tmp.path().join("run")),
            progress: &silent,
            cancel: &Cancel::new(),
        };
        let o = run_arm(&browser, req).await.expect("run");
        browser.close().await.unwrap();
        assert_eq!(alive(&pids), Vec::<i32>::new(), "Chromium processes left");
        o.run
    });
    let fi = run.meta.loop_settings.as_ref().unwrap().frame_interval_ms;
    let gaps: Vec<f64> = run
        .loops
        .iter()
        .filter(|l| l.answered && !l.cold)
        .map(|l| l.t_answer.unwrap() - l.t_draw.expect("the answer's draw"))
        .collect();
    (gaps, fi.expect("frame interval"), run.loops.len())
}

#[test]
fn an_answer_drawn_in_the_apps_frame_callback_or_after_a_decode_is_timed_to_its_frame() {
    let _g = exclusive();
    for (name, draw) in [("raf", RAF_DRAW), ("decode", DECODE_DRAW)] {
        let (gaps, fi, loops) = answer_gaps(draw, 25);
        let med = Summary::of(&gaps).map(|s| s.p50).unwrap_or(f64::NAN);
        let max = gaps.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        eprintln!(
            "{name}: draw -> answer frame p50 {med:.2} ms, max {max:.2} ms, n = {} of {loops}, frame {fi:.2} ms",
            gaps.len()
        );
        assert!(
            gaps.len() >= 22,
            "{name}: {} answered of {loops}",
            gaps.len()
        );
        assert!(
            gaps.iter().all(|&g| (0.0..=fi).contains(&g)),
            "{name}: an answer more than a frame after its draw: {gaps:?}"
        );
        assert!(
            med <= fi / 2.0 + 1.0,
            "{name}: median gap {med:.2} ms, want at most half a frame + 1 ({:.2})",
            fi / 2.0 + 1.0
        );
    }
}
