//! Columns of a comparison: one run, or every run of one arm pooled.
//!
//! Each run is digested once ([`RunData`]: one pass over its loops, one sort per metric);
//! every table, check and plot reads the digest, so a million loops are walked once.

use arena_run::{Loop, Metric, Run};

/// How columns are formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum By {
    /// One column per run: `<arm>, run N`.
    Run,
    /// One column per arm, its runs pooled.
    #[default]
    Arm,
}

/// What every comparison needs of one run, computed in one pass.
#[derive(Debug, Clone)]
pub struct RunData<'a> {
    pub run: &'a Run,
    /// Per metric (in `Metric::ALL` order): ascending values of answered loops that have
    /// it; cold loops only when digested with `include_cold`.
    sorted: [Vec<f64>; Metric::ALL.len()],
    pub loops: u64,
    pub answered: u64,
    pub unanswered: u64,
    /// Loops whose only candidate answer already closed an earlier loop.
    pub claimed: u64,
    pub cold: u64,
    /// Answered loops whose reply reached the run's idle threshold (`idle_reply_bytes`;
    /// over 4 KB for runs written before it was the target's).
    pub over_idle: u64,
    /// That threshold in bytes; 0 for runs from before it was recorded.
    pub idle_reply_bytes: u64,
    /// The lowest-index loop in the figures that has an inputToPaint: (index, value, cold).
    pub first: Option<(u64, f64, bool)>,
    /// Per metric (in `Metric::ALL` order): unanswered loops in the figures with no value
    /// of a metric that ends at or after the answer. Each is censored at the window: it
    /// took longer than the run waited, so it sits above every answered value.
    censored: [u64; Metric::ALL.len()],
    /// The answer window, ms (`loop_settings.timeout_ms`; absent in older runs).
    pub window_ms: Option<u64>,
    /// Per metric, per kind of input (`Loop::event`, in order of first appearance): the
    /// kind's values as [`RunData::strata`] gives them, answered ascending then censored.
    by_kind: [Vec<Vec<f64>>; Metric::ALL.len()],
}

/// Whether an unanswered loop is censored on `m` in `run`: `m` ends at or after the answer,
/// and the run measures it (some loop has it, or the oracle is the one that makes it).
/// inputToSocket and recvToDraw end before an answer could have come. A run of which no
/// loop was answered censors inputToPaint under any oracle: the page paints whatever
/// reply comes, so none painted is none come within the window (a target that stopped
/// answering, not a figure the run does not measure).
fn censors(run: &Run, m: Metric, has_value: bool) -> bool {
    let oracle = run
        .meta
        .answer
        .as_ref()
        .map_or("reply", |a| a.oracle.as_str());
    let none_answered = run.loops.iter().all(|l| !l.answered);
    match m {
        Metric::InputToSocket | Metric::RecvToDraw => false,
        Metric::SendToRecv => true,
        Metric::InputToPaint => has_value || oracle == "reply" || none_answered,
        Metric::InputToPixels => has_value || oracle != "reply",
    }
}

fn slot(m: Metric) -> usize {
    Metric::ALL.iter().position(|x| *x == m).unwrap_or(0)
}

/// Which loops of a run a digest keeps, and the reply size that counts as "over" (the
/// run's own `idle_reply_bytes` when `None`).
#[derive(Clone, Copy)]
pub struct Select<'f> {
    pub include_cold: bool,
    pub keep: &'f dyn Fn(&Loop) -> bool,
    pub over_bytes: Option<u64>,
}

impl<'a> RunData<'a> {
    pub fn new(run: &'a Run, include_cold: bool) -> RunData<'a> {
        RunData::select(
            run,
            Select {
                include_cold,
                keep: &|_| true,
                over_bytes: None,
            },
        )
    }

    /// The digest of the loops `sel` keeps: a breakdown's row is one of these per run.
    pub fn select(run: &'a Run, sel: Select<'_>) -> RunData<'a> {
        let include_cold = sel.include_cold;
        let n = run.loops.len();
        let mut sorted: [Vec<f64>; Metric::ALL.len()] =
            std::array::from_fn(|_| Vec::with_capacity(n));
        let mut d = RunData {
            run,
            sorted: Default::default(),
            loops: 0,
            answered: 0,
            unanswered: 0,
            claimed: 0,
            cold: 0,
            over_idle: 0,
            idle_reply_bytes: sel.over_bytes.unwrap_or(run.meta.summary.idle_reply_bytes),
            first: None,
            censored: [0; Metric::ALL.len()],
            window_ms: run.meta.loop_settings.as_ref().map(|s| s.timeout_ms),
            by_kind: Default::default(),
        };
        let mut kinds: Vec<&str> = Vec::new();
        let mut by_kind: [Vec<Vec<f64>>; Metric::ALL.len()] = Default::default();
        let mut missing_by_kind: [Vec<usize>; Metric::ALL.len()] = Default::default();
        for l in run.loops.iter().filter(|l| (sel.keep)(l)) {
            d.loops += 1;
            if l.answered {
                d.answered += 1;
                let big = match d.idle_reply_bytes {
                    0 => l.reply_bytes > 4096,
                    t => l.reply_bytes >= t,
                };
                if big {
                    d.over_idle += 1;
                }
            } else if l.outcome == arena_run::Outcome::Claimed {
                d.claimed += 1;
            } else {
                d.unanswered += 1;
            }
            if l.cold {
                d.cold += 1;
                if !include_cold {
                    continue;
                }
            }
            let unanswered = !l.answered && l.outcome != arena_run::Outcome::Claimed;
            let kind = kinds.iter().position(|k| *k == l.event).unwrap_or_else(|| {
                kinds.push(&l.event);
                kinds.len() - 1
            });
            for (k, m) in Metric::ALL.iter().enumerate() {
                by_kind[k].resize_with(kinds.len(), Vec::new);
                missing_by_kind[k].resize(kinds.len(), 0);
                match m.of(l).filter(|v| !v.is_nan()) {
                    Some(v) => {
                        sorted[k].push(v);
                        by_kind[k][kind].push(v);
                    }
                    None if unanswered => missing_by_kind[k][kind] += 1,
                    None => {}
                }
            }
            if let Some(v) = l.input_to_paint.filter(|v| !v.is_nan()) {
                if d.first.is_none_or(|(i, _, _)| l.index < i) {
                    d.first = Some((l.index, v, l.cold));
                }
            }
        }
        for v in &mut sorted {
            v.sort_unstable_by(f64::total_cmp);
        }
        for (k, m) in Metric::ALL.iter().enumerate() {
            let censoring = censors(run, *m, !sorted[k].is_empty());
            if censoring {
                d.censored[k] = missing_by_kind[k].iter().sum::<usize>() as u64;
            }
            for (v, &missing) in by_kind[k].iter_mut().zip(&missing_by_kind[k]) {
                v.sort_unstable_by(f64::total_cmp);
                if censoring {
                    v.extend(std::iter::repeat_n(f64::INFINITY, missing));
                }
            }
            by_kind[k].retain(|v| !v.is_empty());
        }
        d.sorted = sorted;
        d.by_kind = by_kind;
        d
    }

    /// Every loop of the figures on `m` by kind of input, each kind ascending with its
    /// censored loops (`+inf`) at its top: what the decision rule resamples, each kind at
    /// the count the run's design fixed ([`arena_stats::Strata`]).
    pub fn strata(&self, m: Metric) -> &[Vec<f64>] {
        &self.by_kind[slot(m)]
    }

    /// Ascending values of the answered loops that have `m`.
    pub fn values(&self, m: Metric) -> &[f64] {
        &self.sorted[slot(m)]
    }

    /// Unanswered loops censored on `m` (see [`censors`]).
    pub fn censored(&self, m: Metric) -> u64 {
        self.censored[slot(m)]
    }

    /// Every loop of the figures on `m`, ascending: the answered values, then one
    /// `+inf` per censored loop (`arena_stats` reads `+inf` as beyond the window).
    pub fn values_all(&self, m: Metric) -> Vec<f64> {
        let mut v = self.values(m).to_vec();
        v.extend(std::iter::repeat_n(
            f64::INFINITY,
            self.censored(m) as usize,
        ));
        v
    }
}

/// Digests every run once.
pub fn digest(runs: &[Run], include_cold: bool) -> Vec<RunData<'_>> {
    runs.iter().map(|r| RunData::new(r, include_cold)).collect()
}

/// One column: a name and the runs behind it.
#[derive(Debug, Clone)]
pub struct Group<'a> {
    pub name: String,
    pub arm: String,
    pub runs: Vec<&'a RunData<'a>>,
}

/// Arms in order of first appearance, runs in input order within an arm.
fn arms_in_order<'a>(runs: &'a [RunData<'a>]) -> Vec<(String, Vec<&'a RunData<'a>>)> {
    let mut arms: Vec<(String, Vec<&RunData>)> = Vec::new();
    for r in runs {
        match arms.iter_mut().find(|(a, _)| *a == r.run.meta.arm) {
            Some((_, v)) => v.push(r),
            None => arms.push((r.run.meta.arm.clone(), vec![r])),
        }
    }
    arms
}

pub fn groups<'a>(runs: &'a [RunData<'a>], by: By) -> Vec<Group<'a>> {
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

/// Every run named `<arm>, run N`, N counting the arm's runs in order.
pub fn numbered_runs(runs: &[Run]) -> Vec<(String, &Run)> {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    runs.iter()
        .map(|r| {
            let arm = r.meta.arm.as_str();
            let n = match seen.iter_mut().find(|(a, _)| *a == arm) {
                Some(e) => {
                    e.1 += 1;
                    e.1
                }
                None => {
                    seen.push((arm, 1));
                    1
                }
            };
            (format!("{arm}, run {n}"), r)
        })
        .collect()
}

/// The runs' names as `compare --by run` gives them (`<arm>, run N`; the arm alone for one
/// run).
pub fn run_names(runs: &[Run]) -> Vec<(String, &Run)> {
    let mut out = numbered_runs(runs);
    if let [one] = out.as_mut_slice() {
        one.0 = one.1.meta.arm.clone();
    }
    out
}

/// Merges two ascending slices.
fn merge(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].total_cmp(&b[j]).is_le() {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

impl Group<'_> {
    /// Ascending values of `metric` over the column's runs (merged, not re-sorted).
    pub fn values(&self, metric: Metric) -> Vec<f64> {
        let mut out: Vec<f64> = Vec::new();
        for r in &self.runs {
            out = if out.is_empty() {
                r.values(metric).to_vec()
            } else {
                merge(&out, r.values(metric))
            };
        }
        out
    }

    /// Every loop of the column on `m`, ascending, unanswered ones censored at the window
    /// (`+inf`, after every answered value).
    pub fn values_all(&self, metric: Metric) -> Vec<f64> {
        let mut v = self.values(metric);
        v.extend(std::iter::repeat_n(
            f64::INFINITY,
            self.censored(metric) as usize,
        ));
        v
    }

    /// Unanswered loops of the column censored on `m`.
    pub fn censored(&self, metric: Metric) -> u64 {
        self.runs.iter().map(|r| r.censored(metric)).sum()
    }

    /// The answer window shared by the column's runs, ms (`None` when a run does not
    /// record it or they differ).
    pub fn window_ms(&self) -> Option<u64> {
        let w = self.runs.first()?.window_ms?;
        self.runs
            .iter()
            .all(|r| r.window_ms == Some(w))
            .then_some(w)
    }

    /// Each run's [`RunData::strata`] on `metric`, as the decision rule reads them.
    pub fn strata(&self, metric: Metric) -> Vec<arena_stats::Strata<'_>> {
        self.runs
            .iter()
            .map(|r| r.strata(metric).iter().map(Vec::as_slice).collect())
            .collect()
    }

    /// How many values [`Group::values`] returns, without building them.
    pub fn count(&self, metric: Metric) -> usize {
        self.runs.iter().map(|r| r.values(metric).len()).sum()
    }

    pub fn loops(&self) -> u64 {
        self.runs.iter().map(|r| r.loops).sum()
    }

    pub fn unanswered(&self) -> u64 {
        self.runs.iter().map(|r| r.unanswered).sum()
    }

    pub fn claimed(&self) -> u64 {
        self.runs.iter().map(|r| r.claimed).sum()
    }

    pub fn cold(&self) -> u64 {
        self.runs.iter().map(|r| r.cold).sum()
    }

    /// Page-side WebSocket bytes received, summed over the column's runs.
    pub fn bytes_received(&self) -> u64 {
        self.runs
            .iter()
            .map(|r| r.run.meta.summary.bytes_received)
            .sum()
    }

    /// Server-to-client wire figures summed over the group's runs; `None` unless every
    /// run was captured into a pcap (interface counters have no direction to add up).
    pub fn wire_server_to_client(&self) -> Option<(u64, u64)> {
        self.runs
            .iter()
            .try_fold((0u64, 0u64), |(payload, app), r| {
                let d = r.run.meta.wire.as_ref()?.server_to_client.as_ref()?;
                Some((payload + d.frame_payload_bytes, app + d.app_bytes))
            })
    }

    pub fn frames_received(&self) -> u64 {
        self.runs
            .iter()
            .map(|r| r.run.meta.summary.frames_received)
            .sum()
    }

    /// Answered loops, and those whose reply carried more than 4 KB.
    /// (answered loops, those whose reply reached the idle threshold, the first run's
    /// threshold in bytes or 0 for runs from before it was recorded).
    pub fn replies_over_idle(&self) -> (u64, u64, u64) {
        let threshold = self.runs.first().map_or(0, |r| r.idle_reply_bytes);
        let (n, b) = self
            .runs
            .iter()
            .fold((0, 0), |(n, b), r| (n + r.answered, b + r.over_idle));
        (n, b, threshold)
    }
}
