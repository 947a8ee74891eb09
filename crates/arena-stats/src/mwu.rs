//! Mann-Whitney U test, two-sided, with the method choices of SciPy's
//! `scipy.stats.mannwhitneyu(x, y, alternative='two-sided')` (method `auto`, SciPy >= 1.7):
//!
//! - **exact** when either sample has 8 values or fewer and there are no ties: the p-value
//!   is `2 * P(U >= max(U1, U2))` under the null distribution of U, clipped to 1;
//! - **asymptotic** otherwise: normal approximation with the tie correction of the
//!   variance and a continuity correction of 0.5 (`use_continuity=True`).
//!
//! `u1` is SciPy's `statistic`: the U of the first sample (baseline).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MwuMethod {
    Exact,
    Asymptotic,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U statistic of the first sample.
    pub u1: f64,
    /// Two-sided p-value.
    pub p: f64,
    pub method: MwuMethod,
}

/// Two-sided Mann-Whitney U test of `x` against `y`. `None` when either is empty or holds
/// a NaN (SciPy raises on both).
pub fn mann_whitney_u(x: &[f64], y: &[f64]) -> Option<MannWhitney> {
    let mut xs = x.to_vec();
    let mut ys = y.to_vec();
    if xs.iter().chain(&ys).any(|v| v.is_nan()) {
        return None;
    }
    xs.sort_unstable_by(f64::total_cmp);
    ys.sort_unstable_by(f64::total_cmp);
    mann_whitney_u_sorted(&xs, &ys)
}

/// Like [`mann_whitney_u`] over ascending, NaN-free slices; ranks by one merge pass, so a
/// comparison of sorted samples costs O(n1 + n2).
pub fn mann_whitney_u_sorted(x: &[f64], y: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    // Walk both slices in merged order, one tie group at a time: every member of a group
    // gets the group's average rank; t^3 - t per group feeds the variance correction.
    let (mut i, mut j) = (0usize, 0usize);
    let mut rank_base = 0.0f64; // ranks used so far
    let mut r1 = 0.0f64;
    let mut tie_term = 0.0f64;
    let mut any_ties = false;
    while i < n1 || j < n2 {
        let v = match (x.get(i), y.get(j)) {
            (Some(a), Some(b)) => a.min(*b),
            (Some(a), None) => *a,
            (None, Some(b)) => *b,
            (None, None) => break,
        };
        let mut cx = 0usize;
        while i < n1 && x[i] == v {
            i += 1;
            cx += 1;
        }
        let mut cy = 0usize;
        while j < n2 && y[j] == v {
            j += 1;
            cy += 1;
        }
        let t = (cx + cy) as f64;
        if t == 0.0 {
            // Only possible with values that never compare equal (NaN); refuse them.
            return None;
        }
        let avg = rank_base + (t + 1.0) / 2.0;
        r1 += avg * cx as f64;
        if t > 1.0 {
            any_ties = true;
            tie_term += t * t * t - t;
        }
        rank_base += t;
    }
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let u1 = r1 - n1f * (n1f + 1.0) / 2.0;
    let u2 = n1f * n2f - u1;
    let u = u1.max(u2);
    let exact = n1.min(n2) <= 8 && !any_ties;
    let p = if exact {
        2.0 * exact_sf(n1, n2, u.round() as u64)
    } else {
        let mu = n1f * n2f / 2.0;
        let n = n1f + n2f;
        let s = (n1f * n2f / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)))).sqrt();
        let z = (u - mu - 0.5) / s;
        // All values tied: s = 0 and z = -inf, p = 2 before clipping, as in SciPy.
        2.0 * normal_sf(z)
    };
    Some(MannWhitney {
        u1,
        p: p.clamp(0.0, 1.0),
        method: if exact {
            MwuMethod::Exact
        } else {
            MwuMethod::Asymptotic
        },
    })
}

/// Standard normal survival function, accurate in the far tail (erfc, not 1 - cdf).
pub fn normal_sf(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}

/// Standard normal quantile, the inverse of the CDF: `scipy.stats.norm.ppf(p)`. `-inf` at
/// 0, `+inf` at 1, NaN outside [0, 1].
///
/// Acklam's rational approximation (relative error under 1.2e-9), then one Halley step
/// against [`normal_sf`], which leaves the error at rounding level. Above 0.5 it is
/// `-normal_quantile(1 - p)`: `1 - p` is exact there, and the step then works in the
/// lower tail, where the CDF as `normal_sf(-x)` keeps its relative accuracy.
pub fn normal_quantile(p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        f64::NAN
    } else if p > 0.5 {
        -lower_normal_quantile(1.0 - p)
    } else {
        lower_normal_quantile(p)
    }
}

/// [`normal_quantile`] for `p` in [0, 0.5].
fn lower_normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    let horner = |coef: &[f64], t: f64| coef.iter().fold(0.0, |acc, c| acc * t + c);
    let x = if p < 0.02425 {
        let t = (-2.0 * p.ln()).sqrt();
        horner(&C, t) / (horner(&D, t) * t + 1.0)
    } else {
        let t = p - 0.5;
        let r = t * t;
        horner(&A, r) * t / (horner(&B, r) * r + 1.0)
    };
    let e = normal_sf(-x) - p;
    let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    // Past p ~ 1e-308 the density underflows; the approximation alone is what is left.
    if u.is_finite() {
        x - u / (1.0 + x * u / 2.0)
    } else {
        x
    }
}

/// `P(U >= k)` under the null for sample sizes `n1`, `n2`, without ties.
///
/// The number of arrangements with U = k is the coefficient of q^k in the Gaussian
/// binomial `[n1+n2 choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i)` with
/// `m = min(n1, n2)`, `n = max(n1, n2)`. Every intermediate product is itself a Gaussian
/// binomial, so integer arithmetic is exact while the counts fit in i128 (always for
/// m <= 8 and n up to about 10^5); past that the same recurrence runs in f64.
fn exact_sf(n1: usize, n2: usize, k: u64) -> f64 {
    let m = n1.min(n2);
    let n = n1.max(n2);
    let deg = m * n;
    let k = k as usize;
    if k == 0 {
        return 1.0;
    }
    if k > deg {
        return 0.0;
    }
    // By symmetry of the distribution, P(U >= k) = P(U <= deg - k): sum the low half.
    let upto = deg - k;
    if fits_i128(n, m) {
        let c = gaussian_binomial_i128(m, n);
        let total: i128 = c.iter().sum();
        let below: i128 = c[..=upto].iter().sum();
        below as f64 / total as f64
    } else {
        let c = gaussian_binomial_f64(m, n);
        let total: f64 = c.iter().sum();
        let below: f64 = c[..=upto].iter().sum();
        below / total
    }
}

fn fits_i128(n: usize, m: usize) -> bool {
    // C(n+m, m) bounds every coefficient and, times a few, every intermediate value.
    let mut log2 = 0.0f64;
    for i in 1..=m {
        log2 += ((n + i) as f64).log2() - (i as f64).log2();
    }
    log2 + 4.0 < 120.0
}

/// Coefficients of `[m+n choose m]_q`, in i128 (exact) or f64 (past i128's range).
fn gaussian_binomial<T>(m: usize, n: usize) -> Vec<T>
where
    T: Copy + From<u8> + std::ops::AddAssign + std::ops::SubAssign,
{
    let deg = m * n;
    let mut c = vec![T::from(0u8); deg + 1];
    c[0] = T::from(1u8);
    let mut cur_deg = 0usize;
    for i in 1..=m {
        let step = n + i;
        cur_deg += n;
        // Multiply by (1 - q^step), highest power first so each term reads old values.
        for d in (step..=cur_deg).rev() {
            let lower = c[d - step];
            c[d] -= lower;
        }
        // Divide by (1 - q^i): running sum with stride i.
        for d in i..=cur_deg {
            let lower = c[d - i];
            c[d] += lower;
        }
    }
    c
}

fn gaussian_binomial_i128(m: usize, n: usize) -> Vec<i128> {
    gaussian_binomial(m, n)
}

fn gaussian_binomial_f64(m: usize, n: usize) -> Vec<f64> {
    gaussian_binomial(m, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_quantile_matches_scipy() {
        // scipy.stats.norm.ppf(p) for each p:
        let cases = [
            (1e-6, -4.753424308822899),
            (0.025, -1.9599639845400545),
            (0.05, -1.6448536269514729),
            (0.2, -0.8416212335729142),
            (0.5, 0.0),
            (0.8, 0.8416212335729143),
            (0.95, 1.6448536269514722),
            (0.999999, 4.753424308817087),
            (0.02425, -1.972961051311885),
            (0.97575, 1.972961051311885),
            (1e-300, -37.0470962993612),
        ];
        for (p, want) in cases {
            let got = normal_quantile(p);
            assert!((got - want).abs() < 1e-9, "{p}: {got} vs SciPy {want}");
        }
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert_eq!(normal_quantile(1.0), f64::INFINITY);
        assert!(normal_quantile(-0.1).is_nan() && normal_quantile(f64::NAN).is_nan());
        assert!(normal_quantile(1.5).is_nan());
    }

    #[test]
    fn gaussian_binomial_counts_arrangements() {
        // [4 choose 2]_q = 1 + q + 2q^2 + q^3 + q^4: C(4,2) = 6 arrangements.
        assert_eq!(gaussian_binomial_i128(2, 2), vec![1, 1, 2, 1, 1]);
        let c = gaussian_binomial_i128(3, 5);
        assert_eq!(c.iter().sum::<i128>(), 56);
        let f = gaussian_binomial_f64(3, 5);
        assert!(c.iter().zip(&f).all(|(a, b)| *a as f64 == *b));
    }

    #[test]
    fn degenerate_inputs() {
        assert!(mann_whitney_u(&[], &[1.0]).is_none());
        assert!(mann_whitney_u(&[f64::NAN], &[1.0]).is_none());
        let all_tied = mann_whitney_u(&[1.0; 10], &[1.0; 12]).unwrap();
        assert_eq!(all_tied.p, 1.0);
    }
}
