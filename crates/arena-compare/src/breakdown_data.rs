//! A breakdown as data: its cells, row by row and column by column within a row. Computed
//! by `crate::breakdown`, tabled by `crate::breakdown_table`.

use arena_run::Metric;
use serde::Serialize;

use crate::change::MetricChange;
use crate::split::Split;

/// One row of one column.
#[derive(Debug, Clone, Serialize)]
pub struct BreakdownCell {
    pub row: String,
    pub column: String,
    /// Every loop of the row: answered, unanswered, claimed and cold ones (coalesced
    /// input: the inputs seen).
    pub loops: u64,
    pub answered: u64,
    pub unanswered: u64,
    pub claimed: u64,
    pub cold: u64,
    /// Answered loops whose reply reached the breakdown's `reply_over` size.
    pub replies_over: u64,
    /// Values behind the quantiles (warm answered loops with the metric, unless cold
    /// loops were asked in).
    pub n: u64,
    /// p50, p90, p99 in ms; `None` for an empty row. Its JSON document names them
    /// (`crate::json_types::BreakdownCellDoc`).
    #[serde(skip)]
    pub quantiles: [Option<f64>; 3],
    /// Against the baseline column's same row; `None` for the baseline itself and for
    /// coalesced input (only its per-run summary is kept).
    #[serde(skip)]
    pub change: Option<MetricChange>,
}

/// One `--split`: its cells, row by row and column by column within a row, and its table.
#[derive(Debug, Clone)]
pub struct Breakdown {
    pub split: Split,
    pub metric: Metric,
    /// The reply size counted in `replies_over`, bytes.
    pub reply_over: u64,
    pub baseline: String,
    pub columns: Vec<String>,
    pub rows: Vec<String>,
    pub cells: Vec<BreakdownCell>,
    pub table: arena_report::Table,
}
