//! One direction of a shaped connection. The reader stamps each chunk with the moment the
//! far end gets it: after the link has serialised it (at the rate, behind every byte
//! queued before it) and after the propagation delay plus jitter, never earlier than the
//! chunk before it (no reordering). The writer delivers at those moments. The queue
//! between them is bounded, so a sender that outruns the rate is held back by TCP, as
//! by a real link's buffer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arena_sys::rng::SplitMix64;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use crate::spec::LinkSpec;

/// Bytes read at once: small enough that a frame's tail is not held for its head.
const CHUNK: usize = 16 * 1024;
/// Chunks in flight on the link: with CHUNK, a 1 MiB buffer per direction.
const QUEUE_CHUNKS: usize = 64;

/// How one direction is shaped.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub delay: Duration,
    pub jitter: Duration,
    pub bits_per_s: Option<u64>,
    pub seed: u64,
}

/// The link's clock: when the next byte may start, and when the last chunk lands.
struct Clock {
    shape: Shape,
    busy_until: Instant,
    last_delivery: Instant,
    rng: SplitMix64,
}

impl Clock {
    /// A link idle since `now`.
    fn new(shape: Shape, now: Instant) -> Clock {
        Clock {
            shape,
            busy_until: now,
            last_delivery: now,
            rng: SplitMix64::new(shape.seed),
        }
    }

    /// When a chunk of `n` bytes read at `now` reaches the far end.
    fn delivery(&mut self, n: usize, now: Instant) -> Instant {
        let start = self.busy_until.max(now);
        let on_wire = match self.shape.bits_per_s {
            Some(bps) => Duration::from_secs_f64(n as f64 * 8.0 / bps as f64),
            None => Duration::ZERO,
        };
        self.busy_until = start + on_wire;
        let jitter = self.shape.jitter.mul_f64(self.rng.unit());
        let at = (self.busy_until + self.shape.delay + jitter).max(self.last_delivery);
        self.last_delivery = at;
        at
    }
}

/// Copies `src` to `dst` through the shaped link until `src` ends; counts into `bytes`.
pub async fn pipe(
    mut src: OwnedReadHalf,
    mut dst: OwnedWriteHalf,
    shape: Shape,
    bytes: Arc<AtomicU64>,
) {
    let (tx, mut rx) = mpsc::channel::<(Instant, Vec<u8>)>(QUEUE_CHUNKS);
    let reader = async move {
        let mut clock = Clock::new(shape, Instant::now());
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = match src.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let at = clock.delivery(n, Instant::now());
            if tx.send((at, buf[..n].to_vec())).await.is_err() {
                break;
            }
        }
    };
    let writer = async move {
        while let Some((at, chunk)) = rx.recv().await {
            arena_sys::timer::sleep_until_exactly(at).await;
            // Counted before the write: a peer that has read the bytes must find them
            // counted (counted after, a reader could see them first); a write that fails
            // takes them back.
            let n = chunk.len() as u64;
            bytes.fetch_add(n, Ordering::SeqCst);
            if dst.write_all(&chunk).await.is_err() {
                bytes.fetch_sub(n, Ordering::SeqCst);
                return;
            }
        }
        let _ = dst.shutdown().await;
    };
    tokio::join!(reader, writer);
}

/// Where one connection's delivered bytes are counted, per direction.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    /// Bytes delivered browser -> target.
    pub up: Arc<AtomicU64>,
    /// Bytes delivered target -> browser.
    pub down: Arc<AtomicU64>,
}

/// Carries one connection through the link until both directions end: a shaped pipe each
/// way, seeded by the connection's number `n` so two connections never jitter alike.
pub async fn shaped(
    browser: TcpStream,
    target: TcpStream,
    spec: LinkSpec,
    n: u64,
    counters: Counters,
) {
    let _ = browser.set_nodelay(true);
    let _ = target.set_nodelay(true);
    let shape = |bps, seed| Shape {
        delay: spec.one_way(),
        jitter: spec.jitter(),
        bits_per_s: bps,
        seed,
    };
    let (browser_r, browser_w) = browser.into_split();
    let (target_r, target_w) = target.into_split();
    tokio::join!(
        pipe(
            target_r,
            browser_w,
            shape(spec.down_bps, 2 * n),
            counters.down
        ),
        pipe(
            browser_r,
            target_w,
            shape(spec.up_bps, 2 * n + 1),
            counters.up
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(delay_ms: u64, jitter_ms: u64, bps: Option<u64>) -> Shape {
        Shape {
            delay: Duration::from_millis(delay_ms),
            jitter: Duration::from_millis(jitter_ms),
            bits_per_s: bps,
            seed: 7,
        }
    }

    #[test]
    fn a_big_chunk_delays_the_small_one_behind_it() {
        let t0 = Instant::now();
        let mut c = Clock::new(shape(10, 0, Some(8_000_000)), t0);
        // 100 kB at 8 Mbit/s is 100 ms on the wire; 100 bytes right behind it wait for it.
        let big = c.delivery(100_000, t0);
        let small = c.delivery(100, t0);
        let ms = |t: Instant| (t - t0).as_secs_f64() * 1e3;
        assert!((ms(big) - 110.0).abs() < 0.01, "{}", ms(big));
        assert!((ms(small) - 110.1).abs() < 0.01, "{}", ms(small));
        // Alone on an idle link, the small one takes its delay and its 0.1 ms.
        let mut idle = Clock::new(shape(10, 0, Some(8_000_000)), t0);
        assert!((ms(idle.delivery(100, t0)) - 10.1).abs() < 0.01);
    }

    #[test]
    fn jitter_never_reorders() {
        let t0 = Instant::now();
        let mut c = Clock::new(shape(5, 4, None), t0);
        let mut last = t0;
        let mut spread = Vec::new();
        for k in 0..1000 {
            let now = t0 + Duration::from_micros(k * 100);
            let at = c.delivery(10, now);
            assert!(at >= last, "chunk {k} would overtake the one before it");
            spread.push((at - now).as_secs_f64() * 1e3);
            last = at;
        }
        let (lo, hi) = spread
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
        assert!(
            lo >= 5.0 && hi > 8.0,
            "delay 5 ms plus up to 4 ms: {lo}..{hi}"
        );
    }
}
