//! What the SQLite history costs: adding a 156-click run, listing 10,000 stored runs, a
//! trend over 1,000 runs, and the bytes a run takes. `cargo bench -p arena-history`.

use std::time::Instant;

use arena_compare::synthetic;
use arena_history::{Filter, NewRun, Origin, TrendOptions};
use arena_run::{Event, Run};

fn origin() -> Origin {
    Origin {
        branch: Some("main".into()),
        commit: Some("0".repeat(40)),
        testbed: "bench".into(),
    }
}

/// A run of `clicks` clicks (two loops each) with `records` recorder records per loop, as
/// a fixture run has (about 25).
fn run(clicks: usize, records: usize, seed: u64) -> Run {
    let loops = synthetic::lognormal(2 * clicks, 50.0, 0.3, 0.0, seed);
    let mut r = synthetic::run("stock", &loops, 6000);
    r.events = (0..loops.len() * records)
        .map(|i| Event {
            seq: i as u64,
            kind: ["ws_recv", "draw", "paint", "answer"][i % 4].into(),
            t_ms: 1000.0 + i as f64 * 0.5,
            size: 6000,
            class: String::new(),
            event: String::new(),
            trusted: true,
            target: 0,
            answers: None,
        })
        .collect();
    r
}

fn new_run(run: Run) -> NewRun {
    NewRun {
        run,
        origin: origin(),
        source: None,
    }
}

fn median_ms(mut v: Vec<f64>) -> f64 {
    v.sort_unstable_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let mut store = arena_history::open(path.to_str().unwrap()).unwrap();
    let n_add = 20;
    let mut times = Vec::new();
    for seed in 0..n_add {
        let r = new_run(run(156, 25, seed));
        let t = Instant::now();
        store.add(&r).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    drop(store);
    let bytes = std::fs::metadata(&path).unwrap().len()
        + std::fs::metadata(path.with_extension("sqlite-wal")).map_or(0, |m| m.len());
    println!(
        "add a 156-click run (312 loops, 7,800 records): median {:.1} ms (n = {n_add} adds); {:.0} KB a run on disk (file + WAL / {n_add})",
        median_ms(times),
        bytes as f64 / n_add as f64 / 1024.0
    );

    let list_path = dir.path().join("list.sqlite");
    let mut store = arena_history::open(list_path.to_str().unwrap()).unwrap();
    for seed in 0..10_000 {
        store
            .add(&new_run(synthetic::run(
                "stock",
                &[50.0 + seed as f64 * 1e-4],
                6000,
            )))
            .unwrap();
    }
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let rows = store.list(&Filter::default()).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(rows.len(), 10_000);
    }
    println!(
        "list 10,000 stored runs: median {:.1} ms (n = 5 lists)",
        median_ms(times)
    );

    let trend_path = dir.path().join("trend.sqlite");
    let mut store = arena_history::open(trend_path.to_str().unwrap()).unwrap();
    for seed in 0..1_000u64 {
        let shift = if seed >= 600 { 20.0 } else { 0.0 };
        let loops = synthetic::lognormal(100, 50.0, 0.3, shift, seed);
        store
            .add(&new_run(synthetic::run("stock", &loops, 6000)))
            .unwrap();
    }
    let opts = TrendOptions::parse("inputToPaint.p50").unwrap();
    let filter = Filter {
        branch: Some("main".into()),
        ..Filter::default()
    };
    let mut times = Vec::new();
    let mut steps = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let tr = arena_history::trend(store.as_ref(), &filter, &opts).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
        steps = tr.steps.len();
    }
    println!(
        "trend over 1,000 runs of 100 loops: median {:.0} ms (n = 3 trends; {steps} step found, one planted at run 601)",
        median_ms(times)
    );
}
