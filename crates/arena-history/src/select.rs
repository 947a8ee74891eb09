//! The gate's baseline from history: the newest runs of a branch measured like the
//! candidate, read back as the runs their folders held, so the gate runs on them unchanged.

use anyhow::Result;
use arena_compare::comparability;
use arena_report::Exit;
use arena_run::Run;

use crate::store::{open_default, Filter, RunRow, Store};

/// The runs chosen and what was passed over.
#[derive(Debug, Clone)]
pub struct Baseline {
    pub runs: Vec<Run>,
    pub rows: Vec<RunRow>,
    /// Runs of the branch, testbed and pilot that the comparability rules refused.
    pub not_comparable: usize,
    /// Runs of the branch, testbed and pilot of an arm, or knobs, no candidate has: the
    /// arms of one pilot file differ in their knobs on purpose, so the rules let them
    /// compare, but a baseline is the candidate's own arm.
    pub other_arm: usize,
}

/// The newest `last` runs of `branch` on `testbed` with the candidates' pilot hash, of an
/// arm and knobs some candidate has, that `arena_compare::comparability` finds measured
/// like every candidate (the rule `compare` and `gate` refuse mixed runs by), oldest
/// first. `ab --arms stock,lazy-png --history` stores both arms under one branch: a stock
/// candidate's baseline is its stock runs. `arm` names another arm instead (`gate
/// --baseline-arm`: a candidate arm against the branch's stock), whose runs must then share
/// the newest one's knobs. A stored copy of a candidate is left out: it would count on
/// both sides. None found is exit 2 naming what was looked for.
pub fn baseline_runs(
    store: &dyn Store,
    branch: &str,
    testbed: &str,
    candidates: &[Run],
    last: usize,
    arm: Option<&str>,
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
        other_arm: 0,
    };
    for row in rows.into_iter().rev().filter(|r| r.pilot_hash == pilot) {
        if out.runs.len() == last {
            break;
        }
        let run = store.load(row.id, false)?;
        if candidates.iter().any(|c| c.same_run(&run)) {
            continue;
        }
        let wanted = match arm {
            None => candidates
                .iter()
                .any(|c| c.meta.arm == run.meta.arm && c.meta.knobs == run.meta.knobs),
            Some(a) => {
                run.meta.arm == a
                    && out
                        .runs
                        .first()
                        .is_none_or(|f| f.meta.knobs == run.meta.knobs)
            }
        };
        if !wanted {
            out.other_arm += 1;
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
            "--baseline-history {branch}: no stored run of branch {branch} on testbed {testbed} with pilot {} and the candidate's arm ({}) measured like the candidate ({} of that pilot of other arms or knobs, {} refused by the comparability rules) in {}",
            pilot.get(..12).unwrap_or(&pilot),
            arm.map_or_else(|| candidate_arms(candidates), str::to_string),
            out.other_arm,
            out.not_comparable,
            store.describe()
        ))
        .into());
    }
    out.runs.reverse();
    out.rows.reverse();
    Ok(out)
}

impl Baseline {
    /// The stored runs' ids, as `history list` shows them.
    fn ids(&self) -> String {
        let ids: Vec<String> = self.rows.iter().map(|r| r.id.to_string()).collect();
        ids.join(", ")
    }

    /// `; N of other arms passed over; M passed over as not measured alike`, or nothing.
    fn passed_over(&self) -> String {
        let mut out = String::new();
        if self.other_arm > 0 {
            out += &format!("; {} of other arms or knobs passed over", self.other_arm);
        }
        if self.not_comparable > 0 {
            out += &format!(
                "; {} passed over as not measured alike",
                self.not_comparable
            );
        }
        out
    }
}

/// `stock` or `stock, lazy-png`: the candidates' arms, each once.
fn candidate_arms(candidates: &[Run]) -> String {
    let mut arms: Vec<&str> = candidates.iter().map(|c| c.meta.arm.as_str()).collect();
    arms.dedup();
    arms.join(", ")
}

/// The gate's `--baseline-history`: [`baseline_runs`] from the history `db` names (as
/// `--db`), and the note put under the gate's table that says which runs they are.
pub fn history_baseline(
    db: Option<&str>,
    branch: &str,
    testbed: &str,
    candidates: &[Run],
    last: usize,
    arm: Option<&str>,
) -> Result<(Vec<Run>, String)> {
    let store = open_default(db)?;
    let b = baseline_runs(store.as_ref(), branch, testbed, candidates, last, arm)?;
    let note = format!(
        "baseline: the last {} stored runs of {branch} on testbed {testbed} (asked for {last}; ids {}){}",
        b.runs.len(),
        b.ids(),
        b.passed_over()
    );
    Ok((b.runs, note))
}

/// `compare` and `report` with a history selection: the stored runs `sel` selects from the
/// history `db` names, oldest first, then `folders`; and the note that says which stored
/// runs they are.
pub fn with_stored(
    db: Option<&str>,
    sel: &Selection,
    folders: Vec<Run>,
) -> Result<(Vec<Run>, String)> {
    let store = open_default(db)?;
    let b = selected_runs(store.as_ref(), sel, &folders)?;
    let note = format!(
        "from the history ({}): stored runs {}{}",
        store.describe(),
        b.ids(),
        b.passed_over()
    );
    let mut runs = b.runs;
    runs.extend(folders);
    Ok((runs, note))
}

/// Which stored runs `compare` and `report` take beside (or instead of) folders.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// The newest runs of this branch, chosen as the gate chooses its history baseline.
    pub branch: Option<String>,
    pub testbed: String,
    pub last: usize,
    /// Runs by id (`history list` shows them), as they are.
    pub ids: Vec<i64>,
    /// Only the branch's runs of this arm (`plan --arm`); its newest sets the pilot hash.
    pub arm: Option<String>,
}

/// The runs `sel` selects, each with the name it is shown under: `ARM@BRANCH` for the
/// branch's runs, `ARM@#ID` for runs by id, so stored runs never pool with folders of the
/// same arm. With folder runs (`reference`), the branch's runs are [`baseline_runs`] of
/// them: the same pilot hash, testbed and comparability rules as the gate's history
/// baseline. Without, the newest stored run of the branch on the testbed sets the pilot
/// hash and the rules judge the rest against it.
pub fn selected_runs(store: &dyn Store, sel: &Selection, reference: &[Run]) -> Result<Baseline> {
    let mut out = Baseline {
        runs: Vec::new(),
        rows: Vec::new(),
        not_comparable: 0,
        other_arm: 0,
    };
    if let Some(branch) = &sel.branch {
        let newest;
        let refs = if reference.is_empty() {
            newest = newest_run(store, branch, &sel.testbed, sel.arm.as_deref())?;
            out.runs.push(newest.1.clone());
            out.rows.push(newest.0.clone());
            std::slice::from_ref(&newest.1)
        } else {
            reference
        };
        let want = sel.last.saturating_sub(out.runs.len());
        if want > 0 && (!reference.is_empty() || store.list(&branch_filter(branch, sel))?.len() > 1)
        {
            let b = baseline_runs(store, branch, &sel.testbed, refs, want, sel.arm.as_deref())?;
            out.not_comparable = b.not_comparable;
            out.other_arm = b.other_arm;
            out.runs.splice(0..0, b.runs);
            out.rows.splice(0..0, b.rows);
        }
        for r in &mut out.runs {
            r.meta.arm = format!("{}@{branch}", r.meta.arm);
        }
    }
    for &id in &sel.ids {
        let row = store.row(id)?;
        let mut run = store.load(id, false)?;
        run.meta.arm = format!("{}@#{id}", run.meta.arm);
        out.runs.push(run);
        out.rows.push(row);
    }
    Ok(out)
}

fn branch_filter(branch: &str, sel: &Selection) -> Filter {
    Filter {
        branch: Some(branch.to_string()),
        testbed: Some(sel.testbed.clone()),
        ..Filter::default()
    }
}

/// The newest stored run of `branch` on `testbed` (of `arm`, when given); none is exit 2
/// saying what was looked for.
fn newest_run(
    store: &dyn Store,
    branch: &str,
    testbed: &str,
    arm: Option<&str>,
) -> Result<(RunRow, Run)> {
    let filter = Filter {
        branch: Some(branch.to_string()),
        testbed: Some(testbed.to_string()),
        arm: arm.map(str::to_string),
        last: Some(1),
        ..Filter::default()
    };
    let row = store.list(&filter)?.pop().ok_or_else(|| {
        Exit::bad_input(format!(
            "--history-branch {branch}: no stored run of branch {branch} on testbed {testbed}{} in {}",
            arm.map_or_else(String::new, |a| format!(" of arm {a}")),
            store.describe()
        ))
    })?;
    let run = store.load(row.id, false)?;
    Ok((row, run))
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
            scenario: None,
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
        let b = baseline_runs(s.as_ref(), "main", "bench-1", &cand, 3, None).unwrap();
        let got: Vec<i64> = b.rows.iter().map(|r| r.id).collect();
        assert_eq!(got, vec![ids[1], ids[2], ids[3]]);
        assert_eq!(b.not_comparable, 1);
        assert_eq!(b.runs[0], s.load(ids[1], false).unwrap());

        let e = baseline_runs(s.as_ref(), "main", "elsewhere", &cand, 3, None).unwrap_err();
        assert!(format!("{e:#}").contains("testbed elsewhere"), "{e:#}");
    }

    /// `ab --arms stock,lazy-png --history` stores both arms under the branch; a stock
    /// candidate's baseline is stock runs with stock's knobs, the rest counted as passed over.
    #[test]
    fn a_baseline_is_the_candidates_arm_and_knobs_of_an_ab_history() {
        let d = tempfile::tempdir().unwrap();
        let mut s = crate::open(d.path().join("h.sqlite").to_str().unwrap()).unwrap();
        let mut stock_ids = Vec::new();
        for seed in 1..=10 {
            let mut r = timeout(full_run(seed), 3000);
            if seed % 2 == 0 {
                r.meta.arm = "lazy-png".into();
                r.meta.knobs.insert("lazy_png".into(), "true".into());
            } else if seed == 9 {
                // An arm of the same name whose knobs were changed by a `--knob`.
                r.meta.knobs.insert("delay_ms".into(), "40".into());
            } else {
                stock_ids.push(s.add(&new_run(r, "main")).unwrap().id());
                continue;
            }
            s.add(&new_run(r, "main")).unwrap();
        }
        let cand = vec![timeout(full_run(11), 3000)];
        let b = baseline_runs(s.as_ref(), "main", "bench-1", &cand, 10, None).unwrap();
        let got: Vec<i64> = b.rows.iter().map(|r| r.id).collect();
        assert_eq!(got, stock_ids);
        assert!(b
            .runs
            .iter()
            .all(|r| r.meta.arm == "stock" && r.meta.knobs.is_empty()));
        assert_eq!((b.other_arm, b.not_comparable), (6, 0));
        assert_eq!(b.passed_over(), "; 6 of other arms or knobs passed over");
        // A candidate of an arm the branch never ran finds nothing, and says which arm.
        let mut other = cand[0].clone();
        other.meta.arm = "tick8".into();
        let e =
            baseline_runs(s.as_ref(), "main", "bench-1", &[other.clone()], 10, None).unwrap_err();
        let text = format!("{e:#}");
        assert!(
            text.contains("the candidate's arm (tick8)")
                && text.contains("10 of that pilot of other arms"),
            "{text}"
        );
        // Asked for (`--baseline-arm stock`): the branch's stock runs with the newest one's
        // knobs, whatever the candidate's arm; here the newest was made with a `--knob`, and
        // it alone is the baseline, the 4 plain stock runs passed over with the 5 lazy-png.
        let b = baseline_runs(s.as_ref(), "main", "bench-1", &[other], 10, Some("stock")).unwrap();
        assert_eq!(b.runs.len(), 1);
        assert_eq!(
            b.runs[0].meta.knobs.get("delay_ms").map(String::as_str),
            Some("40")
        );
        assert_eq!(b.other_arm, 9);
    }

    #[test]
    fn a_selection_takes_the_branchs_newest_comparable_runs_and_runs_by_id() {
        let d = tempfile::tempdir().unwrap();
        let mut s = crate::open(d.path().join("h.sqlite").to_str().unwrap()).unwrap();
        let mut ids = Vec::new();
        for seed in 1..=5 {
            let ms = if seed == 4 { 1000 } else { 3000 };
            let r = new_run(timeout(full_run(seed), ms), "main");
            ids.push(s.add(&r).unwrap().id());
        }
        let other = s
            .add(&new_run(timeout(full_run(9), 3000), "feature"))
            .unwrap();
        let sel = Selection {
            branch: Some("main".into()),
            testbed: "bench-1".into(),
            last: 3,
            ids: vec![other.id()],
            arm: None,
        };
        // No folders: the newest run of main (5) sets the rules; 4 waited 1 s, not alike.
        let b = selected_runs(s.as_ref(), &sel, &[]).unwrap();
        let got: Vec<i64> = b.rows.iter().map(|r| r.id).collect();
        assert_eq!(got, vec![ids[1], ids[2], ids[4], other.id()]);
        assert_eq!(b.not_comparable, 1);
        assert_eq!(b.runs[0].meta.arm, "stock@main");
        assert_eq!(b.runs[3].meta.arm, format!("stock@#{}", other.id()));

        let none = Selection {
            branch: Some("nowhere".into()),
            ..sel.clone()
        };
        let e = selected_runs(s.as_ref(), &none, &[]).unwrap_err();
        assert!(
            format!("{e:#}").contains("no stored run of branch nowhere"),
            "{e:#}"
        );
        let missing = Selection {
            ids: vec![999],
            ..Selection::default()
        };
        assert!(selected_runs(s.as_ref(), &missing, &[]).is_err());
    }
}
