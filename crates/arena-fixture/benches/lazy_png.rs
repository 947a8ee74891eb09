//! Server CPU and bytes per firing-phase frame, `lazy_png=false` (stock) against `true`,
//! measured in one run through real servers and a real WebSocket client, clicks
//! interleaved between the two arms; plus the `los_work` calibration.
//!
//! `cargo bench -p arena-fixture --bench lazy_png` (CLICKS=n to change the sample size).

use std::sync::Arc;
use std::time::Duration;

use arena_fixture::art::Board;
use arena_fixture::knobs::DEFAULT_LOS_WORK;
use arena_fixture::proto::{decode_frame, encode_ack, encode_input, Input, InputKind};
use arena_fixture::session::{FrameKind, Session};
use arena_fixture::stats::thread_cpu;
use arena_fixture::{los, FrameStat, Knobs, Server, ServerHandle};
use arena_stats::{pct_change, quantile};
use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{connect_async, MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

async fn next_frame(ws: &mut Ws) -> u32 {
    loop {
        match tokio::time::timeout(Duration::from_secs(30), ws.next()).await {
            Ok(Some(Ok(Message::Binary(b)))) => {
                return decode_frame(&b).expect("well-formed frame").id;
            }
            Ok(Some(Ok(_))) => {}
            other => panic!("no frame: {other:?}"),
        }
    }
}

async fn send_and_reply(ws: &mut Ws, kind: InputKind, tx: u16, ty: u16) {
    let i = Input {
        kind,
        x: tx * 40 + 20,
        y: ty * 40 + 20,
        code: 0,
        t_ms: 0.0,
    };
    ws.send(Message::Binary(encode_input(&i).into()))
        .await
        .expect("send");
    let id = next_frame(ws).await;
    ws.send(Message::Binary(encode_ack(id).into()))
        .await
        .expect("ack");
}

struct Arm {
    name: &'static str,
    server: ServerHandle,
    ws: Ws,
}

fn firing_frames(frames: &[FrameStat]) -> Vec<&FrameStat> {
    frames
        .iter()
        .filter(|f| f.kind == FrameKind::Reply && f.input.as_deref() == Some("mousedown"))
        .collect()
}

fn main() {
    let clicks: usize = std::env::var("CLICKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);

    // los_work calibration: session-thread CPU of one firing click's sweep.
    let board = Board::generate(1, false);
    let mut los_ms = Vec::new();
    for i in 0..60u16 {
        let (tx, ty) = (4 + (i * 7) % 20, (i * 5) % 16);
        let c0 = thread_cpu();
        std::hint::black_box(los::sweep(&board, tx, ty, DEFAULT_LOS_WORK));
        los_ms.push((thread_cpu() - c0).as_secs_f64() * 1e3);
    }

    // First board paint, both shadow settings.
    let mut first_paint = Vec::new();
    for shadows in [false, true] {
        let k = Knobs {
            shadows,
            ..Knobs::default()
        };
        let board = Arc::new(Board::generate(k.seed, k.shadows));
        let mut s = Session::new(k, board);
        first_paint.push(s.build_frame().map(|f| f.bytes.len()).unwrap_or(0));
    }

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let mut arms = Vec::new();
        for (name, lazy) in [("eager (lazy_png=false)", "false"), ("lazy (lazy_png=true)", "true")] {
            let mut k = Knobs::default();
            k.set("lazy_png", lazy).expect("knob");
            let server = Server::start(k).await.expect("server");
            let (mut ws, _) = connect_async(server.ws_url()).await.expect("connect");
            let id = next_frame(&mut ws).await;
            ws.send(Message::Binary(encode_ack(id).into())).await.expect("ack");
            arms.push(Arm { name, server, ws });
        }
        // The same click sequence on both arms, alternating which goes first, so drift in
        // machine load lands on both.
        for i in 0..clicks {
            let (tx, ty) = (4 + ((i * 7) % 20) as u16, ((i * 5) % 16) as u16);
            let order: [usize; 2] = if i % 2 == 0 { [0, 1] } else { [1, 0] };
            for a in order {
                let ws = &mut arms[a].ws;
                send_and_reply(ws, InputKind::MouseDown, tx, ty).await;
                send_and_reply(ws, InputKind::MouseUp, tx, ty).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut rows = Vec::new();
        for a in &arms {
            let frames = a.server.frames();
            let firing = firing_frames(&frames);
            let cpu: Vec<f64> = firing.iter().map(|f| f.cpu_ms).collect();
            let enc: Vec<f64> = firing.iter().map(|f| f.encode_ms).collect();
            let encodes: Vec<f64> = firing.iter().map(|f| f.encodes as f64).collect();
            let bytes: Vec<f64> = firing.iter().map(|f| f.bytes as f64).collect();
            let all_bytes: u64 = frames.iter().map(|f| f.bytes).sum();
            let all_cpu: f64 = frames.iter().filter(|f| f.kind == FrameKind::Reply).map(|f| f.cpu_ms).sum();
            rows.push((a.name, firing.len(), quantile(&cpu, 0.5).unwrap_or(f64::NAN), quantile(&enc, 0.5).unwrap_or(f64::NAN), quantile(&encodes, 0.5).unwrap_or(f64::NAN), quantile(&bytes, 0.5).unwrap_or(f64::NAN), all_bytes, all_cpu));
        }
        println!("fixture lazy_png benchmark: {clicks} firing clicks per arm (mousedown + mouseup), arms interleaved, knobs otherwise default (los_work={DEFAULT_LOS_WORK}, png_level=2, tick_ms=16)");
        println!("server CPU = session-thread CPU (CLOCK_THREAD_CPUTIME_ID) for the input's line-of-sight sweep and the frame build");
        println!();
        println!("{:<40} {:>24} {:>24} {:>12}", "per firing-phase frame (mousedown reply)", rows[0].0, rows[1].0, "lazy/eager");
        let line = |label: &str, a: f64, b: f64, unit: &str| {
            println!("{:<40} {:>21.3} {unit:<2} {:>21.3} {unit:<2} {:>12.3}", label, a, b, b / a);
        };
        line(&format!("server CPU p50 (n={}/{})", rows[0].1, rows[1].1), rows[0].2, rows[1].2, "ms");
        line("PNG encode time p50", rows[0].3, rows[1].3, "ms");
        line("PNG encodes p50", rows[0].4, rows[1].4, "");
        line("frame bytes p50", rows[0].5, rows[1].5, "B");
        line("server CPU, all reply frames, total", rows[0].7, rows[1].7, "ms");
        let (ba, bb) = (rows[0].6 as f64, rows[1].6 as f64);
        println!(
            "{:<40} {:>21} B  {:>21} B  {:>+11.3}%",
            "bytes, all frames incl. board",
            rows[0].6,
            rows[1].6,
            pct_change(ba, bb)
        );
        println!();
        println!(
            "los_work calibration: los_work={DEFAULT_LOS_WORK} costs {:.2} ms CPU per firing click, p50 of n={} (min {:.2}, max {:.2})",
            quantile(&los_ms, 0.5).unwrap_or(f64::NAN),
            los_ms.len(),
            los_ms.iter().cloned().fold(f64::INFINITY, f64::min),
            los_ms.iter().cloned().fold(0.0, f64::max)
        );
        println!(
            "first board paint: {} B (shadows=false), {} B (shadows=true), {:+.1}%",
            first_paint[0],
            first_paint[1],
            pct_change(first_paint[0] as f64, first_paint[1] as f64)
        );
        for a in arms {
            a.server.shutdown().await;
        }
    });
}
