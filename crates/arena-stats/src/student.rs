//! Student's t distribution: the survival function and its inverse, for intervals whose
//! spread is estimated from a handful of runs.
//!
//! The survival function is the regularized incomplete beta function
//! (`sf(t) = I_x(df/2, 1/2) / 2` with `x = df / (df + t^2)`), evaluated by its continued
//! fraction (Lentz's method, as in Numerical Recipes' `betacf`); the quantile inverts it
//! by bisection. An infinite `df` is the normal distribution. Checked against SciPy's
//! `scipy.stats.t` in the tests below.

use crate::{normal_quantile, normal_sf};

/// `P(T > t)` for Student's t with `df` degrees of freedom (`scipy.stats.t.sf`); `df`
/// infinite is the normal. NaN for a NaN `t` or a `df` that is not positive.
pub fn t_sf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if df.is_infinite() {
        return normal_sf(t);
    }
    if t.is_infinite() {
        return if t > 0.0 { 0.0 } else { 1.0 };
    }
    let x = df / (df + t * t);
    let tail = 0.5 * inc_beta(0.5 * df, 0.5, x);
    if t > 0.0 {
        tail
    } else {
        1.0 - tail
    }
}

/// The `p` quantile of Student's t with `df` degrees of freedom (`scipy.stats.t.ppf`).
/// `-inf` at 0, `+inf` at 1, NaN outside [0, 1] or for a `df` that is not positive.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if df.is_infinite() {
        return normal_quantile(p);
    }
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    let want = 1.0 - p;
    // sf is decreasing: widen until the tail is below what is wanted, then bisect.
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while t_sf(hi, df) > want {
        lo = hi;
        hi *= 2.0;
        if hi > 1e12 {
            return f64::INFINITY;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_sf(mid, df) > want {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi.max(1.0) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Regularized incomplete beta `I_x(a, b)`.
fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front =
        libm::lgamma(a + b) - libm::lgamma(a) - libm::lgamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    // The continued fraction converges fast on the side of the mean.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=500 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_scipy() {
        // scipy.stats.t.sf(t, df) and scipy.stats.t.ppf(p, df)
        let sf = [
            (2.0, 1.0, 0.14758361765043326),
            (2.0, 3.0, 0.06966298427942152),
            (-1.5, 5.0, 0.9030481598787634),
            (4.0, 30.0, 0.0001909228180418782),
            (0.3, 2.5, 0.39367118574759863),
        ];
        for (t, df, want) in sf {
            let got = t_sf(t, df);
            assert!(
                (got - want).abs() < 1e-10,
                "sf({t}, {df}) = {got}, want {want}"
            );
        }
        let ppf = [
            (0.975, 1.0, 12.706204736174698),
            (0.975, 2.0, 4.302652729749464),
            (0.975, 4.0, 2.7764451051977934),
            (0.99, 10.0, 2.7637694581126957),
            (0.025, 7.0, -2.3646242515927844),
            (1.0 - 0.005 / 3.0, 5.0, 5.247416865946066),
        ];
        for (p, df, want) in ppf {
            let got = t_quantile(p, df);
            assert!(
                (got - want).abs() < 1e-6 * want.abs(),
                "ppf({p}, {df}) = {got}, want {want}"
            );
        }
        assert!((t_quantile(0.975, f64::INFINITY) - 1.959963984540054).abs() < 1e-9);
        assert_eq!(t_quantile(0.5, 3.0), 0.0);
        assert!(t_quantile(0.5, 0.0).is_nan() && t_sf(1.0, -1.0).is_nan());
    }
}
