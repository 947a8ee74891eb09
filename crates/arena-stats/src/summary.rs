use serde::{Deserialize, Serialize};

/// Whether a sample is censored: a loop that went unanswered within its window, stored as
/// `+inf` so that it sorts above every answered value.
pub fn is_censored(x: f64) -> bool {
    x == f64::INFINITY
}

/// The type-7 step `a + frac * (b - a)` between adjacent order statistics `a <= b`, read
/// over the extended reals so that censored values never turn into NaN.
///
/// Only the censoring bound of an unanswered loop is known, so any mix of it into an
/// answered value is itself a bound, not a value: `+inf` when `a` is `+inf`, or when `b`
/// is `+inf` and `frac > 0`. `a` when `frac == 0`. A difference of quantiles can be
/// `-inf`; interpolating away from it stays `-inf` for the same reason.
pub(crate) fn lerp7(a: f64, b: f64, frac: f64) -> f64 {
    if frac == 0.0 || a == f64::INFINITY {
        a
    } else if b == f64::INFINITY {
        f64::INFINITY
    } else if a == f64::NEG_INFINITY {
        a
    } else {
        a + frac * (b - a)
    }
}

/// Type-7 quantile of an ascending, NaN-free slice; `q` in [0, 1]. `None` when empty.
///
/// Censored samples (`+inf`, see [`is_censored`]) sit at the top. A quantile that lands
/// on one, or interpolates toward one, is censored too (`+inf`): the sample says only
/// that it lies beyond the window. One that lands on the last answered value is that
/// value.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    Some(lerp7(sorted[lo], sorted[hi], h - lo as f64))
}

/// What is known of a type-7 quantile of `sorted` (unanswered loops `+inf` at the top)
/// that lands on an unanswered loop: each unanswered loop took at least `window` ms, so
/// the quantile is at least the step from its answered order statistic towards the
/// window. `None` when the quantile is answered (it is then exact). With 200 loops, 2
/// unanswered and a 2,000 ms window, a p99 between the largest answered loop (50 ms) and
/// the first unanswered one is at least 50 + 0.01 × 1,950 = 69.5 ms, not past the window.
pub fn censored_floor(sorted: &[f64], q: f64, window: f64) -> Option<f64> {
    let v = quantile_sorted(sorted, q)?;
    if !is_censored(v) {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let at = |x: f64| if is_censored(x) { window } else { x };
    let (a, b) = (at(sorted[lo]), at(sorted[h.ceil() as usize]));
    Some(a + (h - lo as f64) * (b - a).max(0.0))
}

/// Type-7 quantile of `values` in any order, ignoring NaNs; `q` in [0, 1]. `None` when
/// nothing is left. Copies and sorts: for one figure of a small set (a benchmark's
/// repeats); sort once and use [`quantile_sorted`] for several.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_unstable_by(f64::total_cmp);
    quantile_sorted(&v, q)
}

/// n, mean, min, p50, p90, p99, max of an exact set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: u64,
    pub mean: f64,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Summary {
    /// Summarises `values`, ignoring NaNs (they are not samples). `None` when nothing is left.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
        Summary::of_owned(&mut v)
    }

    /// Like [`Summary::of`] but sorts `values` in place instead of copying.
    pub fn of_owned(values: &mut Vec<f64>) -> Option<Summary> {
        values.retain(|x| !x.is_nan());
        if values.is_empty() {
            return None;
        }
        values.sort_unstable_by(f64::total_cmp);
        let q = |p| quantile_sorted(values, p).unwrap_or(f64::NAN);
        Some(Summary {
            n: values.len() as u64,
            mean: values.iter().sum::<f64>() / values.len() as f64,
            min: values[0],
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            max: values[values.len() - 1],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_numpy_type7() {
        // numpy.percentile([1, 2, 3, 4, 10], [50, 90, 99]) -> 3.0, 7.6, 9.76
        let s = Summary::of(&[4.0, 1.0, 10.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.p50, 3.0);
        assert!((s.p90 - 7.6).abs() < 1e-12);
        assert!((s.p99 - 9.76).abs() < 1e-12);
        assert_eq!((s.min, s.max, s.n), (1.0, 10.0, 5));
        assert_eq!(s.mean, 4.0);
    }

    /// `x`: `n - k` answered values then `k` censored ones.
    fn with_censored(n: usize, k: usize, censored: f64) -> Vec<f64> {
        let mut x: Vec<f64> = (0..n - k)
            .map(|i| 20.0 + ((i * 37) % 101) as f64 * 0.25)
            .collect();
        x.sort_by(f64::total_cmp);
        x.extend(std::iter::repeat_n(censored, k));
        x
    }

    #[test]
    fn censored_quantiles_match_numpy_with_a_stand_in() {
        // NumPy cannot interpolate with inf, so 1e12 stands in for a censored value: the
        // quantile is censored exactly when NumPy's answer is above every answered value.
        // (n, k, q, NumPy) from, for each case,
        // f = sorted(20 + ((i * 37) % 101) * 0.25 for i in range(n - k))
        // numpy.percentile(f + [1e12] * k, [50, 90, 99, 100])   (or q * 100 for the last six)
        // The last six put the type-7 position exactly on the last answered value (k one
        // less) or on the first censored one.
        #[rustfmt::skip]
        let cases: [(usize, usize, f64, f64); 46] = [
            (10, 0, 0.5, 30.5), (10, 0, 0.9, 41.25), (10, 0, 0.99, 43.275), (10, 0, 1.0, 43.5),
            (10, 1, 0.5, 33.0), (10, 1, 0.9, 100000000039.14964),
            (10, 1, 0.99, 910000000003.9152), (10, 1, 1.0, 1e12),
            (10, 2, 0.5, 33.0), (10, 2, 0.9, 1e12), (10, 2, 0.99, 1e12), (10, 2, 1.0, 1e12),
            (58, 1, 0.5, 32.375), (58, 1, 0.9, 42.725), (58, 1, 0.99, 430000000025.6497),
            (58, 1, 1.0, 1e12),
            (58, 6, 0.5, 34.125), (58, 6, 0.9, 300000000031.5043), (58, 6, 0.99, 1e12),
            (58, 6, 1.0, 1e12),
            (156, 2, 0.5, 32.5), (156, 2, 0.9, 42.875), (156, 2, 0.99, 450000000024.73865),
            (156, 2, 1.0, 1e12),
            (156, 16, 0.5, 34.0), (156, 16, 0.9, 500000000022.5), (156, 16, 0.99, 1e12),
            (156, 16, 1.0, 1e12),
            (312, 3, 0.5, 32.5), (312, 3, 0.9, 42.75), (312, 3, 0.99, 45.0), (312, 3, 1.0, 1e12),
            (312, 31, 0.5, 33.875), (312, 31, 0.9, 45.0), (312, 31, 0.99, 1e12),
            (312, 31, 1.0, 1e12),
            (312, 40, 0.5, 34.25), (312, 40, 0.9, 1e12), (312, 40, 0.99, 1e12),
            (312, 40, 1.0, 1e12),
            (11, 1, 0.9, 43.5), (11, 2, 0.9, 1e12),
            (101, 1, 0.99, 45.0), (101, 2, 0.99, 1e12),
            (21, 10, 0.5, 43.5), (21, 11, 0.5, 1e12),
        ];
        let mut censored = 0;
        for (n, k, q, numpy) in cases {
            let x = with_censored(n, k, f64::INFINITY);
            let last_answered = x[n - k - 1];
            let got = quantile_sorted(&x, q).unwrap();
            if numpy > last_answered {
                censored += 1;
                assert!(is_censored(got), "n {n} k {k} q {q}: {got}");
            } else {
                assert!(
                    (got - numpy).abs() < 1e-9,
                    "n {n} k {k} q {q}: {got} vs {numpy}"
                );
            }
        }
        assert_eq!(censored, 25);
    }

    #[test]
    fn lerp7_never_makes_nan_of_censored_ends() {
        let inf = f64::INFINITY;
        assert_eq!(lerp7(3.0, inf, 0.0), 3.0);
        assert_eq!(lerp7(3.0, inf, 1e-12), inf);
        assert_eq!(lerp7(inf, inf, 0.0), inf);
        assert_eq!(lerp7(inf, inf, 0.5), inf);
        assert_eq!(lerp7(-inf, 2.0, 0.5), -inf);
        assert_eq!(lerp7(-inf, -inf, 0.5), -inf);
        assert_eq!(lerp7(2.0, 4.0, 0.25), 2.5);
        assert!(!is_censored(f64::MAX) && !is_censored(-inf) && !is_censored(f64::NAN));
        let s = Summary::of(&with_censored(10, 1, inf)).unwrap();
        assert_eq!((s.p50, s.p90, s.max), (33.0, inf, inf));
    }

    #[test]
    fn empty_and_nan() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[f64::NAN]).is_none());
        assert_eq!(Summary::of(&[f64::NAN, 5.0]).unwrap().p99, 5.0);
        assert_eq!(quantile_sorted(&[1.0], 1.5), None);
        assert_eq!(
            quantile(&[10.0, f64::NAN, 1.0, 4.0, 3.0, 2.0], 0.5),
            Some(3.0)
        );
        assert_eq!(quantile(&[4.0, 1.0, 2.0, 3.0], 0.5), Some(2.5));
        assert_eq!(quantile(&[f64::NAN], 0.5), None);
    }

    #[test]
    fn a_censored_quantile_is_known_from_its_answered_neighbour_up() {
        // 198 answered loops 1..=50 ms, 2 unanswered, a 2,000 ms window: the p99 sits
        // 1 % of the way from the largest answered loop (50 ms) to the window.
        let mut v: Vec<f64> = (0..198).map(|i| 1.0 + 49.0 * i as f64 / 197.0).collect();
        v.extend([f64::INFINITY; 2]);
        let floor = censored_floor(&v, 0.99, 2000.0).unwrap();
        let h = 199.0 * 0.99;
        let by_hand = 50.0 + (h - 197.0) * (2000.0 - 50.0);
        assert!((floor - by_hand).abs() < 1e-9, "{floor} vs {by_hand}");
        assert!((floor - 69.5).abs() < 0.1, "{floor}");
        // Both order statistics unanswered: past the window itself.
        assert_eq!(censored_floor(&v, 1.0, 2000.0), Some(2000.0));
        // An answered quantile is exact: no floor.
        assert_eq!(censored_floor(&v, 0.5, 2000.0), None);
    }
}
