//! Run order: rounds of every case x arm, so drift (thermal, a background job) hits every
//! arm alike; optionally shuffled within each round from a seed.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Slot {
    pub case: usize,
    pub arm: usize,
    /// Repeat number within its kind (warm-ups count separately).
    pub repeat: u32,
    /// A warm-up run: executed, kept in the run folder, never in a figure.
    pub warmup: bool,
}

/// SplitMix64: a tiny, well-mixed generator; the same seed gives the same order on every
/// machine, which a crate-provided RNG would not promise across versions.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The order of every run. `pairs` are the (case, arm) cells; each round runs each pair once:
/// first `warmups` rounds, then `repeats` measured rounds.
pub fn plan(pairs: &[(usize, usize)], warmups: u32, repeats: u32, seed: Option<u64>) -> Vec<Slot> {
    let mut rng = seed.map(SplitMix64);
    let mut out = Vec::with_capacity(pairs.len() * (warmups + repeats) as usize);
    for (warmup, rounds) in [(true, warmups), (false, repeats)] {
        for r in 0..rounds {
            let mut round: Vec<Slot> = pairs
                .iter()
                .map(|&(case, arm)| Slot {
                    case,
                    arm,
                    repeat: r,
                    warmup,
                })
                .collect();
            if let Some(rng) = rng.as_mut() {
                for i in (1..round.len()).rev() {
                    let j = rng.below(i + 1);
                    round.swap(i, j);
                }
            }
            out.extend(round);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_interleaves_arms() {
        let pairs = [(0, 0), (0, 1), (0, 2)];
        let p = plan(&pairs, 0, 2, None);
        let arms: Vec<usize> = p.iter().map(|s| s.arm).collect();
        assert_eq!(arms, vec![0, 1, 2, 0, 1, 2]);
        assert!(p.iter().all(|s| !s.warmup));
    }

    #[test]
    fn seeded_shuffle_is_stable_and_keeps_rounds() {
        let pairs: Vec<(usize, usize)> = (0..2).flat_map(|c| (0..4).map(move |a| (c, a))).collect();
        let a = plan(&pairs, 1, 3, Some(7));
        let b = plan(&pairs, 1, 3, Some(7));
        let c = plan(&pairs, 1, 3, Some(8));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a[..8].iter().all(|s| s.warmup));
        // Every round still holds every cell once.
        for round in a.chunks(8) {
            let mut cells: Vec<(usize, usize)> = round.iter().map(|s| (s.case, s.arm)).collect();
            cells.sort();
            assert_eq!(cells, pairs);
        }
        assert_ne!(
            a[8..16].iter().map(|s| (s.case, s.arm)).collect::<Vec<_>>(),
            pairs
        );
    }
}
