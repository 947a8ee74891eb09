//! Helpers shared by the integration tests: a scratch folder per run, the summary of a
//! capture for one port, and tshark's per-direction figures as the oracle.

use std::path::{Path, PathBuf};
use std::process::Command;

use arena_wire::{summarize, SummaryOptions};

/// This run's scratch folder; folders of earlier runs whose process is gone are removed.
pub fn tmpdir() -> PathBuf {
    static SWEEP: std::sync::Once = std::sync::Once::new();
    SWEEP.call_once(|| {
        for e in std::fs::read_dir(std::env::temp_dir())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("arena-wire-test-") {
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
    });
    let d = std::env::temp_dir().join(format!("arena-wire-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Per direction from tshark: (data frames, data payload, control frames, control payload).
pub fn tshark_ws(pcap: &Path, port: u16) -> [(u64, u64, u64, u64); 2] {
    let out = arena_wire::tshark::websocket_fields(pcap, port)
        .output()
        .expect("tshark (apt-get install tshark)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = arena_wire::tshark::parse_websocket_fields(&String::from_utf8_lossy(&out.stdout), port)
        .unwrap();
    r.map(|d| {
        (
            d.data_frames,
            d.data_payload,
            d.control_frames,
            d.control_payload,
        )
    })
}

pub fn summary_on(pcap: &Path, port: u16) -> arena_wire::WireSummary {
    summarize(
        pcap,
        &SummaryOptions {
            port: Some(port),
            ..Default::default()
        },
    )
    .unwrap()
}

/// Per direction from tshark: packets, TCP payload bytes, bytes it flags as
/// retransmitted, and records that are exact copies of another (same sequence number,
/// length and TCP timestamp: what an unfiltered loopback capture shows for every packet).
pub fn tshark_tcp(pcap: &Path, port: u16) -> [(u64, u64, u64, u64); 2] {
    let out = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(pcap)
        .args([
            "-T",
            "fields",
            "-e",
            "tcp.srcport",
            "-e",
            "tcp.len",
            "-e",
            "tcp.seq_raw",
        ])
        .args([
            "-e",
            "tcp.options.timestamp.tsval",
            "-e",
            "tcp.analysis.retransmission",
        ])
        .args([
            "-e",
            "tcp.analysis.fast_retransmission",
            "-e",
            "tcp.analysis.spurious_retransmission",
        ])
        .args(["-Y", "tcp"])
        .output()
        .expect("tshark");
    assert!(out.status.success());
    let mut r = [(0, 0, 0, 0); 2];
    let mut seen = std::collections::HashSet::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let d = if f[0] == port.to_string() { 1 } else { 0 };
        let len = f.get(1).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
        r[d].0 += 1;
        r[d].1 += len;
        if f.iter().skip(4).any(|x| !x.is_empty()) {
            r[d].2 += len;
        }
        if len > 0 && !seen.insert((f[0].to_string(), f[2].to_string(), len, f[3].to_string())) {
            r[d].3 += 1;
        }
    }
    r
}

/// Per direction, data and control frames and their payload equal tshark's `-Y websocket`
/// figures, and TCP payload equals tshark's `tcp.len` minus what it flags as retransmitted.
pub fn assert_tshark_agrees(w: &arena_wire::WireSummary, pcap: &Path, port: u16) {
    let ws = tshark_ws(pcap, port);
    let tcp = tshark_tcp(pcap, port);
    for (i, d) in [&w.client_to_server, &w.server_to_client]
        .into_iter()
        .enumerate()
    {
        assert_eq!(
            (d.frames, d.frame_payload_bytes),
            (ws[i].0, ws[i].1),
            "data frames and payload vs tshark -Y websocket, direction {i}"
        );
        assert_eq!(
            (d.control_frames, d.control_payload_bytes),
            (ws[i].2, ws[i].3),
            "control frames vs tshark, direction {i}"
        );
        assert_eq!(
            d.tcp_payload_bytes,
            tcp[i].1 - tcp[i].2,
            "TCP payload vs tshark, direction {i}"
        );
    }
}
