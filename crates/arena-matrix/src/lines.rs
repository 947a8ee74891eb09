//! Lines of a command's output in bounded memory: the taps see at most the first
//! [`MATCH_LINE_CAP`] bytes of a line, and the rest of a longer line is read past without
//! being kept, so a command printing a line of any length costs the reader the same.

use std::io::{self, BufRead, Read, Write};

/// The most of one line the taps match against: 64 KiB. A longer line is matched on its
/// first 64 KiB alone; the rest of it is read (and still written to `stdout.log`) but not
/// kept, and its full length is counted so a run with no match can say a line was cut.
pub const MATCH_LINE_CAP: usize = 64 * 1024;

/// One line as [`LineReader`] hands it out: its first bytes and its full length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line<'a> {
    /// The first [`MATCH_LINE_CAP`] bytes at most, line end (`\n`, and `\r` before it on a
    /// line short enough to keep whole) dropped.
    pub head: &'a [u8],
    /// The whole line's length in bytes, its line end not counted.
    pub len: u64,
}

impl Line<'_> {
    /// Longer than the reader keeps: `head` is only its start.
    pub fn cut(&self) -> bool {
        self.len > self.head.len() as u64
    }
}

/// Splits a [`BufRead`] into [`Line`]s holding no more than `cap` bytes of any line. A
/// line with no line end yet (a log file still being written) is kept across calls of
/// [`next_line`](LineReader::next_line) until its end arrives, or [`rest`](LineReader::rest)
/// hands it out when the input is over.
pub struct LineReader<R> {
    inner: R,
    cap: usize,
    /// The current line's first `cap` bytes; allocated once, never grown.
    head: Vec<u8>,
    /// Bytes of the current line read so far.
    len: u64,
    /// The current line was handed out; the next call starts a new one.
    handed_out: bool,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R, cap: usize) -> LineReader<R> {
        LineReader {
            inner,
            cap,
            head: Vec::with_capacity(cap),
            len: 0,
            handed_out: false,
        }
    }

    /// The next whole line, or `None` when the input has no more for now (a line begun
    /// but not ended is kept for the next call).
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        if self.handed_out {
            self.head.clear();
            self.len = 0;
            self.handed_out = false;
        }
        if !self.read_to_line_end()? {
            return Ok(None);
        }
        Ok(Some(self.hand_out()))
    }

    /// The line begun and never ended, once the input is over.
    pub fn rest(&mut self) -> Option<Line<'_>> {
        if self.handed_out || self.len == 0 {
            return None;
        }
        Some(self.hand_out())
    }

    /// Bytes this reader holds for the current line (the capacity of its buffer).
    pub fn held(&self) -> usize {
        self.head.capacity()
    }

    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    pub fn into_inner(self) -> R {
        self.inner
    }

    fn hand_out(&mut self) -> Line<'_> {
        self.handed_out = true;
        let mut head = &self.head[..];
        let mut len = self.len;
        if len == head.len() as u64 {
            while let Some((b'\r', rest)) = head.split_last() {
                head = rest;
                len -= 1;
            }
        }
        Line { head, len }
    }

    /// Reads on to the current line's `\n` (true) or the end of the input (false): into
    /// `head` while it has room, past the rest without keeping it.
    fn read_to_line_end(&mut self) -> io::Result<bool> {
        let room = self.cap - self.head.len();
        if room > 0 {
            let n = (&mut self.inner)
                .take(room as u64)
                .read_until(b'\n', &mut self.head)?;
            self.len += n as u64;
            if self.head.last() == Some(&b'\n') {
                self.head.pop();
                self.len -= 1;
                return Ok(true);
            }
            if n < room {
                return Ok(false);
            }
        }
        self.skip_to_line_end()
    }

    /// Reads past the rest of a line longer than `cap`, counting it.
    fn skip_to_line_end(&mut self) -> io::Result<bool> {
        loop {
            let buf = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(false);
            }
            // `skip_until` on the buffered bytes finds the `\n` as fast as `read_until` does.
            let mut rest = buf;
            let n = rest.skip_until(b'\n')?;
            let ended = buf[n - 1] == b'\n';
            self.inner.consume(n);
            self.len += n as u64 - u64::from(ended);
            if ended {
                return Ok(true);
            }
        }
    }
}

/// A reader that copies everything read through it to `sink` (a command's `stdout.log`),
/// so the log gets every byte however the lines are split. A failing sink is dropped.
pub struct Tee<R, W: Write> {
    inner: R,
    sink: Option<W>,
}

impl<R, W: Write> Tee<R, W> {
    pub fn new(inner: R, sink: Option<W>) -> Tee<R, W> {
        Tee { inner, sink }
    }

    /// Flushes the sink.
    pub fn finish(mut self) {
        if let Some(s) = self.sink.as_mut() {
            let _ = s.flush();
        }
    }
}

impl<R: Read, W: Write> Read for Tee<R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(s) = self.sink.as_mut() {
            if s.write_all(&buf[..n]).is_err() {
                self.sink = None;
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Cursor};

    /// `n` bytes of `x`, then `tail`, made up as they are read (nothing held whole).
    struct LongLine {
        left: u64,
        tail: Cursor<Vec<u8>>,
    }

    impl Read for LongLine {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.left == 0 {
                return self.tail.read(buf);
            }
            let n = buf.len().min(self.left as usize);
            buf[..n].fill(b'x');
            self.left -= n as u64;
            Ok(n)
        }
    }

    fn lines_of(text: &[u8], cap: usize) -> Vec<(String, u64)> {
        let mut r = LineReader::new(BufReader::with_capacity(7, text), cap);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push((String::from_utf8_lossy(l.head).into_owned(), l.len));
        }
        if let Some(l) = r.rest() {
            out.push((String::from_utf8_lossy(l.head).into_owned(), l.len));
        }
        out
    }

    /// A 200 MB line, then a matching one: the reader never holds more than the cap, says
    /// how long the cut line was, and hands out the next line whole.
    #[test]
    fn a_200_mb_line_is_read_past_in_bounded_memory() {
        let input = LongLine {
            left: 200_000_000,
            tail: Cursor::new(b"\nvalue=7\n".to_vec()),
        };
        let mut r = LineReader::new(BufReader::new(input), MATCH_LINE_CAP);
        let first = r.next_line().unwrap().unwrap();
        assert_eq!(first.len, 200_000_000);
        assert_eq!(first.head.len(), MATCH_LINE_CAP);
        assert!(first.cut());
        assert!(r.held() <= MATCH_LINE_CAP, "held {}", r.held());
        let second = r.next_line().unwrap().unwrap();
        assert_eq!(
            (second.head, second.len, second.cut()),
            (&b"value=7"[..], 7, false)
        );
        assert!(r.next_line().unwrap().is_none());
        assert!(r.rest().is_none());
        assert!(r.held() <= MATCH_LINE_CAP, "held {}", r.held());
        assert!(r.get_ref().capacity() <= MATCH_LINE_CAP);
    }

    #[test]
    fn ordinary_lines_read_as_read_until_would() {
        let got = lines_of(b"a\r\nbb\n\nlast", 64);
        let want = [("a", 1), ("bb", 2), ("", 0), ("last", 4)];
        let want: Vec<(String, u64)> = want.iter().map(|(s, n)| (s.to_string(), *n)).collect();
        assert_eq!(got, want);
        assert!(lines_of(b"", 64).is_empty());
        assert_eq!(lines_of(b"\n", 64), vec![(String::new(), 0)]);
    }

    /// A line of exactly the cap is whole; one byte more is cut, and counted in full.
    #[test]
    fn lines_at_the_cap() {
        let got = lines_of(b"abcd\nabcde\nabcdefghij\r\nz", 4);
        let want = [("abcd", 4), ("abcd", 5), ("abcd", 11), ("z", 1)];
        let want: Vec<(String, u64)> = want.iter().map(|(s, n)| (s.to_string(), *n)).collect();
        assert_eq!(got, want);
        let got = lines_of(b"abcdefgh", 4);
        assert_eq!(got, vec![("abcd".to_string(), 8)]);
    }

    /// A line still being written (a tailed log) is kept until its end arrives.
    #[test]
    fn a_line_without_its_end_waits_for_it() {
        let mut r = LineReader::new(Cursor::new(b"one\ntw".to_vec()), 64);
        assert_eq!(r.next_line().unwrap().unwrap().head, b"one");
        assert!(r.next_line().unwrap().is_none());
        let cur = &mut r.inner;
        let pos = cur.position();
        cur.get_mut().extend_from_slice(b"o\nthree\n");
        cur.set_position(pos);
        assert_eq!(r.next_line().unwrap().unwrap().head, b"two");
        assert_eq!(r.next_line().unwrap().unwrap().head, b"three");
        assert!(r.next_line().unwrap().is_none());
        assert!(r.rest().is_none());
    }

    #[test]
    fn tee_copies_every_byte() {
        let mut log = Vec::new();
        let input = b"short\nlonger than the cap\nend".to_vec();
        let tee = Tee::new(Cursor::new(input.clone()), Some(&mut log));
        let mut r = LineReader::new(BufReader::with_capacity(5, tee), 4);
        while r.next_line().unwrap().is_some() {}
        assert_eq!(r.rest().unwrap().head, b"end");
        r.into_inner().into_inner().finish();
        assert_eq!(log, input);
    }
}
