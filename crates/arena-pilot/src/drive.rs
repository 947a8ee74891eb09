//! Driving one run: start the target (the in-process fixture, or an external URL after
//! the arm's setup command), open a fresh page with the recorder, run the setup steps,
//! clear the recorder, click, drain, pair, and write the run folder on every exit path.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{anyhow, Context, Result};
use arena_browser::{Browser, Drain, LaunchOptions, Page, Record, RecorderConfig, SocketChoice};
use arena_report::{Exit, ExitKind};
use arena_run::{
    AnswerInfo, Run, RunStatus, SocketSource, Warning, WireDirection, WireFigures, WIRE_JSON,
    WIRE_PCAP,
};

use super::answer::AnswerRule;
use super::click::Clicker;
use super::pair::{pair, PairConfig};
use super::scenario::{Arm, Pilot, Requested};
use super::write::{build_run, default_run_dir, RunContext};

/// Set by Ctrl-C / SIGTERM; every wait in a run checks it.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn new() -> Self {
        Cancel::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
    /// Sets the flag on SIGINT or SIGTERM (from a task on the current runtime).
    pub fn on_signals(&self) -> Result<()> {
        use tokio::signal::unix::{signal, SignalKind};
        let mut int = signal(SignalKind::interrupt()).context("installing SIGINT handler")?;
        let mut term = signal(SignalKind::terminate()).context("installing SIGTERM handler")?;
        let me = self.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = int.recv() => {},
                _ = term.recv() => {},
            }
            me.cancel();
        });
        Ok(())
    }
    /// Returns once cancelled.
    pub(crate) async fn cancelled(&self) {
        while !self.is_cancelled() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    /// Sleeps `d`, waking early when cancelled.
    pub(crate) async fn sleep(&self, d: Duration) {
        let end = Instant::now() + d;
        while !self.is_cancelled() {
            let now = Instant::now();
            if now >= end {
                break;
            }
            tokio::time::sleep((end - now).min(Duration::from_millis(20))).await;
        }
    }
}

/// Command-line overrides of the pilot file for one run.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub url: Option<String>,
    pub clicks: Option<u64>,
    pub interval_ms: Option<u64>,
    pub timeout_ms: Option<u64>,
    pub settle_ms: Option<u64>,
    pub warmup: Option<u64>,
    pub seed: Option<u64>,
    /// Fixture knobs applied on top of the arm's (`NAME=VALUE`).
    pub knobs: Vec<(String, String)>,
    /// Ring buffer capacity (records), overriding the pilot file's.
    pub capacity: Option<u32>,
    /// Capture the target's loopback port into the run folder's `wire.pcap`.
    pub capture: bool,
}

/// Browser options shared by every run of a command.
#[derive(Debug, Clone, Default)]
pub struct BrowserOptions {
    pub chrome: Option<PathBuf>,
    pub headful: bool,
}

impl BrowserOptions {
    pub async fn launch(&self) -> Result<Browser> {
        let opts = LaunchOptions {
            chrome: self.chrome.clone(),
            headful: self.headful,
            // Room for a large canvas: a click outside the viewport reaches no element.
            window: (1600, 1200),
            ..LaunchOptions::default()
        };
        Browser::launch(opts).await.map_err(|e| {
            // A browser that cannot start is the environment's problem, reported as such.
            anyhow!(Exit::new(ExitKind::TargetFailed, format!("{e:#}")))
        })
    }
}

/// Measurements of the tool itself during a run (for the benchmark).
#[derive(Debug, Clone, Default)]
pub struct ToolCost {
    /// Wall time of each click's CDP dispatch (mousePressed + mouseReleased), ms.
    pub click_ms: Vec<f64>,
    /// Wall time of each drain (Runtime.evaluate + decode), ms.
    pub drain_ms: Vec<f64>,
    /// Waits for a click's answer: in the page (one pending evaluation each) or, where
    /// the page cannot tell, poll intervals.
    pub waits: u64,
    /// Per answered click, the tool's own time on the click's critical path, ms: from the
    /// start of the CDP dispatch to the end of the last drain, less the page's time from
    /// the first input event to the moment it went quiet. That is input delivery plus
    /// collecting the answer; CDP time that overlaps the app's own work is not counted.
    pub critical_ms: Vec<f64>,
    /// Wall time of the whole run, from target start to folder written, ms.
    pub wall_ms: f64,
    /// Wall time of the click loop only, ms.
    pub clicking_ms: f64,
}

/// A finished (possibly partial) run and where it was written.
pub struct Outcome {
    pub run: Run,
    pub dir: PathBuf,
    pub cost: ToolCost,
}

impl Outcome {
    /// The error the command should end with: none for a complete run, exit 130 for an
    /// interrupted one, exit 3 when the target or browser died.
    pub fn exit_error(&self) -> Option<anyhow::Error> {
        let m = &self.run.meta;
        let kind = match m.status {
            RunStatus::Complete => return None,
            RunStatus::Interrupted => ExitKind::Interrupted,
            RunStatus::TargetFailed => ExitKind::TargetFailed,
        };
        Some(anyhow!(Exit::new(
            kind,
            format!(
                "{}; partial run written to {}",
                m.status_message.as_deref().unwrap_or("run ended early"),
                self.dir.display()
            )
        )))
    }
}

/// Where run folders go.
#[derive(Debug, Clone)]
pub enum OutDir {
    /// `<base>/<UTC start>-<arm>`.
    Under(PathBuf),
    /// Exactly this folder.
    Exactly(PathBuf),
}

/// One run of one arm.
pub struct RunRequest<'a> {
    pub pilot: &'a Pilot,
    pub arm_name: String,
    pub arm: Arm,
    pub overrides: &'a Overrides,
    pub out: OutDir,
    pub progress: bool,
    pub cancel: &'a Cancel,
}

/// The target of one run: the in-process fixture (shut down when dropped) or a URL.
enum Target {
    Fixture(Option<arena_fixture::ServerHandle>),
    External,
}

impl Target {
    async fn stop(&mut self) {
        if let Target::Fixture(h) = self {
            if let Some(h) = h.take() {
                h.shutdown().await;
            }
        }
    }
}

fn with_params(url: &str, params: &BTreeMap<String, String>) -> String {
    if params.is_empty() {
        return url.to_string();
    }
    let q: Vec<String> = params
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect();
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{}", q.join("&"))
}

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// host:port of an http(s) URL, for the liveness probe.
fn target_addr(url: &str) -> Option<SocketAddr> {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let hostport = rest.split(['/', '?', '#']).next()?;
    let with_port = if hostport
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        hostport.to_string()
    } else if url.starts_with("https") {
        format!("{hostport}:443")
    } else {
        format!("{hostport}:80")
    };
    with_port.to_socket_addrs().ok()?.next()
}

/// Starts capturing the target's port on `lo` into `<dir>/wire.pcap`. Only loopback
/// targets can be captured there, so any other is refused before the run starts.
fn start_capture(url: &str, dir: &Path) -> Result<(arena_wire::CaptureHandle, u16)> {
    let addr = target_addr(url)
        .ok_or_else(|| anyhow!(Exit::bad_input(format!("--capture: no host:port in {url}"))))?;
    if !addr.ip().is_loopback() {
        return Err(anyhow!(Exit::bad_input(format!(
            "--capture captures on `lo`, but the target {addr} is not a loopback address"
        ))));
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let handle = arena_wire::Capture::start("lo", addr.port(), &dir.join(WIRE_PCAP))
        .context("starting the capture")?;
    Ok((handle, addr.port()))
}

/// Stops the capture and reduces it to the run's wire figures; the full summary lands
/// beside the pcap as `wire.json`.
fn finish_capture(handle: arena_wire::CaptureHandle, port: u16, dir: &Path) -> Result<WireFigures> {
    let stats = handle.stop().context("stopping the capture")?;
    let mut figures = WireFigures {
        kernel_drops: stats.kernel_drops,
        interface_bytes: stats.interface.map(|c| c.rx_bytes),
        ..WireFigures::default()
    };
    match &stats.source {
        arena_wire::CaptureSource::InterfaceCounters { reason } => {
            figures.source = "interface_counters".into();
            figures.reason = Some(reason.clone());
        }
        arena_wire::CaptureSource::Pcap { path } => {
            figures.source = "pcap".into();
            let opts = arena_wire::SummaryOptions {
                port: Some(port),
                window_s: None,
                top: Some(5),
            };
            let s = arena_wire::summarize(Path::new(path), &opts)
                .with_context(|| format!("summarising {path}"))?;
            let file = std::fs::File::create(dir.join(WIRE_JSON))
                .with_context(|| format!("writing {}", dir.join(WIRE_JSON).display()))?;
            serde_json::to_writer_pretty(file, &s).context("writing wire.json")?;
            let direction = |d: &arena_wire::DirSummary| WireDirection {
                packets: d.packets,
                tcp_payload_bytes: d.tcp_payload_bytes,
                frames: d.frames,
                frame_payload_bytes: d.frame_payload_bytes,
                app_bytes: d.app_bytes,
                compression_ratio: d.compression_ratio,
            };
            figures.server_to_client = Some(direction(&s.server_to_client));
            figures.client_to_server = Some(direction(&s.client_to_server));
        }
    }
    Ok(figures)
}

/// True when nothing accepts connections at the target any more.
fn target_gone(addr: Option<SocketAddr>) -> bool {
    match addr {
        Some(a) => TcpStream::connect_timeout(&a, Duration::from_millis(300)).is_err(),
        None => false,
    }
}

/// Runs the arm's setup command (`sh -c`) with its environment, bounded in time.
async fn run_setup_command(
    cmd: &str,
    env: &BTreeMap<String, String>,
    cancel: &Cancel,
) -> Result<()> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .envs(env)
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting setup command `{cmd}`"))?;
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Some(status) = child.try_wait()? {
            if !status.success() {
                return Err(anyhow!(Exit::new(
                    ExitKind::TargetFailed,
                    format!("setup command `{cmd}` failed: {status}")
                )));
            }
            return Ok(());
        }
        if cancel.is_cancelled() || Instant::now() > deadline {
            let _ = child.kill().await;
            return Err(anyhow!(Exit::new(
                if cancel.is_cancelled() {
                    ExitKind::Interrupted
                } else {
                    ExitKind::TargetFailed
                },
                format!("setup command `{cmd}` did not finish")
            )));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Accumulates drains and the accounting that travels with them.
#[derive(Default)]
pub(crate) struct Collected {
    pub records: Vec<Record>,
    dropped: u64,
    cleared_at_seq: Option<u64>,
    pub source: Option<arena_browser::SocketSource>,
}

impl Collected {
    fn take(&mut self, d: Drain) -> usize {
        self.dropped += d.dropped;
        self.cleared_at_seq.get_or_insert(d.cleared_at_seq);
        if self.source.is_none()
            || d.records.iter().any(|r| {
                matches!(
                    r.kind,
                    arena_browser::RecordKind::WsSend | arena_browser::RecordKind::WsRecv
                )
            })
        {
            self.source = Some(d.socket_source);
        }
        let n = d.records.len();
        self.records.extend(d.records);
        n
    }
}

pub(crate) async fn drain_into(
    page: &Page,
    c: &mut Collected,
    cost: &mut ToolCost,
) -> Result<usize> {
    let t = Instant::now();
    let d = page.drain().await?;
    cost.drain_ms.push(t.elapsed().as_secs_f64() * 1e3);
    Ok(c.take(d))
}

/// Drains the page and returns (payload bytes received, whether any message arrived).
async fn received_since_last_drain(page: &Page) -> Result<(u64, bool)> {
    let d = page.drain().await?;
    let recvs = d
        .records
        .iter()
        .filter(|r| r.kind == arena_browser::RecordKind::WsRecv);
    let (mut bytes, mut any) = (0u64, false);
    for r in recvs {
        bytes += u64::from(r.size);
        any = true;
    }
    Ok((bytes, any))
}

/// Setup steps: waits drain the recorder to watch received bytes (those records predate
/// the clear and are discarded with it).
async fn run_setup(page: &Page, pilot: &Pilot, cancel: &Cancel) -> Result<()> {
    let mut received: u64 = 0;
    let mut last_recv = Instant::now();
    for (i, step) in pilot.setup.iter().enumerate() {
        let limit = Duration::from_millis(step.timeout_ms.unwrap_or(15_000));
        let start = Instant::now();
        let what = format!("{}: setup[{i}]", pilot.source);
        let waiting = step.wait_bytes.is_some() || step.quiet_ms.is_some();
        // A wait step loops until its condition holds; other steps act once.
        if waiting {
            loop {
                // Drain before judging, so messages that arrived during an earlier step count.
                let (bytes, any) = received_since_last_drain(page).await?;
                received += bytes;
                if any {
                    last_recv = Instant::now();
                }
                let done = match (step.wait_bytes, step.quiet_ms) {
                    (Some(n), _) => received >= n,
                    (_, Some(q)) => last_recv.elapsed() >= Duration::from_millis(q),
                    _ => true,
                };
                if done {
                    break;
                }
                if cancel.is_cancelled() {
                    return Err(anyhow!(Exit::new(
                        ExitKind::Interrupted,
                        "interrupted during setup"
                    )));
                }
                if start.elapsed() > limit {
                    let msg = match (step.wait_bytes, step.quiet_ms) {
                        (Some(n), _) => format!(
                            "{what}: waited {} ms for {n} bytes, got {received}{}",
                            limit.as_millis(),
                            if received == 0 && pilot.recorder.sockets == SocketChoice::PageHook {
                                " (the recorder watches only the page's own WebSocket, `recorder.sockets = \"page_hook\"`: a socket in a Web Worker is seen with \"auto\" or \"cdp\")"
                            } else {
                                ""
                            }
                        ),
                        (_, q) => format!(
                            "{what}: no {} ms without a WebSocket message within {} ms",
                            q.unwrap_or(0),
                            limit.as_millis()
                        ),
                    };
                    return Err(anyhow!(Exit::new(ExitKind::TargetFailed, msg)));
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            continue;
        }
        if let Some([fx, fy]) = step.click {
            let rect = page.canvas_rect(&pilot.target.canvas).await?;
            let (x, y) = rect.page_fraction(fx, fy);
            page.click(x, y).await.with_context(|| what.clone())?;
        } else if let Some(k) = &step.key {
            page.key(k).await.with_context(|| what.clone())?;
        } else if let Some(js) = &step.eval {
            page.eval_json(js).await.with_context(|| what.clone())?;
        }
    }
    Ok(())
}

/// Waits until the canvas exists (the page script has run).
async fn wait_canvas(
    page: &Page,
    pilot: &Pilot,
    cancel: &Cancel,
) -> Result<arena_browser::CanvasRect> {
    let start = Instant::now();
    loop {
        match page.canvas_rect(&pilot.target.canvas).await {
            Ok(r) if r.width > 0.0 && r.height > 0.0 => return Ok(r),
            Err(e) if e.downcast_ref::<arena_browser::SeveralCanvases>().is_some() => {
                return Err(anyhow!(Exit::bad_input(format!(
                    "{}: `target.canvas`: {e}",
                    pilot.source
                ))))
            }
            Ok(_) | Err(_)
                if start.elapsed() < Duration::from_secs(15) && !cancel.is_cancelled() =>
            {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            Ok(_) => {
                return Err(anyhow!(Exit::new(
                    ExitKind::TargetFailed,
                    format!("canvas `{}` has no size on the page", pilot.target.canvas)
                )))
            }
            Err(e) => {
                return Err(anyhow!(Exit::new(
                    if cancel.is_cancelled() {
                        ExitKind::Interrupted
                    } else {
                        ExitKind::TargetFailed
                    },
                    format!(
                        "canvas `{}` not found on the page: {e:#}",
                        pilot.target.canvas
                    )
                )))
            }
        }
    }
}

/// Every click must land inside the viewport, or it reaches no element and every loop of
/// the run would read as unanswered for a reason that has nothing to do with the target.
async fn check_viewport(
    page: &Page,
    pilot: &Pilot,
    rect: &arena_browser::CanvasRect,
    positions: &[(f64, f64)],
) -> Result<()> {
    if !pilot.clicks.keys.is_empty() {
        return Ok(());
    }
    let v = page.eval_json("[innerWidth, innerHeight]").await?;
    let (w, h) = match (
        v.get(0).and_then(|x| x.as_f64()),
        v.get(1).and_then(|x| x.as_f64()),
    ) {
        (Some(w), Some(h)) => (w, h),
        _ => return Ok(()),
    };
    for &(fx, fy) in positions {
        let (x, y) = rect.page_fraction(fx, fy);
        if x < 0.0 || y < 0.0 || x >= w || y >= h {
            return Err(anyhow!(Exit::bad_input(format!(
                "{}: `clicks.region`: a click at canvas fraction ({fx:.3}, {fy:.3}) lands at page ({x:.0}, {y:.0}), outside the {w:.0}x{h:.0} viewport; shrink the region",
                pilot.source
            ))));
        }
    }
    Ok(())
}

/// Knob name -> value text, in the form `--knob NAME=VALUE` takes.
fn knob_text(knobs: &arena_fixture::Knobs) -> BTreeMap<String, String> {
    let Ok(serde_json::Value::Object(m)) = serde_json::to_value(knobs) else {
        return BTreeMap::new();
    };
    m.into_iter()
        .map(|(k, v)| {
            let text = match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            (k, text)
        })
        .collect()
}

/// The in-page oracle the pilot file asks for (none for `reply`, and none for `auto` on key
/// input without a rect, which has no point to watch).
fn page_oracle(pilot: &Pilot, timeout_ms: u64) -> Option<arena_browser::PageOracle> {
    let a = &pilot.answer;
    if pilot.recorder.app.is_some() {
        return None;
    }
    let kind = match a.oracle {
        Requested::Reply => return None,
        Requested::Auto if !pilot.clicks.keys.is_empty() && a.rect.is_none() => return None,
        Requested::Auto | Requested::Pixels => arena_browser::PageOracleKind::Pixels,
        Requested::Js => arena_browser::PageOracleKind::Js,
    };
    Some(arena_browser::PageOracle {
        kind,
        radius_px: a.radius_px,
        rect: a.rect,
        js: a.js.clone(),
        canvas: Some(pilot.target.canvas.clone()),
        events: pilot.pacing.loop_events.clone(),
        window_ms: timeout_ms as f64,
    })
}

/// Decides, before measuring, what closes this run's loops. An oracle the pilot file named
/// that cannot work on the target is an error here (exit 2); `auto` falls back to the reply
/// oracle and the run says why.
async fn resolve_answer(
    page: &Page,
    pilot: &Pilot,
    rect: &arena_browser::CanvasRect,
    positions: &[(f64, f64)],
) -> Result<(AnswerRule, AnswerInfo)> {
    let a = &pilot.answer;
    let reply = AnswerRule::Reply {
        min_bytes: a.min_bytes,
    };
    let reply_detail = if a.min_bytes > 0 {
        format!("first reply of {} B or more", a.min_bytes)
    } else {
        "first reply after the send".to_string()
    };
    let info = |oracle: &str, detail: String, fallback: Option<String>| AnswerInfo {
        oracle: oracle.into(),
        requested: a.oracle.name().into(),
        detail,
        fallback,
    };
    let keys = !pilot.clicks.keys.is_empty();
    if a.oracle == Requested::Reply {
        return Ok((reply, info("reply", reply_detail, None)));
    }
    let unusable = if pilot.recorder.app.is_some() {
        Some("the app's own recorder is read, and it has no answer oracle")
    } else if keys && a.rect.is_none() {
        Some("key input has no point to watch and `answer.rect` is not set")
    } else {
        None
    };
    match (unusable, a.oracle) {
        (Some(why), Requested::Auto) => {
            return Ok((reply, info("reply", reply_detail, Some(why.into()))));
        }
        (Some(why), _) => {
            return Err(anyhow!(Exit::bad_input(format!(
                "{}: `answer.oracle = \"{}\"` cannot work here: {why}",
                pilot.source,
                a.oracle.name()
            ))))
        }
        (None, _) => {}
    }
    let point = match (keys, positions.first()) {
        (false, Some(&(fx, fy))) => Some(rect.page_fraction(fx, fy)),
        _ => None,
    };
    let detail = match (a.oracle, a.rect) {
        (Requested::Js, _) => format!("js: {}", a.js.as_deref().unwrap_or("")),
        (_, Some(r)) => format!("rect [{}, {}, {}, {}]", r[0], r[1], r[2], r[3]),
        _ => format!("r={}px", a.radius_px),
    };
    let oracle = if a.oracle == Requested::Js {
        "js"
    } else {
        "pixels"
    };
    match page.probe_answer(point).await {
        Ok(_) => Ok((AnswerRule::Frame, info(oracle, detail, None))),
        Err(why) if a.oracle == Requested::Auto => {
            page.answer_off().await?;
            Ok((reply, info("reply", reply_detail, Some(format!("{why:#}")))))
        }
        Err(why) => Err(anyhow!(Exit::bad_input(format!(
            "{}: `answer.oracle = \"{}\"` cannot work on this target (canvas `{}`): {why:#}",
            pilot.source,
            a.oracle.name(),
            pilot.target.canvas
        )))),
    }
}

fn map_source(s: Option<arena_browser::SocketSource>) -> SocketSource {
    match s {
        Some(arena_browser::SocketSource::Cdp) => SocketSource::Cdp,
        Some(arena_browser::SocketSource::AppRecorder) => SocketSource::AppRecorder,
        _ => SocketSource::PageHook,
    }
}

/// Runs one arm in a fresh page of `browser` (and a fresh fixture server when the target
/// is the built-in fixture). The run folder is written whatever happens after the page
/// opened; errors before that (bad knobs, no browser) return `Err`.
pub async fn run_arm(browser: &Browser, req: RunRequest<'_>) -> Result<Outcome> {
    let wall = Instant::now();
    let started = SystemTime::now();
    let pilot = req.pilot;
    let ov = req.overrides;
    let cancel = req.cancel;

    let clicks = pilot.clicks.clone();
    let count = ov.clicks.unwrap_or(clicks.count);
    let warmup = ov.warmup.unwrap_or(clicks.warmup);
    let seed = ov.seed.unwrap_or(clicks.seed);
    let interval = Duration::from_millis(ov.interval_ms.unwrap_or(pilot.pacing.interval_ms));
    let timeout_ms = ov.timeout_ms.unwrap_or(pilot.pacing.timeout_ms);
    let timeout = Duration::from_millis(timeout_ms);
    let settle = Duration::from_millis(ov.settle_ms.unwrap_or(pilot.pacing.settle_ms));
    let positions = super::scenario::Clicks {
        count,
        seed,
        ..clicks
    }
    .positions();

    // The target.
    let url_base = ov.url.clone().or_else(|| pilot.target.url.clone());
    let mut knobs_text: BTreeMap<String, String> = req.arm.knobs.clone();
    let (mut target, url) = match url_base {
        Some(u) => {
            if let Some(cmd) = &req.arm.setup_command {
                run_setup_command(cmd, &req.arm.env, cancel).await?;
            }
            // Fixture knobs cannot reach a server this process did not start.
            knobs_text.clear();
            for (k, v) in &req.arm.url_params {
                knobs_text.insert(format!("url_params.{k}"), v.clone());
            }
            for (k, v) in &req.arm.env {
                knobs_text.insert(format!("env.{k}"), v.clone());
            }
            (Target::External, with_params(&u, &req.arm.url_params))
        }
        None => {
            let mut pairs: Vec<(String, String)> = req.arm.knobs.clone().into_iter().collect();
            pairs.extend(ov.knobs.iter().cloned());
            let knobs = arena_fixture::Knobs::from_pairs(&pairs)
                .map_err(|e| anyhow!(Exit::bad_input(format!("arm `{}`: {e}", req.arm_name))))?;
            // The effective set, defaults included (what `GET /knobs` answers), so the run
            // can be reproduced from its file alone.
            knobs_text = knob_text(&knobs);
            let handle = arena_fixture::Server::start(knobs)
                .await
                .context("starting the fixture")?;
            let url = with_params(&handle.url(), &req.arm.url_params);
            (Target::Fixture(Some(handle)), url)
        }
    };
    let probe = match target {
        Target::External => target_addr(&url),
        Target::Fixture(_) => None,
    };
    let dir = match &req.out {
        OutDir::Under(base) => default_run_dir(base, started, &req.arm_name),
        OutDir::Exactly(d) => d.clone(),
    };
    let capture = if ov.capture {
        match start_capture(&url, &dir) {
            Ok(c) => Some(c),
            Err(e) => {
                target.stop().await;
                return Err(e);
            }
        }
    } else {
        None
    };

    let mut recorder: RecorderConfig = pilot.recorder.clone();
    if let Some(c) = ov.capacity {
        recorder.capacity = c;
    }
    recorder.answer = page_oracle(pilot, timeout_ms);
    let mut judge = PairConfig::new(&req.arm_name);
    judge.loop_events = pilot.pacing.loop_events.clone();
    judge.window_ms = timeout_ms as f64;
    let loops_per_click = ["mousedown", "mouseup", "keydown"]
        .iter()
        .filter(|e| {
            let click_event = **e != "keydown";
            click_event == pilot.clicks.keys.is_empty()
                && pilot.pacing.loop_events.iter().any(|x| x == *e)
        })
        .count() as u64;
    let label = pilot
        .target
        .label
        .clone()
        .or_else(|| req.arm.knobs.get("phase").cloned())
        .unwrap_or_else(|| {
            if matches!(target, Target::Fixture(_)) {
                "firing".into()
            } else {
                "click".into()
            }
        });

    let mut cost = ToolCost::default();
    let mut col = Collected::default();
    let mut status = RunStatus::Complete;
    let mut status_message: Option<String> = None;
    let mut inputs_dispatched: u64 = 0;
    let mut clicks_made: u64 = 0;
    // Records are collected only after the clear on attach: setup is not measured.
    let mut cleared = false;
    let mut draw_target = None;
    let mut answer: Option<AnswerInfo> = None;

    // Everything from here on ends in a written run folder.
    let page = browser.new_page(&url, Some(recorder.clone())).await;
    let body: Result<()> = async {
        let page = page.as_ref().map_err(|e| anyhow!("opening {url}: {e:#}"))?;
        wait_canvas(page, pilot, cancel).await?;
        run_setup(page, pilot, cancel).await?;
        page.clear().await.context("clearing the recorder")?;
        cleared = true;
        let rect = wait_canvas(page, pilot, cancel).await?;
        draw_target = rect.index;
        check_viewport(page, pilot, &rect, &positions).await?;
        let (rule, info) = resolve_answer(page, pilot, &rect, &positions).await?;
        answer = Some(info);
        judge.answer = rule;
        judge.draw_target = draw_target;
        let clicker = Clicker {
            page,
            pilot,
            cancel,
            timeout,
            settle,
            judge: judge.clone(),
        };
        let click_start = Instant::now();
        let tty = req.progress && std::io::stderr().is_terminal();
        for (k, &(fx, fy)) in positions.iter().enumerate() {
            if cancel.is_cancelled() {
                return Err(anyhow!(Exit::new(ExitKind::Interrupted, format!("interrupted after {k} of {count} clicks"))));
            }
            let complete = clicker
                .click(k, rect.page_fraction(fx, fy), &mut col, &mut cost)
                .await?;
            inputs_dispatched += loops_per_click;
            clicks_made += 1;
            if !complete && !cancel.is_cancelled() && target_gone(probe) {
                return Err(anyhow!(Exit::new(
                    ExitKind::TargetFailed,
                    format!("the target at {url} stopped accepting connections (click {} of {count} unanswered)", k + 1)
                )));
            }
            if req.progress {
                let line = format!("arm {}: click {}/{}", req.arm_name, k + 1, count);
                if tty {
                    eprint!("\r{line}   ");
                } else if (k + 1) % 25 == 0 || k + 1 == positions.len() {
                    eprintln!("{line}");
                }
            }
            cancel.sleep(interval).await;
        }
        if tty {
            eprintln!();
        }
        cost.clicking_ms = click_start.elapsed().as_secs_f64() * 1e3;
        Ok(())
    }
    .await;

    if let Err(e) = body {
        let kind = e
            .chain()
            .find_map(|c| c.downcast_ref::<Exit>())
            .map(|x| x.kind)
            .unwrap_or(ExitKind::TargetFailed);
        if kind == ExitKind::BadInput {
            target.stop().await;
            return Err(e);
        }
        status = if kind == ExitKind::Interrupted || cancel.is_cancelled() {
            RunStatus::Interrupted
        } else {
            RunStatus::TargetFailed
        };
        status_message = Some(format!("{e:#}"));
    }
    // Whatever the page still holds belongs to the run; a dead browser gets 2 s.
    let mut last_verdict = None;
    if let (Ok(p), true) = (&page, cleared) {
        let _ =
            tokio::time::timeout(Duration::from_secs(2), drain_into(p, &mut col, &mut cost)).await;
        // The records name what kind of input the oracle could not judge; the page keeps
        // the words of why, for the warning.
        if recorder.answer.is_some() {
            let js = "window.__arenaRecorder.stats().last_verdict";
            if let Ok(Ok(v)) = tokio::time::timeout(Duration::from_secs(2), p.eval_json(js)).await {
                last_verdict = v.as_str().map(str::to_string);
            }
        }
    }
    if let Ok(p) = page {
        let _ = tokio::time::timeout(Duration::from_secs(2), p.close()).await;
    }
    target.stop().await;
    let wire = capture.map(|(handle, port)| finish_capture(handle, port, &dir));

    let mut cfg = judge;
    cfg.cold_loops = (warmup * loops_per_click.max(1)) as usize;
    cfg.default_label = label;
    cfg.cleared_at_seq = col.cleared_at_seq.unwrap_or(0);
    cfg.dropped = col.dropped;
    cfg.draw_target = draw_target;
    cfg.cdp_sockets = col.source == Some(arena_browser::SocketSource::Cdp);
    let mut paired = pair(&col.records, &cfg);
    if let Some(why) = &last_verdict {
        for w in paired
            .warnings
            .iter_mut()
            .filter(|w| w.code == "oracle_unjudged")
        {
            w.message
                .push_str(&format!("; the page's last reason: {why}"));
        }
    }
    let ctx = RunContext {
        arm: req.arm_name.clone(),
        knobs: knobs_text,
        pilot_file: Some(pilot.source.clone()),
        pilot_hash: pilot.hash.clone(),
        url: url.clone(),
        chromium_version: browser.version().to_string(),
        started,
        ended: SystemTime::now(),
        status,
        status_message,
        socket_source: map_source(col.source),
        seed,
        clicks_planned: count,
        clicks_made,
        inputs_dispatched,
        answer,
        idle_reply_bytes: pilot.target.idle_reply_bytes,
    };
    let mut run = build_run(&ctx, paired, &col.records);
    match wire {
        Some(Ok(figures)) => run.meta.wire = Some(figures),
        Some(Err(e)) => run
            .meta
            .warnings
            .push(Warning::new("capture", format!("{e:#}"))),
        None => {}
    }
    run.write(&dir)
        .with_context(|| format!("writing the run folder {}", dir.display()))?;
    cost.wall_ms = wall.elapsed().as_secs_f64() * 1e3;
    Ok(Outcome { run, dir, cost })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_get_params_and_addresses() {
        let mut p = BTreeMap::new();
        assert_eq!(with_params("http://h/x", &p), "http://h/x");
        p.insert("perf".to_string(), "1".to_string());
        p.insert("a b".to_string(), "c&d".to_string());
        assert_eq!(
            with_params("http://h/x", &p),
            "http://h/x?a%20b=c%26d&perf=1"
        );
        assert_eq!(
            with_params("http://h/x?z=1", &p),
            "http://h/x?z=1&a%20b=c%26d&perf=1"
        );
        assert_eq!(
            target_addr("http://127.0.0.1:8080/a?b"),
            Some("127.0.0.1:8080".parse().unwrap())
        );
        assert_eq!(
            target_addr("http://127.0.0.1/"),
            Some("127.0.0.1:80".parse().unwrap())
        );
    }

    #[test]
    fn effective_knob_text_reads_back_as_the_same_knobs() {
        let k = arena_fixture::Knobs::from_pairs(&[("delay_ms".into(), "40".into())]).unwrap();
        let text = knob_text(&k);
        assert_eq!(text.get("delay_ms").map(String::as_str), Some("40"));
        assert_eq!(text.get("phase").map(String::as_str), Some("firing"));
        assert!(text.len() >= 15, "every knob, defaults included: {text:?}");
        let pairs: Vec<(String, String)> = text.into_iter().collect();
        assert_eq!(arena_fixture::Knobs::from_pairs(&pairs).unwrap(), k);
    }

    #[test]
    fn a_closed_port_is_gone() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        assert!(!target_gone(Some(addr)));
        drop(l);
        assert!(target_gone(Some(addr)));
        assert!(!target_gone(None));
    }
}
