//! `--capture-backend` on the command line: which backend captured is recorded, and a
//! backend this build lacks is refused with the way to get it (exit 2), before any capture
//! or browser starts.

use std::process::{Command, Output};

use crate::support::bin;

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

/// Processes of group `pgid` in any state, zombies included (from `/proc/*/stat`).
fn group_any_state(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        if rest.split_whitespace().nth(2).and_then(|g| g.parse().ok()) == Some(pgid) {
            out.push(pid);
        }
    }
    out
}

/// `wire capture -- CMD` killed mid-run (SIGTERM, as `kill` or a supervisor sends): the
/// command's whole process group, the grandchildren it started in the background among
/// it, is gone, zombies included, by the time the tool has exited.
#[test]
fn a_capture_killed_mid_run_leaves_no_process_of_its_command() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.pcap");
    let mut tool = Command::new(bin())
        .args(["wire", "capture", "--counters-only", "--port", "9", "--out"])
        .arg(&out)
        .args(["--", "sh", "-c", "echo $$; sleep 60 & sleep 60 & wait"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Held open to the end: a closed stdout would end the tool by its broken pipe.
    let mut stdout = BufReader::new(tool.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    let pgid: i32 = first.trim().parse().expect("the command's pid");
    // The two sleeps are started by now or soon: wait (bounded) until the group holds them.
    let t = std::time::Instant::now();
    while group_any_state(pgid).len() < 3 && t.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(group_any_state(pgid).len(), 3, "sh and its two sleeps");
    // SAFETY: kill(2) on our own child, not yet reaped.
    unsafe { libc::kill(tool.id() as i32, libc::SIGTERM) };
    let status = tool.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status}");
    assert_eq!(group_any_state(pgid), Vec::<i32>::new());
}
