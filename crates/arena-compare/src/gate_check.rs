//! The gate's checks as data, each decided: a latency limit's and the shares' (unanswered,
//! claimed).
//! Computed by `crate::gate`, tabled by `crate::gate_table`.

use arena_stats::QuantileChange;
use serde::Serialize;

use crate::decide::Power;
use crate::limit::{Limit, Share};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    Pass,
    Fail,
    /// The interval straddles the limit: neither established.
    Unknown,
}

/// One latency limit, decided.
#[derive(Debug, Clone, Serialize)]
pub struct GateCheck {
    pub limit: Limit,
    /// Loops behind each side's figure, unanswered ones included.
    pub n_baseline: usize,
    pub n_candidate: usize,
    /// Of those, unanswered loops censored at the window.
    pub censored_baseline: u64,
    pub censored_candidate: u64,
    /// The quantiles, the change and its interval (`p` is the raw p below).
    pub change: QuantileChange,
    /// Two-sided p of "the change is within the limit" (under alpha exactly when the
    /// interval at `1 - alpha` lies wholly past it).
    pub p_limit: f64,
    /// `p_limit` times the gate's checks (Bonferroni): the check fails under alpha.
    pub p_adjusted: f64,
    pub power: Power,
    pub status: CheckStatus,
    pub reason: String,
    /// What is known of each side's quantile where it lands on an unanswered loop
    /// ([`arena_stats::censored_floor`]).
    #[serde(skip)]
    pub floors: (Option<f64>, Option<f64>),
}

/// A share's loops on one side: those it counts, of those it is a share of.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Counts {
    /// Loops of the share (unanswered ones, or claimed ones).
    pub count: u64,
    /// What it is a share of: answered and unanswered loops for the unanswered share,
    /// every loop for the claimed share.
    pub loops: u64,
}

impl Counts {
    pub fn share_pct(&self) -> f64 {
        if self.loops == 0 {
            0.0
        } else {
            100.0 * self.count as f64 / self.loops as f64
        }
    }
}

/// A share of the loops, decided.
#[derive(Debug, Clone, Serialize)]
pub struct ShareCheck {
    /// Which share: the document names it by its key.
    #[serde(skip)]
    pub share: Share,
    pub max_pt: f64,
    /// The limit was not given: the default applies.
    pub default: bool,
    pub baseline: Counts,
    pub candidate: Counts,
    /// Candidate share minus baseline share, percentage points.
    pub rise_pt: f64,
    /// Fisher's exact test, one-sided: is the candidate's share greater?
    pub p: f64,
    pub p_adjusted: f64,
    /// The rise past the limit the test sees with 80 % power, points (normal
    /// approximation at the share the limit allows).
    pub mde_pt: f64,
    pub status: CheckStatus,
    pub reason: String,
}
