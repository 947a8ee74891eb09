//! A launched Chromium driven over CDP, killed on every exit path.

use crate::cdp_call::cdp;
use crate::launch::{self, base_flags, browser_pids, kill_tree};
use crate::page::Page;
use crate::recorder::RecorderConfig;
use anyhow::{anyhow, bail, Context, Result};
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::target::{
    CreateBrowserContextParams, CreateTargetParams,
};
use futures::StreamExt;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How to launch Chromium.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// Explicit binary (`--chrome`); otherwise [`crate::find_chromium`] decides.
    pub chrome: Option<PathBuf>,
    /// Show a window instead of running headless.
    pub headful: bool,
    /// Extra flags, passed verbatim (with their leading dashes).
    pub extra_args: Vec<String>,
    /// Window size in CSS pixels.
    pub window: (u32, u32),
    /// How long Chromium may take to print its DevTools URL.
    pub launch_timeout: Duration,
    /// Bound on every CDP call (chromiumoxide's own is a fixed 30 s).
    pub cdp_timeout: Duration,
    /// The cores Chromium and everything it starts may run on; empty: wherever this
    /// process may.
    pub cores: Vec<usize>,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        Self {
            chrome: None,
            headful: false,
            extra_args: Vec::new(),
            window: (1280, 800),
            launch_timeout: Duration::from_secs(20),
            cdp_timeout: Duration::from_secs(10),
            cores: Vec::new(),
        }
    }
}

/// A running Chromium. `close()` ends it politely; dropping it kills it.
pub struct Browser {
    cdp: chromiumoxide::Browser,
    handler: tokio::task::JoinHandle<()>,
    child: Child,
    pid: i32,
    slot: Option<usize>,
    profile: PathBuf,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    cdp_timeout: Duration,
    ws_url: String,
    version: String,
    headful: bool,
    killed: bool,
}

impl Browser {
    /// Launches Chromium (headless unless `headful`) with a fresh profile, in its own process
    /// group with a parent-death signal, and connects to it.
    pub async fn launch(opts: LaunchOptions) -> Result<Browser> {
        for a in &opts.extra_args {
            if !a.starts_with("--") || a.starts_with("---") {
                bail!("Chromium flag {a:?} must start with exactly two dashes");
            }
        }
        let chrome = launch::find_chromium(opts.chrome.as_deref())?;
        launch::sweep_stale_profiles();
        let profile = launch::fresh_profile()?;
        let mut flags = base_flags(&profile, opts.headful, opts.window);
        flags.extend(opts.extra_args.iter().cloned());
        let mut child = match launch::spawn_chromium(&chrome, &flags, &opts.cores) {
            Ok(c) => c,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&profile);
                return Err(e);
            }
        };
        let pid = child.id() as i32;
        let slot = launch::register(pid);
        let (url_tx, url_rx) = tokio::sync::oneshot::channel();
        let stderr_tail = launch::watch_stderr(&mut child, url_tx);

        // From here on a failure must not leave the process running.
        let mut guard = KillGuard {
            pid,
            child: Some(child),
            slot,
            profile: profile.clone(),
        };
        let tail_text = |t: &Arc<Mutex<VecDeque<String>>>| {
            t.lock()
                .map(|t| t.iter().cloned().collect::<Vec<_>>().join("\n"))
                .unwrap_or_default()
        };
        let ws_url = match tokio::time::timeout(opts.launch_timeout, url_rx).await {
            Ok(Ok(u)) => u,
            Ok(Err(_)) => bail!(
                "{} exited before printing its DevTools URL; its stderr ends:\n{}",
                chrome.display(),
                tail_text(&stderr_tail)
            ),
            Err(_) => bail!(
                "{} printed no DevTools URL within {} ms; its stderr ends:\n{}",
                chrome.display(),
                opts.launch_timeout.as_millis(),
                tail_text(&stderr_tail)
            ),
        };
        let (cdp_browser, mut handler) = cdp(
            opts.cdp_timeout,
            "connect",
            chromiumoxide::Browser::connect(ws_url.clone()),
        )
        .await
        .with_context(|| format!("connecting to {ws_url}"))?;
        // The handler drives every CDP exchange: it must be polled for the whole session.
        let handler = tokio::spawn(async move { while handler.next().await.is_some() {} });
        let version = match cdp(
            opts.cdp_timeout,
            "Browser.getVersion",
            cdp_browser.version(),
        )
        .await
        {
            Ok(v) => v.product,
            Err(e) => {
                handler.abort();
                return Err(e);
            }
        };
        let child = guard.child.take().context("launch guard lost the child")?;
        guard.slot = None;
        Ok(Browser {
            cdp: cdp_browser,
            handler,
            child,
            pid,
            slot,
            profile,
            stderr_tail,
            cdp_timeout: opts.cdp_timeout,
            ws_url,
            version,
            headful: opts.headful,
            killed: false,
        })
    }

    /// Chromium's product string, e.g. `Chrome/156.0.7710.0` (the new headless mode says
    /// `Chrome` too, so it does not tell a headless browser: [`Browser::headful`] does).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Whether it was launched with a window (`LaunchOptions::headful`).
    pub fn headful(&self) -> bool {
        self.headful
    }

    /// The main process id (also the process group id).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Whether the main Chromium process still runs (false once it crashed or was killed:
    /// callers check this to tell a dead target from a slow one).
    pub fn is_running(&mut self) -> bool {
        !self.killed && matches!(self.child.try_wait(), Ok(None))
    }

    /// Every live process of this browser, from /proc.
    pub fn pids(&self) -> Vec<i32> {
        browser_pids(self.pid)
    }

    /// The last lines Chromium wrote to stderr (for error messages).
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr_tail
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Opens a tab, injects the recorder (when `inject` is given) before any page script,
    /// and navigates to `url`.
    pub async fn new_page(&self, url: &str, inject: Option<RecorderConfig>) -> Result<Page> {
        let page = cdp(
            self.cdp_timeout,
            "Target.createTarget",
            self.cdp.new_page("about:blank"),
        )
        .await?;
        Page::attach(page, &self.ws_url, url, inject, self.cdp_timeout).await
    }

    /// As [`Browser::new_page`], in a browser context of its own whose every connection,
    /// loopback included, goes through `proxy` (`socks5://127.0.0.1:PORT`): whatever
    /// host:port the page or its scripts pick. The browser is not relaunched, so other
    /// pages keep their direct connections. Close it with [`Browser::close_page`].
    pub async fn new_page_via(
        &self,
        url: &str,
        inject: Option<RecorderConfig>,
        proxy: &str,
    ) -> Result<Page> {
        // Chromium bypasses the proxy for loopback by default; `<-loopback>` removes that
        // implicit rule, and loopback is all this tool ever talks to.
        let params = CreateBrowserContextParams::builder()
            .proxy_server(proxy)
            .proxy_bypass_list("<-loopback>")
            .build();
        let context = cdp(
            self.cdp_timeout,
            "Target.createBrowserContext",
            self.cdp.create_browser_context(params),
        )
        .await?;
        let target = CreateTargetParams::builder()
            .url("about:blank")
            .browser_context_id(context.clone())
            .build()
            .map_err(|e| anyhow!("Target.createTarget: {e}"));
        let page = match target {
            Ok(t) => {
                cdp(
                    self.cdp_timeout,
                    "Target.createTarget",
                    self.cdp.new_page(t),
                )
                .await
            }
            Err(e) => Err(e),
        };
        let page = match page {
            Ok(p) => Page::attach(p, &self.ws_url, url, inject, self.cdp_timeout).await,
            Err(e) => Err(e),
        };
        match page {
            Ok(p) => Ok(p.in_context(context)),
            Err(e) => {
                self.dispose_context(context).await;
                Err(e)
            }
        }
    }

    /// Closes `page`, and the browser context it was opened in by [`Browser::new_page_via`].
    pub async fn close_page(&self, page: Page) -> Result<()> {
        let context = page.context();
        let closed = page.close().await;
        if let Some(c) = context {
            self.dispose_context(c).await;
        }
        closed
    }

    async fn dispose_context(&self, context: BrowserContextId) {
        let _ = cdp(
            self.cdp_timeout,
            "Target.disposeBrowserContext",
            self.cdp.dispose_browser_context(context),
        )
        .await;
    }

    /// Asks Chromium to quit, then kills whatever remains of its process group.
    pub async fn close(mut self) -> Result<()> {
        let polite = tokio::time::timeout(Duration::from_secs(3), self.cdp.close()).await;
        // Give the processes a moment to exit on their own before the group kill.
        for _ in 0..50 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.kill_now();
        match polite {
            Ok(Ok(_)) | Err(_) => Ok(()),
            // Chromium may drop the connection before answering Browser.close.
            Ok(Err(_)) => Ok(()),
        }
    }

    fn kill_now(&mut self) {
        if self.killed {
            return;
        }
        self.killed = true;
        self.handler.abort();
        kill_tree(self.pid, &mut self.child);
        launch::unregister(self.slot.take());
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// Kills a half-launched browser if launch fails part way.
struct KillGuard {
    pid: i32,
    child: Option<Child>,
    slot: Option<usize>,
    profile: PathBuf,
}

impl Drop for KillGuard {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            kill_tree(self.pid, &mut c);
            launch::unregister(self.slot.take());
            let _ = std::fs::remove_dir_all(&self.profile);
        }
    }
}
