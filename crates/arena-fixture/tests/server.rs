//! The fixture server over real loopback sockets: page and headers, the wire protocol,
//! the knobs' effects, bad input, and 50 concurrent clients.

use std::time::{Duration, Instant};

use arena_fixture::proto::{
    decode_frame, encode_ack, encode_input, DecodedFrame, Input, InputKind, Op,
};
use arena_fixture::session::FrameKind;
use arena_fixture::{Knobs, Server, ServerHandle, ServerOptions, StatsLog};
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{
    connect_async, connect_async_with_config, MaybeTlsStream, WebSocketStream,
};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Knobs for tests: a light line-of-sight sweep, since tests run unoptimised.
fn knobs(pairs: &[(&str, &str)]) -> Knobs {
    let mut k = Knobs::default();
    k.set("los_work", "200").unwrap();
    for (n, v) in pairs {
        k.set(n, v).unwrap_or_else(|e| panic!("{e}"));
    }
    k
}

async fn http_get(h: &ServerHandle, path: &str) -> (String, String) {
    let mut s = TcpStream::connect(h.addr()).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut buf))
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (head.to_ascii_lowercase(), body.to_string())
}

struct Client {
    ws: Ws,
    bytes: usize,
}

impl Client {
    async fn connect(h: &ServerHandle) -> Client {
        let (ws, _) = connect_async(h.ws_url()).await.expect("ws connect");
        Client { ws, bytes: 0 }
    }

    /// As [`Client::connect`] with Nagle off: an input sent right after an ack goes at once,
    /// not after the server's delayed ack of the ack (about 40 ms), for tests that time
    /// replies against a known hold.
    async fn connect_nodelay(h: &ServerHandle) -> Client {
        let (ws, _) = connect_async_with_config(h.ws_url(), None, true)
            .await
            .expect("ws connect");
        Client { ws, bytes: 0 }
    }

    /// Next server frame within `t`, skipping control frames; `None` on timeout or close.
    async fn frame(&mut self, t: Duration) -> Option<DecodedFrame> {
        let deadline = tokio::time::Instant::now() + t;
        loop {
            let m = tokio::time::timeout_at(deadline, self.ws.next())
                .await
                .ok()??
                .ok()?;
            match m {
                Message::Binary(b) => {
                    self.bytes += b.len();
                    return Some(decode_frame(&b).expect("well-formed frame"));
                }
                Message::Close(_) => return None,
                _ => {}
            }
        }
    }

    async fn send(&mut self, b: Vec<u8>) {
        self.ws.send(Message::Binary(b.into())).await.expect("send");
    }

    async fn input(&mut self, kind: InputKind, tx: u16, ty: u16) {
        let i = Input {
            kind,
            x: tx * 40 + 20,
            y: ty * 40 + 20,
            code: 0,
            t_ms: 1.5,
        };
        self.send(encode_input(&i)).await;
    }

    async fn ack(&mut self, id: u32) {
        self.send(encode_ack(id)).await;
    }

    /// Board frame, acked.
    async fn board(&mut self) -> DecodedFrame {
        let f = self
            .frame(Duration::from_secs(20))
            .await
            .expect("board frame");
        self.ack(f.id).await;
        f
    }

    /// Waits for the close frame and returns (code, reason); None if the socket just ended.
    async fn closed(&mut self) -> Option<(u16, String)> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            match tokio::time::timeout_at(deadline, self.ws.next()).await {
                Ok(Some(Ok(Message::Close(Some(c))))) => {
                    return Some((c.code.into(), c.reason.to_string()))
                }
                Ok(Some(Ok(Message::Close(None)))) | Ok(None) | Ok(Some(Err(_))) => return None,
                Ok(Some(Ok(_))) => {}
                Err(_) => panic!("connection still open after 5 s"),
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_is_isolated_and_knobs_are_served() {
    let h = Server::start(knobs(&[("lazy_png", "true"), ("tick_ms", "8")]))
        .await
        .unwrap();
    assert!(h.url().starts_with("http://127.0.0.1:"), "{}", h.url());
    let (head, body) = http_get(&h, "/").await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(
        head.contains("cross-origin-opener-policy: same-origin"),
        "{head}"
    );
    assert!(
        head.contains("cross-origin-embedder-policy: require-corp"),
        "{head}"
    );
    assert!(
        body.contains("id=\"board\"") && body.contains("id=\"hud\""),
        "{body}"
    );
    let (head, body) = http_get(&h, "/fixture.js").await;
    assert!(
        head.starts_with("http/1.1 200") && head.contains("javascript"),
        "{head}"
    );
    assert!(body.contains("arenaPerf") && body.contains("createImageBitmap"));
    // The Worker's script is served whatever the knob, isolated like the page (COEP).
    let (head, body) = http_get(&h, "/fixture-worker.js").await;
    assert!(
        head.starts_with("http/1.1 200") && head.contains("javascript"),
        "{head}"
    );
    assert!(
        head.contains("cross-origin-embedder-policy: require-corp"),
        "{head}"
    );
    assert!(body.contains("new WebSocket"), "{body}");
    let (head, body) = http_get(&h, "/knobs").await;
    assert!(head.contains("application/json"), "{head}");
    let served: Knobs = serde_json::from_str(&body).unwrap();
    assert_eq!(&served, h.knobs());
    assert!(served.lazy_png && served.tick_ms == 8);
    let (head, _) = http_get(&h, "/nope").await;
    assert!(head.starts_with("http/1.1 404"), "{head}");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_knob_is_rendered_into_the_page_and_served() {
    let mut boards = Vec::new();
    for (value, attr) in [
        ("false", "data-worker=\"false\""),
        ("true", "data-worker=\"true\""),
    ] {
        let h = Server::start(knobs(&[("worker", value)])).await.unwrap();
        let (head, body) = http_get(&h, "/").await;
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert!(body.contains(attr) && !body.contains("{{"), "{body}");
        let (_, json) = http_get(&h, "/knobs").await;
        let served: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            served["worker"],
            serde_json::Value::Bool(value == "true"),
            "{json}"
        );
        let mut c = Client::connect(&h).await;
        let f = c.board().await;
        boards.push((f.id, c.bytes));
        h.shutdown().await;
    }
    // The knob is the page's business: the wire is the same either way.
    assert_eq!(boards[0], boards[1], "{boards:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn board_then_replies_with_bytes_counted_at_the_server() {
    let h = Server::start(knobs(&[])).await.unwrap();
    let mut c = Client::connect(&h).await;
    let board = c.board().await;
    assert_eq!(board.id, 1);
    assert!(matches!(
        board.ops[0],
        Op::Hello {
            w: 960,
            h: 640,
            tile: 40,
            ack_paint: false,
            firing: true
        }
    ));
    let defines = board
        .ops
        .iter()
        .filter(|o| matches!(o, Op::Define { .. }))
        .count();
    assert_eq!(defines, 24 * 16);
    let board_bytes = c.bytes;
    assert!(board_bytes >= 500_000, "first paint {board_bytes} B");
    let mut reply_sizes = Vec::new();
    for i in 0..12u16 {
        let before = c.bytes;
        let kind = if i % 2 == 0 {
            InputKind::MouseDown
        } else {
            InputKind::MouseUp
        };
        c.input(kind, 6 + i, 3 + i % 9).await;
        let f = c.frame(Duration::from_secs(10)).await.expect("reply");
        assert!(
            f.ops.iter().any(|o| matches!(o, Op::Hud(_))),
            "every reply updates the HUD"
        );
        c.ack(f.id).await;
        reply_sizes.push(c.bytes - before);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let frames = h.frames();
    assert_eq!(frames.len(), 13);
    assert_eq!(frames[0].kind, FrameKind::Board);
    assert_eq!(frames[0].bytes as usize, board_bytes);
    for (f, got) in frames[1..].iter().zip(&reply_sizes) {
        assert_eq!(f.kind, FrameKind::Reply);
        assert_eq!(
            f.bytes as usize, *got,
            "server and client count the same bytes"
        );
        assert!(f.server_rendering_ms >= 0.0 && f.cpu_ms > 0.0);
    }
    reply_sizes.sort_unstable();
    assert!(
        reply_sizes[6] < 20_000,
        "warm reply median {} B",
        reply_sizes[6]
    );
    let cnt = h.counters();
    assert_eq!(cnt.frames_sent, 13);
    assert_eq!(cnt.inputs, 12);
    assert_eq!(cnt.acks, 13);
    assert_eq!(cnt.bad_messages, 0);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn startup_ms_holds_the_board_back_from_the_open_socket() {
    // The board's encode takes what the machine gives it (a debug build beside this
    // binary's fifty clients read 2064 ms for 1500 held back, and 3549 ms for the unheld
    // board), so the unheld board is only timed, within the frame's own 20 s wait, and
    // the hold is bounded above by twice that time plus a second: the encode's time
    // varies between two boards on a loaded machine, and a hold counted twice still
    // fails this wherever the unheld board takes under half the hold.
    let mut unheld = 0;
    for ms in [0u64, 1500] {
        let (floor, ceiling) = if ms == 0 {
            (0, u64::MAX)
        } else {
            (ms, ms + 2 * unheld + 1000)
        };
        let h = Server::start(knobs(&[("startup_ms", &ms.to_string())]))
            .await
            .unwrap();
        // Timed from before the connect: the server counts from its accept, which comes
        // before this side has seen the upgrade's answer (timed from after it, a loaded
        // machine read 1499 ms for 1500).
        let opened = std::time::Instant::now();
        let mut c = Client::connect(&h).await;
        let board = c.frame(Duration::from_secs(20)).await.expect("board frame");
        let took = opened.elapsed().as_millis() as u64;
        assert_eq!(board.id, 1);
        assert!(
            c.bytes >= 500_000,
            "the first frame is the board: {} B",
            c.bytes
        );
        assert!(
            (floor..ceiling).contains(&took),
            "startup_ms={ms}: board {took} ms after the connect began (unheld: {unheld} ms)"
        );
        unheld = took;
        h.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_flight_window_holds_frames_until_the_ack() {
    let h = Server::start(knobs(&[("phase", "deploy")])).await.unwrap();
    let mut c = Client::connect(&h).await;
    let board = c.frame(Duration::from_secs(20)).await.unwrap();
    c.input(InputKind::MouseDown, 3, 3).await;
    assert!(
        c.frame(Duration::from_millis(400)).await.is_none(),
        "a frame went out with the board unacked"
    );
    c.ack(board.id).await;
    let f = c
        .frame(Duration::from_secs(5))
        .await
        .expect("reply after the ack");
    assert_eq!(f.id, board.id + 1);
    // Acking a frame that was never sent is counted and ignored.
    c.ack(9999).await;
    c.ack(f.id).await;
    c.input(InputKind::MouseUp, 3, 3).await;
    assert!(c.frame(Duration::from_secs(5)).await.is_some());
    assert_eq!(h.counters().acks_unknown, 1);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delay_drop_blink_and_ack_mode_knobs_act() {
    let h = Server::start(knobs(&[
        ("delay_ms", "120"),
        ("drop_every", "2"),
        ("ack", "paint"),
        ("phase", "deploy"),
    ]))
    .await
    .unwrap();
    let mut c = Client::connect(&h).await;
    let board = c.board().await;
    assert!(matches!(
        board.ops[0],
        Op::Hello {
            ack_paint: true,
            firing: false,
            ..
        }
    ));
    let t0 = Instant::now();
    c.input(InputKind::MouseDown, 4, 4).await;
    let f = c
        .frame(Duration::from_secs(5))
        .await
        .expect("first input answered");
    let waited = t0.elapsed();
    assert!(
        waited >= Duration::from_millis(120),
        "delay_ms=120 but replied in {waited:?}"
    );
    c.ack(f.id).await;
    c.input(InputKind::MouseDown, 5, 4).await;
    assert!(
        c.frame(Duration::from_millis(600)).await.is_none(),
        "drop_every=2: the 2nd input has no reply"
    );
    c.input(InputKind::MouseDown, 6, 4).await;
    assert!(
        c.frame(Duration::from_secs(5)).await.is_some(),
        "the 3rd input is answered"
    );
    assert_eq!(h.counters().inputs_dropped, 1);
    h.shutdown().await;

    let h = Server::start(knobs(&[("blink_ms", "100")])).await.unwrap();
    let mut c = Client::connect(&h).await;
    c.board().await;
    let t0 = Instant::now();
    let mut blinks = 0;
    while t0.elapsed() < Duration::from_millis(1000) {
        if let Some(f) = c.frame(Duration::from_millis(300)).await {
            c.ack(f.id).await;
            blinks += 1;
        }
    }
    let per_s = blinks as f64 / t0.elapsed().as_secs_f64();
    assert!(
        (5.0..=12.0).contains(&per_s),
        "blink_ms=100 gave {per_s:.1} frames/s with no input (n={blinks})"
    );
    assert!(h
        .frames()
        .iter()
        .skip(1)
        .all(|f| f.kind == FrameKind::Blink && f.inputs == 0));
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tail_knobs_hold_back_every_kth_reply() {
    // Deploy phase and a 1 ms tick: an ordinary reply is a few ms, far from the 100 ms hold.
    let h = Server::start(knobs(&[
        ("tail_every", "4"),
        ("tail_ms", "100"),
        ("phase", "deploy"),
        ("tick_ms", "1"),
    ]))
    .await
    .unwrap();
    let mut c = Client::connect_nodelay(&h).await;
    c.board().await;
    let mut waits = Vec::new();
    for n in 0..12u16 {
        // Presses and releases both count as replies.
        let kind = if n % 2 == 0 {
            InputKind::MouseDown
        } else {
            InputKind::MouseUp
        };
        let t0 = Instant::now();
        c.input(kind, 2 + n, 5).await;
        let f = c
            .frame(Duration::from_secs(5))
            .await
            .unwrap_or_else(|| panic!("input {} unanswered", n + 1));
        waits.push(t0.elapsed());
        c.ack(f.id).await;
    }
    let hold = Duration::from_millis(100);
    let tails: Vec<usize> = (0..waits.len()).filter(|&i| waits[i] >= hold).collect();
    assert_eq!(
        tails,
        [3, 7, 11],
        "only the 4th, 8th and 12th replies wait 100 ms: {waits:?}"
    );
    // The server logs a frame once it has written it, so the client may hold the last one
    // a moment before the log does (a loaded machine showed 11): wait for it, bounded.
    let replies = || {
        h.frames()
            .iter()
            .filter(|f| f.kind == FrameKind::Reply)
            .count()
    };
    let t = Instant::now();
    while replies() < 12 && t.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(replies(), 12);
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_log_lines_one_group_per_frame() {
    let dir = std::env::temp_dir().join(format!("arena-fixture-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("stats.log");
    let _ = std::fs::remove_file(&path);
    let opts = ServerOptions {
        port: 0,
        stats_log: Some(StatsLog::File(path.clone())),
    };
    let h = Server::start_with(knobs(&[]), opts).await.unwrap();
    let mut c = Client::connect(&h).await;
    c.board().await;
    for i in 0..3 {
        c.input(InputKind::MouseDown, 10 + i, 5).await;
        let f = c.frame(Duration::from_secs(5)).await.unwrap();
        c.ack(f.id).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let frames = h.frames();
    h.shutdown().await;
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let mut ids = Vec::new();
    let mut sizes = Vec::new();
    for line in text.lines() {
        let parts: Vec<&str> = line.split(',').collect();
        assert_eq!(parts.len(), 4, "{line}");
        let ts = parts[0].as_bytes();
        // dd-MMM-yyyy-HH:mm:ss.SSS
        assert_eq!(ts.len(), 24, "{line}");
        assert!(
            ts[2] == b'-' && ts[6] == b'-' && ts[11] == b'-' && ts[14] == b':' && ts[20] == b'.',
            "{line}"
        );
        assert_eq!(parts[1], "fixture-1");
        let v: f64 = parts[3]
            .parse()
            .unwrap_or_else(|_| panic!("value of {line}"));
        match parts[2] {
            "frameId" => ids.push(v as u32),
            "outboundSize" => sizes.push(v as u64),
            "latencyServerRendering"
            | "renderMs"
            | "encodeMs"
            | "cpuMs"
            | "constantsSent"
            | "constantCacheHits" => {}
            other => panic!("unexpected metric {other}"),
        }
    }
    assert_eq!(ids, frames.iter().map(|f| f.frame_id).collect::<Vec<_>>());
    assert_eq!(sizes, frames.iter().map(|f| f.bytes).collect::<Vec<_>>());
    assert_eq!(text.lines().count(), 8 * frames.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_closes_that_connection_and_others_keep_going() {
    let h = Server::start(knobs(&[("phase", "deploy")])).await.unwrap();
    let mut good = Client::connect(&h).await;
    good.board().await;

    let cases: Vec<(&str, Message, u16)> = vec![
        (
            "unknown type byte",
            Message::Binary(vec![0x7f, 0, 0, 0, 0].into()),
            1002,
        ),
        (
            "truncated input",
            Message::Binary(vec![0x01, 10, 0].into()),
            1002,
        ),
        ("truncated ack", Message::Binary(vec![0x10, 1].into()), 1002),
        ("empty message", Message::Binary(Vec::new().into()), 1002),
        ("text frame", Message::Text("{\"click\":1}".into()), 1003),
        // RFC 6455 5.5: a control frame's payload is at most 125 bytes; more is a
        // protocol error (1002), not an oversized message (1009).
        (
            "ping over 125 B",
            Message::Ping(vec![7u8; 200].into()),
            1002,
        ),
        (
            "pong over 125 B",
            Message::Pong(vec![7u8; 126].into()),
            1002,
        ),
    ];
    let mut expected_bad = 0;
    for (name, msg, code) in cases {
        let mut c = Client::connect(&h).await;
        c.board().await;
        c.ws.send(msg).await.unwrap();
        let (got, reason) = c
            .closed()
            .await
            .unwrap_or_else(|| panic!("{name}: no close frame"));
        assert_eq!(got, code, "{name}: {reason}");
        assert!(!reason.is_empty(), "{name}: close without a reason");
        expected_bad += 1;
        good.input(InputKind::MouseDown, 2, 2).await;
        let f = good
            .frame(Duration::from_secs(5))
            .await
            .unwrap_or_else(|| panic!("good client unanswered after {name}"));
        good.ack(f.id).await;
    }

    // A 16 MB message: refused at the frame header, the connection is closed.
    {
        let mut c = Client::connect(&h).await;
        c.board().await;
        let big = vec![0x01u8; 16 * 1024 * 1024];
        let _ = c.ws.send(Message::Binary(big.into())).await;
        if let Some((code, reason)) = c.closed().await {
            assert_eq!(code, 1009, "{reason}");
        }
        expected_bad += 1;
    }

    // Garbage before a handshake: the HTTP layer refuses it; nothing else notices.
    {
        let mut s = TcpStream::connect(h.addr()).await.unwrap();
        s.write_all(b"\x16\x03\x01\x02\x00garbage\r\n\r\n\x00\xff")
            .await
            .unwrap();
        let mut buf = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut buf)).await;
        let text = String::from_utf8_lossy(&buf);
        assert!(buf.is_empty() || text.starts_with("HTTP/1.1 400"), "{text}");
        let mut s = TcpStream::connect(h.addr()).await.unwrap();
        s.write_all(
            b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
        )
        .await
        .unwrap();
        let mut buf = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut buf)).await;
        assert!(
            String::from_utf8_lossy(&buf).starts_with("HTTP/1.1 4"),
            "handshake without a key must be refused"
        );
    }

    good.input(InputKind::MouseUp, 2, 2).await;
    assert!(
        good.frame(Duration::from_secs(5)).await.is_some(),
        "good client still answered"
    );
    let cnt = h.counters();
    assert_eq!(cnt.bad_messages, expected_bad, "{cnt:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        h.counters().connections_open,
        1,
        "only the good client is left"
    );
    h.shutdown().await;
}

/// Reads one upgrade response head from `s` (after writing a handshake to /ws).
async fn ws_handshake(s: &mut TcpStream) -> String {
    s.write_all(
        b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    )
    .await
    .unwrap();
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 4096 {
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut b))
            .await
            .expect("response head within 5 s")
            .unwrap();
        if n == 0 {
            break;
        }
        head.push(b[0]);
    }
    String::from_utf8_lossy(&head).to_ascii_lowercase()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_vanishes_is_a_disconnect_not_a_bad_message() {
    let h = Server::start(knobs(&[("phase", "deploy")])).await.unwrap();
    // How long the session outlives its client: nothing is left to do but notice.
    let ended_within = |open: u64, t0: Instant| {
        let h = &h;
        async move {
            while h.counters().connections_open > open && t0.elapsed() < Duration::from_secs(10) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            assert_eq!(h.counters().connections_open, open, "session left open");
            t0.elapsed()
        }
    };
    // EOF without a close frame, once the board is there and once mid-board.
    let mut c = Client::connect(&h).await;
    c.board().await;
    let t0 = Instant::now();
    drop(c);
    let eof = ended_within(0, t0).await;
    let mut s = TcpStream::connect(h.addr()).await.unwrap();
    assert!(ws_handshake(&mut s).await.starts_with("http/1.1 101"));
    let t0 = Instant::now();
    drop(s);
    let mid_board = ended_within(0, t0).await;
    // A reset (SO_LINGER 0), after the board.
    let mut c = Client::connect(&h).await;
    c.board().await;
    if let MaybeTlsStream::Plain(tcp) = c.ws.get_ref() {
        tcp.set_zero_linger().unwrap();
    }
    let t0 = Instant::now();
    drop(c);
    let reset = ended_within(0, t0).await;
    eprintln!("vanished: sessions ended {eof:?} (EOF), {mid_board:?} (EOF mid-board), {reset:?} (reset) after");
    // Under the writer's 2 s grace: the writer must not wait for a verdict that came.
    for (how, t) in [("EOF", eof), ("reset", reset)] {
        assert!(
            t < Duration::from_millis(1500),
            "{how}: session ended {t:?} after its client"
        );
    }
    // A proper goodbye is neither.
    let mut c = Client::connect(&h).await;
    c.board().await;
    c.ws.close(None).await.unwrap();
    let _ = c.closed().await;
    ended_within(0, Instant::now()).await;
    let cnt = h.counters();
    assert_eq!((cnt.disconnects, cnt.bad_messages), (3, 0), "{cnt:?}");
    let (_, stats) = http_get(&h, "/stats").await;
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats["disconnects"], 3, "{stats}");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_past_max_connections_get_503_until_one_ends() {
    let h = Server::start(knobs(&[("max_connections", "2"), ("phase", "deploy")]))
        .await
        .unwrap();
    let mut a = Client::connect(&h).await;
    a.board().await;
    let mut b = Client::connect(&h).await;
    b.board().await;
    for _ in 0..3 {
        let mut s = TcpStream::connect(h.addr()).await.unwrap();
        let head = ws_handshake(&mut s).await;
        assert!(head.starts_with("http/1.1 503"), "{head}");
        assert!(head.contains("retry-after: 1"), "{head}");
    }
    // The refused never reached a session; the served are still served.
    a.input(InputKind::MouseDown, 2, 2).await;
    assert!(a.frame(Duration::from_secs(5)).await.is_some());
    let cnt = h.counters();
    assert_eq!(
        (
            cnt.connections_total,
            cnt.connections_open,
            cnt.connections_refused
        ),
        (2, 2, 3),
        "{cnt:?}"
    );
    // A slot comes back when its session has ended.
    b.ws.close(None).await.unwrap();
    let _ = b.closed().await;
    let t0 = Instant::now();
    while h.counters().connections_open > 1 && t0.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut c = Client::connect(&h).await;
    c.board().await;
    assert_eq!(h.counters().connections_refused, 3);
    let (_, served) = http_get(&h, "/knobs").await;
    assert!(served.contains("\"max_connections\": 2"), "{served}");
    h.shutdown().await;
}

fn vm_rss_kb() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_clients_clicking_for_twenty_seconds() {
    // Fifty sessions take both cores: a bot test beside it read its bot at 0.06 cores.
    let _one = BOT_TESTS.lock().await;
    const CLIENTS: usize = 50;
    const RUN: Duration = Duration::from_secs(20);
    // Encode on miss only: this test is about concurrency and memory, and every client's
    // first board is still a full 384-constant paint.
    let h = Server::start(knobs(&[("lazy_png", "true"), ("los_work", "100")]))
        .await
        .unwrap();
    let rss0 = vm_rss_kb();
    let start = Instant::now();
    // Every client gets its board first, then all click together for RUN.
    let ready = std::sync::Arc::new(tokio::sync::Barrier::new(CLIENTS + 1));
    let mut tasks = Vec::new();
    for n in 0..CLIENTS {
        let url = h.ws_url();
        let ready = ready.clone();
        tasks.push(tokio::spawn(async move {
            let (ws, _) = connect_async(url)
                .await
                .map_err(|e| format!("client {n}: connect: {e}"))?;
            let mut c = Client { ws, bytes: 0 };
            let board = c
                .frame(Duration::from_secs(60))
                .await
                .ok_or(format!("client {n}: no board"))?;
            c.ack(board.id).await;
            ready.wait().await;
            let start = Instant::now();
            let (mut clicks, mut answered) = (0u32, 0u32);
            let mut worst = Duration::ZERO;
            let mut i = n as u16;
            while start.elapsed() < RUN {
                i = i.wrapping_mul(31).wrapping_add(7);
                let kind = if clicks % 2 == 0 {
                    InputKind::MouseDown
                } else {
                    InputKind::MouseUp
                };
                let t0 = Instant::now();
                c.input(kind, 3 + i % 21, i % 16).await;
                clicks += 1;
                match c.frame(Duration::from_secs(10)).await {
                    Some(f) => {
                        answered += 1;
                        worst = worst.max(t0.elapsed());
                        c.ack(f.id).await;
                    }
                    None => return Err(format!("client {n}: click {clicks} unanswered")),
                }
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
            let _ = c.ws.close(None).await;
            Ok::<_, String>((clicks, answered, worst))
        }));
    }
    tokio::time::timeout(Duration::from_secs(70), ready.wait())
        .await
        .expect("every client's board within 70 s");
    let boards_in = start.elapsed();
    let start = Instant::now();
    let mut peak = rss0;
    let mut samples = Vec::new();
    while !tasks.iter().all(|t| t.is_finished()) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let r = vm_rss_kb();
        peak = peak.max(r);
        samples.push((start.elapsed().as_secs_f64(), r));
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "load test overran"
        );
    }
    let (mut clicks, mut answered, mut worst) = (0u32, 0u32, Duration::ZERO);
    for t in tasks {
        let (c, a, w) = t.await.unwrap().unwrap_or_else(|e| panic!("{e}"));
        assert!(c >= 5, "a client clicked only {c} times");
        clicks += c;
        answered += a;
        worst = worst.max(w);
    }
    let cnt = h.counters();
    // RSS growth over the second half of the run: a leak shows as a climb here.
    let half: Vec<u64> = samples
        .iter()
        .filter(|(t, _)| *t > 10.0)
        .map(|(_, r)| *r)
        .collect();
    let climb = half
        .iter()
        .max()
        .copied()
        .unwrap_or(0)
        .saturating_sub(half.first().copied().unwrap_or(0));
    eprintln!(
        "load: {CLIENTS} clients, boards in {:.1} s, {clicks} clicks in {} s, {answered} answered, worst reply {:.0} ms, {} frames, {} B sent, \
         VmRSS start {} kB peak {} kB, climb over the last 10 s {} kB ({} samples)",
        boards_in.as_secs_f64(),
        RUN.as_secs(),
        worst.as_secs_f64() * 1e3,
        cnt.frames_sent,
        cnt.bytes_sent,
        rss0,
        peak,
        climb,
        samples.len()
    );
    assert_eq!(answered, clicks, "every click answered");
    assert_eq!(cnt.connections_total, CLIENTS as u64);
    assert_eq!(cnt.bad_messages, 0);
    assert!(peak < rss0 + 1_000_000, "VmRSS grew by {} kB", peak - rss0);
    assert!(
        climb < 150_000,
        "VmRSS climbed {climb} kB in the second half"
    );
    // Every session ends (its thread joined) once its client has closed.
    let t0 = Instant::now();
    while h.counters().connections_open > 0 && t0.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(h.counters().connections_open, 0, "sessions left open");
    h.shutdown().await;
}

/// Process CPU time (user + system), from getrusage.
fn process_cpu() -> Duration {
    // SAFETY: getrusage fills the struct we own.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// Live threads of this process whose name starts with `prefix`.
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| {
                    std::fs::read_to_string(e.path().join("comm"))
                        .map(|c| c.starts_with(prefix))
                        .unwrap_or(false)
                })
                .count()
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_burn_cpu_until_shutdown() {
    let _one = BOT_TESTS.lock().await;
    let h = Server::start(knobs(&[("bots", "2"), ("bot_duty", "50")]))
        .await
        .unwrap();
    // A thread names itself once it runs: give them a moment.
    let t0 = Instant::now();
    while threads_named("fixture-bot") < 2 && t0.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(threads_named("fixture-bot"), 2);
    let c0 = process_cpu();
    let t0 = Instant::now();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let used = (process_cpu() - c0).as_secs_f64() / t0.elapsed().as_secs_f64();
    // Two bots at 50 % are about one core; a shared machine may give them less.
    assert!(used > 0.3, "bots used {used:.2} cores");
    h.shutdown().await;
    assert_eq!(
        threads_named("fixture-bot"),
        0,
        "bot threads outlived the server"
    );
}

/// The bot tests count this process's bot threads and the CPU they get, and the
/// fifty-client test takes every core: one of them at a time.
static BOT_TESTS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Cores the bot threads of this process used since the walker's last sample (other tests
/// run in the same process, so its whole CPU says nothing about the bots).
fn bot_cores(w: &mut arena_sys::sampler::TreeWalker, since: &mut (f64, Instant)) -> f64 {
    w.sample();
    let cpu = w.sample_cpu_s();
    let cores = (cpu - since.0) / since.1.elapsed().as_secs_f64();
    *since = (cpu, Instant::now());
    cores
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_on_turns_think_only_after_an_input() {
    let _one = BOT_TESTS.lock().await;
    let h = Server::start(knobs(&[
        ("bots", "1"),
        ("bot_duty", "100"),
        ("bot_turn_ms", "1000"),
    ]))
    .await
    .unwrap();
    let mut c = Client::connect(&h).await;
    c.board().await;
    let me = std::process::id() as i32;
    let mut w =
        arena_sys::sampler::TreeWalker::threads_named(me, "fixture-bot", "bots", Instant::now());
    let mut since = (0.0, Instant::now());
    bot_cores(&mut w, &mut since);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let waiting = bot_cores(&mut w, &mut since);
    // The turn is timed from the input, not from its reply: a reply slowed by a loaded
    // machine (the fifty-client test shares this binary) came after a 500 ms turn had
    // ended, and the bot read 0.03 cores.
    c.input(InputKind::MouseDown, 3, 3).await;
    bot_cores(&mut w, &mut since);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let turn = bot_cores(&mut w, &mut since);
    let _ = c.frame(Duration::from_secs(5)).await;
    // One bot at 100 % is a core on its turn; a shared machine may give it less.
    assert!(
        waiting < 0.1,
        "the bot used {waiting:.2} cores before any input"
    );
    assert!(turn > 0.3, "the bot used {turn:.2} cores on its turn");
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_wait_for_the_tick_and_share_a_frame() {
    // A long tick and a wide window: four quick inputs land inside one or two ticks.
    let h = Server::start(knobs(&[
        ("tick_ms", "400"),
        ("in_flight", "8"),
        ("phase", "deploy"),
    ]))
    .await
    .unwrap();
    let mut c = Client::connect(&h).await;
    let board = c.frame(Duration::from_secs(20)).await.unwrap();
    // in_flight=8: no ack needed for the next frame to go out.
    let first = tokio::time::Instant::now();
    for i in 0..4 {
        c.input(InputKind::MouseDown, 2 + i, 2).await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A loaded machine can stretch the 30 ms of sleeps past a tick, and the session can
    // read the inputs a tick later than they were sent (CI: 3 frames for 4 inputs sent
    // within 54 ms); every tick the inputs spanned may add a frame, and still fewer
    // frames than inputs is what sharing means.
    let span_ms = first.elapsed().as_millis() as usize;
    let most = 3 + span_ms / 400;
    let mut frames = 0;
    while let Some(f) = c.frame(Duration::from_millis(900)).await {
        assert!(f.id > board.id);
        frames += 1;
    }
    let replies: Vec<_> = h
        .frames()
        .into_iter()
        .filter(|f| f.kind == FrameKind::Reply)
        .collect();
    assert_eq!(replies.iter().map(|f| f.inputs).sum::<u32>(), 4);
    assert!(
        (1..=most).contains(&frames),
        "4 inputs within {span_ms} ms at tick_ms=400 took {frames} frames (at most {most})"
    );
    h.shutdown().await;
}

/// Drags across the board at 250 moves/s for `ms` (every move with the left button held,
/// as fixture.js sends them), acking each frame as it comes; returns the reply frames the
/// server built meanwhile.
async fn drag_frames(pairs: &[(&str, &str)], ms: u64) -> usize {
    let h = Server::start(knobs(pairs)).await.unwrap();
    let mut c = Client::connect_nodelay(&h).await;
    c.board().await;
    let start = tokio::time::Instant::now();
    let mut n: u16 = 0;
    while start.elapsed() < Duration::from_millis(ms) {
        let i = Input {
            kind: InputKind::MouseMove,
            x: 40 + (n * 3) % 880,
            y: 320,
            code: 1,
            t_ms: 1.0,
        };
        c.send(encode_input(&i)).await;
        n += 1;
        let due = start + Duration::from_millis(4 * u64::from(n));
        while let Ok(Some(f)) = tokio::time::timeout_at(due, c.frame(Duration::from_secs(1))).await
        {
            c.ack(f.id).await;
        }
    }
    let replies = h
        .frames()
        .into_iter()
        .filter(|f| f.kind == FrameKind::Reply)
        .count();
    h.shutdown().await;
    replies
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tick8_sends_more_frames_per_second_than_stock_under_a_drag() {
    // pilots/fixture.toml's arms: `stock` sets no knob, `tick8` sets tick_ms = "8". Moves
    // come every 4 ms, so each tick has changes to flush: the tick alone sets the rate.
    // Both sides get a cheap frame and a wide window, so neither the PNG encode nor the wait
    // for an ack bounds the rate before the tick does: on a loaded machine, with the stock
    // encode and one frame in flight, tick8 built 41 frames to stock's 34.
    let cheap = [("lazy_png", "true"), ("in_flight", "8")];
    let (mut stock, mut tick8) = (0, 0);
    for _ in 0..2 {
        stock += drag_frames(&cheap, 400).await;
        tick8 += drag_frames(&[cheap[0], cheap[1], ("tick_ms", "8")], 400).await;
    }
    eprintln!(
        "reply frames over 2 drags of 400 ms a side (interleaved): tick8 {tick8}, stock {stock}"
    );
    // 800 ms a side: at most 50 frames at a 16 ms tick, 100 at 8 ms.
    assert!(
        tick8 as f64 > stock as f64 * 1.4,
        "reply frames over 2 drags of 400 ms: tick8 {tick8}, stock {stock}"
    );
    assert!(
        stock <= 52,
        "stock built {stock} frames in 800 ms at a 16 ms tick"
    );
}
