//! Finding, spawning and killing Chromium.
//!
//! Chromium is spawned here rather than by chromiumoxide so that it gets its own process
//! group and a parent-death signal: SIGKILL of this process then still takes every Chromium
//! process with it. The death signal fires when the *thread* that forked exits, so all
//! spawns go through one thread that lives as long as the process.

use anyhow::{bail, Context, Result};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arena_sys::procfs::{self, Proc};
use arena_sys::{kill, spawn};

/// Finds the Chromium binary: `explicit` (`--chrome`), `$CHROME`, Debian's real binary
/// `/usr/lib/chromium/chromium` (the `/usr/bin/chromium` wrapper script adds flags of its
/// own), then `chromium`, `chromium-browser`, `google-chrome` on `PATH`.
pub fn find_chromium(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return check_executable(p).with_context(|| format!("--chrome {}", p.display()));
    }
    if let Some(env) = std::env::var_os("CHROME").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(env);
        return check_executable(&p).with_context(|| format!("$CHROME={}", p.display()));
    }
    let real = Path::new("/usr/lib/chromium/chromium");
    if check_executable(real).is_ok() {
        return Ok(real.to_path_buf());
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Some(p) = on_path(name) {
            return Ok(p);
        }
    }
    bail!(
        "no Chromium found (tried $CHROME, /usr/lib/chromium/chromium, and chromium, \
         chromium-browser, google-chrome on PATH); on Debian/Ubuntu install it with \
         `apt-get install chromium`, or pass --chrome PATH"
    )
}

fn check_executable(p: &Path) -> Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(p).with_context(|| format!("{} does not exist", p.display()))?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        bail!("{} is not an executable file", p.display());
    }
    Ok(p.to_path_buf())
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| check_executable(p).is_ok())
}

/// The flags a closed network and repeatable timing need. Names carry their own leading
/// dashes: they go to Chromium verbatim.
pub(crate) fn base_flags(profile: &Path, headful: bool, window: (u32, u32)) -> Vec<String> {
    let mut f: Vec<String> = vec![
        "--remote-debugging-port=0".into(),
        format!("--user-data-dir={}", profile.display()),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-quic".into(),
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--disable-extensions".into(),
        "--disable-default-apps".into(),
        "--disable-domain-reliability".into(),
        "--disable-client-side-phishing-detection".into(),
        "--metrics-recording-only".into(),
        "--password-store=basic".into(),
        "--use-mock-keychain".into(),
        "--mute-audio".into(),
        "--disable-dev-shm-usage".into(),
        // A hidden or occluded page must keep its timers and animation frames at full rate,
        // or paint times measure the throttle.
        "--disable-background-timer-throttling".into(),
        "--disable-renderer-backgrounding".into(),
        "--disable-backgrounding-occluded-windows".into(),
        "--disable-features=Translate,MediaRouter,OptimizationHints,InterestFeedContentSuggestions"
            .into(),
        format!("--window-size={},{}", window.0, window.1),
    ];
    if !headful {
        f.push("--headless".into());
    }
    f
}

/// Live browsers' process groups, as plain atomics so [`kill_all`] can run from a signal
/// handler (no locks, no allocation: only `kill(2)`).
const SLOTS: usize = 64;
static LIVE: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

pub(crate) fn register(pgid: i32) -> Option<usize> {
    (0..SLOTS).find(|&i| {
        LIVE[i]
            .compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    })
}

pub(crate) fn unregister(slot: Option<usize>) {
    if let Some(i) = slot {
        LIVE[i].store(0, Ordering::SeqCst);
    }
}

/// SIGKILLs the process group of every browser this process launched and has not closed.
/// Async-signal-safe: call it from a Ctrl-C handler before exiting.
pub fn kill_all() {
    for slot in &LIVE {
        kill::signal_group(slot.swap(0, Ordering::SeqCst), libc::SIGKILL);
    }
}

/// Process groups of browsers still live (for tests and diagnostics).
pub fn live_groups() -> Vec<i32> {
    LIVE.iter()
        .map(|s| s.load(Ordering::SeqCst))
        .filter(|&p| p > 0)
        .collect()
}

/// Spawns `chrome` in its own process group with SIGKILL as its parent-death signal, from
/// a thread that lives as long as the process (the death signal follows the thread), on
/// `cores` when any are given.
pub(crate) fn spawn_chromium(chrome: &Path, flags: &[String], cores: &[usize]) -> Result<Child> {
    let mut cmd = Command::new(chrome);
    cmd.args(flags)
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    spawn::own_group_with_death_signal(&mut cmd);
    if !cores.is_empty() {
        spawn::pin_to_cores(&mut cmd, cores);
    }
    // Chromium's helpers (zygote, renderers) are its children, not ours: adopted by this
    // process when their parent dies, `kill_tree` reaps them before the tool exits.
    spawn::become_subreaper();
    spawn::spawn_from_lasting_thread(cmd)
        .with_context(|| format!("cannot start {}", chrome.display()))
}

/// Reads Chromium's stderr to its end (so the pipe never fills and blocks it), hands the
/// DevTools URL to `url_tx` and keeps the last lines for error messages.
pub(crate) fn watch_stderr(
    child: &mut Child,
    url_tx: tokio::sync::oneshot::Sender<String>,
) -> Arc<Mutex<VecDeque<String>>> {
    let tail = Arc::new(Mutex::new(VecDeque::with_capacity(16)));
    let Some(stderr) = child.stderr.take() else {
        return tail;
    };
    let keep = tail.clone();
    let _ = std::thread::Builder::new()
        .name("arena-browser-stderr".into())
        .spawn(move || {
            let mut url_tx = Some(url_tx);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.split("DevTools listening on ").nth(1) {
                    if let Some(tx) = url_tx.take() {
                        let _ = tx.send(rest.trim().to_string());
                    }
                }
                if let Ok(mut t) = keep.lock() {
                    if t.len() == 16 {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            }
        });
    tail
}

const PROFILE_PREFIX: &str = "arena-browser-profile-";
static PROFILE_N: AtomicU64 = AtomicU64::new(0);

/// A fresh profile directory named after this process, so a later run can tell whether its
/// owner is still alive.
pub(crate) fn fresh_profile() -> Result<PathBuf> {
    let n = PROFILE_N.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!(
        "{PROFILE_PREFIX}{}-{n}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create profile dir {}", dir.display()))?;
    Ok(dir)
}

/// Removes profile directories left by processes that are gone (SIGKILL leaves them).
/// Returns how many were removed.
pub fn sweep_stale_profiles() -> usize {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PROFILE_PREFIX)) else {
            continue;
        };
        let Some(owner) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if owner != std::process::id()
            && !procfs::exists(owner as i32)
            && std::fs::remove_dir_all(e.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// Every live process of the browser: its process group plus any descendant of its main
/// process that moved to another group.
pub(crate) fn browser_pids(main: i32) -> Vec<i32> {
    let table: Vec<Proc> = procfs::processes()
        .into_iter()
        .filter(|p| p.state != b'Z')
        .collect();
    let mut set: Vec<i32> = table
        .iter()
        .filter(|p| p.pgrp == main)
        .map(|p| p.pid)
        .collect();
    if !set.contains(&main) && table.iter().any(|p| p.pid == main) {
        set.push(main);
    }
    procfs::add_descendants(&mut set, &table);
    set.sort_unstable();
    set
}

/// SIGKILLs the group and any strays, then reaps the main process and every helper that
/// was handed to this process (a subreaper): nothing of the browser is left, not even a
/// zombie, when this returns.
pub(crate) fn kill_tree(main: i32, child: &mut Child) {
    let strays = browser_pids(main);
    kill::signal_group(main, libc::SIGKILL);
    for &p in &strays {
        kill::signal_pid(p, libc::SIGKILL);
    }
    let _ = child.kill();
    // SIGKILL cannot be caught: the waits are short. Bounded anyway so a stuck kernel
    // state cannot hang an exit path.
    kill::wait_child_until(child, Instant::now() + Duration::from_secs(2));
    // Helpers that had already exited when the group was killed are zombies the scan
    // above skips; the group reap finds them.
    let left: Vec<i32> = strays.into_iter().filter(|&p| p != main).collect();
    kill::reap_group_until(main, left, Instant::now() + Duration::from_secs(2));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_profiles_of_dead_owners_are_swept_and_live_ones_kept() {
        // Above any pid_max: never a live process.
        let dead = std::env::temp_dir().join(format!("{PROFILE_PREFIX}4294967295-0-1"));
        std::fs::create_dir_all(dead.join("Default")).unwrap();
        let mine = fresh_profile().unwrap();
        assert!(sweep_stale_profiles() >= 1);
        assert!(!dead.exists());
        assert!(mine.exists(), "a profile of a live process must stay");
        std::fs::remove_dir_all(mine).unwrap();
    }

    #[test]
    fn flags_carry_exactly_two_dashes() {
        let f = base_flags(Path::new("/tmp/p"), false, (800, 600));
        assert!(f
            .iter()
            .all(|a| a.starts_with("--") && !a.starts_with("---")));
        assert!(f.contains(&"--headless".to_string()));
        assert!(
            !base_flags(Path::new("/tmp/p"), true, (800, 600)).contains(&"--headless".to_string())
        );
    }

    #[test]
    fn missing_explicit_binary_is_named() {
        let e = find_chromium(Some(Path::new("/nonexistent/chrome"))).unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/chrome"));
    }
}
