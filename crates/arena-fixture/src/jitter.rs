//! The `jitter_ms` knob's draws: what each reply waits on top of `delay_ms`.
//!
//! Both ends of a move's figure sit on the browser's frame clock, and a fixed delay moves a
//! reply by the same phase of that clock every time, so a figure jumps by whole frames as
//! the delay grows. A uniform hold of a frame or more spreads the replies over every phase
//! (dither), and then a mean over many replies moves by exactly the delay added. The draws
//! come from `seed` and the connection, so two runs that differ only in `delay_ms` hold
//! their replies alike.

use std::time::Duration;

use arena_sys::rng::{mix, SplitMix64};

/// One connection's stream of jitter holds.
#[derive(Debug, Clone)]
pub(crate) struct Jitter {
    max_ms: u32,
    rng: SplitMix64,
}

impl Jitter {
    /// The draws of connection `conn` under `seed`, each uniform in 0..`max_ms` ms.
    pub(crate) fn new(max_ms: u32, seed: u64, conn: u64) -> Self {
        Jitter {
            max_ms,
            rng: SplitMix64::new(mix(seed) ^ mix(conn.wrapping_add(1))),
        }
    }

    /// The next reply's hold (zero, and no draw, when the knob is off).
    pub(crate) fn next_hold(&mut self) -> Duration {
        if self.max_ms == 0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64(self.rng.unit() * f64::from(self.max_ms) / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_holds_nothing() {
        let mut j = Jitter::new(0, 1, 1);
        assert!((0..100).all(|_| j.next_hold().is_zero()));
    }

    #[test]
    fn holds_spread_uniformly_below_the_knob_and_replay_from_the_seed() {
        let draws = |seed, conn| {
            let mut j = Jitter::new(20, seed, conn);
            (0..4000).map(|_| j.next_hold()).collect::<Vec<_>>()
        };
        let a = draws(7, 1);
        assert_eq!(a, draws(7, 1), "a seed replays");
        assert_ne!(a, draws(8, 1), "another seed, other holds");
        assert_ne!(a, draws(7, 2), "another connection, other holds");
        let ms: Vec<f64> = a.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        assert!(ms.iter().all(|&m| (0.0..20.0).contains(&m)));
        // Every 2 ms band of the 20 gets its share (400 expected, sd 19): the dither
        // covers every phase of a frame, not a few.
        for band in 0..10 {
            let lo = f64::from(band) * 2.0;
            let n = ms.iter().filter(|&&m| m >= lo && m < lo + 2.0).count();
            assert!((300..500).contains(&n), "band {lo} ms: {n}");
        }
    }
}
