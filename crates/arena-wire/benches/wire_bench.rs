//! Speed and memory of the wire summary against tshark, and capture throughput, measured
//! in one run. Not part of the test run:
//!
//!   cargo bench -p arena-wire --bench wire_bench -- [--dir D] [--big-mb 220]
//!       [--small-mb 50] [--runs 3] [--rate 180000] [--secs 5]
//!       [--mss 65483|1448]
//!   cargo bench -p arena-wire --bench wire_bench -- --only-capture [--rate R]
//!   cargo bench -p arena-wire --bench wire_bench -- seeds DIR   (fuzz seed corpus)
//!
//! A `harness = false` bench: `cargo bench` appends `--bench` to the arguments, which the
//! flag lookups below ignore.
//!
//! Prints, medians of `--runs` interleaved runs, wall and CPU (user + system) time: the
//! summary's time on a >= 200 MB generated capture with known totals (checked exactly) vs
//! `tshark -q -z conv,tcp --disable-protocol websocket` on the same file; vs tshark
//! producing the WebSocket figures on a ~50 MB file; each for the summary inflating on one
//! thread and on its default inflate threads; max RSS of the summary on both files
//! (constant memory); and packets/s and kernel drops of a capture of bounded loopback
//! traffic.
//!
//! And the floor: the CPU time zlib-rs alone needs to inflate the small file's compressed
//! messages (the very payloads the summary inflates, extracted by
//! `arena_wire::compressed_messages` before the clock starts, in a process of its own each
//! run, then inflated in a tight loop by the summary's own `Counter`), with the summary's CPU time as a multiple of it and of tshark's WebSocket
//! pass, against the goals: within 1.3x of the floor, and at least 10x tshark's CPU time.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arena_wire::synth::{write_session, SynthSpec, SynthTotals};
use arena_wire::{summarize, Capture, SummaryOptions};

fn arg(args: &[String], name: &str, default: f64) -> f64 {
    args.windows(2)
        .find(|w| w[0] == name)
        .and_then(|w| w[1].parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

// The child is reaped with wait4 (for its rusage), which clippy cannot see.
#[allow(clippy::zombie_processes)]
/// Runs a command; returns (wall seconds, CPU seconds (user + system), max RSS in KiB, stdout).
fn timed(cmd: &mut Command) -> (f64, f64, u64, String) {
    let t = Instant::now();
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let pid = child.id() as libc::pid_t;
    let mut out = String::new();
    let mut so = child.stdout.expect("stdout");
    so.read_to_string(&mut out).expect("read stdout");
    let mut status = 0;
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    let secs = t.elapsed().as_secs_f64();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{cmd:?} failed"
    );
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (
        secs,
        tv(ru.ru_utime) + tv(ru.ru_stime),
        ru.ru_maxrss as u64,
        out,
    )
}

fn generate(path: &Path, mb: u64, seed: u64, mss: usize) -> SynthTotals {
    let spec = SynthSpec {
        seed,
        mss,
        target_bytes: mb << 20,
        max_messages: u64::MAX,
        ..SynthSpec::default()
    };
    let f = BufWriter::with_capacity(1 << 20, File::create(path).expect("create"));
    write_session(f, &spec).expect("generate")
}

fn check(totals: &SynthTotals, json: &str) {
    let v: serde_json::Value = serde_json::from_str(json).expect("summary json");
    for (k, t) in [
        ("client_to_server", &totals.client_to_server),
        ("server_to_client", &totals.server_to_client),
    ] {
        let d = &v[k];
        let eq = |f: &str, want: u64| {
            assert_eq!(d[f].as_u64(), Some(want), "{k}.{f}");
        };
        eq("packets", t.packets);
        eq("tcp_payload_bytes", t.tcp_payload_bytes);
        eq("frames", t.frames);
        eq("frame_payload_bytes", t.frame_payload_bytes);
        eq("messages", t.messages);
        eq("app_bytes", t.app_bytes);
        eq("control_frames", t.control_frames);
    }
}

/// CPU time (user + system) of the calling thread, seconds.
fn thread_cpu() -> f64 {
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// The `floor FILE` subcommand: extracts the compressed messages of `pcap` (untimed),
/// then times one tight pass of zlib-rs over them with the summary's inflate (raw deflate,
/// window primed once, the stripped sync-flush tail put back). Prints `messages wire_bytes
/// app_bytes wall_s cpu_s`. A process of its own, like the summary's: the messages held
/// here would otherwise count in the max RSS of every child spawned after them.
fn floor_pass(pcap: &Path) {
    let opts = SummaryOptions {
        port: Some(8080),
        ..Default::default()
    };
    let (s, msgs) = arena_wire::compressed_messages(pcap, &opts).expect("extract");
    let compressed =
        s.client_to_server.compressed_messages + s.server_to_client.compressed_messages;
    assert_eq!(
        msgs.len() as u64,
        compressed,
        "one payload per compressed message"
    );
    let mut c = arena_wire::ws::Counter::new();
    let (t, c0) = (Instant::now(), thread_cpu());
    let mut app = 0;
    for m in &msgs {
        app += c.message(std::hint::black_box(m)).expect("inflate");
    }
    let (wall, cpu) = (t.elapsed().as_secs_f64(), thread_cpu() - c0);
    let wire: u64 = msgs.iter().map(|m| m.len() as u64).sum();
    println!("{} {wire} {app} {wall} {cpu}", msgs.len());
}

/// Runs the `floor` subcommand on `pcap`: (messages, wire bytes, app bytes, wall s, CPU s).
fn inflate_floor(me: &Path, pcap: &Path) -> (u64, u64, u64, f64, f64) {
    let (_, _, _, out) = timed(Command::new(me).arg("floor").arg(pcap));
    let f: Vec<&str> = out.split_whitespace().collect();
    let int = |i: usize| f[i].parse::<u64>().expect("floor output");
    let real = |i: usize| f[i].parse::<f64>().expect("floor output");
    (int(0), int(1), int(2), real(3), real(4))
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "NOT met"
    }
}

fn mbps(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / secs / 1e6
}

fn bench_capture(dir: &Path, secs: f64) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let pcap = dir.join("capture.pcap");
    let cap = Capture::start("lo", port, &pcap).expect("capture (needs root)");
    std::thread::sleep(Duration::from_millis(100));
    let conns = 4;
    let stop = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    let acceptor = std::thread::spawn(move || {
        let mut v = Vec::new();
        for _ in 0..conns {
            v.push(listener.accept().expect("accept").0);
        }
        v
    });
    let mut senders: Vec<TcpStream> = (0..conns)
        .map(|_| {
            let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
            s.set_nodelay(true).expect("nodelay");
            s
        })
        .collect();
    for mut s in acceptor.join().expect("acceptor") {
        readers.push(std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            let mut n = 0u64;
            while let Ok(k) = s.read(&mut buf) {
                if k == 0 {
                    break;
                }
                n += k as u64;
            }
            n
        }));
    }
    // Real TCP flows as fast as one sender thread can write 64-byte pieces (TCP_NODELAY):
    // what the stack makes of them (coalescing, ACKs) is what gets captured.
    let t0 = Instant::now();
    let mut writes = 0u64;
    let chunk = [0x5au8; 64];
    while t0.elapsed().as_secs_f64() < secs {
        for _ in 0..1024 {
            let i = (writes % conns as u64) as usize;
            senders[i].write_all(&chunk).expect("write");
            writes += 1;
        }
    }
    let sent_secs = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::SeqCst);
    senders.clear();
    let received: u64 = readers.into_iter().map(|r| r.join().unwrap_or(0)).sum();
    std::thread::sleep(Duration::from_millis(200));
    let st = cap.stop().expect("stop");
    let s = summarize(
        &pcap,
        &SummaryOptions {
            port: Some(port),
            ..Default::default()
        },
    )
    .expect("summary");
    let seg = s.client_to_server.packets - s.client_to_server.pure_acks;
    println!(
        "capture, real TCP flows: {} writes of 64 B in {:.2}s ({:.0} writes/s), {} B received",
        writes,
        sent_secs,
        writes as f64 / sent_secs,
        received
    );
    println!(
        "capture, real TCP flows: {} packets written in {:.2}s = {:.0} packets/s; kernel passed {} \
         and dropped {} (PACKET_STATISTICS); lo rx packets over the capture {} (all lo traffic)",
        st.packets_written,
        sent_secs,
        st.packets_written as f64 / sent_secs,
        st.kernel_packets,
        st.kernel_drops,
        st.interface.map(|i| i.rx_packets).unwrap_or(0)
    );
    println!(
        "capture, real TCP flows: summary: {} data segments c->s carrying {} B (sent {} B), {} B missing",
        seg, s.client_to_server.tcp_payload_bytes, writes * 64, s.client_to_server.missing_bytes
    );
}

fn csum(h: &[u8]) -> u16 {
    let mut s = 0u32;
    for c in h.chunks(2) {
        s += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// A bounded packet generator on loopback: TCP segments (RST set, so the stack drops them
/// without a reply) injected on `lo` through an AF_PACKET socket with sendmmsg, paced to
/// `rate` packets/s. Every one is a real packet received by `lo`, seen by the capture once.
fn bench_capture_injected(dir: &Path, rate: f64, secs: f64) {
    // Reserve the port so no other traffic uses it.
    let hold = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = hold.local_addr().expect("addr").port();
    let pcap = dir.join("inject.pcap");
    let cap = Capture::start("lo", port, &pcap).expect("capture (needs root)");
    std::thread::sleep(Duration::from_millis(100));
    let before = arena_wire::DevCounters::read("lo").ok();
    let t0 = Instant::now();
    // Two sender threads (one per core), each paced to half the rate.
    let threads = 2;
    let senders: Vec<_> = (0..threads)
        .map(|t| std::thread::spawn(move || inject(port, t as u16, rate / threads as f64, secs)))
        .collect();
    let sent: u64 = senders.into_iter().map(|h| h.join().unwrap_or(0)).sum();
    let gen_secs = t0.elapsed().as_secs_f64();
    let lo = match (before, arena_wire::DevCounters::read("lo")) {
        (Some(b), Ok(a)) => a.delta(&b).rx_packets,
        _ => 0,
    };
    std::thread::sleep(Duration::from_millis(200));
    let st = cap.stop().expect("stop");
    drop(hold);
    println!(
        "capture, bounded generator: {} packets injected on lo in {:.2}s = {:.0} packets/s \
         (target {:.0}); lo rx packets meanwhile {}; captured {} = {:.0} packets/s; kernel \
         passed {} and dropped {} (PACKET_STATISTICS); pcap {} B",
        sent,
        gen_secs,
        sent as f64 / gen_secs,
        rate,
        lo,
        st.packets_written,
        st.packets_written as f64 / gen_secs,
        st.kernel_packets,
        st.kernel_drops,
        st.pcap_bytes
    );
}

/// Sends RST segments to `port` on lo at `rate` packets/s for `secs`; returns how many.
fn inject(port: u16, thread: u16, rate: f64, secs: f64) -> u64 {
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0) };
    assert!(fd >= 0, "AF_PACKET send socket");
    let ifindex = unsafe { libc::if_nametoindex(c"lo".as_ptr()) };
    let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    addr.sll_family = libc::AF_PACKET as u16;
    addr.sll_ifindex = ifindex as i32;
    addr.sll_halen = 6;
    const BATCH: usize = 64;
    let mut pkts: Vec<Vec<u8>> = (0..BATCH)
        .map(|i| {
            let sport = 40_001 + thread;
            let mut p = vec![0u8; 14 + 20 + 20 + 64];
            p[12] = 0x08;
            let len = (p.len() - 14) as u16;
            p[14..34].copy_from_slice(&[
                0x45,
                0,
                (len >> 8) as u8,
                len as u8,
                0,
                i as u8,
                0x40,
                0,
                64,
                6,
                0,
                0,
                127,
                0,
                0,
                1,
                127,
                0,
                0,
                1,
            ]);
            let c = csum(&p[14..34]);
            p[24..26].copy_from_slice(&c.to_be_bytes());
            p[34..36].copy_from_slice(&sport.to_be_bytes());
            p[36..38].copy_from_slice(&port.to_be_bytes());
            p[46] = 0x50;
            p[47] = 0x14;
            p
        })
        .collect();
    let mut iov: Vec<libc::iovec> = pkts
        .iter_mut()
        .map(|p| libc::iovec {
            iov_base: p.as_mut_ptr() as *mut libc::c_void,
            iov_len: p.len(),
        })
        .collect();
    let mut msgs: Vec<libc::mmsghdr> = iov
        .iter_mut()
        .map(|v| {
            let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
            m.msg_hdr.msg_name = &mut addr as *mut _ as *mut libc::c_void;
            m.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            m.msg_hdr.msg_iov = v as *mut libc::iovec;
            m.msg_hdr.msg_iovlen = 1;
            m
        })
        .collect();
    let t0 = Instant::now();
    let mut sent = 0u64;
    while t0.elapsed().as_secs_f64() < secs {
        let due = (t0.elapsed().as_secs_f64() * rate) as u64;
        if sent >= due {
            // Ahead of schedule: yield the core to the softirq and the capture thread.
            std::thread::sleep(Duration::from_micros(100));
            continue;
        }
        let n = ((due - sent) as usize).min(BATCH);
        let r = unsafe { libc::sendmmsg(fd, msgs.as_mut_ptr(), n as u32, 0) };
        if r > 0 {
            sent += r as u64;
        }
    }
    unsafe { libc::close(fd) };
    sent
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("summarize") {
        let threads = args
            .get(3)
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(arena_wire::default_inflate_threads);
        let s = arena_wire::summarize_threads(
            Path::new(&args[2]),
            &SummaryOptions {
                port: Some(8080),
                ..Default::default()
            },
            threads,
        )
        .expect("summary");
        println!("{}", serde_json::to_string(&s).expect("json"));
        return;
    }
    if args.get(1).map(String::as_str) == Some("floor") {
        floor_pass(Path::new(&args[2]));
        return;
    }
    if args.get(1).map(String::as_str) == Some("seeds") {
        let dir = PathBuf::from(args.get(2).expect("seeds DIR"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for (i, (mss, impair, deflate)) in [
            (200, false, true),
            (97, true, true),
            (1448, true, false),
            (60, true, true),
        ]
        .into_iter()
        .enumerate()
        {
            let spec = SynthSpec {
                mss,
                impair,
                deflate,
                max_messages: 3,
                big_every: 0,
                seed: i as u64 + 1,
                ..Default::default()
            };
            let f = File::create(dir.join(format!("synth{i}.pcap"))).expect("create");
            write_session(f, &spec).expect("seed");
        }
        return;
    }
    let dir = PathBuf::from(
        args.windows(2)
            .find(|w| w[0] == "--dir")
            .map(|w| w[1].clone())
            .unwrap_or_else(|| "/tmp/arena-wire-bench".into()),
    );
    std::fs::create_dir_all(&dir).expect("mkdir");
    if args.iter().any(|a| a == "--only-capture") {
        bench_capture_injected(
            &dir,
            arg(&args, "--rate", 200_000.0),
            arg(&args, "--secs", 5.0),
        );
        return;
    }
    let big_mb = arg(&args, "--big-mb", 220.0) as u64;
    let small_mb = arg(&args, "--small-mb", 50.0) as u64;
    let runs = arg(&args, "--runs", 3.0) as usize;
    let me = std::env::current_exe().expect("exe");

    let big = dir.join("big.pcap");
    let small = dir.join("small.pcap");
    let t = Instant::now();
    // Segment size: 65,483 is loopback's (64 KiB super-segments); 1,448 is a 1500-MTU
    // network's without offloads.
    let mss = arg(&args, "--mss", 65_483.0) as usize;
    let tb = generate(&big, big_mb, 7, mss);
    let ts = generate(&small, small_mb, 8, mss);
    println!(
        "generated {} ({} B, {} records) and {} ({} B, {} records), TCP segments up to {mss} B, in {:.1}s; server->client app/wire {:.2}x",
        big.display(),
        tb.pcap_bytes,
        tb.records,
        small.display(),
        ts.pcap_bytes,
        ts.records,
        t.elapsed().as_secs_f64(),
        tb.server_to_client.app_bytes as f64 / tb.server_to_client.frame_payload_bytes as f64
    );

    // The summary twice: inflating on its own thread, and with the inflate threads
    // `summarize` uses by default (tshark is single-threaded: compare CPU with CPU).
    let threads = arena_wire::default_inflate_threads();
    let modes = [
        (0, "one thread".to_string()),
        (threads, format!("{threads} inflate threads")),
    ];
    let ours = |file: &Path, t: usize, totals: &SynthTotals| {
        let (s, c, rss, out) = timed(
            Command::new(&me)
                .arg("summarize")
                .arg(file)
                .arg(t.to_string()),
        );
        check(totals, &out);
        (s, c, rss)
    };
    let mut rss_big = [0; 2];
    let mut rss_small = [0; 2];
    let mut ours_big = vec![(Vec::new(), Vec::new()); 2];
    let mut conv = (Vec::new(), Vec::new());
    let mut ours_small = vec![(Vec::new(), Vec::new()); 2];
    let mut ws_small = (Vec::new(), Vec::new());
    let mut floor = (Vec::new(), Vec::new());
    let mut floor_msgs = (0, 0, 0);
    let mut frames = 0;
    // Interleaved so every tool and mode sees the same background load.
    for _ in 0..runs {
        for (k, &(t, _)) in modes.iter().enumerate() {
            let (s, c, rss) = ours(&big, t, &tb);
            ours_big[k].0.push(s);
            ours_big[k].1.push(c);
            rss_big[k] = rss_big[k].max(rss);
        }
        let (s, c, _, _) = timed(Command::new("tshark").args(["-n", "-r"]).arg(&big).args([
            "-q",
            "-z",
            "conv,tcp",
            "--disable-protocol",
            "websocket",
        ]));
        conv.0.push(s);
        conv.1.push(c);
        for (k, &(t, _)) in modes.iter().enumerate() {
            let (s, c, rss) = ours(&small, t, &ts);
            ours_small[k].0.push(s);
            ours_small[k].1.push(c);
            rss_small[k] = rss_small[k].max(rss);
        }
        let (s, c, _, out) = timed(&mut arena_wire::tshark::websocket_fields(&small, 8080));
        ws_small.0.push(s);
        ws_small.1.push(c);
        let (n, wire, app, s, c) = inflate_floor(&me, &small);
        floor_msgs = (n, wire, app);
        floor.0.push(s);
        floor.1.push(c);
        frames = out
            .lines()
            .map(|l| {
                l.split('\t')
                    .nth(1)
                    .map(|o| o.split(';').count())
                    .unwrap_or(0)
            })
            .sum::<usize>();
    }
    let (cb, cbc) = (median(conv.0), median(conv.1));
    println!(
        "big ({} B), n={runs} runs each, medians: tshark -z conv,tcp --disable-protocol \
         websocket {:.2}s wall / {:.2}s CPU = {:.0} MB/s of CPU",
        tb.pcap_bytes,
        cb,
        cbc,
        mbps(tb.pcap_bytes, cbc)
    );
    for (k, (_, name)) in modes.iter().enumerate() {
        let (ob, obc) = (median(ours_big[k].0.clone()), median(ours_big[k].1.clone()));
        println!(
            "big: full summary (framing + inflate, totals checked exact), {name}: {:.3}s wall / \
             {:.3}s CPU = {:.0} MB/s of CPU; ratio to tshark's TCP pass {:.1}x (wall), {:.1}x \
             (CPU)",
            ob,
            obc,
            mbps(tb.pcap_bytes, obc),
            cb / ob,
            cbc / obc
        );
    }
    let (tw, twc) = (median(ws_small.0), median(ws_small.1));
    println!(
        "small ({} B), n={runs} runs each, medians: tshark -Y websocket fields + data.len \
         (inflates) {:.2}s wall / {:.2}s CPU listing {} frames (generated: {})",
        ts.pcap_bytes,
        tw,
        twc,
        frames,
        ts.client_to_server.frames
            + ts.client_to_server.control_frames
            + ts.server_to_client.frames
            + ts.server_to_client.control_frames,
    );
    for (k, (_, name)) in modes.iter().enumerate() {
        let (os, osc) = (
            median(ours_small[k].0.clone()),
            median(ours_small[k].1.clone()),
        );
        println!(
            "small: full summary (framing + inflate, totals checked exact), {name}: {:.3}s wall \
             / {:.3}s CPU; ratio to tshark's WebSocket figures {:.1}x (wall), {:.1}x (CPU)",
            os,
            osc,
            tw / os,
            twc / osc
        );
    }
    let (fw, fc) = (median(floor.0), median(floor.1));
    println!(
        "small: floor, zlib-rs alone inflating its {} compressed messages ({} B wire -> {} B \
         app) in a tight loop, n={runs} runs, median: {:.3}s wall / {:.3}s CPU",
        floor_msgs.0, floor_msgs.1, floor_msgs.2, fw, fc
    );
    for (k, (_, name)) in modes.iter().enumerate() {
        let osc = median(ours_small[k].1.clone());
        let (of, ot) = (osc / fc, twc / osc);
        println!(
            "small, goals, {name}, CPU time, medians of n={runs}: summary {:.3}s = {:.2}x the \
             floor (goal <= 1.3x: {}) | tshark {:.2}s = {:.1}x the summary (goal >= 10x: {})",
            osc,
            of,
            verdict(of <= 1.3),
            twc,
            ot,
            verdict(ot >= 10.0)
        );
    }
    for (k, (_, name)) in modes.iter().enumerate() {
        println!(
            "max RSS of the summary process, {name}: {} KiB on {} MiB, {} KiB on {} MiB",
            rss_small[k],
            ts.pcap_bytes >> 20,
            rss_big[k],
            tb.pcap_bytes >> 20
        );
    }
    let rate = arg(&args, "--rate", 200_000.0);
    let secs = arg(&args, "--secs", 5.0);
    bench_capture_injected(&dir, rate, secs);
    bench_capture(&dir, 3.0);
}
