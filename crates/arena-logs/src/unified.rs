//! JVM unified logging (`-Xlog`) line decorations, shared by the GC and class-load reducers.
//!
//! A line is `[decoration][decoration]... message`, with any subset of the decorators in
//! any order (`time`, `utctime`, `uptime`, `timemillis`, `uptimemillis`, `timenanos`,
//! `uptimenanos`, `hostname`, `pid`, `tid`, `level`, `tags`). HotSpot pads each bracket to
//! the widest value seen so far on that output (`[info   ]`, `[gc          ]`), so every
//! value is trimmed. Each decoration is recognised by its shape, not its position.

/// The decorations of one line, borrowed from it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Decorated<'a> {
    /// Seconds on the log's clock: uptime when present, else wall time (epoch seconds).
    pub time: Option<f64>,
    /// The `tags` decoration, trimmed (`gc,phases`), if the line has one.
    pub tags: Option<&'a [u8]>,
    /// The `level` decoration, trimmed (`info`), if present.
    pub level: Option<&'a [u8]>,
    /// Everything after the decorations (one separating space removed).
    pub message: &'a [u8],
}

const LEVELS: [&[u8]; 6] = [b"trace", b"debug", b"info", b"warning", b"error", b"off"];

/// Splits a unified-logging line into decorations and message. `None` when the line does
/// not start with a bracket or a bracket is unclosed: not a decorated line.
pub fn decorations(line: &[u8]) -> Option<Decorated<'_>> {
    let mut rest = line;
    let mut d = Decorated::default();
    let mut uptime: Option<f64> = None;
    let mut wall: Option<f64> = None;
    let mut any = false;
    while let [b'[', after @ ..] = rest {
        let close = memchr::memchr(b']', after)?;
        let value = trim(&after[..close]);
        rest = &after[close + 1..];
        any = true;
        classify(value, &mut d, &mut uptime, &mut wall);
    }
    if !any {
        return None;
    }
    if let [b' ', msg @ ..] = rest {
        rest = msg;
    }
    d.message = rest;
    d.time = uptime.or(wall);
    Some(d)
}

fn classify<'a>(
    v: &'a [u8],
    d: &mut Decorated<'a>,
    uptime: &mut Option<f64>,
    wall: &mut Option<f64>,
) {
    if v.is_empty() {
        return;
    }
    let first = v[0];
    if first.is_ascii_digit() {
        // uptime "0.053s", uptimemillis "53ms", timemillis "1700000000000ms",
        // nanos "...ns", ISO time "2026-11-29T18:09:57.563+0000", pid/tid digits.
        if let Some(num) = v.strip_suffix(b"ms") {
            if let Some(x) = parse_f64(num) {
                // Epoch milliseconds are > 1e11; uptime in ms never gets there.
                if x > 1e11 {
                    wall.get_or_insert(x / 1e3);
                } else {
                    uptime.get_or_insert(x / 1e3);
                }
            }
        } else if let Some(num) = v.strip_suffix(b"ns") {
            if let Some(x) = parse_f64(num) {
                if x > 1e17 {
                    wall.get_or_insert(x / 1e9);
                } else {
                    uptime.get_or_insert(x / 1e9);
                }
            }
        } else if let Some(num) = v.strip_suffix(b"s") {
            if let Some(x) = parse_f64(num) {
                uptime.get_or_insert(x);
            }
        } else if v.len() >= 19 && v[4] == b'-' && v[10] == b'T' {
            if let Some(x) = parse_iso(v) {
                wall.get_or_insert(x);
            }
        }
        // Bare digits are a pid or tid: nothing to keep.
        return;
    }
    if LEVELS.contains(&v) {
        d.level = Some(v);
        return;
    }
    if first.is_ascii_lowercase()
        && v.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b',' || c == b'_')
        && d.tags.is_none()
    {
        d.tags = Some(v);
    }
    // Anything else (a hostname) is ignored.
}

/// Trims spaces, tabs and CRs on both ends (HotSpot's padding, stray line ends).
pub fn trim(v: &[u8]) -> &[u8] {
    let ws = |c: u8| c == b' ' || c == b'\t' || c == b'\r';
    let mut a = 0;
    let mut b = v.len();
    while a < b && ws(v[a]) {
        a += 1;
    }
    while b > a && ws(v[b - 1]) {
        b -= 1;
    }
    &v[a..b]
}

/// A decimal number without exponent (`12`, `0.053`, `-3.5`), parsed without allocation.
/// Digits are gathered as one integer and divided once, so `0.060` reads as exactly 0.06.
pub fn parse_f64(v: &[u8]) -> Option<f64> {
    let (neg, v) = match v {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, v),
    };
    if v.is_empty() || v.len() > 40 {
        return None;
    }
    let mut mant: u64 = 0;
    let mut digits = 0usize;
    let mut frac_digits = 0usize;
    let mut seen_dot = false;
    for &c in v {
        match c {
            b'0'..=b'9' => {
                digits += 1;
                if seen_dot {
                    frac_digits += 1;
                }
                // Past 18 significant digits the rest cannot change an f64 much: drop
                // further fractional digits, refuse overlong integers.
                if digits > 18 {
                    if seen_dot {
                        frac_digits -= 1;
                        continue;
                    }
                    return None;
                }
                mant = mant * 10 + (c - b'0') as u64;
            }
            b'.' if !seen_dot => seen_dot = true,
            _ => return None,
        }
    }
    if digits == 0 {
        return None;
    }
    let x = mant as f64 / POW10[frac_digits];
    Some(if neg { -x } else { x })
}

const POW10: [f64; 19] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18,
];

/// Parses `2026-11-29T18:09:57.563+0000` (or `Z`, or no zone) to epoch seconds.
pub fn parse_iso(v: &[u8]) -> Option<f64> {
    let num = |a: usize, b: usize| -> Option<i64> {
        let s = v.get(a..b)?;
        let mut n = 0i64;
        for &c in s {
            if !c.is_ascii_digit() {
                return None;
            }
            n = n * 10 + (c - b'0') as i64;
        }
        Some(n)
    };
    if v.len() < 19 || v[4] != b'-' || v[7] != b'-' || v[13] != b':' || v[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, s) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    let mut i = 19;
    let mut frac = 0.0;
    if v.get(i) == Some(&b'.') {
        let start = i;
        i += 1;
        while v.get(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        frac = parse_f64(&v[start..i.min(start + 10)]).unwrap_or(0.0);
    }
    let mut offset = 0i64;
    if let Some(&sign @ (b'+' | b'-')) = v.get(i) {
        let (oh, om) = if v.get(i + 3) == Some(&b':') {
            (num(i + 1, i + 3)?, num(i + 4, i + 6)?)
        } else {
            (num(i + 1, i + 3)?, num(i + 3, i + 5)?)
        };
        offset = (oh * 60 + om) * 60 * if sign == b'+' { 1 } else { -1 };
    }
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some((days * 86400 + h * 3600 + mi * 60 + s - offset) as f64 + frac)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_full_decorations() {
        let l = b"[2026-11-29T18:09:57.563+0000][0.060s][info   ][gc,phases,start] GC(0) Pause";
        let d = decorations(l).unwrap();
        assert_eq!(d.time, Some(0.060));
        assert_eq!(d.tags, Some(&b"gc,phases,start"[..]));
        assert_eq!(d.level, Some(&b"info"[..]));
        assert_eq!(d.message, b"GC(0) Pause");
    }

    #[test]
    fn wall_clock_only_and_millis() {
        let d = decorations(b"[2026-11-29T18:09:57.563+0000][gc] x").unwrap();
        let t = d.time.unwrap();
        assert!((t - 1_795_975_797.563).abs() < 1e-3, "{t}");
        let d = decorations(b"[53ms][1234][info][gc] x").unwrap();
        assert_eq!(d.time, Some(0.053));
        assert_eq!(d.tags, Some(&b"gc"[..]));
        let d = decorations(b"[1795975797563ms][gc] x").unwrap();
        assert_eq!(d.time, Some(1_795_975_797.563));
    }

    #[test]
    fn not_decorated() {
        assert!(decorations(b"GC(0) Pause").is_none());
        assert!(decorations(b"[0.1s unclosed").is_none());
        assert_eq!(parse_f64(b"1.528"), Some(1.528));
        assert_eq!(parse_f64(b"."), None);
        assert_eq!(parse_f64(b"1e5"), None);
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11017);
    }
}
