//! Deterministic board art: terrain tiles generated from a seed, and the composites the
//! session paints over them (arc overlay, fire marker, cursor chat box).

use arena_sys::rng::{mix, SplitMix64, GOLDEN};

/// Board width in tiles.
pub const BOARD_W: u16 = 24;
/// Board height in tiles.
pub const BOARD_H: u16 = 16;
/// Tile edge in pixels.
pub const TILE_PX: u16 = 40;

const TP: usize = TILE_PX as usize;
/// Centre of a tile in pixel coordinates.
const MID: f32 = (TP as f32 - 1.0) / 2.0;
/// Share of pixels, percent, that carry a speckle.
const SPECKLE_PCT: u64 = 18;

/// Content hash of an RGBA buffer: the constant cache keys images by what they look like,
/// as the streamed toolkit does, so the same pixels are one constant wherever they are drawn.
pub fn content_hash(rgba: &[u8]) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325 ^ rgba.len() as u64;
    let mut chunks = rgba.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w))
            .wrapping_mul(0x100_0000_01B3)
            .rotate_left(29);
    }
    for &b in chunks.remainder() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01B3);
    }
    mix(h)
}

/// Terrain of one tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terrain {
    Grass,
    Forest,
    Water,
    Rock,
    Sand,
    Road,
}

impl Terrain {
    fn base_rgb(self) -> [f32; 3] {
        match self {
            Terrain::Grass => [92.0, 140.0, 64.0],
            Terrain::Forest => [48.0, 96.0, 44.0],
            Terrain::Water => [52.0, 96.0, 160.0],
            Terrain::Rock => [128.0, 120.0, 112.0],
            Terrain::Sand => [196.0, 176.0, 120.0],
            Terrain::Road => [150.0, 132.0, 100.0],
        }
    }
    /// Height this terrain adds on top of the elevation (blocks line of sight).
    pub fn cover(self) -> f32 {
        match self {
            Terrain::Forest => 1.2,
            Terrain::Rock => 0.8,
            _ => 0.0,
        }
    }
}

/// What a tile currently looks like; together with its position this picks its pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Look {
    Base,
    /// Arc overlay: `tint` 0 clear, 1 partial, 2 blocked; `stroke` 0-3 orientation.
    Arc {
        tint: u8,
        stroke: u8,
    },
    /// The tile a shot was confirmed at.
    Marker,
    /// One tile of the chat box strip; `caret` when the blinking caret is drawn in it.
    Chat {
        caret: bool,
    },
}

/// The generated board: terrain, elevation and the base art of every tile.
#[derive(Debug)]
pub struct Board {
    pub seed: u64,
    pub shadows: bool,
    pub terrain: Vec<Terrain>,
    /// Elevation per tile, 0-3.
    pub elevation: Vec<f32>,
    base: Vec<Vec<u8>>,
}

fn smooth_noise(seed: u64, x: f32, y: f32, cell: f32) -> f32 {
    let gx = x / cell;
    let gy = y / cell;
    let x0 = gx.floor();
    let y0 = gy.floor();
    let fx = gx - x0;
    let fy = gy - y0;
    let corner = |cx: f32, cy: f32| {
        let h = mix(seed ^ ((cx as i64 as u64) << 32) ^ (cy as i64 as u64 & 0xFFFF_FFFF));
        (h >> 40) as f32 / (1u64 << 24) as f32
    };
    let sx = fx * fx * (3.0 - 2.0 * fx);
    let sy = fy * fy * (3.0 - 2.0 * fy);
    let a = corner(x0, y0) + (corner(x0 + 1.0, y0) - corner(x0, y0)) * sx;
    let b = corner(x0, y0 + 1.0) + (corner(x0 + 1.0, y0 + 1.0) - corner(x0, y0 + 1.0)) * sx;
    a + (b - a) * sy
}

impl Board {
    /// Generates the board for `seed`. Pure function of its arguments.
    pub fn generate(seed: u64, shadows: bool) -> Board {
        let w = BOARD_W as usize;
        let h = BOARD_H as usize;
        let mut terrain = Vec::with_capacity(w * h);
        let mut elevation = Vec::with_capacity(w * h);
        for ty in 0..h {
            for tx in 0..w {
                let e = smooth_noise(seed ^ 0xE1E7, tx as f32, ty as f32, 5.0);
                let m = smooth_noise(seed ^ 0x0015_7E11, tx as f32, ty as f32, 3.0);
                let t = if e < 0.22 {
                    Terrain::Water
                } else if e < 0.3 {
                    Terrain::Sand
                } else if e > 0.78 {
                    Terrain::Rock
                } else if m > 0.62 {
                    Terrain::Forest
                } else if ty == h / 2 + 2 || tx == w / 3 {
                    Terrain::Road
                } else {
                    Terrain::Grass
                };
                terrain.push(t);
                elevation.push(if t == Terrain::Water {
                    0.0
                } else {
                    (e * 4.0).floor().min(3.0)
                });
            }
        }
        let mut board = Board {
            seed,
            shadows,
            terrain,
            elevation,
            base: Vec::new(),
        };
        board.base = (0..w * h)
            .map(|i| board.render_base((i % w) as u16, (i / w) as u16))
            .collect();
        board
    }

    pub fn index(x: u16, y: u16) -> usize {
        y as usize * BOARD_W as usize + x as usize
    }

    pub fn terrain_at(&self, x: u16, y: u16) -> Terrain {
        self.terrain[Board::index(x, y)]
    }

    /// Height (elevation + cover) at a board point in tile units, bilinear between tiles.
    pub fn height_at(&self, fx: f32, fy: f32) -> f32 {
        let x = (fx - 0.5).clamp(0.0, BOARD_W as f32 - 1.0);
        let y = (fy - 0.5).clamp(0.0, BOARD_H as f32 - 1.0);
        let x0 = x.floor() as usize;
        let y0 = y.floor() as usize;
        let x1 = (x0 + 1).min(BOARD_W as usize - 1);
        let y1 = (y0 + 1).min(BOARD_H as usize - 1);
        let ax = x - x0 as f32;
        let ay = y - y0 as f32;
        let hgt = |tx: usize, ty: usize| {
            let i = ty * BOARD_W as usize + tx;
            self.elevation[i] + self.terrain[i].cover()
        };
        let a = hgt(x0, y0) + (hgt(x1, y0) - hgt(x0, y0)) * ax;
        let b = hgt(x0, y1) + (hgt(x1, y1) - hgt(x0, y1)) * ax;
        a + (b - a) * ay
    }

    fn render_base(&self, tx: u16, ty: u16) -> Vec<u8> {
        let t = self.terrain_at(tx, ty);
        let elev = self.elevation[Board::index(tx, ty)];
        let tile_seed = mix(self.seed ^ ((tx as u64) << 16) ^ ty as u64);
        // SplitMix64, not a platform RNG: the art must be identical on every machine for
        // a seed.
        let mut rng = SplitMix64::new(tile_seed ^ GOLDEN);
        let base = t.base_rgb();
        let shade = 0.85 + 0.08 * elev;
        // Features are drawn as discs: trees, boulders, ripples' crests.
        let features: Vec<(f32, f32, f32)> = (0..match t {
            Terrain::Forest => 7,
            Terrain::Rock => 4,
            Terrain::Grass => 2,
            _ => 0,
        })
            .map(|_| {
                (
                    rng.unit_f32() * TP as f32,
                    rng.unit_f32() * TP as f32,
                    4.0 + rng.unit_f32() * 7.0,
                )
            })
            .collect();
        let mut out = vec![0u8; TP * TP * 4];
        for py in 0..TP {
            for px in 0..TP {
                let gx = (tx as usize * TP + px) as f32;
                let gy = (ty as usize * TP + py) as f32;
                // Flat colour patches plus sparse speckles (grass blades, gravel): textured
                // like real map art, so a tile PNG is a KB or two rather than a flat colour
                // that compresses to nothing, while staying the flat art PNG is good at.
                let coarse = smooth_noise(self.seed ^ 0xC0A5, gx, gy, 7.0) - 0.5;
                let speck = mix(tile_seed ^ ((py * TP + px) as u64));
                let fine = if speck % 100 < SPECKLE_PCT {
                    ((speck >> 32) % 5) as f32 * 6.0 - 12.0
                } else {
                    0.0
                };
                let mut k = shade * (1.0 + 0.06 * (coarse * 5.0).round());
                let mut rgb = base;
                match t {
                    Terrain::Water => {
                        let wave = ((gx * 0.35 + gy * 0.12).sin() * 2.0).round() * 0.04;
                        k += wave;
                    }
                    Terrain::Road => {
                        let rut = ((px as f32 - TP as f32 / 2.0).abs() < 3.0) as u8 as f32;
                        k -= 0.12 * rut;
                    }
                    _ => {}
                }
                for &(fx, fy, r) in &features {
                    let d = ((px as f32 - fx).powi(2) + (py as f32 - fy).powi(2)).sqrt();
                    if d < r {
                        let dark = if t == Terrain::Rock { 1.15 } else { 0.7 };
                        k *= if d < r * 0.6 {
                            dark
                        } else {
                            (dark + 1.0) / 2.0
                        };
                    }
                }
                if self.shadows {
                    // Soft light from the top-left: a smooth gradient across the tile and a
                    // soft halo around every feature, the kind of detail PNG compresses badly.
                    let g = (px + py) as f32 / (2.0 * TP as f32);
                    k *= 1.08 - 0.3 * g;
                    for &(fx, fy, r) in &features {
                        let d = ((px as f32 - fx - 3.0).powi(2) + (py as f32 - fy - 3.0).powi(2))
                            .sqrt();
                        if d >= r && d < r * 2.2 {
                            k *= 0.78 + 0.22 * ((d - r) / (1.2 * r));
                        }
                    }
                }
                for c in rgb.iter_mut() {
                    *c = *c * k + fine;
                }
                let o = (py * TP + px) * 4;
                out[o] = rgb[0].clamp(0.0, 255.0) as u8;
                out[o + 1] = rgb[1].clamp(0.0, 255.0) as u8;
                out[o + 2] = rgb[2].clamp(0.0, 255.0) as u8;
                out[o + 3] = 255;
            }
        }
        // Tile grid line, as on a hex/tile map.
        for i in 0..TP {
            for &(px, py) in &[(i, 0usize), (0usize, i)] {
                let o = (py * TP + px) * 4;
                for c in 0..3 {
                    out[o + c] = (out[o + c] as u16 * 3 / 4) as u8;
                }
            }
        }
        out
    }

    /// The RGBA pixels (TILE_PX x TILE_PX) of tile (x, y) with `look`.
    pub fn render(&self, x: u16, y: u16, look: Look) -> Vec<u8> {
        let mut px = self.base[Board::index(x, y)].clone();
        match look {
            Look::Base => {}
            Look::Arc { tint, stroke } => {
                let c = match tint {
                    0 => [80.0, 220.0, 120.0],
                    1 => [240.0, 190.0, 60.0],
                    _ => [230.0, 70.0, 60.0],
                };
                for py in 0..TP {
                    for qx in 0..TP {
                        let o = (py * TP + qx) * 4;
                        let (u, v) = (qx as f32 - MID, py as f32 - MID);
                        // Distance from the arc's centre line through the tile.
                        let d = match stroke {
                            0 => v.abs(),
                            1 => u.abs(),
                            2 => (u - v).abs() * std::f32::consts::FRAC_1_SQRT_2,
                            _ => (u + v).abs() * std::f32::consts::FRAC_1_SQRT_2,
                        };
                        let a = if d < 4.0 { 0.85 } else { 0.55 };
                        for ch in 0..3 {
                            px[o + ch] = (px[o + ch] as f32 * (1.0 - a) + c[ch] * a) as u8;
                        }
                    }
                }
            }
            Look::Marker => {
                for py in 0..TP {
                    for qx in 0..TP {
                        let (u, v) = (qx as f32 - MID, py as f32 - MID);
                        let r = (u * u + v * v).sqrt();
                        if (r - 14.0).abs() < 2.0
                            || (u.abs() < 1.5 && r < 20.0)
                            || (v.abs() < 1.5 && r < 20.0)
                        {
                            let o = (py * TP + qx) * 4;
                            px[o..o + 3].copy_from_slice(&[250, 40, 40]);
                        }
                    }
                }
            }
            Look::Chat { caret } => {
                for py in TP / 6..TP * 5 / 6 {
                    for qx in 0..TP {
                        let o = (py * TP + qx) * 4;
                        for ch in 0..3 {
                            px[o + ch] = (px[o + ch] as u16 * 2 / 5) as u8;
                        }
                        if caret
                            && (TP / 2 - 1..TP / 2 + 2).contains(&qx)
                            && (TP / 4..TP * 3 / 4).contains(&py)
                        {
                            px[o..o + 3].copy_from_slice(&[235, 235, 235]);
                        }
                    }
                }
            }
        }
        px
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn art_is_deterministic_and_seeded() {
        let a = Board::generate(7, false);
        let b = Board::generate(7, false);
        let c = Board::generate(8, false);
        assert_eq!(a.render(3, 4, Look::Base), b.render(3, 4, Look::Base));
        assert_ne!(a.render(3, 4, Look::Base), c.render(3, 4, Look::Base));
        // Every tile is its own image: a first paint really ships the whole board.
        let mut hashes: Vec<u64> = (0..BOARD_H)
            .flat_map(|y| (0..BOARD_W).map(move |x| (x, y)))
            .map(|(x, y)| content_hash(&a.render(x, y, Look::Base)))
            .collect();
        hashes.sort_unstable();
        hashes.dedup();
        assert_eq!(hashes.len(), BOARD_W as usize * BOARD_H as usize);
    }

    #[test]
    fn looks_differ_from_base() {
        let b = Board::generate(1, false);
        let base = b.render(5, 5, Look::Base);
        for look in [
            Look::Arc { tint: 0, stroke: 0 },
            Look::Arc { tint: 2, stroke: 3 },
            Look::Marker,
            Look::Chat { caret: true },
        ] {
            assert_ne!(b.render(5, 5, look), base, "{look:?}");
        }
        assert_ne!(
            b.render(5, 5, Look::Chat { caret: true }),
            b.render(5, 5, Look::Chat { caret: false })
        );
    }
}
