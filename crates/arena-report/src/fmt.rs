//! Number formatting shared by every table, so one figure reads the same everywhere.

/// Milliseconds with one decimal below 1000 ms, thousands separators above: `55.0ms`.
pub fn fmt_ms(ms: f64) -> String {
    if !ms.is_finite() {
        return "-".into();
    }
    if ms.abs() >= 1000.0 {
        format!("{}ms", fmt_count(ms.round() as i64))
    } else {
        format!("{ms:.1}ms")
    }
}

/// An integer with thousands separators: `2,046,929`.
pub fn fmt_count(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Bytes with separators and the unit: `6,057B`.
pub fn fmt_bytes(bytes: u64) -> String {
    format!("{}B", fmt_count(bytes as i64))
}

/// Units of [`parse_size`] and [`fmt_size`], largest first; binary, as the project's
/// other byte thresholds are (`idle_reply_bytes` 4096 is "4 KB").
const SIZE_UNITS: [(&str, u64); 4] = [("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1)];

/// A size as a person writes it on a command line: `512`, `512B`, `1KB`, `1.5KB`, `10K`,
/// `2MB` (case-insensitive; K = 1024 B). The error names the text and what was expected.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let upper = t.to_ascii_uppercase();
    let (num, mul) = SIZE_UNITS
        .iter()
        .find_map(|&(u, m)| {
            let short = &u[..1];
            upper
                .strip_suffix(u)
                .or_else(|| (u != "B").then(|| upper.strip_suffix(short)).flatten())
                .map(|n| (n.trim().to_string(), m))
        })
        .unwrap_or((upper.clone(), 1));
    let x: f64 = num
        .parse()
        .map_err(|_| format!("`{t}`: not a size (e.g. 512B, 1KB, 1.5KB, 2MB)"))?;
    if !(x.is_finite() && x >= 0.0) {
        return Err(format!("`{t}`: a size is a number of bytes, 0 or more"));
    }
    Ok((x * mul as f64).round() as u64)
}

/// [`parse_size`] of at least one byte (`--reply-over`: a size of 0 counts every reply).
pub fn parse_positive_size(text: &str) -> Result<u64, String> {
    match parse_size(text)? {
        0 => Err(format!("`{}`: a size of at least 1 byte", text.trim())),
        n => Ok(n),
    }
}

/// A size in the largest unit that divides it to at most one decimal: `1KB`, `1.5KB`,
/// `10KB`, `100B`, `4,097B`; [`parse_size`] reads it back.
pub fn fmt_size(bytes: u64) -> String {
    for (u, m) in SIZE_UNITS {
        if m > 1 && bytes >= m && (bytes * 10).is_multiple_of(m) {
            let x = bytes as f64 / m as f64;
            return if bytes.is_multiple_of(m) {
                format!("{}{u}", bytes / m)
            } else {
                format!("{x:.1}{u}")
            };
        }
    }
    fmt_bytes(bytes)
}

/// A signed percent change with a true minus sign (U+2212): `+6 %`, `−13 %`.
pub fn fmt_pct_change(pct: f64) -> String {
    if !pct.is_finite() {
        return "-".into();
    }
    let digits = if pct.abs() < 10.0 { 1 } else { 0 };
    if pct < 0.0 {
        format!("\u{2212}{:.*} %", digits, -pct)
    } else {
        format!("+{:.*} %", digits, pct)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_get_separators() {
        assert_eq!(fmt_count(0), "0");
        assert_eq!(fmt_count(999), "999");
        assert_eq!(fmt_count(1000), "1,000");
        assert_eq!(fmt_count(2046929), "2,046,929");
        assert_eq!(fmt_count(-12480), "-12,480");
    }

    #[test]
    fn ms_and_pct() {
        assert_eq!(fmt_ms(55.04), "55.0ms");
        assert_eq!(fmt_ms(1538.4), "1,538ms");
        assert_eq!(fmt_pct_change(-13.2), "\u{2212}13 %");
        assert_eq!(fmt_pct_change(6.04), "+6.0 %");
        assert_eq!(fmt_ms(f64::NAN), "-");
    }

    #[test]
    fn sizes_parse_and_print_back() {
        for (text, bytes) in [
            ("512", 512),
            ("512B", 512),
            ("1KB", 1024),
            ("1kb", 1024),
            ("1.5KB", 1536),
            ("10K", 10240),
            ("2MB", 2 << 20),
            (" 4 KB ", 4096),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
        for bad in ["", "KB", "1XB", "-1KB", "1..5KB", "inf"] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.contains(bad.trim()), "{bad}: {e}");
        }
        // `--reply-over 0` counted every reply: a size there is a byte at least.
        assert_eq!(parse_size("0"), Ok(0));
        assert!(parse_positive_size("0KB")
            .unwrap_err()
            .contains("at least 1 byte"));
        assert_eq!(parse_positive_size("1"), Ok(1));
        for (bytes, text) in [
            (1024, "1KB"),
            (1536, "1.5KB"),
            (10240, "10KB"),
            (100, "100B"),
        ] {
            assert_eq!(fmt_size(bytes), text);
            assert_eq!(parse_size(text), Ok(bytes));
        }
        assert_eq!(fmt_size(4097), "4,097B");
        assert_eq!(fmt_size(3 << 20), "3MB");
    }
}
