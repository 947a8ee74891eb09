//! One WebSocket connection: the reader (the connection's own task), a writer task and the
//! session thread (the fixture's event-dispatch thread, "EDT": inputs, line-of-sight work,
//! the paint tick, frame building). Every queue between them is bounded, and every part ends
//! soon after the client goes, so a connection's thread and memory come back when it ends.

use std::error::Error as StdError;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::ws::{CloseFrame, Message};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit, Semaphore};

use crate::alloc;
use crate::jitter::Jitter;
use crate::proto::close;
use crate::proto::{parse_client, ClientMsg};
use crate::session::{BuiltFrame, FrameKind, InputOutcome, Session};
use crate::shared::Shared;
use crate::stats::{bump, thread_cpu, FrameStat, ServerStats};

/// Client messages a session may have queued and not yet applied. Past it the reader stops
/// reading and TCP pushes back on the client: a client that sends faster than its session
/// works cannot grow the server's memory.
const INPUT_QUEUE: usize = 256;

/// How long a closing connection's writer may take to flush before it is aborted: a client
/// that stopped reading would otherwise hold its writer (and its session) forever.
const WRITER_GRACE: Duration = Duration::from_secs(2);

/// One client message on its way to the session thread. The credit is a slot of the
/// session's input queue, returned when the session has applied the message.
struct EdtMsg {
    msg: ClientMsg,
    _credit: OwnedSemaphorePermit,
}

/// A frame for the writer, with the session-thread CPU it cost.
type Outgoing = (BuiltFrame, Duration);

/// An upgraded socket as the connection sees it: axum's, or with the `deflate` knob
/// `crate::deflate::DeflateSocket`, which shows the same messages and error kinds.
pub(crate) trait Socket:
    Stream<Item = Result<Message, axum::Error>>
    + Sink<Message, Error = axum::Error>
    + Send
    + Unpin
    + 'static
{
}

impl<T> Socket for T where
    T: Stream<Item = Result<Message, axum::Error>>
        + Sink<Message, Error = axum::Error>
        + Send
        + Unpin
        + 'static
{
}

/// How a connection's reading ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// The client sent a close frame (or the closing handshake had completed).
    Closed,
    /// The client went without a close frame: EOF or a reset. Not a bad message.
    Vanished,
    /// The server is shutting down.
    Shutdown,
    /// The session thread is gone (it panicked or could not start).
    SessionGone,
    /// A malformed message: closed with this code and reason, counted as bad.
    Bad(u16, String),
}

impl End {
    fn bad(code: u16, reason: impl Into<String>) -> End {
        End::Bad(code, reason.into())
    }
}

/// Drives one upgraded connection to its end. `slot` is the connection's place under
/// `max_connections`; it is given back only after the session thread has returned, so
/// live session threads never exceed the limit.
pub(crate) async fn connection<S: Socket>(socket: S, st: Arc<Shared>, slot: OwnedSemaphorePermit) {
    let conn = st.next_conn.fetch_add(1, Ordering::Relaxed) + 1;
    let c = &st.stats.counters;
    bump(&c.connections_total, 1);
    bump(&c.connections_open, 1);
    let (mut sink, stream) = socket.split();
    let (to_edt, edt_rx) = std::sync::mpsc::channel::<EdtMsg>();
    // The in-flight window already bounds the frames a session builds ahead of its acks;
    // the bound here also holds when the ack timeout reopens the window for a client that
    // neither acks nor reads.
    let (out_tx, out_rx) = mpsc::channel::<Outgoing>(st.knobs.in_flight.max(1) as usize);
    let (done_tx, done_rx) = oneshot::channel::<()>();
    if spawn_edt(conn, &st, edt_rx, out_tx, done_tx).is_err() {
        let _ = sink
            .send(close_message(close::INTERNAL, "no session thread"))
            .await;
        c.connections_open.fetch_sub(1, Ordering::Relaxed);
        return;
    }
    let (close_tx, close_rx) = oneshot::channel::<(u16, String)>();
    let delay = Duration::from_millis(st.knobs.delay_ms as u64);
    let tail = Duration::from_millis(st.knobs.tail_ms as u64);
    let jitter = Jitter::new(st.knobs.jitter_ms, st.knobs.seed, conn);
    // Cold start: the first frame (the board) leaves no sooner than this after the upgrade;
    // it is built meanwhile, so the delay is the knob, not the knob plus the build.
    st.stats.record_upgrade(std::time::Instant::now());
    let board_at = tokio::time::Instant::now() + Duration::from_millis(st.knobs.startup_ms as u64);
    let writer = tokio::spawn(write_frames(
        sink,
        out_rx,
        close_rx,
        conn,
        st.stats.clone(),
        (delay, tail, board_at),
        jitter,
    ));
    let end = read_messages(stream, to_edt, &st).await;
    // The writer waits for this verdict: a close frame to send, or none (the sender
    // dropped) when the client closed or went.
    let verdict = match end {
        End::Closed => None,
        End::Vanished => {
            bump(&c.disconnects, 1);
            None
        }
        End::Bad(code, reason) => {
            bump(&c.bad_messages, 1);
            Some((code, reason))
        }
        End::Shutdown => Some((close::GOING_AWAY, "server shutting down".into())),
        End::SessionGone => Some((close::INTERNAL, "session thread failed".into())),
    };
    match verdict {
        Some(v) => {
            let _ = close_tx.send(v);
        }
        None => drop(close_tx),
    }
    let abort = writer.abort_handle();
    if tokio::time::timeout(WRITER_GRACE, writer).await.is_err() {
        abort.abort();
    }
    // The writer is gone, so the session thread's next send fails if it was not already
    // told by its input channel closing; wait for it without holding a blocking thread.
    let _ = done_rx.await;
    let last = c.connections_open.fetch_sub(1, Ordering::Relaxed) == 1;
    drop(slot);
    if last {
        alloc::release_free_memory();
    }
}

fn close_message(code: u16, reason: &str) -> Message {
    Message::Close(Some(CloseFrame {
        code,
        reason: reason.into(),
    }))
}

/// Starts the session thread. It drops `done` as it returns, which is how the connection
/// learns that it has (a panic drops it too).
fn spawn_edt(
    conn: u64,
    st: &Shared,
    rx: Receiver<EdtMsg>,
    tx: mpsc::Sender<Outgoing>,
    done: oneshot::Sender<()>,
) -> std::io::Result<()> {
    let (knobs, board, stats) = (st.knobs.clone(), st.board.clone(), st.stats.clone());
    // Detached: `done` says when the work is over; the thread only has its exit left.
    std::thread::Builder::new()
        .name(format!("fixture-edt-{conn}"))
        .spawn(move || {
            let _done = done;
            let session = Session::new(knobs, board);
            Edt::new(session, rx, tx, stats).run();
        })
        .map(drop)
}

/// Reads client messages and queues them for the session until the connection ends.
async fn read_messages<S: Socket>(
    mut stream: SplitStream<S>,
    to_edt: std::sync::mpsc::Sender<EdtMsg>,
    st: &Shared,
) -> End {
    let credits = Arc::new(Semaphore::new(INPUT_QUEUE));
    let mut shutdown = st.shutdown.clone();
    loop {
        let msg = tokio::select! {
            m = stream.next() => m,
            _ = shutdown.wait_for(|s| *s) => return End::Shutdown,
        };
        let bytes = match msg {
            None | Some(Ok(Message::Close(_))) => return End::Closed,
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(Message::Text(_))) => {
                return End::bad(
                    close::UNSUPPORTED,
                    "text frames are not part of the protocol",
                )
            }
            Some(Ok(Message::Binary(b))) => b,
            Some(Err(e)) => return read_error(&e),
        };
        let msg = match parse_client(&bytes) {
            Ok(m) => m,
            Err(e) => return End::bad(close::PROTOCOL, e.to_string()),
        };
        if matches!(msg, ClientMsg::Input(_)) {
            bump(&st.stats.counters.inputs, 1);
            st.bot_turns.input();
        }
        let credit = tokio::select! {
            p = credits.clone().acquire_owned() => p,
            _ = shutdown.wait_for(|s| *s) => return End::Shutdown,
        };
        let Ok(credit) = credit else {
            return End::SessionGone;
        };
        let queued = EdtMsg {
            msg,
            _credit: credit,
        };
        if to_edt.send(queued).is_err() {
            return End::SessionGone;
        }
    }
}

/// What a read error means. axum wraps tungstenite's error, which offers no stable type to
/// match here (the fixture does not depend on tungstenite), so: any I/O error below it is
/// the client's socket failing (a reset, a broken pipe), i.e. the client went; so is EOF
/// before a close frame ("reset without closing handshake"). A size limit is 1009 (the
/// `deflate` socket's is a typed yawc error). Every other framing error is the client
/// breaking RFC 6455, 1002: a control frame over 125 bytes included, whose message says
/// "too big" but is no message-size matter.
fn read_error(e: &axum::Error) -> End {
    let mut cause: Option<&(dyn StdError + 'static)> = Some(e);
    while let Some(c) = cause {
        if c.downcast_ref::<std::io::Error>().is_some() {
            return End::Vanished;
        }
        if crate::deflate::too_big(c) {
            return End::bad(close::TOO_BIG, truncate(&c.to_string()));
        }
        cause = c.source();
    }
    let text = e.to_string();
    if text.contains("without closing handshake") {
        End::Vanished
    } else if text.starts_with("Space limit exceeded") {
        End::bad(close::TOO_BIG, truncate(&text))
    } else {
        End::bad(close::PROTOCOL, truncate(&text))
    }
}

/// A close reason must fit a control frame (125 bytes, 2 of them the code).
fn truncate(text: &str) -> String {
    let mut s = String::new();
    for ch in text.chars() {
        if s.len() + ch.len_utf8() > 100 {
            break;
        }
        s.push(ch);
    }
    s
}

/// Sends the session's frames, recording each, until the connection ends; then the close
/// frame the reader asked for, if any. A close goes before queued frames: the connection is
/// ending, and they are for no one.
async fn write_frames<S: Socket>(
    mut sink: SplitSink<S, Message>,
    mut frames: mpsc::Receiver<Outgoing>,
    mut close_rx: oneshot::Receiver<(u16, String)>,
    conn: u64,
    stats: Arc<ServerStats>,
    (delay, tail, board_at): (Duration, Duration, tokio::time::Instant),
    mut jitter: Jitter,
) {
    let mut first = true;
    let close = loop {
        let (mut f, cpu) = tokio::select! {
            biased;
            c = &mut close_rx => break c.ok(),
            f = frames.recv() => match f {
                Some(f) => f,
                // The session ended first (the reader, done, closed its queue): the
                // reader's verdict is on its way.
                None => break close_rx.await.ok(),
            },
        };
        if std::mem::take(&mut first) {
            tokio::time::sleep_until(board_at).await;
            stats.record_board_sent(std::time::Instant::now());
        }
        // Replies leave in order, so one drawn a longer jitter holds the next until it goes:
        // the same on every `delay_ms`, which shifts every reply's time alike.
        let hold = match (f.kind, f.tail) {
            (FrameKind::Reply, true) => delay + tail + jitter.next_hold(),
            (FrameKind::Reply, false) => delay + jitter.next_hold(),
            _ => Duration::ZERO,
        };
        if !hold.is_zero() {
            // Held from when it was built, not from when the writer got to it: the delay is
            // a latency every reply pays once, so replies closer together than the delay
            // (a drag's) do not queue behind each other's holds.
            let built = Duration::from_secs_f64((f.render_ms + f.encode_ms).max(0.0) / 1e3);
            arena_sys::timer::sleep_until_exactly(f.started + built + hold).await;
        }
        let bytes = std::mem::take(&mut f.bytes);
        let len = bytes.len() as u64;
        if sink
            .send(Message::Binary(Bytes::from(bytes)))
            .await
            .is_err()
        {
            break None;
        }
        stats.record(frame_stat(conn, &f, cpu, len, Instant::now()));
    };
    if let Some((code, reason)) = close {
        let _ = sink.send(close_message(code, &reason)).await;
    }
    let _ = sink.close().await;
}

/// The record of frame `f`, `len` payload bytes, sent at `done`.
fn frame_stat(conn: u64, f: &BuiltFrame, cpu: Duration, len: u64, done: Instant) -> FrameStat {
    FrameStat {
        conn,
        frame_id: f.id,
        kind: f.kind,
        bytes: len,
        constants_sent: f.constants_sent,
        cache_hits: f.cache_hits,
        encodes: f.encodes,
        render_ms: f.render_ms,
        encode_ms: f.encode_ms,
        cpu_ms: cpu.as_secs_f64() * 1e3,
        server_rendering_ms: (done - f.started).as_secs_f64() * 1e3,
        inputs: f.inputs,
        input: f.last_input.map(|k| k.name().to_string()),
        sent_unix_ms: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1e3)
            .unwrap_or(0.0),
    }
}

/// The session thread's state: the session, its channels and the clocks of its timers.
struct Edt {
    s: Session,
    rx: Receiver<EdtMsg>,
    tx: mpsc::Sender<Outgoing>,
    stats: Arc<ServerStats>,
    start: Instant,
    tick: Duration,
    next_tick: Instant,
    blink: Option<Duration>,
    next_blink: Option<Instant>,
    /// Session-thread CPU of inputs and blinks not yet folded into a frame.
    pending_cpu: Duration,
}

impl Edt {
    fn new(
        s: Session,
        rx: Receiver<EdtMsg>,
        tx: mpsc::Sender<Outgoing>,
        stats: Arc<ServerStats>,
    ) -> Edt {
        let knobs = s.knobs();
        let tick = Duration::from_millis(knobs.tick_ms.max(1) as u64);
        let blink = (knobs.blink_ms > 0).then(|| Duration::from_millis(knobs.blink_ms as u64));
        let start = Instant::now();
        Edt {
            s,
            rx,
            tx,
            stats,
            start,
            tick,
            next_tick: start,
            blink,
            next_blink: blink.map(|b| start + b),
            pending_cpu: Duration::ZERO,
        }
    }

    /// Inputs and line-of-sight work as they arrive, frames on the tick, until the
    /// connection is gone (its input channel closed or its writer ended).
    fn run(mut self) {
        loop {
            // A writer that ended (client gone, close sent) stops the session even when
            // inputs are still queued: their work would be for no one.
            if self.tx.is_closed() {
                return;
            }
            let now = Instant::now();
            self.on_timers(now);
            if now >= self.next_tick && !self.on_tick(now) {
                return;
            }
            let msg = match self.wake_at() {
                Some(w) => match self
                    .rx
                    .recv_timeout(w.saturating_duration_since(Instant::now()))
                {
                    Ok(m) => Some(m),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return,
                },
                None => match self.rx.recv() {
                    Ok(m) => Some(m),
                    Err(_) => return,
                },
            };
            if let Some(m) = msg {
                self.on_message(m.msg);
            }
        }
    }

    /// The blink, a press's second step and the ack timeout.
    fn on_timers(&mut self, now: Instant) {
        self.s.on_second_step(now);
        if let (Some(at), Some(b)) = (self.next_blink, self.blink) {
            if now >= at {
                let c0 = thread_cpu();
                self.s.on_blink();
                self.pending_cpu += thread_cpu().saturating_sub(c0);
                self.next_blink = Some(if at + b > now { at + b } else { now + b });
            }
        }
        if let Some(d) = self.s.ack_deadline() {
            if now >= d {
                self.s.reset_window();
                bump(&self.stats.counters.ack_timeouts, 1);
            }
        }
    }

    /// The paint tick: one frame of everything dirty, if the window allows. False when the
    /// writer is gone (then a build in progress is given up). Blocks while the writer's
    /// queue is full (a slow socket).
    fn on_tick(&mut self, now: Instant) -> bool {
        let k = (now - self.start).as_nanos() / self.tick.as_nanos() + 1;
        self.next_tick = self.start + self.tick * (k as u32);
        if !(self.s.is_dirty() && self.s.can_send()) {
            return true;
        }
        let c0 = thread_cpu();
        // A client gone mid-build (its writer ended) stops a first frame between tiles.
        let tx = &self.tx;
        let Some(f) = self.s.build_frame_unless(&|| tx.is_closed()) else {
            return !self.tx.is_closed();
        };
        let cpu = self.pending_cpu + thread_cpu().saturating_sub(c0);
        self.pending_cpu = Duration::ZERO;
        self.tx.blocking_send((f, cpu)).is_ok()
    }

    /// The earliest timer the thread must wake for; `None` sleeps until a message.
    fn wake_at(&self) -> Option<Instant> {
        let tick = (self.s.is_dirty() && self.s.can_send()).then_some(self.next_tick);
        [
            tick,
            self.next_blink,
            self.s.second_step_due(),
            self.s.ack_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn on_message(&mut self, m: ClientMsg) {
        let c = &self.stats.counters;
        match m {
            ClientMsg::Input(i) => {
                let c0 = thread_cpu();
                let outcome = self.s.on_input(i);
                self.pending_cpu += thread_cpu().saturating_sub(c0);
                if outcome == InputOutcome::Dropped {
                    bump(&c.inputs_dropped, 1);
                }
            }
            ClientMsg::Ack(id) => {
                if self.s.on_ack(id) {
                    bump(&c.acks, 1);
                } else {
                    bump(&c.acks_unknown, 1);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_reasons_fit_a_control_frame() {
        let long = "é".repeat(200);
        let t = truncate(&long);
        assert!(t.len() <= 100 && t.len() >= 98, "{}", t.len());
        assert!(long.starts_with(&t));
        assert_eq!(truncate("short"), "short");
    }

    #[test]
    fn read_errors_tell_a_vanished_client_from_a_bad_one() {
        let io = axum::Error::new(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert_eq!(read_error(&io), End::Vanished);
        let eof = axum::Error::new(
            "WebSocket protocol error: Connection reset without closing handshake",
        );
        assert_eq!(read_error(&eof), End::Vanished);
        let ctl = axum::Error::new(
            "WebSocket protocol error: Control frame too big (payload must be 125 bytes or less)",
        );
        assert!(matches!(read_error(&ctl), End::Bad(close::PROTOCOL, _)));
        let big = axum::Error::new("Space limit exceeded: Message too long: 16777216 > 65536");
        assert!(matches!(read_error(&big), End::Bad(close::TOO_BIG, _)));
        // The `deflate` socket's size limit, a typed yawc error.
        let big = axum::Error::new(yawc::WebSocketError::FrameTooLarge);
        assert!(matches!(read_error(&big), End::Bad(close::TOO_BIG, _)));
    }
}
