//! The rule behind `verify`: how far one quantile of a kind's answers moved when the path
//! got longer, with an interval over the runs, and what that interval says.
//!
//! An answer its input caused is the path plus the target's work, so with the target's
//! work unchanged every quantile of a caused kind moves by exactly the delay added. The
//! shift of a quantile is [`arena_stats::hier_diff`]'s change, direct to delayed: each
//! run's quantile with its loops' bootstrap spread, the runs' own spread between them
//! (the assumed [`arena_stats::RUN_SPREAD_PCT`] with one run a side), Student's t on the
//! degrees of freedom the runs give. One interval is then read against the delay `d` and
//! the tolerance `tol`:
//!
//! - wholly below `d - tol`: the quantile moved less than the path allows. Over 0 it
//!   moved **less** than the delay, reaching 0 it did **not move**;
//! - wholly above `d + tol`: it moved **more** (the path counts twice: an answer gated on
//!   an ack that crosses the link);
//! - meeting `[d - tol, d + tol]` and above 0: it moved **as injected**;
//! - meeting that band and reaching 0: **unknown**, too wide to tell the two apart. More
//!   loops narrow the loops' share of the interval, never the runs' share:
//!   [`QuantileShift::loops_factor`] says how many times as many loops a run would decide
//!   it, if any number would.

use arena_stats::{hier_diff, pooled_strata, quantile_sorted, t_quantile, HierOptions, Pairing};
use serde::Serialize;

/// The low quantile judged beside the median: an answer caused by its input cannot come
/// sooner than the path allows, so a kind some of whose answers did not move shows it
/// first at its fast end. The fastest answer alone said so from one loop, and one loop
/// scatters by 3 to 5 ms between runs on a busy target; the lower decile is the lowest
/// quantile that a run of 30 clicks still holds two loops under (`docs/pilot-file.md`,
/// Causality, gives what it catches).
pub const LOW_Q: f64 = 0.1;

/// The family-wise error rate of the verification: every interval is at `1 - ALPHA / m`
/// for `m` intervals (Bonferroni), so that a kind that moved by the delay is named less
/// or unmoved by chance in at most one verification in twenty.
pub const ALPHA: f64 = 0.05;

/// How one quantile's shift reads against the delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Move {
    /// The interval meets the delay (within the tolerance) and leaves 0 out.
    AsInjected,
    /// Wholly above the delay.
    More,
    /// Wholly below the delay, above 0.
    Less,
    /// Wholly below the delay, reaching 0 (or below it).
    None,
    /// Meets both the delay and 0: too wide to tell.
    Unknown,
}

impl Move {
    pub fn word(self) -> &'static str {
        match self {
            Move::AsInjected => "as injected",
            Move::More => "more",
            Move::Less => "less",
            Move::None => "not moved",
            Move::Unknown => "unknown",
        }
    }
}

/// One quantile of one kind and metric, direct and delayed, and its shift.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QuantileShift {
    pub q: f64,
    pub direct_ms: f64,
    pub delayed_ms: f64,
    pub shift_ms: f64,
    /// The interval of the shift at `level` (infinite on a side a censored quantile
    /// leaves open).
    pub lo_ms: f64,
    pub hi_ms: f64,
    pub level: f64,
    pub moved: Move,
    /// For an unknown shift: how many times the loops a run would narrow the interval
    /// enough to decide it (`None`: no number of loops would, the runs disagree).
    pub loops_factor: Option<f64>,
}

/// What a shift is judged against.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Band {
    /// The round trip the link added, ms.
    pub injected_ms: f64,
    /// How far a shift may be from `injected_ms` and still be the delay, ms.
    pub tolerance_ms: f64,
}

/// The options [`hier_diff`] runs with here: compare's, so that `verify` and `compare`
/// read the same runs the same way.
fn options() -> HierOptions {
    HierOptions {
        pairing: Pairing::Independent,
        run_spread_pct: Some(arena_stats::RUN_SPREAD_PCT),
        ..HierOptions::default()
    }
}

/// The shift of quantile `q` from `direct` to `delayed` (each a side's runs, one ascending
/// slice a run, unanswered loops `+inf`), its interval at `level`, and how it reads.
/// `None` when a side has no loop.
pub fn quantile_shift(
    direct: &[&[f64]],
    delayed: &[&[f64]],
    q: f64,
    band: Band,
    level: f64,
) -> Option<QuantileShift> {
    let (b, c) = (
        arena_stats::unstratified(direct),
        arena_stats::unstratified(delayed),
    );
    let d = hier_diff(&b, &c, q, &options())?;
    let ci = d.interval(level);
    let mut moved = read(ci.lo, ci.hi, band);
    // A run with fewer than two loops under the quantile holds it at its fastest loop,
    // which no resample goes under: the interval is too short below to say anything.
    let shortest = b.iter().chain(&c).map(|r| r[0].len()).min().unwrap_or(0);
    let sparse = arena_stats::sparse(shortest, 1.0 - q);
    if sparse {
        moved = Move::Unknown;
    }
    let loops_factor = (moved == Move::Unknown)
        .then(|| {
            let target = d
                .centre
                .max(band.injected_ms - band.tolerance_ms - d.centre);
            let t = t_quantile(0.5 + level / 2.0, d.components.df);
            let room = (target / t).powi(2) - d.components.between;
            let narrow = (room > 0.0 && d.components.within.is_finite())
                .then(|| (d.components.within / room).max(1.0))?;
            let enough = if sparse {
                (2.0 / q.min(1.0 - q)).ceil() / shortest.max(1) as f64
            } else {
                1.0
            };
            Some(narrow.max(enough))
        })
        .flatten();
    Some(QuantileShift {
        q,
        direct_ms: quantile_sorted(&pooled_strata(&b), q)?,
        delayed_ms: quantile_sorted(&pooled_strata(&c), q)?,
        shift_ms: d.estimate,
        lo_ms: ci.lo,
        hi_ms: ci.hi,
        level,
        moved,
        loops_factor,
    })
}

/// Whether a shift that must not move did not, as far as its interval tells: it meets
/// `[-tol, tol]` (an interval that holds 0 and the delay is no proof of a move).
pub fn stays(s: &QuantileShift, band: Band) -> bool {
    s.lo_ms <= band.tolerance_ms && s.hi_ms >= -band.tolerance_ms
}

/// How an interval `[lo, hi]` of a shift reads against `band`.
pub fn read(lo: f64, hi: f64, band: Band) -> Move {
    let (low, high) = (
        band.injected_ms - band.tolerance_ms,
        band.injected_ms + band.tolerance_ms,
    );
    if hi < low {
        if lo > 0.0 {
            Move::Less
        } else {
            Move::None
        }
    } else if lo > high {
        Move::More
    } else if lo > 0.0 {
        Move::AsInjected
    } else {
        Move::Unknown
    }
}

/// `verify`'s defaults: +30 ms, 3 ms either side (the tests' band).
#[cfg(test)]
pub(super) const BAND_30: Band = Band {
    injected_ms: 30.0,
    tolerance_ms: 3.0,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::kinds::slices;

    const BAND: Band = BAND_30;

    #[test]
    fn an_interval_reads_by_where_it_lies_against_the_delay_and_zero() {
        assert_eq!(read(27.5, 33.0, BAND), Move::AsInjected);
        // Within the tolerance of the delay on either side.
        assert_eq!(read(31.0, 32.5, BAND), Move::AsInjected);
        assert_eq!(read(20.0, 27.5, BAND), Move::AsInjected);
        assert_eq!(read(20.0, 26.5, BAND), Move::Less);
        assert_eq!(read(-2.0, 26.5, BAND), Move::None);
        assert_eq!(read(-9.0, -2.0, BAND), Move::None);
        assert_eq!(read(33.5, 40.0, BAND), Move::More);
        assert_eq!(read(-1.0, 40.0, BAND), Move::Unknown);
        assert_eq!(read(f64::NEG_INFINITY, 31.0, BAND), Move::Unknown);
        assert_eq!(read(5.0, f64::INFINITY, BAND), Move::AsInjected);
    }

    fn runs(at: f64, n: usize, spread: f64, k: usize) -> Vec<Vec<f64>> {
        (0..k)
            .map(|r| {
                let mut v: Vec<f64> = (0..n)
                    .map(|i| at + ((i * 37 + r * 11) % n) as f64 * spread / n as f64)
                    .collect();
                v.sort_by(f64::total_cmp);
                v
            })
            .collect()
    }

    #[test]
    fn a_wide_shift_says_how_many_times_the_loops_would_decide_it() {
        // 20 ms of spread a run, 24 loops: a p50 shift of +12 ms is neither 0 nor 30.
        let (a, b) = (runs(10.0, 24, 60.0, 2), runs(22.0, 24, 60.0, 2));
        let s = quantile_shift(&slices(&a), &slices(&b), 0.5, BAND, 0.99).unwrap();
        assert_eq!(s.moved, Move::Unknown, "{s:?}");
        assert!((s.shift_ms - 12.0).abs() < 3.0, "{s:?}");
        let f = s.loops_factor.expect("more loops narrow it");
        assert!(f > 1.0 && f < 100.0, "{s:?}");
        // With that many times the loops it is decided (the runs agree here).
        let n = (24.0 * f).ceil() as usize + 24;
        let (a, b) = (runs(10.0, n, 60.0, 2), runs(22.0, n, 60.0, 2));
        let s = quantile_shift(&slices(&a), &slices(&b), 0.5, BAND, 0.99).unwrap();
        assert_ne!(s.moved, Move::Unknown, "{s:?}");
    }

    #[test]
    fn a_run_too_short_for_the_low_quantile_leaves_it_unknown() {
        let (a, b) = (runs(10.0, 12, 5.0, 2), runs(40.0, 12, 5.0, 2));
        let s = quantile_shift(&slices(&a), &slices(&b), LOW_Q, BAND, 0.99).unwrap();
        assert_eq!(s.moved, Move::Unknown, "{s:?}");
        let (a, b) = (runs(10.0, 29, 5.0, 2), runs(40.0, 29, 5.0, 2));
        let s = quantile_shift(&slices(&a), &slices(&b), LOW_Q, BAND, 0.99).unwrap();
        assert_eq!(s.moved, Move::AsInjected, "{s:?}");
    }
}
