//! The AF_PACKET backend: a TPACKET_V3 ring on a raw socket (Linux, pure Rust).
//!
//! Facts this relies on: the kernel filter is attached before `bind` and the socket is
//! opened with protocol 0, so nothing unfiltered is queued first; on loopback every packet
//! is seen twice and the `PACKET_OUTGOING` copy is dropped in the filter; segments reach
//! 64 KiB (TSO/GSO), hence a 256 KiB snaplen. Kernel drops come from `PACKET_STATISTICS`.

use std::fs;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};

use super::backend::{CaptureOptions, PacketSource, PcapOut, SourceCounts, RETIRE_MS, SNAPLEN};
use crate::pcap::LINKTYPE_ETHERNET;

const SOL_PACKET: libc::c_int = 263;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_VERSION: libc::c_int = 10;
const TPACKET_V3: libc::c_int = 2;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_KERNEL: u32 = 0;
const ETH_P_ALL: u16 = 0x0003;
const PACKET_OUTGOING: u32 = 4;

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

pub(super) struct Ring {
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
    pub(super) fn open(opts: &CaptureOptions) -> io::Result<Ring> {
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

    fn stats(&self, c: &mut SourceCounts) {
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
    fn drain_block(&self, b: usize, w: &mut PcapOut, c: &mut SourceCounts) -> io::Result<bool> {
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

    fn drain(&self, w: &mut PcapOut, stop: &AtomicBool) -> Result<SourceCounts> {
        let mut c = SourceCounts::default();
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

impl PacketSource for Ring {
    fn linktype(&self) -> u32 {
        LINKTYPE_ETHERNET
    }

    fn run(self: Box<Self>, w: &mut PcapOut, stop: &AtomicBool) -> Result<SourceCounts> {
        self.drain(w, stop)
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
    fn filter_jumps_resolve() {
        let p = filter_program(Some(8080), true).unwrap();
        assert_eq!(p.last().unwrap().k, 0);
        assert_eq!(p[p.len() - 2].k, SNAPLEN);
        assert_eq!(p[1].k, PACKET_OUTGOING);
        assert!(filter_program(None, false).unwrap().len() < p.len());
    }
}
