//! `logs classload`: `-Xlog:class+load` (any decorators; `=debug` lines tolerated), reduced
//! to a count, a span, time in gaps, sources (CDS, jrt modules, jars, hidden classes), top
//! packages and a classes-per-second timeline.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use arena_report::{fmt_count, Cell, Column, Table};

use crate::fmt_secs;
use crate::gc::short_name;
use crate::scan::{scan_path, LineParser, Parsed, ScanReport};
use crate::unified::{decorations, trim};

/// Where a class came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source<'a> {
    /// `shared objects file` (a CDS archive, base or dynamic).
    Cds,
    /// `jrt:/java.desktop`: a module of the runtime image.
    Module(&'a str),
    /// `file:/path/app.jar`, `jar:file:...!/`, a class directory.
    ClassPath(&'a str),
    /// Lambdas, LambdaForms, other hidden classes (`source: Foo`, `__JVM_LookupDefineClass__`).
    Hidden,
    /// Anything else (`instance of a.b.Loader`, an unusual code source).
    Other(&'a str),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClassLoad<'a> {
    pub time: Option<f64>,
    pub name: &'a str,
    pub source: Source<'a>,
}

#[derive(Debug, Default)]
pub struct ClassLoadParser;

impl LineParser for ClassLoadParser {
    type Record<'a> = ClassLoad<'a>;
    const KIND: &'static str = "a class-load log (-Xlog:class+load)";

    fn parse<'a>(&mut self, line: &'a [u8]) -> Parsed<ClassLoad<'a>> {
        let (time, msg) = match decorations(line) {
            Some(d) => {
                match d.tags {
                    Some(b"class,load") => {}
                    Some(t) if t.starts_with(b"class") => return Parsed::Known,
                    _ => return Parsed::Unknown,
                }
                // `=debug` adds a `klass: ... loader: ...` line per class.
                if d.level.is_some_and(|l| l != b"info") || d.message.starts_with(b" ") {
                    return Parsed::Known;
                }
                (d.time(), d.message)
            }
            None => (None, line),
        };
        match parse_message(msg) {
            Some((name, source)) => Parsed::Record(ClassLoad { time, name, source }),
            None => Parsed::Unknown,
        }
    }

    fn time_of(r: &ClassLoad<'_>) -> Option<f64> {
        r.time
    }
}

/// `java.lang.Object source: shared objects file` -> name and source.
pub fn parse_message(msg: &[u8]) -> Option<(&str, Source<'_>)> {
    let msg = std::str::from_utf8(trim(msg)).ok()?;
    let (name, src) = msg.split_once(" source: ")?;
    let name = name.trim();
    if name.is_empty() || name.contains(' ') {
        return None;
    }
    let src = src.trim();
    let source = if src.starts_with("shared objects file") {
        Source::Cds
    } else if let Some(m) = src.strip_prefix("jrt:/") {
        Source::Module(m)
    } else if let Some(p) = src.strip_prefix("jar:file:") {
        Source::ClassPath(p.trim_end_matches("!/"))
    } else if let Some(p) = src.strip_prefix("file:") {
        Source::ClassPath(p)
    } else if name.contains("/0x") || src.starts_with("__") || is_class_name(src) {
        // Hidden classes carry their host class (or a JVM marker) as the source.
        Source::Hidden
    } else {
        Source::Other(src)
    };
    Some((name, source))
}

fn is_class_name(s: &str) -> bool {
    !s.is_empty()
        && !s.contains([' ', ':', '/'])
        && s.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
}

/// The package prefix of a class name at `depth` components (`com.fasterxml.jackson`).
pub fn package_prefix(name: &str, depth: usize) -> &str {
    // Hidden classes end in `/0x...`; the package is what precedes the simple name.
    let name = name.split('/').next().unwrap_or(name);
    let Some(last_dot) = name.rfind('.') else {
        return "(default package)";
    };
    let pkg = &name[..last_dot];
    match pkg.match_indices('.').nth(depth.saturating_sub(1)) {
        Some((i, _)) if depth > 0 => &pkg[..i],
        _ => pkg,
    }
}

/// Options of `logs classload`.
#[derive(Debug, Clone)]
pub struct ClassLoadOptions {
    pub files: Vec<PathBuf>,
    /// Gaps between consecutive loads longer than this (seconds) are summed.
    pub gap: f64,
    pub top: usize,
    pub depth: usize,
    /// Timeline bucket, seconds.
    pub bucket: f64,
    pub plot: Option<PathBuf>,
    /// Class-name prefixes whose first load is reported with how many classes came before.
    pub marks: Vec<String>,
}

impl Default for ClassLoadOptions {
    fn default() -> Self {
        ClassLoadOptions {
            files: Vec::new(),
            gap: 0.3,
            top: 10,
            depth: 3,
            bucket: 1.0,
            plot: None,
            marks: Vec::new(),
        }
    }
}

/// Everything `logs classload` knows about one file.
#[derive(Debug, Clone, Default)]
pub struct ClassLoadSummary {
    pub scan: ScanReport,
    pub classes: u64,
    pub first: Option<f64>,
    pub last: Option<f64>,
    pub gaps: u64,
    pub gap_total: f64,
    /// Longest gap: (from, to) seconds.
    pub longest_gap: Option<(f64, f64)>,
    pub cds: u64,
    pub hidden: u64,
    pub modules: HashMap<String, u64>,
    pub class_path: HashMap<String, u64>,
    pub other: HashMap<String, u64>,
    pub packages: HashMap<Vec<u8>, u64>,
    /// Bucket index (from the first load) -> classes.
    pub timeline: BTreeMap<i64, u64>,
    /// Per mark: first time seen and classes loaded before it.
    pub marks: Vec<(String, Option<(f64, u64)>)>,
}

fn bump(map: &mut HashMap<String, u64>, key: &str) {
    match map.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            map.insert(key.to_string(), 1);
        }
    }
}

pub fn summarize(
    path: &std::path::Path,
    opts: &ClassLoadOptions,
) -> anyhow::Result<ClassLoadSummary> {
    let mut s = ClassLoadSummary {
        marks: opts.marks.iter().map(|m| (m.clone(), None)).collect(),
        ..ClassLoadSummary::default()
    };
    let mut prev: Option<f64> = None;
    let mut origin: Option<f64> = None;
    let bucket = if opts.bucket > 0.0 { opts.bucket } else { 1.0 };
    let scan = scan_path(path, &mut ClassLoadParser, |_, r| {
        s.classes += 1;
        if let Some(t) = r.time {
            // Buckets and marks count from the first line; first/last are the extremes,
            // so a clock that steps back still gives an honest span.
            let first = *origin.get_or_insert(t);
            s.first = Some(s.first.map_or(t, |f| f.min(t)));
            s.last = Some(s.last.map_or(t, |l| l.max(t)));
            if let Some(p) = prev {
                let gap = t - p;
                if gap > opts.gap {
                    s.gaps += 1;
                    s.gap_total += gap;
                    if s.longest_gap.is_none_or(|(a, b)| b - a < gap) {
                        s.longest_gap = Some((p - first, t - first));
                    }
                }
            }
            prev = Some(t);
            *s.timeline
                .entry(((t - first) / bucket).floor() as i64)
                .or_insert(0) += 1;
        }
        match r.source {
            Source::Cds => s.cds += 1,
            Source::Hidden => s.hidden += 1,
            Source::Module(m) => bump(&mut s.modules, m),
            Source::ClassPath(p) => bump(&mut s.class_path, p),
            Source::Other(o) => bump(&mut s.other, o),
        }
        let pkg = package_prefix(r.name, opts.depth).as_bytes();
        match s.packages.get_mut(pkg) {
            Some(n) => *n += 1,
            None => {
                s.packages.insert(pkg.to_vec(), 1);
            }
        }
        for (prefix, seen) in s.marks.iter_mut() {
            if seen.is_none() && r.name.starts_with(prefix.as_str()) {
                let rel = r.time.zip(origin).map_or(0.0, |(t, f)| t - f);
                *seen = Some((rel, s.classes - 1));
            }
        }
    })?;
    s.scan = scan;
    // `-Xlog:class+load` shares its output with other tags: any share will do.
    s.scan.require(ClassLoadParser::KIND, s.classes, 0.0)?;
    Ok(s)
}

fn top<K: Clone + Ord>(map: &HashMap<K, u64>, n: usize) -> (Vec<(K, u64)>, u64) {
    let mut v: Vec<(K, u64)> = map.iter().map(|(k, c)| (k.clone(), *c)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let rest: u64 = v.iter().skip(n).map(|x| x.1).sum();
    v.truncate(n);
    (v, rest)
}

fn share(n: u64, of: u64) -> Cell {
    let pct = if of == 0 {
        0.0
    } else {
        n as f64 / of as f64 * 100.0
    };
    Cell::num(format!("{pct:.1} %"), pct)
}

fn count_cell(n: u64) -> Cell {
    Cell::num(fmt_count(n as i64), n as f64)
}

pub fn run(opts: &ClassLoadOptions) -> anyhow::Result<Vec<Table>> {
    let sums = summarize_all(opts)?;
    let mut tables = vec![overview(&sums, opts)];
    for s in &sums {
        tables.push(sources_table(s, opts));
        tables.push(packages_table(s, opts));
        tables.push(timeline_table(s, opts));
    }
    Ok(tables)
}

/// `logs classload --format json`: per file its counts, span and gaps (seconds on the
/// log's clock), classes by source, the top packages, the timeline and the marks.
pub fn run_json(opts: &ClassLoadOptions) -> anyhow::Result<serde_json::Value> {
    use serde_json::json;
    let sums = summarize_all(opts)?;
    let files: Vec<_> = sums.iter().map(|s| file_json(s, opts)).collect();
    Ok(arena_report::json::document(
        "logs.classload",
        json!({
            "gap_s": opts.gap,
            "bucket_s": opts.bucket,
            "depth": opts.depth,
            "top": opts.top,
            "files": files,
        }),
    ))
}

fn file_json(s: &ClassLoadSummary, opts: &ClassLoadOptions) -> serde_json::Value {
    use serde_json::{json, Map, Value};
    let counts = |map: &HashMap<String, u64>| -> Value {
        let (top, rest) = top(map, opts.top);
        json!({
            "classes": map.values().sum::<u64>(),
            "top": top.into_iter().map(|(k, n)| json!({ "name": k, "classes": n })).collect::<Vec<_>>(),
            "rest": rest,
        })
    };
    let (packages, rest) = top(&s.packages, opts.top);
    let packages: Vec<_> = packages
        .into_iter()
        .map(|(k, n)| json!({ "package": String::from_utf8_lossy(&k), "classes": n }))
        .collect();
    let timeline: Vec<_> = s
        .timeline
        .iter()
        .map(|(idx, n)| json!({ "from_s": *idx as f64 * opts.bucket, "classes": n }))
        .collect();
    let marks: Vec<_> = s
        .marks
        .iter()
        .map(|(prefix, m)| {
            json!({
                "prefix": prefix,
                "first_s": m.map(|x| x.0),
                "classes_before": m.map(|x| x.1),
            })
        })
        .collect();
    let mut sources = Map::new();
    sources.insert("cds".into(), json!(s.cds));
    sources.insert("modules".into(), counts(&s.modules));
    sources.insert("class_path".into(), counts(&s.class_path));
    sources.insert("other".into(), counts(&s.other));
    sources.insert("hidden".into(), json!(s.hidden));
    json!({
        "file": s.scan.file,
        "classes": s.classes,
        "first_s": s.first,
        "last_s": s.last,
        "span_s": s.first.zip(s.last).map(|(a, b)| b - a),
        "gaps": s.gaps,
        "gap_total_s": s.gap_total,
        "longest_gap": s.longest_gap.map(|(a, b)| json!({ "from_s": a, "to_s": b, "length_s": b - a })),
        "sources": sources,
        "packages": { "top": packages, "rest": rest },
        "timeline": timeline,
        "marks": marks,
        "scan": crate::scan_json(&s.scan),
    })
}

/// Every file summarized; the timeline plot, when asked for, is written here.
fn summarize_all(opts: &ClassLoadOptions) -> anyhow::Result<Vec<ClassLoadSummary>> {
    let mut sums = Vec::new();
    for f in &opts.files {
        sums.push(summarize(f, opts)?);
    }
    if let Some(plot) = &opts.plot {
        let svg = crate::classload::timeline_svg(&sums, opts.bucket);
        std::fs::write(plot, svg).map_err(|e| {
            arena_report::Exit::bad_input(format!("{}: cannot write plot: {e}", plot.display()))
        })?;
    }
    Ok(sums)
}

fn overview(sums: &[ClassLoadSummary], opts: &ClassLoadOptions) -> Table {
    let mut cols = vec![Column::left("")];
    cols.extend(sums.iter().map(|s| Column::right(short_name(&s.scan.file))));
    let mut t = Table::new(cols).with_title("Class loading");
    let mut row = |label: String, cell: &dyn Fn(&ClassLoadSummary) -> Cell| {
        let mut r = vec![Cell::text(label)];
        r.extend(sums.iter().map(cell));
        t.push_row(r);
    };
    let secs = |v: Option<f64>| v.map_or(Cell::text("-"), |x| Cell::num(fmt_secs(x), x));
    row("classes (n)".into(), &|s| count_cell(s.classes));
    row("first load (log clock)".into(), &|s| secs(s.first));
    row("last load (log clock)".into(), &|s| secs(s.last));
    row("span".into(), &|s| {
        secs(s.first.zip(s.last).map(|(a, b)| b - a))
    });
    row(format!("gaps over {} s (n)", opts.gap), &|s| {
        count_cell(s.gaps)
    });
    row(format!("time in gaps over {} s", opts.gap), &|s| {
        Cell::num(fmt_secs(s.gap_total), s.gap_total)
    });
    row("longest gap".into(), &|s| match s.longest_gap {
        Some((a, b)) => Cell::num(
            format!("{} ({}-{})", fmt_secs(b - a), fmt_secs(a), fmt_secs(b)),
            b - a,
        ),
        None => Cell::text("-"),
    });
    row("from the CDS archive".into(), &|s| {
        let text = format!(
            "{} of {}",
            fmt_count(s.cds as i64),
            fmt_count(s.classes as i64)
        );
        Cell::num(text, s.cds as f64)
    });
    row("hidden/lambda classes".into(), &|s| count_cell(s.hidden));
    for (i, m) in opts.marks.iter().enumerate() {
        let label = format!("first `{m}` class (s, classes before it)");
        row(label, &|s| match s.marks.get(i).and_then(|x| x.1) {
            Some((t, before)) => Cell::num(
                format!("{} after {}", fmt_secs(t), fmt_count(before as i64)),
                t,
            ),
            None => Cell::text("never"),
        });
    }
    for s in sums {
        crate::scan_notes(&mut t, &s.scan, ClassLoadParser::KIND);
    }
    t.note("times in seconds on the log's clock (uptime when decorated, else wall time)");
    t
}

fn sources_table(s: &ClassLoadSummary, opts: &ClassLoadOptions) -> Table {
    let mut t = Table::new(vec![
        Column::left("source"),
        Column::left("detail"),
        Column::right("classes"),
        Column::right("share"),
    ])
    .with_title(format!(
        "Classes by source: {} (n={})",
        short_name(&s.scan.file),
        fmt_count(s.classes as i64)
    ));
    let n = s.classes;
    t.push_row(vec![
        "CDS archive".into(),
        "shared objects file".into(),
        count_cell(s.cds),
        share(s.cds, n),
    ]);
    let mut group = |label: &str, map: &HashMap<String, u64>, prefix: &str| {
        let total: u64 = map.values().sum();
        if total == 0 {
            return;
        }
        t.push_row(vec![
            Cell::text(label).strong(),
            Cell::text(""),
            count_cell(total).strong(),
            share(total, n),
        ]);
        let (top, rest) = top(map, opts.top);
        for (k, c) in top {
            t.push_row(vec![
                Cell::text(""),
                Cell::text(format!("{prefix}{k}")),
                count_cell(c),
                share(c, n),
            ]);
        }
        if rest > 0 {
            t.push_row(vec![
                Cell::text(""),
                Cell::text("(the rest)"),
                count_cell(rest),
                share(rest, n),
            ]);
        }
    };
    group("runtime modules", &s.modules, "jrt:/");
    group("class path", &s.class_path, "");
    group("other", &s.other, "");
    t.push_row(vec![
        "hidden/lambda".into(),
        "lambdas, LambdaForms, hidden classes".into(),
        count_cell(s.hidden),
        share(s.hidden, n),
    ]);
    t
}

fn packages_table(s: &ClassLoadSummary, opts: &ClassLoadOptions) -> Table {
    let mut t = Table::new(vec![
        Column::left("package"),
        Column::right("classes"),
        Column::right("share"),
    ])
    .with_title(format!(
        "Top {} packages (first {} name components): {}",
        opts.top,
        opts.depth,
        short_name(&s.scan.file)
    ));
    let (top, rest) = top(&s.packages, opts.top);
    for (k, c) in top {
        t.push_row(vec![
            Cell::text(String::from_utf8_lossy(&k).into_owned()),
            count_cell(c),
            share(c, s.classes),
        ]);
    }
    if rest > 0 {
        t.push_row(vec![
            Cell::text("(the rest)"),
            count_cell(rest),
            share(rest, s.classes),
        ]);
    }
    t
}

fn timeline_table(s: &ClassLoadSummary, opts: &ClassLoadOptions) -> Table {
    let mut t = Table::new(vec![
        Column::left("from"),
        Column::right("classes"),
        Column::right("cumulative"),
    ])
    .with_title(format!(
        "Classes loaded per {} s: {} (seconds after the first load)",
        opts.bucket,
        short_name(&s.scan.file)
    ));
    let mut cum = 0u64;
    for (idx, c) in &s.timeline {
        cum += c;
        let from = *idx as f64 * opts.bucket;
        t.push_row(vec![
            Cell::num(fmt_secs(from), from),
            count_cell(*c),
            count_cell(cum),
        ]);
    }
    if s.timeline.is_empty() {
        t.note("no timed lines: the log has no uptime or time decoration");
    } else {
        t.note("empty buckets are left out");
    }
    t
}

/// A bar chart of classes per bucket, one colour per file, as a standalone SVG.
pub fn timeline_svg(sums: &[ClassLoadSummary], bucket: f64) -> String {
    let (w, h, pad) = (900.0f64, 360.0f64, 50.0f64);
    let max_idx = sums
        .iter()
        .filter_map(|s| s.timeline.keys().next_back())
        .copied()
        .max()
        .unwrap_or(0)
        .max(0);
    let max_n = sums
        .iter()
        .flat_map(|s| s.timeline.values())
        .copied()
        .max()
        .unwrap_or(1)
        .max(1);
    let buckets = (max_idx + 1) as f64;
    let bw = (w - 2.0 * pad) / buckets / sums.len().max(1) as f64;
    let colours = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2"];
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{pad}\" y=\"20\" font-size=\"14\">Classes loaded per {bucket} s</text>\n"
    );
    let y0 = h - pad;
    out.push_str(&format!(
        "<line x1=\"{pad}\" y1=\"{y0}\" x2=\"{}\" y2=\"{y0}\" stroke=\"black\"/>\n<line x1=\"{pad}\" y1=\"{pad}\" x2=\"{pad}\" y2=\"{y0}\" stroke=\"black\"/>\n",
        w - pad
    ));
    out.push_str(&format!(
        "<text x=\"5\" y=\"{}\">{max_n}</text>\n<text x=\"5\" y=\"{y0}\">0</text>\n",
        pad + 4.0
    ));
    out.push_str(&format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} s</text>\n",
        w - pad,
        h - pad / 2.0,
        fmt_secs(buckets * bucket)
    ));
    for (fi, s) in sums.iter().enumerate() {
        let c = colours[fi % colours.len()];
        for (idx, n) in &s.timeline {
            if *idx < 0 {
                continue;
            }
            let bh = (*n as f64 / max_n as f64) * (h - 2.0 * pad);
            let x = pad + (*idx as f64 * sums.len() as f64 + fi as f64) * bw;
            out.push_str(&format!(
                "<rect x=\"{x:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{bh:.2}\" fill=\"{c}\"><title>{}: {n} classes at {}</title></rect>\n",
                y0 - bh,
                bw.max(0.5),
                xml_escape(&short_name(&s.scan.file)),
                fmt_secs(*idx as f64 * bucket)
            ));
        }
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" fill=\"{c}\">{}</text>\n",
            w - 250.0,
            pad + 14.0 * fi as f64,
            xml_escape(&short_name(&s.scan.file))
        ));
    }
    out.push_str("</svg>\n");
    out
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(l: &str) -> Parsed<ClassLoad<'_>> {
        ClassLoadParser.parse(l.as_bytes())
    }

    #[test]
    fn sources() {
        let Parsed::Record(r) =
            parse("[0.058s][info][class,load] java.lang.Object source: shared objects file")
        else {
            panic!()
        };
        assert_eq!(
            (r.time, r.name, r.source),
            (Some(0.058), "java.lang.Object", Source::Cds)
        );
        let Parsed::Record(r) = parse("[0.1s][info][class,load] a.B source: jrt:/java.desktop")
        else {
            panic!()
        };
        assert_eq!(r.source, Source::Module("java.desktop"));
        let Parsed::Record(r) =
            parse("[0.1s][info][class,load] Loader source: file:/tmp/jv/loader.jar")
        else {
            panic!()
        };
        assert_eq!(r.source, Source::ClassPath("/tmp/jv/loader.jar"));
        let Parsed::Record(r) =
            parse("[0.071s][info][class,load] Loader$$Lambda$1/0x00007fe658000a08 source: Loader")
        else {
            panic!()
        };
        assert_eq!(r.source, Source::Hidden);
        let Parsed::Record(r) = parse("[0.07s][info][class,load] java.lang.invoke.LambdaForm$MH/0x00007fe658000400 source: __JVM_LookupDefineClass__") else { panic!() };
        assert_eq!(r.source, Source::Hidden);
        let Parsed::Record(r) =
            parse("[0.07s][info][class,load] x.Y source: instance of a.b.Loader")
        else {
            panic!()
        };
        assert_eq!(r.source, Source::Other("instance of a.b.Loader"));
    }

    #[test]
    fn debug_lines_and_other_kinds() {
        assert_eq!(parse("[2026-11-29T18:58:13.014+0000][0.014s][debug][class,load]  klass: 0x00007f25e7000d68 super: 0x0"), Parsed::Known);
        assert_eq!(parse("[0.053s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 7M->2M(66M) 1.232ms"), Parsed::Unknown);
        assert_eq!(parse("lambda1"), Parsed::Unknown);
    }

    #[test]
    fn packages() {
        assert_eq!(
            package_prefix("com.fasterxml.jackson.core.JsonParser", 3),
            "com.fasterxml.jackson"
        );
        assert_eq!(
            package_prefix("java.lang.invoke.LambdaForm$MH/0x1", 2),
            "java.lang"
        );
        assert_eq!(
            package_prefix("Loader$$Lambda$1/0x00007fe658000a08", 3),
            "(default package)"
        );
        assert_eq!(package_prefix("a.B", 3), "a");
        assert_eq!(package_prefix("a.b.c.d.E", 0), "a.b.c.d");
    }
}
