//! Comparison statistics against reference values computed independently with SciPy and
//! NumPy (`tests/data/make_reference.py`, output committed as `tests/data/reference.json`).

use arena_stats::{
    bootstrap_quantile_diff, mann_whitney_u, quantile_sorted, resampled_quantile, BootstrapOptions,
    MwuMethod, Rng,
};
use serde_json::Value;

fn reference() -> Value {
    let text = include_str!("data/reference.json");
    serde_json::from_str(text).expect("reference.json is valid JSON")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

#[test]
fn mann_whitney_matches_scipy_including_ties_and_tiny_samples() {
    let r = reference();
    let cases = r["mannwhitneyu"].as_array().unwrap();
    assert!(cases.len() >= 10);
    let (mut exact, mut asymptotic, mut tied) = (0, 0, 0);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let x = floats(&c["x"]);
        let y = floats(&c["y"]);
        let got = mann_whitney_u(&x, &y).unwrap_or_else(|| panic!("{name}: no result"));
        let want_p = c["p"].as_f64().unwrap();
        let want_u = c["u1"].as_f64().unwrap();
        let want_method = match c["method"].as_str().unwrap() {
            "exact" => MwuMethod::Exact,
            _ => MwuMethod::Asymptotic,
        };
        assert_eq!(got.method, want_method, "{name}");
        assert_eq!(got.u1, want_u, "{name}: U1");
        let tol = 1e-9 * want_p.max(1e-300) + 1e-14;
        assert!(
            (got.p - want_p).abs() <= tol,
            "{name}: p {} vs SciPy {}",
            got.p,
            want_p
        );
        match got.method {
            MwuMethod::Exact => exact += 1,
            MwuMethod::Asymptotic => asymptotic += 1,
        }
        let mut all = x.clone();
        all.extend(&y);
        let all = sorted(all);
        if all.windows(2).any(|w| w[0] == w[1]) {
            tied += 1;
        }
    }
    assert!(
        exact >= 5 && asymptotic >= 5 && tied >= 5,
        "{exact} {asymptotic} {tied}"
    );
}

#[test]
fn bootstrap_draws_from_the_plain_bootstrap_distribution() {
    let r = reference();
    for c in r["bootstrap"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let base = sorted(floats(&c["base"]));
        let cand = sorted(floats(&c["cand"]));
        let q = c["q"].as_f64().unwrap();
        let opts = BootstrapOptions {
            resamples: 20_000,
            seed: 42,
            level: c["level"].as_f64().unwrap(),
        };
        let ci = bootstrap_quantile_diff(&base, &cand, q, &opts).unwrap();
        let sd = c["sd"].as_f64().unwrap();
        let est = c["estimate"].as_f64().unwrap();
        assert!((ci.estimate - est).abs() < 1e-9, "{name}: estimate");
        // The replicates' distribution: NumPy's interval ends must sit at the same
        // probability in ours (within Monte Carlo error; tiny samples give a lumpy
        // distribution, so ends are compared as probabilities, not values).
        let mut rng = Rng::new(9);
        let mut reps: Vec<f64> = (0..20_000)
            .map(|_| {
                resampled_quantile(&cand, q, &mut rng).unwrap()
                    - resampled_quantile(&base, q, &mut rng).unwrap()
            })
            .collect();
        reps.sort_by(f64::total_cmp);
        let tail = (1.0 - opts.level) / 2.0;
        for (got, key, p) in [(ci.lo, "lo", tail), (ci.hi, "hi", 1.0 - tail)] {
            let want = c[key].as_f64().unwrap();
            let below = quantile_sorted(&reps, p - 0.006).unwrap();
            let above = quantile_sorted(&reps, p + 0.006).unwrap();
            assert!(
                below - 1e-9 <= want && want <= above + 1e-9,
                "{name}: NumPy {key} {want} outside our [{below}, {above}] (ours {got})"
            );
            assert!(
                below - 1e-9 <= got && got <= above + 1e-9,
                "{name}: {key} {got} outside [{below}, {above}]"
            );
        }
        let mean = reps.iter().sum::<f64>() / reps.len() as f64;
        let got_sd =
            (reps.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / reps.len() as f64).sqrt();
        assert!(
            (got_sd - sd).abs() <= 0.05 * sd,
            "{name}: replicate sd {got_sd} vs NumPy {sd}"
        );
    }
}

#[test]
fn resampled_quantile_of_a_constant_is_the_constant() {
    let x = vec![4.0; 50];
    let mut rng = Rng::new(1);
    for _ in 0..100 {
        assert_eq!(resampled_quantile(&x, 0.99, &mut rng), Some(4.0));
    }
    assert_eq!(quantile_sorted(&x, 0.5), Some(4.0));
}
