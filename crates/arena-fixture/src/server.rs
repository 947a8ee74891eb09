//! The fixture's HTTP + WebSocket server (127.0.0.1 only): the routes, the connection limit
//! (`max_connections`, refused with 503 before the upgrade) and the handle. Each accepted
//! connection is driven by `crate::conn`: a session thread (the fixture's event-dispatch
//! thread: inputs, line-of-sight work, the paint tick, frame building) and a writer task.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use arena_sys::interrupt;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tokio::sync::{watch, Semaphore};

use crate::art::Board;
use crate::bots::{Bots, Turns};
use crate::conn::connection;
use crate::deflate::DeflateSocket;
use crate::knobs::Knobs;
pub use crate::proto::close;
use crate::proto::{MAX_CLIENT_MESSAGE, READ_BUFFER};
use crate::session::FrameKind;
use crate::shared::Shared;
use crate::stats::{bump, Counters, FrameStat, ServerStats, StatsLog};

const INDEX_HTML: &str = include_str!("../assets/index.html");
const FIXTURE_JS: &str = include_str!("../assets/fixture.js");
const FIXTURE_WORKER_JS: &str = include_str!("../assets/fixture-worker.js");

/// Where the page template takes the `worker` knob (`<html data-worker="...">`).
const WORKER_SLOT: &str = "{{worker}}";
/// Where it takes the `move_flush_ms` knob (`<html data-move-flush="...">`).
const MOVE_FLUSH_SLOT: &str = "{{move_flush_ms}}";

/// The page with the knobs the client needs before its socket opens filled in: the
/// `worker` knob as `<html data-worker="true|false">` and the move flush timer as
/// `data-move-flush`, read by fixture.js at start.
fn render_index(knobs: &Knobs) -> String {
    INDEX_HTML
        .replace(WORKER_SLOT, if knobs.worker { "true" } else { "false" })
        .replace(MOVE_FLUSH_SLOT, &knobs.move_flush_ms.to_string())
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

/// A running fixture server. Dropping it stops the server too; `shutdown` also waits.
pub struct ServerHandle {
    addr: SocketAddr,
    knobs: Knobs,
    stats: Arc<ServerStats>,
    stop: watch::Sender<bool>,
    serve: Option<tokio::task::JoinHandle<()>>,
    bots: Bots,
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
        let bot_turns = Arc::new(Turns::new(knobs.bot_turn_ms));
        let shared = Arc::new(Shared {
            knobs: knobs.clone(),
            index_html: render_index(&knobs),
            board,
            stats: stats.clone(),
            next_conn: AtomicU64::new(0),
            shutdown: shutdown.clone(),
            slots: Arc::new(Semaphore::new(knobs.max_connections as usize)),
            bot_turns: bot_turns.clone(),
        });
        let app = Router::new()
            .route("/", get(index))
            .route("/fixture.js", get(script))
            .route("/fixture-worker.js", get(worker_script))
            .route("/knobs", get(knobs_json))
            .route("/stats", get(stats_json))
            .route(
                "/ws",
                if knobs.deflate {
                    get(ws_upgrade_deflate)
                } else {
                    get(ws_upgrade)
                },
            )
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
        let bots = Bots::start(knobs.bots, knobs.bot_duty, &bot_turns)?;
        Ok(ServerHandle {
            addr,
            knobs,
            stats,
            stop,
            serve: Some(serve),
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
    /// When each WebSocket upgrade completed, in order (the first 1024).
    pub fn upgrades(&self) -> Vec<std::time::Instant> {
        self.stats.upgrades()
    }

    /// When each session's board started on its way (after the `startup_ms` hold and its
    /// build), in order (the first 1024).
    pub fn boards_sent(&self) -> Vec<std::time::Instant> {
        self.stats.boards_sent()
    }

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
        self.bots.stop.store(true, Ordering::Relaxed);
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
        let bots = std::mem::take(&mut self.bots.handles);
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
        self.bots.stop.store(true, Ordering::Relaxed);
        if let Some(s) = self.serve.take() {
            s.abort();
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

/// The 503 that refuses an upgrade past `max_connections`: refused before the upgrade, so
/// a refused client costs no session thread, no WebSocket buffers, no board frame.
fn refused(st: &Shared) -> Response {
    bump(&st.stats.counters.connections_refused, 1);
    let body = format!(
        "too many connections (max_connections={})\n",
        st.knobs.max_connections
    );
    let mut r = isolated(
        (StatusCode::SERVICE_UNAVAILABLE, body).into_response(),
        "text/plain; charset=utf-8",
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// The upgrade to a session, or 503 past `max_connections`.
async fn ws_upgrade(State(st): State<Arc<Shared>>, ws: WebSocketUpgrade) -> Response {
    let Ok(slot) = st.slots.clone().try_acquire_owned() else {
        return refused(&st);
    };
    ws.max_message_size(MAX_CLIENT_MESSAGE)
        .max_frame_size(MAX_CLIENT_MESSAGE)
        .read_buffer_size(READ_BUFFER)
        .on_upgrade(move |socket| connection(socket, st, slot))
}

/// The upgrade with the `deflate` knob: permessage-deflate when the client offers it (the
/// answer's `Sec-WebSocket-Extensions` says what was agreed), else a plain socket, as
/// RFC 7692 lets a server do.
async fn ws_upgrade_deflate(State(st): State<Arc<Shared>>, ws: yawc::IncomingUpgrade) -> Response {
    let Ok(slot) = st.slots.clone().try_acquire_owned() else {
        return refused(&st);
    };
    let (answer, upgraded) = match ws.upgrade(crate::deflate::options(&st.knobs)) {
        Ok(u) => u,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response(),
    };
    tokio::spawn(async move {
        // A client that goes before the switch leaves nothing to serve.
        if let Ok(ws) = upgraded.await {
            connection(DeflateSocket::new(ws), st, slot).await;
        }
    });
    answer.map(axum::body::Body::new)
}

/// Runs a server until Ctrl-C or SIGTERM (the `arena-perf serve` command). `on_ready` gets
/// the handle once it listens (to print the URL). A signal during startup (the board takes
/// a while to render) ends it before it serves. A failed write of the stats log is warned
/// about on stderr at once, and is this function's error once the server stops.
pub fn serve_until_interrupt(
    knobs: Knobs,
    opts: ServerOptions,
    on_ready: impl FnOnce(&ServerHandle),
) -> anyhow::Result<()> {
    // The handlers go in before any startup work: a script that starts `serve &` and
    // signals it at once must not lose the signal. A non-interactive shell starts a
    // background job with SIGINT ignored, so until the handler is installed a SIGINT is
    // discarded by the kernel, not deferred; installing it replaces the inherited SIG_IGN.
    // SIGTERM too: a service manager or a script stops it that way.
    interrupt::install().context("installing the SIGINT/SIGTERM handlers")?;
    // This process is the server: large frames go back to the kernel when freed.
    crate::alloc::tune_for_serving();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let result = rt.block_on(async move {
        let handle = tokio::select! {
            h = Server::start_with(knobs, opts) => h?,
            _ = interrupt::wait() => return Ok(()),
        };
        on_ready(&handle);
        interrupt::wait().await;
        let stats = handle.stats.clone();
        handle.shutdown().await;
        match stats.sink_failure() {
            Some(msg) => Err(anyhow::anyhow!(msg)),
            None => Ok(()),
        }
    });
    // Interrupted during startup, the board may still be rendering on a blocking thread:
    // exit without waiting long for work no one will use.
    rt.shutdown_timeout(Duration::from_secs(1));
    result
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

    #[test]
    fn the_page_carries_the_move_flush_knob() {
        assert_eq!(INDEX_HTML.matches(MOVE_FLUSH_SLOT).count(), 1);
        let mut k = Knobs::default();
        assert!(render_index(&k).contains("data-move-flush=\"20\""));
        k.move_flush_ms = 100;
        assert!(render_index(&k).contains("data-move-flush=\"100\""));
        assert!(FIXTURE_JS.contains("dataset.moveFlush"));
    }
}
