//! A real Chromium session against the built-in fixture, captured on `lo` while it runs:
//! the summary's WebSocket frames and payload per direction equal tshark's (`-Y
//! websocket`), and its app bytes equal the message sizes the page itself saw.
//!
//! The fixture (axum over tungstenite) does not negotiate permessage-deflate, so on this
//! session app bytes equal frame payload bytes; agreement after inflate is covered by
//! `chromium_session_agrees_with_the_page_the_server_and_tshark` in `wire.rs`, whose
//! server deflates.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use arena_browser::{Browser, ClassifierSpec, Drain, LaunchOptions, RecordKind};
use arena_browser::{Quiet, RecorderConfig};
use arena_fixture::session::FrameKind;
use arena_fixture::{Knobs, Server, ServerHandle};
use arena_sys::procfs::alive as process_alive;
use arena_wire::{Capture, CaptureSource};

mod common;
use common::{assert_tshark_agrees, summary_on, tmpdir};

const CLICKS: u32 = 10;

/// Loads the fixture with the injected recorder, waits for the first board, clicks on the
/// board, and drains everything the recorder saw since the page started (never cleared).
async fn session(browser: &Browser, server: &ServerHandle) -> Result<Drain> {
    // Classified by first byte as the pilot does; the sizes do not depend on it.
    let rec =
        RecorderConfig::with_classifier(ClassifierSpec::first_byte(&[1, 2, 3, 4, 5], &[0x10]));
    let page = browser.new_page(&server.url(), Some(rec)).await?;
    page.wait_until(&arena_fixture::painted_js(1), Duration::from_secs(20))
        .await
        .context("first board")?;
    // A mousedown and a mouseup per click, each an input message.
    arena_fixture::drive::click_tiles(&page, server, CLICKS, Duration::from_secs(20)).await?;
    // The page acks the last frame after painting it: let that ack reach the wire, and
    // check the socket stayed quiet (nothing in flight either way).
    let quiet = page
        .wait_quiet(Duration::from_millis(300), Duration::from_secs(5))
        .await?;
    if matches!(quiet, Quiet::TimedOut) {
        bail!("the fixture's socket did not go quiet within 5 s");
    }
    page.drain().await
}

#[test]
fn fixture_session_in_chromium_agrees_with_tshark_and_the_page() {
    let started = Instant::now();
    let pcap = tmpdir().join("fixture.pcap");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut knobs = Knobs::default();
    // The tests run unoptimised: keep the server's per-click work light.
    knobs.set("los_work", "300").unwrap();
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
    let drained = rt.block_on(session(&browser, &server));
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
    let board_bytes = server.frames().first().map(|f| (f.kind, f.bytes));
    rt.block_on(server.shutdown());
    assert!(left.is_empty(), "Chromium processes left: {left:?}");
    let d = drained.unwrap();
    assert_eq!(stats.kernel_drops, 0);
    assert_eq!(d.dropped, 0, "the recorder's ring kept every record");

    // What the page saw, from its first message on.
    let sizes = |k: RecordKind| -> Vec<u64> {
        d.records
            .iter()
            .filter(|r| r.kind == k)
            .map(|r| r.size as u64)
            .collect()
    };
    let (sent, recv) = (sizes(RecordKind::WsSend), sizes(RecordKind::WsRecv));
    assert!(
        sent.len() as u32 >= 2 * CLICKS,
        "one input message per mousedown and mouseup at least: {sent:?}"
    );
    let (kind, first) = board_bytes.unwrap();
    assert_eq!(kind, FrameKind::Board);
    assert!(
        recv.first() == Some(&first) && first >= 500_000,
        "the first message the page saw is the first board, {first} B: {:?}",
        &recv[..recv.len().min(3)]
    );

    let w = summary_on(&pcap, port);
    let (c2s, s2c) = (&w.client_to_server, &w.server_to_client);
    eprintln!(
        "fixture session: {} messages c->s ({} B), {} messages s->c ({} B), {} connections, \
         {} packets captured, {:.1}s",
        c2s.messages,
        c2s.app_bytes,
        s2c.messages,
        s2c.app_bytes,
        w.connections,
        stats.packets_written,
        started.elapsed().as_secs_f64()
    );
    // The page's load (and any connection Chromium opens ahead) shares the port: those are
    // counted as TCP but carry no frames. Exactly one connection is the upgraded socket.
    let upgraded = w
        .connection_list
        .iter()
        .filter(|c| c.client_framing == "websocket" && c.server_framing == "websocket")
        .count();
    assert_eq!(upgraded, 1, "{:?}", w.connection_list);
    assert_tshark_agrees(&w, &pcap, port);
    for (i, (d, page)) in [(c2s, &sent), (s2c, &recv)].into_iter().enumerate() {
        assert_eq!(d.app_unknown_messages, 0);
        assert_eq!(
            d.compressed_messages, 0,
            "the fixture negotiates no deflate"
        );
        assert_eq!(d.missing_bytes, 0, "direction {i}");
        assert_eq!(
            (d.messages, d.app_bytes),
            (page.len() as u64, page.iter().sum::<u64>()),
            "messages and app bytes vs what the page saw, direction {i}"
        );
        let max = page.iter().copied().max().unwrap_or(0) as f64;
        assert_eq!(d.message_app_size.as_ref().map(|s| s.max), Some(max));
        assert_eq!(
            d.app_bytes, d.frame_payload_bytes,
            "no deflate: app = payload"
        );
    }
}
