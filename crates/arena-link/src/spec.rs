//! `--link rtt=20ms,rate=25mbit[,jitter=2ms][,down=..,up=..]`: what a shaped link is.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A link between the player and the target, per direction. `down` is target -> browser.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkSpec {
    /// Round-trip propagation delay; each direction gets half.
    pub rtt_ms: f64,
    /// Extra delay per chunk, uniform in `0..=jitter`, never reordering a connection.
    pub jitter_ms: f64,
    /// Rate target -> browser, bits per second; `None` is unlimited.
    pub down_bps: Option<u64>,
    /// Rate browser -> target, bits per second; `None` is unlimited.
    pub up_bps: Option<u64>,
}

const KEYS: &str = "rtt, rate, jitter, down, up";

impl LinkSpec {
    /// Parses `key=value[,key=value...]`; every error names the part that is wrong.
    pub fn parse(text: &str) -> Result<LinkSpec, String> {
        let mut spec = LinkSpec::default();
        if text.trim().is_empty() {
            return Err(format!(
                "empty link; expected e.g. rtt=20ms,rate=25mbit (keys: {KEYS})"
            ));
        }
        let mut seen: Vec<&str> = Vec::new();
        for part in text.split(',') {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}`: expected key=value (keys: {KEYS})"))?;
            let (k, v) = (k.trim(), v.trim());
            // `rate` then `up` or `down` narrows one way on purpose; a key given twice
            // (`rtt=20ms,rtt=30ms`) leaves which one holds to the reader.
            if seen.contains(&k) {
                return Err(format!(
                    "`{k}` is given twice in `{text}`: which one holds?"
                ));
            }
            seen.push(k);
            match k {
                "rtt" => spec.rtt_ms = duration_ms(k, v)?,
                "jitter" => spec.jitter_ms = duration_ms(k, v)?,
                "rate" => {
                    let r = rate_bps(k, v)?;
                    spec.down_bps = Some(r);
                    spec.up_bps = Some(r);
                }
                "down" => spec.down_bps = Some(rate_bps(k, v)?),
                "up" => spec.up_bps = Some(rate_bps(k, v)?),
                _ => return Err(format!("`{k}`: unknown link key (keys: {KEYS})")),
            }
        }
        Ok(spec)
    }

    /// One direction's propagation delay.
    pub fn one_way(&self) -> Duration {
        Duration::from_secs_f64(self.rtt_ms / 2.0 / 1e3)
    }

    pub fn jitter(&self) -> Duration {
        Duration::from_secs_f64(self.jitter_ms / 1e3)
    }

    /// Whether the link changes anything at all.
    pub fn shapes(&self) -> bool {
        self.rtt_ms > 0.0
            || self.jitter_ms > 0.0
            || self.down_bps.is_some()
            || self.up_bps.is_some()
    }
}

impl fmt::Display for LinkSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rate = |r: Option<u64>| match r {
            Some(b) if b % 1_000_000 == 0 => format!("{}mbit", b / 1_000_000),
            Some(b) if b % 1_000 == 0 => format!("{}kbit", b / 1_000),
            Some(b) => format!("{b}bit"),
            None => "unlimited".into(),
        };
        write!(
            f,
            "rtt={}ms,jitter={}ms,down={},up={}",
            self.rtt_ms,
            self.jitter_ms,
            rate(self.down_bps),
            rate(self.up_bps)
        )
    }
}

/// `20ms`, `1.5s`, `500us`, `0` -> milliseconds.
fn duration_ms(key: &str, v: &str) -> Result<f64, String> {
    let (num, scale) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix("us") {
        (n, 1e-3)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1e3)
    } else if v == "0" {
        ("0", 1.0)
    } else {
        return Err(format!(
            "`{key}={v}`: expected a duration such as 20ms, 500us or 1s"
        ));
    };
    let x: f64 = num
        .parse()
        .map_err(|_| format!("`{key}={v}`: `{num}` is not a number"))?;
    let ms = x * scale;
    if !(ms.is_finite() && (0.0..=60_000.0).contains(&ms)) {
        return Err(format!("`{key}={v}`: must be within 0 and 60s"));
    }
    Ok(ms)
}

/// `25mbit`, `512kbit`, `1gbit`, `9600bit` -> bits per second, at least 1 kbit/s.
fn rate_bps(key: &str, v: &str) -> Result<u64, String> {
    let lower = v.to_ascii_lowercase();
    let (num, scale) = [("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1.0)]
        .iter()
        .find_map(|(s, k)| lower.strip_suffix(s).map(|n| (n.to_string(), *k)))
        .ok_or_else(|| format!("`{key}={v}`: expected a rate such as 25mbit, 512kbit or 1gbit"))?;
    let x: f64 = num
        .parse()
        .map_err(|_| format!("`{key}={v}`: `{num}` is not a number"))?;
    let bps = x * scale;
    if !(bps.is_finite() && (1e3..=1e11).contains(&bps)) {
        return Err(format!(
            "`{key}={v}`: a rate must be between 1kbit and 100gbit (a rate of 0 would never deliver a byte)"
        ));
    }
    Ok(bps.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_parse_and_say_what_is_wrong() {
        let l = LinkSpec::parse("rtt=20ms,rate=25mbit,jitter=2ms").unwrap();
        assert_eq!((l.rtt_ms, l.jitter_ms), (20.0, 2.0));
        assert_eq!((l.down_bps, l.up_bps), (Some(25_000_000), Some(25_000_000)));
        assert_eq!(l.one_way(), Duration::from_millis(10));
        let l = LinkSpec::parse("rate=25mbit,up=512kbit").unwrap();
        assert_eq!((l.down_bps, l.up_bps), (Some(25_000_000), Some(512_000)));
        assert_eq!(l.to_string(), "rtt=0ms,jitter=0ms,down=25mbit,up=512kbit");
        assert!(!LinkSpec::parse("rtt=0").unwrap().shapes());
        for (bad, says) in [
            ("", "empty"),
            ("rtt", "key=value"),
            ("rtt=20", "duration"),
            ("rtt=abcms", "not a number"),
            ("rtt=-5ms", "within"),
            ("rate=0mbit", "rate of 0"),
            ("rate=25", "rate such as"),
            ("latency=20ms", "unknown link key"),
            ("rtt=20ms,rtt=30ms", "`rtt` is given twice"),
            ("rate=1mbit,up=1mbit,up=2mbit", "`up` is given twice"),
        ] {
            let e = LinkSpec::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
