//! One seeded generator for everything that must replay from a seed: click positions,
//! fixture art, matrix run orders, bootstrap replicates.
//!
//! SplitMix64 is tiny and its stream is fixed by its definition, so a seed names the same
//! output on every machine and in every version; a library RNG may change its stream
//! between releases. Each derivation below (float, bound, shuffle) is part of that
//! promise: changing one renames every seed that uses it.

/// The SplitMix64 increment (the golden ratio in 64 bits). Also used to spread a seed
/// before it becomes a state, so that neighbouring seeds of one user do not start on the
/// stream of another.
pub const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 finaliser: a good 64-bit mix on its own, for hashing coordinates and
/// contents into seeds.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// SplitMix64 with the seed as its initial state.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix(self.0)
    }

    /// Uniform in [0, 1) on the 2^53 grid: every value is an exact f64.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in the open interval (0, 1): the midpoints of the 2^53 grid, so `ln` and
    /// division never see 0.
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, 1) on the 2^24 grid: every value is an exact f32.
    pub fn unit_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// An index below `n` (> 0) by plain modulo: the bias is below 2^-40 for any `n` a
    /// shuffle meets, and the plain form keeps old orders.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Fisher-Yates, from the last element down.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }

    /// Standard normal (Box-Muller, cosine branch only: one normal per two uniforms).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Gamma(shape, 1) for shape >= 1 (Marsaglia & Tsang 2000).
    pub fn gamma(&mut self, shape: f64) -> f64 {
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = 1.0 + c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = self.uniform();
            if u < 1.0 - 0.0331 * x * x * x * x || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
                return d * v;
            }
        }
    }

    /// Beta(a, b) for a, b >= 1, as a ratio of gammas.
    pub fn beta(&mut self, a: f64, b: f64) -> f64 {
        let x = self.gamma(a);
        let y = self.gamma(b);
        x / (x + y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Computed outside Rust from the definitions these replaced; a change here renames
    // every seed in every pilot file, matrix and fixture board.

    #[test]
    fn the_stream_is_splitmix64() {
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next_u64(), 0x06C4_5D18_8009_454F);
        assert_eq!(mix(1), 0x5692_161D_100B_05E5);
    }

    #[test]
    fn floats_keep_their_derivations() {
        let mut r = SplitMix64::new(7);
        assert_eq!(r.unit(), 0.3898297483912715);
        assert_eq!(r.unit(), 0.01678829452815611);
        assert_eq!(r.unit(), 0.9007606806068834);
        let mut r = SplitMix64::new(7);
        assert_eq!(r.uniform(), 0.38982974839127155);
        assert_eq!(r.uniform(), 0.016788294528156167);
        assert_eq!(r.uniform(), 0.9007606806068835);
        let mut r = SplitMix64::new(7 ^ GOLDEN);
        assert_eq!(r.unit_f32(), 15_497_116.0 / 16_777_216.0);
        assert_eq!(r.unit_f32(), 16_701_934.0 / 16_777_216.0);
        assert_eq!(r.unit_f32(), 7_315_376.0 / 16_777_216.0);
    }

    #[test]
    fn bounds_and_shuffles_keep_their_derivations() {
        let mut r = SplitMix64::new(7);
        let b: Vec<usize> = (0..5).map(|_| r.below(10)).collect();
        assert_eq!(b, [7, 4, 6, 3, 4]);
        let mut items: Vec<u32> = (0..8).collect();
        SplitMix64::new(7).shuffle(&mut items);
        assert_eq!(items, [1, 4, 5, 2, 6, 0, 3, 7]);
    }
}
