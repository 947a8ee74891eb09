//! JVM unified logging (`-Xlog`) line decorations, shared by the GC and class-load reducers.
//!
//! A line is `[decoration][decoration]... message`, with any subset of the decorators in
//! any order (`time`, `utctime`, `uptime`, `timemillis`, `uptimemillis`, `timenanos`,
//! `uptimenanos`, `hostname`, `pid`, `tid`, `level`, `tags`). HotSpot pads each bracket to
//! the widest value seen so far on that output (`[info   ]`, `[gc          ]`), so every
//! value is trimmed. Each decoration is recognised by its shape, not its position.

/// The decorations of one line, borrowed from it. Times are kept raw and parsed on demand
/// ([`Decorated::time`]): most lines of a `gc*` log never need theirs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Decorated<'a> {
    /// `uptime`, `uptimemillis` or `uptimenanos`, as written (`0.060s`, `60ms`).
    pub uptime: Option<&'a [u8]>,
    /// `time`, `utctime`, `timemillis` or `timenanos`, as written.
    pub wall: Option<&'a [u8]>,
    /// The `tags` decoration, trimmed (`gc,phases`), if the line has one.
    pub tags: Option<&'a [u8]>,
    /// The `level` decoration, trimmed (`info`), if present.
    pub level: Option<&'a [u8]>,
    /// Everything after the decorations (one separating space removed).
    pub message: &'a [u8],
}

impl Decorated<'_> {
    /// Seconds on the log's clock: uptime when present, else wall time (epoch seconds).
    pub fn time(&self) -> Option<f64> {
        self.uptime
            .and_then(parse_time)
            .or_else(|| self.wall.and_then(parse_time))
    }
}

const LEVELS: [&[u8]; 6] = [b"trace", b"debug", b"info", b"warning", b"error", b"off"];

/// Splits a unified-logging line into decorations and message. `None` when the line does
/// not start with a bracket or a bracket is unclosed: not a decorated line.
pub fn decorations(line: &[u8]) -> Option<Decorated<'_>> {
    let mut rest = line;
    let mut d = Decorated::default();
    let mut any = false;
    while let [b'[', after @ ..] = rest {
        // The `time`/`utctime` decoration is always 28 bytes (`2026-11-29T18:09:57.563+0000`),
        // and it is the longest one: check its end directly. The rest are short, where a
        // plain loop beats memchr's setup.
        let close =
            if after.len() > 28 && after[28] == b']' && after[4] == b'-' && after[10] == b'T' {
                28
            } else {
                after.iter().position(|&c| c == b']')?
            };
        let value = trim(&after[..close]);
        rest = &after[close + 1..];
        any = true;
        classify(value, &mut d);
    }
    if !any {
        return None;
    }
    if let [b' ', msg @ ..] = rest {
        rest = msg;
    }
    d.message = rest;
    Some(d)
}

/// The tags and message of a decorated line without reading the other decorations: the
/// fast path for reducers that skip most lines by tag. HotSpot prints decorations in a
/// fixed order with `tags` last, so the last bracket holds the tags when there are any.
/// `None` when the line is not decorated.
pub fn tags_and_message(line: &[u8]) -> Option<(Option<&[u8]>, &[u8])> {
    if line.first() != Some(&b'[') {
        return None;
    }
    let mut open = 0usize;
    loop {
        let rest = &line[open + 1..];
        // `time` is always 28 bytes; everything else is found with one SIMD search.
        let close = open
            + 1
            + if rest.len() > 28 && rest[28] == b']' && rest[10] == b'T' {
                28
            } else {
                memchr::memchr(b']', rest)?
            };
        match line.get(close + 1) {
            Some(b'[') => open = close + 1,
            next => {
                let v = trim(&line[open + 1..close]);
                let tags = v
                    .first()
                    .is_some_and(|c| c.is_ascii_lowercase() && !v.contains(&b'.'))
                    .then_some(v)
                    .filter(|v| !LEVELS.contains(v));
                let msg = if next == Some(&b' ') {
                    &line[close + 2..]
                } else {
                    &line[close + 1..]
                };
                return Some((tags, msg));
            }
        }
    }
}

/// Recognises a decoration by its shape alone (no number is parsed here).
fn classify<'a>(v: &'a [u8], d: &mut Decorated<'a>) {
    let (Some(&first), Some(&last)) = (v.first(), v.last()) else {
        return;
    };
    if first.is_ascii_digit() {
        if v.len() >= 19 && v[4] == b'-' && v[10] == b'T' {
            d.wall.get_or_insert(v);
        } else if last == b's' {
            // `0.053s`, `53ms`, `53ns`: uptime, unless the magnitude says epoch
            // (timemillis/timenanos have 13+/19+ digits).
            let digits = v.len()
                - if v.ends_with(b"ms") || v.ends_with(b"ns") {
                    2
                } else {
                    1
                };
            let epoch =
                (v.ends_with(b"ms") && digits >= 12) || (v.ends_with(b"ns") && digits >= 18);
            if epoch {
                d.wall.get_or_insert(v);
            } else {
                d.uptime.get_or_insert(v);
            }
        }
        // Bare digits are a pid or tid: nothing to keep.
        return;
    }
    if first.is_ascii_lowercase() {
        // Levels are checked by length and first letter before comparing bytes: this runs
        // for every line of a large log.
        let level = matches!(
            (v.len(), first),
            (5, b't' | b'd' | b'e') | (4, b'i') | (7, b'w') | (3, b'o')
        ) && LEVELS.contains(&v);
        if level {
            d.level = Some(v);
        } else if d.tags.is_none() && !v.contains(&b'.') {
            // Tags are lowercase words joined by commas; a hostname has dots.
            d.tags = Some(v);
        }
    }
    // Anything else (a hostname) is ignored.
}

/// Reads one time decoration as seconds: `0.053s`, `53ms`, `53ns`, ISO-8601 wall time.
pub fn parse_time(v: &[u8]) -> Option<f64> {
    if v.len() >= 19 && v.get(4) == Some(&b'-') {
        return parse_iso(v);
    }
    if let Some(num) = v.strip_suffix(b"ms") {
        return parse_f64(num).map(|x| x / 1e3);
    }
    if let Some(num) = v.strip_suffix(b"ns") {
        return parse_f64(num).map(|x| x / 1e9);
    }
    parse_f64(v.strip_suffix(b"s")?)
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
    let num = |a: usize, b: usize| digits(v.get(a..b)?);
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
    Some(civil_secs(y, mo, d, h, mi, s, 0)? - offset as f64 + frac)
}

/// A run of ASCII digits as a number; `None` when empty or anything else is in it.
pub fn digits(v: &[u8]) -> Option<i64> {
    if v.is_empty() || v.len() > 18 {
        return None;
    }
    let mut n = 0i64;
    for &c in v {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + (c - b'0') as i64;
    }
    Some(n)
}

/// Seconds since the epoch of a civil date and time read as UTC; `None` when a field is out
/// of range.
pub fn civil_secs(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64, ms: i64) -> Option<f64> {
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some((days * 86400 + h * 3600 + mi * 60 + s) as f64 + ms as f64 / 1000.0)
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
        assert_eq!(d.time(), Some(0.060));
        assert_eq!(d.tags, Some(&b"gc,phases,start"[..]));
        assert_eq!(d.level, Some(&b"info"[..]));
        assert_eq!(d.message, b"GC(0) Pause");
    }

    #[test]
    fn wall_clock_only_and_millis() {
        let d = decorations(b"[2026-11-29T18:09:57.563+0000][gc] x").unwrap();
        let t = d.time().unwrap();
        assert!((t - 1_795_975_797.563).abs() < 1e-3, "{t}");
        let d = decorations(b"[53ms][1234][info][gc] x").unwrap();
        assert_eq!(d.time(), Some(0.053));
        assert_eq!(d.tags, Some(&b"gc"[..]));
        let d = decorations(b"[1795975797563ms][gc] x").unwrap();
        assert_eq!(d.time(), Some(1_795_975_797.563));
    }

    #[test]
    fn fast_split_agrees_with_the_full_parse() {
        for l in [
            &b"[2026-11-29T18:09:57.563+0000][0.060s][info   ][gc,phases,start] GC(0) Pause"[..],
            b"[0.1s][info][gc] x",
            b"[0.1s][info] no tags",
            b"[gc] only tags",
            b"[0.1s][gc]",
        ] {
            let d = decorations(l).unwrap();
            assert_eq!(
                tags_and_message(l),
                Some((d.tags, d.message)),
                "{}",
                String::from_utf8_lossy(l)
            );
        }
        assert_eq!(tags_and_message(b"[0.1s unclosed"), None);
        assert_eq!(tags_and_message(b"plain"), None);
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
