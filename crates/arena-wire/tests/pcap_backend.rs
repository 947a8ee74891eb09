//! The libpcap backend (feature `pcap`) against AF_PACKET on one real fixture session:
//! `cargo test -p arena-wire --features pcap --test pcap_backend`.
//!
//! Both capturers run at the same time on `lo` with the same port: the kernel hands every
//! packet to each packet socket, so the two files hold the same session, not two sessions
//! that merely look alike (a replay would differ in timing, segmentation and acks). Both
//! start before the server is first reached and stop after Chromium and the server have
//! closed, so neither can catch a packet the other missed at an edge.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use arena_browser::{Browser, LaunchOptions};
use arena_fixture::{Knobs, Server};
use arena_wire::pcap::PcapReader;
use arena_wire::{
    Backend, Capture, CaptureBackend, CaptureHandle, CaptureOptions, CaptureSource, DirSummary,
};

mod common;
use common::{assert_tshark_agrees, summary_on, tmpdir};

const CLICKS: u32 = 6;

fn start(backend: CaptureBackend, port: u16, pcap: &Path) -> CaptureHandle {
    let mut opts = CaptureOptions::new("lo", Some(port), pcap);
    opts.backend = backend;
    Capture::start_with(opts).expect("capture on lo (the tests run as root)")
}

fn backend_of(source: &CaptureSource) -> Option<Backend> {
    match source {
        CaptureSource::Pcap { backend, .. } => Some(*backend),
        CaptureSource::InterfaceCounters { .. } => None,
    }
}

/// One direction's counts: packets, TCP payload bytes, WebSocket data frames and their
/// payload, control frames, link-layer bytes.
fn counts(d: &DirSummary) -> [u64; 6] {
    [
        d.packets,
        d.tcp_payload_bytes,
        d.frames,
        d.frame_payload_bytes,
        d.control_frames,
        d.wire_bytes,
    ]
}

/// Every record's original length and bytes, in order (timestamps differ by the
/// microseconds between the two sockets' wake-ups).
fn records(pcap: &Path) -> (u32, Vec<(u32, Vec<u8>)>) {
    let mut r = PcapReader::open(pcap).unwrap();
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        out.push((rec.orig_len, rec.data.to_vec()));
    }
    (r.linktype, out)
}

#[test]
fn libpcap_captures_the_fixture_session_as_af_packet_does() {
    let dir = tmpdir();
    let (af_pcap, lp_pcap) = (dir.join("af_packet.pcap"), dir.join("libpcap.pcap"));
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
    let af = start(CaptureBackend::AfPacket, port, &af_pcap);
    let lp = start(CaptureBackend::Pcap, port, &lp_pcap);
    assert_eq!(backend_of(&af.source()), Some(Backend::AfPacket));
    assert_eq!(backend_of(&lp.source()), Some(Backend::Libpcap));
    let browser = rt
        .block_on(Browser::launch(LaunchOptions::default()))
        .expect("launch Chromium (apt-get install chromium)");
    let clicked = rt.block_on(async {
        let page = browser.new_page(&server.url(), None).await?;
        page.wait_until(&arena_fixture::painted_js(1), Duration::from_secs(20))
            .await
            .context("first board")?;
        arena_fixture::drive::click_tiles(&page, &server, CLICKS, Duration::from_secs(20)).await
    });
    // Closed before the captures stop: the close handshakes are in both files, and no
    // packet of the session is left in flight to reach one capturer and not the other.
    rt.block_on(browser.close()).unwrap();
    rt.block_on(server.shutdown());
    clicked.unwrap();
    let (af, lp) = (af.stop().unwrap(), lp.stop().unwrap());
    assert_eq!(backend_of(&lp.source), Some(Backend::Libpcap));
    assert_eq!((af.kernel_drops, lp.kernel_drops), (0, 0));
    assert_eq!(af.packets_written, lp.packets_written, "records written");

    let (a, l) = (summary_on(&af_pcap, port), summary_on(&lp_pcap, port));
    eprintln!(
        "one session, two capturers: {} packets c->s, {} s->c ({} frames, {} B of frame \
         payload s->c); af_packet wrote {} records, libpcap {}",
        l.client_to_server.packets,
        l.server_to_client.packets,
        l.server_to_client.frames,
        l.server_to_client.frame_payload_bytes,
        af.packets_written,
        lp.packets_written
    );
    // Every input is a message of its own; the server may answer a click's press and
    // release in one tick's frame, so the board and a frame a click is what is certain.
    assert!(
        l.server_to_client.frames > CLICKS as u64 && l.client_to_server.frames >= 2 * CLICKS as u64,
        "the session's frames were captured: {:?}",
        counts(&l.server_to_client)
    );
    for (name, da, dl) in [
        ("client->server", &a.client_to_server, &l.client_to_server),
        ("server->client", &a.server_to_client, &l.server_to_client),
    ] {
        assert_eq!(counts(da), counts(dl), "{name}: AF_PACKET vs libpcap");
        assert_eq!(dl.missing_bytes, 0, "{name}: libpcap lost stream bytes");
    }
    assert_eq!(a.connections, l.connections);
    // The same packets, byte for byte, and a classic pcap tshark reads the same way.
    let (ra, rl) = (records(&af_pcap), records(&lp_pcap));
    assert_eq!(ra.0, rl.0, "link types");
    assert!(ra.1 == rl.1, "the two files hold different packets");
    assert_tshark_agrees(&l, &lp_pcap, port);
}

#[test]
fn auto_takes_af_packet_where_it_can_open() {
    let pcap = tmpdir().join("auto.pcap");
    let cap = start(CaptureBackend::Auto, 9, &pcap);
    assert_eq!(backend_of(&cap.source()), Some(Backend::AfPacket));
    let stats = cap.stop().unwrap();
    let json = stats.to_json();
    assert_eq!(json["source"]["backend"], "af_packet", "{json}");
}

/// Set in the copy of this test binary that runs as `nobody`.
const UNPRIVILEGED: &str = "ARENA_WIRE_TEST_UNPRIVILEGED";

/// What a user without root or CAP_NET_RAW gets from each backend: not an error, the
/// interface counters, with a reason naming the backend that refused and what it needs.
/// The test binary runs itself again as `nobody` (setpriv, no capabilities) for this.
#[test]
fn without_permission_every_backend_falls_back_to_counters_and_says_why() {
    if std::env::var_os(UNPRIVILEGED).is_some() {
        let never = std::env::temp_dir().join("arena-wire-unprivileged-never-written.pcap");
        for (backend, named) in [
            (CaptureBackend::AfPacket, vec!["af_packet"]),
            (CaptureBackend::Pcap, vec!["libpcap"]),
            (CaptureBackend::Auto, vec!["af_packet", "libpcap"]),
        ] {
            let stats = start(backend, 9, &never).stop().unwrap();
            let CaptureSource::InterfaceCounters { reason } = &stats.source else {
                panic!("{backend}: captured as nobody: {:?}", stats.source);
            };
            eprintln!("as nobody, --capture-backend {backend}: {reason}");
            assert!(reason.contains("needs root or CAP_NET_RAW"), "{reason}");
            for n in named {
                assert!(reason.contains(n), "{backend}: {reason} should name {n}");
            }
            assert!(stats.interface.is_some(), "counters still reported");
        }
        assert!(!never.exists());
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["--inh-caps=-all", "--bounding-set=-all", "--"])
        .arg(&exe)
        .args([
            "--exact",
            "without_permission_every_backend_falls_back_to_counters_and_says_why",
            "--nocapture",
        ])
        .env(UNPRIVILEGED, "1")
        .output()
        .expect("setpriv (util-linux)");
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    assert!(out.status.success(), "the unprivileged run failed: {text}");
    assert!(
        text.contains("1 passed"),
        "the unprivileged copy ran the test: {text}"
    );
}
