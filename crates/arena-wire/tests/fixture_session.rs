//! A real Chromium session against the built-in fixture, captured on `lo` while it runs:
//! the summary's WebSocket frames and payload per direction equal tshark's (`-Y
//! websocket`), and its app bytes equal the message sizes the page itself saw; once on the
//! stock fixture (no extension: app bytes equal frame payload) and once with its `deflate`
//! knob (permessage-deflate negotiated with Chromium, so app bytes are the inflated sizes
//! and the frames carry fewer).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use arena_browser::{Browser, ClassifierSpec, Drain, LaunchOptions, RecordKind};
use arena_browser::{Quiet, RecorderConfig};
use arena_fixture::session::FrameKind;
use arena_fixture::{Knobs, Server, ServerHandle};
use arena_sys::procfs::alive as process_alive;
use arena_wire::{Capture, CaptureSource, WireSummary};

use crate::common::{assert_tshark_agrees, summary_on, tmpdir};

/// Loads the fixture with the injected recorder, waits for the first board, clicks on the
/// board, and drains everything the recorder saw since the page started (never cleared).
async fn session(browser: &Browser, server: &ServerHandle, clicks: u32) -> Result<Drain> {
    // Classified by first byte as the pilot does; the sizes do not depend on it.
    let rec =
        RecorderConfig::with_classifier(ClassifierSpec::first_byte(&[1, 2, 3, 4, 5], &[0x10]));
    let page = browser.new_page(&server.url(), Some(rec)).await?;
    page.wait_until(&arena_fixture::painted_js(1), Duration::from_secs(20))
        .await
        .context("first board")?;
    // A mousedown and a mouseup per click, each an input message.
    arena_fixture::drive::click_tiles(&page, server, clicks, Duration::from_secs(20)).await?;
    // The page acks the last frame after painting it: let that ack reach the wire, and
    // check the socket stayed quiet (nothing in flight either way).
    let quiet = page
        .wait_quiet(Duration::from_millis(300), Duration::from_secs(5))
        .await?;
    // Silent is quiet too; where the page cannot tell (network events on), the drain says.
    if matches!(quiet, Quiet::TimedOut) {
        bail!("the fixture's socket did not go quiet within 5 s");
    }
    page.drain().await
}

/// What one captured session gave: the page's records, the summary of the capture, the
/// pcap and the fixture's port, and the first frame the server sent (kind, payload bytes).
struct Captured {
    drain: Drain,
    wire: WireSummary,
    pcap: PathBuf,
    port: u16,
    first_frame: Option<(FrameKind, u64)>,
}

/// Runs `clicks` clicks of a fixture with `knobs` in a fresh Chromium, captured from before
/// the browser starts to before the page closes; checks no Chromium process outlives it.
fn captured_session(name: &str, knobs: Knobs, clicks: u32) -> Captured {
    let started = Instant::now();
    let pcap = tmpdir().join(format!("{name}.pcap"));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(Server::start(knobs)).unwrap();
    let port = server.addr().port();
    // Started before the browser exists, so the page load and the upgrade are captured.
    let cap = Capture::start("lo", port, &pcap).unwrap();
    assert!(
        matches!(cap.source(), CaptureSource::Pcap { .. }),
        "packet capture needs root or CAP_NET_RAW"
    );
    let browser = rt
        .block_on(Browser::launch(LaunchOptions::default()))
        .expect("launch Chromium (apt-get install chromium)");
    let pids = browser.pids();
    assert!(!pids.is_empty());
    let drained = rt.block_on(session(&browser, &server, clicks));
    // Stopped while the page is still open: a close handshake is no part of what the page
    // saw, so it stays out of the capture.
    let stats = cap.stop().unwrap();
    rt.block_on(browser.close()).unwrap();
    let end = Instant::now() + Duration::from_secs(5);
    let left = loop {
        let left: Vec<i32> = pids.iter().copied().filter(|&p| process_alive(p)).collect();
        if left.is_empty() || Instant::now() > end {
            break left;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let first_frame = server.frames().first().map(|f| (f.kind, f.bytes));
    rt.block_on(server.shutdown());
    assert!(left.is_empty(), "Chromium processes left: {left:?}");
    let drain = drained.unwrap();
    assert_eq!(stats.kernel_drops, 0);
    assert_eq!(drain.dropped, 0, "the recorder's ring kept every record");
    let wire = summary_on(&pcap, port);
    let (c2s, s2c) = (&wire.client_to_server, &wire.server_to_client);
    eprintln!(
        "{name} session: {} messages c->s ({} B app, {} B payload), {} messages s->c \
         ({} B app, {} B payload), {} connections, {} packets captured, {:.1}s",
        c2s.messages,
        c2s.app_bytes,
        c2s.frame_payload_bytes,
        s2c.messages,
        s2c.app_bytes,
        s2c.frame_payload_bytes,
        wire.connections,
        stats.packets_written,
        started.elapsed().as_secs_f64()
    );
    Captured {
        drain,
        wire,
        pcap,
        port,
        first_frame,
    }
}

/// Message sizes the page saw of `kind`, from its first message on.
fn page_sizes(d: &Drain, kind: RecordKind) -> Vec<u64> {
    d.records
        .iter()
        .filter(|r| r.kind == kind)
        .map(|r| r.size as u64)
        .collect()
}

/// The checks both sessions share: the page saw the first board first, exactly one
/// connection is the upgraded socket, tshark agrees frame for frame, and per direction the
/// summary's messages and app bytes are what the page sent and received.
fn assert_agrees_with_tshark_and_the_page(c: &Captured, clicks: u32) {
    let (sent, recv) = (
        page_sizes(&c.drain, RecordKind::WsSend),
        page_sizes(&c.drain, RecordKind::WsRecv),
    );
    assert!(
        sent.len() as u32 >= 2 * clicks,
        "one input message per mousedown and mouseup at least: {sent:?}"
    );
    let (kind, first) = c.first_frame.unwrap();
    assert_eq!(kind, FrameKind::Board);
    assert!(
        recv.first() == Some(&first) && first >= 500_000,
        "the first message the page saw is the first board, {first} B: {:?}",
        &recv[..recv.len().min(3)]
    );
    let w = &c.wire;
    // The page's load (and any connection Chromium opens ahead) shares the port: those are
    // counted as TCP but carry no frames. Exactly one connection is the upgraded socket.
    let upgraded = w
        .connection_list
        .iter()
        .filter(|c| c.client_framing == "websocket" && c.server_framing == "websocket")
        .count();
    assert_eq!(upgraded, 1, "{:?}", w.connection_list);
    assert_tshark_agrees(w, &c.pcap, c.port);
    for (i, (d, page)) in [(&w.client_to_server, &sent), (&w.server_to_client, &recv)]
        .into_iter()
        .enumerate()
    {
        assert_eq!(d.app_unknown_messages, 0);
        assert_eq!(d.missing_bytes, 0, "direction {i}");
        assert_eq!(
            (d.messages, d.app_bytes),
            (page.len() as u64, page.iter().sum::<u64>()),
            "messages and app bytes vs what the page saw, direction {i}"
        );
        let max = page.iter().copied().max().unwrap_or(0) as f64;
        assert_eq!(d.message_app_size.as_ref().map(|s| s.max), Some(max));
    }
}

/// tshark's reading of the upgrade answer's `Sec-WebSocket-Extensions`, one line per
/// response that has the header.
fn tshark_extensions_answered(c: &Captured) -> Vec<String> {
    let out = std::process::Command::new("tshark")
        .args(["-n", "-r"])
        .arg(&c.pcap)
        .args(["-d", &format!("tcp.port=={},http", c.port)])
        .args(["-Y", "http.response.code == 101", "-T", "fields"])
        .args(["-e", "http.sec_websocket_extensions"])
        .output()
        .expect("tshark (apt-get install tshark)");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn fixture_session_in_chromium_agrees_with_tshark_and_the_page() {
    let clicks = 10;
    let mut knobs = Knobs::default();
    // The tests run unoptimised: keep the server's per-click work light.
    knobs.set("los_work", "300").unwrap();
    let c = captured_session("fixture", knobs, clicks);
    assert_agrees_with_tshark_and_the_page(&c, clicks);
    for d in [&c.wire.client_to_server, &c.wire.server_to_client] {
        assert_eq!(
            d.compressed_messages, 0,
            "the stock fixture negotiates no deflate"
        );
        assert_eq!(
            d.app_bytes, d.frame_payload_bytes,
            "no deflate: app = payload"
        );
    }
    assert_eq!(tshark_extensions_answered(&c), vec![String::new()]);
    assert!(c.wire.connection_list.iter().all(|x| x.deflate.is_none()));
}

#[test]
fn fixture_with_deflate_negotiates_it_with_chromium_and_agrees_after_inflate() {
    let clicks = 4;
    let mut knobs = Knobs::default();
    knobs.set("los_work", "300").unwrap();
    knobs.set("deflate", "true").unwrap();
    knobs.set("deflate_bits", "12").unwrap();
    // Stored PNGs: the board's bytes are compressible, as most apps' messages are.
    knobs.set("png_level", "0").unwrap();
    let c = captured_session("fixture-deflate", knobs, clicks);
    // Chromium offered the extension and the fixture answered it, with the knob's window
    // and context takeover (no `*_no_context_takeover`), as tshark reads the answer.
    let answered = tshark_extensions_answered(&c);
    assert_eq!(answered.len(), 1, "{answered:?}");
    let ext = &answered[0];
    assert!(
        ext.starts_with("permessage-deflate") && ext.contains("server_max_window_bits=12"),
        "{ext}"
    );
    assert!(!ext.contains("no_context_takeover"), "{ext}");
    let conn = c
        .wire
        .connection_list
        .iter()
        .find(|x| x.deflate.is_some())
        .expect("the summary saw the negotiation");
    let d = conn.deflate.as_ref().unwrap();
    assert!(!d.client_no_context_takeover && !d.server_no_context_takeover);
    assert_agrees_with_tshark_and_the_page(&c, clicks);
    let s2c = &c.wire.server_to_client;
    // Every server message went compressed (yawc compresses every data message), and the
    // wire carries fewer bytes than the page got.
    assert_eq!(s2c.compressed_messages, s2c.messages, "{s2c:?}");
    assert!(s2c.frame_payload_bytes < s2c.app_bytes, "{s2c:?}");
    let ratio = s2c
        .compression_ratio
        .expect("a ratio with compressed messages");
    let want = s2c.app_bytes as f64 / s2c.frame_payload_bytes as f64;
    assert!(
        (ratio - want).abs() < 1e-9 && ratio > 1.5,
        "{ratio} vs {want}"
    );
    // Chromium compresses its own messages too.
    assert!(c.wire.client_to_server.compressed_messages > 0);
}
