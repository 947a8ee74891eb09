//! The two checks every numeric flag's parser is built from, shared by the command lines
//! (`arena-perf`'s flags, `logs`' in arena-logs): a value out
//! of range is refused with the range said, and clap's message names the flag and the
//! value (`invalid value 'inf' for '--noise-bar <PCT>': must be a finite number from 0 to
//! 100`). `f64::from_str` takes `inf`, `NaN` and `1e400` (which overflows to inf): no flag
//! takes any of them.

use std::str::FromStr;

/// `text` as a finite number that `ok` accepts; else `must be {range}`.
pub fn finite(text: &str, ok: impl Fn(f64) -> bool, range: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && ok(v) => Ok(v),
        _ => Err(format!("must be {range}")),
    }
}

/// `text` as a whole number from `lo` to `hi`; else `must be {range}`.
pub fn whole<T: FromStr + PartialOrd>(text: &str, lo: T, hi: T, range: &str) -> Result<T, String> {
    match text.trim().parse::<T>() {
        Ok(v) if v >= lo && v <= hi => Ok(v),
        _ => Err(format!("must be {range}")),
    }
}

/// The longest any time flag may ask for: a day, in ms (the pilot file's bound too).
pub const DAY_MS: u64 = 86_400_000;

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

/// A power to plan for: from 0.5 to 0.99 (`plan --power`).
pub fn power(text: &str) -> Result<f64, String> {
    finite(
        text,
        |v| (0.5..=0.99).contains(&v),
        "a number from 0.5 to 0.99",
    )
}

/// A finite number above 0 (`--burst-gap`, `--tolerance`, `wire summary --window`).
pub fn positive_f64(text: &str) -> Result<f64, String> {
    finite(text, |v| v > 0.0, "a finite number above 0")
}

/// A length of time in seconds: above 0 and at most a day (`--idle`, `watch --for`,
/// `--load-limit`, `wire capture --duration`).
pub fn seconds(text: &str) -> Result<std::time::Duration, String> {
    // A millisecond at least: `1e-300` was taken, and measured nothing.
    finite(
        text,
        |v| (0.001..=86_400.0).contains(&v),
        "a number of seconds from 0.001 to 86400",
    )
    .map(std::time::Duration::from_secs_f64)
}

/// A count that must be at least 1 (`--clicks`, `startup --first-bytes`).
pub fn positive_u64(text: &str) -> Result<u64, String> {
    whole(text, 1, u64::MAX, "a whole number, 1 or more")
}

/// A count that must be at least 1 (`--rounds`, `--capacity`, `matrix --repeats`).
pub fn positive_u32(text: &str) -> Result<u32, String> {
    whole(text, 1, u32::MAX, "a whole number from 1 to 4294967295")
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const NONSENSE: [&str; 7] = ["inf", "-inf", "NaN", "1e400", "", "x", "1,5"];

    #[test]
    fn nonsense_numbers_are_refused_with_the_range() {
        for bad in ["inf", "-inf", "NaN", "1e400", "", "x", "1,5"] {
            assert_eq!(finite(bad, |_| true, "r"), Err("must be r".into()), "{bad}");
            assert_eq!(
                whole::<u32>(bad, 0, 9, "r"),
                Err("must be r".into()),
                "{bad}"
            );
        }
        assert_eq!(finite(" 2.5 ", |v| v > 0.0, "r"), Ok(2.5));
        assert_eq!(finite("0", |v| v > 0.0, "r"), Err("must be r".into()));
        assert_eq!(whole::<u32>("10", 0, 9, "r"), Err("must be r".into()));
        assert_eq!(whole::<u32>("-1", 0, 9, "r"), Err("must be r".into()));
        assert_eq!(whole::<u32>("9", 0, 9, "r"), Ok(9));
    }

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
    fn seconds_are_a_millisecond_to_a_day() {
        assert_eq!(seconds("86400"), Ok(Duration::from_secs(86_400)));
        assert_eq!(seconds("0.25"), Ok(Duration::from_millis(250)));
        assert_eq!(seconds("0.001"), Ok(Duration::from_millis(1)));
        for bad in NONSENSE
            .iter()
            .chain(&["0", "-1", "86400.5", "1e300", "1e-300", "0.0009"])
        {
            assert_eq!(
                seconds(bad).unwrap_err(),
                "must be a number of seconds from 0.001 to 86400",
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
