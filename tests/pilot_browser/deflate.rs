//! The fixture's `deflate` knob under `--capture`: Chromium negotiates permessage-deflate,
//! the run's wire figures count the inflated bytes the page got, the app/wire ratio is in
//! the run and under the pilot's table, and tshark counts the same frames and bytes.

use super::*;

use arena_report::Format;
use futures::StreamExt;

/// The first board's payload bytes at `pairs`, from a fixture of its own and a plain
/// client: what the page gets before the pilot's clear on attach (the board depends on the
/// knobs alone; `deflate` changes only how it travels).
fn first_board_bytes(pairs: &[(String, String)]) -> u64 {
    rt().block_on(async {
        let k = arena_fixture::Knobs::from_pairs(pairs).unwrap();
        let server = arena_fixture::Server::start(k).await.unwrap();
        let (mut ws, _) = async_tungstenite::tokio::connect_async(server.ws_url())
            .await
            .expect("connect to the fixture");
        let first = tokio::time::timeout(Duration::from_secs(60), ws.next())
            .await
            .expect("the first board within 60 s")
            .expect("a message")
            .expect("a good message");
        drop(ws);
        server.shutdown().await;
        first.into_data().len() as u64
    })
}

#[test]
fn deflate_under_capture_counts_what_the_page_got_and_says_the_ratio() {
    let _g = shared();
    let tmp = tempfile::tempdir().unwrap();
    let pilot = Pilot::builtin().unwrap();
    let mut ov = base_overrides(3);
    ov.capture = true;
    // Stored PNGs: the board compresses as most apps' messages do.
    ov.knobs = knobs(&[("los_work", "0"), ("deflate", "true"), ("png_level", "0")]);
    let board = first_board_bytes(&ov.knobs);
    let outs = run_arms(&pilot, vec![("deflate", ov)], tmp.path());
    let o = &outs[0];
    assert_eq!(
        o.run.meta.knobs.get("deflate").map(String::as_str),
        Some("true")
    );
    let s = &o.run.meta.summary;
    let w = o.run.meta.wire.as_ref().expect("wire figures in run.json");
    assert_eq!((w.source.as_str(), w.kernel_drops), ("pcap", 0), "{w:?}");
    let s2c = w.server_to_client.as_ref().unwrap();

    // (a) The wire's app bytes are what the page's recorder counted after the clear, plus
    // the first board it got before it; the messages likewise.
    assert!(
        s.frames_received > 0 && board > 500_000,
        "{s:?}, board {board}"
    );
    assert_eq!(s2c.app_bytes, s.bytes_received + board, "{s2c:?} vs {s:?}");
    let full: serde_json::Value =
        serde_json::from_slice(&std::fs::read(o.dir.join("wire.json")).unwrap()).unwrap();
    let d = &full["server_to_client"];
    assert_eq!(d["messages"].as_u64(), Some(s.frames_received + 1), "{d}");
    assert_eq!(d["compressed_messages"], d["messages"], "{d}");
    let negotiated = full["connection_list"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["deflate"].is_null())
        .count();
    assert_eq!(negotiated, 1, "one socket, deflate negotiated: {full}");

    // (b) The ratio, in the run and under the table the pilot prints.
    let ratio = s2c.compression_ratio.expect("compression_ratio");
    let want = s2c.app_bytes as f64 / s2c.frame_payload_bytes as f64;
    assert!(
        (ratio - want).abs() < 1e-9 && ratio > 1.5,
        "{ratio} vs {want}"
    );
    let table = arena_compare::arm_table(&o.run).render(Format::Table);
    let shown = format!(
        "(app/wire {ratio:.2}x: the wire carries {:.0} %)",
        100.0 / ratio
    );
    assert!(table.contains(&shown), "{shown} not in:\n{table}");

    // (c) tshark counts the same frames and payload bytes per direction.
    let port: u16 = o
        .run
        .meta
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .parse()
        .unwrap();
    let out = arena_wire::tshark::websocket_fields(&o.dir.join("wire.pcap"), port)
        .output()
        .expect("tshark (apt-get install tshark)");
    assert!(out.status.success());
    let ts =
        arena_wire::tshark::parse_websocket_fields(&String::from_utf8_lossy(&out.stdout), port)
            .unwrap();
    for (i, dir) in [w.client_to_server.as_ref().unwrap(), s2c]
        .into_iter()
        .enumerate()
    {
        assert_eq!(
            (dir.frames, dir.frame_payload_bytes),
            (ts[i].data_frames, ts[i].data_payload),
            "frames and payload vs tshark, direction {i}"
        );
    }
}
