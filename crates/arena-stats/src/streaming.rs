use hdrhistogram::Histogram;

use crate::Summary;

/// Constant-memory summary for streams of non-negative values (durations, sizes).
///
/// Values are recorded at `1 / scale` resolution (scale 1000 keeps microseconds of a
/// millisecond figure) with three significant digits; count, mean, min and max are exact.
/// Negative values cannot be histogrammed: they are counted in `negative` and left out of
/// the quantiles, so a caller can say so rather than lose them silently.
#[derive(Debug, Clone)]
pub struct StreamingSummary {
    hist: Histogram<u64>,
    scale: f64,
    n: u64,
    sum: f64,
    min: f64,
    max: f64,
    pub negative: u64,
}

impl StreamingSummary {
    pub fn new(scale: f64) -> Self {
        StreamingSummary {
            hist: Histogram::new(3).expect("3 significant digits is a valid histogram"),
            scale,
            n: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            negative: 0,
        }
    }

    pub fn record(&mut self, value: f64) {
        if value.is_nan() {
            return;
        }
        if value < 0.0 {
            self.negative += 1;
            return;
        }
        self.n += 1;
        self.sum += value;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        let scaled = (value * self.scale).round();
        let scaled = if scaled >= u64::MAX as f64 {
            u64::MAX / 2
        } else {
            scaled as u64
        };
        // Auto-resizing histograms only fail on values past u64 range, excluded above.
        let _ = self.hist.record(scaled);
    }

    pub fn merge(&mut self, other: &StreamingSummary) {
        let _ = self.hist.add(&other.hist);
        self.n += other.n;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.negative += other.negative;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn sum(&self) -> f64 {
        self.sum
    }

    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let v = self.hist.value_at_quantile(q) as f64 / self.scale;
        // The histogram reports a bucket's upper edge; never claim past the true extremes.
        Some(v.clamp(self.min, self.max))
    }

    /// Every recorded value, ascending, at the histogram's resolution (each bucket's
    /// highest equivalent value, clamped to the exact extremes): the sample a comparison
    /// such as [`crate::noise_verdict`] needs. It holds `count()` values, so it costs
    /// the memory the summary saves; build it only to compare, and drop it after.
    pub fn samples(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.n as usize);
        for v in self.hist.iter_recorded() {
            let x = (v.value_iterated_to() as f64 / self.scale).clamp(self.min, self.max);
            out.extend(std::iter::repeat_n(x, v.count_at_value() as usize));
        }
        out
    }

    pub fn summary(&self) -> Option<Summary> {
        if self.n == 0 {
            return None;
        }
        Some(Summary {
            n: self.n,
            mean: self.sum / self.n as f64,
            min: self.min,
            p50: self.quantile(0.5)?,
            p90: self.quantile(0.9)?,
            p99: self.quantile(0.99)?,
            max: self.max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_to_exact_quantiles() {
        let mut s = StreamingSummary::new(1000.0);
        let xs: Vec<f64> = (1..=10_000).map(|i| i as f64 * 0.37).collect();
        for &x in &xs {
            s.record(x);
        }
        s.record(-1.0);
        let exact = Summary::of(&xs).unwrap();
        let got = s.summary().unwrap();
        assert_eq!(got.n, 10_000);
        assert_eq!(s.negative, 1);
        assert_eq!(got.max, exact.max);
        assert!((got.mean - exact.mean).abs() < 1e-6);
        for (a, b) in [
            (got.p50, exact.p50),
            (got.p90, exact.p90),
            (got.p99, exact.p99),
        ] {
            assert!((a - b).abs() / b < 0.002, "{a} vs {b}");
        }
    }

    #[test]
    fn samples_are_the_recorded_values_at_resolution() {
        let mut s = StreamingSummary::new(1000.0);
        for v in [1.5, 0.25, 1.5, 2.0, 0.001] {
            s.record(v);
        }
        assert_eq!(s.samples(), vec![0.001, 0.25, 1.5, 1.5, 2.0]);
        assert!(StreamingSummary::new(1.0).samples().is_empty());
    }

    #[test]
    fn empty_is_none() {
        assert!(StreamingSummary::new(1.0).summary().is_none());
    }
}
