//! Several checks, one decision: a gate that fails when any of m checks rejects at
//! `alpha` would fail a clean change far more often than `alpha` if each check used it.

/// Holm-adjusted p-values, in input order: a check is rejected at family-wise level
/// `alpha` exactly when its adjusted p is below `alpha`.
///
/// The i-th smallest p (from 0) is scaled by `m - i`, then made non-decreasing in that
/// order (a check cannot be rejected after a smaller p was kept) and capped at 1; the
/// same as `statsmodels.stats.multitest.multipletests(p, method='holm')[1]`. Holm rather
/// than Bonferroni: the same guarantee with no assumption on how the checks depend on
/// each other, and never less power. A NaN stays NaN and still counts in m, so a check
/// that could not be computed makes the others stricter, not looser.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| {
        p[i].is_nan()
            .cmp(&p[j].is_nan())
            .then(p[i].total_cmp(&p[j]))
    });
    let mut adjusted = vec![f64::NAN; m];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        if p[i].is_nan() {
            break;
        }
        running = running.max(p[i] * (m - rank) as f64);
        adjusted[i] = running.min(1.0);
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_statsmodels_holm() {
        // statsmodels.stats.multitest.multipletests(p, method='holm')[1] for each p:
        let cases: [(&[f64], &[f64]); 4] = [
            (&[0.01, 0.04, 0.03, 0.005], &[0.03, 0.06, 0.06, 0.02]),
            (
                &[0.02, 0.02, 0.5, 0.001, 0.02],
                &[0.08, 0.08, 0.5, 0.005, 0.08],
            ),
            (&[0.03], &[0.03]),
            (
                &[0.2, 0.6, 0.01, 0.9, 0.04, 0.04, 0.3],
                &[0.8, 1.0, 0.07, 1.0, 0.24, 0.24, 0.8999999999999999],
            ),
        ];
        for (p, want) in cases {
            let got = holm(p);
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(want) {
                assert!((g - w).abs() < 1e-15, "{p:?}: {got:?} vs {want:?}");
            }
        }
    }

    #[test]
    fn nan_stays_nan_and_counts() {
        let got = holm(&[0.01, f64::NAN, 0.02]);
        assert!(got[1].is_nan());
        assert_eq!((got[0], got[2]), (0.03, 0.04));
        assert!(holm(&[]).is_empty());
    }
}
