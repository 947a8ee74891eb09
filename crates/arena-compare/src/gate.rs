//! `arena-perf gate`: fail CI on a regression past a limit, timeouts and tails included.
//!
//! - Figures are over every loop: answered ones, and unanswered ones censored at the
//!   window (they took longer than the run waited). A candidate whose slow clicks turn
//!   into timeouts gets slower, not faster.
//! - A latency limit `--max inputToPixels.p99=+20%` fails when the run-level bootstrap
//!   interval of the p99's change lies wholly past +20 % of the baseline's p99 (the rule
//!   is [`crate::decide`]'s, shared with `compare`).
//! - The unanswered share is always checked (`--max unanswered=+1pt` by default): it fails
//!   when the rise is past its limit and Fisher's exact test on the counts calls it
//!   significant.
//! - Every check's p is Holm-adjusted over the gate's checks, so several limits keep the
//!   family-wise false-alarm rate at alpha.
//! - A limit the runs cannot see (its quantile is a side's maximum, or a rise as large as
//!   the limit is under what the runs detect at 80 % power) is bad input unless allowed.

use anyhow::Result;
use arena_report::{Exit, Table};
use arena_run::{Metric, Run};
use arena_stats::{fisher_exact_greater, holm, normal_quantile, NoiseRule};

use crate::decide::{decide, holm_verdicts, interval_method, power};
use crate::findings::{annotate, check, CheckOptions, Finding};
pub use crate::gate_check::{CheckStatus, Counts, GateCheck, UnansweredCheck};
use crate::group::{digest, Group, RunData};
use crate::limit::{GateLimit, Limit, DEFAULT_UNANSWERED_PT};

#[derive(Debug, Clone)]
pub struct GateResult {
    pub checks: Vec<GateCheck>,
    pub unanswered: UnansweredCheck,
    pub findings: Vec<Finding>,
    pub table: Table,
    /// How the intervals were built, in words.
    pub method: String,
    pub alpha: f64,
    /// Limits that were underpowered and allowed (`--allow-underpowered`).
    pub underpowered: Vec<String>,
}

impl GateResult {
    pub fn failed(&self) -> bool {
        self.unanswered.status == CheckStatus::Fail
            || self.checks.iter().any(|c| c.status == CheckStatus::Fail)
    }

    /// How many checks ran, the unanswered share's included.
    pub fn count(&self) -> usize {
        self.checks.len() + 1
    }

    /// The checks that failed, named as in the table (`inputToPixels p99`,
    /// `unanswered share`).
    pub fn failures(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .checks
            .iter()
            .filter(|c| c.status == CheckStatus::Fail)
            .map(|c| format!("{} {}", c.limit.metric, c.limit.stat))
            .collect();
        if self.unanswered.status == CheckStatus::Fail {
            out.push("unanswered share".into());
        }
        out
    }
}

/// What the gate is asked, besides the runs.
#[derive(Debug, Clone, Default)]
pub struct GateOptions {
    pub rule: NoiseRule,
    pub checks: CheckOptions,
    /// Decide limits the runs cannot see instead of refusing them (exit 2).
    pub allow_underpowered: bool,
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

/// The runs must be two sides of one comparison: both given, and no run on both sides or
/// twice on one (compared with itself, a run always passes; counted twice, it narrows the
/// run-level interval). Whether they were measured alike is `crate::comparable`'s.
fn check_sides(baseline: &[Run], candidate: &[Run], limits: &[GateLimit]) -> Result<()> {
    if limits.is_empty() {
        return Err(Exit::bad_input("gate: no --max limits given").into());
    }
    if baseline.is_empty() || candidate.is_empty() {
        return Err(Exit::bad_input("gate: needs baseline and candidate runs").into());
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

/// Evaluates every limit, and the unanswered share, of the baseline runs against the
/// candidate runs.
pub fn gate(
    baseline: &[Run],
    candidate: &[Run],
    limits: &[GateLimit],
    opts: &GateOptions,
) -> Result<GateResult> {
    check_sides(baseline, candidate, limits)?;
    let include_cold = opts.checks.include_cold;
    let (db, dc) = (
        digest(baseline, include_cold),
        digest(candidate, include_cold),
    );
    let (gb, gc) = (group("baseline", &db), group("candidate", &dc));
    let latency: Vec<&Limit> = limits
        .iter()
        .filter_map(|l| match l {
            GateLimit::Latency(l) => Some(l),
            GateLimit::Unanswered { .. } => None,
        })
        .collect();
    let max_pt = limits.iter().find_map(|l| match l {
        GateLimit::Unanswered { max_pt } => Some(*max_pt),
        GateLimit::Latency(_) => None,
    });
    let family = latency.len() + 1;
    let mut checks = latency
        .iter()
        .map(|l| evaluate(l, &gb, &gc, &opts.rule, family))
        .collect::<Result<Vec<_>>>()?;
    let underpowered = refuse_underpowered(&checks, opts.allow_underpowered)?;
    let mut unanswered = unanswered_check(&gb, &gc, max_pt, opts.rule.alpha);
    settle(&mut checks, &mut unanswered, &opts.rule);
    let method = interval_method(&opts.rule, baseline.len(), candidate.len());
    let mut table = crate::gate_table::gate_table(
        &checks,
        &unanswered,
        (baseline.len(), candidate.len()),
        &opts.rule,
        &method,
        gb.window_ms(),
    );
    let mut metrics: Vec<Metric> = Vec::new();
    for l in &latency {
        if !metrics.contains(&l.metric_enum) {
            metrics.push(l.metric_enum);
        }
    }
    let findings = check(&[gb, gc], &metrics, &opts.checks);
    for u in &underpowered {
        table.note(format!(
            "\u{26a0} underpowered, decided anyway (--allow-underpowered): {u}"
        ));
    }
    // Gate rows are checks, not figures of one column: findings go under the table.
    annotate(&mut table, &findings, |_| None);
    Ok(GateResult {
        checks,
        unanswered,
        findings,
        table,
        method,
        alpha: opts.rule.alpha,
        underpowered,
    })
}

/// Every limit's verdict once all p's are known: Holm over the gate's checks.
fn settle(checks: &mut [GateCheck], u: &mut UnansweredCheck, rule: &NoiseRule) {
    let alpha = rule.alpha;
    // Whether each change is real at all (the Δ cell's `~`), by compare's rule over the
    // gate's latency checks.
    holm_verdicts(
        &mut checks.iter_mut().map(|c| &mut c.change).collect::<Vec<_>>(),
        rule,
    );
    let mut raw: Vec<f64> = checks.iter().map(|c| c.p_limit).collect();
    raw.push(u.p);
    let adjusted = holm(&raw);
    for (c, p) in checks.iter_mut().zip(&adjusted) {
        c.p_adjusted = *p;
        let (status, reason) = judge(c, alpha);
        c.status = status;
        c.reason = reason;
    }
    u.p_adjusted = adjusted[adjusted.len() - 1];
    let past = u.rise_pt > u.max_pt;
    let significant = u.p_adjusted < alpha;
    (u.status, u.reason) = match (past, significant) {
        (true, true) => (
            CheckStatus::Fail,
            format!(
                "the unanswered share rose {:+.1} pt, past +{} pt, and significantly",
                u.rise_pt, u.max_pt
            ),
        ),
        (true, false) => (
            CheckStatus::Pass,
            "past the limit but not significant (~)".to_string(),
        ),
        (false, _) => (CheckStatus::Pass, "within the limit".to_string()),
    };
}

/// Refuses limits the runs cannot see, unless allowed; returns the allowed ones in words.
fn refuse_underpowered(checks: &[GateCheck], allow: bool) -> Result<Vec<String>> {
    let weak: Vec<String> = checks
        .iter()
        .filter(|c| c.power.underpowered(c.limit.max_pct))
        .map(|c| {
            let l = &c.limit;
            let n = c.n_baseline.min(c.n_candidate);
            let what = if c.power.at_the_max {
                format!("its {} of {n} loops is a side's maximum", l.stat)
            } else {
                format!(
                    "the smallest rise it detects at 80 % power is {} of the baseline",
                    crate::cells::fmt_mde(c.power.mde_pct)
                )
            };
            format!(
                "--max {}.{}=+{}%: {what}; about {} loops a side would see +{} %",
                l.metric, l.stat, l.max_pct, c.power.loops_needed, l.max_pct
            )
        })
        .collect();
    if weak.is_empty() || allow {
        return Ok(weak);
    }
    Err(Exit::bad_input(format!(
        "gate: {} limit(s) the runs cannot see:\n  {}\n(more clicks or runs a side, a lower quantile or a wider limit; --allow-underpowered decides them anyway)",
        weak.len(),
        weak.join("\n  ")
    ))
    .into())
}

/// A side's runs on `m`, each ascending with its unanswered loops censored at the
/// window. Refused when a loop holds a value that is not a measurement, or the side
/// has no value of `m` at all: the gate never passes on data it could not read.
fn side_runs(side: &str, g: &Group, limit: &Limit) -> Result<Vec<Vec<f64>>> {
    let m = limit.metric_enum;
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
    if g.count(m) == 0 {
        return Err(Exit::bad_input(format!(
            "--max {}.{}=+{}%: the {side} runs have no {} values (no answered warm loop has it: is it measured under this oracle?)",
            limit.metric, limit.stat, limit.max_pct, m.name()
        ))
        .into());
    }
    Ok(g.runs.iter().map(|r| r.values_all(m)).collect())
}

/// One latency limit: the change of its quantile over all loops, the share of resamples
/// within the limit, and what the runs can see. The verdict waits for Holm.
fn evaluate(
    limit: &Limit,
    gb: &Group,
    gc: &Group,
    rule: &NoiseRule,
    family: usize,
) -> Result<GateCheck> {
    let m = limit.metric_enum;
    let rb = side_runs("baseline", gb, limit)?;
    let rc = side_runs("candidate", gc, limit)?;
    let sb: Vec<&[f64]> = rb.iter().map(Vec::as_slice).collect();
    let sc: Vec<&[f64]> = rc.iter().map(Vec::as_slice).collect();
    let Some(d) = decide(&sb, &sc, limit.q, rule) else {
        return Err(
            Exit::bad_input(format!("gate: {} {}: no value", limit.metric, limit.stat)).into(),
        );
    };
    let b = d.change.baseline;
    if arena_stats::is_censored(b) {
        return Err(Exit::bad_input(format!(
            "--max {}.{}=+{}%: the baseline's {} is beyond the window ({} of {} loops unanswered): a percent of it means nothing. Gate the unanswered share (--max unanswered=+1pt), or raise pacing.timeout_ms",
            limit.metric, limit.stat, limit.max_pct, limit.stat, gb.censored(m), gb.count(m) as u64 + gb.censored(m)
        ))
        .into());
    }
    let n = (
        sb.iter().map(|r| r.len()).sum(),
        sc.iter().map(|r| r.len()).sum(),
    );
    let p_limit = d.reps.share_at_most(b.abs() * limit.max_pct / 100.0);
    let power = power(&sb, limit.q, n, limit.max_pct, rule, family);
    Ok(GateCheck {
        limit: limit.clone(),
        n_baseline: n.0,
        n_candidate: n.1,
        censored_baseline: gb.censored(m),
        censored_candidate: gc.censored(m),
        change: d.change,
        p_limit,
        p_adjusted: p_limit,
        power,
        status: CheckStatus::Pass,
        reason: String::new(),
    })
}

/// Past the limit means the whole interval is: the share of resamples within the limit,
/// after Holm, is under alpha. A large change the runs cannot pin down passes and says
/// so: noise never fails a build.
fn judge(c: &GateCheck, alpha: f64) -> (CheckStatus, String) {
    let ch = &c.change;
    let candidate_beyond = arena_stats::is_censored(ch.candidate);
    let past = candidate_beyond || ch.delta_pct > c.limit.max_pct;
    let beyond = if candidate_beyond {
        "; the candidate's quantile is beyond the window"
    } else {
        ""
    };
    match (past, c.p_adjusted < alpha) {
        (true, true) => (
            CheckStatus::Fail,
            format!("regression past the limit, the whole interval beyond it{beyond}"),
        ),
        (true, false) => (
            CheckStatus::Pass,
            format!("past the limit but not significantly (~){beyond}"),
        ),
        (false, _) if ch.delta_pct > 0.0 => (CheckStatus::Pass, "within the limit".into()),
        (false, _) => (CheckStatus::Pass, "no increase".into()),
    }
}

/// The unanswered share on each side, with Fisher's exact test on the counts; the
/// verdict waits for Holm.
fn unanswered_check(gb: &Group, gc: &Group, max_pt: Option<f64>, alpha: f64) -> UnansweredCheck {
    let counts = |g: &Group| Counts {
        unanswered: g.unanswered(),
        loops: g.unanswered() + g.runs.iter().map(|r| r.answered).sum::<u64>(),
    };
    let (b, c) = (counts(gb), counts(gc));
    let limit = max_pt.unwrap_or(DEFAULT_UNANSWERED_PT);
    let p = fisher_exact_greater(b.unanswered, b.loops, c.unanswered, c.loops).unwrap_or(1.0);
    // The test's spread at the share the limit allows: a rise from nothing is not free.
    let share = ((b.share_pct() + limit) / 100.0).clamp(1e-6, 0.5);
    let n = (b.loops.min(c.loops)).max(1) as f64;
    let z = normal_quantile(1.0 - alpha) + normal_quantile(0.8);
    let mde_pt = 100.0 * z * (2.0 * share * (1.0 - share) / n).sqrt();
    UnansweredCheck {
        max_pt: limit,
        default: max_pt.is_none(),
        baseline: b,
        candidate: c,
        rise_pt: c.share_pct() - b.share_pct(),
        p,
        p_adjusted: p,
        mde_pt,
        status: CheckStatus::Pass,
        reason: String::new(),
    }
}
