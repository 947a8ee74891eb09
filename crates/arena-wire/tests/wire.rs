//! End-to-end: real WebSocket sessions over 127.0.0.1 captured on `lo`, summarised, and
//! checked against what the endpoints sent and against tshark; and bad input of every kind.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::thread;
use std::time::Duration;

use arena_wire::pcap::{PcapReader, PcapWriter};
use arena_wire::synth::{deflate_message, frame_header};
use arena_wire::{
    summarize, summarize_reader, Capture, CaptureOptions, CaptureSource, SummaryOptions,
};
use flate2::{Compress, Compression, Decompress, FlushDecompress};

use crate::common::{assert_tshark_agrees, summary_on, tmpdir, tshark_tcp, tshark_ws};

/// What one endpoint put on the wire and handed to its application.
#[derive(Debug, Default, Clone, PartialEq)]
struct Sent {
    frames: u64,
    frame_payload: u64,
    control: u64,
    messages: u64,
    app: u64,
    app_sizes: Vec<u64>,
}

/// A minimal RFC 6455 + RFC 7692 endpoint: deflate with context takeover both ways.
struct Endpoint {
    s: TcpStream,
    rd: BufReader<TcpStream>,
    deflate: Compress,
    inflate: Decompress,
    mask: bool,
    seed: u32,
    sent: Sent,
    received_app: Vec<u64>,
    /// Data frames and their payload bytes as read off the socket.
    received_frames: u64,
    received_payload: u64,
    /// Opcode of the last message read (1 text, 2 binary).
    last_opcode: u8,
}

impl Endpoint {
    fn new(s: TcpStream, mask: bool) -> Self {
        s.set_nodelay(true).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let rd = BufReader::new(s.try_clone().unwrap());
        Endpoint {
            s,
            rd,
            deflate: Compress::new(Compression::new(6), false),
            inflate: Decompress::new(false),
            mask,
            seed: 0x1234_5678,
            sent: Sent::default(),
            received_app: Vec::new(),
            received_frames: 0,
            received_payload: 0,
            last_opcode: 0,
        }
    }

    fn write_frame(&mut self, fin: bool, rsv1: bool, opcode: u8, payload: &[u8]) {
        self.seed = self
            .seed
            .wrapping_mul(1_664_525)
            .wrapping_add(1_013_904_223);
        let mask = self.mask.then(|| self.seed.to_le_bytes());
        let mut f = frame_header(fin, rsv1, opcode, payload.len(), mask);
        match mask {
            Some(k) => f.extend(payload.iter().enumerate().map(|(i, b)| b ^ k[i & 3])),
            None => f.extend_from_slice(payload),
        }
        self.s.write_all(&f).unwrap();
    }

    fn send(&mut self, app: &[u8], compress: bool, fragments: usize) {
        let payload = if compress {
            deflate_message(&mut self.deflate, app).unwrap()
        } else {
            app.to_vec()
        };
        let per = payload.len().div_ceil(fragments.max(1)).max(1);
        let chunks: Vec<&[u8]> = if payload.is_empty() {
            vec![&payload[..]]
        } else {
            payload.chunks(per).collect()
        };
        for (i, c) in chunks.iter().enumerate() {
            let op = if i == 0 { 2 } else { 0 };
            self.write_frame(i + 1 == chunks.len(), compress && i == 0, op, c);
            self.sent.frames += 1;
            self.sent.frame_payload += c.len() as u64;
        }
        self.sent.messages += 1;
        self.sent.app += app.len() as u64;
        self.sent.app_sizes.push(app.len() as u64);
    }

    fn control(&mut self, opcode: u8, payload: &[u8]) {
        self.write_frame(true, false, opcode, payload);
        self.sent.control += 1;
    }

    /// Reads one data message (answering pings) and returns its app bytes; `None` on close.
    fn recv(&mut self) -> Option<Vec<u8>> {
        let mut msg = Vec::new();
        let mut compressed = false;
        loop {
            let mut h = [0u8; 2];
            self.rd.read_exact(&mut h).ok()?;
            let op = h[0] & 0x0f;
            let mut len = (h[1] & 0x7f) as u64;
            if len == 126 {
                let mut b = [0u8; 2];
                self.rd.read_exact(&mut b).unwrap();
                len = u16::from_be_bytes(b) as u64;
            } else if len == 127 {
                let mut b = [0u8; 8];
                self.rd.read_exact(&mut b).unwrap();
                len = u64::from_be_bytes(b);
            }
            let mut key = [0u8; 4];
            if h[1] & 0x80 != 0 {
                self.rd.read_exact(&mut key).unwrap();
            }
            let mut p = vec![0u8; len as usize];
            self.rd.read_exact(&mut p).unwrap();
            if h[1] & 0x80 != 0 {
                for (i, b) in p.iter_mut().enumerate() {
                    *b ^= key[i & 3];
                }
            }
            match op {
                8 => return None,
                9 => {
                    self.control(10, &p);
                    continue;
                }
                10 => continue,
                _ => {}
            }
            if op != 0 {
                compressed = h[0] & 0x40 != 0;
                self.last_opcode = op;
            }
            self.received_frames += 1;
            self.received_payload += len;
            msg.extend_from_slice(&p);
            if h[0] & 0x80 != 0 {
                break;
            }
        }
        if compressed {
            msg.extend_from_slice(&[0, 0, 0xff, 0xff]);
            let mut out = Vec::with_capacity(msg.len() * 4 + 1024);
            let mut input = &msg[..];
            loop {
                let before = self.inflate.total_in();
                self.inflate
                    .decompress_vec(input, &mut out, FlushDecompress::Sync)
                    .unwrap();
                input = &input[(self.inflate.total_in() - before) as usize..];
                if input.is_empty() && out.len() < out.capacity() {
                    break;
                }
                out.reserve(out.capacity().max(4096));
            }
            msg = out;
        }
        self.received_app.push(msg.len() as u64);
        Some(msg)
    }
}

/// Accepts one connection, reads its upgrade request (which must offer
/// permessage-deflate) and accepts it with permessage-deflate.
fn accept_upgrade(listener: &TcpListener) -> Endpoint {
    let (s, _) = listener.accept().unwrap();
    let mut rd = BufReader::new(s.try_clone().unwrap());
    let mut req = String::new();
    loop {
        let mut line = String::new();
        rd.read_line(&mut line).unwrap();
        req.push_str(&line);
        if line == "\r\n" || line.is_empty() {
            break;
        }
    }
    assert!(req.contains("permessage-deflate"), "{req}");
    let key = req
        .lines()
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
        .unwrap()
        .trim()
        .to_string();
    let mut s2 = s.try_clone().unwrap();
    s2.write_all(
        format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Accept: {}\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
            accept_key(&key)
        )
        .as_bytes(),
    )
    .unwrap();
    let mut ep = Endpoint::new(s, false);
    ep.rd = rd;
    ep
}

fn payload(i: usize, len: usize, random_share: f64) -> Vec<u8> {
    let mut x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let random = (len as f64 * random_share) as usize;
    let mut v = Vec::with_capacity(len);
    while v.len() < len - random.min(len) {
        v.extend_from_slice(b"fillRect 10 20 30 40 #7f7f7f; ");
    }
    v.truncate(len - random.min(len));
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(x as u8);
    }
    v
}

/// One real session over loopback, captured on `lo`: what each side sent.
struct Session {
    pcap: PathBuf,
    port: u16,
    client: Sent,
    server: Sent,
    client_received: Vec<u64>,
    server_received: Vec<u64>,
    stats: arena_wire::CaptureStats,
}

fn run_session(pcap: &Path) -> Session {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let cap = Capture::start("lo", port, pcap).expect("capture on lo (tests run as root)");
    assert!(matches!(cap.source(), CaptureSource::Pcap { .. }));
    thread::sleep(Duration::from_millis(50));
    let server = thread::spawn(move || {
        let mut ep = accept_upgrade(&listener);
        let mut i = 0;
        while let Some(_m) = ep.recv() {
            i += 1;
            match i % 10 {
                // Large, mostly incompressible board paint: a 64-bit length.
                0 => ep.send(&payload(i, 300_000, 0.6), true, 1),
                3 => ep.send(&[], true, 1),
                5 => ep.send(&payload(i, 900, 0.0), false, 1),
                7 => ep.send(&payload(i, 40_000, 0.3), true, 3),
                _ => ep.send(&payload(i, 6_000, 0.35), true, 1),
            }
            if i == 12 {
                ep.control(9, b"srv");
            }
        }
        ep.control(8, &[0x03, 0xe8]);
        (ep.sent.clone(), ep.received_app.clone())
    });
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut c = Endpoint::new(s, true);
    c.s.write_all(
        format!(
            "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
             Sec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: permessage-deflate; \
             client_max_window_bits\r\n\r\n"
        )
        .as_bytes(),
    )
    .unwrap();
    let mut line = String::new();
    loop {
        line.clear();
        c.rd.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
    }
    for i in 0..30usize {
        match i % 6 {
            0 => c.send(&payload(i, 70_000, 1.0), true, 1),
            1 => c.send(&payload(i, 200, 0.0), false, 1),
            2 => c.send(&payload(i, 3_000, 0.2), true, 2),
            _ => c.send(&payload(i, 21, 0.5), true, 1),
        }
        if i == 4 {
            c.control(9, b"cli");
        }
        let got = c.recv().expect("server reply");
        let _ = got;
    }
    c.control(8, &[0x03, 0xe8]);
    // Drain the server's pong/close.
    while c.recv().is_some() {}
    let (server, server_received) = server.join().unwrap();
    thread::sleep(Duration::from_millis(100));
    drop(c.s);
    thread::sleep(Duration::from_millis(50));
    let stats = cap.stop().unwrap();
    Session {
        pcap: pcap.to_path_buf(),
        port,
        client: c.sent.clone(),
        server,
        client_received: c.received_app.clone(),
        server_received,
        stats,
    }
}

fn session() -> &'static Session {
    static S: OnceLock<Session> = OnceLock::new();
    S.get_or_init(|| run_session(&tmpdir().join("real.pcap")))
}

#[test]
fn real_loopback_session_matches_what_the_endpoints_sent() {
    let s = session();
    assert_eq!(s.stats.kernel_drops, 0);
    assert!(s.stats.packets_written > 0);
    assert_eq!(
        s.server_received, s.client.app_sizes,
        "endpoint pair is consistent"
    );
    assert_eq!(s.client_received, s.server.app_sizes);
    let opts = SummaryOptions {
        port: Some(s.port),
        window_s: Some(0.5),
        top: Some(3),
    };
    let w = summarize(&s.pcap, &opts).unwrap();
    assert_eq!(w.connections, 1);
    for (d, e) in [
        (&w.client_to_server, &s.client),
        (&w.server_to_client, &s.server),
    ] {
        assert_eq!(d.framing, "websocket", "{:?}", d.framing_notes);
        assert_eq!(d.frames, e.frames);
        assert_eq!(d.frame_payload_bytes, e.frame_payload);
        assert_eq!(d.messages, e.messages);
        assert_eq!(
            d.app_bytes, e.app,
            "app bytes after inflate equal what was sent"
        );
        assert_eq!(d.control_frames, e.control);
        assert_eq!(d.app_unknown_messages, 0);
        assert_eq!(d.unframed_bytes, 0);
        assert_eq!(d.missing_bytes, 0);
        assert!(d.pure_acks > 0 || d.packets > 0);
        let max = e.app_sizes.iter().copied().max().unwrap();
        assert_eq!(d.message_app_size.unwrap().max, max as f64);
    }
    assert_eq!(w.server_to_client.largest_frames.len(), 3);
    let win: u64 = w.windows.iter().map(|r| r.server_to_client.frames).sum();
    assert_eq!(win, s.server.frames);
    assert!(w.server_to_client.compression_ratio.unwrap() > 1.0);
    // Every rendering works and carries the figures.
    for t in w.tables() {
        for f in [
            arena_report::Format::Table,
            arena_report::Format::Json,
            arena_report::Format::Csv,
        ] {
            assert!(!t.render(f).is_empty());
        }
    }
    let md = w.tables()[0].render(arena_report::Format::Markdown);
    assert!(md.contains(&arena_report::fmt_bytes(s.server.app)), "{md}");
}

#[test]
fn real_loopback_session_agrees_with_tshark() {
    let s = session();
    let w = summary_on(&s.pcap, s.port);
    let ws = tshark_ws(&s.pcap, s.port);
    let tcp = tshark_tcp(&s.pcap, s.port);
    for (i, d) in [&w.client_to_server, &w.server_to_client]
        .into_iter()
        .enumerate()
    {
        assert_eq!(d.frames, ws[i].0, "data frames, direction {i}");
        assert_eq!(
            d.frame_payload_bytes, ws[i].1,
            "data payload, direction {i}"
        );
        assert_eq!(d.control_frames, ws[i].2, "control frames, direction {i}");
        assert_eq!(
            d.control_payload_bytes, ws[i].3,
            "control payload, direction {i}"
        );
        assert_eq!(d.packets, tcp[i].0, "packets, direction {i}");
        // Loopback's outgoing copies are filtered out: no packet is seen twice.
        assert_eq!(tcp[i].3, 0, "exact duplicate records, direction {i}");
        // Real retransmits happen on loopback too (window full): both tools see them.
        assert_eq!(
            d.retransmitted_bytes, tcp[i].2,
            "retransmitted, direction {i}"
        );
        assert_eq!(
            d.tcp_payload_bytes,
            tcp[i].1 - tcp[i].2,
            "TCP payload, direction {i}"
        );
    }
}

fn copy_records(src: &Path, dst: &Path, keep: impl Fn(u64) -> bool) -> u64 {
    let mut r = PcapReader::open(src).unwrap();
    let mut w = PcapWriter::create(dst, r.linktype, 262_144).unwrap();
    let mut i = 0;
    while let Some(rec) = r.next_record().unwrap() {
        i += 1;
        if keep(i) {
            w.write(rec.ts_ns, rec.orig_len, rec.data).unwrap();
        }
    }
    w.flush().unwrap();
    i
}

#[test]
fn capture_started_mid_stream_counts_bytes_and_marks_framing_unknown() {
    let s = session();
    let cut = tmpdir().join("midstream.pcap");
    // Drop the handshake and the first exchanges: the capture starts inside the stream.
    copy_records(&s.pcap, &cut, |i| i > 40);
    let w = summary_on(&cut, s.port);
    let tcp = tshark_tcp(&cut, s.port);
    for (i, d) in [&w.client_to_server, &w.server_to_client]
        .into_iter()
        .enumerate()
    {
        assert_eq!(d.framing, "unknown");
        assert!(
            d.framing_notes.iter().any(|n| n.contains("mid-connection")),
            "{:?}",
            d.framing_notes
        );
        assert_eq!(
            d.tcp_payload_bytes,
            tcp[i].1 - tcp[i].2,
            "bytes still counted"
        );
        assert_eq!(d.unframed_bytes, d.tcp_payload_bytes);
        assert_eq!(d.frames, 0);
    }
}

#[test]
fn truncated_capture_is_summarised_up_to_the_cut_and_says_so() {
    let s = session();
    let bytes = std::fs::read(&s.pcap).unwrap();
    let cut = &bytes[..bytes.len() / 2];
    let w = summarize_reader(cut, "half.pcap", &SummaryOptions::default()).unwrap();
    let t = w.truncated.as_deref().unwrap();
    assert!(t.contains("half.pcap") && t.contains("cut short"), "{t}");
    assert!(w.warnings.iter().any(|x| x.contains("cut short")));
    assert!(w.server_to_client.tcp_payload_bytes > 0);
    // A header cut short is an error that names the file.
    let e = summarize_reader(&bytes[..10], "tiny.pcap", &SummaryOptions::default()).unwrap_err();
    assert!(
        format!("{e:#}").contains("tiny.pcap: truncated pcap header"),
        "{e:#}"
    );
}

#[test]
fn a_zero_snaplen_and_records_longer_than_the_wire_are_warned_about() {
    let s = session();
    let bytes = std::fs::read(&s.pcap).unwrap();
    let opts = SummaryOptions::default();
    let clean = summarize_reader(&bytes[..], "ok.pcap", &opts).unwrap();
    assert!(!clean
        .warnings
        .iter()
        .any(|w| w.contains("snaplen") || w.contains("original length")));
    let mut zero = bytes.clone();
    zero[16..20].copy_from_slice(&0u32.to_le_bytes());
    let w = summarize_reader(&zero[..], "zero-snap.pcap", &opts).unwrap();
    assert!(
        w.warnings
            .iter()
            .any(|x| x.contains("zero-snap.pcap: byte 16: the file header's snaplen is 0")),
        "{:?}",
        w.warnings
    );
    // The first record's original length set below its captured length.
    let mut short = bytes.clone();
    short[24 + 12..24 + 16].copy_from_slice(&1u32.to_le_bytes());
    let w = summarize_reader(&short[..], "swapped.pcap", &opts).unwrap();
    assert!(
        w.warnings.iter().any(|x| x.contains("swapped.pcap: 1 records claim more captured bytes than their original length (first: record 1 at byte 24)")),
        "{:?}",
        w.warnings
    );
    assert_eq!(w.server_to_client.frames, clean.server_to_client.frames);
}

#[test]
fn bad_files_give_clear_errors() {
    let opts = SummaryOptions::default();
    let err =
        |data: &[u8], name: &str| format!("{:#}", summarize_reader(data, name, &opts).unwrap_err());
    let zeros = vec![0u8; 4096];
    assert!(err(&zeros, "zero.pcap").contains("zero.pcap: byte 0: not a pcap file"));
    assert!(err(b"GIF89a..........................", "x.pcap").contains("not a pcap file"));
    assert!(err(&[], "empty.pcap").contains("truncated pcap header: 0 of 24"));
    let mut ng = vec![
        0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a,
    ];
    ng.resize(64, 0);
    assert!(err(&ng, "cap.pcapng").contains("pcapng"));
    // A record header claiming gigabytes is refused before any allocation.
    let mut buf = Vec::new();
    {
        let mut w = PcapWriter::new(&mut buf, 1, 262_144).unwrap();
        w.write(1, 60, &[0u8; 60]).unwrap();
        w.flush().unwrap();
    }
    buf[24 + 8..24 + 12].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    assert!(err(&buf, "big.pcap").contains("big.pcap: byte 24: record 1 claims"));
    // An unknown link type is named.
    let mut lt = Vec::new();
    PcapWriter::new(&mut lt, 147, 65_535)
        .unwrap()
        .flush()
        .unwrap();
    assert!(err(&lt, "usr.pcap").contains("unsupported link type 147"));
    assert!(summarize(Path::new("/nonexistent/x.pcap"), &opts).is_err());
}

#[test]
fn non_websocket_tcp_stream_is_counted_but_not_framed() {
    let dir = tmpdir();
    let pcap = dir.join("plain.pcap");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let cap = Capture::start("lo", port, &pcap).unwrap();
    thread::sleep(Duration::from_millis(50));
    let srv = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = vec![0u8; 10_000];
        s.read_exact(&mut buf).unwrap();
        s.write_all(&vec![0x82u8; 50_000]).unwrap();
    });
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(&vec![0x81u8; 10_000]).unwrap();
    let mut back = vec![0u8; 50_000];
    c.read_exact(&mut back).unwrap();
    srv.join().unwrap();
    drop(c);
    thread::sleep(Duration::from_millis(50));
    cap.stop().unwrap();
    let w = summary_on(&pcap, port);
    for (d, n) in [(&w.client_to_server, 10_000), (&w.server_to_client, 50_000)] {
        assert_eq!(d.tcp_payload_bytes, n);
        assert_eq!(d.framing, "not websocket", "{:?}", d.framing_notes);
        assert_eq!(d.frames, 0);
        assert_eq!(d.unframed_bytes, n);
    }
    // An HTTP exchange that is not a WebSocket upgrade is named as such.
    let mut buf = Vec::new();
    let spec = arena_wire::synth::SynthSpec {
        max_messages: 2,
        deflate: false,
        ..Default::default()
    };
    arena_wire::synth::write_session(&mut buf, &spec).unwrap();
    let pat = b"Upgrade: websocket";
    let mut n = 0;
    for i in 0..buf.len() - pat.len() {
        if &buf[i..i + pat.len()] == pat {
            buf[i + 9..i + 18].copy_from_slice(b"h2clearxx");
            n += 1;
        }
    }
    assert_eq!(n, 2);
    let w = summarize_reader(&buf[..], "h2c.pcap", &SummaryOptions::default()).unwrap();
    assert_eq!(w.client_to_server.framing, "not websocket");
    assert!(
        w.client_to_server.framing_notes[0].contains("not a WebSocket upgrade"),
        "{:?}",
        w.client_to_server.framing_notes
    );
    assert_eq!(w.server_to_client.framing, "not websocket");
    assert_eq!(w.server_to_client.frames, 0);
    assert_eq!(
        w.server_to_client.unframed_bytes,
        w.server_to_client.tcp_payload_bytes
    );
}

#[test]
fn forced_fallback_reports_interface_counters_as_its_source() {
    let dir = tmpdir();
    let pcap = dir.join("never.pcap");
    let mut opts = CaptureOptions::new("lo", Some(1), &pcap);
    opts.force_fallback = true;
    let cap = Capture::start_with(opts).unwrap();
    assert!(matches!(
        cap.source(),
        CaptureSource::InterfaceCounters { .. }
    ));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let srv = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).unwrap();
        buf.len()
    });
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(&vec![7u8; 300_000]).unwrap();
    drop(c);
    assert_eq!(srv.join().unwrap(), 300_000);
    let st = cap.stop().unwrap();
    assert!(
        matches!(st.source, CaptureSource::InterfaceCounters { ref reason } if reason.contains("counters only"))
    );
    assert_eq!(st.packets_written, 0);
    let i = st.interface.unwrap();
    assert!(i.rx_bytes >= 300_000, "{i:?}");
    assert!(!pcap.exists(), "no pcap is written under the fallback");
    let json = serde_json::to_string(&st).unwrap();
    assert!(json.contains("\"kind\":\"interface_counters\""), "{json}");
}

/// A browser from the project's launcher (killed and reaped on every exit path, panics
/// included), with one page open at `url`.
struct Chromium {
    rt: tokio::runtime::Runtime,
    browser: Option<arena_browser::Browser>,
    _page: arena_browser::Page,
}

impl Drop for Chromium {
    fn drop(&mut self) {
        if let Some(b) = self.browser.take() {
            let _ = self.rt.block_on(b.close());
        }
    }
}

fn launch_chromium(url: &str) -> Chromium {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let browser = rt
        .block_on(arena_browser::Browser::launch(
            arena_browser::LaunchOptions::default(),
        ))
        .expect("launch Chromium (apt-get install chromium)");
    let page = rt
        .block_on(browser.new_page(url, None))
        .expect("open the test page");
    Chromium {
        rt,
        browser: Some(browser),
        _page: page,
    }
}

/// Serves the page (on its own port, so the captured port carries only the WebSocket).
fn serve_page(listener: TcpListener, html: String) {
    thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { return };
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                    html.len(),
                    html
                )
                .as_bytes(),
            );
        }
    });
}

#[test]
fn chromium_session_agrees_with_the_page_the_server_and_tshark() {
    let dir = tmpdir();
    let pcap = dir.join("chromium.pcap");
    let ws_listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = ws_listener.local_addr().unwrap().port();
    let page_listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let page_port = page_listener.local_addr().unwrap().port();
    // What the page sends: tiny inputs, mid-size, and large random (incompressible) ones.
    let sizes: Vec<usize> = (0..40)
        .map(|i| match i % 8 {
            0 => 120_000,
            1 => 21,
            2 => 5,
            3 => 3_000,
            4 => 70_000,
            _ => 300,
        })
        .collect();
    let html = format!(
        r#"<!doctype html><title>wire</title><script>
const sizes = {sizes:?};
const ws = new WebSocket("ws://127.0.0.1:{port}/ws");
ws.binaryType = "arraybuffer";
const sent = [], recv = [];
let i = 0;
function payload(n, k) {{
  const a = new Uint8Array(n);
  if (k % 2 == 0) {{
    for (let o = 0; o < n; o += 65536) crypto.getRandomValues(a.subarray(o, Math.min(n, o + 65536)));
  }} else {{
    for (let o = 0; o < n; o++) a[o] = (o * 7 + k) % 13;
  }}
  return a;
}}
function next() {{
  if (i < sizes.length) {{ const n = sizes[i]; ws.send(payload(n, i)); sent.push(n); i++; }}
  else {{ ws.send(JSON.stringify({{sent, recv}})); }}
}}
ws.onopen = next;
ws.onmessage = (e) => {{ recv.push(e.data.byteLength); next(); }};
</script>"#
    );
    serve_page(page_listener, html);
    let cap = Capture::start("lo", port, &pcap).unwrap();
    thread::sleep(Duration::from_millis(50));
    let server = thread::spawn(move || {
        let mut ep = accept_upgrade(&ws_listener);
        let mut i = 0;
        let report = loop {
            let m = ep.recv().expect("page message");
            // The page's closing report is its only text message.
            if ep.last_opcode == 1 {
                break String::from_utf8(m).unwrap();
            }
            i += 1;
            match i % 5 {
                0 => ep.send(&payload(i, 250_000, 0.7), true, 1),
                1 => ep.send(&payload(i, 6_100, 0.6), true, 1),
                2 => ep.send(&payload(i, 400, 0.0), false, 1),
                3 => ep.send(&payload(i, 30_000, 0.5), true, 2),
                _ => ep.send(&payload(i, 80, 0.1), true, 1),
            }
        };
        ep.control(8, &[0x03, 0xe8]);
        let _ = ep.recv();
        (
            ep.sent.clone(),
            ep.received_app.clone(),
            ep.received_frames,
            ep.received_payload,
            report,
        )
    });
    let browser = launch_chromium(&format!("http://127.0.0.1:{page_port}/"));
    let (sent, received, rframes, rpayload, report) = server.join().unwrap();
    thread::sleep(Duration::from_millis(100));
    drop(browser);
    let _ = cap.stop().unwrap();

    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    let page_sent: u64 = report["sent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    let page_recv: Vec<u64> = report["recv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let report_len = *received.last().unwrap();
    assert_eq!(
        page_recv, sent.app_sizes,
        "the page saw what the server sent"
    );

    let w = summary_on(&pcap, port);
    let (c2s, s2c) = (&w.client_to_server, &w.server_to_client);
    assert_eq!(c2s.framing, "websocket", "{:?}", c2s.framing_notes);
    assert_eq!(s2c.framing, "websocket", "{:?}", s2c.framing_notes);
    // App bytes after inflate equal the sizes the page sent and saw.
    assert_eq!(c2s.app_bytes, page_sent + report_len);
    assert_eq!(s2c.app_bytes, page_recv.iter().sum::<u64>());
    assert!(
        c2s.compressed_messages > 0,
        "Chromium compressed its messages"
    );
    // Frames and payload equal what the server read and wrote on its socket.
    assert_eq!(c2s.frames, rframes);
    assert_eq!(c2s.frame_payload_bytes, rpayload);
    assert_eq!(s2c.frames, sent.frames);
    assert_eq!(s2c.frame_payload_bytes, sent.frame_payload);
    // And tshark agrees frame for frame and byte for byte.
    assert_tshark_agrees(&w, &pcap, port);
}

/// Sec-WebSocket-Accept: base64(SHA-1(key + GUID)), which Chromium checks.
fn accept_key(key: &str) -> String {
    let digest = sha1(format!("{key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11").as_bytes());
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in digest.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            if k <= c.len() {
                out.push(T[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in msg.chunks(64) {
        let mut w = [0u32; 80];
        for i in 0..16 {
            w[i] = u32::from_be_bytes([
                block[4 * i],
                block[4 * i + 1],
                block[4 * i + 2],
                block[4 * i + 3],
            ]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 20];
    for (i, x) in h.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&x.to_be_bytes());
    }
    out
}

#[test]
fn sha1_and_accept_key_match_rfc_6455_example() {
    assert_eq!(
        accept_key("dGhlIHNhbXBsZSBub25jZQ=="),
        "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    );
}

#[test]
fn compressed_messages_are_the_ones_the_summary_inflates() {
    let pcap = tmpdir().join("kept.pcap");
    let spec = arena_wire::synth::SynthSpec {
        impair: true,
        max_messages: 120,
        big_every: 40,
        seed: 11,
        ..Default::default()
    };
    let f = std::fs::File::create(&pcap).unwrap();
    arena_wire::synth::write_session(std::io::BufWriter::new(f), &spec).unwrap();
    let opts = SummaryOptions {
        port: Some(spec.port),
        ..Default::default()
    };
    let (kept_summary, kept) = arena_wire::compressed_messages(&pcap, &opts).unwrap();
    // Keeping the messages changes none of the figures.
    let plain = summarize(&pcap, &opts).unwrap();
    assert_eq!(
        serde_json::to_value(&kept_summary).unwrap(),
        serde_json::to_value(&plain).unwrap()
    );
    let (c2s, s2c) = (&plain.client_to_server, &plain.server_to_client);
    assert!(c2s.compressed_messages > 0 && s2c.compressed_messages > 0);
    assert_eq!(
        kept.len() as u64,
        c2s.compressed_messages + s2c.compressed_messages
    );
    // Each inflates alone, without error, and together they are the compressed share of
    // the app bytes: no more than all of it, and the whole when every message is compressed.
    let mut c = arena_wire::ws::Counter::new();
    let app: u64 = kept.iter().map(|m| c.message(m).unwrap()).sum();
    assert!(app > 0 && app <= c2s.app_bytes + s2c.app_bytes);
    let big = kept.iter().map(Vec::len).max().unwrap();
    assert!(
        big > 100 * 1024,
        "long messages are kept whole too: {big} B"
    );
}
