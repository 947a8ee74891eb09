//! `--capture-backend` on the command line: which backend captured is recorded, and a
//! backend this build lacks is refused with the way to get it (exit 2), before any capture
//! or browser starts.

use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_arena-perf"))
}

fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("arena-perf")
}

fn capture(out: &std::path::Path, backend: &str) -> Output {
    run(&[
        "wire",
        "capture",
        "--port",
        "9",
        "--out",
        out.to_str().unwrap(),
        "--duration",
        "0.2",
        "--capture-backend",
        backend,
        "--format",
        "json",
    ])
}

#[test]
fn wire_capture_says_which_backend_wrote_the_pcap() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.pcap");
    let o = capture(&out, "af-packet");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        doc["source"]["kind"], "pcap",
        "the tests run as root: {doc}"
    );
    assert_eq!(doc["source"]["backend"], "af_packet");
    // A classic pcap, header and all, even with no packet on the port.
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 24);
}

#[test]
fn a_backend_this_build_lacks_is_refused_with_how_to_build_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.pcap");
    let o = capture(&out, "pcap");
    let err = String::from_utf8_lossy(&o.stderr);
    if arena_wire::LIBPCAP_BUILT_IN {
        assert!(o.status.success(), "{err}");
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(doc["source"]["backend"], "libpcap", "{doc}");
    } else {
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("`pcap` cargo feature") && err.contains("--features pcap"),
            "{err}"
        );
        assert!(!out.exists(), "nothing was captured");
    }
    let bad = capture(&out, "bpf");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("auto, af-packet or pcap"));
}

#[test]
fn the_pilot_takes_a_backend_only_with_capture() {
    // Refused by the parser: no browser is launched for either.
    let o = run(&["pilot", "--capture-backend", "af-packet", "--clicks", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--capture"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    if !arena_wire::LIBPCAP_BUILT_IN {
        let o = run(&["pilot", "--capture", "--capture-backend", "pcap"]);
        assert_eq!(o.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&o.stderr).contains("--features pcap"));
    }
}
