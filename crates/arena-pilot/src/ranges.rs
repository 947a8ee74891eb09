//! The ranges of the flags that set the pilot's browser, pacing and link (`--dpr`,
//! `--viewport`, `--cpu-throttle`, `--stall-clicks`, `verify --rtt`), checked as clap parses
//! them with arena-report's two checks ([`arena_report::ranges`], which holds the ranges
//! every command shares): the bounds are the ones the pilot file and the browser keep.

use arena_report::ranges::{finite, whole};

/// A round trip to add, ms: above 0 and at most 2000 (`verify --rtt`).
pub fn rtt_ms(text: &str) -> Result<f64, String> {
    finite(
        text,
        |v| v > 0.0 && v <= 2000.0,
        "a number of ms above 0 and at most 2000",
    )
}

/// Silent clicks in a row that end a run, 0 for never (`--stall-clicks`).
pub fn stall_clicks(text: &str) -> Result<u32, String> {
    whole(
        text,
        0,
        crate::scenario::MAX_STALL_CLICKS,
        "a whole number of clicks from 0 (never) to 1000000",
    )
}

/// A device pixel ratio: above 0 and at most 8 (`--dpr`).
pub fn dpr(text: &str) -> Result<f64, String> {
    finite(
        text,
        |v| v > 0.0 && v <= arena_browser::DPR_MAX,
        "a number above 0 and at most 8",
    )
}

/// A CPU slowdown: from 1 (none) to 20 (`--cpu-throttle`).
pub fn cpu_throttle(text: &str) -> Result<f64, String> {
    finite(
        text,
        |v| arena_browser::CPU_THROTTLE.contains(&v),
        "a number from 1 (no slowdown) to 20",
    )
}

/// A viewport, `WIDTHxHEIGHT` in CSS px, each side from 100 to 8192 (`--viewport`).
pub fn viewport(text: &str) -> Result<(u32, u32), String> {
    let side = |t: &str| {
        t.trim()
            .parse::<u32>()
            .ok()
            .filter(|v| arena_browser::VIEWPORT_PX.contains(v))
    };
    match text.split_once(['x', 'X']).map(|(w, h)| (side(w), side(h))) {
        Some((Some(w), Some(h))) => Ok((w, h)),
        _ => Err("must be WIDTHxHEIGHT in CSS px, each side from 100 to 8192".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONSENSE: [&str; 7] = ["inf", "-inf", "NaN", "1e400", "", "x", "1,5"];

    #[test]
    fn the_persons_browser_takes_what_a_tab_can_be_set_to() {
        for ok in ["0.5", "1", "1.25", "8"] {
            assert!(dpr(ok).is_ok(), "{ok}");
        }
        for bad in NONSENSE.iter().chain(&["0", "-1", "8.01"]) {
            assert_eq!(
                dpr(bad).unwrap_err(),
                "must be a number above 0 and at most 8",
                "{bad}"
            );
        }
        assert_eq!(cpu_throttle("4"), Ok(4.0));
        for bad in NONSENSE.iter().chain(&["0", "0.99", "20.5"]) {
            assert!(cpu_throttle(bad).is_err(), "{bad}");
        }
        assert_eq!(viewport("1280x800"), Ok((1280, 800)));
        assert_eq!(viewport(" 100X8192"), Ok((100, 8192)));
        for bad in NONSENSE
            .iter()
            .chain(&["99x800", "800x8193", "1280", "1280x", "x800", "-1x5"])
        {
            assert!(viewport(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rtt_is_above_0_and_at_most_2000() {
        assert_eq!(rtt_ms("2000"), Ok(2000.0));
        assert_eq!(rtt_ms("0.5"), Ok(0.5));
        for bad in NONSENSE.iter().chain(&["0", "-1", "2000.001"]) {
            assert!(rtt_ms(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn stall_clicks_run_from_never_to_the_pilot_files_bound() {
        assert_eq!(stall_clicks("0"), Ok(0));
        assert_eq!(stall_clicks("1000000"), Ok(1_000_000));
        for bad in ["-1", "1000001", "2.5", "inf"] {
            assert!(stall_clicks(bad).is_err(), "{bad}");
        }
    }
}
