//! Wall time of a 156-click arm against the in-process fixture (target: under 60 s), and
//! what the tool itself costs per click (target: under 5 ms): its time on each click's
//! critical path, with the CDP click dispatch, drains and in-page waits beside it.
//! Run with `cargo bench --bench pilot_arm`.

use std::time::Instant;

use arena_perf::pilot::drive::{run_arm, BrowserOptions, Cancel, OutDir, Overrides, RunRequest};
use arena_perf::pilot::scenario::Pilot;
use arena_stats::Summary;

fn median(v: &[f64]) -> f64 {
    Summary::of(v).map(|s| s.p50).unwrap_or(f64::NAN)
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
            "{:<9} {:>7} {:>7} {:>9} {:>10} {:>8} {:>7} {:>7} {:>10} {:>5} {:>12}",
            "arm", "wall s", "clicks", "ms/click", "click CDP", "drain", "drains", "waits", "tool/click", "n", "inputToPaint"
        );
        for arm_name in ["stock", "lazy-png"] {
            let (name, arm) = pilot.arm(Some(arm_name))?;
            let ov = Overrides::default();
            let out = run_arm(
                &browser,
                RunRequest {
                    pilot: &pilot,
                    arm_name: name.clone(),
                    arm,
                    overrides: &ov,
                    out: OutDir::Exactly(tmp.path().join(&name)),
                    progress: false,
                    cancel: &cancel,
                },
            )
            .await?;
            let c = &out.cost;
            let clicks = c.click_ms.len() as f64;
            let itp = out.run.meta.summary.input_to_paint.map(|s| s.p50).unwrap_or(f64::NAN);
            println!(
                "{:<9} {:>7.1} {:>7} {:>7.1}ms {:>8.2}ms {:>6.2}ms {:>7.1} {:>7.1} {:>8.2}ms {:>5} {:>10.1}ms",
                name,
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
        println!("click CDP: mousePressed + mouseReleased sent together, until both are answered; Chromium");
        println!("  answers after the renderer handled them, so this overlaps the app's own work on the reply.");
        println!("tool/click (target < 5 ms): the tool's time on each answered click's critical path = dispatch");
        println!("  start to last drain end, less the page's first-input-to-quiet time; n = clicks it covers.");
        browser.close().await?;
        Ok(())
    })
}
