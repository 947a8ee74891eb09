//! Run order: rounds of every case x arm, so drift (thermal, a background job) hits every
//! arm alike; optionally shuffled within each round from a seed.

use arena_sys::rng::SplitMix64;
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

/// The order of every run. `pairs` are the (case, arm) cells; each round runs each pair once:
/// first `warmups` rounds, then `repeats` measured rounds.
pub fn plan(pairs: &[(usize, usize)], warmups: u32, repeats: u32, seed: Option<u64>) -> Vec<Slot> {
    // SplitMix64, not a library RNG: the same seed gives the same order on every machine
    // and in every version.
    let mut rng = seed.map(SplitMix64::new);
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
                rng.shuffle(&mut round);
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
