//! The person's browser a page is shown in: its device pixel ratio, its viewport and how
//! slow its CPU is, set on the tab before it navigates (CDP `Emulation`), so the page's
//! first script already sees them.

use std::time::Duration;

use anyhow::Result;
use chromiumoxide::cdp::browser_protocol::emulation::{
    SetCpuThrottlingRateParams, SetDeviceMetricsOverrideParams,
};
use serde::{Deserialize, Serialize};

use crate::cdp_call::cdp;

/// The bounds every setting is checked against (one place, for the pilot file's reader
/// and for the tab).
pub const DPR_MAX: f64 = 8.0;
pub const VIEWPORT_PX: std::ops::RangeInclusive<u32> = 100..=8192;
pub const CPU_THROTTLE: std::ops::RangeInclusive<f64> = 1.0..=20.0;

/// What to emulate; `None` leaves the browser's own value.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Emulation {
    /// `window.devicePixelRatio`, in (0, 8].
    pub dpr: Option<f64>,
    /// The viewport in CSS px, `(width, height)`, each 100..=8192.
    pub viewport: Option<(u32, u32)>,
    /// CPU slowdown factor, 1..=20 (`Emulation.setCPUThrottlingRate`; 4 is a slow laptop).
    pub cpu_throttle: Option<f64>,
}

impl Emulation {
    /// Nothing to set.
    pub fn is_empty(&self) -> bool {
        self.dpr.is_none() && self.viewport.is_none() && self.cpu_throttle.is_none()
    }

    /// The first setting out of range, as `(key, why)`; the key is the pilot file's.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        if let Some(d) = self.dpr {
            if !(d.is_finite() && d > 0.0 && d <= DPR_MAX) {
                return Some(("dpr", format!("must be within (0, {DPR_MAX}], got {d}")));
            }
        }
        if let Some((w, h)) = self.viewport {
            if !VIEWPORT_PX.contains(&w) || !VIEWPORT_PX.contains(&h) {
                return Some((
                    "viewport",
                    format!(
                        "each side must be within {}..={} CSS px, got {w}x{h}",
                        VIEWPORT_PX.start(),
                        VIEWPORT_PX.end()
                    ),
                ));
            }
        }
        if let Some(r) = self.cpu_throttle {
            if !(r.is_finite() && CPU_THROTTLE.contains(&r)) {
                return Some((
                    "cpu_throttle",
                    format!(
                        "must be within {}..={} (1: no slowdown), got {r}",
                        CPU_THROTTLE.start(),
                        CPU_THROTTLE.end()
                    ),
                ));
            }
        }
        None
    }

    /// Sets it on the tab. Chromium keeps both overrides for the tab's life, across
    /// navigations, so once before the first is enough.
    pub(crate) async fn apply(&self, page: &chromiumoxide::Page, limit: Duration) -> Result<()> {
        if let Some((key, why)) = self.problem() {
            anyhow::bail!("emulation `{key}`: {why}");
        }
        if self.dpr.is_some() || self.viewport.is_some() {
            // 0 leaves the browser's own value (CDP's convention for both fields).
            let (w, h) = self.viewport.unwrap_or((0, 0));
            let params = SetDeviceMetricsOverrideParams::new(w, h, self.dpr.unwrap_or(0.0), false);
            cdp(
                limit,
                "Emulation.setDeviceMetricsOverride",
                page.execute(params),
            )
            .await?;
        }
        if let Some(rate) = self.cpu_throttle {
            cdp(
                limit,
                "Emulation.setCPUThrottlingRate",
                page.execute(SetCpuThrottlingRateParams::new(rate)),
            )
            .await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bound_is_named_by_its_key() {
        let ok = Emulation {
            dpr: Some(8.0),
            viewport: Some((100, 8192)),
            cpu_throttle: Some(20.0),
        };
        assert_eq!(ok.problem(), None);
        assert!(Emulation::default().is_empty());
        let key = |e: Emulation| e.problem().map(|(k, _)| k);
        for d in [0.0, -1.0, 8.01, f64::NAN, f64::INFINITY] {
            assert_eq!(key(Emulation { dpr: Some(d), ..ok }), Some("dpr"), "{d}");
        }
        for v in [(99, 800), (800, 8193), (0, 0)] {
            let e = Emulation {
                viewport: Some(v),
                ..ok
            };
            assert_eq!(key(e), Some("viewport"), "{v:?}");
        }
        for r in [0.5, 20.5, f64::NAN] {
            let e = Emulation {
                cpu_throttle: Some(r),
                ..ok
            };
            assert_eq!(key(e), Some("cpu_throttle"), "{r}");
        }
        let (_, why) = Emulation {
            viewport: Some((50, 600)),
            ..Emulation::default()
        }
        .problem()
        .unwrap();
        assert_eq!(
            why,
            "each side must be within 100..=8192 CSS px, got 50x600"
        );
    }
}
