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
}
