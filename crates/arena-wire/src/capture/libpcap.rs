//! The libpcap backend (cargo feature `pcap`): for systems without AF_PACKET, or by
//! choice. libpcap compiles the same filter as the ring's (TCP on the port, either
//! direction, IPv4 and IPv6, first fragments), and on Linux loopback it skips the outgoing
//! copy of each packet itself, as the ring's filter does, so both see each packet once.

use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use pcap::{Active, Capture, Error as PcapError};

use super::backend::{CaptureOptions, PacketSource, PcapOut, SourceCounts, RETIRE_MS, SNAPLEN};

pub(crate) struct Libpcap {
    cap: Capture<Active>,
}

/// libpcap says "permission" in words only (`pcap_activate` returns PCAP_ERROR_PERM, and
/// the crate passes on the text).
fn io_error(e: PcapError) -> io::Error {
    let text = e.to_string();
    let lower = text.to_ascii_lowercase();
    let kind = if lower.contains("permission") || lower.contains("not permitted") {
        io::ErrorKind::PermissionDenied
    } else if lower.contains("no such device") {
        io::ErrorKind::NotFound
    } else {
        io::ErrorKind::Other
    };
    io::Error::new(kind, text)
}

impl Libpcap {
    pub(super) fn open(opts: &CaptureOptions) -> io::Result<Libpcap> {
        let cap = Capture::from_device(opts.iface.as_str())
            .map_err(io_error)?
            .snaplen(SNAPLEN as i32)
            .promisc(false)
            // Delivered as they arrive, not held for a buffer to fill.
            .immediate_mode(true)
            .buffer_size((opts.ring_mib.max(8) << 20) as i32);
        let mut cap = cap
            .open()
            .map_err(io_error)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", opts.iface)))?;
        let filter = match opts.port {
            Some(p) => format!("tcp port {p}"),
            None => "tcp".to_string(),
        };
        cap.filter(&filter, true).map_err(io_error)?;
        // libpcap's own read timeout does not bound a read in immediate mode on Linux
        // (a blocking read waited past the stop forever): poll the descriptor here, with
        // the ring's timeout, and read without blocking.
        let cap = cap.setnonblock().map_err(io_error)?;
        Ok(Libpcap { cap })
    }
}

impl Libpcap {
    /// Writes every packet ready now; returns how many.
    fn drain(&mut self, w: &mut PcapOut, c: &mut SourceCounts) -> Result<u64> {
        let mut n = 0;
        loop {
            match self.cap.next_packet() {
                Ok(p) => {
                    let ts = p.header.ts;
                    let ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_usec as u64 * 1000;
                    w.write(ns, p.header.len, p.data)
                        .context("cannot write the pcap")?;
                    n += 1;
                }
                // Non-blocking: nothing more is queued.
                Err(PcapError::TimeoutExpired) => break,
                Err(e) => return Err(e).context("libpcap: reading packets"),
            }
        }
        c.written += n;
        Ok(n)
    }
}

impl PacketSource for Libpcap {
    fn linktype(&self) -> u32 {
        self.cap.get_datalink().0 as u32
    }

    fn run(mut self: Box<Self>, w: &mut PcapOut, stop: &AtomicBool) -> Result<SourceCounts> {
        let mut c = SourceCounts::default();
        let mut deadline: Option<Instant> = None;
        loop {
            let got = self.drain(w, &mut c)?;
            // After the stop, what is already queued is written: until a pass finds
            // nothing, or on a port that never goes quiet, for the ring's grace.
            if let Some(d) = deadline {
                if got == 0 || Instant::now() >= d {
                    break;
                }
                continue;
            }
            if stop.load(Ordering::SeqCst) {
                deadline = Some(Instant::now() + Duration::from_millis(3 * RETIRE_MS as u64 + 20));
                continue;
            }
            let mut pfd = libc::pollfd {
                fd: self.cap.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            unsafe { libc::poll(&mut pfd, 1, RETIRE_MS as i32) };
        }
        let s = self.cap.stats().context("libpcap: statistics")?;
        c.kernel_packets = s.received as u64;
        c.kernel_drops = s.dropped as u64 + s.if_dropped as u64;
        c.pcap_bytes = w.bytes;
        Ok(c)
    }
}
