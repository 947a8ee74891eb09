//! Recorder cost per record and CDP cost per click, side by side in one run.
//!
//! `cargo bench -p arena-browser --bench recorder_cost` (env `SENDS`, `CHUNK`, `ROUNDS`, `CLICKS`
//! override the sizes). Two tabs of one headless Chromium load the same page, one with the
//! recorder injected and one without; each runs a page-side loop of `SENDS` WebSocket sends
//! to a local sink server (and the same number of 1x1 `fillRect` calls), alternating tabs for
//! `ROUNDS` rounds. Chromium needs seconds to flush 100k queued messages, and a send made
//! while it flushes competes with it for the CPU; so each round's sends run as loops of
//! `CHUNK` sends with a flush (bufferedAmount back to 0) between loops, alternating tabs. The per-record cost is the difference of the medians divided by the loop
//! length. The click cost is the Rust-side round trip of CDP `mousePressed` + `mouseReleased`.

#[path = "../tests/support/server.rs"]
mod server;

use anyhow::{Context, Result};
use arena_browser::{Browser, ClassifierSpec, LaunchOptions, Page, RecorderConfig};
use arena_stats::quantile;
use std::time::Instant;

const PAGE: &str = r#"<!doctype html><html><body style="margin:0">
<canvas id="c" width="100" height="100"></canvas>
<script>
const ws = new WebSocket('{{SINK}}');
const ctx = document.getElementById('c').getContext('2d');
window.ready = new Promise(r => ws.addEventListener('open', r));
window.drained = () => new Promise(r => { const t = () => ws.bufferedAmount === 0 ? r(1) : setTimeout(t, 5); t(); });
window.sendLoop = (n) => {
  const buf = new Uint8Array(16); buf[0] = 1;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) ws.send(buf);
  return performance.now() - t0;
};
// The same loop overhead with a no-op call in place of the recorder's send path.
window.emptyLoop = (n) => {
  const buf = new Uint8Array(16); buf[0] = 1;
  const f = (b) => b;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) f(buf);
  return performance.now() - t0;
};
window.probeLoop = (n) => {
  const buf = new Uint8Array(16); buf[0] = 1;
  return window.__arenaRecorder.probeSendPath(n, buf);
};
window.drawLoop = (n) => {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) ctx.fillRect(i % 100, 0, 1, 1);
  return performance.now() - t0;
};
window.clicks = 0;
window.addEventListener('mousedown', () => window.clicks++);
</script></body></html>"#;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn page_ms(page: &Page, js: &str) -> Result<f64> {
    page.eval_json(js)
        .await
        .with_context(|| format!("evaluating {js}"))?
        .as_f64()
        .with_context(|| format!("{js} gave no number"))
}

async fn click_costs(page: &Page, n: usize) -> Result<Vec<f64>> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = Instant::now();
        page.click(50.0, 50.0).await?;
        out.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    Ok(out)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let sends = env_usize("SENDS", 100_000).max(1);
    let chunk = env_usize("CHUNK", 10_000).clamp(1, sends);
    let rounds = env_usize("ROUNDS", 7).max(1);
    let clicks = env_usize("CLICKS", 200).max(1);
    let loops_per_round = sends.div_ceil(chunk);

    let srv = server::TestServer::start().await?;
    srv.add("/", "text/html", PAGE);
    // One browser per condition, one foreground tab each: two tabs of one browser are not
    // scheduled alike, which swamps a sub-microsecond difference.
    let opts = LaunchOptions {
        cdp_timeout: std::time::Duration::from_secs(120),
        ..LaunchOptions::default()
    };
    let b_bare = Browser::launch(opts.clone()).await?;
    let b_rec = Browser::launch(opts).await?;
    let bare = b_bare.new_page(&srv.url("/"), None).await?;
    let cfg =
        RecorderConfig::with_classifier(ClassifierSpec::first_byte(&[1, 2, 3, 4, 5], &[0x10]));
    let rec = b_rec.new_page(&srv.url("/"), Some(cfg)).await?;
    for p in [&bare, &rec] {
        p.eval_json("window.ready").await?;
    }
    rec.clear().await?;

    // Warm both tabs' JITs before measuring.
    for p in [&bare, &rec] {
        page_ms(p, &format!("sendLoop({chunk})")).await?;
        p.eval_json("drained()").await?;
        page_ms(p, &format!("drawLoop({})", sends / 10)).await?;
    }
    rec.drain().await?;

    let (mut s_bare, mut s_rec, mut d_bare, mut d_rec) = (vec![], vec![], vec![], vec![]);
    let (mut dropped, mut recorded) = (0u64, 0u64);
    let started = Instant::now();
    for round in 0..rounds {
        for i in 0..loops_per_round {
            // Alternate which condition goes first so drift hits both alike.
            let order = if (round + i) % 2 == 0 {
                [false, true]
            } else {
                [true, false]
            };
            for with in order {
                let (p, sv, dv) = if with {
                    (&rec, &mut s_rec, &mut d_rec)
                } else {
                    (&bare, &mut s_bare, &mut d_bare)
                };
                sv.push(page_ms(p, &format!("sendLoop({chunk})")).await?);
                p.eval_json("drained()")
                    .await
                    .context("waiting for the socket to flush")?;
                dv.push(page_ms(p, &format!("drawLoop({chunk})")).await?);
            }
        }
        let d = rec.drain().await?;
        dropped += d.dropped;
        recorded += d.dropped + d.records.len() as u64;
    }
    eprintln!("page loops took {:.1} s", started.elapsed().as_secs_f64());

    // The send hook's own work, in the recorder tab, without the native send.
    let (mut probe, mut empty) = (vec![], vec![]);
    for _ in 0..rounds {
        probe.push(page_ms(&rec, &format!("probeLoop({sends})")).await?);
        empty.push(page_ms(&rec, &format!("emptyLoop({sends})")).await?);
    }
    let (probe_d, n_probe) = (
        probe
            .iter()
            .zip(&empty)
            .map(|(p, e)| (p - e) * 1e6 / sends as f64)
            .collect::<Vec<_>>(),
        probe.len(),
    );
    let (per_probe, probe_q1, probe_q3) = (
        quantile(&probe_d, 0.5).unwrap_or(f64::NAN),
        quantile(&probe_d, 0.25).unwrap_or(f64::NAN),
        quantile(&probe_d, 0.75).unwrap_or(f64::NAN),
    );

    let (c_bare, c_rec) = (
        click_costs(&bare, clicks).await?,
        click_costs(&rec, clicks).await?,
    );
    let seen = bare.eval_json("window.clicks").await?.as_u64().unwrap_or(0);

    let (ns, nd) = (s_bare.len(), d_bare.len());
    // Loops of the two conditions run back to back: the median of their paired differences
    // cancels drift in what else the machine is doing.
    let paired = |with: &[f64], without: &[f64]| {
        let d: Vec<f64> = with
            .iter()
            .zip(without)
            .map(|(w, b)| (w - b) * 1e6 / chunk as f64)
            .collect();
        (
            quantile(&d, 0.5).unwrap_or(f64::NAN),
            quantile(&d, 0.25).unwrap_or(f64::NAN),
            quantile(&d, 0.75).unwrap_or(f64::NAN),
        )
    };
    let (per_send, send_q1, send_q3) = paired(&s_rec, &s_bare);
    let (per_draw, draw_q1, draw_q3) = paired(&d_rec, &d_bare);
    let (msb, msr) = (
        quantile(&s_bare, 0.5).unwrap_or(f64::NAN),
        quantile(&s_rec, 0.5).unwrap_or(f64::NAN),
    );
    let (mdb, mdr) = (
        quantile(&d_bare, 0.5).unwrap_or(f64::NAN),
        quantile(&d_rec, 0.5).unwrap_or(f64::NAN),
    );
    println!("arena-browser recorder_cost ({})", b_rec.version());
    println!(
        "{:<30} {:>4} {:>7} {:>13} {:>11} {:>6} {:>10} {:>14}",
        "page loop",
        "n",
        "calls",
        "without (ms)",
        "with (ms)",
        "ratio",
        "ns/record",
        "IQR ns/record"
    );
    let rows = [
        (
            "WebSocket send to sink, 16 B",
            ns,
            msb,
            msr,
            (per_send, send_q1, send_q3),
        ),
        (
            "canvas fillRect 1x1",
            nd,
            mdb,
            mdr,
            (per_draw, draw_q1, draw_q3),
        ),
    ];
    for (name, n, b, r, (per, q1, q3)) in rows {
        let iqr = format!("{q1:.0}..{q3:.0}");
        println!(
            "{name:<30} {n:>4} {chunk:>7} {b:>13.2} {r:>11.2} {:>6.2} {per:>10.0} {iqr:>14}",
            r / b
        );
    }
    println!(
        "(loop times: medians over n loops per condition; ns/record: median of n paired differences / calls; {rounds} rounds of {sends} sends and draws, socket flushed between loops)"
    );
    println!(
        "send-hook path alone (no native send), n = {n_probe} loops of {sends}: {per_probe:.0} ns/record (IQR {probe_q1:.0}..{probe_q3:.0})"
    );
    let worst = per_send.max(per_probe);
    println!(
        "recorder cost per WebSocket send record: {per_probe:.0} ns isolated, {per_send:.0} ns A/B against real sends (target < 2000 ns: {})",
        if worst < 2000.0 { "met" } else { "MISSED" }
    );
    println!(
        "ring buffer (capacity 65536): {recorded} records written in the measured rounds, {dropped} dropped (each round writes more than fits, on purpose)"
    );
    println!();
    println!("CDP click round trip (mousePressed + mouseReleased), n = {clicks} per tab, ms");
    println!("{:<34} {:>10} {:>10} {:>10}", "tab", "p50", "p90", "max");
    let mut medians = Vec::new();
    for (name, v) in [("without recorder", &c_bare), ("with recorder", &c_rec)] {
        let max = v.iter().copied().fold(f64::NAN, f64::max);
        let m = quantile(v, 0.5).unwrap_or(f64::NAN);
        medians.push(m);
        println!(
            "{name:<34} {m:>10.3} {:>10.3} {max:>10.3}",
            quantile(v, 0.9).unwrap_or(f64::NAN)
        );
    }
    println!(
        "page saw {seen} of {clicks} mousedowns; median CDP cost per click target < 5 ms: {}",
        if medians.iter().all(|&m| m < 5.0) {
            "met"
        } else {
            "MISSED"
        }
    );
    drop((bare, rec));
    b_bare.close().await?;
    b_rec.close().await?;
    Ok(())
}
