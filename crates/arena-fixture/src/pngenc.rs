//! Real PNG bytes for image constants, at the zlib level the `png_level` knob sets.

use png::{BitDepth, ColorType, DeflateCompression, Encoder, Filter};

/// Encodes `rgba` (w x h, 8-bit RGBA) as a PNG at zlib `level` (0 stores, 1-9 deflate).
pub fn encode_rgba(rgba: &[u8], w: u32, h: u32, level: u8) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::with_capacity(rgba.len() / 3);
    {
        let mut enc = Encoder::new(&mut out, w, h);
        enc.set_color(ColorType::Rgba);
        enc.set_depth(BitDepth::Eight);
        enc.set_deflate_compression(if level == 0 {
            DeflateCompression::NoCompression
        } else {
            DeflateCompression::Level(level.min(9))
        });
        // One fixed filter so the level is the only thing that moves size and time.
        enc.set_filter(Filter::Paeth);
        let mut writer = enc.write_header()?;
        writer.write_image_data(rgba)?;
        writer.finish()?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::art::{Board, Look, TILE_PX};

    #[test]
    fn bytes_are_a_decodable_png_and_level_matters() {
        let b = Board::generate(1, false);
        let px = b.render(2, 2, Look::Base);
        let t = TILE_PX as u32;
        let l2 = encode_rgba(&px, t, t, 2).unwrap();
        let l9 = encode_rgba(&px, t, t, 9).unwrap();
        let l0 = encode_rgba(&px, t, t, 0).unwrap();
        assert_eq!(&l2[..8], b"\x89PNG\r\n\x1a\n");
        assert!(
            l0.len() > px.len(),
            "level 0 stores: {} <= {}",
            l0.len(),
            px.len()
        );
        assert!(
            l9.len() < l2.len(),
            "level 9 {} not smaller than level 2 {}",
            l9.len(),
            l2.len()
        );
        let dec = png::Decoder::new(std::io::Cursor::new(&l2));
        let mut r = dec.read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (t, t));
        assert_eq!(&buf[..info.buffer_size()], &px[..]);
    }
}
