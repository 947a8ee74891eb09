//! The gate's share checks: the unanswered share and the claimed share of each side's
//! loops, each tested with Fisher's exact test on the counts and decided once the
//! family's size is known.
//!
//! A claimed loop is an input whose answer had already closed an earlier loop. It has no
//! latency, so no quantile sees it: a candidate that merges answers (one frame for a press
//! and its release) would leave its releases claimed and its figures untouched. Its share
//! is checked like the unanswered one.

use arena_stats::{fisher_exact_greater, normal_quantile};

use crate::gate_check::{CheckStatus, Counts, ShareCheck};
use crate::group::Group;
use crate::limit::{Share, DEFAULT_UNANSWERED_PT};

/// A side's loops of `share`, of the loops it is a share of.
fn counts(share: Share, g: &Group) -> Counts {
    let answered: u64 = g.runs.iter().map(|r| r.answered).sum();
    match share {
        Share::Unanswered => Counts {
            count: g.unanswered(),
            loops: g.unanswered() + answered,
        },
        Share::Claimed => Counts {
            count: g.claimed(),
            loops: g.unanswered() + answered + g.claimed(),
        },
    }
}

/// `share` on each side, with Fisher's exact test on the counts; the verdict waits for
/// the family ([`settle_share`]).
pub fn share_check(
    share: Share,
    gb: &Group,
    gc: &Group,
    max_pt: Option<f64>,
    alpha: f64,
) -> ShareCheck {
    let (b, c) = (counts(share, gb), counts(share, gc));
    let limit = max_pt.unwrap_or(DEFAULT_UNANSWERED_PT);
    let p = fisher_exact_greater(b.count, b.loops, c.count, c.loops).unwrap_or(1.0);
    // The test's spread at the share the limit allows: a rise from nothing is not free.
    let at = ((b.share_pct() + limit) / 100.0).clamp(1e-6, 0.5);
    let n = (b.loops.min(c.loops)).max(1) as f64;
    let z = normal_quantile(1.0 - alpha) + normal_quantile(0.8);
    let mde_pt = 100.0 * z * (2.0 * at * (1.0 - at) / n).sqrt();
    ShareCheck {
        share,
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

/// The share's verdict in a family of `m` checks: its p times `m` (Bonferroni). It fails
/// when the rise is past its limit and significant.
pub fn settle_share(u: &mut ShareCheck, m: usize, alpha: f64) {
    u.p_adjusted = (u.p * m as f64).min(1.0);
    let past = u.rise_pt > u.max_pt;
    let significant = u.p_adjusted < alpha;
    (u.status, u.reason) = match (past, significant) {
        (true, true) => (
            CheckStatus::Fail,
            format!(
                "the {} share rose {:+.1} pt, past +{} pt, and significantly",
                u.share.name(),
                u.rise_pt,
                u.max_pt
            ),
        ),
        (true, false) => (
            CheckStatus::Pass,
            "past the limit but not significant (~)".to_string(),
        ),
        (false, _) => (CheckStatus::Pass, "within the limit".to_string()),
    };
}
