//! Live capture on an AF_PACKET socket with a TPACKET_V3 ring, written as classic pcap.
//!
//! Facts this relies on (Linux): the kernel filter is attached before `bind` and the socket
//! is opened with protocol 0, so nothing unfiltered is queued first; on loopback every packet
//! is seen twice and the `PACKET_OUTGOING` copy is dropped in the filter; segments reach
//! 64 KiB (TSO/GSO), hence a 256 KiB snaplen. Kernel drops come from `PACKET_STATISTICS`.
//! Without root or CAP_NET_RAW the capture falls back to `/proc/net/dev` counters.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use serde::Serialize;

use crate::pcap::{PcapWriter, LINKTYPE_ETHERNET};

pub const SNAPLEN: u32 = 262_144;

const SOL_PACKET: libc::c_int = 263;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_VERSION: libc::c_int = 10;
const TPACKET_V3: libc::c_int = 2;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_KERNEL: u32 = 0;
const ETH_P_ALL: u16 = 0x0003;
const PACKET_OUTGOING: u32 = 4;
/// Block retire timeout: a partly filled block reaches user space after this long.
const RETIRE_MS: u32 = 20;

#[repr(C)]
struct TpacketReq3 {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
    retire_blk_tov: u32,
    sizeof_priv: u32,
    feature_req_word: u32,
}

#[repr(C)]
#[derive(Default)]
struct TpacketStatsV3 {
    packets: u32,
    drops: u32,
    freeze_q_cnt: u32,
}

#[derive(Debug, Clone)]
pub struct CaptureOptions {
    pub iface: String,
    /// Only TCP to or from this port; `None` captures all TCP.
    pub port: Option<u16>,
    pub path: PathBuf,
    /// Skip raw capture and count interface bytes only (what an unprivileged run gets).
    pub force_fallback: bool,
    /// Ring size in MiB (blocks of 4 MiB).
    pub ring_mib: u32,
}

impl CaptureOptions {
    pub fn new(iface: &str, port: Option<u16>, path: &Path) -> Self {
        CaptureOptions {
            iface: iface.to_string(),
            port,
            path: path.to_path_buf(),
            force_fallback: false,
            ring_mib: 64,
        }
    }
}

/// Which source the figures of a capture came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CaptureSource {
    /// Packets captured on an AF_PACKET ring into this pcap.
    Pcap { path: String },
    /// Raw capture was not possible: only the interface's byte and packet counters.
    InterfaceCounters { reason: String },
}

/// `/proc/net/dev` counters of one interface. On `lo` rx and tx are the same traffic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DevCounters {
    pub rx_bytes: u64,
    pub rx_packets: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
}

impl DevCounters {
    /// Reads the interface's line of `/proc/net/dev`.
    pub fn read(iface: &str) -> Result<DevCounters> {
        let text = fs::read_to_string("/proc/net/dev").context("/proc/net/dev: cannot read")?;
        DevCounters::parse(&text, iface)
    }

    pub fn parse(text: &str, iface: &str) -> Result<DevCounters> {
        for (n, line) in text.lines().enumerate() {
            let Some((name, rest)) = line.split_once(':') else {
                continue;
            };
            if name.trim() != iface {
                continue;
            }
            let f: Vec<u64> = rest
                .split_whitespace()
                .map(|x| x.parse::<u64>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| anyhow!("/proc/net/dev: line {}: {e}", n + 1))?;
            if f.len() < 10 {
                bail!(
                    "/proc/net/dev: line {}: {} fields, expected 16",
                    n + 1,
                    f.len()
                );
            }
            return Ok(DevCounters {
                rx_bytes: f[0],
                rx_packets: f[1],
                tx_bytes: f[8],
                tx_packets: f[9],
            });
        }
        bail!("/proc/net/dev: no interface named {iface:?}")
    }

    pub fn delta(&self, before: &DevCounters) -> DevCounters {
        DevCounters {
            rx_bytes: self.rx_bytes.wrapping_sub(before.rx_bytes),
            rx_packets: self.rx_packets.wrapping_sub(before.rx_packets),
            tx_bytes: self.tx_bytes.wrapping_sub(before.tx_bytes),
            tx_packets: self.tx_packets.wrapping_sub(before.tx_packets),
        }
    }
}

/// What a capture saw. Every count says its source.
#[derive(Debug, Clone, Serialize)]
pub struct CaptureStats {
    pub source: CaptureSource,
    pub iface: String,
    pub port: Option<u16>,
    pub duration_s: f64,
    /// Records written to the pcap (0 under the counters fallback).
    pub packets_written: u64,
    pub pcap_bytes: u64,
    /// Packets the kernel passed the filter, and those it dropped for want of ring space.
    pub kernel_packets: u64,
    pub kernel_drops: u64,
    /// Interface counters over the capture (all traffic on the interface, not only the port).
    pub interface: Option<DevCounters>,
}

impl CaptureStats {
    /// `wire capture --format json`: what the capture saw (`docs/schema/wire-capture.json`).
    pub fn to_json(&self) -> serde_json::Value {
        let body = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        arena_report::json::document("wire.capture", body)
    }
}

pub struct Capture;

/// A running capture; [`CaptureHandle::stop`] ends it. Dropping it stops it too.
pub struct CaptureHandle {
    opts: CaptureOptions,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<RingCounts>>>,
    fallback: Option<String>,
    before: Option<DevCounters>,
    started: Instant,
}

#[derive(Debug, Default)]
struct RingCounts {
    written: u64,
    pcap_bytes: u64,
    kernel_packets: u64,
    kernel_drops: u64,
}

impl Capture {
    /// Captures TCP on `port` (both directions) from `iface` into `path`.
    pub fn start(iface: &str, port: u16, path: &Path) -> Result<CaptureHandle> {
        Capture::start_with(CaptureOptions::new(iface, Some(port), path))
    }

    pub fn start_with(opts: CaptureOptions) -> Result<CaptureHandle> {
        let before = DevCounters::read(&opts.iface).ok();
        let stop = Arc::new(AtomicBool::new(false));
        let mut handle = CaptureHandle {
            opts: opts.clone(),
            stop: stop.clone(),
            thread: None,
            fallback: None,
            before,
            started: Instant::now(),
        };
        if opts.force_fallback {
            handle.fallback = Some("raw capture not requested (counters only)".into());
            if handle.before.is_none() {
                bail!("{}: no such interface in /proc/net/dev", opts.iface);
            }
            return Ok(handle);
        }
        match Ring::open(&opts) {
            Ok(ring) => {
                let mut w = PcapWriter::create(&opts.path, LINKTYPE_ETHERNET, SNAPLEN)?;
                let t = std::thread::Builder::new()
                    .name("arena-wire-capture".into())
                    .spawn(move || {
                        let counts = ring.run(&mut w, &stop);
                        w.flush().context("cannot flush the pcap").and(counts)
                    })
                    .context("cannot start the capture thread")?;
                handle.thread = Some(t);
                handle.started = Instant::now();
                Ok(handle)
            }
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                if handle.before.is_none() {
                    bail!("{}: no such interface in /proc/net/dev", opts.iface);
                }
                handle.fallback = Some(format!(
                    "raw capture not permitted ({e}): needs root or CAP_NET_RAW"
                ));
                Ok(handle)
            }
            Err(e) => Err(anyhow!(e)).with_context(|| format!("capture on {}", opts.iface)),
        }
    }
}

impl CaptureHandle {
    /// The source figures will come from (known as soon as the capture starts).
    pub fn source(&self) -> CaptureSource {
        match &self.fallback {
            Some(r) => CaptureSource::InterfaceCounters { reason: r.clone() },
            None => CaptureSource::Pcap {
                path: self.opts.path.display().to_string(),
            },
        }
    }

    /// Stops the capture, flushes the pcap and returns the counts.
    pub fn stop(mut self) -> Result<CaptureStats> {
        self.finish()
    }

    fn finish(&mut self) -> Result<CaptureStats> {
        self.stop.store(true, Ordering::SeqCst);
        let counts = match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| anyhow!("the capture thread panicked"))??,
            None => RingCounts::default(),
        };
        let duration_s = self.started.elapsed().as_secs_f64();
        let interface = match (&self.before, DevCounters::read(&self.opts.iface)) {
            (Some(b), Ok(a)) => Some(a.delta(b)),
            _ => None,
        };
        Ok(CaptureStats {
            source: self.source(),
            iface: self.opts.iface.clone(),
            port: self.opts.port,
            duration_s,
            packets_written: counts.written,
            pcap_bytes: counts.pcap_bytes,
            kernel_packets: counts.kernel_packets,
            kernel_drops: counts.kernel_drops,
            interface,
        })
    }
}

impl Drop for CaptureHandle {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.finish();
        }
    }
}

/// A classic-BPF instruction with symbolic jump targets, resolved by [`assemble`].
enum Ins {
    Stmt(u16, u32),
    Jump(u16, u32, &'static str, &'static str),
    Label(&'static str),
}

fn assemble(prog: &[Ins]) -> Result<Vec<libc::sock_filter>> {
    let mut at = std::collections::HashMap::new();
    let mut pc = 0usize;
    for i in prog {
        match i {
            Ins::Label(l) => {
                at.insert(*l, pc);
            }
            _ => pc += 1,
        }
    }
    let mut out = Vec::new();
    for i in prog {
        let pc = out.len();
        match i {
            Ins::Label(_) => {}
            Ins::Stmt(code, k) => out.push(libc::sock_filter {
                code: *code,
                jt: 0,
                jf: 0,
                k: *k,
            }),
            Ins::Jump(code, k, t, f) => {
                let rel = |l: &str| -> Result<u8> {
                    let target = if l.is_empty() { pc + 1 } else { at[l] };
                    u8::try_from(target - pc - 1).map_err(|_| anyhow!("BPF jump too far"))
                };
                out.push(libc::sock_filter {
                    code: *code,
                    jt: rel(t)?,
                    jf: rel(f)?,
                    k: *k,
                });
            }
        }
    }
    Ok(out)
}

/// The kernel filter: TCP over IPv4/IPv6 on Ethernet framing, optionally one port, and
/// on loopback not the outgoing copy of each packet.
pub fn filter_program(port: Option<u16>, drop_outgoing: bool) -> Result<Vec<libc::sock_filter>> {
    const LD_W_ABS: u16 = 0x20;
    const LD_H_ABS: u16 = 0x28;
    const LD_B_ABS: u16 = 0x30;
    const LD_H_IND: u16 = 0x48;
    const LDX_B_MSH: u16 = 0xb1;
    const JEQ: u16 = 0x15;
    const JSET: u16 = 0x45;
    const RET: u16 = 0x06;
    let pkttype = (libc::SKF_AD_OFF + libc::SKF_AD_PKTTYPE) as u32;
    let mut p = Vec::new();
    if drop_outgoing {
        p.push(Ins::Stmt(LD_W_ABS, pkttype));
        p.push(Ins::Jump(JEQ, PACKET_OUTGOING, "drop", ""));
    }
    p.push(Ins::Stmt(LD_H_ABS, 12));
    p.push(Ins::Jump(JEQ, 0x0800, "", "v6"));
    // IPv4: TCP, first fragment only, ports after the variable-length header.
    p.push(Ins::Stmt(LD_B_ABS, 23));
    p.push(Ins::Jump(JEQ, 6, "", "drop"));
    p.push(Ins::Stmt(LD_H_ABS, 20));
    p.push(Ins::Jump(JSET, 0x1fff, "drop", ""));
    if let Some(port) = port {
        p.push(Ins::Stmt(LDX_B_MSH, 14));
        p.push(Ins::Stmt(LD_H_IND, 14));
        p.push(Ins::Jump(JEQ, port as u32, "accept", ""));
        p.push(Ins::Stmt(LD_H_IND, 16));
        p.push(Ins::Jump(JEQ, port as u32, "accept", "drop"));
    } else {
        p.push(Ins::Stmt(RET, SNAPLEN));
    }
    p.push(Ins::Label("v6"));
    p.push(Ins::Jump(JEQ, 0x86dd, "", "drop"));
    p.push(Ins::Stmt(LD_B_ABS, 20));
    p.push(Ins::Jump(JEQ, 6, "", "drop"));
    if let Some(port) = port {
        p.push(Ins::Stmt(LD_H_ABS, 54));
        p.push(Ins::Jump(JEQ, port as u32, "accept", ""));
        p.push(Ins::Stmt(LD_H_ABS, 56));
        p.push(Ins::Jump(JEQ, port as u32, "accept", "drop"));
    }
    p.push(Ins::Label("accept"));
    p.push(Ins::Stmt(RET, SNAPLEN));
    p.push(Ins::Label("drop"));
    p.push(Ins::Stmt(RET, 0));
    assemble(&p)
}

struct Ring {
    fd: libc::c_int,
    map: *mut u8,
    map_len: usize,
    block_size: usize,
    block_nr: usize,
}

// The ring is owned by one thread at a time; the raw pointer is only used by its owner.
unsafe impl Send for Ring {}

fn last_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

fn iface_type(iface: &str) -> Option<u32> {
    fs::read_to_string(format!("/sys/class/net/{iface}/type"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

impl Ring {
    fn open(opts: &CaptureOptions) -> io::Result<Ring> {
        let ifname = std::ffi::CString::new(opts.iface.clone())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "bad interface name"))?;
        let ifindex = unsafe { libc::if_nametoindex(ifname.as_ptr()) };
        if ifindex == 0 {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no interface named {:?}", opts.iface),
            ));
        }
        // ARPHRD_ETHER (1) and ARPHRD_LOOPBACK (772) both carry a 14-byte Ethernet header.
        let ty = iface_type(&opts.iface).unwrap_or(1);
        if ty != 1 && ty != 772 {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("{}: link type {ty} is not Ethernet or loopback", opts.iface),
            ));
        }
        let prog =
            filter_program(opts.port, ty == 772).map_err(|e| io::Error::other(e.to_string()))?;
        let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(last_err("socket(AF_PACKET)"));
        }
        let mut ring = Ring {
            fd,
            map: std::ptr::null_mut(),
            map_len: 0,
            block_size: 4 << 20,
            block_nr: (opts.ring_mib.max(8) / 4) as usize,
        };
        let setopt = |level, name, val: *const libc::c_void, len: usize, what: &str| {
            let r = unsafe { libc::setsockopt(fd, level, name, val, len as libc::socklen_t) };
            if r < 0 {
                Err(last_err(what))
            } else {
                Ok(())
            }
        };
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_ptr() as *mut libc::sock_filter,
        };
        setopt(
            libc::SOL_SOCKET,
            libc::SO_ATTACH_FILTER,
            &fprog as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::sock_fprog>(),
            "SO_ATTACH_FILTER",
        )?;
        let ver: libc::c_int = TPACKET_V3;
        setopt(
            SOL_PACKET,
            PACKET_VERSION,
            &ver as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>(),
            "PACKET_VERSION",
        )?;
        let frame_size = 2048u32;
        let req = TpacketReq3 {
            block_size: ring.block_size as u32,
            block_nr: ring.block_nr as u32,
            frame_size,
            frame_nr: (ring.block_size as u32 / frame_size) * ring.block_nr as u32,
            retire_blk_tov: RETIRE_MS,
            sizeof_priv: 0,
            feature_req_word: 0,
        };
        setopt(
            SOL_PACKET,
            PACKET_RX_RING,
            &req as *const _ as *const libc::c_void,
            std::mem::size_of::<TpacketReq3>(),
            "PACKET_RX_RING",
        )?;
        ring.map_len = ring.block_size * ring.block_nr;
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                ring.map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_LOCKED,
                fd,
                0,
            )
        };
        let map = if map == libc::MAP_FAILED {
            // MAP_LOCKED needs RLIMIT_MEMLOCK headroom; the ring works unlocked too.
            let m = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    ring.map_len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    fd,
                    0,
                )
            };
            if m == libc::MAP_FAILED {
                return Err(last_err("mmap(PACKET_RX_RING)"));
            }
            m
        } else {
            map
        };
        ring.map = map as *mut u8;
        let sll = libc::sockaddr_ll {
            sll_family: libc::AF_PACKET as u16,
            sll_protocol: ETH_P_ALL.to_be(),
            sll_ifindex: ifindex as i32,
            sll_hatype: 0,
            sll_pkttype: 0,
            sll_halen: 0,
            sll_addr: [0; 8],
        };
        let r = unsafe {
            libc::bind(
                fd,
                &sll as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(last_err("bind(AF_PACKET)"));
        }
        Ok(ring)
    }

    fn stats(&self, c: &mut RingCounts) {
        let mut s = TpacketStatsV3::default();
        let mut len = std::mem::size_of::<TpacketStatsV3>() as libc::socklen_t;
        let r = unsafe {
            libc::getsockopt(
                self.fd,
                SOL_PACKET,
                PACKET_STATISTICS,
                &mut s as *mut _ as *mut libc::c_void,
                &mut len,
            )
        };
        // The kernel resets these on every read: accumulate.
        if r == 0 {
            c.kernel_packets += s.packets as u64;
            c.kernel_drops += s.drops as u64;
        }
    }

    fn u32_at(&self, off: usize) -> u32 {
        unsafe { std::ptr::read_volatile(self.map.add(off) as *const u32) }
    }

    fn u16_at(&self, off: usize) -> u16 {
        unsafe { std::ptr::read_volatile(self.map.add(off) as *const u16) }
    }

    /// Writes every packet of one user-owned block, then hands the block back.
    fn drain_block<W: io::Write>(
        &self,
        b: usize,
        w: &mut PcapWriter<W>,
        c: &mut RingCounts,
    ) -> io::Result<bool> {
        let base = b * self.block_size;
        // tpacket_block_desc: version, offset_to_priv, then tpacket_hdr_v1 at 8.
        let status = self.u32_at(base + 8);
        if status & TP_STATUS_USER == 0 {
            return Ok(false);
        }
        std::sync::atomic::fence(Ordering::Acquire);
        let num = self.u32_at(base + 12) as usize;
        let mut off = self.u32_at(base + 16) as usize;
        for _ in 0..num {
            if off + 32 > self.block_size {
                break;
            }
            let p = base + off;
            let next = self.u32_at(p) as usize;
            let sec = self.u32_at(p + 4) as u64;
            let nsec = self.u32_at(p + 8) as u64;
            let snap = self.u32_at(p + 12) as usize;
            let len = self.u32_at(p + 16);
            let mac = self.u16_at(p + 24) as usize;
            if off + mac + snap <= self.block_size {
                let data = unsafe { std::slice::from_raw_parts(self.map.add(p + mac), snap) };
                w.write(sec * 1_000_000_000 + nsec, len, data)?;
                c.written += 1;
            }
            if next == 0 {
                break;
            }
            off += next;
        }
        std::sync::atomic::fence(Ordering::Release);
        unsafe { std::ptr::write_volatile(self.map.add(base + 8) as *mut u32, TP_STATUS_KERNEL) };
        Ok(true)
    }

    fn run<W: io::Write>(self, w: &mut PcapWriter<W>, stop: &AtomicBool) -> Result<RingCounts> {
        let mut c = RingCounts::default();
        let mut cur = 0usize;
        let mut deadline: Option<Instant> = None;
        loop {
            if self
                .drain_block(cur, w, &mut c)
                .context("cannot write the pcap")?
            {
                cur = (cur + 1) % self.block_nr;
                continue;
            }
            if let Some(d) = deadline {
                if Instant::now() >= d {
                    break;
                }
            } else if stop.load(Ordering::SeqCst) {
                // Packets already in a partly filled block reach us when it retires.
                deadline = Some(Instant::now() + Duration::from_millis(3 * RETIRE_MS as u64 + 20));
            }
            let mut pfd = libc::pollfd {
                fd: self.fd,
                events: libc::POLLIN | libc::POLLERR,
                revents: 0,
            };
            unsafe { libc::poll(&mut pfd, 1, RETIRE_MS as i32) };
        }
        self.stats(&mut c);
        c.pcap_bytes = w.bytes;
        Ok(c)
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        unsafe {
            if !self.map.is_null() {
                libc::munmap(self.map as *mut libc::c_void, self.map_len);
            }
            libc::close(self.fd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_net_dev() {
        let text = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n    lo: 1234 10 0 0 0 0 0 0 1234 10 0 0 0 0 0 0\n  eth0: 99 1 0 0 0 0 0 0 77 2 0 0 0 0 0 0\n";
        let c = DevCounters::parse(text, "eth0").unwrap();
        assert_eq!(
            (c.rx_bytes, c.rx_packets, c.tx_bytes, c.tx_packets),
            (99, 1, 77, 2)
        );
        assert!(DevCounters::parse(text, "wlan0").is_err());
        assert!(DevCounters::parse("    lo: 1 x\n", "lo")
            .unwrap_err()
            .to_string()
            .contains("line 1"));
    }

    #[test]
    fn filter_jumps_resolve() {
        let p = filter_program(Some(8080), true).unwrap();
        assert_eq!(p.last().unwrap().k, 0);
        assert_eq!(p[p.len() - 2].k, SNAPLEN);
        assert_eq!(p[1].k, PACKET_OUTGOING);
        assert!(filter_program(None, false).unwrap().len() < p.len());
    }
}
