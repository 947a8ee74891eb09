//! Overhead of the matrix machinery, measured in one run and printed side by side:
//!
//! 1. the tree sampler's own CPU at 10 Hz over a process tree of 50 threads (5 processes x
//!    10 threads of the `burn` fixture), against a budget of 1 % of one core;
//! 2. matrix bookkeeping per run (everything around a run that is not the command itself:
//!    folders, pipes, sampler start/stop, reaping, run files, runs.jsonl) against a budget
//!    of 5 ms, with a bare `sh -c true` spawn loop beside it for scale.
//!
//! `cargo bench -p arena-matrix --bench overhead`

#[path = "../tests/common/mod.rs"]
mod common;

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

use arena_matrix::sampler::{TreeSampler, TreeSamplerConfig, TreeWalker};
use arena_stats::quantile;
use arena_sys::procfs::thread_cpu_seconds;

fn sampler_overhead() {
    let burn = common::burn().display().to_string();
    let script = format!("for i in 1 2 3 4 5; do {burn} 30000 --idle 9 & done; wait");
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(&script)
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn tree");
    let root = child.id() as i32;
    std::thread::sleep(Duration::from_millis(500));

    // Per-sample cost, measured on this thread's own CPU clock.
    let mut walker = TreeWalker::new(root, Vec::new(), Instant::now());
    walker.sample();
    let n = 300;
    let mut per_sample_us = Vec::with_capacity(n);
    for _ in 0..n {
        let c0 = thread_cpu_seconds();
        walker.sample();
        per_sample_us.push((thread_cpu_seconds() - c0) * 1e6);
    }
    let threads = walker.finish(0.0, Duration::from_millis(100)).threads.len();

    // The sampler as it runs beside a matrix run: 10 Hz, its own thread, 3 trials of 6 s.
    let mut pct = Vec::new();
    for _ in 0..3 {
        let s = TreeSampler::start(root, &TreeSamplerConfig::default(), Instant::now())
            .expect("start sampler");
        std::thread::sleep(Duration::from_secs(6));
        let (cpu, _) = s.stop();
        pct.push(100.0 * cpu.sampler_cpu_s / cpu.span_s.max(1e-9));
    }
    // SAFETY: kill has no memory preconditions; -root is the group of the tree started above.
    unsafe { libc::kill(-root, libc::SIGKILL) };
    let _ = child.wait();

    let med_us = quantile(&per_sample_us, 0.5).unwrap_or(f64::NAN);
    let at_10hz = med_us * 10.0 / 1e6 * 100.0;
    let med_pct = quantile(&pct, 0.5).unwrap_or(f64::NAN);
    println!("tree sampler over {threads} threads in 6 processes:");
    println!(
        "  one sample: median {med_us:.0} us CPU (n={n}), p90 {:.0} us -> {at_10hz:.3} % of one core at 10 Hz",
        quantile(&per_sample_us, 0.9).unwrap_or(f64::NAN)
    );
    println!(
        "  sampler thread at 10 Hz: median {med_pct:.3} % of one core (n=3 trials of 6 s; {:?})",
        pct.iter().map(|p| format!("{p:.3}")).collect::<Vec<_>>()
    );
    println!(
        "  budget 1 % of one core: measured / budget = {:.3}x",
        med_pct / 1.0
    );
}

fn bookkeeping() {
    let dir = common::scratch("bench-bookkeeping");
    let n = 100;
    let text = format!(
        "repeats = {n}\n[figure]\nkind = \"regex\"\npattern = 'x=(?P<value>\\d+)'\n[[arm]]\nname = \"a\"\n[[case]]\nname = \"c\"\ncommand = \"echo x=1\"\n"
    );
    let t = Instant::now();
    let m = common::run_text(&dir, &text);
    let total = t.elapsed().as_secs_f64();
    let wall: f64 = m.runs.iter().map(|r| r.wall_s).sum();
    let book: Vec<f64> = m.runs.iter().map(|r| r.bookkeeping_ms).collect();
    assert!(m.runs.iter().all(|r| r.figure.is_some()));

    // The same command spawned bare, for scale.
    let t = Instant::now();
    let mut bare = Vec::with_capacity(n);
    for _ in 0..n {
        let s = Instant::now();
        let _ = Command::new("/bin/sh").arg("-c").arg("echo x=1").output();
        bare.push(s.elapsed().as_secs_f64() * 1000.0);
    }
    let bare_total = t.elapsed().as_secs_f64();

    let per_run_ms = total / n as f64 * 1000.0;
    let bare_ms = bare_total / n as f64 * 1000.0;
    let med_book = quantile(&book, 0.5).unwrap_or(f64::NAN);
    println!("matrix bookkeeping, {n} runs of `echo x=1` with the 10 Hz sampler on:");
    println!(
        "  matrix: {per_run_ms:.2} ms per run, of which the command {:.2} ms; bare spawn+wait {bare_ms:.2} ms per run (median {:.2} ms)",
        wall / n as f64 * 1000.0,
        quantile(&bare, 0.5).unwrap_or(f64::NAN)
    );
    println!(
        "  bookkeeping per run: median {med_book:.2} ms, p90 {:.2} ms, mean {:.2} ms (n={n})",
        quantile(&book, 0.9).unwrap_or(f64::NAN),
        (total - wall) / n as f64 * 1000.0
    );
    println!(
        "  budget 5 ms: median / budget = {:.3}x; matrix run / bare spawn = {:.2}x",
        med_book / 5.0,
        per_run_ms / bare_ms
    );
}

fn main() {
    // `cargo test --benches` passes --bench-less args; only measure under `cargo bench`.
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    sampler_overhead();
    bookkeeping();
}
