//! What `ab --until-decided --rounds FIRST --budget LAST` would have answered on runs
//! already made: each look takes the first K rounds of every arm (K = FIRST..=LAST, in the
//! folder's run order), through the same look `ab` makes ([`arena_compare::ab::look`], at
//! alpha over the looks), and the sequence stops at the first look that decides.
//!
//! A look depends only on the rounds before it, so replaying a fixed design's rounds is the
//! sequence it would have run; `scripts/demo-aa` keeps its repeats' runs for this.
//!
//! Usage: `cargo run --release -p arena-compare --example sequence_replay -- FIRST LAST
//! BASELINE RUNS_DIR...`; one line a folder: the look it stopped at and its verdict.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use arena_compare::ab::look;
use arena_compare::options::SplitArgs;
use arena_run::Run;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [first, last, baseline, dirs @ ..] = &args[..] else {
        bail!("usage: sequence_replay FIRST LAST BASELINE RUNS_DIR...");
    };
    let (first, last): (usize, usize) = (first.parse()?, last.parse()?);
    if first == 0 || last < first || dirs.is_empty() {
        bail!("FIRST must be at least 1, LAST at least FIRST, and a RUNS_DIR given");
    }
    let looks = (last - first + 1) as u32;
    for dir in dirs {
        let runs = load_in_order(Path::new(dir))?;
        let (stopped_at, line) = replay(&runs, first, last, looks, baseline);
        println!("{dir}: stopped after round {stopped_at}: {line}");
    }
    Ok(())
}

/// The sequence's looks at rounds `first..=last`: the round it stopped at and its line.
fn replay(runs: &[Run], first: usize, last: usize, looks: u32, baseline: &str) -> (usize, String) {
    let mut result = (0, String::from("no look"));
    for k in first..=last {
        let taken = first_rounds(runs, k);
        let (decided, line) = look(&taken, looks, baseline, &SplitArgs::default());
        result = (k, line);
        if decided {
            break;
        }
    }
    result
}

/// The first `k` runs of every arm, in the order given.
fn first_rounds(runs: &[Run], k: usize) -> Vec<Run> {
    let mut seen: Vec<(String, usize)> = Vec::new();
    let mut out = Vec::new();
    for r in runs {
        let arm = r.meta.arm.clone();
        let n = match seen.iter_mut().find(|(a, _)| *a == arm) {
            Some((_, n)) => n,
            None => {
                seen.push((arm, 0));
                &mut seen.last_mut().expect("just pushed").1
            }
        };
        if *n < k {
            *n += 1;
            out.push(r.clone());
        }
    }
    out
}

/// Every run folder in `dir`, in name order (`ab` names them by their start time).
fn load_in_order(dir: &Path) -> Result<Vec<Run>> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("run.json").is_file())
        .collect();
    folders.sort();
    folders.iter().map(|f| Run::load(f)).collect()
}
