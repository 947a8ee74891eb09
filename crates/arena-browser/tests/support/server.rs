//! A tiny loopback HTTP server for test pages, plus WebSocket echo, sink and press-only
//! servers. Shared by the Chromium tests, the pilot's tests and the benchmark
//! (`#[path]`-included).

use futures::StreamExt;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

type Pages = Arc<Mutex<HashMap<String, (&'static str, String)>>>;

#[allow(dead_code)] // each includer uses a different part
pub struct TestServer {
    pub http: SocketAddr,
    pub echo: SocketAddr,
    pub sink: SocketAddr,
    /// Answers only messages whose first byte is 1 (a press), echoing them after the
    /// delay named by the socket's path in ms (`ws://host/25`); everything else gets
    /// nothing. Counts the answers it sent.
    pub press: SocketAddr,
    pub press_replies: Arc<std::sync::atomic::AtomicU64>,
    pages: Pages,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl TestServer {
    pub async fn start() -> anyhow::Result<Self> {
        let pages: Pages = Arc::new(Mutex::new(HashMap::new()));
        let http_l = TcpListener::bind("127.0.0.1:0").await?;
        let echo_l = TcpListener::bind("127.0.0.1:0").await?;
        let sink_l = TcpListener::bind("127.0.0.1:0").await?;
        let press_l = TcpListener::bind("127.0.0.1:0").await?;
        let (http, echo, sink, press) = (
            http_l.local_addr()?,
            echo_l.local_addr()?,
            sink_l.local_addr()?,
            press_l.local_addr()?,
        );
        let press_replies = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let p = pages.clone();
        let echo_url = format!("ws://{echo}/");
        let sink_url = format!("ws://{sink}/");
        let press_url = format!("ws://{press}/");
        let t_http = tokio::spawn(async move {
            while let Ok((s, _)) = http_l.accept().await {
                let p = p.clone();
                let (e, k, q) = (echo_url.clone(), sink_url.clone(), press_url.clone());
                tokio::spawn(async move {
                    let _ = serve_http(s, p, &e, &k, &q).await;
                });
            }
        });
        let t_echo = tokio::spawn(ws_loop(echo_l, true));
        let t_sink = tokio::spawn(ws_loop(sink_l, false));
        let t_press = tokio::spawn(press_loop(press_l, press_replies.clone()));
        Ok(Self {
            http,
            echo,
            sink,
            press,
            press_replies,
            pages,
            tasks: vec![t_http, t_echo, t_sink, t_press],
        })
    }

    /// Serves `body` at `path`. `{{ECHO}}`, `{{SINK}}` and `{{PRESS}}` in the body become
    /// the WebSocket URLs of the echo, sink and press-only servers.
    pub fn add(&self, path: &str, content_type: &'static str, body: &str) {
        if let Ok(mut p) = self.pages.lock() {
            p.insert(path.to_string(), (content_type, body.to_string()));
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.http, path)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

async fn serve_http(
    mut s: TcpStream,
    pages: Pages,
    echo: &str,
    sink: &str,
    press: &str,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf);
    let path = head.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split('?').next().unwrap_or("/");
    let found = pages.lock().ok().and_then(|p| p.get(path).cloned());
    let (status, ctype, body) = match found {
        Some((c, b)) => (
            "200 OK",
            c,
            b.replace("{{ECHO}}", echo)
                .replace("{{SINK}}", sink)
                .replace("{{PRESS}}", press),
        ),
        None => ("404 Not Found", "text/plain", "not found".to_string()),
    };
    // Cross-origin isolation gives performance.now() 5 us resolution instead of 100 us.
    let resp = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\
         Cross-Origin-Opener-Policy: same-origin\r\nCross-Origin-Embedder-Policy: require-corp\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(resp.as_bytes()).await?;
    s.shutdown().await
}

async fn ws_loop(l: TcpListener, echo: bool) {
    while let Ok((s, _)) = l.accept().await {
        tokio::spawn(async move {
            let Ok(mut ws) = async_tungstenite::tokio::accept_async(s).await else {
                return;
            };
            while let Some(Ok(m)) = ws.next().await {
                if echo && (m.is_binary() || m.is_text()) && ws.send(m).await.is_err() {
                    break;
                }
            }
        });
    }
}

// tungstenite's handshake callback returns its own (large) error type.
#[allow(clippy::result_large_err)]
async fn press_loop(l: TcpListener, replies: Arc<std::sync::atomic::AtomicU64>) {
    use async_tungstenite::tungstenite::handshake::server::{Request, Response};
    while let Ok((s, _)) = l.accept().await {
        let replies = replies.clone();
        tokio::spawn(async move {
            let delay = Arc::new(Mutex::new(0u64));
            let d = delay.clone();
            let cb = move |req: &Request, resp: Response| {
                if let Ok(mut d) = d.lock() {
                    *d = req.uri().path().trim_matches('/').parse().unwrap_or(0);
                }
                Ok(resp)
            };
            let Ok(ws) = async_tungstenite::tokio::accept_hdr_async(s, cb).await else {
                return;
            };
            let ms = delay.lock().map(|d| *d).unwrap_or(0);
            let (mut tx, mut rx) = ws.split();
            let (q_tx, mut q_rx) = tokio::sync::mpsc::unbounded_channel();
            // Replies leave in order, each `ms` after its press arrived.
            let writer = tokio::spawn(async move {
                while let Some((at, m)) = q_rx.recv().await {
                    // The timer wheel fires up to a millisecond late; the last 2 ms are
                    // yielded away instead, so the delay is the one the test names.
                    tokio::time::sleep_until(at - std::time::Duration::from_millis(2)).await;
                    while tokio::time::Instant::now() < at {
                        tokio::task::yield_now().await;
                    }
                    if tx.send(m).await.is_err() {
                        break;
                    }
                    replies.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            });
            while let Some(Ok(m)) = rx.next().await {
                if m.is_binary() && m.clone().into_data().first() == Some(&1) {
                    let at = tokio::time::Instant::now() + std::time::Duration::from_millis(ms);
                    if q_tx.send((at, m)).is_err() {
                        break;
                    }
                }
            }
            drop(q_tx);
            let _ = writer.await;
        });
    }
}
