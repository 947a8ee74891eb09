//! The relay over real loopback sockets: the delay and the rate it promises, a big frame
//! ahead of a small one, and what a target it cannot reach gets.

use std::time::{Duration, Instant};

use arena_link::{LinkSpec, Relay};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// An echo server on loopback that answers each message once; returns its address.
async fn echo() -> std::net::SocketAddr {
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

/// Median round trip of `n` one-byte pings through `addr`, ms.
async fn ping_ms(addr: std::net::SocketAddr, n: usize) -> f64 {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.set_nodelay(true).unwrap();
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
async fn rtt_is_added_once_per_round_trip() {
    let target = echo().await;
    let bare = ping_ms(target, 40).await;
    let relay = Relay::start(target, LinkSpec::parse("rtt=20ms").unwrap())
        .await
        .unwrap();
    let shaped = ping_ms(relay.addr(), 40).await;
    let added = shaped - bare;
    eprintln!("ping p50: {bare:.3} ms bare, {shaped:.3} ms through rtt=20ms (n=40 each)");
    assert!((added - 20.0).abs() < 1.5, "rtt=20ms added {added:.2} ms");
    relay.stop().await;
}

/// A server that, on each connection, sends a 200 kB frame and then a 5-byte one at once.
async fn board_then_small() -> std::net::SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            tokio::spawn(async move {
                let _ = s.write_all(&vec![7u8; 200_000]).await;
                let _ = s.write_all(b"small").await;
                let mut sink = [0u8; 16];
                let _ = s.read(&mut sink).await;
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_holds_bytes_to_it_and_a_big_frame_delays_the_small_one_behind_it() {
    let target = board_then_small().await;
    // 8 Mbit/s down: 200,005 bytes are 200 ms on the wire.
    let relay = Relay::start(target, LinkSpec::parse("rate=8mbit").unwrap())
        .await
        .unwrap();
    let t = Instant::now();
    let mut s = TcpStream::connect(relay.addr()).await.unwrap();
    let mut got = vec![0u8; 200_005];
    s.read_exact(&mut got).await.unwrap();
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let floor = 200_005.0 * 8.0 / 8e6 * 1e3;
    eprintln!("200 kB + 5 B through rate=8mbit in {ms:.1} ms (bytes x 8 / rate = {floor:.1} ms)");
    assert!(
        ms >= floor,
        "faster than the rate: {ms:.1} ms < {floor:.1} ms"
    );
    assert!(
        ms <= floor * 1.15,
        "{ms:.1} ms is more than 15 % over {floor:.1} ms"
    );
    assert_eq!(
        &got[200_000..],
        b"small",
        "the small frame arrives after the big one"
    );
    relay.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_target_is_an_error_and_a_stopped_relay_frees_its_port() {
    // A port nothing listens on: bind, note, close.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let t = Instant::now();
    let e = Relay::start(closed, LinkSpec::parse("rtt=5ms").unwrap())
        .await
        .err()
        .unwrap();
    let msg = format!("{e:#}");
    assert!(
        msg.contains(&closed.to_string()) && msg.contains("cannot reach"),
        "{msg}"
    );
    assert!(t.elapsed() < Duration::from_secs(4), "no hang");

    let target = echo().await;
    let relay = Relay::start(target, LinkSpec::parse("rtt=2ms").unwrap())
        .await
        .unwrap();
    let port = relay.addr();
    let conn = TcpStream::connect(port).await.unwrap();
    relay.stop().await;
    drop(conn);
    std::net::TcpListener::bind(port).expect("the relay's port is free again");
}
