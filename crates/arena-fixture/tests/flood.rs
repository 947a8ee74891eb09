//! Connection floods over loopback: 200 clients at once against a server whose
//! `max_connections` is below 200, three times. The excess is refused (HTTP 503), every
//! accepted session gets its board and ends when its client goes (a close frame, EOF or a
//! reset), and the memory a flood took comes back: the RSS after floods 2 and 3 stays within
//! 20 % of the RSS after flood 1.
//!
//! Its own test binary, so no other test's memory or threads are in the figures. The
//! clients are raw sockets that read into one small buffer: their memory is not the
//! server's, and it has to stay out of this process's RSS.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arena_fixture::{Counters, Knobs, Server, ServerHandle};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Barrier;

const CLIENTS: usize = 200;
const LIMIT: u32 = 32;
const FLOODS: usize = 3;
/// A board frame's payload at the default knobs is 672,173 B: this much read is the board.
const BOARD_BYTES: usize = 600_000;

/// How a client leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leave {
    /// A close frame, then the socket is closed.
    CloseFrame,
    /// The socket is closed without a close frame (FIN).
    Eof,
    /// SO_LINGER 0: the socket is reset.
    Reset,
}

/// What one flood client saw.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Upgraded and read the board, left as told.
    Served(Leave),
    /// 503 before the upgrade.
    Refused,
}

fn status_kb(key: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn rss_mb() -> f64 {
    status_kb("VmRSS:") as f64 / 1024.0
}

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}

/// The handshake, then the response head; `true` for 101, `false` for 503.
async fn upgrade(s: &mut TcpStream) -> Result<bool, String> {
    let req = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n\
               Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
               Sec-WebSocket-Version: 13\r\n\r\n";
    s.write_all(req.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut head = Vec::with_capacity(512);
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 4096 || s.read(&mut b).await.map_err(|e| e.to_string())? == 0 {
            return Err(format!("bad head {:?}", String::from_utf8_lossy(&head)));
        }
        head.push(b[0]);
    }
    let head = String::from_utf8_lossy(&head);
    if head.starts_with("HTTP/1.1 101") {
        Ok(true)
    } else if head.starts_with("HTTP/1.1 503") && head.to_ascii_lowercase().contains("retry-after")
    {
        Ok(false)
    } else {
        Err(format!("unexpected response {head}"))
    }
}

/// One client. `all_answered` holds a served client until every client of the flood has
/// its answer (101 or 503), so no session ends early and frees a slot for a late one.
async fn client(
    addr: std::net::SocketAddr,
    leave: Leave,
    all_answered: Arc<Barrier>,
) -> Result<Outcome, String> {
    let answer = async {
        let mut s = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
        let upgraded = upgrade(&mut s).await?;
        Ok::<_, String>((s, upgraded))
    }
    .await;
    all_answered.wait().await;
    let (mut s, upgraded) = answer?;
    if !upgraded {
        return Ok(Outcome::Refused);
    }
    let mut buf = vec![0u8; 16 * 1024];
    let mut got = 0;
    while got < BOARD_BYTES {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => return Err(format!("board cut at {got} B")),
            Ok(n) => got += n,
        }
    }
    match leave {
        // A masked close frame, code 1000 (mask 0: the payload stays as is).
        Leave::CloseFrame => {
            let _ = s.write_all(&[0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe8]).await;
        }
        Leave::Eof => {}
        Leave::Reset => s.set_zero_linger().map_err(|e| e.to_string())?,
    }
    drop(s);
    Ok(Outcome::Served(leave))
}

/// Figures of one flood.
struct Flood {
    served: Vec<Leave>,
    refused: usize,
    peak_rss: f64,
    peak_threads: usize,
    after_rss: f64,
    after_threads: usize,
    secs: f64,
}

/// 200 clients at once, each leaving by the kind its number picks; waits (bounded) until
/// every session has ended.
async fn flood(h: &ServerHandle) -> Flood {
    let t0 = Instant::now();
    let all_answered = Arc::new(Barrier::new(CLIENTS));
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let leave = [Leave::CloseFrame, Leave::Eof, Leave::Reset][i % 3];
            tokio::spawn(client(h.addr(), leave, all_answered.clone()))
        })
        .collect();
    let (mut peak_rss, mut peak_threads) = (rss_mb(), threads());
    while !tasks.iter().all(|t| t.is_finished()) {
        assert!(t0.elapsed() < Duration::from_secs(60), "flood overran 60 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
        peak_rss = peak_rss.max(rss_mb());
        peak_threads = peak_threads.max(threads());
    }
    let (mut served, mut refused) = (Vec::new(), 0);
    for t in tasks {
        match t.await.unwrap().unwrap_or_else(|e| panic!("{e}")) {
            Outcome::Served(l) => served.push(l),
            Outcome::Refused => refused += 1,
        }
    }
    while h.counters().connections_open > 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(70),
            "sessions outlived their clients"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Session threads are detached once their work is done; give them their exit.
    tokio::time::sleep(Duration::from_millis(200)).await;
    Flood {
        served,
        refused,
        peak_rss: peak_rss.max(rss_mb()),
        peak_threads,
        after_rss: rss_mb(),
        after_threads: threads(),
        secs: t0.elapsed().as_secs_f64(),
    }
}

fn check_counters(c: &Counters, floods: &[Flood]) {
    let served: Vec<Leave> = floods.iter().flat_map(|f| f.served.clone()).collect();
    let gone = served.iter().filter(|l| **l != Leave::CloseFrame).count() as u64;
    assert_eq!(c.connections_total, served.len() as u64, "{c:?}");
    assert_eq!(
        c.connections_refused,
        (FLOODS * CLIENTS) as u64 - c.connections_total,
        "{c:?}"
    );
    assert_eq!(
        c.bad_messages, 0,
        "clients that leave are not bad messages: {c:?}"
    );
    assert_eq!(
        c.disconnects, gone,
        "EOF and reset count as disconnects: {c:?}"
    );
    assert_eq!(c.connections_open, 0, "{c:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floods_are_refused_past_the_limit_and_their_memory_comes_back() {
    // As `arena-perf serve` runs (this binary is the server's process, as serve's is).
    arena_fixture::alloc::tune_for_serving();
    let mut k = Knobs::default();
    k.set("max_connections", &LIMIT.to_string()).unwrap();
    // Encode on miss only: the board (384 misses) is the same work either way, and the
    // test is about connections, not the encoder.
    k.set("lazy_png", "true").unwrap();
    let h = Server::start(k).await.unwrap();
    let (rss0, threads0) = (rss_mb(), threads());
    eprintln!("flood: before: VmRSS {rss0:.1} MB, {threads0} threads");
    let mut floods = Vec::new();
    for n in 1..=FLOODS {
        let f = flood(&h).await;
        eprintln!(
            "flood {n}: {CLIENTS} clients, {} served, {} refused in {:.1} s; peak VmRSS {:.1} MB, \
             {} threads; after: VmRSS {:.1} MB, {} threads",
            f.served.len(),
            f.refused,
            f.secs,
            f.peak_rss,
            f.peak_threads,
            f.after_rss,
            f.after_threads
        );
        assert_eq!(
            f.served.len(),
            LIMIT as usize,
            "flood {n}: sessions served at once"
        );
        assert_eq!(f.refused, CLIENTS - LIMIT as usize, "flood {n}: refused");
        assert!(
            f.peak_threads <= threads0 + LIMIT as usize + 8,
            "flood {n}: {} threads for {LIMIT} sessions",
            f.peak_threads
        );
        assert!(
            f.after_threads <= threads0 + 2,
            "flood {n}: {} threads left",
            f.after_threads
        );
        floods.push(f);
    }
    let first = floods[0].after_rss;
    for (i, f) in floods.iter().enumerate().skip(1) {
        assert!(
            f.after_rss <= first * 1.2,
            "flood {}: VmRSS after {:.1} MB vs {first:.1} MB after flood 1",
            i + 1,
            f.after_rss
        );
    }
    check_counters(&h.counters(), &floods);
    h.shutdown().await;
}
