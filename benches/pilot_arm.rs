//! Wall time of a 156-click arm against the in-process fixture (target: under 60 s), and
//! what the tool itself costs per click: the CDP click dispatch and the drains that poll
//! for the click's loops. Run with `cargo bench --bench pilot_arm`.

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
            "{:<9} {:>7} {:>9} {:>10} {:>11} {:>11} {:>12} {:>13} {:>12}",
            "arm", "wall s", "clicks", "ms/click", "click CDP", "drain ms", "drains/click", "overhead/click", "inputToPaint"
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
            let drains_per_click = c.drain_ms.len() as f64 / clicks;
            let overhead = median(&c.click_ms) + median(&c.drain_ms) * drains_per_click;
            let itp = out.run.meta.summary.input_to_paint.map(|s| s.p50).unwrap_or(f64::NAN);
            println!(
                "{:<9} {:>7.1} {:>9} {:>10.1} {:>9.2}ms {:>9.2}ms {:>12.1} {:>11.2}ms {:>10.1}ms",
                name,
                c.wall_ms / 1e3,
                clicks,
                c.clicking_ms / clicks,
                median(&c.click_ms),
                median(&c.drain_ms),
                drains_per_click,
                overhead,
                itp
            );
        }
        println!("medians; n = 156 clicks per arm (312 loops); overhead/click = CDP click dispatch + drains x median drain");
        browser.close().await?;
        Ok(())
    })
}
