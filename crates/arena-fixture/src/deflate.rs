//! The `deflate` knob's socket: permessage-deflate (RFC 7692) with context takeover, through
//! yawc (axum's socket, tungstenite, negotiates no extension). [`DeflateSocket`] shows the
//! connection (`crate::conn`) the same messages and error kinds axum's socket does, so one
//! session code serves both, and the knob off leaves the axum path as it was.

use std::pin::Pin;
use std::task::{ready, Context, Poll};

use axum::body::Bytes;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes};
use futures_util::{Sink, Stream};
use yawc::close::CloseCode;
use yawc::{DeflateOptions, Frame, HttpStream, OpCode, Options, WebSocket, WebSocketError};

use crate::knobs::Knobs;
use crate::proto::{MAX_CLIENT_MESSAGE, READ_BUFFER};

/// The window the client may compress with: RFC 7692's default, answered explicitly
/// because Chromium offers a bare `client_max_window_bits`, which yawc would otherwise
/// answer with its minimum (9). Client messages are 5 or 15 bytes; only the server's
/// window is the knob's.
const CLIENT_WINDOW_BITS: u8 = 15;

/// The upgrade's options for `knobs`: context takeover both ways (the RFC's default, kept
/// unless the client asks otherwise), the server's window from `deflate_bits`, zlib's
/// default level, and the axum path's limits (yawc's limit is exclusive, tungstenite's
/// inclusive, hence the `+ 1`).
pub(crate) fn options(knobs: &Knobs) -> Options {
    Options {
        compression: Some(DeflateOptions {
            server_max_window_bits: Some(knobs.deflate_bits),
            client_max_window_bits: Some(CLIENT_WINDOW_BITS),
            ..DeflateOptions::default()
        }),
        ..Options::default()
    }
    .with_limits(MAX_CLIENT_MESSAGE + 1, 2 * MAX_CLIENT_MESSAGE)
    .with_read_buffer_capacity(READ_BUFFER)
}

/// An upgraded yawc socket as a stream and sink of axum messages.
pub(crate) struct DeflateSocket {
    ws: WebSocket<HttpStream>,
}

impl DeflateSocket {
    pub(crate) fn new(ws: WebSocket<HttpStream>) -> Self {
        DeflateSocket { ws }
    }
}

/// A yawc error as axum's: an I/O error goes in bare, so the connection's cause-chain walk
/// finds it (yawc's `IoError` is transparent and would hide it); others keep their type.
fn to_axum(e: WebSocketError) -> axum::Error {
    match e {
        WebSocketError::IoError(io) => axum::Error::new(io),
        other => axum::Error::new(other),
    }
}

/// A received frame as the message axum would have made of it.
fn to_message(f: Frame) -> Option<Message> {
    let (op, _, payload) = f.into_parts();
    Some(match op {
        OpCode::Binary => Message::Binary(payload),
        // The protocol is binary; the connection only needs to see that this was text.
        OpCode::Text => Message::Text(
            Utf8Bytes::try_from(payload).unwrap_or_else(|_| Utf8Bytes::from_static("\u{fffd}")),
        ),
        OpCode::Ping => Message::Ping(payload),
        OpCode::Pong => Message::Pong(payload),
        OpCode::Close => Message::Close(close_frame(&payload)),
        // Fragments are reassembled below this layer.
        OpCode::Continuation => return None,
    })
}

fn close_frame(payload: &[u8]) -> Option<CloseFrame> {
    let code = u16::from_be_bytes([*payload.first()?, *payload.get(1)?]);
    let reason = String::from_utf8_lossy(&payload[2..]).into_owned();
    Some(CloseFrame {
        code,
        reason: reason.into(),
    })
}

fn to_frame(m: Message) -> Frame {
    match m {
        Message::Binary(b) => Frame::binary(b),
        Message::Text(t) => Frame::text(Bytes::copy_from_slice(t.as_bytes())),
        Message::Ping(b) => Frame::ping(b),
        Message::Pong(b) => Frame::pong(b),
        Message::Close(Some(c)) => Frame::close(CloseCode::from(c.code), c.reason.as_bytes()),
        Message::Close(None) => Frame::close(CloseCode::Normal, []),
    }
}

impl Stream for DeflateSocket {
    type Item = Result<Message, axum::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            return match ready!(this.ws.poll_next_frame(cx)) {
                Ok(f) => match to_message(f) {
                    Some(m) => Poll::Ready(Some(Ok(m))),
                    None => continue,
                },
                // After the closing handshake, the end of the stream, as axum's.
                Err(WebSocketError::ConnectionClosed) => Poll::Ready(None),
                Err(e) => Poll::Ready(Some(Err(to_axum(e)))),
            };
        }
    }
}

impl Sink<Message> for DeflateSocket {
    type Error = axum::Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Pin::new(&mut self.get_mut().ws)
            .poll_ready(cx)
            .map_err(to_axum)
    }

    fn start_send(self: Pin<&mut Self>, m: Message) -> Result<(), Self::Error> {
        Pin::new(&mut self.get_mut().ws)
            .start_send(to_frame(m))
            .map_err(to_axum)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Pin::new(&mut self.get_mut().ws)
            .poll_flush(cx)
            .map_err(to_axum)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Pin::new(&mut self.get_mut().ws)
            .poll_close(cx)
            .map_err(to_axum)
    }
}

/// Whether a read error is the client's message over the size limit (close code 1009).
pub(crate) fn too_big(e: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        e.downcast_ref::<WebSocketError>(),
        Some(WebSocketError::FrameTooLarge)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_frames_keep_code_and_reason_both_ways() {
        let f = to_frame(Message::Close(Some(CloseFrame {
            code: 1009,
            reason: "too big".into(),
        })));
        match to_message(f) {
            Some(Message::Close(Some(c))) => {
                assert_eq!((c.code, c.reason.as_str()), (1009, "too big"))
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            to_message(Frame::close(CloseCode::Normal, [])),
            Some(Message::Close(Some(CloseFrame { code: 1000, .. })))
        ));
    }

    #[test]
    fn the_options_carry_the_knobs_window() {
        let mut k = Knobs::default();
        k.set("deflate_bits", "11").unwrap();
        let c = options(&k).compression.expect("compression on");
        assert_eq!(c.server_max_window_bits, Some(11));
        assert_eq!(c.client_max_window_bits, Some(CLIENT_WINDOW_BITS));
        assert!(!c.server_no_context_takeover && !c.client_no_context_takeover);
        assert!(too_big(&WebSocketError::FrameTooLarge));
        assert!(!too_big(&WebSocketError::InvalidFragment));
    }
}
