//! The ranges of the numeric flags, checked as clap parses them: a value out of range is
//! exit 2 before anything runs, and clap's message names the flag and the value, then says
//! the range (`invalid value 'inf' for '--noise-bar <PCT>': must be a finite number from 0
//! to 100`). Built on arena-report's two checks, which `logs`' flags use too.

use std::time::Duration;

use arena_report::ranges::{finite, whole};

/// The longest any time flag may ask for: a day, in ms (the pilot file's bound too).
pub const DAY_MS: u64 = arena_pilot::scenario::MAX_PACING_MS;

/// Bootstrap resamples an interval may ask for: fewer and the interval's ends are a few
/// resamples each; more and one interval takes minutes.
pub const RESAMPLES: std::ops::RangeInclusive<usize> = 100..=1_000_000;

/// A percent: finite, from 0 to 100 (`--noise-bar`, `--noise-pct`).
pub fn pct_0_100(text: &str) -> Result<f64, String> {
    finite(
        text,
        |v| (0.0..=100.0).contains(&v),
        "a finite number from 0 to 100",
    )
}

/// A share: finite, from 0 to 1 (`--idle-share`).
pub fn share_0_1(text: &str) -> Result<f64, String> {
    finite(
        text,
        |v| (0.0..=1.0).contains(&v),
        "a finite number from 0 to 1",
    )
}

/// A significance level: above 0 and below 1, both ends excluded (`--alpha`).
pub fn alpha_open_0_1(text: &str) -> Result<f64, String> {
    finite(text, |v| v > 0.0 && v < 1.0, "a number above 0 and below 1")
}

/// A finite number above 0 (`--burst-gap`, `--tolerance`, `wire summary --window`).
pub fn positive_f64(text: &str) -> Result<f64, String> {
    finite(text, |v| v > 0.0, "a finite number above 0")
}

/// A round trip to add, ms: above 0 and at most 2000 (`verify --rtt`).
pub fn rtt_ms(text: &str) -> Result<f64, String> {
    finite(
        text,
        |v| v > 0.0 && v <= 2000.0,
        "a number of ms above 0 and at most 2000",
    )
}

/// A length of time in seconds: above 0 and at most a day (`--idle`, `watch --for`,
/// `--load-limit`, `wire capture --duration`).
pub fn seconds(text: &str) -> Result<Duration, String> {
    finite(
        text,
        |v| v > 0.0 && v <= 86_400.0,
        "a number of seconds above 0 and at most 86400",
    )
    .map(Duration::from_secs_f64)
}

/// A count that must be at least 1 (`--clicks`, `startup --first-bytes`).
pub fn positive_u64(text: &str) -> Result<u64, String> {
    whole(text, 1, u64::MAX, "a whole number, 1 or more")
}

/// A count that must be at least 1 (`--rounds`, `--capacity`, `matrix --repeats`).
pub fn positive_u32(text: &str) -> Result<u32, String> {
    whole(text, 1, u32::MAX, "a whole number from 1 to 4294967295")
}

/// Silent clicks in a row that end a run, 0 for never (`--stall-clicks`).
pub fn stall_clicks(text: &str) -> Result<u32, String> {
    whole(
        text,
        0,
        arena_pilot::scenario::MAX_STALL_CLICKS,
        "a whole number of clicks from 0 (never) to 1000000",
    )
}

/// A wait in ms that may be 0, at most a day (`--interval`, `--settle`, `--load-quiet`).
pub fn ms_0_day(text: &str) -> Result<u64, String> {
    whole(
        text,
        0,
        DAY_MS,
        "a whole number of ms from 0 to 86400000 (a day)",
    )
}

/// A time bound in ms: at least 1, at most a day (`--timeout`).
pub fn ms_1_day(text: &str) -> Result<u64, String> {
    whole(
        text,
        1,
        DAY_MS,
        "a whole number of ms from 1 to 86400000 (a day)",
    )
}

/// Bootstrap resamples per interval (`--resamples`).
pub fn resamples(text: &str) -> Result<usize, String> {
    whole(
        text,
        *RESAMPLES.start(),
        *RESAMPLES.end(),
        "a whole number from 100 to 1000000",
    )
}

/// A TCP port to capture or filter on: 1 to 65535 (port 0 carries no traffic).
pub fn tcp_port(text: &str) -> Result<u16, String> {
    whole(text, 1, u16::MAX, "a TCP port from 1 to 65535")
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
    fn pct_takes_0_to_100() {
        for ok in ["0", "0.0", "2", " 50.5 ", "100"] {
            assert!(pct_0_100(ok).is_ok(), "{ok}");
        }
        for bad in NONSENSE.iter().chain(&["-5", "-0.001", "100.001", "1e308"]) {
            assert_eq!(
                pct_0_100(bad).unwrap_err(),
                "must be a finite number from 0 to 100",
                "{bad}"
            );
        }
    }

    #[test]
    fn share_takes_0_to_1() {
        for ok in ["0", "0.1", "1"] {
            assert!(share_0_1(ok).is_ok(), "{ok}");
        }
        for bad in NONSENSE.iter().chain(&["-1", "-0.0001", "1.0001", "10"]) {
            assert_eq!(
                share_0_1(bad).unwrap_err(),
                "must be a finite number from 0 to 1",
                "{bad}"
            );
        }
    }

    #[test]
    fn alpha_excludes_both_ends() {
        for ok in ["1e-9", "0.05", "0.999"] {
            assert!(alpha_open_0_1(ok).is_ok(), "{ok}");
        }
        for bad in NONSENSE.iter().chain(&["0", "1", "-0.05", "1.5"]) {
            assert_eq!(
                alpha_open_0_1(bad).unwrap_err(),
                "must be a number above 0 and below 1",
                "{bad}"
            );
        }
    }

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
    fn positive_f64_excludes_0() {
        for ok in ["1e-9", "3", "1e300"] {
            assert!(positive_f64(ok).is_ok(), "{ok}");
        }
        for bad in NONSENSE.iter().chain(&["0", "-0", "-1"]) {
            assert_eq!(
                positive_f64(bad).unwrap_err(),
                "must be a finite number above 0",
                "{bad}"
            );
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
    fn seconds_are_above_0_and_at_most_a_day() {
        assert_eq!(seconds("86400"), Ok(Duration::from_secs(86_400)));
        assert_eq!(seconds("0.25"), Ok(Duration::from_millis(250)));
        for bad in NONSENSE.iter().chain(&["0", "-1", "86400.5", "1e300"]) {
            assert_eq!(
                seconds(bad).unwrap_err(),
                "must be a number of seconds above 0 and at most 86400",
                "{bad}"
            );
        }
    }

    #[test]
    fn whole_numbers_keep_their_bounds() {
        assert_eq!(positive_u64("1"), Ok(1));
        assert_eq!(positive_u64("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(positive_u32("4294967295"), Ok(u32::MAX));
        for bad in [
            "0",
            "-1",
            "1.5",
            "1e3",
            "inf",
            "NaN",
            "",
            "18446744073709551616",
        ] {
            assert_eq!(
                positive_u64(bad).unwrap_err(),
                "must be a whole number, 1 or more",
                "{bad}"
            );
        }
        for bad in ["0", "4294967296", "-3"] {
            assert!(positive_u32(bad).is_err(), "{bad}");
        }
        assert_eq!(stall_clicks("0"), Ok(0));
        assert_eq!(stall_clicks("1000000"), Ok(1_000_000));
        for bad in ["-1", "1000001", "2.5", "inf"] {
            assert!(stall_clicks(bad).is_err(), "{bad}");
        }
        assert_eq!(ms_0_day("0"), Ok(0));
        assert_eq!(ms_0_day("86400000"), Ok(DAY_MS));
        assert!(ms_0_day("86400001").is_err());
        assert!(ms_0_day("-1").is_err());
        assert_eq!(ms_1_day("1"), Ok(1));
        assert_eq!(ms_1_day("86400000"), Ok(DAY_MS));
        for bad in ["0", "86400001", "18446744073709551615"] {
            assert_eq!(
                ms_1_day(bad).unwrap_err(),
                "must be a whole number of ms from 1 to 86400000 (a day)",
                "{bad}"
            );
        }
        assert_eq!(resamples("100"), Ok(100));
        assert_eq!(resamples("1000000"), Ok(1_000_000));
        for bad in ["99", "0", "1000001", "-100"] {
            assert_eq!(
                resamples(bad).unwrap_err(),
                "must be a whole number from 100 to 1000000",
                "{bad}"
            );
        }
        assert_eq!(tcp_port("1"), Ok(1));
        assert_eq!(tcp_port("65535"), Ok(65_535));
        for bad in ["0", "65536", "-1", "http"] {
            assert_eq!(
                tcp_port(bad).unwrap_err(),
                "must be a TCP port from 1 to 65535",
                "{bad}"
            );
        }
    }
}
