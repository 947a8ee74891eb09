//! Tests on counts: how many loops of each arm went unanswered (or failed some other way)
//! out of how many. A rate is compared exactly, not with a normal approximation, because
//! the counts a gate cares about are small (a handful of timeouts in a few hundred loops).

/// One-sided Fisher exact test that the candidate's share `k_cand / n_cand` is greater
/// than the baseline's `k_base / n_base`: the p-value is the hypergeometric probability
/// of at least `k_cand` of all `k_base + k_cand` events falling in the candidate's
/// `n_cand` trials, margins fixed. The same as
/// `scipy.stats.fisher_exact([[k_cand, n_cand - k_cand], [k_base, n_base - k_base]],
/// alternative='greater')`.
///
/// Terms are summed relative to the largest one and scaled once by its probability,
/// computed in log space, so nothing overflows or underflows with tens of thousands of
/// trials a side. `None` when a side has no trials or more events than trials.
pub fn fisher_exact_greater(k_base: u64, n_base: u64, k_cand: u64, n_cand: u64) -> Option<f64> {
    if n_base == 0 || n_cand == 0 || k_base > n_base || k_cand > n_cand {
        return None;
    }
    // X ~ Hypergeometric: `n` draws from `total` trials of which `events` are events.
    let (n, events, total) = (
        n_cand as f64,
        (k_base + k_cand) as f64,
        (n_base + n_cand) as f64,
    );
    let k = k_cand as f64;
    let hi = events.min(n);
    let lo = (n - (total - events)).max(0.0);
    let mode = ((n + 1.0) * (events + 1.0) / (total + 2.0))
        .floor()
        .clamp(lo, hi);
    // Both ends of [k, hi] fall away from the largest term, at max(k, mode).
    let top = k.max(mode);
    // P(X = x + 1) / P(X = x).
    let ratio = |x: f64| (events - x) * (n - x) / ((x + 1.0) * (total - events - n + x + 1.0));
    let mut sum = 1.0;
    let (mut term, mut x) = (1.0, top);
    while x < hi {
        term *= ratio(x);
        sum += term;
        x += 1.0;
    }
    let (mut term, mut x) = (1.0, top);
    while x > k {
        x -= 1.0;
        term /= ratio(x);
        sum += term;
    }
    let ln_top = ln_choose(events, top) + ln_choose(total - events, n - top) - ln_choose(total, n);
    Some((ln_top.exp() * sum).min(1.0))
}

/// ln C(n, k) for whole `0 <= k <= n`.
fn ln_choose(n: f64, k: f64) -> f64 {
    libm::lgamma(n + 1.0) - libm::lgamma(k + 1.0) - libm::lgamma(n - k + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_scipy_fisher_exact_greater() {
        // Each p from
        // scipy.stats.fisher_exact([[kc, nc - kc], [kb, nb - kb]], alternative='greater').pvalue
        // for (kb, nb, kc, nc):
        let cases: [((u64, u64, u64, u64), f64); 12] = [
            ((0, 312, 62, 312), 7.468224083461297e-21),
            ((3, 312, 5, 312), 0.36239704572555875),
            ((0, 60, 0, 60), 1.0),
            ((10, 20, 1, 20), 0.9999273467015403),
            ((5, 20000, 31, 20000), 6.403769596168339e-06),
            ((120, 19850, 160, 20150), 0.013340770942224635),
            ((4, 312, 4, 312), 0.6376029542744412),
            ((1, 1, 0, 1), 1.0),
            ((0, 5, 5, 5), 0.003968253968253969),
            ((62, 312, 0, 312), 1.0),
            ((2, 40, 9, 38), 0.018931456517544812),
            ((700, 20000, 650, 20000), 0.921048333282402),
        ];
        for ((kb, nb, kc, nc), want) in cases {
            let got = fisher_exact_greater(kb, nb, kc, nc).unwrap();
            assert!(
                (got - want).abs() <= 1e-9 * want,
                "{kb}/{nb} vs {kc}/{nc}: {got} vs SciPy {want}"
            );
        }
    }

    #[test]
    fn unusable_counts_have_no_p_value() {
        assert_eq!(fisher_exact_greater(0, 0, 1, 10), None);
        assert_eq!(fisher_exact_greater(1, 10, 0, 0), None);
        assert_eq!(fisher_exact_greater(11, 10, 1, 10), None);
        assert_eq!(fisher_exact_greater(1, 10, 11, 10), None);
        assert_eq!(fisher_exact_greater(0, 1, 0, 1), Some(1.0));
    }
}
