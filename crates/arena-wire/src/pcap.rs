//! Classic pcap (libpcap 2.4) reading and writing. pcapng is recognised and refused with
//! a conversion hint rather than misread.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};

pub const LINKTYPE_NULL: u32 = 0;
pub const LINKTYPE_ETHERNET: u32 = 1;
pub const LINKTYPE_RAW: u32 = 101;
pub const LINKTYPE_LINUX_SLL: u32 = 113;
pub const LINKTYPE_LINUX_SLL2: u32 = 276;

/// Largest record accepted. Loopback super-segments reach 64 KiB (BIG TCP a few hundred
/// KiB); a length past this is a corrupt header, and refusing it keeps a hostile file
/// from making the reader allocate gigabytes.
pub const MAX_RECORD: u32 = 16 << 20;

const READ_AHEAD: usize = 1 << 20;
const MAGIC_US: u32 = 0xa1b2_c3d4;
const MAGIC_NS: u32 = 0xa1b2_3c4d;
const PCAPNG_SHB: u32 = 0x0a0d_0d0a;

/// One record as stored: kernel timestamp, captured bytes and the length on the wire.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// Nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    pub orig_len: u32,
    pub data: &'a [u8],
}

/// Streaming reader: one reusable buffer, so memory does not grow with the file.
pub struct PcapReader<R> {
    r: R,
    name: String,
    swapped: bool,
    nanos: bool,
    pub linktype: u32,
    pub snaplen: u32,
    /// Read-ahead window over the file: records are returned as slices of it, so each
    /// byte is copied once (kernel to here), not twice.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// Records read so far (the next record's 1-based index is `records + 1`).
    pub records: u64,
    /// Byte offset of the next record header.
    pub offset: u64,
    /// Set when the file ended inside a record: the partial record is not returned.
    pub truncated: Option<String>,
    /// Records whose captured length exceeds their original length, and the first one's
    /// (index, byte offset): no writer that follows the format produces them.
    pub caplen_over_orig: u64,
    pub first_caplen_over_orig: Option<(u64, u64)>,
}

impl PcapReader<File> {
    pub fn open(path: &Path) -> Result<Self> {
        let f = arena_sys::fifo::open_announced(path, "pcap capture")
            .with_context(|| format!("{}: cannot open", path.display()))?;
        PcapReader::new(f, path.display().to_string())
    }
}

fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

impl<R: Read> PcapReader<R> {
    /// Reads and checks the global header. `name` is used in every error message.
    pub fn new(mut r: R, name: impl Into<String>) -> Result<Self> {
        let name = name.into();
        let mut h = [0u8; 24];
        let n = read_full(&mut r, &mut h).with_context(|| format!("{name}: read error"))?;
        if n >= 4 {
            let le = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
            if le == PCAPNG_SHB {
                bail!(
                    "{name}: byte 0: this is a pcapng file, not classic pcap; convert it with \
                     `editcap -F pcap {name} OUT.pcap` (capture with `arena-perf wire capture` \
                     writes classic pcap)"
                );
            }
        }
        if n < 24 {
            bail!("{name}: truncated pcap header: {n} of 24 bytes");
        }
        let magic_le = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let magic_be = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
        let (swapped, nanos) = match (magic_le, magic_be) {
            (MAGIC_US, _) => (false, false),
            (MAGIC_NS, _) => (false, true),
            (_, MAGIC_US) => (true, false),
            (_, MAGIC_NS) => (true, true),
            _ => bail!(
                "{name}: byte 0: not a pcap file (magic {:02x}{:02x}{:02x}{:02x}; expected \
                 d4c3b2a1 or a1b2c3d4)",
                h[0],
                h[1],
                h[2],
                h[3]
            ),
        };
        let rd = |b: &[u8]| {
            let a = [b[0], b[1], b[2], b[3]];
            if swapped {
                u32::from_be_bytes(a)
            } else {
                u32::from_le_bytes(a)
            }
        };
        let major = if swapped {
            u16::from_be_bytes([h[4], h[5]])
        } else {
            u16::from_le_bytes([h[4], h[5]])
        };
        if major != 2 {
            bail!("{name}: byte 4: unsupported pcap major version {major} (expected 2)");
        }
        let snaplen = rd(&h[16..20]);
        let linktype = rd(&h[20..24]) & 0x0fff_ffff;
        Ok(PcapReader {
            r,
            name,
            swapped,
            nanos,
            linktype,
            snaplen,
            buf: vec![0; READ_AHEAD],
            start: 0,
            end: 0,
            eof: false,
            records: 0,
            offset: 24,
            truncated: None,
            caplen_over_orig: 0,
            first_caplen_over_orig: None,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// What is odd about the file without stopping the read: a zero snaplen in the
    /// header, records that captured more than the wire carried.
    pub fn anomalies(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.snaplen == 0 {
            out.push(format!(
                "{}: byte 16: the file header's snaplen is 0, which no capture produces; records are read as stored",
                self.name
            ));
        }
        if let Some((index, at)) = self.first_caplen_over_orig {
            out.push(format!(
                "{}: {} records claim more captured bytes than their original length (first: record {index} at byte {at}): the file is corrupt or its writer swapped the fields; counted at the captured length",
                self.name, self.caplen_over_orig
            ));
        }
        out
    }

    fn u32_at(&self, b: &[u8]) -> u32 {
        let a = [b[0], b[1], b[2], b[3]];
        if self.swapped {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        }
    }

    /// Makes at least `n` unread bytes available if the file has them; returns how many are.
    fn fill(&mut self, n: usize) -> Result<usize> {
        if self.end - self.start >= n || self.eof {
            return Ok(self.end - self.start);
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() < n {
            self.buf.resize(n.max(READ_AHEAD), 0);
        }
        while self.end < n {
            match self.r.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("{}: byte {}: read error", self.name, self.offset)
                    })
                }
            }
        }
        Ok(self.end - self.start)
    }

    /// The next record, `None` at the end of the file. A file cut short inside a record
    /// ends the stream and sets [`PcapReader::truncated`]; a corrupt length is an error.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>> {
        if self.truncated.is_some() {
            return Ok(None);
        }
        let n = self.fill(16)?;
        if n == 0 {
            return Ok(None);
        }
        let index = self.records + 1;
        if n < 16 {
            self.truncated = Some(format!(
                "{}: byte {}: file ends inside the header of record {index} ({n} of 16 bytes); \
                 the capture was cut short",
                self.name, self.offset
            ));
            return Ok(None);
        }
        let h = &self.buf[self.start..self.start + 16];
        let sec = self.u32_at(&h[0..4]) as u64;
        let frac = self.u32_at(&h[4..8]) as u64;
        let caplen = self.u32_at(&h[8..12]);
        let orig_len = self.u32_at(&h[12..16]);
        if caplen > MAX_RECORD {
            bail!(
                "{}: byte {}: record {index} claims {caplen} captured bytes (limit {MAX_RECORD}): \
                 corrupt record header",
                self.name,
                self.offset
            );
        }
        let total = 16 + caplen as usize;
        let got = self.fill(total)?;
        if got < total {
            self.truncated = Some(format!(
                "{}: byte {}: file ends inside record {index} ({} of {caplen} bytes); the \
                 capture was cut short",
                self.name,
                self.offset + 16,
                got - 16
            ));
            return Ok(None);
        }
        if caplen > orig_len {
            self.caplen_over_orig += 1;
            self.first_caplen_over_orig
                .get_or_insert((index, self.offset));
        }
        let at = self.start + 16;
        self.start += total;
        self.records += 1;
        self.offset += total as u64;
        let ts_ns = if self.nanos {
            sec * 1_000_000_000 + frac
        } else {
            sec * 1_000_000_000 + frac * 1000
        };
        Ok(Some(Record {
            ts_ns,
            orig_len: orig_len.max(caplen),
            data: &self.buf[at..at + caplen as usize],
        }))
    }
}

/// Classic microsecond pcap writer (the format every tshark and Wireshark opens).
pub struct PcapWriter<W: Write> {
    w: W,
    snaplen: u32,
    pub records: u64,
    pub bytes: u64,
}

impl PcapWriter<BufWriter<File>> {
    pub fn create(path: &Path, linktype: u32, snaplen: u32) -> Result<Self> {
        let f = File::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
        PcapWriter::new(BufWriter::with_capacity(1 << 20, f), linktype, snaplen)
            .with_context(|| format!("{}: cannot write", path.display()))
    }
}

impl<W: Write> PcapWriter<W> {
    pub fn new(mut w: W, linktype: u32, snaplen: u32) -> Result<Self> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&MAGIC_US.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&snaplen.to_le_bytes());
        h.extend_from_slice(&linktype.to_le_bytes());
        w.write_all(&h)?;
        Ok(PcapWriter {
            w,
            snaplen,
            records: 0,
            bytes: 24,
        })
    }

    /// Writes one record; data past the snaplen is cut and `orig_len` keeps the truth.
    pub fn write(&mut self, ts_ns: u64, orig_len: u32, data: &[u8]) -> io::Result<()> {
        let cap = data.len().min(self.snaplen as usize);
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&((ts_ns / 1_000_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&(((ts_ns % 1_000_000_000) / 1000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(cap as u32).to_le_bytes());
        h[12..16].copy_from_slice(&orig_len.max(cap as u32).to_le_bytes());
        self.w.write_all(&h)?;
        self.w.write_all(&data[..cap])?;
        self.records += 1;
        self.bytes += 16 + cap as u64;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    pub fn into_inner(mut self) -> io::Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}
