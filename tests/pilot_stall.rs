//! A target that stops answering mid-run without going away: `serve` frozen with SIGSTOP
//! still accepts connections (the kernel completes the handshakes), so only the clicks
//! that hear nothing at all can tell. The run must end as stalled (exit 3, `status
//! target_stalled`), keep what it measured, and leave no Chromium behind.

use std::process::Command;
use std::time::{Duration, Instant};

use arena_run::{Run, RunStatus};

use crate::support::machine::shared;
use crate::support::watched::{bin, group_members, serve_fixture, Watched};

#[test]
fn a_frozen_target_ends_the_run_as_stalled_with_exit_3_and_a_partial_run() {
    let _g = shared();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let (mut serve, url) = serve_fixture();
    let mut w = Watched::spawn(
        Command::new(bin())
            .args([
                "pilot",
                "--clicks",
                "40",
                "--interval",
                "10",
                "--timeout",
                "400",
                "--url",
                &url,
                "--out",
            ])
            .arg(&dir),
    );
    let chrome: i32 = {
        let l = w.wait_line("(pid ", Duration::from_secs(30));
        l.rsplit_once("(pid ")
            .and_then(|(_, r)| r.trim_end_matches(')').parse().ok())
            .expect("browser pid on stderr")
    };
    // 25 clicks measured, then the target freezes: its socket stays open, nothing comes.
    w.wait_line("click 25/40", Duration::from_secs(60));
    serve.signal("STOP");
    let t = Instant::now();
    // Three silent clicks of at most 2 x 400 ms each, and the run's writing: well inside
    // the 15 clicks left, which a run that did not notice would make (exit 0).
    let code = w.wait_exit(Duration::from_secs(12));
    eprintln!(
        "frozen target noticed and the run written {:?} after SIGSTOP",
        t.elapsed()
    );
    let all = w.lines.lock().unwrap().join("\n");
    assert_eq!(code, 3, "{all}");
    assert!(
        all.contains(&format!(
            "the target at {url} stopped answering: 3 clicks in a row"
        )) && all.contains("got no WebSocket message from the target's socket"),
        "{all}"
    );
    serve.signal("CONT");
    serve.child.kill().unwrap();
    serve.child.wait().expect("serve reaped");
    // The loader validates: the loops measured before the freeze stand.
    let run = Run::load(&dir).expect("partial run folder");
    assert_eq!(run.meta.status, RunStatus::TargetStalled);
    let msg = run.meta.status_message.as_deref().unwrap_or_default();
    assert!(msg.contains("3 clicks in a row"), "{msg}");
    let s = &run.meta.summary;
    assert!(s.answered >= 40, "{s:?}");
    assert!(s.loops < 80 && s.unanswered >= 6, "{s:?}");
    assert!(
        run.meta
            .warnings
            .iter()
            .any(|w| w.code == "partial_run" && w.message.contains("target stalled")),
        "{:?}",
        run.meta.warnings
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        group_members(chrome),
        Vec::<i32>::new(),
        "Chromium left behind"
    );
}
