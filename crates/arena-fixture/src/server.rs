//! The fixture's HTTP + WebSocket server (127.0.0.1 only). Each connection gets a session
//! thread (the fixture's event-dispatch thread: inputs, line-of-sight work, the paint tick,
//! frame building) and a writer task that sends frames and records them.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use axum::body::Bytes;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{mpsc, watch};

use crate::art::Board;
use crate::knobs::Knobs;
use crate::proto::{parse_client, ClientMsg, Input, MAX_CLIENT_MESSAGE};
use crate::session::{BuiltFrame, FrameKind, InputOutcome, Session};
use crate::stats::{bump, thread_cpu, Counters, FrameStat, ServerStats, StatsLog};

const INDEX_HTML: &str = include_str!("../assets/index.html");
const FIXTURE_JS: &str = include_str!("../assets/fixture.js");
const FIXTURE_WORKER_JS: &str = include_str!("../assets/fixture-worker.js");

/// Where the page template takes the `worker` knob (`<html data-worker="...">`).
const WORKER_SLOT: &str = "{{worker}}";

/// The page with the knobs the client needs before its socket opens filled in: the
/// `worker` knob as `<html data-worker="true|false">`, read by fixture.js at start.
fn render_index(knobs: &Knobs) -> String {
    INDEX_HTML.replace(WORKER_SLOT, if knobs.worker { "true" } else { "false" })
}

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
}

/// How to start a server besides its knobs.
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// TCP port on 127.0.0.1; 0 picks an ephemeral port.
    pub port: u16,
    /// Where per-frame stats lines go (none: not written).
    pub stats_log: Option<StatsLog>,
}

/// Starts fixture servers.
pub struct Server;

struct Shared {
    knobs: Knobs,
    index_html: String,
    board: Arc<Board>,
    stats: Arc<ServerStats>,
    next_conn: AtomicU64,
    shutdown: watch::Receiver<bool>,
}

/// A running fixture server. Dropping it stops the server too; `shutdown` also waits.
pub struct ServerHandle {
    addr: SocketAddr,
    knobs: Knobs,
    stats: Arc<ServerStats>,
    stop: watch::Sender<bool>,
    serve: Option<tokio::task::JoinHandle<()>>,
    bots_stop: Arc<AtomicBool>,
    bots: Vec<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Starts a server with `knobs` on an ephemeral 127.0.0.1 port.
    pub async fn start(knobs: Knobs) -> anyhow::Result<ServerHandle> {
        Server::start_with(knobs, ServerOptions::default()).await
    }

    /// Starts a server with `knobs` and `opts`.
    pub async fn start_with(knobs: Knobs, opts: ServerOptions) -> anyhow::Result<ServerHandle> {
        let stats = Arc::new(match &opts.stats_log {
            Some(StatsLog::File(p)) => ServerStats::new(opts.stats_log.as_ref())
                .with_context(|| format!("opening stats log {}", p.display()))?,
            other => ServerStats::new(other.as_ref()).context("opening stats log")?,
        });
        let (seed, shadows) = (knobs.seed, knobs.shadows);
        let board = Arc::new(
            tokio::task::spawn_blocking(move || Board::generate(seed, shadows))
                .await
                .context("generating the board")?,
        );
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", opts.port))
            .await
            .with_context(|| format!("binding 127.0.0.1:{}", opts.port))?;
        let addr = listener.local_addr().context("reading the bound address")?;
        let (stop, shutdown) = watch::channel(false);
        let shared = Arc::new(Shared {
            knobs: knobs.clone(),
            index_html: render_index(&knobs),
            board,
            stats: stats.clone(),
            next_conn: AtomicU64::new(0),
            shutdown: shutdown.clone(),
        });
        let app = Router::new()
            .route("/", get(index))
            .route("/fixture.js", get(script))
            .route("/fixture-worker.js", get(worker_script))
            .route("/knobs", get(knobs_json))
            .route("/stats", get(stats_json))
            .route("/ws", get(ws_upgrade))
            .fallback(not_found)
            .with_state(shared);
        let mut shutdown_rx = shutdown;
        let serve = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = shutdown_rx.wait_for(|s| *s).await;
                })
                .await;
        });
        let bots_stop = Arc::new(AtomicBool::new(false));
        let mut bots = Vec::new();
        for i in 0..knobs.bots {
            let stop = bots_stop.clone();
            let duty = knobs.bot_duty;
            let h = std::thread::Builder::new()
                .name(format!("fixture-bot-{i}"))
                .spawn(move || bot(stop, duty))
                .context("starting a bot thread")?;
            bots.push(h);
        }
        Ok(ServerHandle {
            addr,
            knobs,
            stats,
            stop,
            serve: Some(serve),
            bots_stop,
            bots,
        })
    }
}

fn answered_by(frames: &[FrameStat]) -> u32 {
    frames
        .iter()
        .filter(|f| f.kind == FrameKind::Reply)
        .map(|f| f.inputs)
        .sum()
}

impl ServerHandle {
    /// The page URL, `http://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }
    /// The WebSocket URL, `ws://127.0.0.1:<port>/ws`.
    pub fn ws_url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
    /// The effective knobs.
    pub fn knobs(&self) -> &Knobs {
        &self.knobs
    }
    /// Server-wide counters (frames and bytes sent, inputs, acks, bad messages...).
    pub fn counters(&self) -> Counters {
        self.stats.counters()
    }
    /// Per-frame records, oldest first (the last `FRAME_RECORDS_KEPT`).
    pub fn frames(&self) -> Vec<FrameStat> {
        self.stats.frames()
    }
    /// Waits (polling every 10 ms) until the replies sent so far answer at least `inputs`
    /// inputs; returns the id of the last frame sent, for a client to wait for its paint.
    /// An error after `within`.
    pub async fn wait_answered(&self, inputs: u32, within: Duration) -> anyhow::Result<u32> {
        let end = Instant::now() + within;
        loop {
            let frames = self.frames();
            let answered = answered_by(&frames);
            if answered >= inputs {
                return Ok(frames.iter().map(|f| f.frame_id).max().unwrap_or(0));
            }
            if Instant::now() >= end {
                anyhow::bail!(
                    "{answered} of {inputs} inputs answered within {} ms",
                    within.as_millis()
                );
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    /// Inputs answered by the replies kept so far (since the start or `clear_frames`).
    pub fn answered_inputs(&self) -> u32 {
        answered_by(&self.frames())
    }
    /// Forgets the per-frame records kept so far (counters keep counting).
    pub fn clear_frames(&self) {
        self.stats.clear_frames()
    }

    /// Stops accepting, closes every session (close code 1001), stops the bots and waits
    /// for all of it (bounded: 5 s).
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        self.bots_stop.store(true, Ordering::Relaxed);
        if let Some(serve) = self.serve.take() {
            let abort = serve.abort_handle();
            if tokio::time::timeout(Duration::from_secs(3), serve)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        while self.stats.counters().connections_open > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let bots = std::mem::take(&mut self.bots);
        let _ = tokio::task::spawn_blocking(move || {
            for b in bots {
                let _ = b.join();
            }
        })
        .await;
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        self.bots_stop.store(true, Ordering::Relaxed);
        if let Some(s) = self.serve.take() {
            s.abort();
        }
    }
}

fn bot(stop: Arc<AtomicBool>, duty: u32) {
    let period = Duration::from_millis(10);
    let busy = period * duty.min(100) / 100;
    let mut x = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let t = Instant::now();
        while t.elapsed() < busy {
            for i in 0..1000u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
        }
        if let Some(rest) = period.checked_sub(busy) {
            std::thread::sleep(rest);
        }
    }
}

fn isolated(mut r: Response, content_type: &'static str) -> Response {
    let h = r.headers_mut();
    // Cross-origin isolation: performance.now() gets 5 us resolution instead of 100 us.
    h.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        "cross-origin-embedder-policy",
        HeaderValue::from_static("require-corp"),
    );
    h.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

async fn index(State(st): State<Arc<Shared>>) -> Response {
    isolated(
        st.index_html.clone().into_response(),
        "text/html; charset=utf-8",
    )
}

async fn script() -> Response {
    isolated(FIXTURE_JS.into_response(), "text/javascript; charset=utf-8")
}

/// The socket side of the client with `worker=true` (served whatever the knob: the page
/// only starts it when asked). Its COEP header lets it load in the isolated page.
async fn worker_script() -> Response {
    isolated(
        FIXTURE_WORKER_JS.into_response(),
        "text/javascript; charset=utf-8",
    )
}

async fn knobs_json(State(st): State<Arc<Shared>>) -> Response {
    let body = serde_json::to_string_pretty(&st.knobs).unwrap_or_else(|_| "{}".into());
    isolated(body.into_response(), "application/json")
}

async fn stats_json(State(st): State<Arc<Shared>>) -> Response {
    let body = serde_json::to_string_pretty(&st.stats.counters()).unwrap_or_else(|_| "{}".into());
    isolated(body.into_response(), "application/json")
}

async fn not_found() -> Response {
    isolated(
        (StatusCode::NOT_FOUND, "not found\n").into_response(),
        "text/plain",
    )
}

async fn ws_upgrade(State(st): State<Arc<Shared>>, ws: WebSocketUpgrade) -> Response {
    ws.max_message_size(MAX_CLIENT_MESSAGE)
        .max_frame_size(MAX_CLIENT_MESSAGE)
        .on_upgrade(move |socket| connection(socket, st))
}

enum EdtMsg {
    Input(Input),
    Ack(u32),
}

enum Outgoing {
    Frame(BuiltFrame, Duration),
    Close(u16, String),
}

async fn connection(socket: WebSocket, st: Arc<Shared>) {
    let conn = st.next_conn.fetch_add(1, Ordering::Relaxed) + 1;
    let c = &st.stats.counters;
    bump(&c.connections_total, 1);
    bump(&c.connections_open, 1);
    let (mut sink, mut stream) = socket.split();
    let (to_edt, edt_rx) = std::sync::mpsc::channel::<EdtMsg>();
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Outgoing>();
    let edt = {
        let (knobs, board, stats, tx) = (
            st.knobs.clone(),
            st.board.clone(),
            st.stats.clone(),
            out_tx.clone(),
        );
        std::thread::Builder::new()
            .name(format!("fixture-edt-{conn}"))
            .spawn(move || run_edt(knobs, board, edt_rx, tx, stats))
    };
    if edt.is_err() {
        let _ = sink
            .send(Message::Close(Some(CloseFrame {
                code: 1011,
                reason: "no session thread".into(),
            })))
            .await;
        c.connections_open.fetch_sub(1, Ordering::Relaxed);
        return;
    }
    let stats = st.stats.clone();
    let delay = Duration::from_millis(st.knobs.delay_ms as u64);
    let writer = tokio::spawn(async move {
        while let Some(out) = out_rx.recv().await {
            match out {
                Outgoing::Frame(f, cpu) => {
                    if f.kind == FrameKind::Reply && !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    let len = f.bytes.len() as u64;
                    if sink
                        .send(Message::Binary(Bytes::from(f.bytes)))
                        .await
                        .is_err()
                    {
                        break;
                    }
                    let done = Instant::now();
                    stats.record(FrameStat {
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
                    });
                }
                Outgoing::Close(code, reason) => {
                    let _ = sink
                        .send(Message::Close(Some(CloseFrame {
                            code,
                            reason: reason.into(),
                        })))
                        .await;
                    break;
                }
            }
        }
        let _ = sink.close().await;
    });
    let mut shutdown = st.shutdown.clone();
    let close_with = |code: u16, reason: String| {
        let _ = out_tx.send(Outgoing::Close(code, reason));
    };
    loop {
        let msg = tokio::select! {
            m = stream.next() => m,
            _ = shutdown.wait_for(|s| *s) => {
                close_with(close::GOING_AWAY, "server shutting down".into());
                break;
            }
        };
        match msg {
            None | Some(Ok(Message::Close(_))) => break,
            Some(Ok(Message::Binary(b))) => match parse_client(&b) {
                Ok(ClientMsg::Input(i)) => {
                    bump(&c.inputs, 1);
                    if to_edt.send(EdtMsg::Input(i)).is_err() {
                        break;
                    }
                }
                Ok(ClientMsg::Ack(id)) => {
                    if to_edt.send(EdtMsg::Ack(id)).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    bump(&c.bad_messages, 1);
                    close_with(close::PROTOCOL, e.to_string());
                    break;
                }
            },
            Some(Ok(Message::Text(_))) => {
                bump(&c.bad_messages, 1);
                close_with(
                    close::UNSUPPORTED,
                    "text frames are not part of the protocol".into(),
                );
                break;
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            Some(Err(e)) => {
                // Oversized messages and broken framing end here; the socket may still
                // take a close frame.
                bump(&c.bad_messages, 1);
                let text = e.to_string();
                let code = if text.contains("too long")
                    || text.contains("too big")
                    || text.contains("Space limit")
                {
                    close::TOO_BIG
                } else {
                    close::PROTOCOL
                };
                close_with(code, text.chars().take(100).collect());
                break;
            }
        }
    }
    drop(to_edt);
    drop(out_tx);
    let abort = writer.abort_handle();
    if tokio::time::timeout(Duration::from_secs(2), writer)
        .await
        .is_err()
    {
        // A client that stopped reading would hold its writer forever.
        abort.abort();
    }
    if let Ok(h) = edt {
        let _ = tokio::task::spawn_blocking(move || h.join()).await;
    }
    c.connections_open.fetch_sub(1, Ordering::Relaxed);
}

/// The session thread: inputs and line-of-sight work as they arrive, frames on the tick.
fn run_edt(
    knobs: Knobs,
    board: Arc<Board>,
    rx: Receiver<EdtMsg>,
    tx: mpsc::UnboundedSender<Outgoing>,
    stats: Arc<ServerStats>,
) {
    let c = &stats.counters;
    let tick = Duration::from_millis(knobs.tick_ms.max(1) as u64);
    let blink = (knobs.blink_ms > 0).then(|| Duration::from_millis(knobs.blink_ms as u64));
    let mut s = Session::new(knobs, board);
    let start = Instant::now();
    let mut next_tick = start;
    let mut next_blink = blink.map(|b| start + b);
    let mut pending_cpu = Duration::ZERO;
    loop {
        let now = Instant::now();
        if let (Some(at), Some(b)) = (next_blink, blink) {
            if now >= at {
                let c0 = thread_cpu();
                s.on_blink();
                pending_cpu += thread_cpu().saturating_sub(c0);
                next_blink = Some(if at + b > now { at + b } else { now + b });
            }
        }
        if let Some(d) = s.ack_deadline() {
            if now >= d {
                s.reset_window();
                bump(&c.ack_timeouts, 1);
            }
        }
        if now >= next_tick {
            let k = (now - start).as_nanos() / tick.as_nanos() + 1;
            next_tick = start + tick * (k as u32);
            if s.is_dirty() && s.can_send() {
                let c0 = thread_cpu();
                if let Some(f) = s.build_frame() {
                    let cpu = pending_cpu + thread_cpu().saturating_sub(c0);
                    pending_cpu = Duration::ZERO;
                    if tx.send(Outgoing::Frame(f, cpu)).is_err() {
                        break;
                    }
                }
            }
        }
        let mut wake: Option<Instant> = None;
        let mut earliest = |t: Option<Instant>| {
            if let Some(t) = t {
                wake = Some(wake.map_or(t, |w: Instant| w.min(t)));
            }
        };
        if s.is_dirty() && s.can_send() {
            earliest(Some(next_tick));
        }
        earliest(next_blink);
        earliest(s.ack_deadline());
        let msg = match wake {
            Some(w) => match rx.recv_timeout(w.saturating_duration_since(Instant::now())) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            },
            None => match rx.recv() {
                Ok(m) => Some(m),
                Err(_) => break,
            },
        };
        match msg {
            Some(EdtMsg::Input(i)) => {
                let c0 = thread_cpu();
                let outcome = s.on_input(i);
                pending_cpu += thread_cpu().saturating_sub(c0);
                if outcome == InputOutcome::Dropped {
                    bump(&c.inputs_dropped, 1);
                }
            }
            Some(EdtMsg::Ack(id)) => {
                if s.on_ack(id) {
                    bump(&c.acks, 1);
                } else {
                    bump(&c.acks_unknown, 1);
                }
            }
            None => {}
        }
    }
}

/// Runs a server until Ctrl-C or SIGTERM (the `arena-perf serve` command). `on_ready` gets the handle
/// once it listens (to print the URL).
pub fn serve_until_interrupt(
    knobs: Knobs,
    opts: ServerOptions,
    on_ready: impl FnOnce(&ServerHandle),
) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async move {
        let handle = Server::start_with(knobs, opts).await?;
        on_ready(&handle);
        // SIGTERM too: a service manager or a script stops it that way.
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("installing the SIGTERM handler")?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r.context("waiting for Ctrl-C")?,
            _ = term.recv() => {}
        }
        handle.shutdown().await;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_carries_the_worker_knob() {
        assert_eq!(INDEX_HTML.matches(WORKER_SLOT).count(), 1);
        let mut k = Knobs::default();
        let page = render_index(&k);
        assert!(page.contains("data-worker=\"false\""), "{page}");
        assert!(!page.contains("{{"), "{page}");
        k.worker = true;
        assert!(render_index(&k).contains("data-worker=\"true\""));
        // The client reads exactly this attribute, and the worker script it starts exists.
        assert!(FIXTURE_JS.contains("dataset.worker"));
        assert!(FIXTURE_JS.contains("/fixture-worker.js"));
        assert!(FIXTURE_WORKER_JS.contains("new WebSocket"));
    }
}
