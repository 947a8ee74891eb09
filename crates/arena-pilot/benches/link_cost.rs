//! What the shaping link costs when it shapes nothing: the same fixture arm direct and
//! through `--link rtt=0` (the link's proxy with no delay, no rate, no jitter), interleaved
//! (direct, link, direct, link) in one browser, and the press's sendToRecv p50 of each
//! side by side (p10 too: on a loaded machine the median carries scheduling delay that
//! the quiet tail shows apart). The goal: the link adds under 0.3 ms at the median.
//! Run with `cargo bench -p arena-pilot --bench link_cost`.

use arena_pilot::{run_arm, silent, BrowserOptions, Cancel, OutDir, Overrides, Plan, RunRequest};

const CLICKS: u64 = 100;
const ROUNDS: usize = 2;

#[path = "support/mod.rs"]
mod support;
use support::{load, q};

fn main() -> anyhow::Result<()> {
    let pilot = arena_pilot::Pilot::builtin()?;
    let tmp = tempfile::tempdir()?;
    let load_before = load();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let browser = BrowserOptions::default().launch().await?;
        let cancel = Cancel::new();
        // The calibration's quiet fixture, so the relay is the only difference.
        let knobs: Vec<(String, String)> =
            [("los_work", "0"), ("lazy_png", "true"), ("tick_ms", "1")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        let mut sides: [(String, Vec<f64>); 2] =
            [("direct".into(), vec![]), ("rtt=0 relay".into(), vec![])];
        for round in 0..ROUNDS {
            for (i, link) in [None, Some("rtt=0")].into_iter().enumerate() {
                let ov = Overrides {
                    clicks: Some(CLICKS),
                    knobs: knobs.clone(),
                    link: link.map(|l| arena_link::LinkSpec::parse(l).expect("link")),
                    ..Overrides::default()
                };
                let plan = Plan::for_arm(&pilot, Some("stock"), &ov)?;
                let out = run_arm(
                    &browser,
                    RunRequest {
                        plan: &plan,
                        out: OutDir::Exactly(tmp.path().join(format!("{round}-{i}"))),
                        progress: &silent,
                        cancel: &cancel,
                    },
                )
                .await?;
                sides[i].1.extend(
                    out.run
                        .loops
                        .iter()
                        .filter(|l| !l.cold && l.event == "mousedown")
                        .filter_map(|l| l.send_to_recv),
                );
            }
        }
        browser.close().await?;
        println!(
            "link_cost: press sendToRecv, {ROUNDS} interleaved rounds of {CLICKS} clicks a \
             side; load average {load_before} before, {} after",
            load()
        );
        let mut figures = Vec::new();
        for (name, v) in &sides {
            let (p10, p50, p90) = (q(v, 0.1), q(v, 0.5), q(v, 0.9));
            println!(
                "{name:<12} p10 {p10:>7.3}  p50 {p50:>7.3}  p90 {p90:>7.3} ms (n={})",
                v.len()
            );
            figures.push((p10, p50));
        }
        println!(
            "relay - direct: p50 {:+.3} ms (goal: under 0.3 ms), p10 {:+.3} ms; p50 ratio {:.3}",
            figures[1].1 - figures[0].1,
            figures[1].0 - figures[0].0,
            figures[1].1 / figures[0].1
        );
        anyhow::Ok(())
    })
}
