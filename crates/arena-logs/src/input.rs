//! Opening one log for the scanner: a path, `-` for stdin, a pipe or FIFO (`/dev/stdin`,
//! `<(zcat ...)`), and gzip, recognised by its magic bytes rather than its name because
//! rotated JVM logs are compressed under any name (`gc.log.0.gz`, `gc.log.1`, ...).
//!
//! Every input is read once, front to back, so a pipe works as well as a file; nothing is
//! inflated to disk or held whole: the buffers here are the 64 KB head read to sniff the
//! format and, for gzip, the decoder's own (32 KB window, 64 KB of compressed input) and
//! two 1 MB blocks inflated ahead on their own thread. The head also decides whether the
//! bytes are text at all, so an executable or an image is refused as binary instead of
//! being scanned for lines that happen to parse.

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read};
use std::path::Path;
use std::sync::mpsc::{self, Receiver, SyncSender};

use arena_report::Exit;

/// The name that means standard input.
pub const STDIN: &str = "-";
/// How much of the (decompressed) text is looked at to tell text from binary.
pub const SNIFF_BYTES: usize = 64 << 10;
/// Above this share of non-text bytes in the head, the input is binary. Latin-1 text read
/// as UTF-8 stays far below it (a few accented letters per line); machine code, images and
/// compressed data are far above it.
const MAX_NON_TEXT: f64 = 0.10;
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// One opened input, ready to be scanned.
pub struct Input {
    /// The name used in every message: the path as given, or `stdin`.
    pub name: String,
    /// The text, decompressed when the input was gzip.
    pub reader: Box<dyn Read + Send>,
    /// A plain (uncompressed) regular file and its length: the one kind of input that can
    /// also be read at offsets, which the parallel reader needs.
    pub plain_file: Option<(File, u64)>,
    /// The input was gzip.
    pub gzip: bool,
}

/// Opens `path` (or stdin for `-`) and checks that it holds text, for a reducer of `kind`
/// ("a GC log (-Xlog:gc)") named in the error when it does not.
pub fn open(path: &Path, kind: &str) -> Result<Input, Exit> {
    if path.as_os_str() == STDIN {
        return sniff("stdin".into(), Box::new(io::stdin()), None, kind);
    }
    let name = path.display().to_string();
    let f = arena_sys::fifo::open_announced(path, kind)
        .map_err(|e| Exit::bad_input(format!("{name}: cannot open: {e}")))?;
    // A FIFO or /dev/stdin is not a regular file: it is streamed like stdin.
    let regular = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
    let dup = regular.and_then(|len| f.try_clone().ok().map(|d| (d, len)));
    sniff(name, Box::new(f), dup, kind)
}

/// [`open`] for any byte source: gzip is inflated, binary data refused.
pub fn from_reader(name: &str, raw: Box<dyn Read + Send>, kind: &str) -> Result<Input, Exit> {
    sniff(name.to_string(), raw, None, kind)
}

/// Reads the head of `raw` and decides what it is: gzip (then the head of the inflated
/// text decides again), another compressor, binary, or text.
fn sniff(
    name: String,
    raw: Box<dyn Read + Send>,
    plain_file: Option<(File, u64)>,
    kind: &str,
) -> Result<Input, Exit> {
    let mut raw: Box<dyn Read + Send> = Box::new(Labelled(raw));
    let (head, err) = read_head(&mut raw);
    if let (true, Some(e)) = (head.is_empty(), &err) {
        return Err(Exit::bad_input(format!("{name}: {e}")));
    }
    let gzip = head.starts_with(&GZIP_MAGIC);
    let other = other_compression(&head);
    let why = binary_reason(&head);
    let raw = chain(head, raw, err);
    if gzip {
        return gunzip(name, raw, kind);
    }
    if let Some(tool) = other {
        return Err(Exit::bad_input(format!(
            "{name}: compressed with {tool}, which is not read (only gzip is): \
             decompress it first, e.g. `{tool} -dc FILE | arena-perf logs ... -`"
        )));
    }
    if let Some(why) = why {
        return Err(binary(&name, kind, &why));
    }
    Ok(Input {
        name,
        reader: raw,
        plain_file,
        gzip: false,
    })
}

/// The inflated text of a gzip source, its own head checked for binary data.
fn gunzip(name: String, raw: Box<dyn Read + Send>, kind: &str) -> Result<Input, Exit> {
    // Gunzip's errors are worded already (where in the compressed input, or the source's
    // own "read failed").
    let mut gz: Box<dyn Read + Send> = Box::new(Gunzip::new(raw));
    let (text, err) = read_head(&mut gz);
    if let (true, Some(e)) = (text.is_empty(), &err) {
        return Err(Exit::bad_input(format!("{name}: {e}")));
    }
    if let Some(why) = binary_reason(&text) {
        return Err(binary(&name, kind, &format!("decompressed, {why}")));
    }
    // Inflating costs about as much CPU as parsing (1.1 s and 1.0 s a GB): on a thread of
    // its own the two overlap, 2.1 s -> 1.2 s wall for 1 GB of text with a core to spare.
    let gz: Box<dyn Read + Send> = match err {
        None => Box::new(Prefetch::spawn(gz)),
        Some(_) => gz,
    };
    Ok(Input {
        name,
        reader: chain(text, gz, err),
        plain_file: None,
        gzip: true,
    })
}

/// The head again, then the rest of the source (or the error that ended the head).
fn chain(
    head: Vec<u8>,
    rest: Box<dyn Read + Send>,
    err: Option<io::Error>,
) -> Box<dyn Read + Send> {
    let tail = match err {
        Some(e) => Tail::Failed(Some(e)),
        None => Tail::Rest(rest),
    };
    Box::new(Cursor::new(head).chain(tail))
}

fn binary(name: &str, kind: &str, why: &str) -> Exit {
    Exit::bad_input(format!(
        "{name}: binary data ({why}), not {kind}: nothing understood"
    ))
}

/// Reads up to [`SNIFF_BYTES`], however the source splits its reads (a pipe hands out what
/// the writer wrote so far). A read error ends the head and is returned beside it, to be
/// raised only once the scanner has counted the lines before it.
fn read_head(r: &mut impl Read) -> (Vec<u8>, Option<io::Error>) {
    let mut head = vec![0; SNIFF_BYTES];
    let (n, err) = fill(r, &mut head);
    head.truncate(n);
    (head, err)
}

/// Reads until `buf` is full, the source ends or fails: the count read, and the error.
fn fill(r: &mut impl Read, buf: &mut [u8]) -> (usize, Option<io::Error>) {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

/// What the head is when it is not text: a known format by its magic bytes, else the
/// share of bytes that no text log holds (control bytes, NUL, invalid UTF-8).
pub fn binary_reason(head: &[u8]) -> Option<String> {
    const MAGIC: [(&[u8], &str); 8] = [
        (b"\x7fELF", "an ELF executable or library"),
        (b"\x89PNG\r\n\x1a\n", "a PNG image"),
        (b"PK\x03\x04", "a zip or jar archive"),
        (
            b"FLR\0",
            "a JFR recording: convert it with async-profiler's `jfrconv`",
        ),
        (b"\xca\xfe\xba\xbe", "a Java class file"),
        (b"JAVA PROFILE ", "an hprof heap dump"),
        (&GZIP_MAGIC, "gzip data (compressed twice?)"),
        (b"%PDF-", "a PDF document"),
    ];
    if let Some((_, what)) = MAGIC.iter().find(|(m, _)| head.starts_with(m)) {
        return Some(what.to_string());
    }
    // A log truncated in place while its writer kept its offset (logrotate's copytruncate)
    // starts with a run of NULs; the text after it decides.
    let text = &head[head.iter().position(|&b| b != 0).unwrap_or(head.len())..];
    if text.is_empty() {
        return (!head.is_empty()).then(|| "nothing but NUL bytes".to_string());
    }
    let bad = non_text_bytes(text);
    let share = bad as f64 / text.len() as f64;
    (share > MAX_NON_TEXT).then(|| {
        format!(
            "{:.0} % of the first {} bytes are not text",
            share * 100.0,
            text.len()
        )
    })
}

/// Control bytes other than tab, line ends, form feed and ESC (ANSI colours in container
/// logs), plus bytes of invalid UTF-8 sequences.
fn non_text_bytes(b: &[u8]) -> usize {
    let control = b
        .iter()
        .filter(|&&c| (c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b)) || c == 0x7f)
        .count();
    let mut invalid = 0;
    let mut rest = b;
    while let Err(e) = std::str::from_utf8(rest) {
        // `None` is a sequence cut by the end of the head, which is not the text's fault.
        let Some(len) = e.error_len() else { break };
        invalid += len;
        rest = &rest[e.valid_up_to() + len..];
    }
    control + invalid
}

/// Formats that are compressed but not gzip, with the tool that undoes them.
fn other_compression(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\xfd7zXZ\0") {
        Some("xz")
    } else if head.starts_with(b"BZh") && head.get(3).is_some_and(u8::is_ascii_digit) {
        Some("bzip2")
    } else if head.starts_with(b"\x28\xb5\x2f\xfd") {
        Some("zstd")
    } else {
        None
    }
}

/// Gives read errors the words of the message they end up in ("read failed: ...").
struct Labelled(Box<dyn Read + Send>);

impl Read for Labelled {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(|e| match e.kind() {
            io::ErrorKind::Interrupted => e,
            k => io::Error::new(k, format!("read failed: {e}")),
        })
    }
}

/// What comes after the head: the rest of the source, or the error that ended the head
/// (raised when the scanner gets there, after the head's lines were counted).
enum Tail {
    Rest(Box<dyn Read + Send>),
    Failed(Option<io::Error>),
}

impl Read for Tail {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Tail::Rest(r) => r.read(buf),
            Tail::Failed(e) => match e.take() {
                Some(e) => Err(e),
                None => Ok(0),
            },
        }
    }
}

/// Counts the compressed bytes handed to the decoder, to say where a corrupt stream broke.
struct Counted {
    inner: Box<dyn Read + Send>,
    bytes: u64,
    /// The last error came from the source itself, not from the gzip data.
    source_failed: bool,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let r = self.inner.read(buf);
        match &r {
            Ok(n) => self.bytes += *n as u64,
            Err(_) => self.source_failed = true,
        }
        r
    }
}

/// Streams every member of a (possibly concatenated) gzip file: rotated logs are often
/// joined with `cat a.gz b.gz`, and `MultiGzDecoder` reads on where a single-member
/// decoder would stop at the first member's end.
struct Gunzip(flate2::bufread::MultiGzDecoder<BufReader<Counted>>);

impl Gunzip {
    fn new(raw: Box<dyn Read + Send>) -> Self {
        let counted = Counted {
            inner: raw,
            bytes: 0,
            source_failed: false,
        };
        Gunzip(flate2::bufread::MultiGzDecoder::new(
            BufReader::with_capacity(64 << 10, counted),
        ))
    }
}

impl Read for Gunzip {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            let br = self.0.get_ref();
            if e.kind() == io::ErrorKind::Interrupted || br.get_ref().source_failed {
                return e;
            }
            // Bytes read from the source less those still buffered: how far the decoder got.
            let at = br.get_ref().bytes - br.buffer().len() as u64;
            let what = if e.kind() == io::ErrorKind::UnexpectedEof {
                "truncated gzip stream"
            } else {
                "corrupt gzip stream"
            };
            io::Error::new(
                e.kind(),
                format!("{what} at byte {at} of the compressed input ({e})"),
            )
        })
    }
}

/// Reads a source ahead on its own thread, in blocks through a bounded channel: at most
/// [`PREFETCH_BLOCKS`] blocks of [`PREFETCH_BLOCK`] bytes are in flight, so memory stays
/// constant, and the blocks are handed back for reuse.
struct Prefetch {
    /// Blocks in order; an empty block is the end, an error ends it too.
    blocks: Receiver<io::Result<Vec<u8>>>,
    empties: SyncSender<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
    done: bool,
}

const PREFETCH_BLOCK: usize = 1 << 20;
const PREFETCH_BLOCKS: usize = 2;

impl Prefetch {
    fn spawn(mut source: Box<dyn Read + Send>) -> Self {
        let (full_tx, full_rx) = mpsc::sync_channel(PREFETCH_BLOCKS);
        let (empty_tx, empty_rx) = mpsc::sync_channel::<Vec<u8>>(PREFETCH_BLOCKS + 1);
        std::thread::spawn(move || loop {
            let mut block = empty_rx.try_recv().unwrap_or_default();
            block.resize(PREFETCH_BLOCK, 0);
            let (n, err) = fill(&mut source, &mut block);
            block.truncate(n);
            // A send fails when the reader was dropped (it stopped early): nothing more to do.
            if n > 0 && full_tx.send(Ok(block)).is_err() {
                return;
            }
            if let Some(e) = err {
                let _ = full_tx.send(Err(e));
                return;
            }
            if n < PREFETCH_BLOCK {
                let _ = full_tx.send(Ok(Vec::new()));
                return;
            }
        });
        Prefetch {
            blocks: full_rx,
            empties: empty_tx,
            current: Vec::new(),
            at: 0,
            done: false,
        }
    }
}

impl Read for Prefetch {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.current.len() {
            if self.done {
                return Ok(0);
            }
            let block = self.blocks.recv().unwrap_or_else(|_| {
                // Gone without saying it ended: it panicked, and the text would be cut short.
                Err(io::Error::other("the decompressing thread failed"))
            });
            match block {
                Ok(b) if b.is_empty() => self.done = true,
                Ok(b) => {
                    let old = std::mem::replace(&mut self.current, b);
                    let _ = self.empties.try_send(old);
                    self.at = 0;
                }
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        }
        let n = buf.len().min(self.current.len() - self.at);
        buf[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_binary_heads() {
        assert_eq!(binary_reason(b"[0.003s][info][gc] Using G1\n"), None);
        assert_eq!(binary_reason(b""), None);
        // Latin-1 accents in a UTF-8 reader and ANSI colours are still text.
        assert_eq!(
            binary_reason(b"\x1b[32mINFO\x1b[0m caf\xe9 cr\xe8me br\xfbl\xe9e 12-Mar-2021\n"),
            None
        );
        assert!(binary_reason(b"\x7fELF\x02\x01\x01\0")
            .unwrap()
            .contains("ELF"));
        assert!(binary_reason(&[0, 0, 0]).unwrap().contains("NUL"));
        // A copytruncate hole before the text is not binary.
        let mut holed = vec![0u8; 5000];
        holed.extend_from_slice(b"[0.003s][info][gc] Using G1\n");
        assert_eq!(binary_reason(&holed), None);
        let noise: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        assert!(binary_reason(&noise).unwrap().contains("not text"));
    }
}
