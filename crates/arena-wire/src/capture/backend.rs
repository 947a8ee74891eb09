//! Which way packets come off the interface: the AF_PACKET ring (Linux, always built) or
//! libpcap (the `pcap` cargo feature). Both are a [`PacketSource`] that one capture thread
//! drains into the same classic-pcap writer, so the choice changes nothing downstream.

use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::AtomicBool;

use anyhow::{anyhow, Result};
use arena_report::Exit;
use serde::Serialize;

use crate::pcap::PcapWriter;

/// Segments reach 64 KiB on loopback (TSO/GSO): room for them whole.
pub const SNAPLEN: u32 = 262_144;

#[derive(Debug, Clone)]
pub struct CaptureOptions {
    pub iface: String,
    /// Only TCP to or from this port; `None` captures all TCP.
    pub port: Option<u16>,
    pub path: PathBuf,
    /// Skip raw capture and count interface bytes only (what an unprivileged run gets).
    pub force_fallback: bool,
    /// Ring (or libpcap buffer) size in MiB (the ring in blocks of 4 MiB).
    pub ring_mib: u32,
    pub backend: CaptureBackend,
}

impl CaptureOptions {
    pub fn new(iface: &str, port: Option<u16>, path: &Path) -> Self {
        CaptureOptions {
            iface: iface.to_string(),
            port,
            path: path.to_path_buf(),
            force_fallback: false,
            ring_mib: 64,
            backend: CaptureBackend::Auto,
        }
    }
}

/// How long a source waits for packets before it looks at the stop flag again, ms (also
/// the ring's block retire timeout: a partly filled block reaches user space after this).
pub(crate) const RETIRE_MS: u32 = 20;

/// The pcap every source writes into.
pub(crate) type PcapOut = PcapWriter<BufWriter<File>>;

/// What a source counted while it ran.
#[derive(Debug, Default)]
pub(crate) struct SourceCounts {
    pub written: u64,
    pub pcap_bytes: u64,
    pub kernel_packets: u64,
    pub kernel_drops: u64,
}

/// An opened capture, ready to run on the capture thread until the stop flag is set and
/// what was queued before it has been written.
pub(crate) trait PacketSource: Send {
    /// The pcap link type of the packets it yields.
    fn linktype(&self) -> u32;
    fn run(self: Box<Self>, w: &mut PcapOut, stop: &AtomicBool) -> Result<SourceCounts>;
}

/// The backend asked for (`--capture-backend`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CaptureBackend {
    /// AF_PACKET when it can open (Linux, permitted), else libpcap when built in.
    #[default]
    Auto,
    AfPacket,
    Pcap,
}

/// The backend that captured, as the run and `wire capture --format json` record it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    AfPacket,
    Libpcap,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::AfPacket => "af_packet",
            Backend::Libpcap => "libpcap",
        }
    }
}

/// Whether this build has the libpcap backend (the `pcap` cargo feature).
pub const LIBPCAP_BUILT_IN: bool = cfg!(feature = "pcap");

/// What a build without the `pcap` feature says when libpcap is asked for.
pub const NO_LIBPCAP: &str = "this build has no libpcap backend: rebuild with the `pcap` \
    cargo feature (`cargo build --release --features pcap`, needs libpcap-dev), or use \
    `--capture-backend af-packet`";

impl FromStr for CaptureBackend {
    type Err = String;

    /// `auto`, `af-packet` or `pcap`; `pcap` is refused by a build without libpcap.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        parse_backend(s, LIBPCAP_BUILT_IN)
    }
}

/// The parse for a build with or without libpcap: the suite runs with the feature on, and
/// the refusal a default build gives is still checked (below).
fn parse_backend(s: &str, libpcap: bool) -> std::result::Result<CaptureBackend, String> {
    match s {
        "auto" => Ok(CaptureBackend::Auto),
        "af-packet" => Ok(CaptureBackend::AfPacket),
        "pcap" if libpcap => Ok(CaptureBackend::Pcap),
        "pcap" => Err(NO_LIBPCAP.into()),
        _ => Err(format!("`{s}`: expected auto, af-packet or pcap")),
    }
}

impl fmt::Display for CaptureBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CaptureBackend::Auto => "auto",
            CaptureBackend::AfPacket => "af-packet",
            CaptureBackend::Pcap => "pcap",
        })
    }
}

/// What opening the asked-for backend came to.
pub(crate) enum Opened {
    Source(Backend, Box<dyn PacketSource>),
    /// No backend was permitted to capture: why, for the counters fallback.
    NotPermitted(String),
}

/// Opens the backend `opts` asks for; `auto` tries AF_PACKET, then libpcap when built in.
pub(crate) fn open(opts: &CaptureOptions) -> Result<Opened> {
    if opts.backend == CaptureBackend::Pcap && !LIBPCAP_BUILT_IN {
        return Err(anyhow!(Exit::bad_input(NO_LIBPCAP)));
    }
    let mut refused = None;
    if opts.backend != CaptureBackend::Pcap {
        match open_af_packet(opts) {
            Ok(ring) => return Ok(Opened::Source(Backend::AfPacket, ring)),
            Err(e)
                if opts.backend == CaptureBackend::Auto
                    && LIBPCAP_BUILT_IN
                    && may_try_libpcap(&e) =>
            {
                refused = Some(refusal(&e, Backend::AfPacket));
            }
            Err(e) => return not_opened(e, Backend::AfPacket, None),
        }
    }
    match open_libpcap(opts) {
        Ok(src) => Ok(Opened::Source(Backend::Libpcap, src)),
        Err(e) => not_opened(e, Backend::Libpcap, refused),
    }
}

fn refusal(e: &io::Error, backend: Backend) -> String {
    format!("{}: {e}", backend.name())
}

/// A refusal to capture is the counters fallback; any other failure is an error. `first`
/// is what AF_PACKET said before libpcap was tried.
fn not_opened(e: io::Error, backend: Backend, first: Option<String>) -> Result<Opened> {
    let this = refusal(&e, backend);
    let what = match first {
        Some(f) => format!("{f}; {this}"),
        None => this,
    };
    if e.kind() == io::ErrorKind::PermissionDenied {
        Ok(Opened::NotPermitted(format!(
            "raw capture not permitted ({what}): needs root or CAP_NET_RAW"
        )))
    } else {
        Err(anyhow!(what))
    }
}

/// Under `auto`, an AF_PACKET refusal libpcap may not share: no permission (libpcap may
/// be set up to capture, e.g. through a capture group's helper) or no AF_PACKET at all.
fn may_try_libpcap(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::PermissionDenied | io::ErrorKind::Unsupported
    )
}

#[cfg(target_os = "linux")]
fn open_af_packet(opts: &CaptureOptions) -> io::Result<Box<dyn PacketSource>> {
    Ok(Box::new(super::af_packet::Ring::open(opts)?))
}

#[cfg(not(target_os = "linux"))]
fn open_af_packet(_: &CaptureOptions) -> io::Result<Box<dyn PacketSource>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "AF_PACKET exists only on Linux",
    ))
}

#[cfg(feature = "pcap")]
fn open_libpcap(opts: &CaptureOptions) -> io::Result<Box<dyn PacketSource>> {
    Ok(Box::new(super::libpcap::Libpcap::open(opts)?))
}

#[cfg(not(feature = "pcap"))]
fn open_libpcap(_: &CaptureOptions) -> io::Result<Box<dyn PacketSource>> {
    Err(io::Error::new(io::ErrorKind::Unsupported, NO_LIBPCAP))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_names_and_refuses_others() {
        assert_eq!("auto".parse(), Ok(CaptureBackend::Auto));
        assert_eq!("af-packet".parse(), Ok(CaptureBackend::AfPacket));
        assert_eq!(
            "pcap".parse::<CaptureBackend>().is_ok(),
            LIBPCAP_BUILT_IN,
            "this build's own parse follows its feature"
        );
        assert_eq!(parse_backend("pcap", true), Ok(CaptureBackend::Pcap));
        let e = parse_backend("pcap", false).unwrap_err();
        assert!(
            e.contains("`pcap` cargo feature") && e.contains("--features pcap"),
            "{e}"
        );
        let e = "bpf".parse::<CaptureBackend>().unwrap_err();
        assert!(e.contains("auto, af-packet or pcap"), "{e}");
        for b in [CaptureBackend::Auto, CaptureBackend::AfPacket] {
            assert_eq!(b.to_string().parse(), Ok(b));
        }
    }
}
