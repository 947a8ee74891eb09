//! The target of one run: the in-process fixture, started fresh with the plan's knobs, or
//! an external page after the arm's setup command; and the liveness probe that tells a
//! dead target from a slow one.

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use arena_report::{Exit, ExitKind};

use crate::cancel::Cancel;
use crate::plan::{Plan, TargetPlan};

/// A started target: the URL the page opens and the knobs the run records.
pub struct Target {
    /// The in-process fixture (shut down by [`Target::stop`]); `None` for a URL.
    fixture: Option<arena_fixture::ServerHandle>,
    /// The shaped link's proxy, when the plan has a link: the page's every connection goes
    /// through it, whatever host:port the page picks.
    proxy: Option<arena_link::Proxy>,
    /// What the link carried and refused, read when it stopped.
    link_log: Option<LinkLog>,
    /// The target's own URL: what the page opens, what the run records, what is captured
    /// and probed.
    pub url: String,
    /// The shaped link the page goes through, as the run records it.
    pub link: Option<String>,
    /// What the run records as its knobs: the fixture's effective set, defaults included
    /// (what `GET /knobs` answers), or an external arm's URL parameters and environment.
    pub knobs: BTreeMap<String, String>,
}

/// Every connection a link carried, and every one it refused.
#[derive(Debug, Clone, Default)]
pub struct LinkLog {
    pub carried: Vec<arena_link::Carried>,
    pub refused: Vec<arena_link::Refusal>,
}

impl Target {
    /// Starts what `plan` names, and the link's proxy when the plan has a link. A link to a
    /// target off loopback is bad input, refused before anything starts: the link carries
    /// nothing else, and an unshaped run must never pass as a shaped one.
    pub async fn start(plan: &Plan<'_>, cancel: &Cancel) -> Result<Target> {
        if plan.link.is_some() {
            if let TargetPlan::External { url } = &plan.target {
                check_loopback(url)?;
            }
        }
        let mut t = Target::start_direct(plan, cancel).await?;
        let Some(spec) = plan.link else {
            return Ok(t);
        };
        let proxy = match t.addr("--link") {
            Ok(addr) => match reachable(addr).await {
                Ok(()) => arena_link::Proxy::start(spec).await,
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        match proxy {
            Ok(p) => {
                t.link = Some(spec.to_string());
                t.proxy = Some(p);
                Ok(t)
            }
            Err(e) => {
                t.stop().await;
                Err(e)
            }
        }
    }

    /// Opens the target's page in `browser`: through the link's proxy when there is one.
    pub async fn open_page(
        &self,
        browser: &arena_browser::Browser,
        recorder: arena_browser::RecorderConfig,
    ) -> Result<arena_browser::Page> {
        match &self.proxy {
            Some(p) => {
                browser
                    .new_page_via(&self.url, Some(recorder), &p.url())
                    .await
            }
            None => browser.new_page(&self.url, Some(recorder)).await,
        }
    }

    /// Bad input when the page's traffic did not go through the link: the proxy refused a
    /// destination (off loopback, or not SOCKS5), or carried nothing at all (the browser
    /// did not route the page through it). Asked once the page is set up, before measuring.
    pub fn check_link(&self) -> Result<()> {
        let Some(p) = &self.proxy else {
            return Ok(());
        };
        let refused: Vec<String> = p
            .refused()
            .into_iter()
            .filter(|r| r.routing)
            .map(|r| format!("{}: {}", r.dest, r.why))
            .collect();
        if !refused.is_empty() {
            return Err(anyhow!(Exit::bad_input(format!(
                "--link: the page's traffic cannot all go through the link, which refused {}",
                refused.join("; ")
            ))));
        }
        if p.carried().is_empty() {
            return Err(anyhow!(Exit::bad_input(format!(
                "--link: the browser sent nothing through the link's proxy {} while loading {}: its connections would not be shaped",
                p.url(),
                self.url
            ))));
        }
        Ok(())
    }

    /// What the link carried and refused (once it stopped); `None` without a link.
    pub fn link_log(&self) -> Option<&LinkLog> {
        self.link_log.as_ref()
    }

    /// The fixture, or the arm's setup command for a URL.
    async fn start_direct(plan: &Plan<'_>, cancel: &Cancel) -> Result<Target> {
        let arm = &plan.arm;
        match &plan.target {
            TargetPlan::External { url } => {
                if let Some(cmd) = &arm.setup_command {
                    run_setup_command(cmd, &arm.env, cancel).await?;
                }
                // Fixture knobs cannot reach a server this process did not start.
                let mut knobs = BTreeMap::new();
                for (k, v) in &arm.url_params {
                    knobs.insert(format!("url_params.{k}"), v.clone());
                }
                for (k, v) in &arm.env {
                    knobs.insert(format!("env.{k}"), v.clone());
                }
                let url = with_params(url, &arm.url_params);
                Ok(Target {
                    fixture: None,
                    proxy: None,
                    link_log: None,
                    link: None,
                    url,
                    knobs,
                })
            }
            TargetPlan::Fixture(knobs) => {
                let handle = arena_fixture::Server::start(knobs.clone())
                    .await
                    .context("starting the fixture")?;
                let url = with_params(&handle.url(), &arm.url_params);
                Ok(Target {
                    url,
                    knobs: knob_text(knobs),
                    fixture: Some(handle),
                    proxy: None,
                    link_log: None,
                    link: None,
                })
            }
        }
    }

    /// True for the fixture this process serves (its threads are sampled as `fixture`).
    pub fn in_process(&self) -> bool {
        self.fixture.is_some()
    }

    /// host:port to probe for liveness; none for the fixture, which lives in-process.
    pub fn probe(&self) -> Option<SocketAddr> {
        match self.fixture {
            Some(_) => None,
            None => target_addr(&self.url),
        }
    }

    /// The target's host:port, for `what` (a capture, a link).
    pub fn addr(&self, what: &str) -> Result<SocketAddr> {
        target_addr(&self.url).ok_or_else(|| {
            anyhow!(Exit::bad_input(format!(
                "{what}: no host:port in {}",
                self.url
            )))
        })
    }

    /// When the in-process fixture completed each WebSocket upgrade (none for a URL).
    pub fn fixture_upgrades(&self) -> Vec<Instant> {
        self.fixture
            .as_ref()
            .map(|f| f.upgrades())
            .unwrap_or_default()
    }

    /// When the in-process fixture's boards left (none for a URL).
    pub fn fixture_boards_sent(&self) -> Vec<Instant> {
        self.fixture
            .as_ref()
            .map(|f| f.boards_sent())
            .unwrap_or_default()
    }

    pub async fn stop(&mut self) {
        if let Some(p) = self.proxy.take() {
            self.link_log = Some(LinkLog {
                carried: p.carried(),
                refused: p.refused(),
            });
            p.stop().await;
        }
        if let Some(h) = self.fixture.take() {
            h.shutdown().await;
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

/// Exit 2 unless `url`'s host is loopback: the link connects nowhere else.
fn check_loopback(url: &str) -> Result<()> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let hostport = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = match hostport.rsplit_once(':') {
        Some((h, p)) if p.parse::<u16>().is_ok() => h,
        _ => hostport,
    };
    if arena_link::is_loopback_host(host) {
        return Ok(());
    }
    Err(anyhow!(Exit::bad_input(format!(
        "--link: the target {url} is not on loopback: the link carries connections to 127.0.0.0/8, ::1 and localhost only, so this page could not be shaped"
    ))))
}

/// Exit 3 when nothing accepts at the target now: a run of unanswered clicks otherwise.
async fn reachable(addr: SocketAddr) -> Result<()> {
    let limit = Duration::from_secs(3);
    let why = match tokio::time::timeout(limit, tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(_)) => return Ok(()),
        Ok(Err(e)) => e.to_string(),
        Err(_) => format!("no answer in {} s", limit.as_secs()),
    };
    Err(anyhow!(Exit::new(
        ExitKind::TargetFailed,
        format!("--link: the target {addr} does not accept connections: {why}")
    )))
}

/// host:port of an http(s) URL, for the liveness probe.
pub(crate) fn target_addr(url: &str) -> Option<SocketAddr> {
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

/// Whether `url`'s host:port accepts a TCP connection now (within 2 s).
pub(crate) fn accepts(url: &str) -> Result<()> {
    let addr = target_addr(url).ok_or_else(|| anyhow!("no host:port in {url}"))?;
    TcpStream::connect_timeout(&addr, Duration::from_secs(2))
        .map(drop)
        .with_context(|| format!("connecting to {addr}"))
}

/// True when nothing accepts connections at the target any more.
pub(crate) fn target_gone(addr: Option<SocketAddr>) -> bool {
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
    let mut command = std::process::Command::new("sh");
    command.arg("-c").arg(cmd).envs(env);
    // Through arena-sys like every child: its own group, so a setup that starts a server
    // and hangs is ended whole, and a parent-death signal.
    let mut child = arena_sys::child::GroupChild::spawn(command)
        .with_context(|| format!("starting setup command `{cmd}`"))?;
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Some(status) = child.try_wait()? {
            // What it started in the background (the target itself) keeps running.
            child.release();
            if !status.success() {
                return Err(anyhow!(Exit::new(
                    ExitKind::TargetFailed,
                    format!("setup command `{cmd}` failed: {status}")
                )));
            }
            return Ok(());
        }
        if cancel.is_cancelled() || Instant::now() > deadline {
            child.end();
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
        for ok in [
            "http://127.0.0.1:8080/a",
            "http://localhost/",
            "http://[::1]:9/x?y",
        ] {
            assert!(check_loopback(ok).is_ok(), "{ok}");
        }
        for far in [
            "http://10.0.0.1:8080/a",
            "https://example.com/",
            "http://[::2]:9/",
        ] {
            let e = check_loopback(far).unwrap_err();
            assert_eq!(ExitKind::of(&e), Some(ExitKind::BadInput), "{far}");
            assert!(e.to_string().contains("not on loopback"), "{e}");
        }
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
