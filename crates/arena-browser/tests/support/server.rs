//! A tiny loopback HTTP server for test pages, plus WebSocket echo and sink servers.
//! Shared by the Chromium tests and the benchmark (`#[path]`-included).

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
    pages: Pages,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl TestServer {
    pub async fn start() -> anyhow::Result<Self> {
        let pages: Pages = Arc::new(Mutex::new(HashMap::new()));
        let http_l = TcpListener::bind("127.0.0.1:0").await?;
        let echo_l = TcpListener::bind("127.0.0.1:0").await?;
        let sink_l = TcpListener::bind("127.0.0.1:0").await?;
        let (http, echo, sink) = (
            http_l.local_addr()?,
            echo_l.local_addr()?,
            sink_l.local_addr()?,
        );
        let p = pages.clone();
        let echo_url = format!("ws://{echo}/");
        let sink_url = format!("ws://{sink}/");
        let t_http = tokio::spawn(async move {
            while let Ok((s, _)) = http_l.accept().await {
                let p = p.clone();
                let (e, k) = (echo_url.clone(), sink_url.clone());
                tokio::spawn(async move {
                    let _ = serve_http(s, p, &e, &k).await;
                });
            }
        });
        let t_echo = tokio::spawn(ws_loop(echo_l, true));
        let t_sink = tokio::spawn(ws_loop(sink_l, false));
        Ok(Self {
            http,
            echo,
            sink,
            pages,
            tasks: vec![t_http, t_echo, t_sink],
        })
    }

    /// Serves `body` at `path`. `{{ECHO}}` and `{{SINK}}` in the body become the WebSocket
    /// URLs of the echo and sink servers.
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

async fn serve_http(mut s: TcpStream, pages: Pages, echo: &str, sink: &str) -> std::io::Result<()> {
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
            b.replace("{{ECHO}}", echo).replace("{{SINK}}", sink),
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
