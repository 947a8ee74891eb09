//! What the history costs, on SQLite and, when `ARENA_HISTORY_BENCH_PG` names a server
//! (`postgres://USER@127.0.0.1:PORT/postgres`, a database it may create databases on), on
//! PostgreSQL beside it: adding a 156-click run, a gate against 20 stored runs, listing
//! 10,000 stored runs, a trend over 1,000 runs. `cargo bench -p arena-history`.

use std::time::Instant;

use arena_compare::{gate, synthetic, GateLimit, GateOptions};
use arena_history::{Filter, NewRun, Origin, Store, TrendOptions};
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
        events_from: None,
    }
}

fn median_ms(mut v: Vec<f64>) -> f64 {
    v.sort_unstable_by(f64::total_cmp);
    v[v.len() / 2]
}

fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let out = f();
    (t.elapsed().as_secs_f64() * 1e3, out)
}

/// Makes a fresh, empty database for one measurement.
type Fresh<'a> = &'a dyn Fn(&str) -> Box<dyn Store>;

/// One measurement: its result line on a store.
type Case = fn(Fresh) -> String;

fn add_156(fresh: Fresh) -> String {
    let mut store = fresh("add");
    let n = 20;
    let times = (0..n)
        .map(|seed| timed(|| store.add(&new_run(run(156, 25, seed))).unwrap()).0)
        .collect();
    format!("{:.1} ms (median of n = {n} adds)", median_ms(times))
}

fn gate_20(fresh: Fresh) -> String {
    let mut store = fresh("gate");
    for seed in 0..20 {
        store.add(&new_run(run(156, 0, 100 + seed))).unwrap();
    }
    let cand = vec![run(156, 0, 999)];
    let limits = vec![GateLimit::parse("inputToPaint.p90=+10%").unwrap()];
    let opts = GateOptions {
        on_unknown: arena_compare::OnUnknown::Pass,
        ..GateOptions::default()
    };
    let times = (0..5)
        .map(|_| {
            timed(|| {
                let b =
                    arena_history::baseline_runs(store.as_ref(), "main", "bench", &cand, 20, None)
                        .unwrap();
                gate(&b.runs, &cand, &limits, &opts).unwrap()
            })
            .0
        })
        .collect();
    format!(
        "{:.0} ms (median of n = 5 gates, 20 runs of 312 loops)",
        median_ms(times)
    )
}

fn list_10k(fresh: Fresh) -> String {
    let mut store = fresh("list");
    for seed in 0..10_000 {
        let r = synthetic::run("stock", &[50.0 + seed as f64 * 1e-4], 6000);
        store.add(&new_run(r)).unwrap();
    }
    let times = (0..5)
        .map(|_| timed(|| assert_eq!(store.list(&Filter::default()).unwrap().len(), 10_000)).0)
        .collect();
    format!("{:.0} ms (median of n = 5 lists)", median_ms(times))
}

fn trend_1k(fresh: Fresh) -> String {
    let mut store = fresh("trend");
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
    let mut steps = 0;
    let times = (0..3)
        .map(|_| {
            let (ms, t) = timed(|| arena_history::trend(store.as_ref(), &filter, &opts).unwrap());
            steps = t.steps.len();
            ms
        })
        .collect();
    format!(
        "{:.0} ms (median of n = 3; 100 loops a run; {steps} step found, one planted at run 601)",
        median_ms(times)
    )
}

/// A fresh database on the server `url` names, for each measurement.
fn pg_fresh(url: &str, name: &str) -> Box<dyn Store> {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let db = format!("arena_bench_{name}");
    c.batch_execute(&format!("DROP DATABASE IF EXISTS {db}"))
        .unwrap();
    c.batch_execute(&format!("CREATE DATABASE {db}")).unwrap();
    let base = url.rsplit_once('/').map_or(url, |(b, _)| b);
    arena_history::open(&format!("{base}/{db}")).unwrap()
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = |name: &str| {
        let p = dir.path().join(format!("{name}.sqlite"));
        arena_history::open(p.to_str().unwrap()).unwrap()
    };
    let pg_url = std::env::var("ARENA_HISTORY_BENCH_PG").ok();
    let pg = |name: &str| pg_fresh(pg_url.as_deref().unwrap_or_default(), name);
    let mut stores: Vec<(&str, Fresh)> = vec![("sqlite", &sqlite)];
    if pg_url.is_some() {
        stores.push(("postgres", &pg));
    } else {
        println!("postgres: not measured (set ARENA_HISTORY_BENCH_PG to a server's URL)");
    }
    let cases: [(&str, Case); 4] = [
        ("add a 156-click run (312 loops, 7,800 records)", add_156),
        ("gate against 20 stored runs", gate_20),
        ("list 10,000 stored runs", list_10k),
        ("trend over 1,000 runs", trend_1k),
    ];
    for (what, f) in cases {
        for (name, fresh) in &stores {
            println!("{what}, {name}: {}", f(*fresh));
        }
    }
    let add = dir.path().join("add.sqlite");
    let bytes = std::fs::metadata(&add).map_or(0, |m| m.len())
        + std::fs::metadata(add.with_extension("sqlite-wal")).map_or(0, |m| m.len());
    println!(
        "sqlite bytes a 156-click run takes: {:.0} KB (file and WAL / n = 20 runs)",
        bytes as f64 / 20.0 / 1024.0
    );
}
