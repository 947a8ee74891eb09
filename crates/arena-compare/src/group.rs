//! Columns of a comparison: one run, or every run of one arm pooled.

use arena_run::{Metric, Run};

/// How columns are formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum By {
    /// One column per run: `<arm>, run N` (the notes' layout).
    Run,
    /// One column per arm, its runs pooled.
    #[default]
    Arm,
}

/// One column: a name and the runs behind it.
#[derive(Debug, Clone)]
pub struct Group<'a> {
    pub name: String,
    pub arm: String,
    pub runs: Vec<&'a Run>,
}

/// Arms in order of first appearance, runs in input order within an arm.
fn arms_in_order(runs: &[Run]) -> Vec<(String, Vec<&Run>)> {
    let mut arms: Vec<(String, Vec<&Run>)> = Vec::new();
    for r in runs {
        match arms.iter_mut().find(|(a, _)| *a == r.meta.arm) {
            Some((_, v)) => v.push(r),
            None => arms.push((r.meta.arm.clone(), vec![r])),
        }
    }
    arms
}

pub fn groups(runs: &[Run], by: By) -> Vec<Group<'_>> {
    let arms = arms_in_order(runs);
    match by {
        By::Arm => arms
            .into_iter()
            .map(|(arm, runs)| Group {
                name: arm.clone(),
                arm,
                runs,
            })
            .collect(),
        By::Run => arms
            .into_iter()
            .flat_map(|(arm, runs)| {
                runs.into_iter().enumerate().map(move |(i, r)| Group {
                    name: format!("{}, run {}", arm, i + 1),
                    arm: arm.clone(),
                    runs: vec![r],
                })
            })
            .collect(),
    }
}

impl Group<'_> {
    /// Ascending values of `metric` over answered loops that have it; cold loops only
    /// when `include_cold` (they are a different population: the cold cliff).
    pub fn values(&self, metric: Metric, include_cold: bool) -> Vec<f64> {
        let mut v: Vec<f64> = self
            .runs
            .iter()
            .flat_map(|r| r.loops.iter())
            .filter(|l| include_cold || !l.cold)
            .filter_map(|l| metric.of(l))
            .filter(|x| !x.is_nan())
            .collect();
        v.sort_unstable_by(f64::total_cmp);
        v
    }

    /// How many values [`Group::values`] would return, without collecting them.
    pub fn count(&self, metric: Metric, include_cold: bool) -> usize {
        self.runs
            .iter()
            .flat_map(|r| r.loops.iter())
            .filter(|l| include_cold || !l.cold)
            .filter(|l| metric.of(l).is_some_and(|x| !x.is_nan()))
            .count()
    }

    pub fn loops(&self) -> u64 {
        self.runs.iter().map(|r| r.loops.len() as u64).sum()
    }

    pub fn unanswered(&self) -> u64 {
        self.runs
            .iter()
            .flat_map(|r| r.loops.iter())
            .filter(|l| !l.answered)
            .count() as u64
    }

    pub fn cold(&self) -> u64 {
        self.runs
            .iter()
            .flat_map(|r| r.loops.iter())
            .filter(|l| l.cold)
            .count() as u64
    }

    /// Page-side WebSocket bytes received, summed over the column's runs.
    pub fn bytes_received(&self) -> u64 {
        self.runs
            .iter()
            .map(|r| r.meta.summary.bytes_received)
            .sum()
    }

    pub fn frames_received(&self) -> u64 {
        self.runs
            .iter()
            .map(|r| r.meta.summary.frames_received)
            .sum()
    }

    /// Answered loops, and those whose reply carried more than 4 KB.
    pub fn replies_over_4kb(&self) -> (u64, u64) {
        let answered = self
            .runs
            .iter()
            .flat_map(|r| r.loops.iter())
            .filter(|l| l.answered);
        let (mut n, mut big) = (0u64, 0u64);
        for l in answered {
            n += 1;
            if l.reply_bytes > 4096 {
                big += 1;
            }
        }
        (n, big)
    }
}
