//! HTTP upgrade and WebSocket framing (RFC 6455) for one direction of a connection, fed
//! in-order stream bytes in arbitrary pieces. Payloads are never buffered: a frame's bytes
//! are counted, unmasked and inflated as they pass, so memory stays constant whatever the
//! frame size. permessage-deflate (RFC 7692) keeps one raw-deflate context per direction
//! across messages unless `*_no_context_takeover` was negotiated.

use flate2::{Decompress, FlushDecompress, Status};

/// Longest HTTP header block accepted before the stream is declared not WebSocket.
const MAX_HTTP_HEADER: usize = 64 * 1024;

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
    inflater: Option<Decompress>,
    /// Set when inflation failed once: app bytes are unknown from then on.
    pub inflate_error: Option<String>,
    scratch: Vec<u8>,
    out: Vec<u8>,
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
            inflater: None,
            inflate_error: None,
            scratch: Vec::new(),
            out: Vec::new(),
        }
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
                        self.feed_payload(rest, ts_ns, ctx, ev)
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
            if rsv1 && self.inflater.is_none() && self.inflate_error.is_none() {
                self.inflater = Some(Decompress::new(false));
            }
        }
        self.in_payload = true;
        if len == 0 {
            self.end_frame(ts_ns, ctx, ev);
        }
        used
    }

    fn feed_payload<E: Events>(
        &mut self,
        data: &[u8],
        ts_ns: u64,
        ctx: &mut ConnCtx,
        ev: &mut E,
    ) -> usize {
        let n = (self.remaining.min(data.len() as u64)) as usize;
        let chunk = &data[..n];
        if self.opcode < 8 {
            self.msg_wire += n as u64;
            if self.msg_compressed {
                if self.inflate_error.is_none() {
                    if self.masked {
                        let mut buf = std::mem::take(&mut self.scratch);
                        buf.clear();
                        buf.extend_from_slice(chunk);
                        for b in buf.iter_mut() {
                            *b ^= self.mask[self.mask_pos & 3];
                            self.mask_pos += 1;
                        }
                        self.inflate(&buf, false);
                        self.scratch = buf;
                    } else {
                        self.inflate(chunk, false);
                    }
                }
            } else {
                self.msg_app += n as u64;
            }
        }
        self.remaining -= n as u64;
        if self.remaining == 0 {
            self.end_frame(ts_ns, ctx, ev);
        }
        n
    }

    fn end_frame<E: Events>(&mut self, ts_ns: u64, ctx: &mut ConnCtx, ev: &mut E) {
        self.in_payload = false;
        ev.frame(ts_ns, self.opcode, self.payload_len, self.header_len);
        if self.opcode < 8 && self.fin {
            if self.msg_compressed && self.inflate_error.is_none() {
                self.inflate(&[0, 0, 0xff, 0xff], true);
                let no_takeover = ctx.deflate.is_some_and(|d| match self.role {
                    Role::Client => d.client_no_context_takeover,
                    Role::Server => d.server_no_context_takeover,
                });
                if no_takeover {
                    if let Some(d) = self.inflater.as_mut() {
                        d.reset(false);
                    }
                }
            }
            let app = if self.msg_compressed && self.inflate_error.is_some() {
                None
            } else {
                Some(self.msg_app)
            };
            ev.message(ts_ns, self.msg_wire, app, self.msg_compressed);
            self.in_message = false;
        }
    }

    fn inflate(&mut self, mut input: &[u8], sync: bool) {
        let Some(d) = self.inflater.as_mut() else {
            return;
        };
        if self.out.len() < 64 * 1024 {
            self.out.resize(64 * 1024, 0);
        }
        let flush = if sync {
            FlushDecompress::Sync
        } else {
            FlushDecompress::None
        };
        loop {
            let (in0, out0) = (d.total_in(), d.total_out());
            let status = d.decompress(input, &mut self.out, flush);
            let consumed = (d.total_in() - in0) as usize;
            let made = d.total_out() - out0;
            self.msg_app += made;
            input = &input[consumed.min(input.len())..];
            match status {
                Err(e) => {
                    self.inflate_error = Some(format!("inflate failed: {e}"));
                    self.inflater = None;
                    return;
                }
                Ok(Status::StreamEnd) => {
                    // A final deflate block ends the context; the next message starts fresh.
                    d.reset(false);
                    if input.is_empty() || input == [0, 0, 0xff, 0xff] {
                        return;
                    }
                }
                Ok(_) => {}
            }
            if consumed == 0 && made == 0 {
                return;
            }
            if input.is_empty() && (made as usize) < self.out.len() {
                return;
            }
        }
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
