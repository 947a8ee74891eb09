//! The pointer's drawn answer: a marker at the last move's point (hover) and, while the
//! left button is held, a trail of dots (drag). Both are drawn at the point the server was
//! sent, in the reply frame of that move, so a pilot watching the pixels around a move's
//! point sees them only after the server processed it (`delay_ms` delays them too).

use crate::art::{Board, BOARD_H, BOARD_W, TILE_PX};
use crate::proto::FrameWriter;

/// Side of the marker and of a trail dot, px: small beside a move's step at a person's
/// speed, so one move's dot does not reach the next move's watched point.
pub const DOT_PX: u16 = 4;
/// Dots a trail keeps (the oldest are forgotten, not erased: the board keeps what it drew).
const TRAIL_CAP: usize = 4096;
const MARKER_RGBA: [u8; 4] = [255, 255, 255, 255];
const TRAIL_RGBA: [u8; 4] = [255, 96, 32, 255];

#[derive(Debug, Default)]
pub struct Pointer {
    at: Option<(u16, u16)>,
    trail: Vec<(u16, u16)>,
}

/// The dot's rectangle around point (x, y), clipped to the board: x, y, w, h.
fn rect(x: u16, y: u16) -> (u16, u16, u16, u16) {
    let half = DOT_PX / 2;
    let (bw, bh) = (BOARD_W * TILE_PX, BOARD_H * TILE_PX);
    let x0 = x.saturating_sub(half).min(bw - DOT_PX);
    let y0 = y.saturating_sub(half).min(bh - DOT_PX);
    (x0, y0, DOT_PX, DOT_PX)
}

/// The tiles a dot at (x, y) covers (one to four).
fn tiles(x: u16, y: u16) -> Vec<(u16, u16)> {
    let (x0, y0, w, h) = rect(x, y);
    let mut out = Vec::with_capacity(4);
    for ty in [y0 / TILE_PX, (y0 + h - 1) / TILE_PX] {
        for tx in [x0 / TILE_PX, (x0 + w - 1) / TILE_PX] {
            if !out.contains(&(tx, ty)) {
                out.push((tx, ty));
            }
        }
    }
    out
}

impl Pointer {
    /// One move to (x, y) with `buttons` held (bit 0: left, a drag). Returns the tiles to
    /// repaint: under the old marker (to erase it) and under the new one.
    pub fn on_move(&mut self, x: u16, y: u16, buttons: u16) -> Vec<(u16, u16)> {
        let mut dirty = self.at.map(|(ox, oy)| tiles(ox, oy)).unwrap_or_default();
        self.at = Some((x, y));
        dirty.extend(tiles(x, y));
        if buttons & 1 == 1 {
            if self.trail.len() == TRAIL_CAP {
                self.trail.remove(0);
            }
            self.trail.push((x, y));
        }
        dirty
    }

    /// Draws the trail and the marker over the tiles this frame repainted (`redrawn`, by
    /// tile index): a tile's draw covers what was on it, so what lies on it is drawn again.
    pub fn draw(&self, w: &mut FrameWriter, redrawn: &[bool]) {
        let on_redrawn = |x: u16, y: u16| {
            tiles(x, y)
                .into_iter()
                .any(|(tx, ty)| redrawn[Board::index(tx, ty)])
        };
        for &(x, y) in &self.trail {
            if on_redrawn(x, y) {
                let (x0, y0, dw, dh) = rect(x, y);
                w.fill(x0, y0, dw, dh, TRAIL_RGBA);
            }
        }
        if let Some((x, y)) = self.at.filter(|&(x, y)| on_redrawn(x, y)) {
            let (x0, y0, dw, dh) = rect(x, y);
            w.fill(x0, y0, dw, dh, MARKER_RGBA);
        }
    }

    /// Dots in the trail.
    #[cfg(test)]
    pub fn trail_len(&self) -> usize {
        self.trail.len()
    }
}
