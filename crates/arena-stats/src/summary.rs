use serde::{Deserialize, Serialize};

/// Type-7 quantile of an ascending, NaN-free slice; `q` in [0, 1]. `None` when empty.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
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
}
