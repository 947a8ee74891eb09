//! A typing run's own table and JSON (`run.json` `summary.typing`): keydown to socket and
//! keydown to glyph, with every key counted, and for bursts how far the glyphs trailed.
//! Never pooled with clicks: a typing run's loops are its keys alone.

use arena_report::{fmt_count, Cell, Table};
use arena_run::Run;

/// The typing table of `run`, when it typed.
pub fn typing_table(run: &Run) -> Option<Table> {
    let ty = run.meta.summary.typing.as_ref()?;
    let mut t = Table::new(crate::arm::figure_columns())
    .with_title(format!(
        "arm {}: typing ({}), {} keys, each keydown a loop closed by the first frame showing its glyph",
        run.meta.arm,
        ty.mode,
        fmt_count(ty.keys as i64)
    ));
    t.push_row(crate::arm::figure_row(
        "keydown -> socket",
        &ty.keydown_to_socket,
    ));
    let glyph: Vec<Cell> = crate::arm::figure_row("keydown -> glyph", &ty.keydown_to_glyph)
        .into_iter()
        .map(Cell::strong)
        .collect();
    t.push_row(glyph);
    t.note(format!(
        "keys: {} ({} answered by their glyph, {} unanswered, {} claimed)",
        fmt_count(ty.keys as i64),
        fmt_count(ty.answered as i64),
        fmt_count(ty.unanswered as i64),
        fmt_count(ty.claimed as i64)
    ));
    t.note(format!(
        "glyph frames: {} ({} showed more than one glyph); most keys behind at any glyph frame: {}",
        fmt_count(ty.glyph_frames as i64),
        fmt_count(ty.frames_with_several as i64),
        fmt_count(ty.max_keys_behind as i64)
    ));
    t.note("times in ms on the page clock; n = keys; quantiles type 7");
    Some(t)
}
