//! The link as a SOCKS5 proxy: the browser sends every connection of the page here, whatever
//! host:port the page or its scripts picked, and each is carried to its loopback destination
//! through the same shaped pipes as the relay's. Every connection is logged with its
//! destination, what it carried and its bytes each way, so a run can account for them.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};

use crate::pipe::{shaped, Counters};
use crate::relay::connect;
use crate::socks::{self, Reply};
use crate::spec::LinkSpec;

/// What a carried connection held, from its first bytes browser -> target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnKind {
    /// An HTTP request asking for `Upgrade: websocket`.
    WebSocket,
    Http,
    /// A TLS handshake: what it carries cannot be told.
    Tls,
    Other,
    /// Nothing was sent (yet).
    Silent,
}

impl ConnKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ConnKind::WebSocket => "websocket",
            ConnKind::Http => "http",
            ConnKind::Tls => "tls",
            ConnKind::Other => "other",
            ConnKind::Silent => "silent",
        }
    }

    /// Judged from the first bytes only: a browser always speaks first (HTTP, TLS).
    fn of(first: &[u8]) -> ConnKind {
        if first.is_empty() {
            return ConnKind::Silent;
        }
        if first[0] == 0x16 {
            return ConnKind::Tls;
        }
        let text = String::from_utf8_lossy(first).to_ascii_lowercase();
        let head = text.split("\r\n\r\n").next().unwrap_or("");
        if !head.contains(" http/1.") {
            return ConnKind::Other;
        }
        let upgrade = head.lines().any(|l| {
            l.split_once(':')
                .is_some_and(|(k, v)| k.trim() == "upgrade" && v.trim() == "websocket")
        });
        if upgrade {
            ConnKind::WebSocket
        } else {
            ConnKind::Http
        }
    }
}

/// One connection the link carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    /// The destination as the browser named it (`127.0.0.1:6080`, `localhost:80`).
    pub dest: String,
    pub kind: ConnKind,
    /// Bytes delivered browser -> target.
    pub bytes_up: u64,
    /// Bytes delivered target -> browser.
    pub bytes_down: u64,
}

/// A connection the link would not or could not carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub dest: String,
    pub why: String,
    /// True when the link would not carry it (off loopback, not SOCKS5 CONNECT); false when
    /// the destination did not accept.
    pub routing: bool,
}

struct Entry {
    dest: String,
    kind: Mutex<ConnKind>,
    counters: Counters,
}

#[derive(Default)]
struct Log {
    carried: Mutex<Vec<Arc<Entry>>>,
    refused: Mutex<Vec<Refusal>>,
}

impl Log {
    fn refuse(&self, dest: String, why: String, routing: bool) {
        if let Ok(mut r) = self.refused.lock() {
            r.push(Refusal { dest, why, routing });
        }
    }
}

/// A running proxy; [`Proxy::stop`] ends every connection and releases the port.
pub struct Proxy {
    addr: SocketAddr,
    pub spec: LinkSpec,
    log: Arc<Log>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Proxy {
    /// Listens on 127.0.0.1 (a free port).
    pub async fn start(spec: LinkSpec) -> Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let log = Arc::new(Log::default());
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(accept_loop(listener, spec, log.clone(), stopped));
        Ok(Proxy {
            addr,
            spec,
            log,
            stop: Some(stop),
            task: Some(task),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The proxy as Chromium's `--proxy-server` and `proxyServer` take it.
    pub fn url(&self) -> String {
        format!("socks5://{}", self.addr)
    }

    /// Every connection carried so far, in the order they were accepted.
    pub fn carried(&self) -> Vec<Carried> {
        let Ok(c) = self.log.carried.lock() else {
            return Vec::new();
        };
        c.iter()
            .map(|e| Carried {
                dest: e.dest.clone(),
                kind: e.kind.lock().map(|k| *k).unwrap_or(ConnKind::Silent),
                bytes_up: e.counters.up.load(Ordering::SeqCst),
                bytes_down: e.counters.down.load(Ordering::SeqCst),
            })
            .collect()
    }

    /// Every connection refused so far, with why.
    pub fn refused(&self) -> Vec<Refusal> {
        self.log
            .refused
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// Ends every connection and closes the listener (its port is free when this returns).
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

/// Accepts until stopped; every connection's tasks end with the loop.
async fn accept_loop(
    listener: TcpListener,
    spec: LinkSpec,
    log: Arc<Log>,
    mut stopped: oneshot::Receiver<()>,
) {
    let mut conns = JoinSet::new();
    let mut n = 0u64;
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => {
                let Ok((client, _)) = accepted else { continue };
                conns.spawn(serve(client, spec, log.clone(), n));
                n += 1;
            }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

/// One proxied connection: the handshake, the loopback check, the destination opened,
/// then the shaped link between them.
async fn serve(mut client: TcpStream, spec: LinkSpec, log: Arc<Log>, n: u64) {
    let dest = match socks::accept(&mut client).await {
        Ok(d) => d,
        Err((code, why)) => {
            if let Some(c) = code {
                let _ = socks::reply(&mut client, c).await;
            }
            log.refuse("?".into(), why, true);
            return;
        }
    };
    let name = dest.to_string();
    let addrs = match dest.loopback_addrs() {
        Ok(a) => a,
        Err(why) => {
            let _ = socks::reply(&mut client, Reply::NotAllowed).await;
            log.refuse(name, why, true);
            return;
        }
    };
    let Some(server) = open(&addrs, &log, &name).await else {
        let _ = socks::reply(&mut client, Reply::Refused).await;
        return;
    };
    if socks::reply(&mut client, Reply::Succeeded).await.is_err() {
        return;
    }
    let entry = Arc::new(Entry {
        dest: name,
        kind: Mutex::new(ConnKind::Silent),
        counters: Counters::default(),
    });
    if let Ok(mut c) = log.carried.lock() {
        c.push(entry.clone());
    }
    // A browser speaks first, so this waits for nothing the pipes would not: the request is
    // read by the pipe right after, and its kind is known before any byte crosses.
    let mut first = [0u8; 2048];
    let got = client.peek(&mut first).await.unwrap_or(0);
    if let Ok(mut k) = entry.kind.lock() {
        *k = ConnKind::of(&first[..got]);
    }
    shaped(client, server, spec, n, entry.counters.clone()).await;
}

/// The first of `addrs` that accepts; a refusal is logged once, with the last error.
async fn open(addrs: &[SocketAddr], log: &Log, name: &str) -> Option<TcpStream> {
    let mut last = String::new();
    for a in addrs {
        match connect(*a).await {
            Ok(s) => return Some(s),
            Err(e) => last = format!("{a}: {e}"),
        }
    }
    let why = format!("the destination did not accept: {last}");
    log.refuse(name.to_string(), why, false);
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_bytes_tell_what_a_connection_carries() {
        let ws = b"GET /websockify HTTP/1.1\r\nHost: 127.0.0.1:6080\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
        assert_eq!(ConnKind::of(ws), ConnKind::WebSocket);
        let get = b"GET /vnc_lite.html HTTP/1.1\r\nHost: h\r\n\r\n";
        assert_eq!(ConnKind::of(get), ConnKind::Http);
        // A header in the body is not the request's.
        let body = b"POST / HTTP/1.1\r\nHost: h\r\n\r\nUpgrade: websocket\r\n";
        assert_eq!(ConnKind::of(body), ConnKind::Http);
        assert_eq!(ConnKind::of(&[0x16, 3, 1]), ConnKind::Tls);
        assert_eq!(ConnKind::of(b"RFB 003.008\n"), ConnKind::Other);
        assert_eq!(ConnKind::of(b""), ConnKind::Silent);
    }
}
