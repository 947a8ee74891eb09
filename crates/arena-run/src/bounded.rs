//! Reading a run's files in bounded memory. A run file must be a regular file: a device,
//! FIFO or socket in its place is refused before it is opened (a FIFO blocks the open,
//! `/dev/zero` never ends). `run.json` is parsed whole, so it is read whole, up to
//! [`MAX_RUN_JSON_BYTES`]; `events.jsonl` is read a line and `loops.csv` a row at a time,
//! none longer than [`MAX_LINE_BYTES`]. Whatever a run folder holds, loading it holds about
//! that much of one file at a time, never the file.

use std::fmt;
use std::fs::{self, FileType};
use std::io::{self, BufRead, Read};
use std::path::Path;

use anyhow::Result;
use arena_report::Exit;

/// A refusal of a run's input: exit 2, `msg` naming the file.
pub(crate) fn bad(msg: String) -> anyhow::Error {
    anyhow::Error::new(Exit::bad_input(msg))
}

/// A refusal of `path`'s JSON where serde found it wrong: file, line and column.
pub(crate) fn bad_json(path: &Path, e: &serde_json::Error) -> anyhow::Error {
    bad(format!(
        "{}: line {}, column {}: {e}",
        path.display(),
        e.line(),
        e.column()
    ))
}

/// Opens a run file for reading once its metadata (symlinks followed) says it is a regular
/// file: a directory, device, FIFO or socket is refused unopened, naming what it is (a FIFO
/// would block the open, `/dev/zero` never end). `cannot` words a failure to stat or open
/// it (a missing file). Returns the file and its length.
pub(crate) fn open_run_file(
    path: &Path,
    cannot: impl Fn(io::Error) -> anyhow::Error,
) -> Result<(fs::File, u64)> {
    let meta = fs::metadata(path).map_err(&cannot)?;
    if let Some(what) = not_regular(meta.file_type()) {
        let link = fs::symlink_metadata(path)
            .is_ok_and(|m| m.file_type().is_symlink())
            .then(|| fs::canonicalize(path).ok())
            .flatten()
            .map(|to| format!(" (linked to {})", to.display()))
            .unwrap_or_default();
        return Err(bad(format!(
            "{}: {what}{link}, not a regular file: a run file must be one, so it is not read",
            path.display()
        )));
    }
    let file = fs::File::open(path).map_err(cannot)?;
    Ok((file, meta.len()))
}

/// The longest line of `events.jsonl` or `setup_events.jsonl`, or row of `loops.csv`, a
/// run may hold: 1 MiB, its line end not counted. A recorder line is some hundred bytes and
/// a loop's row about 200; a longer one is not a run's (a file of NULs, a stray binary),
/// and reading stops at the bound instead of holding the rest of it.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The largest `run.json` a run may hold: 64 MiB. A run's is a few kilobytes (the idle
/// window's frame list makes it longest); the file is parsed whole, so it is read whole,
/// and a larger one is refused unread.
pub const MAX_RUN_JSON_BYTES: u64 = 64 << 20;

/// What a file that is not a regular one is (symlinks already followed), for the message
/// refusing it; `None` for a regular file.
pub(crate) fn not_regular(t: FileType) -> Option<&'static str> {
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// A line (`events.jsonl`) or row (`loops.csv`) longer than [`MAX_LINE_BYTES`], found on
/// `line` (for a row, the line it starts on). The caller's message names the file and line.
#[derive(Debug)]
pub(crate) struct TooLong {
    what: &'static str,
    pub(crate) line: u64,
}

impl fmt::Display for TooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a {} longer than 1 MiB ({MAX_LINE_BYTES} bytes), the longest a run file's {} may be; not read further",
            self.what, self.what
        )
    }
}

impl std::error::Error for TooLong {}

impl TooLong {
    fn error(what: &'static str, line: u64) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, TooLong { what, line })
    }

    /// The [`TooLong`] an I/O error carries, if it is one.
    pub(crate) fn of(e: &io::Error) -> Option<&TooLong> {
        e.get_ref().and_then(|e| e.downcast_ref::<TooLong>())
    }
}

/// Reads line `line` of `r` into `buf` as `read_until(b'\n')` does (returns the bytes read,
/// 0 at the end), but reads at most [`MAX_LINE_BYTES`] and its `\n`: a longer line is a
/// [`TooLong`] error with no more of it read.
pub(crate) fn read_line<R: BufRead>(r: &mut R, buf: &mut Vec<u8>, line: u64) -> io::Result<usize> {
    let start = buf.len();
    let n = r
        .by_ref()
        .take(MAX_LINE_BYTES as u64 + 1)
        .read_until(b'\n', buf)?;
    if n > MAX_LINE_BYTES && buf[start..].last() != Some(&b'\n') {
        return Err(TooLong::error("line", line));
    }
    Ok(n)
}

/// Where the bytes read so far leave a `loops.csv` row, as the `csv` crate's reader (its
/// defaults: `"` quotes a cell that starts with it, `""` is a quote inside one) parses it.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Cell {
    /// At the start of a cell (or of a row).
    Start,
    /// In a cell that did not start with a quote (a quote in it is a plain byte).
    Plain,
    /// Inside a quoted cell: line ends and commas are part of it.
    Quoted,
    /// A quote inside a quoted cell: it ends the quoting, or is half of a `""`.
    QuoteInQuoted,
}

/// `loops.csv` as the `csv` reader reads it, failing with [`TooLong`] (naming the line the
/// row starts on) once one row passes [`MAX_LINE_BYTES`], so the reader never buffers more
/// of a row than that. A row ends at a line end (`\n`, `\r`) outside quotes; a quoted line
/// end belongs to its row, so a quote left open does not make the rest of the file one row
/// held whole.
pub(crate) struct RowBound<R> {
    inner: R,
    cell: Cell,
    /// Bytes of the current row so far, line ends between rows not counted.
    row_bytes: usize,
    /// The line the next byte is on (1-based, as the `csv` reader counts: one per `\n`).
    line: u64,
    /// The line the current row started on.
    row_line: u64,
}

impl<R> RowBound<R> {
    pub(crate) fn new(inner: R) -> RowBound<R> {
        RowBound {
            inner,
            cell: Cell::Start,
            row_bytes: 0,
            line: 1,
            row_line: 1,
        }
    }

    fn step(&mut self, b: u8) -> io::Result<()> {
        let line_end = b == b'\n' || b == b'\r';
        if line_end && self.cell != Cell::Quoted {
            if b == b'\n' {
                self.line += 1;
            }
            self.cell = Cell::Start;
            self.row_bytes = 0;
            return Ok(());
        }
        if self.row_bytes == 0 {
            self.row_line = self.line;
        }
        if b == b'\n' {
            self.line += 1;
        }
        self.row_bytes += 1;
        if self.row_bytes > MAX_LINE_BYTES {
            return Err(TooLong::error("row", self.row_line));
        }
        self.cell = match (self.cell, b) {
            (Cell::Start, b'"') => Cell::Quoted,
            (Cell::Quoted, b'"') => Cell::QuoteInQuoted,
            (Cell::Quoted, _) => Cell::Quoted,
            (Cell::QuoteInQuoted, b'"') => Cell::Quoted,
            (_, b',') => Cell::Start,
            _ => Cell::Plain,
        };
        Ok(())
    }
}

impl<R: Read> Read for RowBound<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            self.step(b)?;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row's cells, or the line a [`TooLong`] names.
    fn rows(text: &[u8]) -> Result<Vec<Vec<String>>, u64> {
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(RowBound::new(text));
        let mut out = Vec::new();
        for rec in rdr.records() {
            match rec {
                Ok(r) => out.push(r.iter().map(String::from).collect()),
                Err(e) => match e.kind() {
                    csv::ErrorKind::Io(io) => return Err(TooLong::of(io).unwrap().line),
                    _ => panic!("{e}"),
                },
            }
        }
        Ok(out)
    }

    #[test]
    fn rows_up_to_the_bound_read_as_the_csv_reader_reads_them() {
        // The second row is exactly the bound: `"q,""`, a quoted line end, `",`, the rest.
        let long = "x".repeat(MAX_LINE_BYTES - 8);
        let text = format!("a,b\r\n\n\"q,\"\"\n\",{long}\n5\" x,\"\"\n");
        let got = rows(text.as_bytes()).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], ["a", "b"]);
        assert_eq!(got[1][0], "q,\"\n");
        assert!(got[1][1] == long, "the long cell is read whole");
        assert_eq!(got[2], ["5\" x", ""]);
    }

    #[test]
    fn a_row_past_the_bound_names_the_line_it_starts_on() {
        let over = "x".repeat(MAX_LINE_BYTES + 1);
        assert_eq!(rows(format!("a\nb\n{over}\n").as_bytes()), Err(3));
        assert_eq!(rows(format!("a\r\nb\r\n{over}").as_bytes()), Err(3));
        // A quote left open: the rest of the file is one row, refused at the bound.
        let open = format!("a\n\"b\n{}", "c\n".repeat(MAX_LINE_BYTES));
        assert_eq!(rows(open.as_bytes()), Err(2));
        // A quote inside an unquoted cell is a plain byte: rows still end at line ends.
        let plain = format!("a\"b\n{}", "c,d\n".repeat(MAX_LINE_BYTES / 2));
        assert_eq!(
            rows(plain.as_bytes()).map(|r| r.len()),
            Ok(MAX_LINE_BYTES / 2 + 1)
        );
    }

    #[test]
    fn lines_are_read_up_to_the_bound() {
        let exact = "x".repeat(MAX_LINE_BYTES);
        let text = format!("{exact}\n{exact}");
        let mut r = io::BufReader::new(text.as_bytes());
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut r, &mut buf, 1).unwrap(), MAX_LINE_BYTES + 1);
        buf.clear();
        assert_eq!(read_line(&mut r, &mut buf, 2).unwrap(), MAX_LINE_BYTES);
        buf.clear();
        assert_eq!(read_line(&mut r, &mut buf, 3).unwrap(), 0);

        let over = format!("ok\n{exact}x\n");
        let mut r = io::BufReader::new(over.as_bytes());
        buf.clear();
        read_line(&mut r, &mut buf, 1).unwrap();
        buf.clear();
        let e = read_line(&mut r, &mut buf, 2).unwrap_err();
        assert_eq!(TooLong::of(&e).unwrap().line, 2);
        assert_eq!(buf.len(), MAX_LINE_BYTES + 1, "no more of the line is read");
    }
}
