//! The one line reader every log kind goes through: byte-level, constant memory, and the
//! same "lines not understood" accounting for every format.
//!
//! A parser only says what one line is ([`Parsed`]); the scanner owns line splitting (LF
//! or CRLF), line numbers, the bounded sample of lines it could not read, clocks going
//! backwards, binary junk and a truncated last line, so every reducer reports bad input in
//! the same words and at the same speed.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;

use arena_report::{fmt_count, Exit};

use crate::input;

/// How many not-understood lines are kept, with their line numbers, for the message.
pub const SAMPLE_LINES: usize = 3;
/// Longer lines are not buffered (memory stays bounded); they count as not understood.
pub const MAX_LINE: usize = 16 << 20;
const CHUNK: usize = 1 << 20;
const FIRST_CHUNK: usize = 16 << 10;
const SAMPLE_CHARS: usize = 120;

/// What one line turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed<R> {
    /// A line that produced a typed record.
    Record(R),
    /// A line of this log kind that carries nothing this reducer uses.
    Known,
    /// A line this reducer cannot read.
    Unknown,
}

/// A parser for one log kind: one line in, one typed record (or a verdict) out.
///
/// Lines come without their terminator (LF, and a CR before it, are stripped). Records may
/// borrow from the line, so the hot path allocates nothing.
pub trait LineParser {
    type Record<'a>;
    /// What the kind is called in messages ("a GC log").
    const KIND: &'static str;
    fn parse<'a>(&mut self, line: &'a [u8]) -> Parsed<Self::Record<'a>>;
    /// The record's time in seconds on the log's own clock, if it has one; the scanner uses
    /// it to notice clocks going backwards.
    fn time_of(record: &Self::Record<'_>) -> Option<f64>;
}

/// A line the reducer could not read, kept for the message.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub line: u64,
    pub text: String,
}

/// What reading one file looked like, whatever the kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScanReport {
    pub file: String,
    pub bytes: u64,
    pub lines: u64,
    pub records: u64,
    pub known: u64,
    pub unknown: u64,
    pub samples: Vec<Sample>,
    pub crlf_lines: u64,
    /// The file did not end with a newline (a log cut off mid-write).
    pub truncated_last_line: bool,
    /// Lines holding NUL bytes: binary, not text.
    pub binary_lines: u64,
    /// Records whose time was earlier than the record before them.
    pub backwards: u64,
    /// The first of those: line, its time, the time before it.
    pub first_backwards: Option<(u64, f64, f64)>,
    pub first_time: Option<f64>,
    pub last_time: Option<f64>,
    /// Line of the first timed record, and the time of the last one (to check the seam
    /// between chunks read in parallel).
    pub first_time_line: u64,
    pub last_seen_time: Option<f64>,
}

impl ScanReport {
    /// Lines the reducer understood (records plus known lines of the kind).
    pub fn understood(&self) -> u64 {
        self.records + self.known
    }

    /// One sentence on what could not be read, or `None` when everything was.
    pub fn problems(&self, kind: &str) -> Option<String> {
        let mut parts = Vec::new();
        if self.unknown > 0 {
            let mut s = format!(
                "{} of {} lines not understood as {kind}",
                self.unknown, self.lines
            );
            if self.binary_lines > 0 {
                s.push_str(&format!(" ({} hold binary NUL bytes)", self.binary_lines));
            }
            let first: Vec<String> = self
                .samples
                .iter()
                .map(|s| format!("line {}: {:?}", s.line, s.text))
                .collect();
            if !first.is_empty() {
                s.push_str(&format!("; first: {}", first.join(", ")));
            }
            parts.push(s);
        }
        if let Some((line, t, prev)) = self.first_backwards {
            parts.push(format!(
                "time goes backwards {} times (first at line {line}: {t:.3}s after {prev:.3}s)",
                self.backwards
            ));
        }
        if self.truncated_last_line {
            parts.push(format!("last line ({}) has no newline", self.lines));
        }
        if parts.is_empty() {
            None
        } else {
            Some(format!("{}: {}", self.file, parts.join("; ")))
        }
    }

    /// The one "nothing understood" rule, the same for every reducer: exit 2 when the
    /// file holds nothing the reducer counts (`understood`: its records, or for GC logs
    /// its lines of GC logging), and, for formats that hold nothing but records
    /// (`min_share` > 0: collapsed stacks), when fewer than that share of the lines that
    /// are not blank was understood: a text that merely has a few lines of the right
    /// shape is not a log of this kind.
    pub fn require(&self, kind: &str, understood: u64, min_share: f64) -> Result<(), Exit> {
        if understood == 0 {
            return Err(self.nothing_understood(kind));
        }
        let judged = understood + self.unknown;
        if (understood as f64) < min_share * judged as f64 {
            let msg = format!(
                "{}: nothing understood as {kind}: only {} of {} non-blank lines understood \
                 ({:.1} %, under the {:.0} % a file of this kind needs)",
                self.file,
                fmt_count(understood as i64),
                fmt_count(judged as i64),
                understood as f64 / judged as f64 * 100.0,
                min_share * 100.0,
            );
            return Err(self.with_samples(msg, kind));
        }
        Ok(())
    }

    /// The exit-2 error for a file in which nothing was understood.
    pub fn nothing_understood(&self, kind: &str) -> Exit {
        if self.bytes == 0 {
            return Exit::bad_input(format!("{}: empty file, expected {kind}", self.file));
        }
        let msg = format!(
            "{}: nothing understood as {kind}: {} of {} lines not understood",
            self.file, self.unknown, self.lines
        );
        self.with_samples(msg, kind)
    }

    /// `msg`, then the first lines not understood and which reducer they look like.
    fn with_samples(&self, mut msg: String, kind: &str) -> Exit {
        if self.binary_lines > 0 {
            msg.push_str(&format!(
                " ({} hold binary NUL bytes: not a text log)",
                self.binary_lines
            ));
        }
        for s in &self.samples {
            msg.push_str(&format!("\n  line {}: {:?}", s.line, s.text));
        }
        if let Some(other) = sniff(self.samples.iter().map(|s| s.text.as_str())) {
            if !kind.contains(other.0) {
                msg.push_str(&format!(
                    "\n  these look like {}: try `arena-perf logs {}`",
                    other.0, other.1
                ));
            }
        }
        Exit::bad_input(msg)
    }
}

/// Guesses which kind of log some sample lines are, for a better message.
fn sniff<'a>(lines: impl Iterator<Item = &'a str>) -> Option<(&'static str, &'static str)> {
    for l in lines {
        if l.contains("][class,load") || l.contains("][class,load ") {
            return Some(("a class-load log", "classload"));
        }
        if l.contains("][gc") || l.contains(" Pause Young") || l.contains(" Pause Full") {
            return Some(("a GC log", "gc"));
        }
        if l.contains(",latency") || l.contains(",outboundSize,") || l.contains(",inboundSize,") {
            return Some(("per-frame stats lines", "stats"));
        }
        if l.contains(';')
            && l.rsplit(' ')
                .next()
                .is_some_and(|c| c.parse::<u64>().is_ok())
        {
            return Some(("collapsed stacks", "profile"));
        }
    }
    None
}

/// Streams `reader` through `parser`, handing every record to `sink` with its line number.
pub fn scan<P, R, F>(
    name: &str,
    mut reader: R,
    parser: &mut P,
    mut sink: F,
) -> io::Result<ScanReport>
where
    P: LineParser,
    R: Read,
    F: FnMut(u64, P::Record<'_>),
{
    let mut rep = ScanReport {
        file: name.to_string(),
        ..ScanReport::default()
    };
    // Small inputs (one slice, a short log) should not pay for zeroing a megabyte: start
    // small and take the full block once a read fills the buffer.
    let mut buf: Vec<u8> = vec![0; FIRST_CHUNK];
    let mut start = 0usize; // first byte of the line being assembled
    let mut filled = 0usize;
    // Set while discarding the rest of an over-long line.
    let mut skipping = false;
    let mut prev_time: Option<f64> = None;

    let mut on_line = |line: &[u8], rep: &mut ScanReport, over_long: bool| {
        rep.lines += 1;
        let mut line = line;
        if let [rest @ .., b'\r'] = line {
            line = rest;
            rep.crlf_lines += 1;
        }
        let verdict = if over_long {
            Parsed::Unknown
        } else {
            parser.parse(line)
        };
        match verdict {
            Parsed::Record(r) => {
                rep.records += 1;
                if let Some(t) = P::time_of(&r) {
                    note_time(rep, &mut prev_time, t);
                }
                sink(rep.lines, r);
            }
            Parsed::Known => rep.known += 1,
            Parsed::Unknown => note_unknown(rep, line, over_long),
        }
    };

    loop {
        if filled == buf.len() {
            if start > 0 {
                buf.copy_within(start..filled, 0);
                filled -= start;
                start = 0;
            } else if buf.len() < MAX_LINE {
                let n = (buf.len() * 2).min(MAX_LINE);
                buf.resize(n, 0);
            } else {
                // A line longer than MAX_LINE: count it once, drop what we have of it.
                on_line(&buf[..64], &mut rep, true);
                skipping = true;
                filled = 0;
            }
        }
        let n = match read_some(&mut reader, &mut buf[filled..], rep.lines)? {
            0 => break,
            n => n,
        };
        rep.bytes += n as u64;
        let filled_up = filled + n == buf.len();
        let scan_from = filled;
        filled += n;
        for nl in memchr::memchr_iter(b'\n', &buf[scan_from..filled]) {
            let end = scan_from + nl;
            if skipping {
                skipping = false;
            } else {
                on_line(&buf[start..end], &mut rep, false);
            }
            start = end + 1;
        }
        if skipping {
            start = filled;
        }
        if start == filled {
            start = 0;
            filled = 0;
        }
        if filled_up && buf.len() < CHUNK {
            buf.resize(CHUNK, 0);
        }
    }
    if start < filled && !skipping {
        rep.truncated_last_line = true;
        on_line(&buf[start..filled], &mut rep, false);
    }
    Ok(rep)
}

/// A record's time: the first, the last, and any step backwards.
fn note_time(rep: &mut ScanReport, prev_time: &mut Option<f64>, t: f64) {
    if rep.first_time.is_none() {
        rep.first_time = Some(t);
        rep.first_time_line = rep.lines;
    }
    if let Some(p) = *prev_time {
        if t < p {
            rep.backwards += 1;
            if rep.first_backwards.is_none() {
                rep.first_backwards = Some((rep.lines, t, p));
            }
        }
    }
    *prev_time = Some(t);
    rep.last_seen_time = Some(t);
    rep.last_time = Some(rep.last_time.map_or(t, |l: f64| l.max(t)));
}

/// A line no parser knew: counted, and kept as a sample while there is room.
fn note_unknown(rep: &mut ScanReport, line: &[u8], over_long: bool) {
    rep.unknown += 1;
    if memchr::memchr(0, line).is_some() {
        rep.binary_lines += 1;
    }
    if rep.samples.len() < SAMPLE_LINES {
        let text = String::from_utf8_lossy(&line[..line.len().min(SAMPLE_CHARS * 4)]);
        let mut text: String = text.chars().take(SAMPLE_CHARS).collect();
        if over_long || line.len() > text.len() {
            text.push('…');
        }
        rep.samples.push(Sample {
            line: rep.lines,
            text,
        });
    }
}

/// One read, retried on EINTR; 0 at the end. An error says how far the text got (for
/// gzip these are lines of the decompressed text).
fn read_some(reader: &mut impl Read, buf: &mut [u8], lines: u64) -> io::Result<usize> {
    loop {
        match reader.read(buf) {
            Ok(n) => {
                crate::progress::add(n as u64);
                return Ok(n);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if lines > 0 => {
                return Err(io::Error::new(e.kind(), format!("{e}, after line {lines}")))
            }
            Err(e) => return Err(e),
        }
    }
}

/// [`scan`] over a file, a pipe, stdin (`-`) or a gzip file ([`input::open`]), in one
/// pass; a binary file is refused before any line is read. Errors name the file.
pub fn scan_path<P, F>(path: &Path, parser: &mut P, sink: F) -> anyhow::Result<ScanReport>
where
    P: LineParser,
    F: FnMut(u64, P::Record<'_>),
{
    let input = input::open(path, P::KIND)?;
    scan_input(input, parser, sink)
}

fn scan_input<P, F>(input: input::Input, parser: &mut P, sink: F) -> anyhow::Result<ScanReport>
where
    P: LineParser,
    F: FnMut(u64, P::Record<'_>),
{
    let name = input.name;
    scan(&name, input.reader, parser, sink)
        .map_err(|e| Exit::bad_input(format!("{name}: {e}")).into())
}

impl ScanReport {
    /// Appends the report of the chunk that followed this one in the same file.
    fn append(&mut self, later: ScanReport) {
        let offset = self.lines;
        if let (Some(prev), Some(next)) = (self.last_seen_time, later.first_time) {
            if next < prev {
                self.backwards += 1;
                if self.first_backwards.is_none() {
                    self.first_backwards = Some((offset + later.first_time_line, next, prev));
                }
            }
        }
        if self.first_backwards.is_none() {
            self.first_backwards = later.first_backwards.map(|(l, t, p)| (l + offset, t, p));
        }
        self.backwards += later.backwards;
        for smp in later.samples {
            if self.samples.len() < SAMPLE_LINES {
                self.samples.push(Sample {
                    line: smp.line + offset,
                    text: smp.text,
                });
            }
        }
        if self.first_time.is_none() && later.first_time.is_some() {
            self.first_time = later.first_time;
            self.first_time_line = later.first_time_line + offset;
        }
        self.last_time = match (self.last_time, later.last_time) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.last_seen_time = later.last_seen_time.or(self.last_seen_time);
        self.bytes += later.bytes;
        self.lines += later.lines;
        self.records += later.records;
        self.known += later.known;
        self.unknown += later.unknown;
        self.crlf_lines += later.crlf_lines;
        self.binary_lines += later.binary_lines;
        self.truncated_last_line = later.truncated_last_line;
    }
}

/// A reducer's running state that can be split across chunks of one file and merged back.
pub trait Fold<P: LineParser>: Send {
    fn add(&mut self, rec: P::Record<'_>);
    /// Folds in the state of the chunk that came after this one.
    fn merge(&mut self, later: Self);
}

/// Below this size a file is read on one thread: splitting costs more than it saves.
pub const PARALLEL_MIN_BYTES: u64 = 64 << 20;

/// Reads `path` (any input [`input::open`] takes) into one fold, and returns the parsers
/// too (in order) for state they keep.
///
/// A plain regular file can be read at offsets, so with `threads` > 1 it is read in up to
/// that many chunks split at line boundaries, each on its own thread with its own parser
/// and fold, merged in file order; line numbers in the report are the file's own. Every
/// other input (a pipe, stdin, gzip) has no offsets to jump to and is read in one pass on
/// this thread.
pub fn scan_path_parallel<P, F>(
    path: &Path,
    threads: usize,
    make_parser: impl Fn() -> P + Sync,
    make_fold: impl Fn() -> F + Sync,
) -> anyhow::Result<(ScanReport, F, Vec<P>)>
where
    P: LineParser + Send,
    F: Fold<P>,
{
    let mut input = input::open(path, P::KIND)?;
    let (file, len) = match input.plain_file.take_if(|(_, len)| threads > 1 && *len > 0) {
        Some(f) => f,
        None => {
            let mut parser = make_parser();
            let mut fold = make_fold();
            let rep = scan_input(input, &mut parser, |_, r| fold.add(r))?;
            return Ok((rep, fold, vec![parser]));
        }
    };
    let name = input.name;
    let bounds = chunk_bounds(&file, len, threads)
        .map_err(|e| Exit::bad_input(format!("{name}: read failed: {e}")))?;
    let results: Vec<anyhow::Result<(ScanReport, F, P)>> = std::thread::scope(|sc| {
        let handles: Vec<_> = bounds
            .windows(2)
            .map(|w| {
                let (file, name, make_parser, make_fold) = (&file, &name, &make_parser, &make_fold);
                let chunk = At {
                    file,
                    pos: w[0],
                    end: w[1],
                };
                sc.spawn(move || -> anyhow::Result<(ScanReport, F, P)> {
                    let mut parser = make_parser();
                    let mut fold = make_fold();
                    let rep = scan(name, chunk, &mut parser, |_, r| fold.add(r))
                        .map_err(|e| Exit::bad_input(format!("{name}: read failed: {e}")))?;
                    Ok((rep, fold, parser))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("{name}: a reader thread failed")))
            })
            .collect()
    });
    merge_chunks(results, make_fold)
}

/// Folds the chunks' results together in file order.
fn merge_chunks<P, F: Fold<P>>(
    results: Vec<anyhow::Result<(ScanReport, F, P)>>,
    make_fold: impl Fn() -> F,
) -> anyhow::Result<(ScanReport, F, Vec<P>)>
where
    P: LineParser,
{
    let mut report: Option<ScanReport> = None;
    let mut fold: Option<F> = None;
    let mut parsers = Vec::new();
    for r in results {
        let (rep, f, p) = r?;
        match report.as_mut() {
            None => report = Some(rep),
            Some(acc) => acc.append(rep),
        }
        match fold.as_mut() {
            None => fold = Some(f),
            Some(acc) => acc.merge(f),
        }
        parsers.push(p);
    }
    let report = report.unwrap_or_default();
    let fold = fold.unwrap_or_else(make_fold);
    Ok((report, fold, parsers))
}

/// One chunk of a regular file, read with positional reads: the threads share one file
/// descriptor and none of them moves a file offset.
struct At<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = buf.len().min((self.end - self.pos) as usize);
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Byte offsets `0 = b0 < b1 < ... = len`, each boundary just after a newline.
fn chunk_bounds(f: &File, len: u64, threads: usize) -> io::Result<Vec<u64>> {
    let mut bounds = vec![0u64];
    let mut buf = vec![0u8; 64 << 10];
    for k in 1..threads as u64 {
        let mut pos = (len * k / threads as u64).max(*bounds.last().unwrap_or(&0));
        let boundary = loop {
            let n = f.read_at(&mut buf, pos)?;
            if n == 0 {
                break len;
            }
            if let Some(i) = memchr::memchr(b'\n', &buf[..n]) {
                break pos + i as u64 + 1;
            }
            pos += n as u64;
        };
        if boundary > *bounds.last().unwrap_or(&0) && boundary < len {
            bounds.push(boundary);
        }
    }
    bounds.push(len);
    Ok(bounds)
}

/// How many threads a reducer uses on `path`: one below [`PARALLEL_MIN_BYTES`], else the
/// machine's parallelism, at most 4.
pub fn threads_for(path: &Path) -> usize {
    match std::fs::metadata(path) {
        Ok(m) if m.len() >= PARALLEL_MIN_BYTES => std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(4),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Understands lines that are a number; knows "#" comments.
    struct Numbers;
    impl LineParser for Numbers {
        type Record<'a> = f64;
        const KIND: &'static str = "numbers";
        fn parse(&mut self, line: &[u8]) -> Parsed<f64> {
            if line.starts_with(b"#") {
                return Parsed::Known;
            }
            match std::str::from_utf8(line).ok().and_then(|s| s.parse().ok()) {
                Some(v) => Parsed::Record(v),
                None => Parsed::Unknown,
            }
        }
        fn time_of(r: &f64) -> Option<f64> {
            Some(*r)
        }
    }

    fn run(input: &[u8]) -> (ScanReport, Vec<(u64, f64)>) {
        let mut got = Vec::new();
        let rep = scan("t", input, &mut Numbers, |l, v| got.push((l, v))).unwrap();
        (rep, got)
    }

    #[test]
    fn crlf_truncation_backwards_and_samples() {
        let (rep, got) = run(b"1\r\n# c\r\n3\nx\n2\n\0\0junk\n5");
        assert_eq!(got, vec![(1, 1.0), (3, 3.0), (5, 2.0), (7, 5.0)]);
        assert_eq!(
            (rep.lines, rep.records, rep.known, rep.unknown),
            (7, 4, 1, 2)
        );
        assert_eq!(rep.crlf_lines, 2);
        assert!(rep.truncated_last_line);
        assert_eq!(rep.binary_lines, 1);
        assert_eq!(rep.backwards, 1);
        assert_eq!(rep.first_backwards, Some((5, 2.0, 3.0)));
        assert_eq!(
            rep.samples[0],
            Sample {
                line: 4,
                text: "x".into()
            }
        );
        assert_eq!(rep.samples[1].line, 6);
        let p = rep.problems("numbers").unwrap();
        assert!(p.contains("2 of 7 lines not understood"), "{p}");
        assert!(p.contains("line 4: \"x\""), "{p}");
        assert!(p.contains("backwards 1 times (first at line 5"), "{p}");
    }

    #[test]
    fn lines_across_chunk_boundaries() {
        let mut input = Vec::new();
        for i in 0..400_000u32 {
            input.extend_from_slice(format!("{i}\n").as_bytes());
        }
        let (rep, got) = run(&input);
        assert_eq!(rep.records, 400_000);
        assert_eq!(got.last(), Some(&(400_000, 399_999.0)));
        assert_eq!(rep.bytes, input.len() as u64);
        assert!(!rep.truncated_last_line);
    }

    struct Sum(u64, u64);
    impl Fold<Numbers> for Sum {
        fn add(&mut self, r: f64) {
            self.0 += 1;
            self.1 += r as u64;
        }
        fn merge(&mut self, later: Sum) {
            self.0 += later.0;
            self.1 += later.1;
        }
    }

    #[test]
    fn parallel_chunks_merge_to_the_single_thread_answer() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("n.txt");
        let mut body = String::new();
        // A 3 MB file with a bad line and a clock step back near the end.
        let mut i = 0u64;
        while body.len() < 3 << 20 {
            body.push_str(&format!("{i}\n"));
            i += 1;
        }
        body.push_str("oops\n3\n");
        std::fs::write(&p, &body).unwrap();
        let (one, s1, _) = scan_path_parallel(&p, 1, || Numbers, || Sum(0, 0)).unwrap();
        let (four, s4, parsers) = scan_path_parallel(&p, 4, || Numbers, || Sum(0, 0)).unwrap();
        assert_eq!(parsers.len(), 4);
        assert_eq!((s1.0, s1.1), (s4.0, s4.1));
        assert_eq!(s1.0, i + 1);
        assert_eq!(one, four);
        assert_eq!(four.samples[0].line, i + 1);
        assert_eq!(four.first_backwards.map(|b| b.0), Some(i + 2));
    }

    #[test]
    fn empty_and_nothing_understood_messages() {
        let (rep, _) = run(b"");
        assert_eq!(rep.lines, 0);
        assert!(rep
            .nothing_understood("numbers")
            .to_string()
            .contains("empty file"));
        let (rep, _) = run(b"[0.1s][info][gc] GC(0) Pause Young (Normal) 1M->1M(2M) 1.0ms\n");
        let m = rep.nothing_understood("numbers").to_string();
        assert!(m.contains("1 of 1 lines not understood"), "{m}");
        assert!(m.contains("try `arena-perf logs gc`"), "{m}");
    }
}
