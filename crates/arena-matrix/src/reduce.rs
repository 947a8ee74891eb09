//! A matrix's runs reduced to what its table prints: each cell's figure (best or median
//! of its repeats) and its verdict against the row's baseline cell, every verdict of the
//! matrix held at [`ALPHA`] together (Bonferroni over its compared cells: a matrix of 8
//! cells asks 8 questions, and each is asked at 0.05/8). A pilot cell is decided on its
//! runs' loops by `compare`'s rule ([`arena_compare::decide`]: each run's quantile with its
//! loops' spread plus the spread between runs, unanswered loops beyond the window); any
//! other cell, whose runs each give one figure, by `arena_stats::noise_verdict` on those
//! figures under [`rule`]. The table only renders it.

use arena_compare::decide::{decide, settle_family};
use arena_stats::{
    noise_verdict, quantile_sorted, u_test_can_reach, NoiseRule, QuantileChange, SmallSamples,
    Strata,
};
use serde::Serialize;

use crate::matrix::{MatrixResult, RunStatus};
use crate::spec::{Better, Stat};

/// Significance level of the matrix's family of verdicts.
pub const ALPHA: f64 = 0.05;

/// One cell's reading of its repeats.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellSummary {
    /// (figure, start figure) of every run that gave one.
    pub ok: Vec<(f64, Option<f64>)>,
    /// What each failed run shows (`died: exit 134`, `timeout`, `no figure`).
    pub failures: Vec<String>,
    /// Best or median of `ok`.
    pub value: Option<f64>,
    /// Start figure of the best run, or the median of start figures.
    pub start: Option<f64>,
    pub runs: usize,
    /// `value` is a lower bound (`≥`): a pilot run's quantile under it reached an
    /// unanswered loop, so that run's figure is known only from below.
    pub at_least: bool,
}

/// A cell against its row's baseline cell.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum CellVerdict {
    /// This cell is the baseline.
    Baseline,
    /// The noise verdict of the cell's runs against the baseline's.
    Compared(QuantileChange),
    /// No figure here or in the baseline, or a baseline of 0 (no percent of it).
    None,
}

/// A matrix's noise rule: its own bar, [`ALPHA`], and the bar alone when a cell has too
/// few runs for any U test to reach [`ALPHA`] (3 repeats against 3 never can).
pub fn rule(noise_pct: f64) -> NoiseRule {
    NoiseRule {
        noise_bar_pct: noise_pct,
        alpha: ALPHA,
        small_samples: SmallSamples::BarAlone,
        ..NoiseRule::default()
    }
}

/// The quantile of a cell's runs that its figure is: the best run is the top or the
/// bottom one (type 7 at 1 or 0), the median is 0.5.
pub fn quantile_of(stat: Stat, better: Better) -> f64 {
    match (stat, better) {
        (Stat::Best, Better::Higher) => 1.0,
        (Stat::Best, Better::Lower) => 0.0,
        (Stat::Median, _) => 0.5,
    }
}

pub fn summarize(m: &MatrixResult, case: usize, arm: usize, stat: Stat) -> CellSummary {
    let mut ok = Vec::new();
    let mut bounds = Vec::new();
    let mut failures = Vec::new();
    let mut runs = 0;
    for r in m.runs_of(case, arm) {
        runs += 1;
        match (&r.status, &r.figure) {
            (RunStatus::Ok, Some(f)) => {
                ok.push((f.value, f.start));
                bounds.push((f.value, f.at_least));
            }
            (s, _) => failures.push(s.short()),
        }
    }
    let (value, start) = pick(&ok, stat, m.better);
    CellSummary {
        ok,
        failures,
        value,
        start,
        runs,
        at_least: at_least(bounds, stat, m.better),
    }
}

/// Whether a cell's figure is a lower bound: one of the figures it is made of is. A median
/// is made of the figures up to its middle (a bound below it, once known, could only move
/// past it, so the median too is known from below), the best lower figure of the lowest.
fn at_least(mut figures: Vec<(f64, bool)>, stat: Stat, better: Better) -> bool {
    figures.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = figures.len();
    let upto = match (stat, better) {
        (_, _) if n == 0 => return false,
        (Stat::Median, _) => n / 2,
        (Stat::Best, Better::Lower) => 0,
        (Stat::Best, Better::Higher) => n - 1,
    };
    figures[..=upto].iter().any(|f| f.1)
}

fn pick(ok: &[(f64, Option<f64>)], stat: Stat, better: Better) -> (Option<f64>, Option<f64>) {
    if ok.is_empty() {
        return (None, None);
    }
    match stat {
        Stat::Best => {
            let best = ok.iter().copied().reduce(|a, b| {
                let b_better = match better {
                    Better::Higher => b.0 > a.0,
                    Better::Lower => b.0 < a.0,
                };
                if b_better {
                    b
                } else {
                    a
                }
            });
            (best.map(|b| b.0), best.and_then(|b| b.1))
        }
        Stat::Median => {
            let mut v: Vec<f64> = ok.iter().map(|o| o.0).collect();
            v.sort_by(f64::total_cmp);
            let mut s: Vec<f64> = ok.iter().filter_map(|o| o.1).collect();
            s.sort_by(f64::total_cmp);
            (quantile_sorted(&v, 0.5), quantile_sorted(&s, 0.5))
        }
    }
}

/// The verdict of `cell` against `base`: the noise verdict on their runs' figures at the
/// quantile the figure is.
pub fn cell_verdict(
    cell: &CellSummary,
    base: &CellSummary,
    q: f64,
    rule: &NoiseRule,
) -> CellVerdict {
    let sorted = |s: &CellSummary| {
        let mut v: Vec<f64> = s.ok.iter().map(|o| o.0).filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let (b, c) = (sorted(base), sorted(cell));
    match noise_verdict(&[&b], &[&c], q, rule) {
        Some(ch) if ch.baseline != 0.0 && ch.delta_pct.is_finite() => CellVerdict::Compared(ch),
        _ => CellVerdict::None,
    }
}

/// One cell of the table: where it is, what its runs read, and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReducedCell {
    pub case: usize,
    pub arm: usize,
    pub summary: CellSummary,
    pub verdict: CellVerdict,
    /// Decided on its runs' loops by `compare`'s rule (a pilot cell), not on its runs'
    /// figures by a U test.
    pub by_loops: bool,
}

/// Every cell of a matrix, decided.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reduced {
    /// The rule of the cells decided on their runs' figures, its `alpha` the family's
    /// share ([`ALPHA`] / `family`).
    pub rule: NoiseRule,
    pub cells: Vec<ReducedCell>,
    /// Whether cells with the fewest runs can reach the family's share of [`ALPHA`] in a
    /// U test (else only the bar applies).
    pub u_test_applies: bool,
    /// The verdicts held at [`ALPHA`] together: every cell but the baseline's.
    pub family: usize,
}

impl Reduced {
    pub fn cell(&self, case: usize, arm: usize) -> Option<&ReducedCell> {
        self.cells.iter().find(|c| c.case == case && c.arm == arm)
    }
}

/// The rule a pilot cell is decided by: `compare`'s defaults, with the matrix's noise bar
/// as the threshold.
pub fn loops_rule(noise_pct: f64) -> NoiseRule {
    NoiseRule {
        noise_bar_pct: noise_pct,
        ..NoiseRule::default()
    }
}

/// A pilot cell against its row's baseline on their runs' loops, at the quantile the
/// figure is, its interval and verdict not yet drawn at the family's level. `None` when a
/// side has a run that gave a figure without loops, or no run with one.
fn loops_change(
    m: &MatrixResult,
    case: usize,
    arm: usize,
    rule: &NoiseRule,
) -> Option<QuantileChange> {
    let side = |arm: usize| -> Option<(Vec<Strata<'_>>, f64)> {
        let mut q = None;
        let mut out = Vec::new();
        for r in m.runs_of(case, arm) {
            let Some(f) = &r.figure else { continue };
            let l = f.loops.as_ref()?;
            q = Some(l.q);
            out.push(l.strata.iter().map(Vec::as_slice).collect());
        }
        q.map(|q| (out, q))
    };
    let ((b, q), (c, _)) = (side(m.baseline)?, side(arm)?);
    decide(&b, &c, q, rule).map(|d| d.change)
}

/// Reduces every cell of `m` against its row's baseline cell.
pub fn reduce(m: &MatrixResult) -> Reduced {
    let family = m.cells.iter().filter(|c| c.1 != m.baseline).count();
    let rule = NoiseRule {
        alpha: ALPHA / family.max(1) as f64,
        ..rule(m.noise_pct)
    };
    let by_loops = loops_rule(m.noise_pct);
    let q = quantile_of(m.stat, m.better);
    let mut cells: Vec<ReducedCell> = m
        .cells
        .iter()
        .map(|&(case, arm)| {
            let summary = summarize(m, case, arm, m.stat);
            let loops = (arm != m.baseline)
                .then(|| loops_change(m, case, arm, &by_loops))
                .flatten();
            let verdict = match loops {
                _ if arm == m.baseline => CellVerdict::Baseline,
                Some(c) => CellVerdict::Compared(c),
                None => {
                    let base = summarize(m, case, m.baseline, m.stat);
                    cell_verdict(&summary, &base, q, &rule)
                }
            };
            ReducedCell {
                case,
                arm,
                summary,
                verdict,
                by_loops: loops.is_some(),
            }
        })
        .collect();
    let mut decided: Vec<&mut QuantileChange> = cells
        .iter_mut()
        .filter(|c| c.by_loops)
        .filter_map(|c| match &mut c.verdict {
            CellVerdict::Compared(ch) => Some(ch),
            _ => None,
        })
        .collect();
    settle_family(&mut decided, family, &by_loops);
    let n_min = m
        .cells
        .iter()
        .map(|&(c, a)| m.runs_of(c, a).count())
        .min()
        .unwrap_or(0);
    Reduced {
        u_test_applies: u_test_can_reach(n_min, n_min, rule.alpha),
        rule,
        cells,
        family,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use arena_stats::Verdict;

    pub(crate) fn cell(v: &[f64]) -> CellSummary {
        CellSummary {
            ok: v.iter().map(|x| (*x, None)).collect(),
            failures: vec![],
            value: v.iter().copied().reduce(f64::max),
            start: None,
            runs: v.len(),
            at_least: false,
        }
    }

    /// The verdict of one best-of (higher is better) cell against another.
    pub(crate) fn best(c: &[f64], b: &[f64], noise_pct: f64) -> CellVerdict {
        cell_verdict(&cell(c), &cell(b), 1.0, &rule(noise_pct))
    }

    fn pct_of(v: CellVerdict, want: Verdict) -> Option<f64> {
        match v {
            CellVerdict::Compared(c) if c.verdict == want => Some(c.delta_pct),
            _ => None,
        }
    }

    #[test]
    fn noise_bar_is_strict() {
        assert!(pct_of(best(&[101.9], &[100.0], 2.0), Verdict::Noise)
            .is_some_and(|p| (p - 1.9).abs() < 1e-9));
        assert!(pct_of(best(&[102.0], &[100.0], 2.0), Verdict::Higher).is_some());
        assert!(pct_of(best(&[98.0], &[100.0], 2.0), Verdict::Lower)
            .is_some_and(|p| (p + 2.0).abs() < 1e-9));
        assert_eq!(best(&[], &[1.0], 2.0), CellVerdict::None);
        assert_eq!(best(&[1.0], &[0.0], 2.0), CellVerdict::None);
    }

    #[test]
    fn u_test_decides_only_when_it_can() {
        assert!(!u_test_can_reach(3, 3, 0.05));
        assert!(u_test_can_reach(4, 4, 0.05));
        assert!(!u_test_can_reach(1, 20, 0.05));
        // Overlapping runs: the best differs by 5 % but the runs do not.
        let base = [100.0, 90.0, 80.0, 95.0, 85.0];
        let over = [105.0, 80.0, 91.0, 84.0, 96.0];
        assert!(pct_of(best(&over, &base, 2.0), Verdict::NotSignificant).is_some());
        // Separated runs: a real change.
        let far = [120.0, 121.0, 122.0, 123.0, 124.0];
        assert!(pct_of(best(&far, &base, 2.0), Verdict::Higher).is_some());
        // Three against three: the bar alone.
        let b3 = [100.0, 90.0, 80.0];
        let c3 = [105.0, 80.0, 91.0];
        assert!(pct_of(best(&c3, &b3, 2.0), Verdict::Higher).is_some());
    }

    #[test]
    fn best_follows_direction_and_keeps_its_start() {
        let ok = [(10.0, Some(1.0)), (12.0, Some(2.0)), (11.0, Some(3.0))];
        assert_eq!(
            pick(&ok, Stat::Best, Better::Higher),
            (Some(12.0), Some(2.0))
        );
        assert_eq!(
            pick(&ok, Stat::Best, Better::Lower),
            (Some(10.0), Some(1.0))
        );
        assert_eq!(
            pick(&ok, Stat::Median, Better::Higher),
            (Some(11.0), Some(2.0))
        );
    }
}
