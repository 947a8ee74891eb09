//! Quantiles, summaries and comparison statistics: one documented method each, used by
//! every reducer.
//!
//! Quantiles are Hyndman & Fan type 7 (linear interpolation between closest ranks; the
//! default of NumPy, R and SciPy), so every figure can be checked with
//! `numpy.percentile(xs, q)`. Exact sets use [`Summary`]; production-sized logs that must
//! stream in constant memory use [`StreamingSummary`], which is exact in count, mean, min
//! and max and holds quantiles to three significant digits (hdrhistogram).
//!
//! Comparisons: [`mann_whitney_u`] (SciPy's method choices, see [`mwu`]),
//! [`bootstrap_quantile_diff`] (seeded percentile bootstrap of a quantile difference) and
//! [`noise_verdict`], the noise verdict that combines them under a [`NoiseRule`]. Every
//! percent change is [`pct_change`]. Reducers decide with these; tables only render.
//! [`ks_uniform`] tests whether the pilot's inputs were uniform on the frame clock.
//!
//! A loop that went unanswered is censored at the window: `+inf` at the top of its sample
//! ([`is_censored`]), so a quantile that reaches it is `+inf` rather than a number. A gate
//! asks one resampling several questions through [`bootstrap_diff_replicates`], compares
//! counts of such loops with [`fisher_exact_greater`], holds a family of checks to one
//! level with [`holm`] and sizes detectable changes with [`normal_quantile`].

mod bootstrap;
mod counts;
mod hier;
mod ks;
mod multiple;
pub mod mwu;
pub mod sim;
mod streaming;
mod student;
mod summary;
mod verdict;

pub use bootstrap::{
    bootstrap_diff_replicates, bootstrap_quantile_ci, bootstrap_quantile_diff,
    bootstrap_quantile_diff_runs, resampled_quantile, resampled_quantile_strata, BootstrapOptions,
    DiffCi, Replicates, Rng,
};
pub use counts::fisher_exact_greater;
pub use hier::{
    hier_diff, pooled_strata, run_spread, runs_needed, sparse, unstratified, Components, Design,
    HierDiff, HierOptions, Pairing, SpreadSource, Strata, RUN_SPREAD_DF,
};
pub use ks::{kolmogorov_sf, ks_uniform, KsTest};
pub use multiple::holm;
pub use mwu::{
    mann_whitney_u, mann_whitney_u_sorted, normal_quantile, normal_sf, MannWhitney, MwuMethod,
};
pub use streaming::StreamingSummary;
pub use student::{t_quantile, t_sf};
pub use summary::{censored_floor, is_censored, quantile, quantile_sorted, Summary};
pub use verdict::{
    noise_verdict, pct_change, pooled, u_test_can_reach, ChangeFigures, ChangeJson, NoiseRule,
    QuantileChange, SmallSamples, Verdict, RUN_SPREAD_PCT,
};
