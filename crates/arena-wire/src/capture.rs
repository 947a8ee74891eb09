//! Live capture of one TCP port, written as classic pcap, from the backend asked for
//! (`backend`: an AF_PACKET ring, or libpcap with the `pcap` feature). Without root or
//! CAP_NET_RAW the capture falls back to `/proc/net/dev` counters and says why.

#[cfg(target_os = "linux")]
mod af_packet;
mod backend;
#[cfg(feature = "pcap")]
mod libpcap;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use serde::Serialize;

use crate::pcap::PcapWriter;
pub use backend::{Backend, CaptureBackend, CaptureOptions, LIBPCAP_BUILT_IN, NO_LIBPCAP, SNAPLEN};
use backend::{Opened, SourceCounts};

/// Which source the figures of a capture came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CaptureSource {
    /// Packets captured into this pcap by this backend.
    Pcap { path: String, backend: Backend },
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
        let text = arena_sys::procfs::net_dev().context("/proc/net/dev: cannot read")?;
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
    thread: Option<JoinHandle<Result<SourceCounts>>>,
    /// The backend capturing, or why none could (the counters fallback).
    captured_by: std::result::Result<Backend, String>,
    before: Option<DevCounters>,
    started: Instant,
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
            captured_by: Err("raw capture not requested (counters only)".into()),
            before,
            started: Instant::now(),
        };
        let opened = match opts.force_fallback {
            true => Opened::NotPermitted("raw capture not requested (counters only)".into()),
            false => backend::open(&opts).with_context(|| format!("capture on {}", opts.iface))?,
        };
        let (backend, source) = match opened {
            Opened::Source(b, s) => (b, s),
            Opened::NotPermitted(why) => {
                if handle.before.is_none() {
                    bail!("{}: no such interface in /proc/net/dev", opts.iface);
                }
                handle.captured_by = Err(why);
                return Ok(handle);
            }
        };
        let mut w = PcapWriter::create(&opts.path, source.linktype(), SNAPLEN)?;
        let t = std::thread::Builder::new()
            .name("arena-wire-capture".into())
            .spawn(move || {
                let counts = source.run(&mut w, &stop);
                w.flush().context("cannot flush the pcap").and(counts)
            })
            .context("cannot start the capture thread")?;
        handle.thread = Some(t);
        handle.captured_by = Ok(backend);
        handle.started = Instant::now();
        Ok(handle)
    }
}

impl CaptureHandle {
    /// The source figures will come from (known as soon as the capture starts).
    pub fn source(&self) -> CaptureSource {
        match &self.captured_by {
            Err(r) => CaptureSource::InterfaceCounters { reason: r.clone() },
            Ok(backend) => CaptureSource::Pcap {
                path: self.opts.path.display().to_string(),
                backend: *backend,
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
            None => SourceCounts::default(),
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
}
