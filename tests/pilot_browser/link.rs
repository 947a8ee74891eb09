//! A shaped link on pages whose socket does not go to the page's own host:port: the link
//! must shape what the page connects to, account for every connection it carried, and
//! refuse, before measuring, a page whose traffic it cannot carry.

use super::answers::server;
use super::*;
use arena_report::ExitKind;

/// Presses go to the press-only server (its own port, not the page's), which echoes each
/// after the delay in `d`; each reply paints a square. With `big`, a press instead sends
/// 200 000 bytes to the echo server (another port again), and its echo paints.
const PAGE: &str = r#"<!doctype html><html><body style="margin:0">
<canvas id="c" width="400" height="300"></canvas>
<script>
const c = document.getElementById('c'), ctx = c.getContext('2d');
ctx.fillStyle = '#202830'; ctx.fillRect(0, 0, 400, 300);
const q = new URLSearchParams(location.search), big = q.has('big');
const ws = new WebSocket(big ? '{{ECHO}}' : '{{PRESS}}' + (q.get('d') || '0'));
ws.binaryType = 'arraybuffer';
const far = q.get('far');
const opened = new Promise((ok) => { ws.onopen = ok; });
const fetched = far ? fetch('http://' + far + '/x').catch(() => null) : null;
Promise.all([opened, fetched]).then(() => { window.ready = true; });
let n = 0, x = 0, y = 0;
c.addEventListener('mousedown', (e) => {
  const r = c.getBoundingClientRect();
  x = e.clientX - r.left; y = e.clientY - r.top;
  const b = new Uint8Array(big ? 200000 : 5); b[0] = 1;
  ws.send(b.buffer);
});
ws.onmessage = () => {
  n++;
  ctx.fillStyle = n % 2 ? '#e04040' : '#40e040';
  ctx.fillRect(x - 12, y - 12, 24, 24);
};
</script></body></html>"#;

const PILOT: &str = r##"
[target]
canvas = "#c"
idle_reply_bytes = 1

[[setup]]
eval = "new Promise((ok) => { const t = setInterval(() => { if (window.ready) { clearInterval(t); ok(true); } }, 10); })"

[clicks]
region = [0.1, 0.1, 0.9, 0.9]
count = 30
warmup = 1

[pacing]
interval_ms = 10
timeout_ms = 2000
settle_ms = 30
loop_events = ["mousedown"]

[classifier]
input = [{ first_byte = [1] }]
"##;

fn pilot() -> Pilot {
    Pilot::parse("link.toml", PILOT).expect("pilot")
}

/// Runs the page at `path` once per entry of `links` (`None`: direct), in one browser, in
/// that order; each result is run_arm's own.
fn run_links(
    pilot: &Pilot,
    path: &str,
    links: &[Option<&str>],
    clicks: u64,
) -> Vec<anyhow::Result<Outcome>> {
    rt().block_on(async {
        let srv = server::TestServer::start().await.expect("test server");
        srv.add("/page.html", "text/html", PAGE);
        let browser = BrowserOptions::default().launch().await.expect("Chromium");
        let pids = browser.pids();
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut outs = Vec::new();
        for (i, link) in links.iter().enumerate() {
            let url = path.replace("{PAGE}", &srv.url("/page.html"));
            let ov = Overrides {
                url: Some(url),
                clicks: Some(clicks),
                link: link.map(|l| arena_link::LinkSpec::parse(l).unwrap()),
                ..Overrides::default()
            };
            let plan = Plan::new(pilot, "page".into(), Arm::default(), &ov).expect("plan");
            let req = RunRequest {
                plan: &plan,
                out: OutDir::Exactly(tmp.path().join(i.to_string())),
                progress: &silent,
                cancel: &Cancel::new(),
            };
            outs.push(run_arm(&browser, req).await);
        }
        browser.close().await.expect("close");
        assert_eq!(alive(&pids), Vec::<i32>::new(), "Chromium processes left");
        outs
    })
}

fn complete(o: anyhow::Result<Outcome>) -> Run {
    let run = o.expect("run").run;
    assert_eq!(run.meta.status, RunStatus::Complete, "{:?}", run.meta);
    run
}

/// The run's link connections as `kind dest`.
fn connections(r: &Run) -> Vec<String> {
    r.meta
        .link_connections
        .iter()
        .map(|c| format!("{} {}", c.kind, c.dest))
        .collect()
}

#[test]
fn a_socket_to_another_port_is_shaped_by_the_link_and_listed_in_the_run() {
    let _g = exclusive();
    let direct = None;
    let linked = Some("rtt=20ms");
    let mut pilot = pilot();
    // The receipt is the first reply after the send: the pixel oracle's check on every
    // frame moves the page's busy moments too, and the link must be the only difference.
    // Under `reply` the page does not say when a press went quiet, so each click waits out
    // the timeout: a short one.
    pilot.answer.oracle = arena_pilot::scenario::Requested::Reply;
    pilot.pacing.timeout_ms = 250;
    let links = [direct, linked, direct, linked];
    let runs: Vec<Run> = run_links(&pilot, "{PAGE}?d=8", &links, 25)
        .into_iter()
        .map(complete)
        .collect();
    let d = by_event_pooled(&[&runs[0], &runs[2]], "mousedown");
    let l = by_event_pooled(&[&runs[1], &runs[3]], "mousedown");
    eprintln!(
        "socket to another port: press sendToRecv p50 {d:.2} ms direct, {l:.2} ms through rtt=20ms (2 runs of 24 a side)"
    );
    assert!(
        (l - d - 20.0).abs() <= 3.0,
        "rtt=20ms moved sendToRecv p50 by {:.2} ms",
        l - d
    );
    assert!(runs[0].meta.link_connections.is_empty());
    for r in [&runs[1], &runs[3]] {
        let conns = connections(r);
        let page = r.meta.url.split('/').nth(2).unwrap().to_string();
        assert!(conns.contains(&format!("http {page}")), "{conns:?}");
        let ws: Vec<_> = r
            .meta
            .link_connections
            .iter()
            .filter(|c| c.kind == "websocket")
            .collect();
        assert_eq!(ws.len(), 1, "{conns:?}");
        assert_ne!(ws[0].dest, page, "the socket goes to another port");
        // 25 presses of 5 bytes, masked and framed: at least 25 * 11 bytes up, and their
        // 25 echoes down.
        assert!(
            ws[0].bytes_up >= 25 * 11 && ws[0].bytes_down >= 25 * 7,
            "{ws:?}"
        );
        assert!(
            r.meta.warnings.iter().all(|w| !w.code.starts_with("link")),
            "{:?}",
            r.meta.warnings
        );
    }
}

#[test]
fn a_rate_limit_holds_on_a_socket_to_another_port() {
    let _g = exclusive();
    let runs: Vec<Run> = run_links(&pilot(), "{PAGE}?big", &[None, Some("rate=8mbit")], 5)
        .into_iter()
        .map(complete)
        .collect();
    let times = |r: &Run| -> Vec<f64> {
        r.loops
            .iter()
            .filter(|l| l.answered)
            .filter_map(|l| l.send_to_recv)
            .collect()
    };
    let (direct, linked) = (times(&runs[0]), times(&runs[1]));
    eprintln!("200 kB echo sendToRecv: direct {direct:.1?} ms, rate=8mbit {linked:.1?} ms");
    assert_eq!(linked.len(), 5, "{:?}", runs[1].meta.warnings);
    // 200 000 bytes at 8 Mbit/s take 200 ms on the wire, whatever else the echo costs.
    let floor = 200_000.0 * 8.0 / 8e6 * 1e3;
    assert!(linked.iter().all(|&t| t >= floor), "{linked:?}");
    assert!(direct.iter().all(|&t| t < floor), "{direct:?}");
    let echo = &runs[1].meta.link_connections;
    let ws = echo
        .iter()
        .find(|c| c.kind == "websocket")
        .expect("{echo:?}");
    assert!(
        ws.bytes_up >= 5 * 200_000 && ws.bytes_down >= 5 * 200_000,
        "{ws:?}"
    );
}

#[test]
fn a_link_the_pages_traffic_cannot_all_go_through_is_bad_input_before_measuring() {
    let _g = shared();
    // A target off loopback, then a page that also fetches from an address off loopback
    // (TEST-NET-1, refused by the link without connecting anywhere). Only ever with a link:
    // without one the browser would try that address itself.
    for (url, says) in [
        ("http://192.0.2.1:8080/page.html", "is not on loopback"),
        ("{PAGE}?d=0&far=192.0.2.7:80", "192.0.2.7:80"),
    ] {
        let mut o = run_links(&pilot(), url, &[Some("rtt=20ms")], 3);
        let e = match o.remove(0) {
            Ok(_) => panic!("{url}: a run was measured"),
            Err(e) => e,
        };
        assert_eq!(ExitKind::of(&e), Some(ExitKind::BadInput), "{e:#}");
        assert!(format!("{e:#}").contains(says), "{url}: {e:#}");
    }
}
