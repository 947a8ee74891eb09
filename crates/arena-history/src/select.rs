//! The gate's baseline from history: the newest runs of a branch measured like the
//! candidate, read back as the runs their folders held, so the gate runs on them unchanged.

use anyhow::Result;
use arena_compare::comparability;
use arena_report::Exit;
use arena_run::Run;

use crate::store::{Filter, RunRow, Store};

/// The runs chosen and what was passed over.
#[derive(Debug, Clone)]
pub struct Baseline {
    pub runs: Vec<Run>,
    pub rows: Vec<RunRow>,
    /// Runs of the branch, testbed and pilot that the comparability rules refused.
    pub not_comparable: usize,
}

/// The newest `last` runs of `branch` on `testbed` with the candidates' pilot hash that
/// `arena_compare::comparability` finds measured like every candidate (the rule `compare`
/// and `gate` refuse mixed runs by), oldest first. A stored copy of a candidate is left
/// out: it would count on both sides. None found is exit 2 naming what was looked for.
pub fn baseline_runs(
    store: &dyn Store,
    branch: &str,
    testbed: &str,
    candidates: &[Run],
    last: usize,
) -> Result<Baseline> {
    let pilot = candidates
        .first()
        .map(|r| r.meta.pilot_hash.clone())
        .ok_or_else(|| Exit::bad_input("no candidate runs"))?;
    let filter = Filter {
        branch: Some(branch.to_string()),
        testbed: Some(testbed.to_string()),
        pilot: Some(pilot.clone()),
        ..Filter::default()
    };
    let rows = store.list(&filter)?;
    let mut out = Baseline {
        runs: Vec::new(),
        rows: Vec::new(),
        not_comparable: 0,
    };
    for row in rows.into_iter().rev().filter(|r| r.pilot_hash == pilot) {
        if out.runs.len() == last {
            break;
        }
        let run = store.load(row.id, false)?;
        if candidates.iter().any(|c| c.same_run(&run)) {
            continue;
        }
        let mut labelled: Vec<(String, &Run)> = vec![(format!("history run {}", row.id), &run)];
        labelled.extend(
            candidates
                .iter()
                .enumerate()
                .map(|(i, c)| (format!("candidate run {}", i + 1), c)),
        );
        if !comparability(&labelled).is_empty() {
            out.not_comparable += 1;
            continue;
        }
        out.runs.push(run);
        out.rows.push(row);
    }
    if out.runs.is_empty() {
        return Err(Exit::bad_input(format!(
            "--baseline-history {branch}: no stored run of branch {branch} on testbed {testbed} with pilot {} measured like the candidate ({} of that pilot refused by the comparability rules) in {}",
            pilot.get(..12).unwrap_or(&pilot),
            out.not_comparable,
            store.describe()
        ))
        .into());
    }
    out.runs.reverse();
    out.rows.reverse();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{full_run, new_run};

    fn timeout(mut r: Run, ms: u64) -> Run {
        r.meta.loop_settings = Some(arena_run::LoopSettings {
            loop_events: vec!["mousedown".into()],
            timeout_ms: ms,
            settle_ms: 50,
            interval_ms: 100,
            warmup: 0,
            move_first: false,
            hold: "fixed".into(),
            hold_min_ms: 50,
            hold_max_ms: 50,
            phase_jitter_ms: 0.0,
            frame_interval_ms: None,
            socket_clock_error_ms: None,
        });
        r
    }

    #[test]
    fn the_newest_comparable_runs_of_the_branch_oldest_first() {
        let d = tempfile::tempdir().unwrap();
        let mut s = crate::open(d.path().join("h.sqlite").to_str().unwrap()).unwrap();
        let mut ids = Vec::new();
        for seed in 1..=6 {
            // Run 5 waited 1 s for an answer where the others waited 3 s: not comparable.
            let ms = if seed == 5 { 1000 } else { 3000 };
            ids.push(
                s.add(&new_run(timeout(full_run(seed), ms), "main"))
                    .unwrap()
                    .id(),
            );
        }
        s.add(&new_run(timeout(full_run(7), 3000), "feature"))
            .unwrap();
        let mut other_pilot = timeout(full_run(8), 3000);
        other_pilot.meta.pilot_hash = "f".repeat(64);
        s.add(&new_run(other_pilot, "main")).unwrap();
        // The candidate is run 6 itself, already stored: it is not its own baseline.
        let cand = vec![timeout(full_run(6), 3000)];
        let b = baseline_runs(s.as_ref(), "main", "bench-1", &cand, 3).unwrap();
        let got: Vec<i64> = b.rows.iter().map(|r| r.id).collect();
        assert_eq!(got, vec![ids[1], ids[2], ids[3]]);
        assert_eq!(b.not_comparable, 1);
        assert_eq!(b.runs[0], s.load(ids[1], false).unwrap());

        let e = baseline_runs(s.as_ref(), "main", "elsewhere", &cand, 3).unwrap_err();
        assert!(format!("{e:#}").contains("testbed elsewhere"), "{e:#}");
    }
}
