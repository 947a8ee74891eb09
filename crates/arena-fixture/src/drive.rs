//! Driving the fixture's page through a real browser (feature `browser`): what the tests of
//! several crates need to put a known number of answered inputs on the wire.

use std::time::Duration;

use arena_browser::Page;

use crate::art::{BOARD_H, BOARD_W, TILE_PX};
use crate::ServerHandle;

/// Clicks the centres of `n` tiles spread over `#board`, one at a time; after each, waits
/// (up to `within`) until the server has answered both of its inputs (mousedown and
/// mouseup) and the page has painted the last frame sent.
pub async fn click_tiles(
    page: &Page,
    server: &ServerHandle,
    n: u32,
    within: Duration,
) -> anyhow::Result<()> {
    let rect = page.canvas_rect("#board").await?;
    let base = server.answered_inputs();
    let tile = f64::from(TILE_PX);
    for i in 0..n {
        let tx = (5 + i * 7) % u32::from(BOARD_W);
        let ty = (i * 5) % u32::from(BOARD_H);
        let (x, y) = rect.page_point((f64::from(tx) + 0.5) * tile, (f64::from(ty) + 0.5) * tile);
        page.click(x, y).await?;
        let last = server.wait_answered(base + 2 * (i + 1), within).await?;
        page.wait_until(&crate::painted_js(last), within).await?;
    }
    Ok(())
}
