//! The two checks every numeric flag's parser is built from, shared by the command lines
//! (`arena-perf`'s flags in src/cli/common/ranges.rs, `logs`' in arena-logs): a value out
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
