//! Every test that needs a real Chromium, in one binary (they link slowly).

#[path = "support/server.rs"]
mod server;

use anyhow::Result;
use arena_browser::{
    AppRecorder, Browser, ClassifierSpec, Drain, LaunchOptions, Page, Quiet, Record, RecordKind,
    RecorderConfig, SendClass, SocketChoice, SocketSource,
};
use server::TestServer;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use arena_sys::procfs::alive;

/// Waits (bounded) for every pid to be gone; returns the survivors.
fn survivors(pids: &[i32], within: Duration) -> Vec<i32> {
    let end = Instant::now() + within;
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|&p| alive(p)).collect();
        if left.is_empty() || Instant::now() > end {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn cmdline(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

/// Two animation frames: anything drawn before has had its paint record written.
async fn settle(page: &Page) -> Result<()> {
    page.eval_json(
        "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(1))))",
    )
    .await?;
    Ok(())
}

const FIXTURE_CLASSIFIER: &[u8] = &[1, 2, 3, 4, 5];

fn config(capacity: u32) -> RecorderConfig {
    RecorderConfig {
        capacity,
        ..RecorderConfig::with_classifier(ClassifierSpec::first_byte(FIXTURE_CLASSIFIER, &[0x10]))
    }
}

/// A page shaped like the fixture: a board canvas and a HUD canvas, input sent on mousedown
/// (first byte 1), every received frame drawn and acked (first byte 0x10).
const BOARD_PAGE: &str = r#"<!doctype html><html><body style="margin:0">
<canvas id="board" width="200" height="100" style="width:400px;height:200px;display:block"></canvas>
<canvas id="hud" width="50" height="20"></canvas>
<script>
const boardEl = document.getElementById('board');
const board = boardEl.getContext('2d');
const hud = document.getElementById('hud').getContext('2d');
hud.fillRect(0, 0, 5, 5);
const ws = new WebSocket('{{ECHO}}');
ws.binaryType = 'arraybuffer';
window.checks = {
  instance: ws instanceof WebSocket,
  proto: Object.getPrototypeOf(ws) === WebSocket.prototype,
  ctor: ws.constructor === WebSocket,
  tag: Object.prototype.toString.call(ws),
  open: WebSocket.OPEN,
  sub: (() => { class Sub extends WebSocket {}; const s = new Sub('{{SINK}}'); const ok = s instanceof Sub && s instanceof WebSocket; s.close(); return ok; })()
};
window.frames_in = 0;
window.ready = new Promise(r => ws.addEventListener('open', r));
ws.onmessage = (e) => {
  const b = new Uint8Array(e.data);
  if (b[0] === 1) {
    board.fillRect(b[1], b[2], 10, 10);
    ws.send(new Uint8Array([0x10, 0, 0, 0, 0]));
    window.frames_in++;
  }
};
boardEl.addEventListener('mousedown', (e) => {
  ws.send(new Uint8Array([1, e.offsetX & 255, e.offsetY & 255, 0, 0, 0, 0, 0, 0, 0, 0]));
});
</script></body></html>"#;

/// A page whose socket lives in a dedicated Worker: the page hook cannot see it.
const WORKER_PAGE: &str = r#"<!doctype html><html><body style="margin:0">
<canvas id="board" width="200" height="100"></canvas>
<script>
const ctx = document.getElementById('board').getContext('2d');
const w = new Worker('/worker.js');
window.frames_in = 0;
window.ready = new Promise(r => { w.onmessage = (e) => {
  if (e.data === 'open') { r(1); return; }
  ctx.fillRect(e.data, 5, 10, 10);
  window.frames_in++;
}; });
w.postMessage('{{ECHO}}');
document.getElementById('board').addEventListener('mousedown', (e) => w.postMessage(e.offsetX));
</script></body></html>"#;

const WORKER_JS: &str = r#"
let ws;
onmessage = (e) => {
  if (typeof e.data === 'string') {
    ws = new WebSocket(e.data);
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => postMessage('open');
    ws.onmessage = (m) => { const b = new Uint8Array(m.data); if (b[0] === 1) { postMessage(b[1]); ws.send(new Uint8Array([0x10, 0, 0, 0, 0])); } };
    return;
  }
  const p = new Uint8Array(64); p[0] = 1; p[1] = e.data & 255;
  ws.send(p);
};
"#;

/// A page with a recorder of its own (the app-recorder path).
const APP_PAGE: &str = r#"<!doctype html><html><body>
<script>
const log = [];
window.myPerf = {
  clear() { log.length = 0; },
  drain() { const out = log.splice(0); return { lost: 0, items: out }; }
};
window.addEventListener('mousedown', (e) => log.push({ what: 'in', at: e.timeStamp, name: e.type, real: e.isTrusted }), true);
window.addEventListener('mousedown', () => { log.push({ what: 'out', at: performance.now(), n: 42, verdict: 'i' }); log.push({ what: 'noise', at: performance.now() }); });
</script></body></html>"#;

async fn board_server() -> Result<TestServer> {
    let s = TestServer::start().await?;
    s.add("/board", "text/html", BOARD_PAGE);
    s.add("/worker", "text/html", WORKER_PAGE);
    s.add("/worker.js", "application/javascript", WORKER_JS);
    s.add("/app", "text/html", APP_PAGE);
    Ok(s)
}

fn first_after(recs: &[Record], t: f64, f: impl Fn(&Record) -> bool) -> Option<&Record> {
    recs.iter()
        .filter(|r| r.t_ms >= t && f(r))
        .min_by(|a, b| a.t_ms.total_cmp(&b.t_ms))
}

/// One loop through the records: (input, send, recv, draw, paint).
fn one_loop(d: &Drain, board: u16) -> (f64, f64, f64, f64, f64) {
    let recs = &d.records;
    let input = recs
        .iter()
        .find(|r| r.kind == RecordKind::Input && r.event == "mousedown")
        .expect("a mousedown record");
    let send = first_after(recs, input.t_ms, |r| {
        r.kind == RecordKind::WsSend && r.class == SendClass::Input
    })
    .expect("an input send after the mousedown");
    let recv = first_after(recs, send.t_ms, |r| r.kind == RecordKind::WsRecv).expect("a receive");
    let draw = first_after(recs, recv.t_ms, |r| {
        r.kind == RecordKind::Draw && r.target == board
    })
    .expect("a board draw after the receive");
    let paint = first_after(recs, draw.t_ms, |r| r.kind == RecordKind::Paint).expect("a paint");
    (input.t_ms, send.t_ms, recv.t_ms, draw.t_ms, paint.t_ms)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_eval_close_leaves_no_process_and_flags_have_two_dashes() -> Result<()> {
    let b = Browser::launch(LaunchOptions::default()).await?;
    let pids = b.pids();
    assert!(
        pids.len() >= 2,
        "expected several Chromium processes, got {pids:?}"
    );
    assert!(pids.contains(&b.pid()));
    let args = cmdline(b.pid());
    for flag in [
        "--headless",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--no-sandbox",
    ] {
        assert!(
            args.iter().any(|a| a == flag),
            "{flag} missing from {args:?}"
        );
    }
    assert!(
        args.iter().all(|a| !a.starts_with("---")),
        "flag with extra dashes: {args:?}"
    );
    let profile = args
        .iter()
        .find_map(|a| a.strip_prefix("--user-data-dir="))
        .expect("a --user-data-dir flag")
        .to_string();
    assert!(Path::new(&profile).is_dir());
    assert!(b.version().contains("Chrome"), "{}", b.version());

    let page = b.new_page("about:blank", None).await?;
    assert_eq!(page.eval_json("1 + 2").await?, serde_json::json!(3));
    let err = page
        .eval_json("(() => { throw new Error('boom') })()")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("boom"), "{err}");
    assert!(
        page.drain().await.is_err(),
        "a page without recorder has nothing to drain"
    );

    b.close().await?;
    assert_eq!(survivors(&pids, Duration::from_secs(3)), Vec::<i32>::new());
    assert!(
        !Path::new(&profile).exists(),
        "profile dir {profile} left behind"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panic_while_holding_a_browser_kills_it() -> Result<()> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        let b = Browser::launch(LaunchOptions::default())
            .await
            .expect("launch");
        let _ = tx.send(b.pids());
        panic!("test path panics while the browser is live");
    });
    let pids = rx.await?;
    assert!(!pids.is_empty());
    let joined = task.await;
    assert!(joined.unwrap_err().is_panic());
    assert_eq!(survivors(&pids, Duration::from_secs(3)), Vec::<i32>::new());
    Ok(())
}

#[test]
fn bad_flags_and_missing_binary_are_errors() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let e = rt
        .block_on(Browser::launch(LaunchOptions {
            extra_args: vec!["disable-gpu".into()],
            ..LaunchOptions::default()
        }))
        .err()
        .expect("a flag without dashes is refused");
    assert!(e.to_string().contains("two dashes"), "{e}");
    let e = arena_browser::find_chromium(Some(Path::new("/nonexistent/chrome"))).unwrap_err();
    assert!(format!("{e:#}").contains("/nonexistent/chrome"), "{e:#}");
}

/// Child mode for the tests below: launch a browser, print its pids, then either call
/// `kill_all()` and exit without dropping it, or sleep until killed.
#[test]
fn child_entry() {
    let Ok(mode) = std::env::var("ARENA_BROWSER_TEST_CHILD") else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let b = rt
        .block_on(Browser::launch(LaunchOptions::default()))
        .expect("launch");
    let pids: Vec<String> = b.pids().iter().map(|p| p.to_string()).collect();
    println!("PIDS {}", pids.join(" "));
    if mode == "kill_all" {
        arena_browser::kill_all();
        assert!(arena_browser::live_groups().is_empty());
        println!("KILLED");
        std::mem::forget(b);
        std::process::exit(0);
    }
    std::thread::sleep(Duration::from_secs(60));
}

fn run_child(
    mode: &str,
) -> (
    std::process::Child,
    Vec<i32>,
    BufReader<std::process::ChildStdout>,
) {
    let exe = std::env::current_exe().expect("test binary path");
    let mut child = Command::new(exe)
        .args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
        .env("ARENA_BROWSER_TEST_CHILD", mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the test binary");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let mut pids = Vec::new();
    while out.read_line(&mut line).unwrap_or(0) > 0 {
        // libtest prints "test child_entry ... " on the same line first.
        if let Some(rest) = line.trim().split("PIDS ").nth(1) {
            pids = rest.split(' ').filter_map(|p| p.parse().ok()).collect();
            break;
        }
        line.clear();
    }
    (child, pids, out)
}

#[test]
fn sigkill_of_the_parent_takes_chromium_with_it() {
    let (mut child, pids, _out) = run_child("sleep");
    assert!(pids.len() >= 2, "child printed no pids");
    assert!(pids.iter().all(|&p| alive(p)));
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    let _ = child.wait();
    assert_eq!(survivors(&pids, Duration::from_secs(5)), Vec::<i32>::new());
}

#[test]
fn kill_all_from_a_signal_path_kills_live_browsers() {
    let (mut child, pids, mut out) = run_child("kill_all");
    assert!(pids.len() >= 2, "child printed no pids");
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut out, &mut rest);
    let _ = child.wait();
    assert!(rest.contains("KILLED"), "child output: {rest}");
    assert_eq!(survivors(&pids, Duration::from_secs(5)), Vec::<i32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorder_sees_input_socket_draw_and_paint_in_order() -> Result<()> {
    let srv = board_server().await?;
    let b = Browser::launch(LaunchOptions::default()).await?;
    let page = b.new_page(&srv.url("/board"), Some(config(4096))).await?;
    page.eval_json("window.ready").await?;

    // The socket the page got is a genuine WebSocket.
    let checks = page.eval_json("window.checks").await?;
    assert_eq!(checks["instance"], true, "{checks}");
    assert_eq!(checks["proto"], true, "{checks}");
    assert_eq!(checks["ctor"], true, "{checks}");
    assert_eq!(checks["tag"], "[object WebSocket]", "{checks}");
    assert_eq!(checks["open"], 1, "{checks}");
    assert_eq!(checks["sub"], true, "{checks}");
    let hidden = page
        .eval_json("Object.keys(window).includes('__arenaRecorder')")
        .await?;
    assert_eq!(
        hidden, false,
        "the recorder must not show up in window's keys"
    );

    let rect = page.canvas_rect("#board").await?;
    assert_eq!((rect.width, rect.canvas_width), (400.0, 200.0));
    let hud = page.canvas_rect("#hud").await?;
    // The HUD drew first, so it is canvas 0 and the board canvas 1.
    assert_eq!((hud.index, rect.index), (Some(0), Some(1)));
    let board = rect.index.unwrap_or(u16::MAX);

    // Clicks before attach must not be counted.
    let (x, y) = rect.page_point(20.0, 10.0);
    page.click(x, y).await?;
    page.wait_until("window.frames_in >= 1", Duration::from_secs(5))
        .await?;
    settle(&page).await?;
    page.clear().await?;
    assert!(
        !page.network_events_on(),
        "the page hook saw the socket: CDP network events stop"
    );

    page.click(x, y).await?;
    page.wait_until("window.frames_in >= 2", Duration::from_secs(5))
        .await?;
    settle(&page).await?;
    let d = page.drain().await?;
    assert_eq!(d.socket_source, SocketSource::PageHook);
    assert_eq!(d.dropped, 0);
    assert!(
        d.records.iter().all(|r| r.seq >= d.cleared_at_seq),
        "a record predates clear"
    );
    let downs: Vec<_> = d
        .records
        .iter()
        .filter(|r| r.kind == RecordKind::Input && r.event == "mousedown")
        .collect();
    assert_eq!(
        downs.len(),
        1,
        "only the click after clear: {:?}",
        d.records
    );
    assert!(downs[0].trusted, "CDP input is trusted");
    assert_eq!(downs[0].target, board);
    let sends: Vec<_> = d
        .records
        .iter()
        .filter(|r| r.kind == RecordKind::WsSend)
        .collect();
    assert_eq!(
        sends.iter().map(|r| (r.class, r.size)).collect::<Vec<_>>(),
        vec![(SendClass::Input, 11), (SendClass::Ack, 5)]
    );
    let recvs: Vec<_> = d
        .records
        .iter()
        .filter(|r| r.kind == RecordKind::WsRecv)
        .collect();
    assert_eq!(
        recvs.iter().map(|r| r.size).collect::<Vec<_>>(),
        vec![11, 5]
    );
    assert!(d
        .records
        .iter()
        .any(|r| r.kind == RecordKind::Draw && r.event == "fillRect"));

    let (ti, ts, tr, td, tp) = one_loop(&d, board);
    assert!(
        ti <= ts && ts <= tr && tr <= td && td <= tp,
        "{ti} {ts} {tr} {td} {tp}"
    );
    // The seq is contiguous and never reset.
    for w in d.records.windows(2) {
        assert_eq!(w[1].seq, w[0].seq + 1);
    }
    assert_eq!(d.records.last().map(|r| r.seq + 1), Some(d.written_total));

    // A drain hands out each record once.
    let again = page.drain().await?;
    assert!(again.records.iter().all(|r| r.seq >= d.written_total));

    // A key press is a trusted keydown.
    page.key("a").await?;
    let d = page.drain().await?;
    assert!(
        d.records
            .iter()
            .any(|r| r.kind == RecordKind::Input && r.event == "keydown" && r.trusted),
        "{:?}",
        d.records
    );
    b.close().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_quiet_resolves_after_the_answer_painted_and_the_socket_settled() -> Result<()> {
    let srv = board_server().await?;
    let b = Browser::launch(LaunchOptions::default()).await?;
    let page = b.new_page(&srv.url("/board"), Some(config(4096))).await?;
    page.eval_json("window.ready").await?;
    page.clear().await?;
    let ms = Duration::from_millis;

    // Nothing happened since the clear: the wait runs to its timeout, silent throughout.
    let t = Instant::now();
    let q = page.wait_quiet(ms(50), ms(300)).await?;
    assert_eq!(q, Quiet::Silent);
    assert!(t.elapsed() >= ms(290), "timed out early: {:?}", t.elapsed());

    let rect = page.canvas_rect("#board").await?;
    let (x, y) = rect.page_point(20.0, 10.0);
    let settle_ms = 120.0;
    page.click(x, y).await?;
    let Quiet::At(quiet_at) = page.wait_quiet(ms(120), ms(3000)).await? else {
        panic!("the echo answered, the wait must say when it went quiet");
    };
    let d = page.drain().await?;
    // What the wait could have seen: records up to the moment it ended. A reply the server
    // sent later still (a loaded machine held the release's echo 170 ms behind the
    // press's) is after the quiet, not a quiet declared too soon.
    let last = |k: RecordKind| {
        d.records
            .iter()
            .filter(|r| r.kind == k && r.t_ms <= quiet_at)
            .map(|r| r.t_ms)
            .fold(f64::NAN, f64::max)
    };
    let (recv, draw, paint) = (
        last(RecordKind::WsRecv),
        last(RecordKind::Draw),
        last(RecordKind::Paint),
    );
    let answer = d
        .records
        .iter()
        .filter(|r| r.kind == RecordKind::WsRecv)
        .map(|r| r.t_ms)
        .fold(f64::INFINITY, f64::min);
    assert!(
        recv.is_finite() && draw.is_finite() && paint.is_finite(),
        "{:?}",
        d.records
    );
    // The answer was drawn and painted before the wait ended, and the socket had then been
    // quiet for the settle time (timers fire late, never early).
    assert!(
        draw >= answer && paint >= draw,
        "answer {answer}, draw {draw}, paint {paint}, quiet {quiet_at}"
    );
    assert!(
        quiet_at >= recv + settle_ms - 1.0,
        "quiet at {quiet_at}, last receipt {recv}"
    );
    // Activity must be new: nothing followed, so the next wait runs out, silent.
    assert_eq!(page.wait_quiet(ms(50), ms(200)).await?, Quiet::Silent);
    b.close().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tiny_ring_buffer_reports_dropped_records() -> Result<()> {
    let srv = board_server().await?;
    let b = Browser::launch(LaunchOptions::default()).await?;
    let page = b.new_page(&srv.url("/board"), Some(config(8))).await?;
    page.eval_json("window.ready").await?;
    settle(&page).await?;
    page.clear().await?;
    let before = page
        .eval_json("window.__arenaRecorder.stats().written")
        .await?;
    let before = before.as_u64().unwrap_or(0);
    page.eval_json("for (let i = 0; i < 20; i++) board.fillRect(i, 0, 1, 1); 0")
        .await?;
    let d = page.drain().await?;
    let n = d.written_total - before;
    assert!(n >= 20, "20 draws written, got {n}");
    assert_eq!(d.records.len(), 8, "capacity 8 keeps the last 8");
    assert_eq!(d.dropped, n - 8);
    assert_eq!(d.records.last().map(|r| r.seq), Some(d.written_total - 1));
    assert_eq!(d.cleared_at_seq, before);
    b.close().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_socket_falls_back_to_cdp_events_on_the_page_clock() -> Result<()> {
    let srv = board_server().await?;
    let b = Browser::launch(LaunchOptions::default()).await?;
    let page = b.new_page(&srv.url("/worker"), Some(config(4096))).await?;
    page.eval_json("window.ready").await?;
    assert!(page.network_events_on());
    page.clear().await?;
    // The page does not see this socket, so it cannot say when the answer came.
    assert_eq!(
        page.wait_quiet(Duration::from_millis(10), Duration::from_secs(1))
            .await?,
        Quiet::Unsupported
    );
    let rect = page.canvas_rect("#board").await?;
    let (x, y) = rect.page_point(30.0, 10.0);
    for i in 1..=3 {
        page.click(x, y).await?;
        page.wait_until(&format!("window.frames_in >= {i}"), Duration::from_secs(5))
            .await?;
    }
    settle(&page).await?;
    // CDP events may trail the page by a little.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let d = page.drain().await?;
    assert_eq!(d.socket_source, SocketSource::Cdp, "{:?}", d.records);
    let err = d.clock_error_ms.expect("a clock map error bound");
    assert!(err < 2.0, "clock map error {err} ms");
    let sends: Vec<_> = d
        .records
        .iter()
        .filter(|r| r.kind == RecordKind::WsSend && r.class == SendClass::Input)
        .collect();
    assert_eq!(sends.len(), 3);
    assert!(sends.iter().all(|r| r.size == 64));
    let acks = d
        .records
        .iter()
        .filter(|r| r.kind == RecordKind::WsSend && r.class == SendClass::Ack)
        .count();
    assert_eq!(acks, 3);
    let board = rect.index.unwrap_or(u16::MAX);
    let (ti, ts, tr, td, tp) = one_loop(&d, board);
    // CDP times are mapped onto the page clock to within the bracket.
    assert!(
        ti <= ts + err && ts <= tr && tr <= td + err && td <= tp,
        "{ti} {ts} {tr} {td} {tp}"
    );
    assert!(
        ts - ti < 50.0 && td - tr < 50.0,
        "implausible mapping {ti} {ts} {tr} {td}"
    );
    b.close().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_recorder_is_drained_and_mapped() -> Result<()> {
    let srv = board_server().await?;
    let b = Browser::launch(LaunchOptions::default()).await?;
    let app: AppRecorder = serde_json::from_value(serde_json::json!({
        "clear": "window.myPerf.clear()",
        "drain": "window.myPerf.drain()",
        "records_key": "items",
        "dropped_key": "lost",
        "fields": {"kind": "what", "t_ms": "at", "size": "n", "class": "verdict", "event": "name", "trusted": "real"},
        "kinds": {"in": "input", "out": "ws_send"},
        "classes": {"i": "input"}
    }))?;
    let cfg = RecorderConfig {
        app: Some(app),
        sockets: SocketChoice::PageHook,
        ..config(64)
    };
    let page = b.new_page(&srv.url("/app"), Some(cfg)).await?;
    let injected = page.eval_json("typeof window.__arenaRecorder").await?;
    assert_eq!(
        injected, "undefined",
        "with an app recorder, the built-in one stays out"
    );
    page.click(10.0, 10.0).await?;
    page.clear().await?;
    page.click(10.0, 10.0).await?;
    assert_eq!(
        page.wait_quiet(Duration::from_millis(10), Duration::from_secs(1))
            .await?,
        Quiet::Unsupported
    );
    let d = page.drain().await?;
    assert_eq!(d.socket_source, SocketSource::AppRecorder);
    assert_eq!(d.unmapped, 1, "the 'noise' record has no mapping");
    assert_eq!(d.records.len(), 2);
    assert_eq!(d.records[0].kind, RecordKind::Input);
    assert_eq!(d.records[0].event, "mousedown");
    assert!(d.records[0].trusted);
    assert_eq!(
        (d.records[1].kind, d.records[1].class, d.records[1].size),
        (RecordKind::WsSend, SendClass::Input, 42)
    );
    assert!(d.records[0].t_ms <= d.records[1].t_ms);
    b.close().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_dying_mid_run_gives_errors_not_hangs() -> Result<()> {
    let mut b = Browser::launch(LaunchOptions {
        cdp_timeout: Duration::from_secs(3),
        ..LaunchOptions::default()
    })
    .await?;
    let page = b.new_page("about:blank", Some(config(64))).await?;
    assert!(b.is_running());
    let pids = b.pids();
    // SAFETY: kill(2) on the browser this test launched.
    unsafe {
        libc::kill(b.pid(), libc::SIGKILL);
    }
    let t0 = Instant::now();
    assert!(page.eval_json("1").await.is_err());
    assert!(page.click(1.0, 1.0).await.is_err());
    assert!(
        t0.elapsed() < Duration::from_secs(8),
        "calls to a dead browser must fail within their timeouts"
    );
    assert!(!b.is_running());
    drop(page);
    drop(b);
    assert_eq!(survivors(&pids, Duration::from_secs(5)), Vec::<i32>::new());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_page_classifier_agrees_with_the_rust_one() -> Result<()> {
    let srv = board_server().await?;
    let spec: ClassifierSpec = serde_json::from_value(serde_json::json!({
        "input": [{"json_key": "ev.type", "json_value": "click"}],
        "ack": [{"text_regex": "^ack:[0-9]+$"}, {"first_byte": [16], "max_size": 5}]
    }))?;
    let texts = [
        r#"{"ev":{"type":"click"},"x":1}"#,
        "ack:12",
        r#"{"ev":{"type":"move"}}"#,
        "é ack:1",
    ];
    let binaries: [&[u8]; 2] = [&[16, 0, 0, 0, 0], &[16, 0, 0, 0, 0, 0]];
    let mut js = String::new();
    for t in texts {
        js.push_str(&format!("ws.send({});", serde_json::to_string(t)?));
    }
    for bin in binaries {
        js.push_str(&format!("ws.send(new Uint8Array({bin:?}));"));
    }
    let got = classified_in_page(&srv, &spec, &js).await?;
    let mut want: Vec<(SendClass, u32)> = texts
        .iter()
        .map(|t| (spec.classify(t.as_bytes(), Some(t)), t.len() as u32))
        .collect();
    want.extend(
        binaries
            .iter()
            .map(|bin| (spec.classify(bin, None), bin.len() as u32)),
    );
    assert_eq!(got, want);
    // And the verdicts are the intended ones, not merely equal.
    let classes: Vec<SendClass> = got.iter().map(|g| g.0).collect();
    use SendClass::{Ack, Input, Other};
    assert_eq!(classes, vec![Input, Ack, Other, Other, Ack, Other]);
    // UTF-8 length, not UTF-16 units.
    assert_eq!(got[3].1, 8);
    Ok(())
}

/// Runs `sends` (JS using the board page's `ws`) in a page whose recorder classifies with
/// `spec`, and returns each send's verdict and size.
async fn classified_in_page(
    srv: &TestServer,
    spec: &ClassifierSpec,
    sends: &str,
) -> Result<Vec<(SendClass, u32)>> {
    let cfg = RecorderConfig {
        capacity: 64,
        ..RecorderConfig::with_classifier(spec.clone())
    };
    let b = Browser::launch(LaunchOptions::default()).await?;
    let page = b.new_page(&srv.url("/board"), Some(cfg)).await?;
    page.eval_json("window.ready").await?;
    page.clear().await?;
    page.eval_json(sends).await?;
    let d = page.drain().await?;
    b.close().await?;
    Ok(d.records
        .iter()
        .filter(|r| r.kind == RecordKind::WsSend)
        .map(|r| (r.class, r.size))
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_prefix_and_integer_matchers_agree_in_the_page_and_in_rust() -> Result<()> {
    let srv = board_server().await?;
    // GTK Broadway's kind letter in byte 3, an RFB fence by prefix, a little-endian u16.
    let spec: ClassifierSpec = serde_json::from_value(serde_json::json!({
        "input": [{"bytes_at": {"offset": 3, "in": [0x62, 0x42]}, "min_size": 8}],
        "ack": [{"prefix": "f8 ?? 00"}, {"int_at": {"offset": 1, "bits": 16, "endian": "little", "in": [513]}},
                {"int_at": {"offset": 0, "bits": 32, "in": [1633905524]}}]
    }))?;
    let binaries: [&[u8]; 8] = [
        &[0, 0, 0, 0x62, 0, 0, 0, 1],
        &[0, 0, 0, 0x42, 0, 0, 0, 1],
        &[0, 0, 0, 0x62],
        &[0, 0, 0, 0x6d, 0, 0, 0, 1],
        &[0xf8, 0x33, 0x00, 7],
        &[0xf8, 0x33],
        &[9, 0x01, 0x02],
        &[9, 0x02, 0x01],
    ];
    // Text frames are matched on their UTF-8 bytes: "ackt" is 0x61636b74 big-endian.
    let texts = ["ackt and more", "acks"];
    let mut js = String::new();
    for bin in binaries {
        js.push_str(&format!("ws.send(new Uint8Array({bin:?}));"));
    }
    for t in texts {
        js.push_str(&format!("ws.send({});", serde_json::to_string(t)?));
    }
    let got: Vec<SendClass> = classified_in_page(&srv, &spec, &js)
        .await?
        .into_iter()
        .map(|(class, _)| class)
        .collect();
    let mut want: Vec<SendClass> = binaries
        .iter()
        .map(|bin| spec.classify(bin, None))
        .collect();
    want.extend(texts.iter().map(|t| spec.classify(t.as_bytes(), Some(t))));
    assert_eq!(got, want);
    use SendClass::{Ack, Input, Other};
    assert_eq!(
        got,
        vec![Input, Input, Other, Other, Ack, Other, Ack, Other, Ack, Other]
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trace_holds_the_pages_marks_and_its_trusted_input() -> Result<()> {
    let srv = board_server().await?;
    let b = Browser::launch(LaunchOptions::default()).await?;
    let page = b.new_page(&srv.url("/board"), Some(config(4096))).await?;
    page.eval_json("window.ready").await?;
    let rect = page.canvas_rect("#board").await?;
    page.clear().await?;
    page.trace_start(arena_browser::TRACE_CATEGORIES).await?;
    let mut marks = page.trace_marks(8).await?;
    let (x, y) = rect.page_fraction(0.5, 0.5);
    page.click(x, y).await?;
    settle(&page).await?;
    marks.extend(page.trace_marks(8).await?);
    let trace = page.trace_end().await?;
    assert!(trace.bytes > 0 && !trace.events.is_empty(), "{trace:?}");
    assert!(!trace.data_loss);
    // The trusted press reached the page's renderer and is in the trace.
    let dispatched = trace.events.iter().any(|e| {
        e["name"] == "EventDispatch" && e.pointer("/args/data/type") == Some(&"mousedown".into())
    });
    assert!(dispatched, "no mousedown EventDispatch in the trace");
    // Every mark made while tracing is in the trace, on one thread, at one offset.
    let aligned = arena_browser::align_marks(&trace.events, &marks);
    assert_eq!(aligned.len(), marks.len(), "{aligned:?}");
    let offsets: Vec<f64> = aligned.iter().map(|m| m.offset_ms()).collect();
    let spread = offsets.iter().copied().fold(f64::MIN, f64::max)
        - offsets.iter().copied().fold(f64::MAX, f64::min);
    assert!(
        spread < 0.25,
        "mark offsets spread {spread} ms: {offsets:?}"
    );
    page.close().await?;
    b.close().await?;
    Ok(())
}

/// The destinations a proxy carried, as `kind host:port`.
fn carried(proxy: &arena_link::Proxy) -> Vec<String> {
    proxy
        .carried()
        .iter()
        .map(|c| format!("{} {}", c.kind.as_str(), c.dest))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxied_page_sends_its_load_and_every_socket_through_the_proxy() -> Result<()> {
    let srv = board_server().await?;
    let link = arena_link::LinkSpec::parse("rtt=0").map_err(anyhow::Error::msg)?;
    let proxy = arena_link::Proxy::start(link).await?;
    let b = Browser::launch(LaunchOptions::default()).await?;
    let (http, echo, sink) = (srv.http, srv.echo, srv.sink);
    // The page's socket goes to other ports than the page's own; the Worker's too.
    for path in ["/board", "/worker"] {
        let before = proxy.carried().len();
        let page = b
            .new_page_via(&srv.url(path), Some(config(4096)), &proxy.url())
            .await?;
        page.eval_json("window.ready").await?;
        let seen = carried(&proxy)[before..].to_vec();
        assert!(seen.contains(&format!("http {http}")), "{path}: {seen:?}");
        let to_echo = seen
            .iter()
            .filter(|s| **s == format!("websocket {echo}"))
            .count();
        assert_eq!(to_echo, 1, "{path}: {seen:?}");
        // The board page's subclassed socket to the sink closes at once: through the
        // proxy if it connected at all, and nowhere else.
        let ours = [http, echo, sink].map(|a| a.to_string());
        assert!(
            seen.iter()
                .all(|s| ours.iter().any(|a| s.ends_with(a.as_str()))),
            "{path}: {seen:?}"
        );
        b.close_page(page).await?;
    }
    // A page opened the ordinary way in the same browser is not proxied.
    let before = proxy.carried().len();
    let page = b.new_page(&srv.url("/board"), Some(config(4096))).await?;
    page.eval_json("window.ready").await?;
    assert_eq!(proxy.carried().len(), before, "{:?}", carried(&proxy));
    assert!(proxy.refused().is_empty(), "{:?}", proxy.refused());
    b.close().await?;
    proxy.stop().await;
    Ok(())
}
