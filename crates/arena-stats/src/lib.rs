//! Quantiles and summaries: one documented method, used by every reducer.
//!
//! Quantiles are Hyndman & Fan type 7 (linear interpolation between closest ranks; the
//! default of NumPy, R and SciPy), so every figure can be checked with
//! `numpy.percentile(xs, q)`. Exact sets use [`Summary`]; production-sized logs that must
//! stream in constant memory use [`StreamingSummary`], which is exact in count, mean, min
//! and max and holds quantiles to three significant digits (hdrhistogram).

mod streaming;
mod summary;

pub use streaming::StreamingSummary;
pub use summary::{quantile_sorted, Summary};
