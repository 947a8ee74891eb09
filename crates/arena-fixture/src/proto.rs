//! The fixture wire protocol (docs/fixture-protocol.md): binary both ways.
//!
//! Client -> server: a type byte, then a fixed-size body. Input (0x01-0x05):
//! x u16 LE, y u16 LE, code u16 LE, timeStamp f64 LE (15 bytes in all). Ack (0x10):
//! frame id u32 LE (5 bytes). Server -> client: one frame per message: 0x20, frame id u32 LE,
//! op count u16 LE, then the ops.

pub const MSG_MOUSEDOWN: u8 = 0x01;
pub const MSG_MOUSEUP: u8 = 0x02;
pub const MSG_MOUSEMOVE: u8 = 0x03;
pub const MSG_KEYDOWN: u8 = 0x04;
pub const MSG_KEYUP: u8 = 0x05;
pub const MSG_ACK: u8 = 0x10;

pub const INPUT_LEN: usize = 15;
pub const ACK_LEN: usize = 5;

pub const FRAME: u8 = 0x20;
pub const FRAME_HEADER_LEN: usize = 7;

pub const OP_HELLO: u8 = 0x01;
pub const OP_DEFINE: u8 = 0x02;
pub const OP_DRAW: u8 = 0x03;
pub const OP_FILL: u8 = 0x04;
pub const OP_FORGET: u8 = 0x05;
pub const OP_HUD: u8 = 0x06;
pub const OP_STRIP: u8 = 0x07;

/// Largest client message the server reads; anything bigger closes the connection.
pub const MAX_CLIENT_MESSAGE: usize = 64 * 1024;

/// tungstenite's read buffer, per connection. Client messages are 5 or 15 bytes; the
/// default buffer (128 KiB, zero-filled when the socket opens) was 128 KiB of RSS each.
pub(crate) const READ_BUFFER: usize = 4 * 1024;

/// WebSocket close codes the server uses.
pub mod close {
    /// Server shutting down.
    pub const GOING_AWAY: u16 = 1001;
    /// Malformed binary message (unknown type byte, wrong length).
    pub const PROTOCOL: u16 = 1002;
    /// A text frame: the protocol is binary only.
    pub const UNSUPPORTED: u16 = 1003;
    /// A message over the size limit.
    pub const TOO_BIG: u16 = 1009;
    /// The session thread could not start or failed.
    pub const INTERNAL: u16 = 1011;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    MouseDown,
    MouseUp,
    MouseMove,
    KeyDown,
    KeyUp,
}

impl InputKind {
    pub fn name(self) -> &'static str {
        match self {
            InputKind::MouseDown => "mousedown",
            InputKind::MouseUp => "mouseup",
            InputKind::MouseMove => "mousemove",
            InputKind::KeyDown => "keydown",
            InputKind::KeyUp => "keyup",
        }
    }
    pub fn type_byte(self) -> u8 {
        match self {
            InputKind::MouseDown => MSG_MOUSEDOWN,
            InputKind::MouseUp => MSG_MOUSEUP,
            InputKind::MouseMove => MSG_MOUSEMOVE,
            InputKind::KeyDown => MSG_KEYDOWN,
            InputKind::KeyUp => MSG_KEYUP,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Input {
    pub kind: InputKind,
    /// Canvas coordinates, CSS pixels of the board canvas.
    pub x: u16,
    pub y: u16,
    /// Mouse button (0 left) or key code.
    pub code: u16,
    /// The event's `timeStamp` on the page clock, ms.
    pub t_ms: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClientMsg {
    Input(Input),
    Ack(u32),
}

/// Why a client message was rejected: the text goes into the close frame's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    Empty,
    UnknownType(u8),
    BadLength {
        kind: u8,
        expected: usize,
        got: usize,
    },
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseError::Empty => write!(f, "empty message"),
            ParseError::UnknownType(t) => write!(f, "unknown message type 0x{t:02x}"),
            ParseError::BadLength {
                kind,
                expected,
                got,
            } => {
                write!(
                    f,
                    "message type 0x{kind:02x} needs {expected} bytes, got {got}"
                )
            }
        }
    }
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}

/// Parses one client message. Never panics: lengths are checked before any read.
pub fn parse_client(b: &[u8]) -> Result<ClientMsg, ParseError> {
    let Some(&t) = b.first() else {
        return Err(ParseError::Empty);
    };
    let kind = match t {
        MSG_MOUSEDOWN => InputKind::MouseDown,
        MSG_MOUSEUP => InputKind::MouseUp,
        MSG_MOUSEMOVE => InputKind::MouseMove,
        MSG_KEYDOWN => InputKind::KeyDown,
        MSG_KEYUP => InputKind::KeyUp,
        MSG_ACK => {
            if b.len() != ACK_LEN {
                return Err(ParseError::BadLength {
                    kind: t,
                    expected: ACK_LEN,
                    got: b.len(),
                });
            }
            return Ok(ClientMsg::Ack(u32::from_le_bytes([b[1], b[2], b[3], b[4]])));
        }
        other => return Err(ParseError::UnknownType(other)),
    };
    if b.len() != INPUT_LEN {
        return Err(ParseError::BadLength {
            kind: t,
            expected: INPUT_LEN,
            got: b.len(),
        });
    }
    let mut ts = [0u8; 8];
    ts.copy_from_slice(&b[7..15]);
    Ok(ClientMsg::Input(Input {
        kind,
        x: u16_at(b, 1),
        y: u16_at(b, 3),
        code: u16_at(b, 5),
        t_ms: f64::from_le_bytes(ts),
    }))
}

/// Encodes an input message (the client's form; used by tests, benches and load clients).
pub fn encode_input(i: &Input) -> Vec<u8> {
    let mut b = Vec::with_capacity(INPUT_LEN);
    b.push(i.kind.type_byte());
    b.extend_from_slice(&i.x.to_le_bytes());
    b.extend_from_slice(&i.y.to_le_bytes());
    b.extend_from_slice(&i.code.to_le_bytes());
    b.extend_from_slice(&i.t_ms.to_le_bytes());
    b
}

/// Encodes an ack of `frame_id`.
pub fn encode_ack(frame_id: u32) -> Vec<u8> {
    let mut b = vec![MSG_ACK];
    b.extend_from_slice(&frame_id.to_le_bytes());
    b
}

/// Builds one server frame.
#[derive(Debug)]
pub struct FrameWriter {
    buf: Vec<u8>,
    ops: u16,
}

impl FrameWriter {
    pub fn new(frame_id: u32) -> FrameWriter {
        let mut buf = Vec::with_capacity(4096);
        buf.push(FRAME);
        buf.extend_from_slice(&frame_id.to_le_bytes());
        buf.extend_from_slice(&0u16.to_le_bytes());
        FrameWriter { buf, ops: 0 }
    }
    pub fn ops(&self) -> u16 {
        self.ops
    }
    fn op(&mut self, code: u8) {
        self.ops = self.ops.saturating_add(1);
        self.buf.push(code);
    }
    /// Board size, tile size, ack mode (0 receive, 1 paint), phase (0 deploy, 1 firing).
    pub fn hello(&mut self, w: u16, h: u16, tile: u16, ack_paint: bool, firing: bool) {
        self.op(OP_HELLO);
        for v in [w, h, tile] {
            self.buf.extend_from_slice(&v.to_le_bytes());
        }
        self.buf.push(ack_paint as u8);
        self.buf.push(firing as u8);
    }
    pub fn define(&mut self, id: u32, png: &[u8]) {
        self.op(OP_DEFINE);
        self.buf.extend_from_slice(&id.to_le_bytes());
        self.buf
            .extend_from_slice(&(png.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(png);
    }
    pub fn draw(&mut self, id: u32, x: u16, y: u16) {
        self.op(OP_DRAW);
        self.buf.extend_from_slice(&id.to_le_bytes());
        self.buf.extend_from_slice(&x.to_le_bytes());
        self.buf.extend_from_slice(&y.to_le_bytes());
    }
    pub fn fill(&mut self, x: u16, y: u16, w: u16, h: u16, rgba: [u8; 4]) {
        self.op(OP_FILL);
        for v in [x, y, w, h] {
            self.buf.extend_from_slice(&v.to_le_bytes());
        }
        self.buf.extend_from_slice(&rgba);
    }
    pub fn forget(&mut self, id: u32) {
        self.op(OP_FORGET);
        self.buf.extend_from_slice(&id.to_le_bytes());
    }
    pub fn hud(&mut self, text: &str) {
        let t = &text.as_bytes()[..text.len().min(255)];
        self.op(OP_HUD);
        self.buf.push(t.len() as u8);
        self.buf.extend_from_slice(t);
    }
    /// The text strip: its glyphs (ASCII, at most 255) and whether the caret shows.
    pub fn strip(&mut self, text: &[u8], caret: bool) {
        let t = &text[..text.len().min(255)];
        self.op(OP_STRIP);
        self.buf.push(t.len() as u8);
        self.buf.extend_from_slice(t);
        self.buf.push(caret as u8);
    }
    pub fn finish(mut self) -> Vec<u8> {
        let n = self.ops.to_le_bytes();
        self.buf[5] = n[0];
        self.buf[6] = n[1];
        self.buf
    }
}

/// A decoded server frame (tests, benches and load clients read frames with it).
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedFrame {
    pub id: u32,
    pub ops: Vec<Op>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Hello {
        w: u16,
        h: u16,
        tile: u16,
        ack_paint: bool,
        firing: bool,
    },
    Define {
        id: u32,
        png: Vec<u8>,
    },
    Draw {
        id: u32,
        x: u16,
        y: u16,
    },
    Fill {
        x: u16,
        y: u16,
        w: u16,
        h: u16,
        rgba: [u8; 4],
    },
    Forget {
        id: u32,
    },
    Hud(String),
    /// The text strip's glyphs and caret.
    Strip {
        text: String,
        caret: bool,
    },
}

/// Decodes a server frame; `None` when it is not well formed.
pub fn decode_frame(b: &[u8]) -> Option<DecodedFrame> {
    struct R<'a>(&'a [u8], usize);
    impl R<'_> {
        fn take(&mut self, n: usize) -> Option<&[u8]> {
            let s = self.0.get(self.1..self.1.checked_add(n)?)?;
            self.1 += n;
            Some(s)
        }
        fn u8(&mut self) -> Option<u8> {
            Some(self.take(1)?[0])
        }
        fn u16(&mut self) -> Option<u16> {
            let s = self.take(2)?;
            Some(u16::from_le_bytes([s[0], s[1]]))
        }
        fn u32(&mut self) -> Option<u32> {
            let s = self.take(4)?;
            Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        }
    }
    let mut r = R(b, 0);
    if r.u8()? != FRAME {
        return None;
    }
    let id = r.u32()?;
    let n = r.u16()?;
    let mut ops = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let op = match r.u8()? {
            OP_HELLO => Op::Hello {
                w: r.u16()?,
                h: r.u16()?,
                tile: r.u16()?,
                ack_paint: r.u8()? != 0,
                firing: r.u8()? != 0,
            },
            OP_DEFINE => {
                let id = r.u32()?;
                let len = r.u32()? as usize;
                Op::Define {
                    id,
                    png: r.take(len)?.to_vec(),
                }
            }
            OP_DRAW => Op::Draw {
                id: r.u32()?,
                x: r.u16()?,
                y: r.u16()?,
            },
            OP_FILL => {
                let (x, y, w, h) = (r.u16()?, r.u16()?, r.u16()?, r.u16()?);
                let c = r.take(4)?;
                Op::Fill {
                    x,
                    y,
                    w,
                    h,
                    rgba: [c[0], c[1], c[2], c[3]],
                }
            }
            OP_FORGET => Op::Forget { id: r.u32()? },
            OP_HUD => {
                let len = r.u8()? as usize;
                Op::Hud(String::from_utf8_lossy(r.take(len)?).into_owned())
            }
            OP_STRIP => {
                let len = r.u8()? as usize;
                let text = String::from_utf8_lossy(r.take(len)?).into_owned();
                Op::Strip {
                    text,
                    caret: r.u8()? == 1,
                }
            }
            _ => return None,
        };
        ops.push(op);
    }
    (r.1 == b.len()).then_some(DecodedFrame { id, ops })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_and_ack_round_trip() {
        let i = Input {
            kind: InputKind::MouseUp,
            x: 300,
            y: 41,
            code: 0,
            t_ms: 1234.5678,
        };
        let b = encode_input(&i);
        assert_eq!(b.len(), INPUT_LEN);
        assert_eq!(parse_client(&b), Ok(ClientMsg::Input(i)));
        assert_eq!(parse_client(&encode_ack(77)), Ok(ClientMsg::Ack(77)));
    }

    #[test]
    fn malformed_messages_are_errors_not_panics() {
        assert_eq!(parse_client(&[]), Err(ParseError::Empty));
        assert_eq!(
            parse_client(&[0x7f, 1, 2]),
            Err(ParseError::UnknownType(0x7f))
        );
        assert!(matches!(
            parse_client(&[0x01, 1, 2]),
            Err(ParseError::BadLength { .. })
        ));
        assert!(matches!(
            parse_client(&[0x10, 1]),
            Err(ParseError::BadLength { .. })
        ));
        assert!(matches!(
            parse_client(&[0x10, 1, 2, 3, 4, 5]),
            Err(ParseError::BadLength { .. })
        ));
        for len in 0..40 {
            for first in [0u8, 1, 2, 3, 4, 5, 0x10, 0x20, 0xff] {
                let mut v = vec![0xAB; len];
                if let Some(f) = v.first_mut() {
                    *f = first;
                }
                let _ = parse_client(&v);
            }
        }
        let e = ParseError::BadLength {
            kind: 1,
            expected: 15,
            got: 3,
        }
        .to_string();
        assert!(e.contains("15") && e.contains("0x01"), "{e}");
    }

    #[test]
    fn frame_round_trip() {
        let mut w = FrameWriter::new(9);
        w.hello(1152, 768, 48, true, false);
        w.define(3, b"\x89PNGxyz");
        w.draw(3, 48, 96);
        w.fill(1, 2, 3, 4, [5, 6, 7, 8]);
        w.forget(2);
        w.hud("firing");
        let b = w.finish();
        let f = decode_frame(&b).unwrap();
        assert_eq!(f.id, 9);
        assert_eq!(f.ops.len(), 6);
        assert_eq!(
            f.ops[2],
            Op::Draw {
                id: 3,
                x: 48,
                y: 96
            }
        );
        assert_eq!(f.ops[5], Op::Hud("firing".into()));
        assert!(decode_frame(&b[..b.len() - 1]).is_none());
    }
}
