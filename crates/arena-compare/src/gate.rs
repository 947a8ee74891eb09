//! `arena-perf gate`: fail CI only on a significant regression past a threshold.
//!
//! A check `--max sendToRecv.p50=+10%` fails when the change is real by the noise verdict
//! (Mann-Whitney p < alpha, bootstrap interval of the difference excluding 0, past the
//! 2 % noise bar) **and** the whole bootstrap interval lies above +10 % of the baseline:
//! the regression is significantly larger than the limit. A large change that is not
//! significant passes and says so: noise never fails a build.

use anyhow::Result;
use arena_report::{fmt_ms, fmt_pct_change, Cell, Column, Exit, Table};
use arena_run::{Metric, Run};
use arena_stats::{noise_verdict, pct_change, NoiseRule, QuantileChange, Verdict};
use serde::Serialize;

use crate::compare::change_cells;
use crate::findings::{annotate, check, CheckOptions, Finding};
use crate::group::{digest, Group, RunData};

/// One `--max METRIC.pQ=+PCT` limit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Limit {
    pub metric: &'static str,
    #[serde(skip)]
    pub metric_enum: Metric,
    /// Quantile in [0, 1].
    pub q: f64,
    /// Label of the quantile as given (`p50`).
    pub stat: String,
    /// Largest allowed increase, percent of the baseline.
    pub max_pct: f64,
}

impl Limit {
    /// Parses `METRIC[.|:| ]pQ=+PCT[%]`, e.g. `sendToRecv.p50=+10%`; the quantile
    /// defaults to p50. Errors name the argument and what was expected (exit 2).
    pub fn parse(spec: &str) -> Result<Limit> {
        let bad = |why: &str| -> anyhow::Error {
            Exit::bad_input(format!(
                "--max {spec}: {why} (expected METRIC.pQ=+PCT, e.g. sendToRecv.p50=+10%; metrics: {})",
                Metric::ALL.map(|m| m.name()).join(", ")
            ))
            .into()
        };
        let (left, right) = spec.split_once('=').ok_or_else(|| bad("no '='"))?;
        let (metric_text, stat) = match left
            .rsplit_once(['.', ':', ' '])
            .filter(|(_, q)| q.starts_with(['p', 'P']))
        {
            Some((m, q)) => (m.trim(), q.trim().to_ascii_lowercase()),
            None => (left.trim(), "p50".to_string()),
        };
        let metric = Metric::parse(metric_text).ok_or_else(|| bad("unknown metric"))?;
        let q: f64 = stat[1..]
            .parse()
            .map_err(|_| bad("the quantile is p followed by a percent, e.g. p90"))?;
        if !q.is_finite() {
            return Err(bad("the quantile is not a finite number"));
        }
        if !(0.0..=100.0).contains(&q) {
            return Err(bad("the quantile must be between p0 and p100"));
        }
        // One `%` at most: `trim_end_matches` would take `+10%%` (a shell-quoting slip)
        // for `+10%` without a word.
        let right = right.trim();
        let pct_text = right.strip_suffix('%').unwrap_or(right).trim();
        if pct_text.ends_with('%') {
            return Err(bad("one '%' at most"));
        }
        let max_pct: f64 = pct_text
            .parse()
            .map_err(|_| bad("the limit is a percent, e.g. +10%"))?;
        // `f64::from_str` takes `inf`, `NaN` and `1e400` (which overflows to inf): none
        // is a limit, and each deserves its own word rather than "0 or more".
        if !max_pct.is_finite() {
            return Err(bad(&format!(
                "the limit `{pct_text}` is not a finite number"
            )));
        }
        if max_pct < 0.0 {
            return Err(bad("the limit is an allowed increase, 0 or more"));
        }
        Ok(Limit {
            metric: metric.name(),
            metric_enum: metric,
            q: q / 100.0,
            stat,
            max_pct,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    Pass,
    Fail,
}

#[derive(Debug, Clone, Serialize)]
pub struct GateCheck {
    pub limit: Limit,
    pub n_baseline: usize,
    pub n_candidate: usize,
    pub change: QuantileChange,
    pub status: CheckStatus,
    /// Why, in words: `regression past the limit`, `within the limit`, `not significant`.
    pub reason: String,
}

#[derive(Debug, Clone)]
pub struct GateResult {
    pub checks: Vec<GateCheck>,
    pub findings: Vec<Finding>,
    pub table: Table,
}

impl GateResult {
    pub fn failed(&self) -> bool {
        self.checks.iter().any(|c| c.status == CheckStatus::Fail)
    }
}

fn group<'a>(name: &str, runs: &'a [RunData<'a>]) -> Group<'a> {
    let arms: Vec<&str> = runs.iter().map(|r| r.run.meta.arm.as_str()).collect();
    let mut distinct = arms.clone();
    distinct.dedup();
    Group {
        name: name.to_string(),
        arm: if distinct.len() == 1 {
            distinct[0].to_string()
        } else {
            format!("{name} arms")
        },
        runs: runs.iter().collect(),
    }
}

/// The runs must be two sides of one comparison: both given, of one pilot, and no run on
/// both sides or twice on one (compared with itself, a run always passes; counted twice,
/// it narrows the run-level interval).
fn check_sides(baseline: &[Run], candidate: &[Run], limits: &[Limit]) -> Result<()> {
    if limits.is_empty() {
        return Err(Exit::bad_input("gate: no --max limits given").into());
    }
    if baseline.is_empty() || candidate.is_empty() {
        return Err(Exit::bad_input("gate: needs baseline and candidate runs").into());
    }
    if let (Some(b), Some(c)) = (baseline.first(), candidate.first()) {
        if b.meta.pilot_hash != c.meta.pilot_hash {
            return Err(Exit::bad_input(format!(
                "gate: baseline runs ({}) and candidate runs ({}) come from different pilots (hash {} vs {}): not comparable",
                b.meta.arm,
                c.meta.arm,
                b.meta.pilot_hash.get(..12).unwrap_or(&b.meta.pilot_hash),
                c.meta.pilot_hash.get(..12).unwrap_or(&c.meta.pilot_hash)
            ))
            .into());
        }
    }
    let all: Vec<(&str, usize, &Run)> = baseline
        .iter()
        .enumerate()
        .map(|(i, r)| ("baseline", i, r))
        .chain(
            candidate
                .iter()
                .enumerate()
                .map(|(i, r)| ("candidate", i, r)),
        )
        .collect();
    for (j, (side, k, run)) in all.iter().enumerate() {
        if let Some((s0, k0, _)) = all[..j].iter().find(|(_, _, r)| r.same_run(run)) {
            return Err(Exit::bad_input(format!(
                "gate: {side} run {} and {s0} run {} are the same run ({}, started {}): a run counts once",
                k + 1,
                k0 + 1,
                run.meta.arm,
                run.meta.started_at
            ))
            .into());
        }
    }
    Ok(())
}

/// Evaluates every limit on the pooled baseline runs against the pooled candidate runs.
pub fn gate(
    baseline: &[Run],
    candidate: &[Run],
    limits: &[Limit],
    opts: &NoiseRule,
    checks: &CheckOptions,
) -> Result<GateResult> {
    check_sides(baseline, candidate, limits)?;
    let (db, dc) = (
        digest(baseline, checks.include_cold),
        digest(candidate, checks.include_cold),
    );
    let gb = group("baseline", &db);
    let gc = group("candidate", &dc);
    let out = limits
        .iter()
        .map(|limit| evaluate(limit, &gb, &gc, opts))
        .collect::<Result<Vec<_>>>()?;
    let mut table = gate_table(&out, baseline.len(), candidate.len(), opts);
    let mut metrics: Vec<Metric> = Vec::new();
    for l in limits {
        if !metrics.contains(&l.metric_enum) {
            metrics.push(l.metric_enum);
        }
    }
    let findings = check(&[gb, gc], &metrics, checks);
    // Gate rows are checks, not figures of one column: findings go under the table.
    annotate(&mut table, &findings, |_| None);
    Ok(GateResult {
        checks: out,
        findings,
        table,
    })
}

/// The values of `m` on one side, refused when there are none or one is not a number:
/// the gate never passes on data it could not read. `Run::load` already refuses such
/// files; this holds for runs built in memory too.
fn side_values(side: &str, g: &Group, m: Metric) -> Result<Vec<f64>> {
    // The raw loops, not the digest: the digest leaves NaN out, which would shrink n
    // without a word.
    let mut raw = g
        .runs
        .iter()
        .flat_map(|r| &r.run.loops)
        .filter_map(|l| m.of(l));
    if let Some(x) = raw.find(|x| !x.is_finite()) {
        return Err(Exit::bad_input(format!(
            "gate: the {side} runs hold a {} value of {x}: not a measurement",
            m.name()
        ))
        .into());
    }
    let v = g.values(m);
    if v.is_empty() {
        return Err(Exit::bad_input(format!(
            "gate: the {side} runs have no {} values (every loop unanswered or cold?)",
            m.name()
        ))
        .into());
    }
    Ok(v)
}

/// One limit: the noise verdict on its quantile (the interval resamples runs when a side
/// has several), and the verdict against the limit.
fn evaluate(limit: &Limit, gb: &Group, gc: &Group, opts: &NoiseRule) -> Result<GateCheck> {
    let m = limit.metric_enum;
    let b = side_values("baseline", gb, m)?;
    let c = side_values("candidate", gc, m)?;
    // Runs repeat, loops within a run do not independently: with several runs a side
    // the interval resamples runs first, so two sessions that disagree widen it.
    let rb: Vec<&[f64]> = gb.runs.iter().map(|r| r.values(m)).collect();
    let rc: Vec<&[f64]> = gc.runs.iter().map(|r| r.values(m)).collect();
    let Some(change) = noise_verdict(&rb, &rc, limit.q, opts) else {
        return Err(
            Exit::bad_input(format!("gate: {} {}: no value", limit.metric, limit.stat)).into(),
        );
    };
    let (status, reason) = judge(&change, limit.max_pct);
    Ok(GateCheck {
        limit: limit.clone(),
        n_baseline: b.len(),
        n_candidate: c.len(),
        change,
        status,
        reason: reason.to_string(),
    })
}

/// Past the limit means the whole interval is: the increase is significantly larger
/// than the limit, not merely larger than zero with a point estimate above it.
/// Runs of one arm differ by a few percent from session to session (a loaded
/// machine, a cache), which a loop-level test reads as real; the limit absorbs it.
fn judge(change: &QuantileChange, max_pct: f64) -> (CheckStatus, &'static str) {
    let estimate_past = change.delta_pct > max_pct;
    let interval_past = change
        .ci
        .is_some_and(|ci| pct_change(change.baseline, change.baseline + ci.lo) > max_pct);
    match (change.verdict, estimate_past, interval_past) {
        (Verdict::Higher, _, true) => (CheckStatus::Fail, "significant regression past the limit"),
        (Verdict::Higher, true, false) => (
            CheckStatus::Pass,
            "significant increase, but not significantly past the limit",
        ),
        (Verdict::Higher, false, _) => {
            (CheckStatus::Pass, "significant increase, within the limit")
        }
        (Verdict::Lower, _, _) => (CheckStatus::Pass, "significantly lower"),
        (Verdict::Noise | Verdict::NotSignificant, true, _) => {
            (CheckStatus::Pass, "past the limit but not significant (~)")
        }
        (Verdict::Noise | Verdict::NotSignificant, false, _) => {
            (CheckStatus::Pass, "not significant (~)")
        }
    }
}

/// The checks as a table, with the notes that say how to read it.
fn gate_table(out: &[GateCheck], n_base: usize, n_cand: usize, opts: &NoiseRule) -> Table {
    let level = 100.0 * (1.0 - opts.alpha);
    let mut table = Table::new(vec![
        Column::left("check"),
        Column::right("baseline"),
        Column::right("candidate"),
        Column::right("\u{394}"),
        Column::right(format!("{level:.0}% CI")),
        Column::right("p"),
        Column::right("limit"),
        Column::left("verdict"),
    ])
    .with_title(format!(
        "Gate: {} baseline run(s) against {} candidate run(s), \u{3b1}={}",
        n_base, n_cand, opts.alpha
    ));
    for c in out {
        let ch = &c.change;
        let [delta, ci, p] = change_cells(ch);
        let verdict = match c.status {
            CheckStatus::Fail => format!("FAIL: {}", c.reason),
            CheckStatus::Pass => format!("pass: {}", c.reason),
        };
        let mut v = Cell::text(verdict);
        if c.status == CheckStatus::Fail {
            v = v.strong();
        }
        table.push_row(vec![
            Cell::text(format!("{} {}", c.limit.metric, c.limit.stat)),
            Cell::num(
                format!("{} (n={})", fmt_ms(ch.baseline), c.n_baseline),
                ch.baseline,
            ),
            Cell::num(
                format!("{} (n={})", fmt_ms(ch.candidate), c.n_candidate),
                ch.candidate,
            ),
            delta,
            ci,
            p,
            Cell::num(fmt_pct_change(c.limit.max_pct), c.limit.max_pct),
            v,
        ]);
    }
    let failed = out.iter().filter(|c| c.status == CheckStatus::Fail).count();
    table.note(format!(
        "{} of {} checks failed. A check fails only on a significant regression (Mann-Whitney p < \u{3b1}, past the {} % noise bar) whose whole {:.0}% CI is above its limit.",
        failed,
        out.len(),
        opts.noise_bar_pct,
        level
    ));
    if n_base < 2 || n_cand < 2 {
        table.note("One run on a side: the interval is of loops, and cannot see how much two sessions of one arm differ. Give the gate 2 or more interleaved runs a side (arena-perf ab) and the interval resamples runs first.");
    } else {
        table.note(format!(
            "Intervals resample runs, then loops ({} baseline and {} candidate runs): session-to-session spread is in them.",
            n_base,
            n_cand
        ));
    }
    table
}
