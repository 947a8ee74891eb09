//! The link as a SOCKS5 proxy over real loopback sockets: each connection goes where the
//! client asked and is shaped like the relay's, every one is logged with its bytes, and
//! nothing but loopback is ever connected to.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use arena_link::{ConnKind, LinkSpec, Proxy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// An echo server on loopback; returns its address.
async fn echo() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 1 << 20];
                while let Ok(n) = s.read(&mut buf).await {
                    if n == 0 || s.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    addr
}

/// A SOCKS5 CONNECT to `host` (an address or a name) through `proxy`; the reply code.
async fn socks_connect(proxy: SocketAddr, host: &str, port: u16) -> (TcpStream, u8) {
    let mut s = TcpStream::connect(proxy).await.unwrap();
    s.set_nodelay(true).unwrap();
    s.write_all(&[5, 1, 0]).await.unwrap();
    let mut m = [0u8; 2];
    s.read_exact(&mut m).await.unwrap();
    assert_eq!(m, [5, 0], "no-auth accepted");
    let mut req = vec![5, 1, 0];
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(a)) => {
            req.push(1);
            req.extend(a.octets());
        }
        Ok(std::net::IpAddr::V6(a)) => {
            req.push(4);
            req.extend(a.octets());
        }
        Err(_) => {
            req.push(3);
            req.push(host.len() as u8);
            req.extend(host.as_bytes());
        }
    }
    req.extend(port.to_be_bytes());
    s.write_all(&req).await.unwrap();
    let mut rep = [0u8; 10];
    s.read_exact(&mut rep).await.unwrap();
    (s, rep[1])
}

/// Median round trip of `n` one-byte pings on `s`, ms.
async fn ping_ms(s: &mut TcpStream, n: usize) -> f64 {
    let mut v = Vec::new();
    let mut b = [0u8; 1];
    for _ in 0..n {
        let t = Instant::now();
        s.write_all(b"x").await.unwrap();
        s.read_exact(&mut b).await.unwrap();
        v.push(t.elapsed().as_secs_f64() * 1e3);
    }
    v.sort_by(f64::total_cmp);
    v[n / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_destination_is_shaped_and_logged_with_its_bytes() {
    let (a, b) = (echo().await, echo().await);
    let mut bare = TcpStream::connect(a).await.unwrap();
    bare.set_nodelay(true).unwrap();
    let bare_ms = ping_ms(&mut bare, 30).await;
    let proxy = Proxy::start(LinkSpec::parse("rtt=20ms").unwrap())
        .await
        .unwrap();
    assert!(proxy.url().starts_with("socks5://127.0.0.1:"));
    let (mut sa, code) = socks_connect(proxy.addr(), "127.0.0.1", a.port()).await;
    assert_eq!(code, 0);
    let shaped_ms = ping_ms(&mut sa, 30).await;
    let added = shaped_ms - bare_ms;
    eprintln!("ping p50: {bare_ms:.3} ms bare, {shaped_ms:.3} ms through the proxy at rtt=20ms (n=30 each)");
    assert!((added - 20.0).abs() < 1.5, "rtt=20ms added {added:.2} ms");
    // A second port, named `localhost`: the proxy goes where it is asked.
    let (mut sb, code) = socks_connect(proxy.addr(), "localhost", b.port()).await;
    assert_eq!(code, 0);
    sb.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut back = [0u8; 27];
    sb.read_exact(&mut back).await.unwrap();
    let carried = proxy.carried();
    assert_eq!(carried.len(), 2, "{carried:?}");
    assert_eq!(carried[0].dest, format!("127.0.0.1:{}", a.port()));
    assert_eq!((carried[0].bytes_up, carried[0].bytes_down), (30, 30));
    assert_eq!(carried[0].kind, ConnKind::Other);
    assert_eq!(carried[1].dest, format!("localhost:{}", b.port()));
    assert_eq!((carried[1].bytes_up, carried[1].bytes_down), (27, 27));
    assert_eq!(carried[1].kind, ConnKind::Http);
    assert!(proxy.refused().is_empty());
    proxy.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_holds_on_a_proxied_connection() {
    let target = echo().await;
    let proxy = Proxy::start(LinkSpec::parse("rate=8mbit").unwrap())
        .await
        .unwrap();
    let (mut s, code) = socks_connect(proxy.addr(), "127.0.0.1", target.port()).await;
    assert_eq!(code, 0);
    let msg = vec![7u8; 200_000];
    let t = Instant::now();
    let (mut r, mut w) = s.split();
    let write = w.write_all(&msg);
    let mut back = vec![0u8; msg.len()];
    let read = r.read_exact(&mut back);
    let (wr, rd) = tokio::join!(write, read);
    wr.unwrap();
    rd.unwrap();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    // 200 kB at 8 Mbit/s is 200 ms each way; up and down are separate links that overlap,
    // so the echo takes at least one of them and at most about both.
    eprintln!("200 kB echoed through rate=8mbit in {ms:.1} ms");
    assert!(ms >= 200.0, "200 kB through 8 Mbit/s took {ms:.1} ms");
    assert!(ms < 1000.0, "{ms:.1} ms");
    proxy.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anything_but_loopback_is_refused_without_a_connection() {
    let proxy = Proxy::start(LinkSpec::parse("rtt=2ms").unwrap())
        .await
        .unwrap();
    // Neither is ever connected to or looked up: the answer comes at once.
    for (host, port) in [("93.184.216.34", 80), ("example.com", 443), ("::", 22)] {
        let t = Instant::now();
        let (_s, code) = socks_connect(proxy.addr(), host, port).await;
        assert_eq!(code, 2, "{host}: connection not allowed by ruleset");
        assert!(t.elapsed() < Duration::from_millis(500));
    }
    // A loopback port nobody listens on: refused, and said so.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (_s, code) = socks_connect(proxy.addr(), "127.0.0.1", closed).await;
    assert_eq!(code, 5);
    let refused = proxy.refused();
    assert_eq!(refused.len(), 4, "{refused:?}");
    assert_eq!(refused[0].dest, "93.184.216.34:80");
    assert!(refused[0].why.contains("not loopback"), "{refused:?}");
    assert_eq!(refused[1].dest, "example.com:443");
    assert!(refused[..3].iter().all(|r| r.routing), "{refused:?}");
    assert!(refused[3].why.contains("did not accept"), "{refused:?}");
    assert!(!refused[3].routing);
    assert!(proxy.carried().is_empty());
    proxy.stop().await;
}
