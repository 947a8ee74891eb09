#!/usr/bin/env python3
"""Reference values for arena-stats' comparison statistics, computed independently.

Run once, commit the output (reference.json) next to this script:

    pip install scipy numpy
    python3 make_reference.py > reference.json

- Mann-Whitney U: scipy.stats.mannwhitneyu(x, y, alternative='two-sided') with the
  default method 'auto' (exact for a sample of 8 or fewer without ties, else the normal
  approximation with tie and continuity corrections). Cases include ties, tiny samples,
  one tiny sample against a large one, all-tied samples and latency-like data rounded to
  0.1 ms.
- Bootstrap: a plain percentile bootstrap written with NumPy (resample each sample with
  replacement, take numpy.percentile(..., method='linear') of each, difference), with
  many replicates, so the Rust implementation (a different, O(1)-per-replicate sampler
  with its own seeded generator) is checked for the *distribution* it draws from: the
  interval ends and the replicates' standard deviation.
"""
import json
import sys

import numpy as np
import scipy
from scipy.stats import mannwhitneyu

rng = np.random.default_rng(20261129)


def lat(n, median, sigma, shift=0.0, decimals=1):
    """Latency-like sample: lognormal, rounded like a page clock reading (ties)."""
    v = shift + rng.lognormal(np.log(median), sigma, n)
    return np.round(v, decimals)


mwu_cases = {
    "tiny_3v4_no_ties": ([1.5, 3.2, 7.7], [2.0, 8.1, 9.0, 10.5]),
    "tiny_1v1": ([1.0], [2.0]),
    "tiny_1v1_tied": ([2.0], [2.0]),
    "tiny_5v5_separated": ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]),
    "tiny_8v8_interleaved": (list(range(0, 16, 2)), list(range(1, 17, 2))),
    "tiny_5v6_ties": ([1, 2, 2, 3, 5], [2, 3, 4, 4, 6, 7]),
    "small_2v9_exact": ([10.0, 30.0], [1, 2, 3, 4, 5, 6, 7, 8, 40]),
    "small_4v300_exact": (list(lat(4, 60, 0.3, decimals=6)), list(lat(300, 50, 0.3, decimals=6))),
    "small_9v9_asymptotic": (list(range(9)), list(range(3, 12))),
    "all_tied": ([5.0] * 10, [5.0] * 12),
    "heavy_ties_int": (list(rng.integers(0, 4, 40)), list(rng.integers(1, 5, 35))),
    "latency_156v156_shift": (list(lat(156, 67, 0.35)), list(lat(156, 55, 0.35))),
    "latency_156v156_same": (list(lat(156, 60, 0.35)), list(lat(156, 60, 0.35))),
    "latency_1000v800_tail": (list(lat(1000, 50, 0.3)), list(lat(800, 50, 0.6))),
    "negative_values": ([-3.0, -1.0, 0.0, 2.5, -1.0, 4.0, 9.0, 1.0, 1.0, 0.5],
                        [-2.0, 0.0, 0.0, 3.5, 6.0, 7.0, 8.0, 10.0, 11.0, 12.0]),
}

mwu = []
for name, (x, y) in mwu_cases.items():
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    r = mannwhitneyu(x, y, alternative="two-sided")
    n1, n2 = len(x), len(y)
    ties = len(set(x + y)) < n1 + n2
    method = "exact" if (min(n1, n2) <= 8 and not ties) else "asymptotic"
    mwu.append({"name": name, "x": x, "y": y, "u1": float(r.statistic),
                "p": float(r.pvalue), "method": method})


def plain_bootstrap(base, cand, q, level, resamples):
    base = np.asarray(base)
    cand = np.asarray(cand)
    bi = rng.integers(0, len(base), (resamples, len(base)))
    ci = rng.integers(0, len(cand), (resamples, len(cand)))
    d = (np.percentile(cand[ci], q * 100, axis=1, method="linear")
         - np.percentile(base[bi], q * 100, axis=1, method="linear"))
    tail = (1 - level) / 2
    lo, hi = np.percentile(d, [tail * 100, (1 - tail) * 100], method="linear")
    est = np.percentile(cand, q * 100) - np.percentile(base, q * 100)
    return float(est), float(lo), float(hi), float(d.std())


boot_cases = [
    ("p50_156_shift", lat(156, 67, 0.35), lat(156, 55, 0.35), 0.5),
    ("p90_156_shift", lat(156, 67, 0.35), lat(156, 55, 0.35), 0.9),
    ("p99_500_tail", lat(500, 50, 0.3), lat(500, 50, 0.6), 0.99),
    ("p50_7v9_tiny", lat(7, 40, 0.3), lat(9, 44, 0.3), 0.5),
    ("p90_40v35_ties", rng.integers(0, 6, 40).astype(float), rng.integers(1, 7, 35).astype(float), 0.9),
    ("p50_same", lat(300, 60, 0.3), lat(300, 60, 0.3), 0.5),
]
boot = []
for name, base, cand, q in boot_cases:
    level = 0.95
    resamples = 20000
    est, lo, hi, sd = plain_bootstrap(base, cand, q, level, resamples)
    boot.append({"name": name, "base": [float(v) for v in base],
                 "cand": [float(v) for v in cand], "q": q, "level": level,
                 "resamples": resamples, "estimate": est, "lo": lo, "hi": hi, "sd": sd})

json.dump({"generator": "make_reference.py", "scipy": scipy.__version__,
           "numpy": np.__version__, "mannwhitneyu": mwu, "bootstrap": boot},
          sys.stdout, indent=1)
sys.stdout.write("\n")
