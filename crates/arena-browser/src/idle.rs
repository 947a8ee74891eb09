//! The recorder's idle window (`idleStart` .. `idleStop` in `assets/recorder.js`): how alike
//! each received message is to the one before, in bytes and in the pixels it left on the
//! canvas. Only the idle stage opens it; the click loop never pays for it.

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::page::Page;

/// What the page measured over one idle window, per received message in order.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct IdleReport {
    /// Page clock at the window's start and end, ms.
    pub t0: f64,
    pub t1: f64,
    /// Seq of each message received in the window (its `ws_recv` record).
    pub seq: Vec<u64>,
    /// Byte likeness to the previous message in the window, 0..1 (`None`: the first, or
    /// a payload the page could not read).
    pub bytes: Vec<Option<f64>>,
    /// Share of the canvas's pixels unchanged by the message, 0..1; `None` when the canvas
    /// could not be read (see `pixels_why`).
    pub pixels: Option<Vec<Option<f64>>>,
    /// The watched canvas (recorder index) and its pixel size.
    pub canvas: Option<u16>,
    pub width: u32,
    pub height: u32,
    /// Whole-canvas reads made, and the page time they took, ms.
    pub checks: u64,
    pub check_ms: f64,
    /// Why pixels, or bytes, could not be compared.
    pub pixels_why: Option<String>,
    pub bytes_why: Option<String>,
}

impl Page {
    /// Opens the idle window: from now on each received message is compared with the one
    /// before, and the canvas `selector` (the largest canvas when `None`) is read after each
    /// painted frame that followed a message. Returns the page time it opened at, ms.
    pub async fn idle_start(&self, selector: Option<&str>) -> Result<f64> {
        let sel = serde_json::to_string(&selector)?;
        let js = format!(
            "window.__arenaRecorder && window.__arenaRecorder.idleStart ? window.__arenaRecorder.idleStart({sel}) : null"
        );
        let v = self.eval_json(&js).await?;
        match v.as_f64() {
            Some(t) => Ok(t),
            None => bail!(
                "the injected recorder is not in the page, so there is no idle window (an app's own recorder has none)"
            ),
        }
    }

    /// Closes the idle window and returns what it measured.
    pub async fn idle_stop(&self) -> Result<IdleReport> {
        let v = self
            .eval_json("window.__arenaRecorder ? window.__arenaRecorder.idleStop() : null")
            .await?;
        if v.is_null() {
            return Err(anyhow!("the idle window was not open"));
        }
        serde_json::from_value(v).context("reading the recorder's idle window")
    }
}
