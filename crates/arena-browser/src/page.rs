//! A tab: evaluation, trusted input, and the recorder's drains.

use crate::cdp_call::cdp;
use crate::net::{CdpFrame, NetTap};
use crate::record::SendClass;
use crate::record::{Drain, Record, RecordKind, SocketSource};
use crate::recorder::{app_drain, AppState, RawDrain, RecorderConfig, SocketChoice};
use anyhow::{anyhow, bail, Context, Result};
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType,
    MouseButton,
};
use chromiumoxide::cdp::browser_protocol::page::AddScriptToEvaluateOnNewDocumentParams;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Mutex;
use std::time::Duration;

/// Where a canvas sits on the page.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CanvasRect {
    /// CSS pixels from the viewport's left/top edge.
    pub x: f64,
    pub y: f64,
    /// CSS size on the page.
    pub width: f64,
    pub height: f64,
    /// The canvas's own pixel size (`canvas.width`, `canvas.height`).
    pub canvas_width: f64,
    pub canvas_height: f64,
    /// The recorder's index for this canvas (the `target` of its draws), if injected.
    pub index: Option<u16>,
}

impl CanvasRect {
    /// Page coordinates of a point given in canvas pixels: the backing store's, which a
    /// client that sizes it by `devicePixelRatio` makes k times its CSS size.
    pub fn page_point(&self, cx: f64, cy: f64) -> (f64, f64) {
        let sx = if self.canvas_width > 0.0 {
            self.width / self.canvas_width
        } else {
            1.0
        };
        let sy = if self.canvas_height > 0.0 {
            self.height / self.canvas_height
        } else {
            1.0
        };
        (self.x + cx * sx, self.y + cy * sy)
    }

    /// Page coordinates of a point given as fractions (0..1) of the canvas.
    pub fn page_fraction(&self, fx: f64, fy: f64) -> (f64, f64) {
        (self.x + fx * self.width, self.y + fy * self.height)
    }
}

/// Page clock = CLOCK_MONOTONIC ms - `offset_ms`, to within `error_ms`; and Unix ms (the
/// host's wall clock, which server logs are stamped with) = page clock + `unix_offset_ms`,
/// from the same bracket.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClockMap {
    pub offset_ms: f64,
    pub unix_offset_ms: f64,
    /// The page's own `performance.timeOrigin`, Unix ms: its browser's idea of the same
    /// origin, which `unix_offset_ms` checks.
    pub time_origin_ms: f64,
    /// Half the narrowest bracket: the mapping's worst-case error.
    pub error_ms: f64,
    /// Brackets measured.
    pub n: usize,
}

pub use arena_sys::clock::monotonic_ms;

/// The host's wall clock, ms since the Unix epoch (0 before it).
fn unix_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// A canvas selector matched several visible elements (the message lists them): a
/// mistake in the pilot file, not a page still loading.
#[derive(Debug)]
pub struct SeveralCanvases(pub String);

impl std::fmt::Display for SeveralCanvases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SeveralCanvases {}

/// How a [`Page::wait_quiet`] ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quiet {
    /// The page went quiet at this page time (ms).
    At(f64),
    /// Something happened since the last wait, and the socket had not gone quiet for the
    /// settle by the timeout (or two settles, the longer): traffic was still in flight.
    TimedOut,
    /// Nothing happened since the last wait (or the clear) up to the timeout: silent
    /// throughout, so nothing was in flight either.
    Silent,
    /// The page cannot tell (an app's own recorder, or sockets seen only through CDP):
    /// poll with [`Page::drain`] instead.
    Unsupported,
}

/// A tab of a [`crate::Browser`].
pub struct Page {
    inner: chromiumoxide::Page,
    cdp_timeout: Duration,
    config: Option<RecorderConfig>,
    tap: Mutex<Option<NetTap>>,
    clock: Mutex<Option<ClockMap>>,
    app: Mutex<AppState>,
    /// The browser context of its own the page was opened in, if any (disposed on close).
    context: Option<chromiumoxide::cdp::browser_protocol::browser::BrowserContextId>,
}

impl Page {
    pub(crate) async fn attach(
        inner: chromiumoxide::Page,
        browser_ws: &str,
        url: &str,
        config: Option<RecorderConfig>,
        cdp_timeout: Duration,
    ) -> Result<Page> {
        if let Some(c) = &config {
            c.validate()
                .map_err(|e| anyhow!("recorder configuration: {e}"))?;
        }
        let page = Page {
            inner,
            cdp_timeout,
            config,
            tap: Mutex::new(None),
            clock: Mutex::new(None),
            app: Mutex::new(AppState::default()),
            context: None,
        };
        if let Some(e) = page.config.as_ref().and_then(|c| c.emulation) {
            e.apply(&page.inner, page.cdp_timeout).await?;
        }
        if let Some(c) = page.config.clone() {
            if c.app.is_none() {
                cdp(
                    page.cdp_timeout,
                    "Page.addScriptToEvaluateOnNewDocument",
                    page.inner
                        .execute(AddScriptToEvaluateOnNewDocumentParams::new(c.script())),
                )
                .await?;
                if c.sockets != SocketChoice::PageHook {
                    let tap = NetTap::start(
                        browser_ws,
                        page.inner.target_id().inner(),
                        c.classifier.clone(),
                        cdp_timeout,
                    )
                    .await?;
                    if let Ok(mut t) = page.tap.lock() {
                        *t = Some(tap);
                    }
                }
            }
        }
        cdp(
            page.cdp_timeout,
            &format!("navigate to {url}"),
            page.inner.goto(url),
        )
        .await?;
        page.quiet_network_events().await?;
        Ok(page)
    }

    /// chromiumoxide enables the Network domain on every tab it opens, and nothing here
    /// reads that session's network events (the CDP socket source taps sessions of its
    /// own). Left on, the renderer encodes every WebSocket message into an event on the
    /// page's main thread, and the events share the CDP pipe with the answer the pilot is
    /// waiting for: the tool's own cost, on the path it measures.
    async fn quiet_network_events(&self) -> Result<()> {
        use chromiumoxide::cdp::browser_protocol::network::DisableParams;
        cdp(
            self.cdp_timeout,
            "Network.disable",
            self.inner.execute(DisableParams::default()),
        )
        .await?;
        Ok(())
    }

    pub(crate) fn in_context(
        mut self,
        c: chromiumoxide::cdp::browser_protocol::browser::BrowserContextId,
    ) -> Page {
        self.context = Some(c);
        self
    }

    pub(crate) fn context(
        &self,
    ) -> Option<chromiumoxide::cdp::browser_protocol::browser::BrowserContextId> {
        self.context.clone()
    }

    /// The chromiumoxide tab, for this crate's other CDP domains.
    pub(crate) fn cdp_page(&self) -> &chromiumoxide::Page {
        &self.inner
    }

    /// The bound on each CDP call.
    pub(crate) fn cdp_timeout(&self) -> Duration {
        self.cdp_timeout
    }

    /// Stops CDP network events (closing the tap's connection detaches its sessions).
    fn stop_network(&self) {
        if let Ok(mut t) = self.tap.lock() {
            t.take();
        }
    }

    /// Whether CDP network events are being collected.
    pub fn network_events_on(&self) -> bool {
        self.tap.lock().map(|t| t.is_some()).unwrap_or(false)
    }

    fn take_cdp_frames(&self) -> Vec<CdpFrame> {
        self.take_from_tap(|l| std::mem::take(&mut l.frames))
    }

    /// WebSocket handshakes the network layer completed since the last call.
    fn take_cdp_opens(&self) -> Vec<(f64, u16)> {
        self.take_from_tap(|l| std::mem::take(&mut l.opens))
    }

    /// What `take` moves out of the network tap's log; nothing while no tap runs.
    fn take_from_tap<T: Default>(&self, take: impl FnOnce(&mut crate::net::CdpLog) -> T) -> T {
        self.tap
            .lock()
            .ok()
            .and_then(|t| {
                t.as_ref()
                    .and_then(|tap| tap.log.lock().ok().map(|mut l| take(&mut l)))
            })
            .unwrap_or_default()
    }

    fn cdp_sockets(&self) -> usize {
        self.tap
            .lock()
            .ok()
            .and_then(|t| {
                t.as_ref()
                    .and_then(|tap| tap.log.lock().ok().map(|l| l.socket_count()))
            })
            .unwrap_or(0)
    }

    /// Evaluates `js` in the page (promises awaited) and returns its value as JSON
    /// (`null` for `undefined`). A thrown exception is an error carrying its message.
    pub async fn eval_json(&self, js: &str) -> Result<Value> {
        self.eval_within(js, self.cdp_timeout).await
    }

    /// [`Page::eval_json`] with its own limit on the answer.
    async fn eval_within(&self, js: &str, limit: Duration) -> Result<Value> {
        let params = EvaluateParams::builder()
            .expression(js)
            .return_by_value(true)
            .await_promise(true)
            .build()
            .map_err(|e| anyhow!("Runtime.evaluate parameters: {e}"))?;
        let resp = cdp(limit, "Runtime.evaluate", self.inner.execute(params)).await?;
        if let Some(ex) = &resp.result.exception_details {
            let msg = ex
                .exception
                .as_ref()
                .and_then(|e| e.description.clone())
                .unwrap_or_else(|| ex.text.clone());
            bail!("page threw evaluating {}: {msg}", short(js));
        }
        Ok(resp.result.result.value.clone().unwrap_or(Value::Null))
    }

    /// Evaluates the JS condition `cond` (promises awaited) every 10 ms until it is `true`;
    /// after `within`, an error naming it.
    pub async fn wait_until(&self, cond: &str, within: Duration) -> Result<()> {
        let end = std::time::Instant::now() + within;
        loop {
            if self.eval_json(cond).await?.as_bool() == Some(true) {
                return Ok(());
            }
            if std::time::Instant::now() >= end {
                bail!(
                    "timed out after {} ms waiting for {}",
                    within.as_millis(),
                    short(cond)
                );
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// A trusted left click (CDP `mousePressed` + `mouseReleased`) at page coordinates.
    ///
    /// Both events are sent before either answer is awaited: Chromium answers each only
    /// after the renderer has handled it, and CDP keeps a session's commands in order, so
    /// waiting in between would only add a round trip.
    pub async fn click(&self, x: f64, y: f64) -> Result<()> {
        futures::try_join!(
            self.mouse(DispatchMouseEventType::MousePressed, x, y, 1),
            self.mouse(DispatchMouseEventType::MouseReleased, x, y, 0),
        )?;
        Ok(())
    }

    /// A trusted `mousePressed` (left button) at page coordinates.
    pub async fn press(&self, x: f64, y: f64) -> Result<()> {
        self.mouse(DispatchMouseEventType::MousePressed, x, y, 1)
            .await
    }

    /// A trusted `mouseReleased` (left button) at page coordinates.
    pub async fn release(&self, x: f64, y: f64) -> Result<()> {
        self.mouse(DispatchMouseEventType::MouseReleased, x, y, 0)
            .await
    }

    /// A trusted `mouseMoved` to page coordinates, no button held. Chromium delivers it
    /// with the next animation frame, so it answers up to a frame later.
    pub async fn move_to(&self, x: f64, y: f64) -> Result<()> {
        self.mouse(DispatchMouseEventType::MouseMoved, x, y, 0)
            .await
    }

    /// Whether the page's answer oracle can judge an input at page point (x, y) (`None`:
    /// a key, which has no point). `Err` carries the reason it cannot, before anything is
    /// measured.
    pub async fn probe_answer(&self, point: Option<(f64, f64)>) -> Result<Value> {
        let (x, y) = match point {
            Some((x, y)) => (x.to_string(), y.to_string()),
            None => ("null".into(), "null".into()),
        };
        self.probe(&format!("window.__arenaRecorder.probeAnswer({x}, {y})"))
            .await
    }

    /// A recorder probe: its answer when `ok`, else `Err` with the reason it gave.
    async fn probe(&self, js: &str) -> Result<Value> {
        let v = self.eval_json(js).await?;
        if v.get("ok").and_then(Value::as_bool) == Some(true) {
            return Ok(v);
        }
        let why = v
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("the recorder gave no reason");
        bail!("{why}")
    }

    /// Waits in the page until the most recent input the oracle watches has its verdict,
    /// without draining: `Some((t_input, t_answer))` on the page clock (`t_answer` `None`
    /// when it could not be judged), `None` at `timeout`. Only pages with an in-page
    /// oracle can answer; the caller must know it has one.
    pub async fn wait_answer(&self, timeout: Duration) -> Result<Option<(f64, Option<f64>)>> {
        let js = format!(
            "window.__arenaRecorder.waitAnswer({})",
            timeout.as_secs_f64() * 1e3
        );
        let v = self.eval_within(&js, timeout + self.cdp_timeout).await?;
        if v.is_null() {
            return Ok(None);
        }
        let t_input = v
            .get("t_input")
            .and_then(Value::as_f64)
            .ok_or_else(|| anyhow!("the recorder's waitAnswer answered {v}"))?;
        Ok(Some((t_input, v.get("t_answer").and_then(Value::as_f64))))
    }

    /// The page's animation-frame interval, ms: the median gap between `frames + 1`
    /// consecutive `requestAnimationFrame` callbacks (`None` where the page has none, or
    /// it did not tick within the CDP limit, as in a hidden tab).
    pub async fn frame_interval_ms(&self, frames: u32) -> Result<Option<f64>> {
        let js = format!(
            "new Promise((resolve) => {{ const raf = window.requestAnimationFrame; \
             if (typeof raf !== 'function') return resolve(null); const t = []; \
             const tick = (ts) => {{ t.push(ts); if (t.length <= {frames}) return raf(tick); \
             const d = t.slice(1).map((x, i) => x - t[i]).sort((a, b) => a - b); \
             resolve(d[d.length >> 1]); }}; raf(tick); \
             setTimeout(() => resolve(null), 3000); }})"
        );
        Ok(self.eval_json(&js).await?.as_f64().filter(|v| *v > 0.0))
    }

    /// A sham watch: the pixels around page point (x, y) watched for `window` with no
    /// input, judged as an input's are. `Some(true)` when they changed, `Some(false)` when
    /// they did not, `None` where the page's oracle cannot watch that point.
    pub async fn sham(&self, (x, y): (f64, f64), window: Duration) -> Result<Option<bool>> {
        let js = format!(
            "window.__arenaRecorder.sham({x}, {y}, {})",
            window.as_secs_f64() * 1e3
        );
        Ok(self
            .eval_within(&js, window + self.cdp_timeout)
            .await?
            .as_bool())
    }

    /// Typing: the glyph region (`[x0, y0, x1, y1]` fractions of the oracle's canvas) each
    /// coming trusted keydown watches, in order.
    pub async fn type_regions(&self, regions: &[[f64; 4]]) -> Result<()> {
        let list = serde_json::to_string(regions)?;
        self.eval_json(&format!("window.__arenaRecorder.typeRegions({list})"))
            .await?;
        Ok(())
    }

    /// Whether the pixels oracle can watch region `rect` of its canvas; `Err` says why not.
    pub async fn probe_region(&self, rect: [f64; 4]) -> Result<Value> {
        let r = serde_json::to_string(&rect)?;
        self.probe(&format!("window.__arenaRecorder.probeRegion({r})"))
            .await
    }

    /// A sham watch of region `rect` of the oracle's canvas (as [`Page::sham`]).
    pub async fn sham_rect(&self, rect: [f64; 4], window: Duration) -> Result<Option<bool>> {
        let r = serde_json::to_string(&rect)?;
        let js = format!(
            "window.__arenaRecorder.sham(null, null, {}, {r})",
            window.as_secs_f64() * 1e3
        );
        Ok(self
            .eval_within(&js, window + self.cdp_timeout)
            .await?
            .as_bool())
    }

    /// The watched moves' delivery times since the last call, `(seq, page ms)`: when the
    /// page had each (a `mousemove`'s `timeStamp` is the OS's, up to a frame earlier).
    pub async fn take_delivered(&self) -> Result<Vec<(u64, f64)>> {
        let v = self
            .eval_json("window.__arenaRecorder.takeDelivered()")
            .await?;
        let flat: Vec<f64> = serde_json::from_value(v)?;
        Ok(flat.chunks_exact(2).map(|p| (p[0] as u64, p[1])).collect())
    }

    /// Stops the page's answer oracle (the run falls back to judging replies).
    pub async fn answer_off(&self) -> Result<()> {
        self.eval_json("window.__arenaRecorder.answerOff()").await?;
        Ok(())
    }

    /// One trusted mouse event (no `mouseMoved`: Chromium holds it for the next animation
    /// frame).
    pub async fn mouse(
        &self,
        kind: DispatchMouseEventType,
        x: f64,
        y: f64,
        buttons: i64,
    ) -> Result<()> {
        let p = DispatchMouseEventParams::builder()
            .r#type(kind)
            .x(x)
            .y(y)
            .button(MouseButton::Left)
            .buttons(buttons)
            .click_count(1)
            .build()
            .map_err(|e| anyhow!("Input.dispatchMouseEvent parameters: {e}"))?;
        cdp(
            self.cdp_timeout,
            "Input.dispatchMouseEvent",
            self.inner.execute(p),
        )
        .await?;
        Ok(())
    }

    /// A trusted key press and release. `key` is a DOM key value: a single character, or a
    /// name such as `Enter`, `Escape`, `Tab`, `Backspace`, `ArrowUp`.
    pub async fn key(&self, key: &str) -> Result<()> {
        let (code, vk, text) = key_facts(key)?;
        let down = DispatchKeyEventParams::builder()
            .r#type(if text.is_some() {
                DispatchKeyEventType::KeyDown
            } else {
                DispatchKeyEventType::RawKeyDown
            })
            .key(key)
            .code(code.clone())
            .windows_virtual_key_code(vk)
            .native_virtual_key_code(vk);
        let down = match &text {
            Some(t) => down.text(t.clone()).unmodified_text(t.clone()),
            None => down,
        }
        .build()
        .map_err(|e| anyhow!("Input.dispatchKeyEvent parameters: {e}"))?;
        cdp(
            self.cdp_timeout,
            "Input.dispatchKeyEvent",
            self.inner.execute(down),
        )
        .await?;
        let up = DispatchKeyEventParams::builder()
            .r#type(DispatchKeyEventType::KeyUp)
            .key(key)
            .code(code)
            .windows_virtual_key_code(vk)
            .native_virtual_key_code(vk)
            .build()
            .map_err(|e| anyhow!("Input.dispatchKeyEvent parameters: {e}"))?;
        cdp(
            self.cdp_timeout,
            "Input.dispatchKeyEvent",
            self.inner.execute(up),
        )
        .await?;
        Ok(())
    }

    /// Where the one element matching `selector` sits, and its pixel size. A selector that
    /// matches several visible elements is an error listing each with its size and place,
    /// so a pilot never aims at whichever canvas happens to come first.
    pub async fn canvas_rect(&self, selector: &str) -> Result<CanvasRect> {
        let sel = serde_json::to_string(selector)?;
        let js = format!(
            "(() => {{ const rec = window.__arenaRecorder; \
             const all = Array.from(document.querySelectorAll({sel})).map((c) => {{ \
             const r = c.getBoundingClientRect(); \
             return {{x: r.left, y: r.top, width: r.width, height: r.height, \
             canvas_width: c.width || 0, canvas_height: c.height || 0, \
             index: rec ? rec.canvasIndex(c) : null, tag: c.tagName.toLowerCase(), \
             id: c.id || null}}; }}); \
             return all; }})()"
        );
        let v = self.eval_json(&js).await?;
        let all = v.as_array().cloned().unwrap_or_default();
        let visible: Vec<&Value> = all
            .iter()
            .filter(|c| {
                c.get("width").and_then(Value::as_f64).unwrap_or(0.0) > 0.0
                    && c.get("height").and_then(Value::as_f64).unwrap_or(0.0) > 0.0
            })
            .collect();
        let pick = match (visible.len(), all.first()) {
            (_, None) => bail!("no element matches selector {selector:?}"),
            (0, Some(first)) => first,
            (1, _) => visible[0],
            (n, _) => {
                let list: Vec<String> = visible
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let f = |k: &str| c.get(k).and_then(Value::as_f64).unwrap_or(0.0);
                        format!(
                            "#{i}: <{}{}> {}x{} px at ({:.0}, {:.0}), {}x{} on the page",
                            c.get("tag").and_then(Value::as_str).unwrap_or("?"),
                            c.get("id")
                                .and_then(Value::as_str)
                                .map(|id| format!(" id={id}"))
                                .unwrap_or_default(),
                            f("canvas_width"),
                            f("canvas_height"),
                            f("x"),
                            f("y"),
                            f("width"),
                            f("height")
                        )
                    })
                    .collect();
                return Err(anyhow!(SeveralCanvases(format!(
                    "selector {selector:?} matches {n} visible elements; name one (e.g. with :nth-of-type or an id): {}",
                    list.join("; ")
                ))));
            }
        };
        serde_json::from_value(pick.clone())
            .with_context(|| format!("reading the rect of {selector:?}"))
    }

    /// Forgets everything recorded so far (the seq keeps counting).
    pub async fn clear(&self) -> Result<()> {
        let Some(c) = &self.config else {
            bail!("no recorder on this page");
        };
        if let Some(app) = &c.app {
            self.eval_json(&app.clear).await?;
            let mut st = self.app.lock().map_err(|_| anyhow!("poisoned"))?;
            st.cleared_at = st.next_seq;
            return Ok(());
        }
        let v = self
            .eval_json("window.__arenaRecorder.clear(), window.__arenaRecorder.stats()")
            .await?;
        let sockets = v.get("sockets").and_then(Value::as_u64).unwrap_or(0);
        if c.sockets == SocketChoice::Auto && sockets > 0 {
            self.stop_network();
        }
        self.take_cdp_frames();
        if let Ok(mut k) = self.clock.lock() {
            *k = None;
        }
        Ok(())
    }

    /// Waits in the page, without polling over CDP, until the socket has answered and gone
    /// quiet: there was a receipt, draw or paint since the previous wait (or the clear), no
    /// drawn frame is waiting for paint, and no message arrived for `settle`. Silent at
    /// `timeout`, it ends then; with traffic it runs on to two settles at least.
    pub async fn wait_quiet(&self, settle: Duration, timeout: Duration) -> Result<Quiet> {
        let Some(c) = &self.config else {
            bail!("no recorder on this page");
        };
        if c.app.is_some() || c.sockets == SocketChoice::Cdp || self.network_events_on() {
            return Ok(Quiet::Unsupported);
        }
        let js = format!(
            "window.__arenaRecorder.wait({}, {})",
            settle.as_secs_f64() * 1e3,
            timeout.as_secs_f64() * 1e3
        );
        // The page answers by `timeout`; the CDP limit covers only the round trip beyond it.
        match self.eval_within(&js, timeout + self.cdp_timeout).await? {
            Value::Null => Ok(Quiet::TimedOut),
            Value::Bool(false) => Ok(Quiet::Silent),
            v => v
                .as_f64()
                .map(Quiet::At)
                .ok_or_else(|| anyhow!("the recorder's wait answered {v}, not a time or null")),
        }
    }

    /// Everything recorded since the previous drain or clear.
    pub async fn drain(&self) -> Result<Drain> {
        let Some(c) = &self.config else {
            bail!("no recorder on this page");
        };
        if let Some(app) = &c.app {
            let raw = self.eval_json(&app.drain).await?;
            let mut st = self.app.lock().map_err(|_| anyhow!("poisoned"))?;
            return app_drain(app, &raw, &mut st);
        }
        let v = self.eval_json("window.__arenaRecorder.drain()").await?;
        if v.is_null() {
            bail!("the recorder is not in the page (was the page loaded through new_page?)");
        }
        let raw: RawDrain = serde_json::from_value(v).context("reading the recorder's drain")?;
        let (dropped, written, cleared, sockets) =
            (raw.dropped, raw.written, raw.cleared_at, raw.sockets);
        let mut records = raw.into_records()?;
        let have_cdp = self.cdp_sockets() > 0;
        let source = match c.sockets {
            SocketChoice::PageHook => SocketSource::PageHook,
            SocketChoice::Cdp => SocketSource::Cdp,
            SocketChoice::Auto if sockets == 0 && have_cdp => SocketSource::Cdp,
            SocketChoice::Auto => SocketSource::PageHook,
        };
        let mut clock_error_ms = None;
        if source == SocketSource::Cdp {
            records.retain(|r| !matches!(r.kind, RecordKind::WsSend | RecordKind::WsRecv));
            let frames = self.take_cdp_frames();
            if !frames.is_empty() {
                let map = self.clock_map().await?;
                clock_error_ms = Some(map.error_ms);
                records.extend(frames.into_iter().map(|f| Record {
                    seq: f.seq,
                    kind: if f.sent {
                        RecordKind::WsSend
                    } else {
                        RecordKind::WsRecv
                    },
                    t_ms: f.mono_s * 1e3 - map.offset_ms,
                    size: f.size,
                    class: f.class,
                    event: if f.text { "text" } else { "binary" }.into(),
                    trusted: true,
                    target: f.socket,
                    answers: None,
                }));
                records.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms));
            }
        } else if c.startup.is_some() {
            // A cold start keeps the tap until the handshake (below); the page hook has
            // the frames.
            self.take_cdp_frames();
        } else if c.sockets == SocketChoice::Auto && sockets > 0 {
            self.stop_network();
        }
        if c.startup.is_some() {
            let opens = self.take_cdp_opens();
            if !opens.is_empty() {
                // The handshake is all a cold start needs of CDP: a large message's payload,
                // shipped to the tap as base64, would slow the very paint being timed.
                if source == SocketSource::PageHook {
                    self.stop_network();
                }
                let map = self.clock_map().await?;
                records.extend(opens.into_iter().map(|(mono_s, socket)| Record {
                    seq: u64::MAX,
                    kind: RecordKind::WsOpen,
                    t_ms: mono_s * 1e3 - map.offset_ms,
                    size: 0,
                    class: SendClass::Other,
                    event: "handshake".into(),
                    trusted: true,
                    target: socket,
                    answers: None,
                }));
            }
        }
        Ok(Drain {
            records,
            dropped,
            written_total: written,
            cleared_at_seq: cleared,
            socket_source: source,
            unmapped: 0,
            clock_error_ms,
        })
    }

    /// Maps CLOCK_MONOTONIC and the wall clock onto the page clock with the narrowest of 20
    /// bracketed `[performance.now(), performance.timeOrigin]` evaluations. Cached until
    /// `clear()`.
    pub async fn clock_map(&self) -> Result<ClockMap> {
        if let Some(m) = self.clock.lock().ok().and_then(|k| *k) {
            return Ok(m);
        }
        let mut best: Option<(f64, f64, f64)> = None; // (width, offset, unix offset)
        let mut time_origin_ms = f64::NAN;
        let n = 20;
        for _ in 0..n {
            let (t0, u0) = (monotonic_ms(), unix_ms());
            let v = self
                .eval_json("[performance.now(), performance.timeOrigin]")
                .await?;
            let (t1, u1) = (monotonic_ms(), unix_ms());
            let (Some(pn), Some(origin)) = (v[0].as_f64(), v[1].as_f64()) else {
                bail!("[performance.now(), performance.timeOrigin] gave {v}");
            };
            time_origin_ms = origin;
            let width = t1 - t0;
            let offset = (t0 + t1) / 2.0 - pn;
            let unix_offset = (u0 + u1) / 2.0 - pn;
            if best.is_none_or(|(w, _, _)| width < w) {
                best = Some((width, offset, unix_offset));
            }
        }
        let (width, offset_ms, unix_offset_ms) = best.ok_or_else(|| anyhow!("no clock sample"))?;
        let m = ClockMap {
            offset_ms,
            unix_offset_ms,
            time_origin_ms,
            error_ms: width / 2.0,
            n,
        };
        if let Ok(mut k) = self.clock.lock() {
            *k = Some(m);
        }
        Ok(m)
    }

    /// A PNG of the page (CDP `Page.captureScreenshot`): the viewport, or the whole
    /// document with `full_page`.
    pub async fn screenshot_png(&self, full_page: bool) -> Result<Vec<u8>> {
        let params = chromiumoxide::page::ScreenshotParams::builder()
            .format(chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat::Png)
            .full_page(full_page)
            .build();
        cdp(
            self.cdp_timeout,
            "Page.captureScreenshot",
            self.inner.screenshot(params),
        )
        .await
    }

    /// Closes the tab.
    pub async fn close(self) -> Result<()> {
        let inner = self.inner.clone();
        cdp(self.cdp_timeout, "Page.close", inner.close()).await
    }
}

/// DOM `code`, Windows virtual key code and typed text for a key value.
fn key_facts(key: &str) -> Result<(String, i64, Option<String>)> {
    let mut chars = key.chars();
    if let (Some(c), None) = (chars.next(), chars.clone().next()) {
        let up = c.to_ascii_uppercase();
        let (code, vk) = if up.is_ascii_alphabetic() {
            (format!("Key{up}"), up as i64)
        } else if c.is_ascii_digit() {
            (format!("Digit{c}"), c as i64)
        } else if c == ' ' {
            ("Space".to_string(), 32)
        } else {
            (String::new(), 0)
        };
        return Ok((code, vk, Some(c.to_string())));
    }
    let (vk, text) = match key {
        "Enter" => (13, Some("\r")),
        "Tab" => (9, None),
        "Escape" => (27, None),
        "Backspace" => (8, None),
        "Delete" => (46, None),
        "ArrowLeft" => (37, None),
        "ArrowUp" => (38, None),
        "ArrowRight" => (39, None),
        "ArrowDown" => (40, None),
        "Home" => (36, None),
        "End" => (35, None),
        "PageUp" => (33, None),
        "PageDown" => (34, None),
        "Shift" => (16, None),
        "Control" => (17, None),
        "Alt" => (18, None),
        _ => bail!("unknown key {key:?} (a single character, or Enter, Tab, Escape, Backspace, Delete, Arrow*, Home, End, PageUp, PageDown, Shift, Control, Alt)"),
    };
    let code = match key {
        "Shift" => "ShiftLeft",
        "Control" => "ControlLeft",
        "Alt" => "AltLeft",
        k => k,
    };
    Ok((code.to_string(), vk, text.map(str::to_string)))
}

fn short(js: &str) -> String {
    let one_line: String = js.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 80 {
        format!("{}...", one_line.chars().take(80).collect::<String>())
    } else {
        one_line
    }
}
