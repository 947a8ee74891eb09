//! `arena-perf gate`: fail CI on a regression past a limit, timeouts and tails included.
//!
//! - Figures are over every loop: answered ones, and unanswered ones censored at the
//!   window (they took longer than the run waited). A candidate whose slow clicks turn
//!   into timeouts gets slower, not faster.
//! - A latency limit `--max inputToPixels.p99=+20%` fails when the interval of the p99's
//!   change lies wholly past +20 % of the baseline's p99, passes when it lies wholly
//!   under it, and is unknown otherwise (the rule is [`crate::decide`]'s, shared with
//!   `compare`). What is established fails whatever the runs' power: one run a side
//!   fails a 4x regression.
//! - The unanswered share and the claimed share are always checked (`--max
//!   unanswered=+1pt` and `--max claimed=+1pt` by default): each fails when the rise is
//!   past its limit and Fisher's exact test on the counts calls it significant
//!   ([`crate::gate_share`]).
//! - The latency intervals are drawn at `1 - alpha / m` over the gate's `m` checks and
//!   the share's p is multiplied by `m` (Bonferroni), so several limits keep the
//!   family-wise false-alarm rate at alpha.
//! - A limit the runs cannot clear either way is unknown: exit 4, or what `--on-unknown`
//!   says. Power only says why.

use anyhow::Result;
use arena_report::{Exit, Table};
use arena_run::{Metric, Run};
use arena_stats::{NoiseRule, Strata};

use crate::decide::{decide, interval_method, p_past, power, settle_family};
use crate::findings::{annotate, check, CheckOptions, Finding};
pub use crate::gate_check::{CheckStatus, Counts, GateCheck, ShareCheck};
use crate::gate_share::{settle_share, share_check};
use crate::group::{digest, Group, RunData};
use crate::limit::{GateLimit, Limit, Share};

#[derive(Debug, Clone)]
pub struct GateResult {
    pub checks: Vec<GateCheck>,
    /// The shares' checks, in [`Share::ALL`]'s order (unanswered, claimed).
    pub shares: Vec<ShareCheck>,
    pub findings: Vec<Finding>,
    pub table: Table,
    /// How the intervals were built, in words.
    pub method: String,
    pub alpha: f64,
    /// What the gate does with an unknown check.
    pub on_unknown: OnUnknown,
}

/// What an unknown check makes of the gate's exit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum OnUnknown {
    /// Exit 4: neither pass nor fail.
    #[default]
    Unknown,
    /// Exit 0: only what is established fails.
    Pass,
    /// Exit 1: only what is established passes.
    Fail,
}

/// How a gate ended, as its exit code says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateOutcome {
    Pass,
    Fail,
    Unknown,
}

impl GateOutcome {
    /// 0 pass, 1 fail, 4 unknown.
    pub fn exit_code(self) -> u8 {
        match self {
            GateOutcome::Pass => 0,
            GateOutcome::Fail => 1,
            GateOutcome::Unknown => 4,
        }
    }
}

impl GateResult {
    pub fn failed(&self) -> bool {
        self.shares.iter().any(|s| s.status == CheckStatus::Fail)
            || self.checks.iter().any(|c| c.status == CheckStatus::Fail)
    }

    /// The check of `share`.
    pub fn share(&self, share: Share) -> &ShareCheck {
        self.shares
            .iter()
            .find(|s| s.share == share)
            .expect("the gate checks every share")
    }

    /// The checks that could not be decided, named as in the table.
    pub fn unknowns(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter(|c| c.status == CheckStatus::Unknown)
            .map(|c| format!("{} {}", c.limit.metric, c.limit.stat))
            .collect()
    }

    /// Fail when anything failed; unknown (or what `--on-unknown` says) when anything was
    /// not decided; pass otherwise.
    pub fn outcome(&self) -> GateOutcome {
        if self.failed() {
            GateOutcome::Fail
        } else if self.unknowns().is_empty() {
            GateOutcome::Pass
        } else {
            match self.on_unknown {
                OnUnknown::Unknown => GateOutcome::Unknown,
                OnUnknown::Pass => GateOutcome::Pass,
                OnUnknown::Fail => GateOutcome::Fail,
            }
        }
    }

    /// How many checks ran, the shares' included.
    pub fn count(&self) -> usize {
        self.checks.len() + self.shares.len()
    }

    /// The checks that failed, named as in the table (`inputToPixels p99`,
    /// `unanswered share`, `claimed share`).
    pub fn failures(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .checks
            .iter()
            .filter(|c| c.status == CheckStatus::Fail)
            .map(|c| format!("{} {}", c.limit.metric, c.limit.stat))
            .collect();
        for s in self.shares.iter().filter(|s| s.status == CheckStatus::Fail) {
            out.push(format!("{} share", s.share.name()));
        }
        out
    }
}

/// What the gate is asked, besides the runs.
#[derive(Debug, Clone, Default)]
pub struct GateOptions {
    pub rule: NoiseRule,
    pub checks: CheckOptions,
    /// What an unknown check makes of the exit.
    pub on_unknown: OnUnknown,
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

/// Evaluates every limit, and the shares, of the baseline runs against the candidate
/// runs.
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
            GateLimit::Share { .. } => None,
        })
        .collect();
    let max_pt = |share: Share| {
        limits.iter().find_map(|l| match l {
            GateLimit::Share { share: s, max_pt } if *s == share => Some(*max_pt),
            _ => None,
        })
    };
    let family = latency.len() + Share::ALL.len();
    let mut checks = latency
        .iter()
        .map(|l| evaluate(l, &gb, &gc, &opts.rule, family))
        .collect::<Result<Vec<_>>>()?;
    let mut shares: Vec<ShareCheck> = Share::ALL
        .into_iter()
        .map(|s| share_check(s, &gb, &gc, max_pt(s), opts.rule.alpha))
        .collect();
    settle(&mut checks, &mut shares, &opts.rule);
    let method = interval_method(&opts.rule, baseline.len(), candidate.len());
    let mut table = crate::gate_table::gate_table(
        &checks,
        &shares,
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
    // Gate rows are checks, not figures of one column: findings go under the table.
    annotate(&mut table, &findings, |_| None);
    Ok(GateResult {
        checks,
        shares,
        findings,
        table,
        method,
        alpha: opts.rule.alpha,
        on_unknown: opts.on_unknown,
    })
}

/// Every limit's verdict once the family is known: each latency interval at
/// `1 - alpha / m`, each share's p times `m`.
fn settle(checks: &mut [GateCheck], shares: &mut [ShareCheck], rule: &NoiseRule) {
    let m = checks.len() + shares.len();
    // The Δ cell's verdict (faster, slower, same, unknown) by compare's rule, at the
    // gate's level.
    let mut family: Vec<&mut arena_stats::QuantileChange> =
        checks.iter_mut().map(|c| &mut c.change).collect();
    settle_family(&mut family, m, rule);
    for c in checks.iter_mut() {
        c.p_adjusted = (c.p_limit * m as f64).min(1.0);
        let (status, reason) = judge(c);
        c.status = status;
        c.reason = reason;
    }
    for s in shares.iter_mut() {
        settle_share(s, m, rule.alpha);
    }
}

/// A side's runs on `m`, each by kind of input, ascending with its unanswered loops
/// censored at the window. Refused when a loop holds a value that is not a measurement,
/// or the side has no value of `m` at all: the gate never passes on data it could not
/// read.
fn side_runs<'a>(side: &str, g: &'a Group, limit: &Limit) -> Result<Vec<Strata<'a>>> {
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
    // A candidate whose loops of `m` are all unanswered has every quantile past the
    // window: that is a figure, and the checks judge it (it stopped answering: it fails).
    // A baseline with none answered has nothing to hold a candidate to.
    let judged = side == "candidate" && g.censored(m) > 0;
    if g.count(m) == 0 && !judged {
        return Err(Exit::bad_input(format!(
            "--max {}.{}=+{}%: the {side} runs have no {} values (no answered warm loop has it: is it measured under this oracle?)",
            limit.metric, limit.stat, limit.max_pct, m.name()
        ))
        .into());
    }
    Ok(g.strata(m))
}

/// One latency limit: the change of its quantile over all loops, the share of resamples
/// within the limit, and what the runs can see. The verdict waits for the family.
fn evaluate(
    limit: &Limit,
    gb: &Group,
    gc: &Group,
    rule: &NoiseRule,
    family: usize,
) -> Result<GateCheck> {
    let m = limit.metric_enum;
    let sb = side_runs("baseline", gb, limit)?;
    let sc = side_runs("candidate", gc, limit)?;
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
    let loops = |side: &[Strata]| -> usize { side.iter().flatten().map(|k| k.len()).sum() };
    let n = (loops(&sb), loops(&sc));
    let p_limit = p_past(&d.diff, b.abs() * limit.max_pct / 100.0);
    let power = power(&d.diff, b, limit.q, n, limit.max_pct, rule, family);
    let floor = |side: &[Strata], g: &Group| {
        let w = g.window_ms()? as f64;
        arena_stats::censored_floor(&arena_stats::pooled_strata(side), limit.q, w)
    };
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
        floors: (floor(&sb, gb), floor(&sc, gc)),
    })
}

/// Fail when the whole interval lies past the limit, pass when the whole of it lies
/// within (and the quantile is not a side's maximum), unknown otherwise: noise never
/// fails a build, and a regression the runs establish always does.
fn judge(c: &GateCheck) -> (CheckStatus, String) {
    let ch = &c.change;
    let beyond = if arena_stats::is_censored(ch.candidate) {
        "; the candidate's quantile is beyond the window"
    } else {
        ""
    };
    let limit_ms = ch.baseline.abs() * c.limit.max_pct / 100.0;
    let Some(ci) = ch.ci else {
        return (CheckStatus::Unknown, "no interval".into());
    };
    if ci.lo > limit_ms {
        (
            CheckStatus::Fail,
            format!("regression past the limit, the whole interval beyond it{beyond}"),
        )
    } else if ci.hi <= limit_ms && (c.power.at_the_max || ch.diff.is_some_and(|d| d.sparse)) {
        // Resamples never exceed a side's largest loop, so an interval of a maximum is
        // too short above: it may establish a rise, never the absence of one.
        (
            CheckStatus::Unknown,
            format!(
                "unknown: the {} is near a run's largest loop, which no interval bounds from above; about {} loops a run would",
                c.limit.stat,
                (2.0 / (1.0 - c.limit.q).max(1e-9)).ceil()
            ),
        )
    } else if ci.hi <= limit_ms {
        let what = if ci.hi <= 0.0 {
            "no increase"
        } else {
            "within the limit"
        };
        (
            CheckStatus::Pass,
            format!("{what}, the whole interval under it"),
        )
    } else {
        let more = crate::cells::fmt_mde(c.power.mde_pct);
        (
            CheckStatus::Unknown,
            format!(
                "unknown: the interval straddles the limit (these runs see a rise of {more} past it at 80 % power{}){beyond}",
                runs_needed(c).map_or(String::new(), |k| format!("; about {k} runs a side would see +{}", c.limit.max_pct))
            ),
        )
    }
}

/// Runs a side that would bring what a limit sees down to the limit itself, at the
/// spreads seen: the interval narrows as the square root of the runs. `None` for a limit
/// of 0 or a spread nothing bounds.
fn runs_needed(c: &GateCheck) -> Option<u64> {
    let units = c.change.diff?.units as f64;
    let ratio = c.power.mde_pct / c.limit.max_pct;
    (ratio.is_finite() && c.limit.max_pct > 0.0)
        .then(|| (units * ratio * ratio).ceil().max(units + 1.0) as u64)
}
