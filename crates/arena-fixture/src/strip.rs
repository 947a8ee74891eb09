//! The text strip: keys typed into a line on the HUD canvas's right half, so typing can be
//! measured as loops (docs/fixture-protocol.md, "The text strip"). The glyph is drawn by
//! the client only from the server's strip op, so it appears after the server processed
//! the key and every reply delay (`delay_ms`) delays it.

use crate::proto::FrameWriter;

/// Glyph cells in the strip; the 41st key starts a new line at cell 0.
pub const STRIP_CELLS: usize = 40;

/// The strip's text and caret, and whether the client's copy is stale.
#[derive(Debug)]
pub struct TextStrip {
    text: Vec<u8>,
    caret: bool,
    dirty: bool,
}

impl Default for TextStrip {
    fn default() -> Self {
        // Dirty at first so the board's first frame paints the empty strip.
        TextStrip {
            text: Vec::new(),
            caret: false,
            dirty: true,
        }
    }
}

/// The glyph a keydown's `keyCode` types: letters as capitals (a keyCode has no case),
/// digits as themselves, any other key `?`; keys that draw nothing type nothing.
pub fn glyph_of(code: u16) -> Option<u8> {
    match code {
        48..=57 | 65..=90 => Some(code as u8),
        // Space, Enter, Tab, Escape, Backspace, arrows and the other keys that move or
        // edit rather than type: no glyph.
        8 | 9 | 13 | 16..=18 | 27 | 32..=40 | 46 => None,
        _ => Some(b'?'),
    }
}

impl TextStrip {
    /// Types the glyph of `code`, if it has one; true when the strip changed.
    pub fn key(&mut self, code: u16) -> bool {
        let Some(g) = glyph_of(code) else {
            return false;
        };
        if self.text.len() == STRIP_CELLS {
            self.text.clear();
        }
        self.text.push(g);
        self.dirty = true;
        true
    }

    /// The caret after the last glyph is shown or hidden (the blink).
    pub fn set_caret(&mut self, on: bool) {
        if self.caret != on {
            self.caret = on;
            self.dirty = true;
        }
    }

    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Writes the strip op into `w` when the client's copy is stale.
    pub fn write(&mut self, w: &mut FrameWriter) {
        if self.dirty {
            w.strip(&self.text, self.caret);
            self.dirty = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_type_glyphs_and_wrap() {
        let mut s = TextStrip::default();
        let mut w = FrameWriter::new(1);
        s.write(&mut w);
        assert!(!s.is_dirty());
        assert!(!s.key(32), "space types nothing");
        assert!(!s.is_dirty());
        for _ in 0..STRIP_CELLS {
            assert!(s.key(65));
        }
        assert_eq!(s.text.len(), STRIP_CELLS);
        assert!(s.key(49));
        assert_eq!(s.text, b"1");
        assert_eq!(glyph_of(188), Some(b'?'));
    }
}
