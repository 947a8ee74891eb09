//! The firing phase's line-of-sight computation: real CPU over the board's heightmap, the
//! cost a firing click puts in front of its repaint (set by the `los_work` knob).

use arena_sys::rng::mix;

use crate::art::{Board, BOARD_H, BOARD_W};

/// The shooting unit's tile.
pub const SHOOTER: (u16, u16) = (2, BOARD_H / 2);
const EYE: f32 = 1.6;
const STEP: f32 = 0.05;

/// Whether the straight line from the shooter's eye to (tx, ty) (tile units, at height
/// `target_h` above ground) clears the terrain.
pub fn ray_clear(board: &Board, eye: f32, tx: f32, ty: f32, target_h: f32) -> bool {
    let sx = SHOOTER.0 as f32 + 0.5;
    let sy = SHOOTER.1 as f32 + 0.5;
    let h0 = board.height_at(sx, sy) + eye;
    let h1 = board.height_at(tx, ty) + target_h;
    let dx = tx - sx;
    let dy = ty - sy;
    let len = (dx * dx + dy * dy).sqrt();
    let steps = (len / STEP) as u32;
    for i in 1..steps {
        let f = i as f32 / steps as f32;
        let line = h0 + (h1 - h0) * f;
        if board.height_at(sx + dx * f, sy + dy * f) > line {
            return false;
        }
    }
    true
}

/// Fraction (0-1) of sample points of tile (x, y) visible from the shooter.
pub fn tile_visibility(board: &Board, x: u16, y: u16) -> f32 {
    let mut seen = 0;
    let pts = [
        (0.25, 0.25),
        (0.75, 0.25),
        (0.5, 0.5),
        (0.25, 0.75),
        (0.75, 0.75),
    ];
    for (ox, oy) in pts {
        if ray_clear(board, EYE, x as f32 + ox, y as f32 + oy, 0.5) {
            seen += 1;
        }
    }
    seen as f32 / pts.len() as f32
}

/// The to-hit sweep of one firing click at (x, y): `rays` rays from the shooter to jittered
/// points across the whole board, as a unit's fire control checks every hex in range.
/// Returns how many were clear. Deterministic in its inputs.
pub fn sweep(board: &Board, x: u16, y: u16, rays: u32) -> u32 {
    let mut clear = 0;
    let salt = mix(((x as u64) << 16) ^ y as u64 ^ board.seed);
    let tiles = BOARD_W as u64 * BOARD_H as u64;
    for i in 0..rays as u64 {
        let h = mix(salt ^ i);
        let t = h % tiles;
        let jx = ((h >> 20) & 0xFF) as f32 / 256.0;
        let jy = ((h >> 28) & 0xFF) as f32 / 256.0;
        let tx = (t % BOARD_W as u64) as f32 + jx;
        let ty = (t / BOARD_W as u64) as f32 + jy;
        if ray_clear(board, EYE + (i % 4) as f32 * 0.1, tx, ty, 0.4) {
            clear += 1;
        }
    }
    clear
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_is_deterministic_and_scales() {
        let b = Board::generate(1, false);
        let a = sweep(&b, 20, 3, 500);
        assert_eq!(a, sweep(&b, 20, 3, 500));
        assert!(a > 0 && a <= 500);
        assert!(sweep(&b, 20, 3, 0) == 0);
        let v = tile_visibility(&b, SHOOTER.0 + 1, SHOOTER.1);
        assert!((0.0..=1.0).contains(&v));
    }
}
