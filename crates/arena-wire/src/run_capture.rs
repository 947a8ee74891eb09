//! The capture of one pilot run: the target's loopback port into the run folder's
//! `wire.pcap`, reduced at the end to the run's wire figures (`run.json`'s `wire`), with
//! the full summary beside the pcap as `wire.json`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use arena_report::Exit;
use arena_run::{WireDirection, WireFigures, WIRE_JSON, WIRE_PCAP};

use crate::{
    summarize, Capture, CaptureBackend, CaptureHandle, CaptureOptions, CaptureSource, DirSummary,
    SummaryOptions,
};

/// A capture running for one run folder.
pub struct RunCapture {
    handle: CaptureHandle,
    port: u16,
    dir: PathBuf,
}

impl RunCapture {
    /// Starts capturing `addr`'s port on `lo` into `<dir>/wire.pcap` with `backend`. Only
    /// loopback targets can be captured there, so any other is refused before the run
    /// starts.
    pub fn start(addr: SocketAddr, dir: &Path, backend: CaptureBackend) -> Result<RunCapture> {
        if !addr.ip().is_loopback() {
            return Err(anyhow!(Exit::bad_input(format!(
                "--capture captures on `lo`, but the target {addr} is not a loopback address"
            ))));
        }
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut opts = CaptureOptions::new("lo", Some(addr.port()), &dir.join(WIRE_PCAP));
        opts.backend = backend;
        let handle = Capture::start_with(opts).context("starting the capture")?;
        Ok(RunCapture {
            handle,
            port: addr.port(),
            dir: dir.to_path_buf(),
        })
    }

    /// Stops the capture and reduces it to the run's wire figures.
    pub fn finish(self) -> Result<WireFigures> {
        let stats = self.handle.stop().context("stopping the capture")?;
        let mut figures = WireFigures {
            kernel_drops: stats.kernel_drops,
            interface_bytes: stats.interface.map(|c| c.rx_bytes),
            ..WireFigures::default()
        };
        match &stats.source {
            CaptureSource::InterfaceCounters { reason } => {
                figures.source = "interface_counters".into();
                figures.reason = Some(reason.clone());
            }
            CaptureSource::Pcap { path, backend } => {
                figures.source = "pcap".into();
                figures.backend = Some(backend.name().into());
                let opts = SummaryOptions {
                    port: Some(self.port),
                    window_s: None,
                    top: Some(5),
                };
                let s = summarize(Path::new(path), &opts)
                    .with_context(|| format!("summarising {path}"))?;
                let json = self.dir.join(WIRE_JSON);
                let file = std::fs::File::create(&json)
                    .with_context(|| format!("writing {}", json.display()))?;
                serde_json::to_writer_pretty(file, &s).context("writing wire.json")?;
                figures.server_to_client = Some(direction(&s.server_to_client));
                figures.client_to_server = Some(direction(&s.client_to_server));
            }
        }
        Ok(figures)
    }
}

fn direction(d: &DirSummary) -> WireDirection {
    WireDirection {
        packets: d.packets,
        tcp_payload_bytes: d.tcp_payload_bytes,
        frames: d.frames,
        frame_payload_bytes: d.frame_payload_bytes,
        app_bytes: d.app_bytes,
        compression_ratio: d.compression_ratio,
    }
}
