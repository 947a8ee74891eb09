//! The change of a quantile between two arms measured as several runs (sessions), with
//! each source of variance counted once.
//!
//! A run's quantile `y` is the arm's quantile, plus the run's own offset (a loaded
//! machine, a cache: the *between-run* spread, variance `tau^2`), plus the sampling error
//! of its loops (the *within-run* spread, variance `w`, which each run's own loops
//! estimate well: a loop-level bootstrap of that run alone). This is the random-effects
//! model of a meta-analysis, runs for studies, and it is decided the same way:
//!
//! - `w` of each run from a loop bootstrap of that run ([`HierOptions::resamples`]
//!   draws, robust spread), stratified by the kinds of loop whose counts the run's design
//!   fixes ([`Strata`]: a click's presses and releases), so that the mix never varies
//!   between draws;
//! - `tau^2` by moments: the runs' sample variance less their mean `w`, never below 0,
//!   pooled over both sides (one machine, one spread);
//! - the variance of the change, `tau^2 (1/k_b + 1/k_c) + sum w_b / k_b^2 + sum w_c /
//!   k_c^2`, with Student's t on the degrees of freedom the runs give (`k_b + k_c - 2`),
//!   the Hartung-Knapp choice, since `tau^2` from two or three runs is itself uncertain.
//!
//! Interleaved rounds (A B A B) are pairs measured minutes apart: with [`Pairing::Rounds`]
//! and as many runs a side, the round differences are the units (`k - 1` degrees of
//! freedom), so that a slow drift of the machine cancels.
//!
//! With one run a side nothing measures `tau^2`. Then [`HierOptions::run_spread_pct`]
//! stands in for it (a between-run spread the caller can justify: measured on this
//! machine, or from a history), and the interval says so ([`SpreadSource::Assumed`]);
//! without one the interval is unbounded ([`SpreadSource::Unknown`]).
//!
//! Unanswered loops (`+inf`) stand at the window for the estimate (a lower bound of what
//! they took). A run whose quantile reaches one is only known from below, so the
//! interval is open on that side: `+inf` above when it is a candidate's run, `-inf`
//! below when it is a baseline's.

use serde::{Deserialize, Serialize};

use crate::bootstrap::{resampled_quantile, resampled_quantile_strata, Rng};
use crate::{is_censored, pooled, quantile_sorted, t_quantile, t_sf, DiffCi};

/// Whether run i of one side is paired with run i of the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum Pairing {
    /// Pair rounds when both sides have the same number of runs, at least two.
    #[default]
    Rounds,
    /// Never pair: the runs of a side are independent of the other side's.
    Independent,
}

/// How one comparison was made, as it happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    Paired,
    Independent,
}

/// Where the between-run spread came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpreadSource {
    /// Measured from the runs themselves.
    Runs,
    /// One run a side: the assumed spread ([`HierOptions::run_spread_pct`]).
    Assumed,
    /// One run a side and no assumption: the interval is unbounded.
    Unknown,
}

/// Settings of [`hier_diff`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HierOptions {
    /// Loop-bootstrap draws per run for its within-run spread.
    pub resamples: usize,
    pub seed: u64,
    pub pairing: Pairing,
    /// Where unanswered loops stand (ms); the largest answered value when `None`.
    pub window: Option<f64>,
    /// The between-run spread known beforehand (SD of a run's offset), in percent of the
    /// baseline's quantile: all there is when neither side has two runs, and a prior the
    /// runs' own spread is pooled with when they have.
    pub run_spread_pct: Option<f64>,
    /// What that spread is worth, in degrees of freedom (as many runs, less one): 0 takes
    /// it as exact with one run a side and ignores it with more.
    pub run_spread_df: f64,
}

/// The degrees of freedom [`HierOptions::run_spread_pct`] is worth by default: the spread
/// was measured over a handful of runs of one testbed, so it counts as five runs would.
pub const RUN_SPREAD_DF: f64 = 4.0;

impl Default for HierOptions {
    fn default() -> Self {
        HierOptions {
            resamples: 400,
            seed: 0x5EED_A2E7A,
            pairing: Pairing::Rounds,
            window: None,
            run_spread_pct: None,
            run_spread_df: RUN_SPREAD_DF,
        }
    }
}

/// The variance of a change, split by source (ms^2), and its degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Components {
    /// The part of the change's variance from the runs' offsets.
    pub between: f64,
    /// The part from the loops within each run.
    pub within: f64,
    /// SD of one run's offset (ms): `tau`.
    pub run_sd: f64,
    /// Mean SD of one run's quantile from its own loops (ms): `sqrt(mean w)`.
    pub loop_sd: f64,
    /// Degrees of freedom of the t quantile (`inf`: the normal).
    pub df: f64,
    pub source: SpreadSource,
}

impl Components {
    /// The share of the variance the runs' offsets make, 0 to 1 (NaN when none).
    pub fn between_share(&self) -> f64 {
        self.between / (self.between + self.within)
    }
}

/// A quantile's change, `candidate - baseline`, with what its interval is built from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HierDiff {
    /// Difference of the pooled quantiles, `+inf`/`-inf` where one side's is censored
    /// and 0 where both are (as the tables print it).
    pub estimate: f64,
    /// The interval's centre: the same difference with unanswered loops at the window.
    pub centre: f64,
    /// Standard error of the change (ms); `inf` when nothing bounds it.
    pub se: f64,
    pub design: Design,
    pub components: Components,
    /// The candidate's quantile is only known from below in some run.
    pub open_above: bool,
    /// The baseline's quantile is only known from below in some run.
    pub open_below: bool,
    /// Runs (or rounds, when paired) behind the interval.
    pub units: usize,
    /// Some run has fewer than two loops above the quantile (a p99 of under 200 loops):
    /// its quantile is near that run's maximum, which no resample exceeds, so the
    /// interval is too short above and the rule does not apply ([`sparse`]).
    pub sparse: bool,
}

/// Whether a run of `n` loops has fewer than two above its quantile `q`.
pub fn sparse(n: usize, q: f64) -> bool {
    (n as f64) * (1.0 - q) < 2.0 - 1e-9
}

impl HierDiff {
    /// The two-sided interval at `level`.
    pub fn interval(&self, level: f64) -> DiffCi {
        let h = self.half_width(level);
        DiffCi {
            estimate: self.estimate,
            lo: if self.open_below {
                f64::NEG_INFINITY
            } else {
                self.centre - h
            },
            hi: if self.open_above {
                f64::INFINITY
            } else {
                self.centre + h
            },
        }
    }

    /// Half the width of the interval at `level` (before any side is opened).
    pub fn half_width(&self, level: f64) -> f64 {
        let t = t_quantile(0.5 + level / 2.0, self.components.df);
        if self.se.is_finite() {
            t * self.se
        } else {
            f64::INFINITY
        }
    }

    /// Two-sided p of "no change": the smallest `a` whose `1 - a` interval leaves 0 out.
    /// 1 when the side towards 0 is open.
    pub fn p_two_sided(&self) -> f64 {
        let toward_zero_open = if self.centre > 0.0 {
            self.open_below
        } else {
            self.open_above
        };
        if toward_zero_open || !self.se.is_finite() || self.centre == 0.0 {
            return 1.0;
        }
        if self.se == 0.0 {
            return 0.0;
        }
        (2.0 * t_sf(self.centre.abs() / self.se, self.components.df)).min(1.0)
    }
}

/// One run's loops, in strata: each ascending, unanswered loops `+inf` at its top. A
/// stratum is a kind of loop whose count the run's design fixes (a click makes one press
/// and one release), so a resample keeps each at its size: on an idle board a release is
/// answered in 1 ms and a press in 20, and a pooled resample that let their mix vary
/// would move a median between the two modes by 20 ms when nothing changed. A run of one
/// kind is one stratum.
pub type Strata<'a> = Vec<&'a [f64]>;

/// Every loop of a side's runs, ascending (unanswered `+inf` at the top).
pub fn pooled_strata(runs: &[Strata]) -> Vec<f64> {
    let all: Vec<&[f64]> = runs.iter().flat_map(|r| r.iter().copied()).collect();
    pooled(&all).into_owned()
}

/// Runs of one stratum each.
pub fn unstratified<'a>(runs: &[&'a [f64]]) -> Vec<Strata<'a>> {
    runs.iter().map(|r| vec![*r]).collect()
}

/// One run's quantile, the variance of it from its loops, and whether it reached an
/// unanswered loop.
#[derive(Debug, Clone, Copy)]
struct RunQ {
    value: f64,
    var: f64,
    open: bool,
}

fn run_quantile(
    strata: &[&[f64]],
    q: f64,
    cap: f64,
    resamples: usize,
    rng: &mut Rng,
) -> Option<RunQ> {
    let x = pooled(strata);
    let n = x.len();
    if n == 0 {
        return None;
    }
    let answered = x.partition_point(|v| !is_censored(*v));
    let at_cap = |x: &[f64]| -> Vec<f64> {
        x.iter()
            .map(|v| if is_censored(*v) { cap } else { *v })
            .collect()
    };
    let capped = at_cap(&x);
    let value = quantile_sorted(&capped, q)?;
    let h = (n - 1) as f64 * q;
    let lo = h.floor() as usize;
    let reaches = if h > lo as f64 { lo + 1 } else { lo };
    let open = reaches >= answered;
    let kinds: Vec<Vec<f64>> = strata
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| at_cap(s))
        .collect();
    let mut reps: Vec<f64> = if kinds.len() > 1 {
        let kinds: Vec<&[f64]> = kinds.iter().map(Vec::as_slice).collect();
        let mut buf = Vec::with_capacity(n);
        (0..resamples)
            .filter_map(|_| resampled_quantile_strata(&kinds, q, rng, &mut buf))
            .collect()
    } else {
        (0..resamples)
            .filter_map(|_| resampled_quantile(&capped, q, rng))
            .collect()
    };
    reps.sort_unstable_by(f64::total_cmp);
    let var = spread(&reps, kinds.len() > 1);
    Some(RunQ { value, var, open })
}

/// The variance of a run's quantile from its sorted bootstrap replicates: their
/// interquartile range read as a normal's (robust to replicates at the window). A
/// quantile resampled by kind may sit between two kinds, at one kind's largest loop and
/// the other's smallest, and the bootstrap of an extreme piles its replicates on the
/// sample's own (the interquartile range is then a spacing of two loops): there the
/// replicates' standard deviation, winsorised at 2.5 % a side, is taken when larger.
/// `benches/decide_sim.rs` measures what each gives (docs/compare.md).
fn spread(reps: &[f64], by_kind: bool) -> f64 {
    let Some((a, b)) = quantile_sorted(reps, 0.25).zip(quantile_sorted(reps, 0.75)) else {
        return 0.0;
    };
    let iqr = ((b - a) / NORMAL_IQR).powi(2);
    if !by_kind || reps.len() < 2 {
        return iqr;
    }
    let (lo, hi) = (
        quantile_sorted(reps, 0.025).unwrap_or(a),
        quantile_sorted(reps, 0.975).unwrap_or(b),
    );
    let w: Vec<f64> = reps.iter().map(|r| r.clamp(lo, hi)).collect();
    iqr.max(ss(&w) / (w.len() - 1) as f64)
}

/// Interquartile range of the standard normal.
const NORMAL_IQR: f64 = 1.348_979_500_392_163_4;

fn mean(v: impl Iterator<Item = f64>) -> (f64, usize) {
    let (s, n) = v.fold((0.0, 0), |(s, n), x| (s + x, n + 1));
    (if n == 0 { f64::NAN } else { s / n as f64 }, n)
}

/// Sum of squared deviations from the mean.
fn ss(v: &[f64]) -> f64 {
    let (m, _) = mean(v.iter().copied());
    v.iter().map(|x| (x - m).powi(2)).sum()
}

/// The change of quantile `q` from `baseline` to `candidate`, each a side's runs in
/// their [`Strata`]. `None` when a side has no loop or `q` is not in [0, 1].
pub fn hier_diff(
    baseline: &[Strata],
    candidate: &[Strata],
    q: f64,
    opts: &HierOptions,
) -> Option<HierDiff> {
    if !(0.0..=1.0).contains(&q) {
        return None;
    }
    let (pb, pc) = (pooled_strata(baseline), pooled_strata(candidate));
    let (qb, qc) = (quantile_sorted(&pb, q)?, quantile_sorted(&pc, q)?);
    let estimate = if is_censored(qb) && is_censored(qc) {
        0.0
    } else {
        qc - qb
    };
    let largest = pb
        .iter()
        .chain(pc.iter())
        .copied()
        .filter(|v| !is_censored(*v))
        .fold(0.0_f64, f64::max);
    let cap = opts.window.unwrap_or(largest).max(largest);
    let mut rng = Rng::new(opts.seed);
    let mut side = |runs: &[Strata]| -> Vec<RunQ> {
        runs.iter()
            .filter_map(|r| run_quantile(r, q, cap, opts.resamples, &mut rng))
            .collect()
    };
    let (b, c) = (side(baseline), side(candidate));
    if b.is_empty() || c.is_empty() {
        return None;
    }
    let at_cap = |v: &[f64]| {
        let capped: Vec<f64> = v
            .iter()
            .map(|x| if is_censored(*x) { cap } else { *x })
            .collect();
        capped
    };
    let centre = quantile_sorted(&at_cap(&pc), q)? - quantile_sorted(&at_cap(&pb), q)?;
    let paired = opts.pairing == Pairing::Rounds && b.len() == c.len() && b.len() >= 2;
    let prior = opts.run_spread_pct.map(|p| {
        let sd = p / 100.0 * quantile_sorted(&at_cap(&pb), q).unwrap_or(0.0).abs();
        Prior {
            tau2: sd * sd,
            df: opts.run_spread_df,
        }
    });
    let (se, components, design, units) = if paired {
        let (se, comp) = paired_spread(&b, &c, prior);
        (se, comp, Design::Paired, b.len())
    } else {
        let (se, comp) = independent_spread(&b, &c, prior);
        (se, comp, Design::Independent, b.len().min(c.len()).max(1))
    };
    Some(HierDiff {
        estimate,
        centre,
        se,
        design,
        components,
        open_above: c.iter().any(|r| r.open),
        open_below: b.iter().any(|r| r.open),
        units,
        sparse: baseline.iter().chain(candidate).any(|r| {
            let n: usize = r.iter().map(|s| s.len()).sum();
            n > 0 && sparse(n, q)
        }),
    })
}

/// What one arm's runs say of a quantile's spread, for planning how many runs would see a
/// change: the runs' mean quantile, the between-run variance (`tau^2`, by moments pooled
/// with the assumed spread as [`hier_diff`] pools it), each run's mean within-run
/// variance and mean loops.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RunSpread {
    /// Mean of the runs' quantiles (ms).
    pub value: f64,
    /// Between-run variance (ms^2).
    pub tau2: f64,
    /// Mean within-run variance of a run's quantile (ms^2), at `loops` loops a run.
    pub within: f64,
    pub loops: f64,
    pub runs: usize,
    /// Degrees of freedom `tau2` is worth (the runs', plus the assumed spread's).
    pub df: f64,
    pub source: SpreadSource,
}

/// The spread of quantile `q` over one arm's runs. `None` when no run has a loop.
pub fn run_spread(runs: &[Strata], q: f64, opts: &HierOptions) -> Option<RunSpread> {
    let largest = pooled_strata(runs)
        .iter()
        .copied()
        .filter(|v| !is_censored(*v))
        .fold(0.0_f64, f64::max);
    let cap = opts.window.unwrap_or(largest).max(largest);
    let mut rng = Rng::new(opts.seed);
    let rq: Vec<RunQ> = runs
        .iter()
        .filter_map(|r| run_quantile(r, q, cap, opts.resamples, &mut rng))
        .collect();
    if rq.is_empty() {
        return None;
    }
    let values: Vec<f64> = rq.iter().map(|r| r.value).collect();
    let (value, k) = mean(values.iter().copied());
    let (within, _) = mean(rq.iter().map(|r| r.var));
    let (loops, _) = mean(
        runs.iter()
            .map(|r| r.iter().map(|s| s.len()).sum::<usize>() as f64),
    );
    let moments = (k >= 2).then(|| Moments {
        s2: ss(&values) / (k - 1) as f64,
        wbar: within,
        df: (k - 1) as f64,
    });
    let prior = opts.run_spread_pct.map(|p| {
        let sd = p / 100.0 * value.abs();
        Prior {
            tau2: sd * sd,
            df: opts.run_spread_df,
        }
    });
    let (tau2, _) = pool_tau2(moments, prior);
    let source = match (moments, prior) {
        (Some(_), _) => SpreadSource::Runs,
        (None, Some(_)) => SpreadSource::Assumed,
        (None, None) => SpreadSource::Unknown,
    };
    Some(RunSpread {
        value,
        tau2,
        within,
        loops,
        runs: k,
        df: moments.map_or(0.0, |m| m.df) + prior.map_or(0.0, |p| p.df),
        source,
    })
}

/// Runs a side that would see a change of `delta` ms (two-sided level `1 - alpha`) with
/// probability `power`, at `loops` loops a run: the within-run variance scales as one
/// over the loops, the between-run one not at all, and each side's mean of `k` runs
/// carries both over `k`; t on the runs' degrees of freedom (and the spread's). `None`
/// past `most` runs, or when nothing bounds the spread.
pub fn runs_needed(
    s: &RunSpread,
    delta: f64,
    loops: f64,
    alpha: f64,
    power: f64,
    most: usize,
) -> Option<usize> {
    if !s.tau2.is_finite() || delta <= 0.0 || loops <= 0.0 {
        return None;
    }
    let w = s.within * s.loops / loops;
    (1..=most).find(|&k| {
        let sd = (2.0 * (s.tau2 + w) / k as f64).sqrt();
        let df = if k >= 2 {
            (2 * k - 2) as f64 + s.df
        } else if s.df > 0.0 {
            s.df
        } else {
            f64::INFINITY
        };
        let z = t_quantile(1.0 - alpha / 2.0, df) + t_quantile(power, df);
        z * sd <= delta
    })
}

/// Round differences as the units: the spread of a difference (two runs' offsets) by
/// moments, with the assumed spread as a prior.
fn paired_spread(b: &[RunQ], c: &[RunQ], prior: Option<Prior>) -> (f64, Components) {
    let k = b.len() as f64;
    let d: Vec<f64> = b.iter().zip(c).map(|(b, c)| c.value - b.value).collect();
    let (w, _) = mean(b.iter().zip(c).map(|(b, c)| b.var + c.var));
    let moments = Moments {
        s2: ss(&d) / (k - 1.0),
        wbar: w,
        df: k - 1.0,
    };
    // A difference carries two runs' offsets.
    let prior = prior.map(|p| Prior {
        tau2: 2.0 * p.tau2,
        df: p.df,
    });
    let (tau2, var_tau2) = pool_tau2(Some(moments), prior);
    let c_b = 1.0 / k;
    let (between, within) = (tau2 * c_b, w / k);
    let comp = Components {
        between,
        within,
        run_sd: (tau2 / 2.0).sqrt(),
        loop_sd: (w / 2.0).sqrt(),
        df: satterthwaite(between + within, c_b, var_tau2),
        source: SpreadSource::Runs,
    };
    ((between + within).sqrt(), comp)
}

/// The runs' moments of a spread: their sample variance, the loops' mean share of it,
/// and its degrees of freedom.
#[derive(Debug, Clone, Copy)]
struct Moments {
    s2: f64,
    wbar: f64,
    df: f64,
}

/// A between-run variance known beforehand (ms^2), worth `df` degrees of freedom.
#[derive(Debug, Clone, Copy)]
struct Prior {
    tau2: f64,
    df: f64,
}

/// `tau^2` from the runs' moments (`s2 - wbar`) and the prior, weighted by their degrees
/// of freedom, never below 0; and the variance of that estimate (normal theory:
/// `var(s2) = 2 s2^2 / df`, the loops' share of `s2` included, since `s2` carries it).
fn pool_tau2(m: Option<Moments>, prior: Option<Prior>) -> (f64, f64) {
    let (dm, dp) = (m.map_or(0.0, |m| m.df), prior.map_or(0.0, |p| p.df));
    let total = dm + dp;
    if total <= 0.0 {
        return match prior {
            // Assumed, worth nothing: taken as exact.
            Some(p) => (p.tau2, 0.0),
            None => (f64::INFINITY, f64::INFINITY),
        };
    }
    let mut est = 0.0;
    let mut var = 0.0;
    if let Some(m) = m {
        let share = m.df / total;
        est += share * (m.s2 - m.wbar);
        var += share * share * 2.0 * m.s2.max(m.wbar).powi(2) / m.df;
    }
    if let Some(p) = prior.filter(|p| p.df > 0.0) {
        let share = p.df / total;
        est += share * p.tau2;
        var += share * share * 2.0 * p.tau2.powi(2) / p.df;
    }
    (est.max(0.0), var)
}

/// Degrees of freedom of a variance `v = c_b tau^2 + within` when `tau^2` is estimated
/// with variance `var_tau2` and `within` is known from hundreds of loops
/// (Welch-Satterthwaite): the normal when nothing was estimated.
fn satterthwaite(v: f64, c_b: f64, var_tau2: f64) -> f64 {
    let var_v = c_b * c_b * var_tau2;
    if var_v.is_nan() || var_v <= 0.0 || !v.is_finite() {
        return f64::INFINITY;
    }
    (2.0 * v * v / var_v).max(1.0)
}

/// Independent sides: `tau^2` pooled over the sides that have two runs or more, with the
/// assumed spread (ms) as a prior; `Unknown` with neither.
fn independent_spread(b: &[RunQ], c: &[RunQ], prior: Option<Prior>) -> (f64, Components) {
    let (kb, kc) = (b.len() as f64, c.len() as f64);
    let within = b.iter().map(|r| r.var).sum::<f64>() / (kb * kb)
        + c.iter().map(|r| r.var).sum::<f64>() / (kc * kc);
    let (w_all, _) = mean(b.iter().chain(c).map(|r| r.var));
    let df = (kb - 1.0) + (kc - 1.0);
    let values = |s: &[RunQ]| s.iter().map(|r| r.value).collect::<Vec<f64>>();
    let moments = (df >= 1.0).then(|| {
        // The loops' share of that variance, from the same runs.
        let (wbar, _) = mean(
            [b, c]
                .into_iter()
                .filter(|s| s.len() > 1)
                .flat_map(|s| s.iter().map(|r| r.var)),
        );
        Moments {
            s2: (ss(&values(b)) + ss(&values(c))) / df,
            wbar,
            df,
        }
    });
    let source = match (moments, prior) {
        (Some(_), _) => SpreadSource::Runs,
        (None, Some(_)) => SpreadSource::Assumed,
        (None, None) => SpreadSource::Unknown,
    };
    let (tau2, var_tau2) = pool_tau2(moments, prior);
    let c_b = 1.0 / kb + 1.0 / kc;
    let between = tau2 * c_b;
    let comp = Components {
        between,
        within,
        run_sd: tau2.sqrt(),
        loop_sd: w_all.sqrt(),
        df: satterthwaite(between + within, c_b, var_tau2),
        source,
    };
    ((between + within).sqrt(), comp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hd(b: &[&[f64]], c: &[&[f64]], q: f64, o: &HierOptions) -> Option<HierDiff> {
        hier_diff(&unstratified(b), &unstratified(c), q, o)
    }

    fn run(at: f64, n: usize, step: f64) -> Vec<f64> {
        let mut v: Vec<f64> = (0..n).map(|i| at + (i * 37 % 101) as f64 * step).collect();
        v.sort_by(f64::total_cmp);
        v
    }

    #[test]
    fn runs_that_agree_leave_no_between_spread_and_a_far_run_adds_it() {
        let o = HierOptions::default();
        let (a1, a2, b1, b2) = (
            run(10.0, 300, 0.1),
            run(10.0, 300, 0.1),
            run(12.0, 300, 0.1),
            run(12.0, 300, 0.1),
        );
        let d = hd(&[&a1, &a2], &[&b1, &b2], 0.5, &o).unwrap();
        assert_eq!(d.design, Design::Paired);
        assert!((d.estimate - 2.0).abs() < 1e-9, "{d:?}");
        assert_eq!(d.components.between, 0.0);
        // Two rounds and nothing known beforehand: one degree of freedom, as wide as
        // two runs a side honestly are.
        assert_eq!(d.components.df, 1.0);
        assert!(d.interval(0.95).lo < 0.0, "{d:?}");
        // The same runs with a spread known beforehand (2 %, worth 4 df): decided.
        let known = HierOptions {
            run_spread_pct: Some(2.0),
            ..o
        };
        let d = hd(&[&a1, &a2], &[&b1, &b2], 0.5, &known).unwrap();
        assert!(d.components.df > 4.0, "{d:?}");
        assert!(
            d.components.within > 0.0 && d.interval(0.95).lo > 0.0,
            "{d:?}"
        );
        // One baseline run 5 ms off: the runs disagree, the interval takes it in.
        let far = run(15.0, 300, 0.1);
        let d = hd(&[&a1, &far], &[&b1, &b2], 0.5, &o).unwrap();
        assert!(d.components.between > d.components.within, "{d:?}");
        let ci = d.interval(0.95);
        assert!(ci.lo < 0.0 && ci.hi > 0.0, "{ci:?}");
        assert!(d.p_two_sided() > 0.05);
    }

    #[test]
    fn one_run_a_side_needs_an_assumed_spread() {
        let (a, b) = (run(10.0, 300, 0.1), run(14.0, 300, 0.1));
        let none = hd(&[&a], &[&b], 0.5, &HierOptions::default()).unwrap();
        assert_eq!(none.components.source, SpreadSource::Unknown);
        let ci = none.interval(0.95);
        assert!(ci.lo.is_infinite() && ci.hi.is_infinite(), "{ci:?}");
        assert_eq!(none.p_two_sided(), 1.0);
        let o = HierOptions {
            run_spread_pct: Some(5.0),
            ..HierOptions::default()
        };
        let d = hd(&[&a], &[&b], 0.5, &o).unwrap();
        assert_eq!(d.components.source, SpreadSource::Assumed);
        // 5 % of a ~15 ms median: 0.75 ms a run, sqrt(2) of it for the difference.
        assert!(
            (d.components.between.sqrt() - 0.75 * 2f64.sqrt()).abs() < 0.1,
            "{d:?}"
        );
        assert!(d.interval(0.95).lo > 0.0);
    }

    #[test]
    fn a_censored_candidate_quantile_opens_the_interval_above_only() {
        let a = run(10.0, 120, 0.1);
        let mut b = run(30.0, 120, 0.1);
        b[110..].fill(f64::INFINITY);
        let o = HierOptions {
            window: Some(2000.0),
            run_spread_pct: Some(5.0),
            ..HierOptions::default()
        };
        let d = hd(&[&a], &[&b], 0.99, &o).unwrap();
        assert!(d.open_above && !d.open_below, "{d:?}");
        let ci = d.interval(0.95);
        assert!(ci.hi.is_infinite() && ci.lo > 1000.0, "{ci:?}");
        // The other way round: known only from above, never called slower.
        let back = hd(&[&b], &[&a], 0.99, &o).unwrap();
        assert!(back.interval(0.95).lo.is_infinite() && back.interval(0.95).hi < -1000.0);
        // One unanswered loop a side, 1 press in 20 150 ms slower: with 400 loops a
        // side the p99's rise is bounded away from 0 (with 120 it is not: a baseline
        // with 1 of 120 loops past 150 ms may well have its p99 there).
        let mut a1 = run(10.0, 400, 0.05);
        a1[399] = f64::INFINITY;
        let mut c1 = run(10.0, 400, 0.05);
        c1.iter_mut().step_by(20).for_each(|v| *v += 150.0);
        c1.sort_by(f64::total_cmp);
        c1[399] = f64::INFINITY;
        let d = hd(&[&a1], &[&c1], 0.99, &o).unwrap();
        let ci = d.interval(0.95);
        assert!(ci.lo > 100.0 && ci.hi.is_finite(), "{d:?} {ci:?}");
    }

    /// A click's releases answered in ~1 ms and its presses in ~21: the pooled median
    /// lies in the gap. Pooled, a resample's mix of the two varies and its median jumps
    /// between the modes; by kind, the mix is the design's and the median barely moves.
    #[test]
    fn strata_keep_a_median_between_two_modes_where_it_is() {
        let (rel, press) = (run(1.0, 32, 0.01), run(20.0, 32, 0.02));
        let strata: Vec<&[f64]> = vec![&rel, &press];
        let mut pooled: Vec<f64> = rel.iter().chain(&press).copied().collect();
        pooled.sort_by(f64::total_cmp);
        let o = HierOptions {
            run_spread_pct: Some(5.0),
            ..HierOptions::default()
        };
        let one = std::slice::from_ref(&strata);
        let by_kind = hier_diff(one, one, 0.5, &o).unwrap();
        let mixed = hd(&[&pooled], &[&pooled], 0.5, &o).unwrap();
        assert!(by_kind.components.loop_sd < 1.0, "{by_kind:?}");
        assert!(mixed.components.loop_sd > 3.0, "{mixed:?}");
        // The same click 40 ms slower is decided by kind, and was not pooled.
        let (rel40, press40) = (run(41.0, 32, 0.01), run(60.0, 32, 0.02));
        let slow: Vec<&[f64]> = vec![&rel40, &press40];
        let d = hier_diff(&[strata], &[slow], 0.5, &o).unwrap();
        let ci = d.interval(0.95);
        assert!(ci.lo > 30.0 && ci.hi < 50.0, "{d:?} {ci:?}");
    }
}
