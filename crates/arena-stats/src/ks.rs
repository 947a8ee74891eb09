//! The one-sample Kolmogorov-Smirnov test against the uniform distribution on [0, 1).
//!
//! The pilot asks it whether its inputs went out at a person's timing: each input's phase on
//! the page's frame clock should be uniform, and inputs that all leave at one point of the
//! frame are rounded by the frame the same way. The p-value is the asymptotic Kolmogorov
//! distribution of `sqrt(n) * D`, SciPy's `kstest(x, "uniform", method="asymp")`
//! (`scipy.stats.kstwobign.sf`), good to a few parts in a thousand from n = 50 and
//! conservative below it.

/// The statistic and its p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KsTest {
    pub n: usize,
    /// The largest distance between the sample's CDF and the uniform CDF.
    pub d: f64,
    pub p: f64,
}

/// Tests `sample` (values in [0, 1]; others are clamped into it) against the uniform
/// distribution. `None` for an empty sample or one with a non-finite value.
pub fn ks_uniform(sample: &[f64]) -> Option<KsTest> {
    if sample.is_empty() || sample.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut x: Vec<f64> = sample.iter().map(|v| v.clamp(0.0, 1.0)).collect();
    x.sort_by(f64::total_cmp);
    let n = x.len() as f64;
    let d = x
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let above = (i as f64 + 1.0) / n - v;
            let below = v - i as f64 / n;
            above.max(below)
        })
        .fold(0.0, f64::max);
    Some(KsTest {
        n: x.len(),
        d,
        p: kolmogorov_sf(n.sqrt() * d),
    })
}

/// P(K > t) for the Kolmogorov distribution: `2 * sum_{j>=1} (-1)^(j-1) exp(-2 j^2 t^2)`
/// for large t, and Jacobi's other form, `1 - sqrt(2 pi)/t * sum_{j>=1} exp(-(2j-1)^2
/// pi^2 / (8 t^2))`, for small t, where the first converges slowly.
pub fn kolmogorov_sf(t: f64) -> f64 {
    if t <= 0.0 {
        return 1.0;
    }
    if t < 1.0 {
        let w = -std::f64::consts::PI.powi(2) / (8.0 * t * t);
        let s: f64 = (1..=20)
            .map(|j| {
                let k = (2 * j - 1) as f64;
                (k * k * w).exp()
            })
            .sum();
        return (1.0 - (2.0 * std::f64::consts::PI).sqrt() / t * s).clamp(0.0, 1.0);
    }
    let s: f64 = (1..=100)
        .map(|j| {
            let j = j as f64;
            let sign = if j as u64 % 2 == 1 { 1.0 } else { -1.0 };
            sign * (-2.0 * j * j * t * t).exp()
        })
        .sum();
    (2.0 * s).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `scipy.stats.kstwobign.sf(t)` (SciPy 1.x), for t across both branches.
    #[test]
    fn the_tail_matches_scipys_kstwobign() {
        for (t, want) in [
            (0.3, 0.999_990_694_198_665_5),
            (0.5, 0.963_945_243_664_875_1),
            (0.8, 0.544_142_411_574_198_1),
            (1.0, 0.269_999_671_677_354_56),
            (1.2, 0.112_249_666_670_724_97),
            (1.36, 0.049_485_876_755_377_876),
            (1.63, 0.009_846_364_888_486_529),
            (2.0, 0.000_670_925_255_779_695_3),
        ] {
            let got = kolmogorov_sf(t);
            assert!((got - want).abs() < 1e-9, "t={t}: {got} vs {want}");
        }
    }

    /// `scipy.stats.kstest(x, "uniform", method="asymp")` on the same samples.
    #[test]
    fn the_test_matches_scipys_kstest() {
        let even: Vec<f64> = (0..100).map(|i| (i as f64 + 0.5) / 100.0).collect();
        let t = ks_uniform(&even).unwrap();
        assert!((t.d - 0.005).abs() < 1e-12, "{t:?}");
        assert!((t.p - 1.0).abs() < 1e-9, "{t:?}");
        // Every value in the first fifth of the interval: an input stuck at one phase.
        let stuck: Vec<f64> = (0..50).map(|i| i as f64 / 250.0).collect();
        let t = ks_uniform(&stuck).unwrap();
        assert!((t.d - 0.804).abs() < 1e-12, "{t:?}");
        assert!(
            (t.p / 1.688_650_660_684_856_4e-28 - 1.0).abs() < 1e-6,
            "{t:?}"
        );
        let mixed = [0.05, 0.11, 0.13, 0.2, 0.21, 0.35, 0.38, 0.41, 0.5, 0.93];
        let t = ks_uniform(&mixed).unwrap();
        assert!((t.d - 0.4).abs() < 1e-12, "{t:?}");
        assert!((t.p - 0.081_518_886_412_209_64).abs() < 1e-9, "{t:?}");
    }

    #[test]
    fn nothing_to_test_is_none() {
        assert!(ks_uniform(&[]).is_none());
        assert!(ks_uniform(&[0.5, f64::NAN]).is_none());
    }
}
