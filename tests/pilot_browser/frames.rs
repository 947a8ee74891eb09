//! Frame tables and the idle window against real Chromium and the real fixture: the cold
//! window holds the first board paint and the warm one none, `--idle` finds the blink's
//! near-identical repaints and none on stock, and `watch` reports the same, prints 0
//! frames for a target that sends nothing and fails fast on one that refuses.

use super::*;
use arena_compare::frames::{figures, first_paint_burst, frames_table, run_sources, BURST_GAP_MS};
use arena_compare::idle::{idle_figures, idle_table};
use std::net::TcpListener;

fn idle_overrides(blink: bool) -> Overrides {
    Overrides {
        idle: Some(Duration::from_secs(5)),
        knobs: if blink {
            knobs(&[("blink_ms", "500")])
        } else {
            Vec::new()
        },
        ..base_overrides(3)
    }
}

#[test]
fn cold_window_holds_the_first_paint_and_idle_finds_the_blink() {
    let _g = exclusive();
    let pilot = Pilot::builtin().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let outs = run_arms(
        &pilot,
        vec![
            ("stock", idle_overrides(false)),
            ("blink", idle_overrides(true)),
        ],
        tmp.path(),
    );
    let runs: Vec<Run> = outs
        .iter()
        .map(|o| Run::load(&o.dir).expect("loads"))
        .collect();
    for r in &runs {
        let cold = arena_compare::frames::receipts(r.setup_events.as_ref().expect("kept"));
        let warm = arena_compare::frames::receipts(&r.events);
        let burst = first_paint_burst(&cold, BURST_GAP_MS).expect("a first paint");
        assert!(burst.bytes >= 500_000, "{burst:?}");
        let (c, w) = (figures(&cold), figures(&warm));
        assert!(c.largest.unwrap() >= 500_000, "{c:?}");
        assert!(
            w.largest.unwrap() < 500_000,
            "the warm window has no board: {w:?}"
        );
        // The cold population never reaches pairing: every loop's reply is warm bytes.
        let last_cold = r
            .setup_events
            .as_ref()
            .unwrap()
            .iter()
            .map(|e| e.seq)
            .max()
            .unwrap();
        assert!(r.events.iter().all(|e| e.seq > last_cold));
        assert!(r.loops.iter().all(|l| l.reply_bytes < 500_000));
        let idle = r
            .meta
            .idle
            .as_ref()
            .expect("run.json records the idle window");
        let len = idle.end_ms - idle.start_ms;
        assert!((4900.0..6500.0).contains(&len), "window {len} ms");
        assert!(
            r.loops.iter().all(|l| l.t_input > idle.end_ms),
            "clicks come after the window"
        );
    }
    let (stock, blink) = (
        idle_figures(runs[0].meta.idle.as_ref().unwrap()),
        idle_figures(runs[1].meta.idle.as_ref().unwrap()),
    );
    assert!(stock.near_identical <= 1 && stock.frames <= 1, "{stock:?}");
    assert_eq!(blink.similarity, "pixels");
    assert!((8..=11).contains(&blink.near_identical), "{blink:?}");
    assert!(blink.pixels_median_pct.unwrap() >= 99.0, "{blink:?}");
    let md = frames_table(&run_sources(&runs), BURST_GAP_MS).render(arena_report::Format::Markdown);
    assert!(
        md.contains("| run | window | frames | total | p50 frame |"),
        "{md}"
    );
    assert_eq!(
        md.lines()
            .filter(|l| l.starts_with("| stock, run 1") || l.starts_with("| blink, run 1"))
            .count(),
        4,
        "{md}"
    );
    let w = runs[1].meta.idle.as_ref().unwrap();
    let md = idle_table(&[("blink".into(), w)]).render(arena_report::Format::Markdown);
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| ")).count(),
        11,
        "{md}"
    );
}

/// Runs `arena-perf watch ARGS --format json` (bounded) and returns (exit code, stdout, stderr).
fn watch(args: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(bin())
        .arg("watch")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn arena-perf watch");
    let end = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("watch {args:?} did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let s = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (
        out.status.code().unwrap_or(-1),
        s(out.stdout),
        s(out.stderr),
    )
}

#[test]
fn watch_reports_the_blink_and_its_load() {
    let _g = exclusive();
    let rt = rt();
    let k = arena_fixture::Knobs::from_pairs(&knobs(&[("blink_ms", "500")])).unwrap();
    let server = rt.block_on(arena_fixture::Server::start(k)).unwrap();
    let (code, out, err) = watch(&[&server.url(), "--for", "5", "--format", "json"]);
    rt.block_on(server.shutdown());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["kind"], "watch");
    assert!(
        v["load"]["first_paint"]["bytes"].as_u64().unwrap() >= 500_000,
        "{out}"
    );
    let near = v["idle"]["near_identical"].as_u64().unwrap();
    assert!((8..=11).contains(&near), "{out}");
    assert_eq!(v["idle"]["similarity"], "pixels");
}

/// A page with a canvas and no socket, served to at most `n` connections.
fn quiet_server(n: usize) -> (String, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    let h = std::thread::spawn(move || {
        l.set_nonblocking(true).unwrap();
        let (mut served, end) = (0, Instant::now() + Duration::from_secs(60));
        while served < n && Instant::now() < end {
            match l.accept() {
                Ok((mut s, _)) => {
                    use std::io::{Read, Write};
                    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
                    let mut buf = [0u8; 4096];
                    let _ = s.read(&mut buf);
                    let body = "<html><body><canvas width=64 height=64></canvas></body></html>";
                    let _ = write!(s, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
                    served += 1;
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    });
    (url, h)
}

#[test]
fn watch_on_a_silent_target_prints_zero_frames_and_on_a_refusing_one_exits_3() {
    let _g = shared();
    let (url, _h) = quiet_server(8);
    let (code, out, err) = watch(&[
        &url,
        "--for",
        "1",
        "--load-limit",
        "1",
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("| frames | 0 |") && out.contains("| rate | 0 B/s |"),
        "{out}"
    );
    assert!(out.contains("| window | 1.0 s"), "{out}");
    assert!(!out.contains("NaN"), "{out}");
    assert!(err.contains("did not go quiet"), "{err}");

    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let start = Instant::now();
    let (code, _, err) = watch(&[&format!("http://127.0.0.1:{port}/"), "--for", "1"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("nothing accepts connections"), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}
