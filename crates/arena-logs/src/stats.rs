//! `logs stats`: Webswing-style per-frame statistics lines, reduced to n, mean, p50, p90,
//! p99 and max per metric (and per instance).
//!
//! Webswing logs `log.trace("{},{},{}", instance, metric, value)` through the pattern
//! `%d{dd-MMM-yyyy-HH:mm:ss.SSS},%m%n`: `12-Mar-2021-10:15:42.123,<instance>,latency,57`.
//! Older launchers used `%d %m%n`: `2021-03-12 10:15:42,123 <instance>,latency,57`. Both
//! are found anywhere in a line, so a container log's prefix does not matter. Anything
//! else takes `--pattern` with named groups.
//!
//! Webswing's `latency` is measured from the frame being assembled on the server (the
//! paint tick), not from the input, so it never equals a pilot's input-to-paint.

use std::path::PathBuf;

use arena_report::{fmt_bytes, fmt_count, fmt_ms, Cell, Column, Table};
use arena_stats::StreamingSummary;
use regex::bytes::Regex;

use crate::scan::{scan_path, LineParser, Parsed, ScanReport};
use crate::unified::{civil_secs, digits, parse_f64, parse_iso};

/// One statistics sample.
#[derive(Debug, Clone, PartialEq)]
pub struct StatRecord<'a> {
    /// Seconds since the epoch, reading the logged local time as if it were UTC (only
    /// differences are used).
    pub time: Option<f64>,
    pub instance: &'a [u8],
    pub metric: &'a [u8],
    pub value: f64,
}

/// Reads Webswing statistics lines, or lines matching a custom pattern.
#[derive(Debug, Default)]
pub struct StatsParser {
    pattern: Option<Pattern>,
}

#[derive(Debug)]
struct Pattern {
    re: Regex,
    metric: usize,
    value: usize,
    time: Option<usize>,
    instance: Option<usize>,
}

impl StatsParser {
    /// The built-in Webswing formats.
    pub fn webswing() -> Self {
        StatsParser { pattern: None }
    }

    /// A custom regex with named groups `metric` and `value`, optionally `time` and
    /// `instance`.
    pub fn with_pattern(pattern: &str) -> anyhow::Result<Self> {
        let re = Regex::new(pattern)
            .map_err(|e| arena_report::Exit::bad_input(format!("--pattern: {e}")))?;
        let idx = |name: &str| re.capture_names().position(|n| n == Some(name));
        let (Some(metric), Some(value)) = (idx("metric"), idx("value")) else {
            return Err(arena_report::Exit::bad_input(
                "--pattern needs named groups (?P<metric>...) and (?P<value>...)",
            )
            .into());
        };
        let (time, instance) = (idx("time"), idx("instance"));
        Ok(StatsParser {
            pattern: Some(Pattern {
                re,
                metric,
                value,
                time,
                instance,
            }),
        })
    }
}

impl LineParser for StatsParser {
    type Record<'a> = StatRecord<'a>;
    const KIND: &'static str = "per-frame stats lines";

    fn parse<'a>(&mut self, line: &'a [u8]) -> Parsed<StatRecord<'a>> {
        let rec = match &self.pattern {
            None => parse_webswing(line),
            Some(p) => parse_pattern(p, line),
        };
        match rec {
            Some(r) => Parsed::Record(r),
            None => Parsed::Unknown,
        }
    }

    fn time_of(r: &StatRecord<'_>) -> Option<f64> {
        r.time
    }
}

fn parse_pattern<'a>(p: &Pattern, line: &'a [u8]) -> Option<StatRecord<'a>> {
    let caps = p.re.captures(line)?;
    let metric = caps.get(p.metric)?.as_bytes();
    let value = parse_value(caps.get(p.value)?.as_bytes())?;
    let instance = p
        .instance
        .and_then(|i| caps.get(i))
        .map_or(&b""[..], |m| m.as_bytes());
    let time = p
        .time
        .and_then(|i| caps.get(i))
        .and_then(|m| parse_any_time(m.as_bytes()));
    Some(StatRecord {
        time,
        instance,
        metric,
        value,
    })
}

fn parse_value(v: &[u8]) -> Option<f64> {
    let v = crate::unified::trim(v);
    parse_f64(v).or_else(|| {
        std::str::from_utf8(v)
            .ok()?
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
    })
}

/// Any of the timestamp shapes a stats line may carry, or plain seconds.
fn parse_any_time(v: &[u8]) -> Option<f64> {
    parse_new_ts(v)
        .or_else(|| parse_old_ts(v))
        .or_else(|| parse_iso(v))
        .or_else(|| parse_f64(v))
}

/// Finds `<ts>,<instance>,<metric>,<value>` or `<ts> <instance>,<metric>,<value>` at the
/// end of a line, with anything before the timestamp.
pub fn parse_webswing(line: &[u8]) -> Option<StatRecord<'_>> {
    let line = crate::unified::trim(line);
    let last = memchr::memrchr(b',', line)?;
    let value = parse_value(&line[last + 1..])?;
    let head = &line[..last];
    let mc = memchr::memrchr(b',', head)?;
    let metric = &head[mc + 1..];
    if !is_identifier(metric) {
        return None;
    }
    let rest = &head[..mc];
    // `dd-MMM-yyyy-HH:mm:ss.SSS,<instance>`: the instance may itself hold commas, so try a
    // few separators from the right.
    for c in memchr::memrchr_iter(b',', rest).take(8) {
        if c >= 24 {
            if let Some(t) = parse_new_ts(&rest[c - 24..c]) {
                return Some(StatRecord {
                    time: Some(t),
                    instance: &rest[c + 1..],
                    metric,
                    value,
                });
            }
        }
    }
    // `yyyy-MM-dd HH:mm:ss,SSS <instance>`.
    for s in memchr::memrchr_iter(b' ', rest).take(8) {
        if s >= 23 {
            if let Some(t) = parse_old_ts(&rest[s - 23..s]) {
                return Some(StatRecord {
                    time: Some(t),
                    instance: &rest[s + 1..],
                    metric,
                    value,
                });
            }
        }
    }
    None
}

fn is_identifier(m: &[u8]) -> bool {
    matches!(m.first(), Some(c) if c.is_ascii_alphabetic())
        && m.len() <= 64
        && m.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
}

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// `12-Mar-2021-10:15:42.123` (exactly 24 bytes).
fn parse_new_ts(v: &[u8]) -> Option<f64> {
    if v.len() != 24
        || v[2] != b'-'
        || v[6] != b'-'
        || v[11] != b'-'
        || v[14] != b':'
        || v[17] != b':'
        || v[20] != b'.'
    {
        return None;
    }
    let mon = MONTHS
        .iter()
        .position(|m| v[3..6].eq_ignore_ascii_case(&m[..]))? as i64
        + 1;
    civil_secs(
        digits(&v[7..11])?,
        mon,
        digits(&v[0..2])?,
        digits(&v[12..14])?,
        digits(&v[15..17])?,
        digits(&v[18..20])?,
        digits(&v[21..24])?,
    )
}

/// `2021-03-12 10:15:42,123` (exactly 23 bytes).
fn parse_old_ts(v: &[u8]) -> Option<f64> {
    if v.len() != 23
        || v[4] != b'-'
        || v[7] != b'-'
        || v[10] != b' '
        || v[13] != b':'
        || v[16] != b':'
        || !(v[19] == b',' || v[19] == b'.')
    {
        return None;
    }
    civil_secs(
        digits(&v[0..4])?,
        digits(&v[5..7])?,
        digits(&v[8..10])?,
        digits(&v[11..13])?,
        digits(&v[14..16])?,
        digits(&v[17..19])?,
        digits(&v[20..23])?,
    )
}

/// The unit a Webswing metric is logged in; empty when the source does not say.
pub fn unit_of(metric: &str) -> &'static str {
    match metric {
        // Webswing's latency* metrics; the fixture match's renderMs, encodeMs, cpuMs.
        m if m.starts_with("latency") || m.ends_with("Ms") => "ms",
        "inboundSize" | "outboundSize" => "B",
        "cpuUtilization" | "cpuUtilizationSession" | "cpuUtilizationServer" => "%",
        "edtThreadBlockedForSeconds" => "s",
        _ => "",
    }
}

fn fmt_value(unit: &str, v: f64) -> String {
    match unit {
        "ms" => fmt_ms(v),
        "B" => fmt_bytes(v.round().max(0.0) as u64),
        "%" => format!("{v:.1} %"),
        "s" => format!("{v:.2}s"),
        _ => {
            if v.fract() == 0.0 && v.abs() < 1e15 {
                fmt_count(v as i64)
            } else {
                format!("{v:.2}")
            }
        }
    }
}

/// Options of `logs stats`.
#[derive(Debug, Clone, Default)]
pub struct StatsOptions {
    pub files: Vec<PathBuf>,
    pub by_instance: bool,
    pub pattern: Option<String>,
}

struct Group {
    instance: Vec<u8>,
    metric: Vec<u8>,
    values: StreamingSummary,
}

const QUANTILE_NOTE: &str =
    "quantiles from every raw sample (3 significant digits), not Webswing's 10 s averages";
const LATENCY_NOTE: &str = "Webswing's `latency` starts when the frame is assembled on the server, not at the input: it is not the pilot's inputToPaint";

/// Reduces the files (read as one stream) into one table per metric (and instance).
pub fn run(opts: &StatsOptions) -> anyhow::Result<Vec<Table>> {
    let (groups, scans) = reduce(opts)?;
    Ok(vec![table(opts, &groups, &scans)])
}

/// `logs stats --format json`: every metric's summary with its unit, keyed by metric
/// name (`.metrics.latency.p50`), or by instance then metric with `--by-instance`
/// (`.instances["fixture-3"].encodeMs.p99`).
pub fn run_json(opts: &StatsOptions) -> anyhow::Result<serde_json::Value> {
    use serde_json::{json, Map, Value};
    let (groups, scans) = reduce(opts)?;
    let mut metrics = Map::new();
    let mut instances: Map<String, Value> = Map::new();
    for g in &groups {
        let stat = crate::streaming_json(&g.values);
        if stat.is_null() {
            continue;
        }
        let metric = String::from_utf8_lossy(&g.metric).into_owned();
        let unit = unit_of(&metric);
        let mut v = json!({ "unit": if unit.is_empty() { Value::Null } else { json!(unit) } });
        if let (Value::Object(o), Value::Object(st)) = (&mut v, stat) {
            o.extend(st);
        }
        if opts.by_instance {
            let inst = String::from_utf8_lossy(&g.instance).into_owned();
            if let Value::Object(m) = instances.entry(inst).or_insert_with(|| json!({})) {
                m.insert(metric, v);
            }
        } else {
            metrics.insert(metric, v);
        }
    }
    let samples: u64 = scans.iter().map(|s| s.records).sum();
    let mut notes = vec![QUANTILE_NOTE];
    if groups.iter().any(|g| g.metric == b"latency") {
        notes.push(LATENCY_NOTE);
    }
    Ok(arena_report::json::document(
        "logs.stats",
        json!({
            "by_instance": opts.by_instance,
            "samples": samples,
            "metrics": if opts.by_instance { Value::Null } else { Value::Object(metrics) },
            "instances": if opts.by_instance { Value::Object(instances) } else { Value::Null },
            "files": scans.iter().map(crate::scan_json).collect::<Vec<_>>(),
            "notes": notes,
        }),
    ))
}

/// Every (instance, metric) group of the files, sorted, and what was read of each file.
fn reduce(opts: &StatsOptions) -> anyhow::Result<(Vec<Group>, Vec<ScanReport>)> {
    let mut groups: Vec<Group> = Vec::new();
    let mut scans = Vec::new();
    for f in &opts.files {
        let mut parser = match &opts.pattern {
            Some(p) => StatsParser::with_pattern(p)?,
            None => StatsParser::webswing(),
        };
        let by_instance = opts.by_instance;
        let scan = scan_path(f, &mut parser, |_, r| {
            let inst: &[u8] = if by_instance { r.instance } else { b"" };
            // Few distinct metrics: a linear search beats hashing the key every line.
            match groups
                .iter_mut()
                .find(|g| g.metric == r.metric && g.instance == inst)
            {
                Some(g) => g.values.record(r.value),
                None => {
                    let mut values = StreamingSummary::new(1000.0);
                    values.record(r.value);
                    groups.push(Group {
                        instance: inst.to_vec(),
                        metric: r.metric.to_vec(),
                        values,
                    });
                }
            }
        })?;
        // Stats lines are a few among an application's log lines: any share will do.
        scan.require(StatsParser::KIND, scan.records, 0.0)?;
        scans.push(scan);
    }
    groups.sort_by(|a, b| a.instance.cmp(&b.instance).then(a.metric.cmp(&b.metric)));
    Ok((groups, scans))
}

fn table(opts: &StatsOptions, groups: &[Group], scans: &[ScanReport]) -> Table {
    let mut cols = Vec::new();
    if opts.by_instance {
        cols.push(Column::left("instance"));
    }
    for (name, right) in [
        ("metric", false),
        ("unit", false),
        ("n", true),
        ("mean", true),
        ("p50", true),
        ("p90", true),
        ("p99", true),
        ("max", true),
    ] {
        cols.push(if right {
            Column::right(name)
        } else {
            Column::left(name)
        });
    }
    let total: u64 = scans.iter().map(|s| s.records).sum();
    let mut t = Table::new(cols).with_title(format!(
        "Per-frame statistics per metric{} (n={} samples)",
        if opts.by_instance {
            " and instance"
        } else {
            ""
        },
        fmt_count(total as i64)
    ));
    let mut saw_latency = false;
    for g in groups {
        let Some(s) = g.values.summary() else {
            continue;
        };
        let metric = String::from_utf8_lossy(&g.metric).into_owned();
        saw_latency |= metric == "latency";
        let unit = unit_of(&metric);
        let mut row = Vec::new();
        if opts.by_instance {
            row.push(Cell::text(
                String::from_utf8_lossy(&g.instance).into_owned(),
            ));
        }
        row.push(Cell::text(metric));
        row.push(Cell::text(if unit.is_empty() { "as logged" } else { unit }));
        row.push(Cell::num(fmt_count(s.n as i64), s.n as f64));
        for v in [s.mean, s.p50, s.p90, s.p99, s.max] {
            row.push(Cell::num(fmt_value(unit, v), v));
        }
        t.push_row(row);
    }
    for scan in scans {
        crate::scan_notes(&mut t, scan, StatsParser::KIND);
    }
    t.note(QUANTILE_NOTE);
    if saw_latency {
        t.note(LATENCY_NOTE);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_with_and_without_prefix() {
        let r = parse_webswing(b"12-Mar-2021-10:15:42.123,inst-1,latency,57").unwrap();
        assert_eq!(
            (r.instance, r.metric, r.value),
            (&b"inst-1"[..], &b"latency"[..], 57.0)
        );
        let r2 = parse_webswing(b"2021-03-12 10:15:42,123 inst-1,latency,57").unwrap();
        assert_eq!(r.time, r2.time);
        let r = parse_webswing(b"match-1  | 12-Mar-2021-10:15:43.000,a,b,c,outboundSize,6057\r")
            .unwrap();
        assert_eq!((r.instance, r.value), (&b"a,b,c"[..], 6057.0));
        assert!((r.time.unwrap() - r2.time.unwrap() - 0.877).abs() < 1e-6);
        assert!(parse_webswing(b"12-Mar-2021-10:15:42.123,inst,latency,abc").is_none());
        assert!(parse_webswing(b"x,latency,57").is_none());
        assert!(parse_webswing(b"12-Foo-2021-10:15:42.123,i,latency,57").is_none());
        assert_eq!(
            parse_webswing(b"2021-03-12 10:15:42,123 i,cpuUtilization,1.5E-3")
                .unwrap()
                .value,
            0.0015
        );
    }

    #[test]
    fn the_fixture_matchs_lines() {
        // As `arena_fixture::stats::stats_lines` writes them (UTC, instance fixture-<conn>).
        let r = parse_webswing(b"12-Mar-2021-10:15:42.123,fixture-3,latencyServerRendering,3.000")
            .unwrap();
        assert_eq!(
            (r.instance, r.metric, r.value),
            (&b"fixture-3"[..], &b"latencyServerRendering"[..], 3.0)
        );
        let r = parse_webswing(b"12-Mar-2021-10:15:42.123,fixture-3,outboundSize,6120").unwrap();
        assert_eq!(r.value, 6120.0);
        assert_eq!(unit_of("encodeMs"), "ms");
        assert_eq!(unit_of("constantsSent"), "");
    }

    #[test]
    fn custom_pattern() {
        let mut p = StatsParser::with_pattern(r"t=(?P<time>\S+) (?P<metric>\w+)=(?P<value>[\d.]+)")
            .unwrap();
        let Parsed::Record(r) = p.parse(b"t=1.5 latency=12.5") else {
            panic!()
        };
        assert_eq!(
            (r.time, r.metric, r.value),
            (Some(1.5), &b"latency"[..], 12.5)
        );
        assert_eq!(p.parse(b"nothing"), Parsed::Unknown);
        assert!(StatsParser::with_pattern(r"(?P<metric>\w+)").is_err());
    }
}
