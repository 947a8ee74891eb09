//! `watch`: what a page's target sends with nobody touching it, without a pilot file or
//! setup steps. A fresh browser opens the page with the recorder, the page's load is kept
//! (until it has been quiet for a moment, or a bound), the recorder is cleared, and one
//! idle window (`idle.rs`) records the next S seconds.

use std::time::Duration;

use anyhow::{anyhow, Result};
use arena_browser::{Browser, Page, Quiet, Record, RecorderConfig, SocketChoice};
use arena_report::{Exit, ExitKind};
use arena_run::IdleWindow;

use crate::cancel::Cancel;
use crate::idle::idle_window;
use crate::plan::BrowserOptions;
use crate::target::{target_addr, target_gone};

/// What to watch and for how long.
pub struct WatchRequest<'a> {
    pub url: &'a str,
    /// The idle window's length.
    pub length: Duration,
    /// The canvas compared pixel by pixel (default: the page's largest canvas).
    pub canvas: Option<&'a str>,
    /// The load is over once no message arrived for `load_quiet`, or at `load_limit`.
    pub load_quiet: Duration,
    pub load_limit: Duration,
    pub cancel: &'a Cancel,
}

/// The URL a page is opened at: a path to a file on disk becomes its `file://` URL, as a
/// browser's address bar would take it; anything else is taken as given.
pub fn page_url(arg: &str) -> String {
    let path = std::path::Path::new(arg);
    match (arg.contains("://"), path.canonicalize()) {
        (false, Ok(abs)) if abs.is_file() => format!("file://{}", abs.display()),
        _ => arg.to_string(),
    }
}

/// What `watch` saw: the load, then the window.
pub struct Watched {
    pub chromium_version: String,
    /// Records from navigation to the clear (the load: a board's first paint).
    pub load: Vec<Record>,
    /// The load went quiet before `load_limit` (else the window opened at the limit).
    pub load_went_quiet: bool,
    pub window: IdleWindow,
}

/// Watches `req.url` in a browser of its own, closed on every path. A URL nothing accepts
/// connections at is exit 3 before any browser starts.
pub async fn watch(browser: &BrowserOptions, req: WatchRequest<'_>) -> Result<Watched> {
    let addr = target_addr(req.url).filter(|_| !req.url.starts_with("file:"));
    if target_gone(addr) {
        return Err(anyhow!(Exit::new(
            ExitKind::TargetFailed,
            format!(
                "{}: nothing accepts connections at {}",
                req.url,
                addr.map(|a| a.to_string()).unwrap_or_default()
            )
        )));
    }
    let browser = browser.launch().await?;
    let res = watch_in(&browser, &req).await;
    let _ = browser.close().await;
    res
}

async fn watch_in(browser: &Browser, req: &WatchRequest<'_>) -> Result<Watched> {
    // The page's own socket only: the recorder's quiet wait cannot see a Worker's.
    let config = RecorderConfig {
        sockets: SocketChoice::PageHook,
        ..RecorderConfig::default()
    };
    let page = browser.new_page(req.url, Some(config)).await.map_err(|e| {
        anyhow!(Exit::new(
            ExitKind::TargetFailed,
            format!("opening {}: {e:#}", req.url)
        ))
    })?;
    let res = load_then_window(&page, req).await;
    let _ = tokio::time::timeout(Duration::from_secs(2), page.close()).await;
    let (load, load_went_quiet, window) = res?;
    Ok(Watched {
        chromium_version: browser.version().to_string(),
        load,
        load_went_quiet,
        window,
    })
}

async fn load_then_window(
    page: &Page,
    req: &WatchRequest<'_>,
) -> Result<(Vec<Record>, bool, IdleWindow)> {
    let quiet = page.wait_quiet(req.load_quiet, req.load_limit).await?;
    let load = page.drain().await?.records;
    page.clear().await?;
    let (window, _) = idle_window(page, req.canvas, req.length, req.cancel).await?;
    Ok((load, matches!(quiet, Quiet::At(_)), window))
}
