//! The fixture in real headless Chromium (every browser test in this one binary: it links
//! slowly): the page loads cross-origin isolated, the board paints, a firing click is
//! answered and repaints, the byte budgets hold at the server, both recorders see the
//! fixture's socket, and no Chromium process outlives the test. With `worker=true` the
//! socket lives in a dedicated Worker: the page hook sees none, CDP events see it all.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use arena_browser::{
    AppFields, AppRecorder, Browser, ClassifierSpec, LaunchOptions, Page, RecordKind,
    RecorderConfig, SendClass, SocketSource,
};
use arena_fixture::session::FrameKind;
use arena_fixture::{Knobs, Server, ServerHandle};
use serde_json::Value;

const TILE: f64 = 40.0;

/// Per-tile pixel sums of #board (384 numbers) plus blank-check figures.
async fn board_pixels(page: &Page) -> Result<(Vec<f64>, f64, f64)> {
    let v = page
        .eval_json(
            "(() => { const c = document.getElementById('board'); \
             const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; \
             const T = 40, W = c.width / T, H = c.height / T; const tiles = new Array(W * H).fill(0); \
             let opaque = 0; const colours = new Set(); \
             for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) { \
               const i = (y * c.width + x) * 4; \
               if (d[i + 3] === 255) opaque++; \
               if ((x + y) % 7 === 0) colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]); \
               tiles[Math.floor(y / T) * W + Math.floor(x / T)] += d[i] + 3 * d[i + 1] + 7 * d[i + 2]; } \
             return { tiles, opaque: opaque / (c.width * c.height), colours: colours.size }; })()",
        )
        .await?;
    let tiles = v["tiles"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    Ok((
        tiles,
        v["opaque"].as_f64().unwrap_or(0.0),
        v["colours"].as_f64().unwrap_or(0.0),
    ))
}

/// Opens `url` with `inject` and waits for the first board paint.
async fn open_board(browser: &Browser, url: &str, inject: RecorderConfig) -> Result<Page> {
    let page = browser.new_page(url, Some(inject)).await?;
    page.wait_until(&arena_fixture::painted_js(1), Duration::from_secs(30))
        .await?;
    Ok(page)
}

use arena_sys::procfs::alive;

fn app_recorder() -> RecorderConfig {
    let kinds: BTreeMap<String, RecordKind> = [
        ("Input", RecordKind::Input),
        ("InputCoalesced", RecordKind::InputCoalesced),
        ("WsSend", RecordKind::WsSend),
        ("WsRecv", RecordKind::WsRecv),
        ("Draw", RecordKind::Draw),
        ("Paint", RecordKind::Paint),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let classes = [("Input", SendClass::Input), ("Ack", SendClass::Ack)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    RecorderConfig {
        app: Some(AppRecorder {
            clear: "window.arenaPerf.clear()".into(),
            drain: "window.arenaPerf.drain()".into(),
            records_key: Some("records".into()),
            dropped_key: Some("dropped".into()),
            fields: AppFields {
                kind: "kind".into(),
                t_ms: "t_ms".into(),
                size: Some("size".into()),
                class: Some("class".into()),
                event: Some("event".into()),
                trusted: Some("trusted".into()),
                target: Some("target".into()),
                seq: Some("seq".into()),
            },
            kinds,
            classes,
        }),
        ..RecorderConfig::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_in_headless_chromium() -> Result<()> {
    // A light sweep: tests run unoptimised. The cost itself is the benchmark's business.
    let mut knobs = Knobs::default();
    knobs.set("los_work", "300").map_err(anyhow::Error::msg)?;
    let server = Server::start(knobs).await?;
    let browser = Browser::launch(LaunchOptions::default()).await?;
    let pids = browser.pids();
    assert!(!pids.is_empty());
    let result = exercise(&browser, &server).await;
    let left = close_browser(browser, &pids).await;
    server.shutdown().await;
    result?;
    let left = left?;
    assert!(left.is_empty(), "Chromium processes left: {left:?}");
    Ok(())
}

/// Closes `browser` and returns those of its `pids` still alive after 5 s.
async fn close_browser(browser: Browser, pids: &[i32]) -> Result<Vec<i32>> {
    browser.close().await?;
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|&p| alive(p)).collect();
        if left.is_empty() || Instant::now() > end {
            return Ok(left);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn exercise(browser: &Browser, server: &ServerHandle) -> Result<()> {
    // --- The page loads, isolated, with its two canvases, and the board paints.
    let page = open_board(browser, &format!("{}?perf=1", server.url()), app_recorder()).await?;
    let facts = page
        .eval_json(
            "({ isolated: self.crossOriginIsolated, canvases: document.querySelectorAll('canvas').length, \
               hud: !!document.getElementById('hud'), errors: window.fixture.errors, phase: window.fixture.phase, \
               bytes: window.fixture.bytes, vh: innerHeight, vw: innerWidth })",
        )
        .await?;
    eprintln!("page facts: {facts}");
    assert_eq!(facts["isolated"], Value::Bool(true), "{facts}");
    assert_eq!(facts["canvases"], 2, "{facts}");
    assert_eq!(facts["errors"], 0, "{facts}");
    assert_eq!(facts["phase"], "firing", "{facts}");
    let (before, opaque, colours) = board_pixels(&page).await?;
    assert!(opaque > 0.999, "board not fully painted: {opaque}");
    assert!(colours > 100.0, "board looks blank: {colours} colours");

    // First board paint, counted at the server, and the page saw the same bytes.
    let frames = server.frames();
    let board = frames.first().expect("board frame");
    assert_eq!(board.kind, FrameKind::Board);
    assert!(board.bytes >= 500_000, "first paint {} B", board.bytes);
    assert_eq!(facts["bytes"].as_u64(), Some(board.bytes), "{facts}");

    // --- A firing-phase click: answered with a reply frame that repaints the arc.
    let rect = page.canvas_rect("#board").await?;
    let target = (16.0, 4.0);
    let (x, y) = rect.page_point(target.0 * TILE + 24.0, target.1 * TILE + 24.0);
    page.eval_json("window.arenaPerf.clear()").await?;
    page.click(x, y).await?;
    // Every input answered and the last frame painted.
    let last = server.wait_answered(2, Duration::from_secs(20)).await?;
    page.wait_until(&arena_fixture::painted_js(last), Duration::from_secs(20))
        .await?;
    let (after, _, _) = board_pixels(&page).await?;
    let changed: Vec<usize> = (0..before.len().min(after.len()))
        .filter(|&i| before[i] != after[i])
        .collect();
    assert!(
        changed.len() >= 3,
        "a firing click repaints the arc (3 tiles) and the marker: changed tiles {changed:?}"
    );
    let target_idx = (target.1 * 24.0 + target.0) as usize;
    assert!(
        changed.contains(&target_idx),
        "target tile unchanged: {changed:?}"
    );
    let replies: Vec<_> = server
        .frames()
        .into_iter()
        .filter(|f| f.kind == FrameKind::Reply)
        .collect();
    assert_eq!(
        replies.iter().map(|f| f.inputs).sum::<u32>(),
        2,
        "{replies:?}"
    );
    assert!(
        replies[0].constants_sent >= 2,
        "the arc ships new constants"
    );

    // The app's own recorder (?perf=1) saw the loop: trusted input, an input send, an ack,
    // the reply, its draw and the paint.
    let d = page.drain().await?;
    assert_eq!(d.socket_source, SocketSource::AppRecorder);
    let has = |k: RecordKind| d.records.iter().any(|r| r.kind == k);
    for k in [
        RecordKind::Input,
        RecordKind::WsSend,
        RecordKind::WsRecv,
        RecordKind::Draw,
        RecordKind::Paint,
    ] {
        assert!(has(k), "app recorder has no {k:?}: {:?}", d.records);
    }
    assert!(d
        .records
        .iter()
        .any(|r| r.kind == RecordKind::Input && r.event == "mousedown" && r.trusted));
    let sends: Vec<_> = d
        .records
        .iter()
        .filter(|r| r.kind == RecordKind::WsSend)
        .collect();
    assert!(sends
        .iter()
        .any(|r| r.class == SendClass::Input && r.size == 15));
    assert!(sends
        .iter()
        .any(|r| r.class == SendClass::Ack && r.size == 5));
    assert_eq!(d.dropped, 0);
    page.close().await?;

    // --- Warm replies on a fresh page, with the pilot's injected recorder classifying the
    // fixture's sends by first byte (the contract's classifier).
    server.clear_frames();
    let classifier = ClassifierSpec::first_byte(&[1, 2, 3, 4, 5], &[0x10]);
    let page = open_board(
        browser,
        &server.url(),
        RecorderConfig::with_classifier(classifier),
    )
    .await?;
    // Control for the worker test's check: the stock page's socket is the page's own, and
    // the injected recorder counts its construction.
    let own = page
        .eval_json("[window.fixture.socket, window.__arenaRecorder.stats().sockets]")
        .await?;
    assert_eq!(own, serde_json::json!(["page", 1]), "{own}");
    page.clear().await?;
    arena_fixture::drive::click_tiles(&page, server, 10, Duration::from_secs(20)).await?;
    let replies: Vec<_> = server
        .frames()
        .into_iter()
        .filter(|f| f.kind == FrameKind::Reply)
        .collect();
    let answered: u32 = replies.iter().map(|f| f.inputs).sum();
    assert_eq!(answered, 20, "10 clicks = 20 inputs, all answered");
    let mut warm: Vec<u64> = replies.iter().map(|f| f.bytes).collect();
    warm.sort_unstable();
    let n = warm.len();
    let median = if n % 2 == 1 {
        warm[n / 2] as f64
    } else {
        (warm[n / 2 - 1] + warm[n / 2]) as f64 / 2.0
    };
    eprintln!(
        "chromium: first paint {} B; warm reply median {median:.0} B (n={}, min {} B, max {} B)",
        board.bytes,
        warm.len(),
        warm[0],
        warm[warm.len() - 1]
    );
    assert!(median < 20_000.0, "warm reply median {median} B");
    let d = page.drain().await?;
    let sends = |c: SendClass| {
        d.records
            .iter()
            .filter(|r| r.kind == RecordKind::WsSend && r.class == c)
            .count()
    };
    assert_eq!(
        sends(SendClass::Input),
        20,
        "one input send per mousedown/mouseup"
    );
    assert!(
        sends(SendClass::Ack) >= n,
        "every reply frame acked: {} acks for {n} frames",
        sends(SendClass::Ack)
    );
    page.close().await?;
    Ok(())
}

/// `worker=true`: the page never constructs a WebSocket (the injected recorder wraps
/// `window.WebSocket` and counts every construction), yet the board paints, trusted clicks
/// are answered and repaint, and CDP's Worker-attached Network events carry the same bytes
/// the server sent and received.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_socket_fixture_in_headless_chromium() -> Result<()> {
    let mut knobs = Knobs::default();
    knobs.set("los_work", "300").map_err(anyhow::Error::msg)?;
    knobs.set("worker", "true").map_err(anyhow::Error::msg)?;
    let server = Server::start(knobs).await?;
    assert!(server.knobs().worker);
    let browser = Browser::launch(LaunchOptions::default()).await?;
    let pids = browser.pids();
    let result = exercise_worker(&browser, &server).await;
    let left = close_browser(browser, &pids).await;
    server.shutdown().await;
    result?;
    let left = left?;
    assert!(left.is_empty(), "Chromium processes left: {left:?}");
    Ok(())
}

/// What the page says about its socket: the page-hook count is the injected recorder's.
const WORKER_FACTS: &str = "({ isolated: self.crossOriginIsolated, knob: document.documentElement.dataset.worker, \
    socket: window.fixture.socket, connected: window.fixture.connected, errors: window.fixture.errors, \
    frames: window.fixture.frames, bytes: window.fixture.bytes, inputsSent: window.fixture.inputsSent, \
    acksSent: window.fixture.acksSent, pageSockets: window.__arenaRecorder.stats().sockets })";

async fn exercise_worker(browser: &Browser, server: &ServerHandle) -> Result<()> {
    // --- The board paints through the Worker's socket; the page made none of its own.
    let classifier = ClassifierSpec::first_byte(&[1, 2, 3, 4, 5], &[0x10]);
    let page = open_board(
        browser,
        &server.url(),
        RecorderConfig::with_classifier(classifier),
    )
    .await?;
    assert!(page.network_events_on(), "the CDP tap is on");
    let facts = page.eval_json(WORKER_FACTS).await?;
    eprintln!("worker page facts: {facts}");
    assert_eq!(facts["isolated"], Value::Bool(true), "{facts}");
    assert_eq!(facts["knob"], "true", "{facts}");
    assert_eq!(facts["socket"], "worker", "{facts}");
    assert_eq!(facts["connected"], Value::Bool(true), "{facts}");
    assert_eq!(facts["errors"], 0, "{facts}");
    assert_eq!(
        facts["pageSockets"], 0,
        "window.WebSocket constructed: {facts}"
    );
    // One connection at the server, so the Worker's.
    let c = server.counters();
    assert_eq!((c.connections_total, c.connections_open), (1, 1), "{c:?}");
    let board = server.frames().first().cloned().expect("board frame");
    assert_eq!(board.kind, FrameKind::Board);
    assert_eq!(facts["bytes"].as_u64(), Some(board.bytes), "{facts}");
    let (before, opaque, colours) = board_pixels(&page).await?;
    assert!(opaque > 0.999, "board not fully painted: {opaque}");
    assert!(colours > 100.0, "board looks blank: {colours} colours");

    // --- Five trusted clicks (CDP Input.dispatchMouseEvent on #board), each answered and
    // painted.
    page.clear().await?;
    server.clear_frames();
    let clicks = 5u32;
    arena_fixture::drive::click_tiles(&page, server, clicks, Duration::from_secs(20)).await?;
    let (after, _, _) = board_pixels(&page).await?;
    let changed = (0..before.len().min(after.len()))
        .filter(|&i| before[i] != after[i])
        .count();
    assert!(changed >= 3, "clicks repainted {changed} tiles");
    let replies = server.frames();
    let c = server.counters();
    assert_eq!(
        c.inputs,
        u64::from(2 * clicks),
        "inputs at the server: {c:?}"
    );
    assert_eq!(server.answered_inputs(), 2 * clicks);
    assert_eq!(c.bad_messages, 0, "{c:?}");
    assert_eq!(c.connections_total, 1, "{c:?}");
    let facts = page.eval_json(WORKER_FACTS).await?;
    eprintln!("worker page facts after {clicks} clicks: {facts}");
    assert_eq!(
        facts["pageSockets"], 0,
        "window.WebSocket constructed: {facts}"
    );
    assert_eq!(facts["errors"], 0, "{facts}");
    assert_eq!(facts["inputsSent"], 2 * clicks, "{facts}");
    // Every frame the server sent reached the page, byte for byte, and was acked.
    assert!(facts["frames"].as_u64() > Some(1), "{facts}");
    assert_eq!(
        facts["frames"].as_u64(),
        Some(c.frames_sent),
        "{facts} {c:?}"
    );
    assert_eq!(facts["bytes"].as_u64(), Some(c.bytes_sent), "{facts} {c:?}");
    let acked = |c: &arena_fixture::Counters| c.acks + c.acks_unknown;
    let end = Instant::now() + Duration::from_secs(5);
    while acked(&server.counters()) < c.frames_sent && Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let c2 = server.counters();
    assert_eq!((c2.acks, c2.acks_unknown), (c.frames_sent, 0), "{c2:?}");

    // --- The pilot's view: no page-hook socket, so the drain's socket records are CDP
    // Network events from the Worker's target; the sizes are the wire's.
    tokio::time::sleep(Duration::from_millis(100)).await; // CDP events may trail the page
    let d = page.drain().await?;
    assert_eq!(d.socket_source, SocketSource::Cdp, "{:?}", d.records);
    let of = |k: RecordKind, c: SendClass| -> Vec<u32> {
        d.records
            .iter()
            .filter(|r| r.kind == k && r.class == c)
            .map(|r| r.size)
            .collect()
    };
    let inputs = of(RecordKind::WsSend, SendClass::Input);
    assert_eq!(inputs, vec![15; 2 * clicks as usize], "input sends");
    let acks = of(RecordKind::WsSend, SendClass::Ack);
    assert_eq!(acks, vec![5; replies.len()], "one 5 B ack per reply");
    let mut got = of(RecordKind::WsRecv, SendClass::Other);
    let mut sent: Vec<u32> = replies.iter().map(|f| f.bytes as u32).collect();
    got.sort_unstable();
    sent.sort_unstable();
    assert_eq!(got, sent, "received frame sizes vs the server's");
    assert!(d
        .records
        .iter()
        .any(|r| r.kind == RecordKind::Input && r.event == "mousedown" && r.trusted));
    assert!(d.records.iter().any(|r| r.kind == RecordKind::Draw));
    page.close().await?;

    // --- The app's own recorder (?perf=1) still sees the page's side of the socket: what
    // it hands the Worker and what the Worker hands back, with the real sizes. (Frame ids
    // restart on the new connection: forget the old one's.)
    server.clear_frames();
    let page = open_board(browser, &format!("{}?perf=1", server.url()), app_recorder()).await?;
    page.clear().await?;
    arena_fixture::drive::click_tiles(&page, server, 1, Duration::from_secs(20)).await?;
    let d = page.drain().await?;
    assert_eq!(d.socket_source, SocketSource::AppRecorder);
    let sends = |c: SendClass, size: u32| {
        d.records
            .iter()
            .filter(|r| r.kind == RecordKind::WsSend && r.class == c && r.size == size)
            .count()
    };
    assert_eq!(sends(SendClass::Input, 15), 2, "{:?}", d.records);
    assert!(sends(SendClass::Ack, 5) >= 1, "{:?}", d.records);
    assert!(d
        .records
        .iter()
        .any(|r| r.kind == RecordKind::WsRecv && r.size > 0));
    assert!(d.records.iter().any(|r| r.kind == RecordKind::Paint));
    page.close().await?;
    Ok(())
}
