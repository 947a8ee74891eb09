//! HTTP upgrade and WebSocket framing (RFC 6455) for one direction of a connection, fed
//! in-order stream bytes in arbitrary pieces. A frame's bytes are counted, unmasked and
//! inflated as they pass, so memory stays constant whatever the frame size; the one thing
//! held is a compressed message handed whole to another thread ([`DirParser::defer`]), up to
//! a bound. permessage-deflate (RFC 7692): only the length of each inflated message is
//! wanted, never its content, so a message needs none of the window earlier messages left
//! (see [`Counter`]) and can be inflated apart, in any order.

use flate2::{Decompress, FlushDecompress, Status};

/// Longest HTTP header block accepted before the stream is declared not WebSocket.
const MAX_HTTP_HEADER: usize = 64 * 1024;
/// Inflate output scratch: discarded, only its length is counted.
const INFLATE_OUT: usize = 64 * 1024;
/// The empty sync-flush block RFC 7692 strips from the end of every message.
const TRAILER: [u8; 4] = [0, 0, 0xff, 0xff];
/// A non-final stored block of 32 KiB of zeros: fills a raw-deflate window to its maximum
/// (any `max_window_bits`), so every distance up to 32 KiB resolves.
static PRIME: [u8; 5 + 32768] = {
    let mut a = [0u8; 5 + 32768];
    a[2] = 0x80;
    a[3] = 0xff;
    a[4] = 0x7f;
    a
};

/// Counts the bytes one permessage-deflate message inflates to.
///
/// With context takeover a message may point back into the output of earlier ones, but
/// only the *length* of a back-reference is needed to count, never the bytes it copies.
/// So the window is primed once with 32 KiB of zeros: every distance a valid message can
/// use resolves, the count is exact whatever the window holds, and a message can be
/// counted without the messages before it, in any order, on any thread. The one check
/// given up is "distance too far back" within a direction's first 32 KiB.
pub struct Counter {
    d: Decompress,
    out: Vec<u8>,
}

impl Default for Counter {
    fn default() -> Self {
        Counter::new()
    }
}

impl Counter {
    pub fn new() -> Self {
        let mut c = Counter {
            d: Decompress::new(false),
            out: vec![0; INFLATE_OUT],
        };
        c.prime();
        c
    }

    fn prime(&mut self) {
        self.d.reset(false);
        let _ = self
            .d
            .decompress(&PRIME, &mut self.out, FlushDecompress::None);
    }

    /// Feeds the next bytes of the current message (`end`: its last ones, after which the
    /// stripped trailer is put back and flushed); returns how many bytes they inflated to.
    /// After an error the counter is ready for the next message.
    pub fn feed(&mut self, input: &[u8], end: bool) -> Result<u64, String> {
        let mut n = self.run(input, false)?;
        if end {
            n += self.run(&TRAILER, true)?;
        }
        Ok(n)
    }

    /// A whole message at once.
    pub fn message(&mut self, input: &[u8]) -> Result<u64, String> {
        self.feed(input, true)
    }

    fn run(&mut self, mut input: &[u8], sync: bool) -> Result<u64, String> {
        let flush = if sync {
            FlushDecompress::Sync
        } else {
            FlushDecompress::None
        };
        let mut total = 0;
        loop {
            let (in0, out0) = (self.d.total_in(), self.d.total_out());
            let status = self.d.decompress(input, &mut self.out, flush);
            let consumed = (self.d.total_in() - in0) as usize;
            let made = self.d.total_out() - out0;
            total += made;
            input = &input[consumed.min(input.len())..];
            match status {
                Err(e) => {
                    self.prime();
                    return Err(format!("inflate failed: {e}"));
                }
                Ok(Status::StreamEnd) => {
                    // A final deflate block ends the context; what follows starts fresh.
                    self.prime();
                    if input.is_empty() || input == TRAILER {
                        return Ok(total);
                    }
                }
                Ok(_) => {}
            }
            if consumed == 0 && made == 0 {
                return Ok(total);
            }
            if input.is_empty() && (made as usize) < self.out.len() {
                return Ok(total);
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

/// What the server's 101 answer agreed on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Deflate {
    pub client_no_context_takeover: bool,
    pub server_no_context_takeover: bool,
}

/// Facts shared by both directions of one connection.
#[derive(Debug, Clone, Default)]
pub struct ConnCtx {
    pub deflate: Option<Deflate>,
    /// The server answered the upgrade request with something other than 101.
    pub rejected: bool,
    pub upgraded: bool,
}

/// Where a direction's bytes stand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Framing {
    /// Reading the HTTP request or response.
    Http,
    /// In WebSocket frames.
    Frames,
    /// Bytes are counted but not framed (mid-stream start, capture hole, bad header).
    Unknown(String),
    /// The stream is some other protocol.
    NotWebSocket(String),
}

/// A completed frame or message, reported to whoever keeps the counts.
pub trait Events {
    fn frame(&mut self, ts_ns: u64, opcode: u8, payload: u64, header: u64);
    fn message(&mut self, ts_ns: u64, wire: u64, app: Option<u64>, compressed: bool);
    /// Bytes of the stream that were not read as frames.
    fn unframed(&mut self, n: u64);
    /// A compressed message could not be inflated (its `message` carries no app bytes).
    fn inflate_failed(&mut self, why: &str) {
        let _ = why;
    }
    /// With [`DirParser::defer`]: a compressed message ended and `payload` holds its
    /// unmasked bytes for someone else to inflate (a [`Counter`] counts them). Take the
    /// bytes (swap in an empty buffer to reuse); its app bytes are the count, or unknown.
    fn deferred_message(&mut self, ts_ns: u64, wire: u64, payload: &mut Vec<u8>) {
        let _ = payload;
        self.message(ts_ns, wire, None, true);
    }
}

pub struct DirParser {
    pub role: Role,
    pub framing: Framing,
    http: Vec<u8>,
    /// Bytes of the HTTP upgrade request or response.
    pub http_bytes: u64,
    /// Stream offset of the next byte, for messages.
    pub offset: u64,
    hdr: [u8; 14],
    hdr_len: usize,
    in_payload: bool,
    fin: bool,
    opcode: u8,
    masked: bool,
    mask: [u8; 4],
    mask_pos: usize,
    payload_len: u64,
    header_len: u64,
    remaining: u64,
    in_message: bool,
    msg_compressed: bool,
    msg_wire: u64,
    msg_app: u64,
    counter: Option<Box<Counter>>,
    /// Whether the current message failed to inflate (its app bytes are unknown).
    msg_failed: bool,
    /// Compressed messages that failed to inflate.
    pub inflate_failures: u64,
    /// With [`DirParser::defer`]: buffer a compressed message up to this many bytes and
    /// hand it over whole; a longer one is inflated here, as it streams.
    defer_up_to: Option<usize>,
    defer_small: usize,
    /// The current compressed message, unmasked, while it is deferred.
    pending: Vec<u8>,
    deferring: bool,
}

impl DirParser {
    /// `from_start` is false when the capture began after this direction's first byte.
    pub fn new(role: Role, from_start: bool) -> Self {
        DirParser {
            role,
            framing: if from_start {
                Framing::Http
            } else {
                Framing::Unknown("capture started mid-connection (no handshake seen)".into())
            },
            http: Vec::new(),
            http_bytes: 0,
            offset: 0,
            hdr: [0; 14],
            hdr_len: 0,
            in_payload: false,
            fin: false,
            opcode: 0,
            masked: false,
            mask: [0; 4],
            mask_pos: 0,
            payload_len: 0,
            header_len: 0,
            remaining: 0,
            in_message: false,
            msg_compressed: false,
            msg_wire: 0,
            msg_app: 0,
            counter: None,
            msg_failed: false,
            inflate_failures: 0,
            defer_up_to: None,
            defer_small: 0,
            pending: Vec::new(),
            deferring: false,
        }
    }

    /// Hands compressed messages of up to `max` bytes to [`Events::deferred_message`]
    /// whole instead of inflating them here; those of `small` bytes or fewer are still
    /// inflated here (handing them over would cost more than inflating them).
    pub fn defer(&mut self, small: usize, max: usize) {
        self.defer_small = small;
        self.defer_up_to = Some(max.max(small));
    }

    /// Whether a frame or message was cut off by the end of the capture.
    pub fn mid_frame(&self) -> bool {
        self.framing == Framing::Frames && (self.hdr_len > 0 || self.in_payload || self.in_message)
    }

    /// Bytes of the stream were never captured: framing cannot continue past them.
    pub fn gap<E: Events>(&mut self, n: u64, ev: &mut E) {
        if matches!(self.framing, Framing::Http | Framing::Frames) {
            self.framing = Framing::Unknown(format!(
                "{n} bytes missing from the capture at stream byte {}",
                self.offset
            ));
        }
        self.offset += n;
        let _ = ev;
    }

    pub fn feed<E: Events>(&mut self, data: &[u8], ts_ns: u64, ctx: &mut ConnCtx, ev: &mut E) {
        let mut i = 0;
        while i < data.len() {
            let rest = &data[i..];
            let used = match self.framing {
                Framing::Http => self.feed_http(rest, ctx, ev),
                Framing::Frames => {
                    if ctx.rejected {
                        self.framing =
                            Framing::NotWebSocket("the server refused the upgrade".into());
                        0
                    } else if self.in_payload {
                        self.feed_payload(rest, ts_ns, ev)
                    } else {
                        self.feed_header(rest, ts_ns, ctx, ev)
                    }
                }
                Framing::Unknown(_) | Framing::NotWebSocket(_) => {
                    ev.unframed(rest.len() as u64);
                    rest.len()
                }
            };
            i += used;
            self.offset += used as u64;
        }
    }

    fn feed_http<E: Events>(&mut self, data: &[u8], ctx: &mut ConnCtx, ev: &mut E) -> usize {
        let prev = self.http.len();
        let take = data.len().min(MAX_HTTP_HEADER + 4 - prev);
        self.http.extend_from_slice(&data[..take]);
        let start = prev.saturating_sub(3);
        let end = self.http[start..]
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map(|p| start + p + 4);
        let Some(end) = end else {
            if self.http.len() > MAX_HTTP_HEADER || !looks_like_http(&self.http, self.role) {
                self.framing = Framing::NotWebSocket(format!(
                    "stream does not start with an HTTP {} (first bytes {:?})",
                    if self.role == Role::Client {
                        "upgrade request"
                    } else {
                        "response"
                    },
                    String::from_utf8_lossy(&self.http[..self.http.len().min(16)])
                ));
                // Earlier pieces are counted here, this piece by the caller's next round.
                ev.unframed(prev as u64);
                self.http.clear();
                return 0;
            }
            return take;
        };
        let head = std::mem::take(&mut self.http);
        let used = end - prev;
        self.http_bytes += end as u64;
        let text = String::from_utf8_lossy(&head[..end]).into_owned();
        match self.role {
            Role::Client => {
                if text.starts_with("GET ") && header_has(&text, "upgrade", "websocket") {
                    self.framing = Framing::Frames;
                } else {
                    self.framing = Framing::NotWebSocket(format!(
                        "HTTP request is not a WebSocket upgrade: {:?}",
                        text.lines().next().unwrap_or("")
                    ));
                    self.http_bytes -= end as u64;
                    ev.unframed(prev as u64);
                    return 0;
                }
            }
            Role::Server => {
                let status = text.lines().next().unwrap_or("");
                if status.split_whitespace().nth(1) == Some("101")
                    && header_has(&text, "upgrade", "websocket")
                {
                    ctx.upgraded = true;
                    ctx.deflate = parse_deflate(&text);
                    self.framing = Framing::Frames;
                } else {
                    ctx.rejected = true;
                    self.framing = Framing::NotWebSocket(format!(
                        "HTTP response is not a WebSocket upgrade: {status:?}"
                    ));
                    self.http_bytes -= end as u64;
                    ev.unframed(prev as u64);
                    return 0;
                }
            }
        }
        used
    }

    fn fail<E: Events>(&mut self, why: String, ev: &mut E) {
        // The header bytes read so far are counted with the rest of the unframed stream.
        ev.unframed(self.hdr_len as u64);
        self.hdr_len = 0;
        self.framing = Framing::Unknown(why);
    }

    fn feed_header<E: Events>(
        &mut self,
        data: &[u8],
        ts_ns: u64,
        ctx: &mut ConnCtx,
        ev: &mut E,
    ) -> usize {
        let mut used = 0;
        let need = |h: &[u8; 14], len: usize| -> usize {
            if len < 2 {
                return 2;
            }
            let mut n = 2;
            match h[1] & 0x7f {
                126 => n += 2,
                127 => n += 8,
                _ => {}
            }
            if h[1] & 0x80 != 0 {
                n += 4;
            }
            n
        };
        loop {
            let want = need(&self.hdr, self.hdr_len);
            if self.hdr_len >= want {
                break;
            }
            if used == data.len() {
                return used;
            }
            let k = (want - self.hdr_len).min(data.len() - used);
            self.hdr[self.hdr_len..self.hdr_len + k].copy_from_slice(&data[used..used + k]);
            self.hdr_len += k;
            used += k;
        }
        let h = self.hdr;
        let at = self.offset + used as u64 - self.hdr_len as u64;
        let fin = h[0] & 0x80 != 0;
        let rsv1 = h[0] & 0x40 != 0;
        let opcode = h[0] & 0x0f;
        let masked = h[1] & 0x80 != 0;
        let (len, mut p) = match h[1] & 0x7f {
            126 => (u16::from_be_bytes([h[2], h[3]]) as u64, 4),
            127 => (
                u64::from_be_bytes([h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9]]),
                10,
            ),
            n => (n as u64, 2),
        };
        let bad = if h[0] & 0x30 != 0 {
            Some("RSV2/RSV3 set".to_string())
        } else if matches!(opcode, 3..=7 | 0xb..=0xf) {
            Some(format!("reserved opcode {opcode:#x}"))
        } else if opcode >= 8 && (!fin || len > 125 || rsv1) {
            Some("fragmented, oversized or compressed control frame".into())
        } else if opcode == 0 && !self.in_message {
            Some("continuation frame outside a message".into())
        } else if (opcode == 1 || opcode == 2) && self.in_message {
            Some("new message before the previous one ended".into())
        } else if opcode == 0 && rsv1 {
            Some("RSV1 on a continuation frame".into())
        } else if rsv1 && ctx.deflate.is_none() {
            Some("RSV1 set but permessage-deflate was not negotiated".into())
        } else if len >> 63 != 0 {
            Some("64-bit length with the top bit set".into())
        } else {
            None
        };
        if let Some(why) = bad {
            self.fail(
                format!("invalid frame header at stream byte {at}: {why}"),
                ev,
            );
            return used;
        }
        if masked {
            self.mask.copy_from_slice(&h[p..p + 4]);
            p += 4;
        }
        self.fin = fin;
        self.opcode = opcode;
        self.masked = masked;
        self.mask_pos = 0;
        self.payload_len = len;
        self.header_len = p as u64;
        self.remaining = len;
        self.hdr_len = 0;
        if opcode == 1 || opcode == 2 {
            self.in_message = true;
            self.msg_compressed = rsv1;
            self.msg_wire = 0;
            self.msg_app = 0;
            self.msg_failed = false;
            self.pending.clear();
            self.deferring = rsv1 && self.defer_up_to.is_some();
        }
        self.in_payload = true;
        if len == 0 {
            self.end_frame(ts_ns, ev);
        }
        used
    }

    fn feed_payload<E: Events>(&mut self, data: &[u8], ts_ns: u64, ev: &mut E) -> usize {
        let n = (self.remaining.min(data.len() as u64)) as usize;
        let chunk = &data[..n];
        if self.opcode < 8 {
            self.msg_wire += n as u64;
            if self.msg_compressed {
                if !self.msg_failed {
                    self.compressed(chunk, ev);
                }
            } else {
                self.msg_app += n as u64;
            }
        }
        self.remaining -= n as u64;
        if self.remaining == 0 {
            self.end_frame(ts_ns, ev);
        }
        n
    }

    fn end_frame<E: Events>(&mut self, ts_ns: u64, ev: &mut E) {
        self.in_payload = false;
        ev.frame(ts_ns, self.opcode, self.payload_len, self.header_len);
        if self.opcode < 8 && self.fin {
            self.in_message = false;
            if self.msg_compressed && self.deferring {
                self.deferring = false;
                if self.pending.len() > self.defer_small {
                    ev.deferred_message(ts_ns, self.msg_wire, &mut self.pending);
                    self.pending.clear();
                    return;
                }
                let held = std::mem::take(&mut self.pending);
                self.inflate(&held, false, ev);
                self.pending = held;
                self.pending.clear();
            }
            if self.msg_compressed && !self.msg_failed {
                self.inflate(&[], true, ev);
            }
            let app = (!self.msg_failed).then_some(self.msg_app);
            ev.message(ts_ns, self.msg_wire, app, self.msg_compressed);
        }
    }

    /// Payload bytes of a compressed message: unmasked, then buffered for handing over or
    /// inflated here.
    fn compressed<E: Events>(&mut self, chunk: &[u8], ev: &mut E) {
        if self.deferring {
            let at = self.pending.len();
            self.pending.extend_from_slice(chunk);
            if self.masked {
                unmask(&mut self.pending[at..], self.mask, self.mask_pos);
                self.mask_pos += chunk.len();
            }
            if self.pending.len() > self.defer_up_to.unwrap_or(0) {
                // Too long to hold: inflate what is here and stream the rest.
                self.deferring = false;
                let held = std::mem::take(&mut self.pending);
                self.inflate(&held, false, ev);
                self.pending = held;
                self.pending.clear();
            }
            return;
        }
        if self.masked {
            let mut buf = std::mem::take(&mut self.pending);
            buf.clear();
            buf.extend_from_slice(chunk);
            unmask(&mut buf, self.mask, self.mask_pos);
            self.mask_pos += chunk.len();
            self.inflate(&buf, false, ev);
            self.pending = buf;
        } else {
            self.inflate(chunk, false, ev);
        }
    }

    fn inflate<E: Events>(&mut self, input: &[u8], end: bool, ev: &mut E) {
        let c = self.counter.get_or_insert_with(Box::default);
        match c.feed(input, end) {
            Ok(n) => self.msg_app += n,
            Err(why) => {
                self.msg_failed = true;
                self.inflate_failures += 1;
                ev.inflate_failed(&why);
            }
        }
    }
}

/// XORs `buf` with the 4-byte mask, starting `pos` bytes into the frame's payload.
fn unmask(buf: &mut [u8], mask: [u8; 4], pos: usize) {
    let k = u32::from_ne_bytes([
        mask[pos & 3],
        mask[(pos + 1) & 3],
        mask[(pos + 2) & 3],
        mask[(pos + 3) & 3],
    ]);
    let mut words = buf.chunks_exact_mut(4);
    for w in &mut words {
        let v = u32::from_ne_bytes([w[0], w[1], w[2], w[3]]) ^ k;
        w.copy_from_slice(&v.to_ne_bytes());
    }
    let rest = words.into_remainder();
    let kb = k.to_ne_bytes();
    for (b, m) in rest.iter_mut().zip(kb) {
        *b ^= m;
    }
}

fn looks_like_http(buf: &[u8], role: Role) -> bool {
    let want: &[u8] = match role {
        Role::Client => b"GET ",
        Role::Server => b"HTTP/",
    };
    let n = buf.len().min(want.len());
    buf[..n] == want[..n]
}

fn header_has(text: &str, name: &str, token: &str) -> bool {
    text.lines().skip(1).any(|l| {
        let Some((k, v)) = l.split_once(':') else {
            return false;
        };
        k.trim().eq_ignore_ascii_case(name)
            && v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token))
    })
}

fn parse_deflate(text: &str) -> Option<Deflate> {
    for l in text.lines().skip(1) {
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        if !k.trim().eq_ignore_ascii_case("sec-websocket-extensions") {
            continue;
        }
        for ext in v.split(',') {
            let mut parts = ext.split(';').map(str::trim);
            if parts
                .next()
                .is_some_and(|n| n.eq_ignore_ascii_case("permessage-deflate"))
            {
                let mut d = Deflate::default();
                for p in parts {
                    let key = p.split('=').next().unwrap_or("").trim();
                    if key.eq_ignore_ascii_case("client_no_context_takeover") {
                        d.client_no_context_takeover = true;
                    } else if key.eq_ignore_ascii_case("server_no_context_takeover") {
                        d.server_no_context_takeover = true;
                    }
                }
                return Some(d);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::deflate_message;
    use flate2::{Compress, Compression};

    #[test]
    fn counter_needs_no_earlier_message_and_survives_a_bad_one() {
        // Messages that repeat earlier ones: with context takeover they are mostly
        // back-references into the previous messages' output.
        let mut c = Compress::new(Compression::default(), false);
        let msgs: Vec<Vec<u8>> = (0..6u32)
            .map(|i| {
                let mut m = b"draw 16 16 0x7f7f7f; ".repeat(200 + i as usize * 50);
                m.extend_from_slice(&i.to_le_bytes());
                m
            })
            .collect();
        let wire: Vec<Vec<u8>> = msgs
            .iter()
            .map(|m| deflate_message(&mut c, m).unwrap())
            .collect();
        assert!(
            wire[5].len() * 20 < msgs[5].len(),
            "later messages point back"
        );
        // Counted last to first, each on its own counter: exact all the same.
        for i in (0..6).rev() {
            assert_eq!(Counter::new().message(&wire[i]), Ok(msgs[i].len() as u64));
        }
        // One counter, in pieces, a corrupt message in between.
        let mut k = Counter::new();
        let (a, b) = wire[3].split_at(7);
        let n = k.feed(a, false).unwrap() + k.feed(b, true).unwrap();
        assert_eq!(n, msgs[3].len() as u64);
        assert!(k.message(&[0xff; 40]).is_err());
        assert_eq!(k.message(&wire[4]), Ok(msgs[4].len() as u64));
    }
}
