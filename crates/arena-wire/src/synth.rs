//! Synthetic WebSocket sessions written as pcap, with the totals they must summarise to.
//! Used by the tests, the benchmark and the fuzz target's seed corpus: payloads mix
//! incompressible bytes (like PNG image constants) with repetitive draw operations, are
//! deflated per RFC 7692 with context takeover, framed (client frames masked, some
//! fragmented, some uncompressed, pings and pongs between), and cut into TCP segments
//! with optional retransmits, duplicates and reordering.

use std::io::Write;

use anyhow::{bail, Result};
use flate2::{Compress, Compression, FlushCompress};
use serde::Serialize;

use crate::pcap::{PcapWriter, LINKTYPE_ETHERNET};

#[derive(Debug, Clone)]
pub struct SynthSpec {
    pub seed: u64,
    /// Stop once the pcap has at least this many bytes...
    pub target_bytes: u64,
    /// ...or after this many server messages, whichever comes first.
    pub max_messages: u64,
    /// Largest TCP payload per segment (65,483 is loopback's with timestamps).
    pub mss: usize,
    pub deflate: bool,
    /// Retransmit, duplicate and reorder some segments.
    pub impair: bool,
    pub isn_client: u32,
    pub isn_server: u32,
    pub port: u16,
    /// Every this many server messages one is large (~300 KB app bytes); 0 never.
    pub big_every: u64,
}

impl Default for SynthSpec {
    fn default() -> Self {
        SynthSpec {
            seed: 1,
            target_bytes: u64::MAX,
            max_messages: 200,
            mss: 65_483,
            deflate: true,
            impair: false,
            isn_client: 0x1000_0000,
            isn_server: 0xffff_f000,
            port: 8080,
            big_every: 50,
        }
    }
}

/// What a summary of the generated capture must report for one direction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DirTotals {
    pub packets: u64,
    pub tcp_payload_bytes: u64,
    pub frames: u64,
    pub frame_payload_bytes: u64,
    pub control_frames: u64,
    pub messages: u64,
    pub app_bytes: u64,
    pub largest_frame: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SynthTotals {
    pub client_to_server: DirTotals,
    pub server_to_client: DirTotals,
    pub records: u64,
    pub pcap_bytes: u64,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*: fast, deterministic, good enough for payload bytes.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn fill(&mut self, out: &mut Vec<u8>, n: usize) {
        while out.len() % 8 != 0 && n > 0 {
            out.push(self.next() as u8);
        }
        let end = out.len() + n;
        while out.len() + 8 <= end {
            out.extend_from_slice(&self.next().to_le_bytes());
        }
        while out.len() < end {
            out.push(self.next() as u8);
        }
    }
}

/// Deflates one message with a shared context and a sync flush, minus the trailing
/// `00 00 ff ff` (RFC 7692 section 7.2.1).
pub fn deflate_message(c: &mut Compress, data: &[u8]) -> Result<Vec<u8>> {
    if data.is_empty() {
        // zlib emits nothing for an empty sync flush right after another one; RFC 7692
        // section 7.2.3.6 sends an empty message as the single octet 0x00.
        return Ok(vec![0x00]);
    }
    let mut out = Vec::with_capacity(data.len() + data.len() / 8 + 64);
    let start_in = c.total_in();
    loop {
        let done = (c.total_in() - start_in) as usize;
        c.compress_vec(&data[done..], &mut out, FlushCompress::Sync)?;
        let done = (c.total_in() - start_in) as usize;
        if done == data.len() && out.len() < out.capacity() {
            break;
        }
        out.reserve(out.capacity().max(1024));
    }
    if !out.ends_with(&[0, 0, 0xff, 0xff]) {
        bail!("deflate sync flush did not end with 00 00 ff ff");
    }
    out.truncate(out.len() - 4);
    Ok(out)
}

/// Builds one WebSocket frame header (+ mask key when `mask` is given).
pub fn frame_header(
    fin: bool,
    rsv1: bool,
    opcode: u8,
    len: usize,
    mask: Option<[u8; 4]>,
) -> Vec<u8> {
    let mut h = Vec::with_capacity(14);
    h.push((fin as u8) << 7 | (rsv1 as u8) << 6 | (opcode & 0x0f));
    let m = if mask.is_some() { 0x80 } else { 0 };
    if len < 126 {
        h.push(m | len as u8);
    } else if len <= 0xffff {
        h.push(m | 126);
        h.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        h.push(m | 127);
        h.extend_from_slice(&(len as u64).to_be_bytes());
    }
    if let Some(k) = mask {
        h.extend_from_slice(&k);
    }
    h
}

struct Side {
    seq: u32,
    port: u16,
    stream: Vec<u8>,
    totals: DirTotals,
    deflate: Option<Compress>,
    mask: bool,
}

struct Gen<W: Write> {
    w: PcapWriter<W>,
    ts_ns: u64,
    rng: Rng,
    spec: SynthSpec,
    seg_no: u64,
    held: Option<(usize, Vec<u8>)>,
}

impl<W: Write> Gen<W> {
    fn packet(
        &mut self,
        from: &Side,
        to: &Side,
        seq: u32,
        flags: u8,
        payload: &[u8],
    ) -> Result<()> {
        let mut p = Vec::with_capacity(54 + payload.len());
        p.extend_from_slice(&[0u8; 12]);
        p.extend_from_slice(&[0x08, 0x00]);
        let total = 40 + payload.len();
        p.extend_from_slice(&[
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            0,
            0x40,
            0,
            64,
            6,
            0,
            0,
        ]);
        p.extend_from_slice(&[127, 0, 0, 1, 127, 0, 0, 1]);
        p.extend_from_slice(&from.port.to_be_bytes());
        p.extend_from_slice(&to.port.to_be_bytes());
        p.extend_from_slice(&seq.to_be_bytes());
        p.extend_from_slice(&to.seq.to_be_bytes());
        p.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
        p.extend_from_slice(payload);
        self.ts_ns += 7_000;
        self.w.write(self.ts_ns, p.len() as u32, &p)?;
        Ok(())
    }

    /// Sends what `from` has queued as segments, then an ACK back.
    fn flush(&mut self, from: &mut Side, to: &mut Side) -> Result<()> {
        let stream = std::mem::take(&mut from.stream);
        let mut off = 0;
        while off < stream.len() {
            let n = (stream.len() - off).min(self.spec.mss);
            let seq = from.seq;
            let chunk = &stream[off..off + n];
            self.seg_no += 1;
            from.totals.tcp_payload_bytes += n as u64;
            if self.spec.impair && self.seg_no % 17 == 0 && self.held.is_none() {
                // Hold this one back: it goes out after the next segment (reordering).
                self.held = Some((seq as usize, chunk.to_vec()));
            } else {
                self.packet(from, to, seq, 0x18, chunk)?;
                from.totals.packets += 1;
                if let Some((hs, h)) = self.held.take() {
                    self.packet(from, to, hs as u32, 0x18, &h)?;
                    from.totals.packets += 1;
                }
                if self.spec.impair && self.seg_no % 13 == 0 {
                    // A retransmit of part of this segment: overlaps must be trimmed.
                    let k = n / 2;
                    self.packet(from, to, seq.wrapping_add(k as u32), 0x18, &chunk[k..])?;
                    from.totals.packets += 1;
                }
            }
            from.seq = from.seq.wrapping_add(n as u32);
            off += n;
        }
        if let Some((hs, h)) = self.held.take() {
            self.packet(from, to, hs as u32, 0x18, &h)?;
            from.totals.packets += 1;
        }
        if !stream.is_empty() {
            self.packet(to, from, to.seq, 0x10, &[])?;
            to.totals.packets += 1;
        }
        Ok(())
    }

    /// Queues one message as one or more frames.
    fn message(
        &mut self,
        side: &mut Side,
        app: &[u8],
        compress: bool,
        fragments: usize,
    ) -> Result<()> {
        let (payload, rsv1) = match side.deflate.as_mut() {
            Some(c) if compress => (deflate_message(c, app)?, true),
            _ => (app.to_vec(), false),
        };
        let parts = fragments.clamp(1, payload.len().max(1));
        let per = payload.len().div_ceil(parts).max(1);
        let chunks: Vec<&[u8]> = if payload.is_empty() {
            vec![&payload[..]]
        } else {
            payload.chunks(per).collect()
        };
        let last = chunks.len() - 1;
        for (i, ch) in chunks.iter().enumerate() {
            let opcode = if i == 0 { 2 } else { 0 };
            let mask = side.mask.then(|| (self.rng.next() as u32).to_le_bytes());
            side.stream.extend_from_slice(&frame_header(
                i == last,
                rsv1 && i == 0,
                opcode,
                ch.len(),
                mask,
            ));
            match mask {
                Some(k) => side
                    .stream
                    .extend(ch.iter().enumerate().map(|(j, b)| b ^ k[j & 3])),
                None => side.stream.extend_from_slice(ch),
            }
            side.totals.frames += 1;
            side.totals.frame_payload_bytes += ch.len() as u64;
            side.totals.largest_frame = side.totals.largest_frame.max(ch.len() as u64);
        }
        side.totals.messages += 1;
        side.totals.app_bytes += app.len() as u64;
        Ok(())
    }

    fn control(&mut self, side: &mut Side, opcode: u8, payload: &[u8]) {
        let mask = side.mask.then(|| (self.rng.next() as u32).to_le_bytes());
        side.stream
            .extend_from_slice(&frame_header(true, false, opcode, payload.len(), mask));
        match mask {
            Some(k) => side
                .stream
                .extend(payload.iter().enumerate().map(|(j, b)| b ^ k[j & 3])),
            None => side.stream.extend_from_slice(payload),
        }
        side.totals.control_frames += 1;
    }
}

/// A server frame: a small header, draw operations that repeat, and an image constant
/// of random bytes, in roughly the proportions that give deflate a ~1.6x ratio.
fn server_payload(rng: &mut Rng, len: usize, out: &mut Vec<u8>) {
    out.clear();
    out.push(0x01);
    out.extend_from_slice(&(rng.next() as u32).to_le_bytes());
    let ops = len * 9 / 20;
    while out.len() < ops {
        let x = rng.below(40) as u16;
        out.extend_from_slice(&[
            3,
            0,
            (x & 0xff) as u8,
            0,
            16,
            0,
            16,
            0,
            0x7f,
            0x7f,
            0x7f,
            0xff,
        ]);
    }
    let rest = len.saturating_sub(out.len());
    rng.fill(out, rest);
    out.truncate(len);
}

/// Writes one client/server session to `w`; returns its exact totals.
pub fn write_session<W: Write>(w: W, spec: &SynthSpec) -> Result<SynthTotals> {
    let mut g = Gen {
        w: PcapWriter::new(w, LINKTYPE_ETHERNET, 262_144)?,
        ts_ns: 1_700_000_000_000_000_000,
        rng: Rng(spec.seed.max(1) ^ 0x9e37_79b9_7f4a_7c15),
        spec: spec.clone(),
        seg_no: 0,
        held: None,
    };
    // flate2 and Jetty (java.util.zip.Deflater) both default to level 6.
    let level = Compression::default();
    let mut c = Side {
        seq: spec.isn_client,
        port: 40_000,
        stream: Vec::new(),
        totals: DirTotals::default(),
        deflate: spec.deflate.then(|| Compress::new(level, false)),
        mask: true,
    };
    let mut s = Side {
        seq: spec.isn_server,
        port: spec.port,
        stream: Vec::new(),
        totals: DirTotals::default(),
        deflate: spec.deflate.then(|| Compress::new(level, false)),
        mask: false,
    };
    g.packet(&c, &s, c.seq, 0x02, &[])?;
    c.totals.packets += 1;
    c.seq = c.seq.wrapping_add(1);
    g.packet(&s, &c, s.seq, 0x12, &[])?;
    s.totals.packets += 1;
    s.seq = s.seq.wrapping_add(1);
    g.packet(&c, &s, c.seq, 0x10, &[])?;
    c.totals.packets += 1;
    let ext = if spec.deflate {
        "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
    } else {
        ""
    };
    c.stream.extend_from_slice(
        format!(
            "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{ext}\r\n",
            spec.port
        )
        .as_bytes(),
    );
    g.flush(&mut c, &mut s)?;
    let sext = if spec.deflate {
        "Sec-WebSocket-Extensions: permessage-deflate\r\n"
    } else {
        ""
    };
    s.stream.extend_from_slice(
        format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n{sext}\r\n"
        )
        .as_bytes(),
    );
    g.flush(&mut s, &mut c)?;
    let mut buf = Vec::new();
    let mut i = 0u64;
    while i < spec.max_messages && g.w.bytes < spec.target_bytes {
        i += 1;
        // Client: an input event (type, x, y, code, f64 timeStamp) or an ack.
        let mut input = vec![(1 + g.rng.below(5)) as u8];
        input.extend_from_slice(&g.rng.next().to_le_bytes()[..5]);
        input.extend_from_slice(&(i as f64 * 16.7).to_le_bytes());
        g.message(&mut c, &input, i % 11 != 0, 1)?;
        if i % 100 == 0 {
            g.control(&mut c, 9, b"ping");
        }
        g.flush(&mut c, &mut s)?;
        g.ts_ns += 1_000_000;
        let len = if spec.big_every > 0 && i % spec.big_every == 0 {
            250_000 + g.rng.below(100_000) as usize
        } else if i % 9 == 0 {
            40 + g.rng.below(600) as usize
        } else {
            5_000 + g.rng.below(2_000) as usize
        };
        server_payload(&mut g.rng, len, &mut buf);
        let frags = if i % 7 == 0 { 3 } else { 1 };
        g.message(&mut s, &buf, i % 13 != 0, frags)?;
        if i % 100 == 0 {
            g.control(&mut s, 10, b"ping");
        }
        g.flush(&mut s, &mut c)?;
        let mut ack = vec![0x10];
        ack.extend_from_slice(&(i as u32).to_le_bytes());
        g.message(&mut c, &ack, true, 1)?;
        g.flush(&mut c, &mut s)?;
        g.ts_ns += 15_000_000;
    }
    // Close handshake, then FINs.
    g.control(&mut c, 8, &[0x03, 0xe8]);
    g.flush(&mut c, &mut s)?;
    g.control(&mut s, 8, &[0x03, 0xe8]);
    g.flush(&mut s, &mut c)?;
    g.packet(&c, &s, c.seq, 0x11, &[])?;
    c.totals.packets += 1;
    g.packet(&s, &c, s.seq, 0x11, &[])?;
    s.totals.packets += 1;
    let records = g.w.records;
    let pcap_bytes = g.w.bytes;
    g.w.flush()?;
    Ok(SynthTotals {
        client_to_server: c.totals,
        server_to_client: s.totals,
        records,
        pcap_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::{summarize_reader, summarize_reader_threads, SummaryOptions};

    fn check(spec: &SynthSpec) {
        let mut buf = Vec::new();
        let t = write_session(&mut buf, spec).unwrap();
        // Inflated on the reading thread, and on two and three others: the same figures.
        for threads in [0, 2, 3] {
            let s =
                summarize_reader_threads(&buf[..], "synth", &SummaryOptions::default(), threads)
                    .unwrap();
            check_totals(&s, &t);
        }
    }

    fn check_totals(s: &crate::WireSummary, t: &SynthTotals) {
        assert_eq!(s.records, t.records);
        for (d, e) in [
            (&s.client_to_server, &t.client_to_server),
            (&s.server_to_client, &t.server_to_client),
        ] {
            assert_eq!(d.framing, "websocket", "{:?}", d.framing_notes);
            assert_eq!(d.packets, e.packets);
            assert_eq!(d.tcp_payload_bytes, e.tcp_payload_bytes);
            assert_eq!(d.frames, e.frames);
            assert_eq!(d.frame_payload_bytes, e.frame_payload_bytes);
            assert_eq!(d.control_frames, e.control_frames);
            assert_eq!(d.messages, e.messages);
            assert_eq!(d.app_bytes, e.app_bytes);
            assert_eq!(d.app_unknown_messages, 0);
            assert_eq!(d.unframed_bytes, 0);
            assert_eq!(d.missing_bytes, 0);
            assert_eq!(
                d.largest_frames.first().map(|f| f.payload_bytes),
                Some(e.largest_frame)
            );
        }
    }

    #[test]
    fn summary_matches_generated_totals_across_segment_sizes_and_impairments() {
        for (mss, impair, deflate) in [
            (65_483, false, true),
            (1_448, true, true),
            (97, true, true),
            (1_448, true, false),
        ] {
            check(&SynthSpec {
                mss,
                impair,
                deflate,
                max_messages: 120,
                ..SynthSpec::default()
            });
        }
    }

    #[test]
    fn impairments_are_counted_not_double_counted() {
        let mut buf = Vec::new();
        let spec = SynthSpec {
            mss: 500,
            impair: true,
            max_messages: 60,
            ..SynthSpec::default()
        };
        let t = write_session(&mut buf, &spec).unwrap();
        let s = summarize_reader(&buf[..], "synth", &SummaryOptions::default()).unwrap();
        let d = &s.server_to_client;
        assert!(
            d.retransmitted_bytes > 0 && d.out_of_order_segments > 0,
            "{d:?}"
        );
        assert_eq!(d.tcp_payload_bytes, t.server_to_client.tcp_payload_bytes);
    }
}
