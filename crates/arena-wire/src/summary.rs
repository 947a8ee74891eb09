//! Reads a pcap once, front to back, and accounts for every byte per direction: packets,
//! wire bytes, TCP payload, WebSocket frames and messages, and the application bytes after
//! permessage-deflate. Memory is bounded by the number of connections, not the file size.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::net::IpAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use anyhow::{bail, Result};
use arena_stats::{StreamingSummary, Summary};
use serde::Serialize;

use crate::packet::{self, Segment, ACK, FIN, RST, SYN};
use crate::pcap::PcapReader;
use crate::reasm::{Reassembler, Sink};
use crate::ws::{ConnCtx, Counter, Deflate, DirParser, Events, Framing, Role};

/// Exact samples kept before a distribution switches to a constant-memory histogram
/// (three significant digits): 1 MiB per distribution at most, 10 distributions.
const EXACT_SAMPLES: usize = 1 << 17;
/// Connections listed one by one in the summary; the rest are only counted.
const LISTED_CONNECTIONS: usize = 256;
/// Compressed messages of this many bytes or fewer are inflated on the reading thread:
/// handing them to another costs more than inflating them.
const DEFER_SMALL: usize = 1024;
/// Longer ones than this are inflated on the reading thread as they stream, so what is
/// held for the inflate threads stays bounded: at most `DEFER_MAX` times
/// (`QUEUED_PER_THREAD` + 1) per thread plus [`BATCH_BYTES`].
const DEFER_MAX: usize = 256 * 1024;
const QUEUED_PER_THREAD: usize = 4;
/// Bytes of compressed messages sent to the inflate threads at once.
const BATCH_BYTES: usize = 64 * 1024;
/// Message buffers kept for reuse, and the largest one kept.
const FREE_BUFFERS: usize = 128;
const FREE_BUFFER_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Default)]
pub struct SummaryOptions {
    /// Only TCP segments to or from this port; the side that owns it is the server.
    pub port: Option<u16>,
    /// Also report per time window of this many seconds.
    pub window_s: Option<f64>,
    /// How many of the largest frames to list (default 5).
    pub top: Option<usize>,
}

/// A size or gap distribution: exact up to [`EXACT_SAMPLES`], then streaming.
#[derive(Debug, Clone, Default)]
struct Dist {
    exact: Vec<f64>,
    stream: Option<StreamingSummary>,
}

impl Dist {
    fn record(&mut self, v: f64) {
        if let Some(s) = self.stream.as_mut() {
            s.record(v);
            return;
        }
        self.exact.push(v);
        if self.exact.len() >= EXACT_SAMPLES {
            let mut s = StreamingSummary::new(1000.0);
            for &x in &self.exact {
                s.record(x);
            }
            self.exact = Vec::new();
            self.stream = Some(s);
        }
    }

    fn summary(&self) -> Option<Summary> {
        match &self.stream {
            Some(s) => s.summary(),
            None => Summary::of(&self.exact),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct WindowCounts {
    pub packets: u64,
    pub tcp_payload_bytes: u64,
    pub frames: u64,
    pub frame_payload_bytes: u64,
    pub messages: u64,
    pub app_bytes: u64,
}

/// One of the largest data frames: payload bytes and when its last byte was captured.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct FrameRef {
    pub payload_bytes: u64,
    /// Seconds from the first packet of the capture.
    pub t_s: f64,
    ts_ns: u64,
}

#[derive(Debug, Default)]
struct DirAcc {
    packets: u64,
    wire_bytes: u64,
    pure_acks: u64,
    tcp_payload: u64,
    http_bytes: u64,
    retrans_bytes: u64,
    retrans_segments: u64,
    ooo_segments: u64,
    gap_bytes: u64,
    snapped_bytes: u64,
    frames: u64,
    frame_payload: u64,
    frame_header: u64,
    frame_sizes: Dist,
    control: u64,
    control_payload: u64,
    control_header: u64,
    pings: u64,
    pongs: u64,
    closes: u64,
    messages: u64,
    compressed_messages: u64,
    msg_wire: Dist,
    msg_app: Dist,
    app_bytes: u64,
    app_known_wire: u64,
    app_unknown_messages: u64,
    inflate_failures: u64,
    inflate_first_error: Option<String>,
    unframed: u64,
    last_frame_ts: Option<u64>,
    gaps_ms: Dist,
    largest: Vec<(u64, u64)>,
    top: usize,
    first_ts: u64,
    window_ns: Option<u64>,
    windows: BTreeMap<u64, WindowCounts>,
}

impl DirAcc {
    fn window(&mut self, ts: u64) -> Option<&mut WindowCounts> {
        let w = self.window_ns?;
        let idx = ts.saturating_sub(self.first_ts) / w;
        Some(self.windows.entry(idx).or_default())
    }
}

/// Events of one direction, stamped with the packet that delivered the bytes.
struct DirEvents<'a> {
    acc: &'a mut DirAcc,
    pool: Option<&'a mut Pool>,
    d: usize,
}

impl DirAcc {
    /// The message counts known when a message ends, before its app bytes are.
    fn message_seen(&mut self, ts: u64, wire: u64, compressed: bool) {
        self.messages += 1;
        if compressed {
            self.compressed_messages += 1;
        }
        self.msg_wire.record(wire as f64);
        if let Some(w) = self.window(ts) {
            w.messages += 1;
        }
    }

    fn app(&mut self, ts: u64, wire: u64, app: Option<u64>) {
        match app {
            Some(n) => {
                self.app_bytes += n;
                self.app_known_wire += wire;
                self.msg_app.record(n as f64);
                if let Some(w) = self.window(ts) {
                    w.app_bytes += n;
                }
            }
            None => self.app_unknown_messages += 1,
        }
    }

    fn inflate_failed(&mut self, why: &str) {
        self.inflate_failures += 1;
        if self.inflate_first_error.is_none() {
            self.inflate_first_error = Some(why.to_string());
        }
    }
}

/// A compressed message handed to an inflate thread, and its count coming back.
struct Job {
    d: usize,
    ts: u64,
    wire: u64,
    bytes: Vec<u8>,
}

struct Done {
    job: Job,
    app: Result<u64, String>,
}

/// Threads that count the inflated size of whole messages. Messages are independent (see
/// [`Counter`]), so they may be counted in any order; every figure they feed is a sum or a
/// distribution, which does not depend on the order either. Messages travel in batches of
/// [`BATCH_BYTES`]: one per message would cost a thread wake-up (several microseconds) for
/// every few microseconds of inflating.
struct Pool {
    tx: Option<SyncSender<Vec<Job>>>,
    rx: Receiver<Vec<Done>>,
    workers: Vec<JoinHandle<()>>,
    batch: Vec<Job>,
    batch_bytes: usize,
    /// Buffers back from the threads, reused for the next messages.
    free: Vec<Vec<u8>>,
    /// Counted here because no thread was left to take them; collected with the rest.
    here: Vec<Done>,
    fallback: Option<Counter>,
    /// With [`compressed_messages`]: a copy of every message handed over, in order.
    kept: Option<Vec<Vec<u8>>>,
}

impl Pool {
    fn new(threads: usize) -> Option<Pool> {
        let (tx, jobs) = mpsc::sync_channel::<Vec<Job>>(threads * QUEUED_PER_THREAD);
        let (done_tx, rx) = mpsc::channel::<Vec<Done>>();
        let jobs = Arc::new(Mutex::new(jobs));
        let mut workers = Vec::new();
        for i in 0..threads {
            let jobs = Arc::clone(&jobs);
            let done = done_tx.clone();
            let h = std::thread::Builder::new()
                .name(format!("wire-inflate-{i}"))
                .spawn(move || {
                    let mut c = Counter::new();
                    loop {
                        let batch = match jobs.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        let Ok(batch) = batch else { return };
                        let out: Vec<Done> = batch
                            .into_iter()
                            .map(|job| {
                                let app = c.message(&job.bytes);
                                Done { job, app }
                            })
                            .collect();
                        if done.send(out).is_err() {
                            return;
                        }
                    }
                });
            match h {
                Ok(h) => workers.push(h),
                // No thread at all: the caller inflates everything itself.
                Err(_) if workers.is_empty() => return None,
                Err(_) => break,
            }
        }
        Some(Pool {
            tx: Some(tx),
            rx,
            workers,
            batch: Vec::new(),
            batch_bytes: 0,
            free: Vec::new(),
            here: Vec::new(),
            fallback: None,
            kept: None,
        })
    }

    /// No threads: every compressed message is handed over whole, counted on the calling
    /// thread as without threads, and a copy of its bytes kept.
    fn keeping() -> Pool {
        let (_, rx) = mpsc::channel();
        Pool {
            tx: None,
            rx,
            workers: Vec::new(),
            batch: Vec::new(),
            batch_bytes: 0,
            free: Vec::new(),
            here: Vec::new(),
            fallback: None,
            kept: Some(Vec::new()),
        }
    }

    fn submit(&mut self, job: Job) {
        self.batch_bytes += job.bytes.len();
        self.batch.push(job);
        if self.batch_bytes >= BATCH_BYTES {
            self.send();
        }
    }

    /// Queues the batch, or counts it here when no thread is left to take it.
    fn send(&mut self) {
        self.batch_bytes = 0;
        let batch = std::mem::take(&mut self.batch);
        if batch.is_empty() {
            return;
        }
        let batch = match &self.tx {
            Some(tx) => match tx.send(batch) {
                Ok(()) => return,
                Err(mpsc::SendError(b)) => b,
            },
            None => batch,
        };
        if let Some(kept) = self.kept.as_mut() {
            kept.extend(batch.iter().map(|job| job.bytes.clone()));
        }
        let c = self.fallback.get_or_insert_with(Counter::new);
        for job in batch {
            let app = c.message(&job.bytes);
            self.here.push(Done { job, app });
        }
    }

    /// Waits for every queued message and stops the threads.
    fn finish(&mut self) -> Vec<Done> {
        self.send();
        self.tx = None;
        for h in self.workers.drain(..) {
            let _ = h.join();
        }
        let mut all = std::mem::take(&mut self.here);
        for b in self.rx.try_iter() {
            all.extend(b);
        }
        all
    }
}

/// Adds a counted message to its direction; returns its buffer for reuse.
fn apply_done(acc: &mut DirAcc, done: Done) -> Vec<u8> {
    let app = match &done.app {
        Ok(n) => Some(*n),
        Err(why) => {
            acc.inflate_failed(why);
            None
        }
    };
    acc.app(done.job.ts, done.job.wire, app);
    done.job.bytes
}

impl Events for DirEvents<'_> {
    fn frame(&mut self, ts: u64, opcode: u8, payload: u64, header: u64) {
        let a = &mut *self.acc;
        if opcode >= 8 {
            a.control += 1;
            a.control_payload += payload;
            a.control_header += header;
            match opcode {
                8 => a.closes += 1,
                9 => a.pings += 1,
                10 => a.pongs += 1,
                _ => {}
            }
            return;
        }
        a.frames += 1;
        a.frame_payload += payload;
        a.frame_header += header;
        a.frame_sizes.record(payload as f64);
        if let Some(prev) = a.last_frame_ts {
            a.gaps_ms.record(ts.saturating_sub(prev) as f64 / 1e6);
        }
        a.last_frame_ts = Some(ts);
        if a.top > 0 && (a.largest.len() < a.top || a.largest.last().is_some_and(|l| payload > l.0))
        {
            let pos = a.largest.partition_point(|l| l.0 >= payload);
            a.largest.insert(pos, (payload, ts));
            a.largest.truncate(a.top);
        }
        if let Some(w) = a.window(ts) {
            w.frames += 1;
            w.frame_payload_bytes += payload;
        }
    }

    fn message(&mut self, ts: u64, wire: u64, app: Option<u64>, compressed: bool) {
        self.acc.message_seen(ts, wire, compressed);
        self.acc.app(ts, wire, app);
    }

    fn unframed(&mut self, n: u64) {
        self.acc.unframed += n;
    }

    fn inflate_failed(&mut self, why: &str) {
        self.acc.inflate_failed(why);
    }

    fn deferred_message(&mut self, ts: u64, wire: u64, payload: &mut Vec<u8>) {
        self.acc.message_seen(ts, wire, true);
        let Some(pool) = self.pool.as_deref_mut() else {
            let app = Counter::new().message(payload);
            if let Err(why) = &app {
                self.acc.inflate_failed(why);
            }
            self.acc.app(ts, wire, app.ok());
            return;
        };
        let fresh = pool.free.pop().unwrap_or_default();
        let bytes = std::mem::replace(payload, fresh);
        let job = Job {
            d: self.d,
            ts,
            wire,
            bytes,
        };
        pool.submit(job);
    }
}

struct Dir {
    reasm: Reassembler,
    parser: Option<DirParser>,
}

struct Conn {
    client: (IpAddr, u16),
    server: (IpAddr, u16),
    roles_guessed: bool,
    ctx: ConnCtx,
    dirs: [Dir; 2],
    bytes: [u64; 2],
    fin: [bool; 2],
}

impl Conn {
    fn new(client: (IpAddr, u16), server: (IpAddr, u16), roles_guessed: bool) -> Self {
        let dir = || Dir {
            reasm: Reassembler::new(),
            parser: None,
        };
        Conn {
            client,
            server,
            roles_guessed,
            ctx: ConnCtx::default(),
            dirs: [dir(), dir()],
            bytes: [0, 0],
            fin: [false, false],
        }
    }
}

/// Feeds reassembled bytes of one direction to its WebSocket parser.
struct DirSink<'a> {
    parser: &'a mut DirParser,
    ctx: &'a mut ConnCtx,
    acc: &'a mut DirAcc,
    pool: Option<&'a mut Pool>,
    d: usize,
    ts: u64,
    delivered: u64,
}

impl Sink for DirSink<'_> {
    fn data(&mut self, bytes: &[u8]) {
        self.delivered += bytes.len() as u64;
        let mut ev = DirEvents {
            acc: self.acc,
            pool: self.pool.as_deref_mut(),
            d: self.d,
        };
        self.parser.feed(bytes, self.ts, self.ctx, &mut ev);
    }
    fn gap(&mut self, n: u64) {
        self.acc.gap_bytes += n;
        let mut ev = DirEvents {
            acc: self.acc,
            pool: self.pool.as_deref_mut(),
            d: self.d,
        };
        self.parser.gap(n, &mut ev);
    }
}

/// Per-direction figures. Byte counts are exact; distributions are exact up to 131,072
/// samples and to three significant digits past that.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DirSummary {
    pub packets: u64,
    /// Captured packet lengths as on the wire, link-layer header included.
    pub wire_bytes: u64,
    /// Packets carrying no payload and no SYN/FIN/RST: acknowledgements, counted apart.
    pub pure_acks: u64,
    /// Unique TCP payload bytes (retransmitted copies excluded).
    pub tcp_payload_bytes: u64,
    pub http_upgrade_bytes: u64,
    pub retransmitted_bytes: u64,
    pub retransmitted_segments: u64,
    pub out_of_order_segments: u64,
    /// Stream bytes never captured (kernel drops, capture started or ended mid-segment).
    pub missing_bytes: u64,
    /// Data frames (text, binary, continuation).
    pub frames: u64,
    pub frame_payload_bytes: u64,
    /// WebSocket header bytes of data frames.
    pub frame_header_bytes: u64,
    pub frame_size: Option<Summary>,
    pub control_frames: u64,
    pub control_payload_bytes: u64,
    pub control_header_bytes: u64,
    pub pings: u64,
    pub pongs: u64,
    pub closes: u64,
    pub messages: u64,
    pub compressed_messages: u64,
    pub message_wire_size: Option<Summary>,
    /// Application bytes after permessage-deflate, over messages whose inflation succeeded.
    pub app_bytes: u64,
    pub message_app_size: Option<Summary>,
    pub app_unknown_messages: u64,
    /// App bytes / frame payload bytes of the same messages (1.61 means wire is 62 %).
    pub compression_ratio: Option<f64>,
    pub frame_payload_per_s: Option<f64>,
    pub tcp_payload_per_s: Option<f64>,
    pub median_gap_ms: Option<f64>,
    pub largest_frames: Vec<FrameRef>,
    /// Stream bytes that were counted but not read as frames.
    pub unframed_bytes: u64,
    /// "websocket", "unknown", "not websocket", "mixed: ..." or "no payload"; reasons in notes.
    pub framing: String,
    pub framing_notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConnInfo {
    pub client: String,
    pub server: String,
    pub roles_guessed: bool,
    pub client_framing: String,
    pub server_framing: String,
    pub deflate: Option<Deflate>,
    pub client_to_server_bytes: u64,
    pub server_to_client_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct WindowRow {
    pub start_s: f64,
    pub client_to_server: WindowCounts,
    pub server_to_client: WindowCounts,
}

/// The whole account of one capture.
#[derive(Debug, Clone, Serialize)]
pub struct WireSummary {
    pub file: String,
    pub port: Option<u16>,
    pub records: u64,
    /// Records that were not TCP on the selected port (other traffic, ARP, UDP...).
    pub ignored_records: u64,
    pub first_ts_ns: u64,
    /// Seconds from the first to the last record.
    pub span_s: f64,
    pub connections: u64,
    pub connection_list: Vec<ConnInfo>,
    pub client_to_server: DirSummary,
    pub server_to_client: DirSummary,
    pub window_s: Option<f64>,
    pub windows: Vec<WindowRow>,
    /// Set when the file ends inside a record.
    pub truncated: Option<String>,
    pub warnings: Vec<String>,
}

struct State {
    opts: SummaryOptions,
    linktype: u32,
    conns: Vec<Option<Conn>>,
    index: HashMap<(IpAddr, u16, IpAddr, u16), usize>,
    /// Connections already closed (both FINs or a RST), by 4-tuple: their client, so
    /// trailing ACKs are still counted in the right direction after the state is freed.
    closed: HashMap<(IpAddr, u16, IpAddr, u16), (IpAddr, u16)>,
    free: Vec<usize>,
    acc: [DirAcc; 2],
    finished: Vec<ConnInfo>,
    connections: u64,
    notes: [BTreeMap<String, u64>; 2],
    status: [[u64; 3]; 2],
    records: u64,
    ignored: u64,
    first_ts: Option<u64>,
    last_ts: u64,
    pool: Option<Pool>,
}

fn framing_label(f: &Framing) -> (usize, String) {
    match f {
        Framing::Http => (1, "unknown: the HTTP upgrade never completed".into()),
        Framing::Frames => (0, "websocket".into()),
        Framing::Unknown(why) => (1, format!("unknown: {why}")),
        Framing::NotWebSocket(why) => (2, format!("not websocket: {why}")),
    }
}

impl State {
    fn new(opts: SummaryOptions, linktype: u32, pool: Option<Pool>) -> Self {
        let top = opts.top.unwrap_or(5);
        let window_ns = opts
            .window_s
            .filter(|w| *w > 0.0 && w.is_finite())
            .map(|w| ((w * 1e9) as u64).max(1));
        let mk = || DirAcc {
            top,
            window_ns,
            ..DirAcc::default()
        };
        State {
            opts,
            linktype,
            conns: Vec::new(),
            index: HashMap::new(),
            closed: HashMap::new(),
            free: Vec::new(),
            acc: [mk(), mk()],
            finished: Vec::new(),
            connections: 0,
            notes: [BTreeMap::new(), BTreeMap::new()],
            status: [[0; 3]; 2],
            records: 0,
            ignored: 0,
            first_ts: None,
            last_ts: 0,
            pool,
        }
    }

    /// Adds the messages the inflate threads have counted so far.
    fn collect(&mut self) {
        let Some(p) = self.pool.as_mut() else {
            return;
        };
        let here = std::mem::take(&mut p.here);
        for batch in std::iter::once(here).chain(p.rx.try_iter()) {
            for done in batch {
                let d = done.job.d.min(1);
                let mut buf = apply_done(&mut self.acc[d], done);
                // Kept for reuse only while small: memory stays bounded, not by the largest
                // messages seen.
                if p.free.len() < FREE_BUFFERS && buf.capacity() <= FREE_BUFFER_BYTES {
                    buf.clear();
                    p.free.push(buf);
                }
            }
        }
    }

    fn record(&mut self, ts: u64, orig_len: u32, data: &[u8]) {
        self.records += 1;
        if self.first_ts.is_none() {
            self.first_ts = Some(ts);
            for a in &mut self.acc {
                a.first_ts = ts;
            }
        }
        self.last_ts = self.last_ts.max(ts);
        let seg = match packet::decode(self.linktype, data) {
            Ok(s) => s,
            Err(_) => {
                self.ignored += 1;
                return;
            }
        };
        if let Some(p) = self.opts.port {
            if seg.sport != p && seg.dport != p {
                self.ignored += 1;
                return;
            }
        }
        self.segment(ts, orig_len, &seg);
        self.collect();
    }

    fn key(seg: &Segment) -> (IpAddr, u16, IpAddr, u16) {
        let a = (seg.src, seg.sport);
        let b = (seg.dst, seg.dport);
        if a <= b {
            (a.0, a.1, b.0, b.1)
        } else {
            (b.0, b.1, a.0, a.1)
        }
    }

    fn new_conn(&self, seg: &Segment) -> Conn {
        let src = (seg.src, seg.sport);
        let dst = (seg.dst, seg.dport);
        let syn = seg.flags & SYN != 0;
        let ack = seg.flags & ACK != 0;
        if let Some(p) = self.opts.port {
            if seg.dport == p {
                return Conn::new(src, dst, false);
            }
            return Conn::new(dst, src, false);
        }
        if syn && !ack {
            return Conn::new(src, dst, false);
        }
        if syn && ack {
            return Conn::new(dst, src, false);
        }
        // No handshake and no port given: the lower port is most likely the listener.
        if seg.dport <= seg.sport {
            Conn::new(src, dst, true)
        } else {
            Conn::new(dst, src, true)
        }
    }

    fn segment(&mut self, ts: u64, orig_len: u32, seg: &Segment) {
        let key = State::key(seg);
        let syn_only = seg.flags & SYN != 0 && seg.flags & ACK == 0;
        let idx = match self.index.get(&key) {
            Some(&i) => {
                // A fresh SYN on a 4-tuple that already carried a stream is a new connection.
                let reuse = syn_only
                    && self.conns[i].as_ref().is_some_and(|c| {
                        let d = if (seg.src, seg.sport) == c.client {
                            0
                        } else {
                            1
                        };
                        !c.dirs[d].reasm.is_fresh()
                    });
                if reuse {
                    self.close(i);
                    let c = self.new_conn(seg);
                    self.conns[i] = Some(c);
                    self.connections += 1;
                }
                i
            }
            None => {
                if let Some(&client) = self.closed.get(&key) {
                    if !syn_only {
                        let d = if (seg.src, seg.sport) == client { 0 } else { 1 };
                        self.count_packet(d, ts, orig_len, seg);
                        return;
                    }
                    self.closed.remove(&key);
                }
                let c = self.new_conn(seg);
                self.connections += 1;
                let i = match self.free.pop() {
                    Some(i) => {
                        self.conns[i] = Some(c);
                        i
                    }
                    None => {
                        self.conns.push(Some(c));
                        self.conns.len() - 1
                    }
                };
                self.index.insert(key, i);
                i
            }
        };
        let Some(conn) = self.conns[idx].as_mut() else {
            return;
        };
        let d = if (seg.src, seg.sport) == conn.client {
            0
        } else {
            1
        };
        if seg.flags & FIN != 0 {
            conn.fin[d] = true;
        }
        let ended = seg.flags & RST != 0 || conn.fin == [true, true];
        let client = conn.client;
        self.count_packet(d, ts, orig_len, seg);
        self.deliver(idx, d, ts, seg);
        if ended {
            // Free the connection's parser and inflate state now: memory stays bounded by
            // the connections open at once, not by all the file has seen.
            self.close(idx);
            self.index.remove(&key);
            self.free.push(idx);
            if self.closed.len() >= 1 << 20 {
                self.closed.clear();
            }
            self.closed.insert(key, client);
        }
    }

    fn count_packet(&mut self, d: usize, ts: u64, orig_len: u32, seg: &Segment) {
        let acc = &mut self.acc[d];
        acc.packets += 1;
        acc.wire_bytes += orig_len as u64;
        if seg.payload.is_empty() && seg.flags & (SYN | FIN | RST) == 0 {
            acc.pure_acks += 1;
        }
        acc.snapped_bytes += seg.missing as u64;
        if let Some(w) = acc.window(ts) {
            w.packets += 1;
        }
    }

    fn deliver(&mut self, idx: usize, d: usize, ts: u64, seg: &Segment) {
        let Some(conn) = self.conns[idx].as_mut() else {
            return;
        };
        let acc = &mut self.acc[d];
        let syn = seg.flags & SYN != 0;
        let dir = &mut conn.dirs[d];
        if dir.parser.is_none() && (syn || !seg.payload.is_empty()) {
            let role = if d == 0 { Role::Client } else { Role::Server };
            let mut p = DirParser::new(role, syn);
            match &self.pool {
                Some(pool) if pool.kept.is_some() => p.defer(0, usize::MAX),
                Some(_) => p.defer(DEFER_SMALL, DEFER_MAX),
                None => {}
            }
            dir.parser = Some(p);
        }
        let Some(parser) = dir.parser.as_mut() else {
            return;
        };
        let mut sink = DirSink {
            parser,
            ctx: &mut conn.ctx,
            acc,
            pool: self.pool.as_mut(),
            d,
            ts,
            delivered: 0,
        };
        let out = dir.reasm.segment(seg.seq, syn, seg.payload, &mut sink);
        let delivered = sink.delivered;
        acc.tcp_payload += delivered;
        conn.bytes[d] += delivered;
        if let Some(w) = acc.window(ts) {
            w.tcp_payload_bytes += delivered;
        }
        if out.retransmitted > 0 {
            acc.retrans_bytes += out.retransmitted;
            if out.retransmitted >= seg.payload.len() as u64 {
                acc.retrans_segments += 1;
            }
        }
        if out.out_of_order {
            acc.ooo_segments += 1;
        }
        // A snapped segment's missing tail is a hole the reassembler cannot see.
        if seg.missing > 0 {
            let mut ev = DirEvents {
                acc,
                pool: self.pool.as_mut(),
                d,
            };
            parser_gap(dir.parser.as_mut(), seg.missing as u64, &mut ev);
        }
    }

    fn close(&mut self, i: usize) {
        let Some(mut c) = self.conns[i].take() else {
            return;
        };
        let mut framing = [String::new(), String::new()];
        for (d, label_out) in framing.iter_mut().enumerate() {
            let acc = &mut self.acc[d];
            let dir = &mut c.dirs[d];
            if let Some(parser) = dir.parser.as_mut() {
                let mut sink = DirSink {
                    parser,
                    ctx: &mut c.ctx,
                    acc,
                    pool: self.pool.as_mut(),
                    d,
                    ts: self.last_ts,
                    delivered: 0,
                };
                let dup = dir.reasm.finish(&mut sink);
                let delivered = sink.delivered;
                acc.tcp_payload += delivered;
                acc.retrans_bytes += dup;
                c.bytes[d] += delivered;
                if parser.mid_frame() {
                    let note = "capture ended inside a frame or message".to_string();
                    *self.notes[d].entry(note).or_default() += 1;
                }
                acc.http_bytes += parser.http_bytes;
                let (k, label) = framing_label(&parser.framing);
                self.status[d][k] += 1;
                if k != 0 {
                    *self.notes[d].entry(label.clone()).or_default() += 1;
                }
                *label_out = label;
            } else {
                *label_out = "no payload".into();
            }
        }
        if self.finished.len() < LISTED_CONNECTIONS {
            let [cf, sf] = framing;
            self.finished.push(ConnInfo {
                client: fmt_ep(c.client),
                server: fmt_ep(c.server),
                roles_guessed: c.roles_guessed,
                client_framing: cf,
                server_framing: sf,
                deflate: c.ctx.deflate,
                client_to_server_bytes: c.bytes[0],
                server_to_client_bytes: c.bytes[1],
            });
        }
    }

    /// The summary, and the messages a keeping pool kept (none otherwise).
    fn finish(mut self, file: String, truncated: Option<String>) -> (WireSummary, Vec<Vec<u8>>) {
        for i in 0..self.conns.len() {
            self.close(i);
        }
        let mut kept = Vec::new();
        if let Some(mut p) = self.pool.take() {
            for done in p.finish() {
                let d = done.job.d.min(1);
                let _ = apply_done(&mut self.acc[d], done);
            }
            kept = p.kept.take().unwrap_or_default();
        }
        for (acc, notes) in self.acc.iter().zip(self.notes.iter_mut()) {
            if let Some(e) = &acc.inflate_first_error {
                // Each message starts on a deflate block boundary and needs no earlier
                // output to be counted, so one failure does not make later ones unknown.
                notes.insert(
                    format!(
                        "{e} (first of {} message(s) that failed to inflate; later messages \
                         are still counted)",
                        acc.inflate_failures
                    ),
                    1,
                );
            }
        }
        let first = self.first_ts.unwrap_or(0);
        let span_s = self.last_ts.saturating_sub(first) as f64 / 1e9;
        let [mut a0, mut a1] = std::mem::take(&mut self.acc);
        let w0 = std::mem::take(&mut a0.windows);
        let w1 = std::mem::take(&mut a1.windows);
        let [n0, n1] = std::mem::take(&mut self.notes);
        let c2s = dir_summary(a0, n0, self.status[0], first, span_s);
        let s2c = dir_summary(a1, n1, self.status[1], first, span_s);
        let mut warnings = Vec::new();
        if let Some(t) = &truncated {
            warnings.push(t.clone());
        }
        if self.connections == 0 {
            warnings.push(match self.opts.port {
                Some(p) => format!("no TCP connection on port {p} in {file}"),
                None => format!("no TCP connection in {file}"),
            });
        }
        for (name, d) in [("client->server", &c2s), ("server->client", &s2c)] {
            if d.missing_bytes > 0 {
                warnings.push(format!(
                    "{name}: {} stream bytes missing from the capture (drops or a cut-off start/end)",
                    d.missing_bytes
                ));
            }
        }
        let mut windows = Vec::new();
        if let Some(w) = self.opts.window_s.filter(|w| *w > 0.0 && w.is_finite()) {
            let keys: std::collections::BTreeSet<u64> =
                w0.keys().chain(w1.keys()).copied().collect();
            for k in keys {
                windows.push(WindowRow {
                    start_s: k as f64 * w,
                    client_to_server: w0.get(&k).cloned().unwrap_or_default(),
                    server_to_client: w1.get(&k).cloned().unwrap_or_default(),
                });
            }
        }
        let summary = WireSummary {
            file,
            port: self.opts.port,
            records: self.records,
            ignored_records: self.ignored,
            first_ts_ns: first,
            span_s,
            connections: self.connections,
            connection_list: self.finished,
            client_to_server: c2s,
            server_to_client: s2c,
            window_s: self.opts.window_s,
            windows,
            truncated,
            warnings,
        };
        (summary, kept)
    }
}

fn parser_gap<E: Events>(p: Option<&mut DirParser>, n: u64, ev: &mut E) {
    if let Some(p) = p {
        p.gap(n, ev);
    }
}

fn fmt_ep(ep: (IpAddr, u16)) -> String {
    match ep.0 {
        IpAddr::V4(a) => format!("{a}:{}", ep.1),
        IpAddr::V6(a) => format!("[{a}]:{}", ep.1),
    }
}

fn dir_summary(
    a: DirAcc,
    notes: BTreeMap<String, u64>,
    status: [u64; 3],
    first: u64,
    span_s: f64,
) -> DirSummary {
    let per_s = |b: u64| (span_s > 0.0).then(|| b as f64 / span_s);
    let framing = match status {
        [0, 0, 0] => "no payload".to_string(),
        [_, 0, 0] => "websocket".to_string(),
        [0, _, 0] => "unknown".to_string(),
        [0, 0, _] => "not websocket".to_string(),
        [w, u, n] => format!("mixed: {w} websocket, {u} unknown, {n} not websocket connection(s)"),
    };
    let framing_notes = notes
        .into_iter()
        .map(|(k, n)| {
            if n > 1 {
                format!("{k} ({n} connections)")
            } else {
                k
            }
        })
        .collect();
    DirSummary {
        packets: a.packets,
        wire_bytes: a.wire_bytes,
        pure_acks: a.pure_acks,
        tcp_payload_bytes: a.tcp_payload,
        http_upgrade_bytes: a.http_bytes,
        retransmitted_bytes: a.retrans_bytes,
        retransmitted_segments: a.retrans_segments,
        out_of_order_segments: a.ooo_segments,
        missing_bytes: a.gap_bytes + a.snapped_bytes,
        frames: a.frames,
        frame_payload_bytes: a.frame_payload,
        frame_header_bytes: a.frame_header,
        frame_size: a.frame_sizes.summary(),
        control_frames: a.control,
        control_payload_bytes: a.control_payload,
        control_header_bytes: a.control_header,
        pings: a.pings,
        pongs: a.pongs,
        closes: a.closes,
        messages: a.messages,
        compressed_messages: a.compressed_messages,
        message_wire_size: a.msg_wire.summary(),
        app_bytes: a.app_bytes,
        message_app_size: a.msg_app.summary(),
        app_unknown_messages: a.app_unknown_messages,
        compression_ratio: (a.app_known_wire > 0)
            .then(|| a.app_bytes as f64 / a.app_known_wire as f64),
        frame_payload_per_s: per_s(a.frame_payload),
        tcp_payload_per_s: per_s(a.tcp_payload),
        median_gap_ms: a.gaps_ms.summary().map(|s| s.p50),
        largest_frames: a
            .largest
            .iter()
            .map(|&(p, ts)| FrameRef {
                payload_bytes: p,
                t_s: ts.saturating_sub(first) as f64 / 1e9,
                ts_ns: ts,
            })
            .collect(),
        unframed_bytes: a.unframed,
        framing,
        framing_notes,
    }
}

/// Inflate threads [`summarize`] uses: one per core when there are two or more, none
/// (everything on the calling thread) on one core.
pub fn default_inflate_threads() -> usize {
    match std::thread::available_parallelism().map(|n| n.get()) {
        Ok(n) if n >= 2 => n.min(8),
        _ => 0,
    }
}

/// Summarises a classic pcap file, inflating on [`default_inflate_threads`] threads.
pub fn summarize(path: &Path, opts: &SummaryOptions) -> Result<WireSummary> {
    summarize_threads(path, opts, default_inflate_threads())
}

/// [`summarize`] with `threads` inflate threads besides the reading one (0: inflate on
/// the calling thread). The result is the same whatever the number.
pub fn summarize_threads(
    path: &Path,
    opts: &SummaryOptions,
    threads: usize,
) -> Result<WireSummary> {
    let r = PcapReader::open(path)?;
    run(r, opts, threads)
}

/// [`summarize`] on the calling thread, also returning the payload of every non-empty
/// compressed message, unmasked and as framed (its sync-flush tail stripped, as RFC 7692
/// sends it), in the order they ended: what the summary inflated, so a benchmark can time
/// inflating them alone ([`crate::ws::Counter::message`] is the summary's inflate).
pub fn compressed_messages(
    path: &Path,
    opts: &SummaryOptions,
) -> Result<(WireSummary, Vec<Vec<u8>>)> {
    let r = PcapReader::open(path)?;
    run_with(r, opts, Some(Pool::keeping()))
}

/// Summarises a classic pcap from any reader; `name` appears in messages.
pub fn summarize_reader<R: Read>(r: R, name: &str, opts: &SummaryOptions) -> Result<WireSummary> {
    run(PcapReader::new(r, name)?, opts, default_inflate_threads())
}

/// The pcap file at `path` opened for [`summarize_reader`] (a FIFO is announced while it
/// waits for its writer), every byte read from it counted into `read`, which a progress
/// bar polls.
pub fn open_counted(path: &Path, read: Arc<AtomicU64>) -> Result<impl Read> {
    let file = arena_sys::fifo::open_announced(path, "pcap capture")
        .map_err(|e| anyhow::anyhow!("{}: cannot open: {e}", path.display()))?;
    Ok(Counted {
        inner: std::io::BufReader::with_capacity(1 << 20, file),
        read,
    })
}

/// A reader that counts what passes through it.
struct Counted<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// [`summarize_reader`] with `threads` inflate threads (see [`summarize_threads`]).
pub fn summarize_reader_threads<R: Read>(
    r: R,
    name: &str,
    opts: &SummaryOptions,
    threads: usize,
) -> Result<WireSummary> {
    run(PcapReader::new(r, name)?, opts, threads)
}

fn run<R: Read>(r: PcapReader<R>, opts: &SummaryOptions, threads: usize) -> Result<WireSummary> {
    let pool = if threads > 0 {
        Pool::new(threads)
    } else {
        None
    };
    run_with(r, opts, pool).map(|(s, _)| s)
}

fn run_with<R: Read>(
    mut r: PcapReader<R>,
    opts: &SummaryOptions,
    pool: Option<Pool>,
) -> Result<(WireSummary, Vec<Vec<u8>>)> {
    if !packet::linktype_supported(r.linktype) {
        bail!(
            "{}: byte 20: unsupported link type {} (supported: Ethernet 1, raw IP 101, Linux \
             cooked 113/276, BSD loopback 0)",
            r.name(),
            r.linktype
        );
    }
    let mut st = State::new(opts.clone(), r.linktype, pool);
    while let Some(rec) = r.next_record()? {
        st.record(rec.ts_ns, rec.orig_len, rec.data);
    }
    let name = r.name().to_string();
    let (mut s, kept) = st.finish(name, r.truncated.clone());
    s.warnings.extend(r.anomalies());
    Ok((s, kept))
}
