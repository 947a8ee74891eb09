//! The pilot's three speed targets side by side, in one run: wall time of a 156-click arm
//! against the in-process fixture (under 60 s), what the tool itself costs per click (under
//! 5 ms: its time on each click's critical path, with the CDP click dispatch, drains and
//! in-page waits beside it), and the recorder's cost per record (under 2 us: its send-hook
//! path against an empty call, in a page of the same browser; the A/B against real sends
//! is `cargo bench -p arena-browser --bench recorder_cost`).
//! Beside them, the answer oracle's price: its pixel check per painted frame in the page
//! (under 50 us), and the tool cost per click of one arm closed on pixels against the same
//! arm closed on replies, in the same browser. And the price of `--trace`: the tool cost
//! per click of the stock arm with and without Chromium's trace running, side by side, and
//! what collecting and writing the trace added to the run.
//! Run with `cargo bench -p arena-pilot --bench pilot_arm`.

use std::time::Instant;

use arena_pilot::scenario::Pilot;
use arena_pilot::{run_arm, silent, BrowserOptions, Cancel, OutDir, Overrides, Plan, RunRequest};
fn median(v: &[f64]) -> f64 {
    arena_stats::quantile(v, 0.5).unwrap_or(f64::NAN)
}

const PROBE_CALLS: u32 = 100_000;

/// The recorder's send hook run `PROBE_CALLS` times without the native send, less the same
/// loop over an empty function, per call; 7 loops. The native send's own IPC scatters by
/// microseconds and would drown the hook (that A/B is in `recorder_cost`).
async fn record_cost_ns(
    browser: &arena_browser::Browser,
    pilot: &Pilot,
) -> anyhow::Result<Vec<f64>> {
    let page = browser
        .new_page(
            "data:text/html,<canvas></canvas>",
            Some(pilot.recorder.clone()),
        )
        .await?;
    let hook = format!(
        "window.__arenaRecorder.probeSendPath({PROBE_CALLS}, new Uint8Array([1, 0, 0, 0]))"
    );
    let empty = format!(
        "(() => {{ const f = (b) => b; const b = new Uint8Array([1, 0, 0, 0]); \
         const t0 = performance.now(); for (let i = 0; i < {PROBE_CALLS}; i++) f(b); \
         return performance.now() - t0; }})()"
    );
    let mut out = Vec::new();
    for _ in 0..7 {
        let with = page.eval_json(&hook).await?.as_f64();
        let without = page.eval_json(&empty).await?.as_f64();
        if let (Some(w), Some(o)) = (with, without) {
            out.push((w - o) * 1e6 / f64::from(PROBE_CALLS));
        }
    }
    page.close().await?;
    Ok(out)
}

const ORACLE_CALLS: u32 = 2_000;

/// The pixel oracle's check of one watched input (read the 17 x 17 region, compare it with
/// the snapshot) on a 1024 x 768 2D canvas, us per call; 7 loops of `ORACLE_CALLS`.
async fn oracle_cost_us(browser: &arena_browser::Browser) -> anyhow::Result<Vec<f64>> {
    let cfg = arena_browser::RecorderConfig {
        answer: Some(arena_browser::PageOracle {
            kind: arena_browser::PageOracleKind::Pixels,
            radius_px: arena_browser::DEFAULT_RADIUS_PX,
            rect: None,
            js: None,
            canvas: None,
            events: vec!["mousedown".into()],
            window_ms: 2000.0,
            move_events: Vec::new(),
            move_radius_px: arena_browser::DEFAULT_MOVE_RADIUS_PX,
        }),
        ..arena_browser::RecorderConfig::default()
    };
    let page = browser
        .new_page(
            "data:text/html,<body style='margin:0'><canvas width=1024 height=768></canvas></body>",
            Some(cfg),
        )
        .await?;
    page.eval_json(
        "(() => { const c = document.querySelector('canvas').getContext('2d'); \
         c.fillStyle = '#336'; c.fillRect(0, 0, 1024, 768); return true; })()",
    )
    .await?;
    let mut out = Vec::new();
    for _ in 0..7 {
        let v = page
            .eval_json(&format!(
                "window.__arenaRecorder.probeOracleCost(500, 400, {ORACLE_CALLS})"
            ))
            .await?;
        if let Some(ms) = v.as_f64() {
            out.push(ms * 1e3);
        }
    }
    page.close().await?;
    Ok(out)
}

fn main() -> anyhow::Result<()> {
    let pilot = Pilot::builtin()?;
    let tmp = tempfile::tempdir()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let t_launch = Instant::now();
        let browser = BrowserOptions::default().launch().await?;
        let launch_ms = t_launch.elapsed().as_secs_f64() * 1e3;
        let cancel = Cancel::new();
        println!("pilot_arm: 156-click arms against the fixture (default pacing: settle {} ms, interval {} ms)", pilot.pacing.settle_ms, pilot.pacing.interval_ms);
        println!("browser launch: {launch_ms:.0} ms (once per command, not per arm)");
        println!(
            "{:<15} {:>7} {:>7} {:>9} {:>10} {:>8} {:>7} {:>7} {:>10} {:>5} {:>12}",
            "arm/oracle", "wall s", "clicks", "ms/click", "click CDP", "drain", "drains", "waits", "tool/click", "n", "inputToPaint"
        );
        let (mut walls, mut tool) = (Vec::new(), Vec::new());
        let mut reply_pilot = pilot.clone();
        reply_pilot.answer.oracle = arena_pilot::scenario::Requested::Reply;
        let mut by_oracle: Vec<(String, Vec<f64>)> = Vec::new();
        let mut by_trace: Vec<(bool, Vec<f64>)> = Vec::new();
        let mut traced = None;
        let arms = [
            ("stock", &pilot, false),
            ("lazy-png", &pilot, false),
            ("stock", &reply_pilot, false),
            ("stock", &pilot, true),
        ];
        for (arm_name, p, trace) in arms {
            let ov = Overrides { trace, ..Overrides::default() };
            let plan = Plan::for_arm(p, Some(arm_name), &ov)?;
            let name = plan.arm_name.clone();
            let oracle = p.answer.oracle.name();
            let out = run_arm(
                &browser,
                RunRequest {
                    plan: &plan,
                    out: OutDir::Exactly(tmp.path().join(format!("{name}-{oracle}-{trace}"))),
                    progress: &silent,
                    cancel: &cancel,
                },
            )
            .await?;
            let c = &out.cost;
            // The targets are the untraced tool's; the traced arm is its own comparison.
            if !trace {
                walls.push(c.wall_ms / 1e3);
                tool.extend_from_slice(&c.critical_ms);
            }
            let closed_on = out.run.meta.answer.as_ref().map(|a| a.oracle.clone()).unwrap_or_default();
            if trace {
                traced = out.run.meta.trace.clone();
            } else {
                match by_oracle.iter_mut().find(|(o, _)| *o == closed_on) {
                    Some((_, v)) => v.extend_from_slice(&c.critical_ms),
                    None => by_oracle.push((closed_on.clone(), c.critical_ms.clone())),
                }
            }
            // The same arm (stock, closed on pixels) with and without the trace.
            if arm_name == "stock" && closed_on == "pixels" {
                by_trace.push((trace, c.critical_ms.clone()));
            }
            let clicks = c.click_ms.len() as f64;
            let itp = out.run.meta.summary.input_to_paint.map(|s| s.p50).unwrap_or(f64::NAN);
            println!(
                "{:<15} {:>7.1} {:>7} {:>7.1}ms {:>8.2}ms {:>6.2}ms {:>7.1} {:>7.1} {:>8.2}ms {:>5} {:>10.1}ms",
                format!("{name}/{closed_on}{}", if trace { "+trace" } else { "" }),
                c.wall_ms / 1e3,
                clicks,
                c.clicking_ms / clicks,
                median(&c.click_ms),
                median(&c.drain_ms),
                c.drain_ms.len() as f64 / clicks,
                c.waits as f64 / clicks,
                median(&c.critical_ms),
                c.critical_ms.len(),
                itp
            );
        }
        println!("medians over the clicks of each arm; drains and waits are per click.");
        println!("click CDP: mousePressed, then mouseReleased after the press's loop ended, each until answered;");
        println!("  Chromium answers after the renderer handled them, so this overlaps the app's own work.");
        println!("tool/click (target < 5 ms): the tool's time on each answered click's critical path: how much later");
        println!("  each next input went than a tool that cost nothing would have sent it; n = clicks it covers.");
        let record_ns = record_cost_ns(&browser, &pilot).await?;
        println!();
        println!("{:<34} {:>30} {:>8} {:>4}", "target", "measured", "goal", "met");
        let yes = |ok: bool| if ok { "yes" } else { "NO" };
        let wall = walls.iter().copied().fold(0.0, f64::max);
        println!("{:<34} {:>28.1} s {:>8} {:>4}", "156-click arm, wall (slower arm)", wall, "< 60 s", yes(wall < 60.0));
        let t = median(&tool);
        println!("{:<34} {:>20.2} ms (n={:>3}) {:>8} {:>4}", "tool cost per click, median", t, tool.len(), "< 5 ms", yes(t < 5.0));
        let r = median(&record_ns);
        println!("{:<34} {:>20.0} ns (n={:>3}) {:>8} {:>4}", "recorder cost per record, median", r, record_ns.len(), "< 2 us", yes(r < 2000.0));
        println!("(n for the record cost: loops of {PROBE_CALLS} sends through the hook, each less an empty-call loop)");
        let oracle_us = oracle_cost_us(&browser).await?;
        let o = median(&oracle_us);
        println!("{:<34} {:>20.1} us (n={:>3}) {:>8} {:>4}", "pixel oracle per painted frame", o, oracle_us.len(), "< 50 us", yes(o < 50.0));
        println!("(n for the oracle: loops of {ORACLE_CALLS} checks of a 17 x 17 region on a 1024 x 768 canvas)");
        println!();
        println!("tool cost per click by what closed the loops (same browser, same run):");
        for (oracle, v) in &by_oracle {
            println!("  {oracle:<8} median {:>6.2} ms (n={})", median(v), v.len());
        }
        if let (Some(px), Some(rp)) = (
            by_oracle.iter().find(|(o, _)| o == "pixels"),
            by_oracle.iter().find(|(o, _)| o == "reply"),
        ) {
            println!("  pixels / reply: {:.2}x", median(&px.1) / median(&rp.1));
        }
        println!();
        println!("tracing overhead, stock arm closed on pixels (same browser, same run):");
        let untraced = by_trace.iter().find(|(t, _)| !t).map(|(_, v)| v.clone()).unwrap_or_default();
        let with = by_trace.iter().find(|(t, _)| *t).map(|(_, v)| v.clone()).unwrap_or_default();
        let (a, b) = (median(&untraced), median(&with));
        println!("  tool cost per click without --trace {a:>6.2} ms (n={}), with {b:>6.2} ms (n={}): {:.2}x", untraced.len(), with.len(), b / a);
        match traced {
            Some(t) => {
                let o = &t.overhead;
                println!(
                    "  trace: {:.1} MB from Chromium ({} events), trace.json {:.1} MB; start {:.0} ms, collect {:.0} ms, merge and write {:.0} ms",
                    o.chromium_bytes as f64 / 1e6, t.events, o.file_bytes as f64 / 1e6, o.start_ms, o.collect_ms, o.write_ms
                );
                println!(
                    "  alignment: error {:.4} ms over {} marks; inputs' EventTiming vs t_input at most {:.4} ms (n={}); {} loop slices, {} input and {} frame flows",
                    t.alignment_error_ms, t.alignment_marks, t.input_error_ms.unwrap_or(f64::NAN), t.inputs_checked, t.loop_slices, t.input_flows, t.frame_flows
                );
            }
            None => println!("  the traced arm recorded no trace (see its warnings)"),
        }
        browser.close().await?;
        Ok(())
    })
}
