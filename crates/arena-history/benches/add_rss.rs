//! `history add`'s peak memory as a run's records grow, on SQLite: each add in a fresh
//! process (this bench run again as a child), streamed from the run's folder as the store
//! adds now, beside the same run loaded whole first (as adding did before, and as
//! `Run::load` still does). The run has 312 loops (156 clicks) at every size; only its
//! records grow. `cargo bench -p arena-history --bench add_rss [-- MAX_RECORDS]`
//! (2,000,000 by default; the largest folder takes ~250 MB of disk for a moment).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use arena_compare::synthetic;
use arena_history::{NewRun, Origin};
use arena_run::{Event, Run};

fn origin() -> Origin {
    Origin {
        branch: Some("main".into()),
        commit: Some("0".repeat(40)),
        testbed: "bench".into(),
    }
}

/// This process's peak resident set, KiB (`VmHWM` of /proc/self/status).
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The child: adds the run folder `dir` to a new database `db`, streamed or whole, and
/// prints its peak RSS.
fn child(mode: &str, dir: &Path, db: &str) {
    let mut store = arena_history::open(db).unwrap();
    let new = match mode {
        "stream" => NewRun::load(dir, origin()).unwrap(),
        _ => NewRun {
            run: Run::load(dir).unwrap(),
            origin: origin(),
            source: None,
            events_from: None,
        },
    };
    store.add(&new).unwrap();
    println!("{}", peak_kib());
}

/// A valid run folder of 156 clicks and `records` records (receipts, draws and paints in
/// turn), its summary counting them as the pilot would.
fn write_run(dir: &Path, records: u64) {
    let loops = synthetic::lognormal(312, 50.0, 0.3, 0.0, records);
    let mut r = synthetic::run("stock", &loops, 6000);
    r.meta.seed = records;
    let kinds = ["ws_recv", "draw", "paint"];
    r.events = (0..records)
        .map(|i| Event {
            seq: i,
            kind: kinds[(i % 3) as usize].into(),
            t_ms: 1000.0 + i as f64 * 0.01,
            size: if i % 3 == 0 { 6000 } else { 0 },
            class: String::new(),
            event: String::new(),
            trusted: true,
            target: 0,
            answers: None,
        })
        .collect();
    let s = &mut r.meta.summary;
    s.records = records;
    s.frames_received = records.div_ceil(3);
    s.bytes_received = 6000 * s.frames_received;
    r.write(dir).unwrap();
}

/// One add in a child: (peak RSS MB, seconds).
fn measure(mode: &str, dir: &Path, db: &Path) -> (f64, f64) {
    let t = Instant::now();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--child", mode])
        .arg(dir)
        .arg(db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kib: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    (kib / 1024.0, t.elapsed().as_secs_f64())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        return child(&args[i + 1], Path::new(&args[i + 2]), &args[i + 3]);
    }
    let max: u64 = args
        .iter()
        .find_map(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let tmp = tempfile::tempdir().unwrap();
    println!("history add, SQLite, 312 loops; peak RSS of the adding process (n = 1 add each)");
    println!("| records | streamed | whole | whole / streamed |");
    println!("|---:|---:|---:|---:|");
    for n in [7_800, 10_000, 100_000, 1_000_000, 2_000_000]
        .into_iter()
        .filter(|n| *n <= max)
    {
        let dir = tmp.path().join(format!("run-{n}"));
        write_run(&dir, n);
        let (s_mb, s_s) = measure("stream", &dir, &tmp.path().join(format!("s-{n}.sqlite")));
        let (w_mb, w_s) = measure("whole", &dir, &tmp.path().join(format!("w-{n}.sqlite")));
        println!(
            "| {n} | {s_mb:.1} MB ({s_s:.1} s) | {w_mb:.1} MB ({w_s:.1} s) | {:.2} |",
            w_mb / s_mb
        );
        let _ = std::fs::remove_dir_all(&dir);
        for f in std::fs::read_dir(tmp.path()).unwrap().flatten() {
            let _ = std::fs::remove_file(f.path());
        }
    }
}
