//! One SIGINT/SIGTERM mechanism for the whole process.
//!
//! A run that is interrupted stops, kills its children by pid and writes what finished,
//! instead of dying mid-write. Several parts of one process wait for that (a capture loop,
//! a matrix, a server, a pilot run); with one handler each, the last installed would
//! silently replace the others. Here the handlers go in once and every part shares one
//! flag: sync code polls [`interrupted`], async code awaits [`wait`] (feature `tokio`).
//!
//! The handlers are registered through `signal-hook-registry`, the registry tokio's own
//! signal support uses, so they also coexist with `tokio::signal` in the same process.
//! The flag never clears: once asked to stop, the whole process is stopping.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};

use signal_hook::consts::{SIGINT, SIGTERM};

/// In an `Arc` so that callers holding their flag by `Arc` (a per-run cancel token) can
/// share this one.
static FLAG: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));

#[cfg(feature = "tokio")]
static NOTIFY: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Installs the SIGINT and SIGTERM handlers on the first call; later calls only return the
/// shared flag. Call it before any slow startup work: a script that starts a job in the
/// background and signals it at once must not lose the signal, and a non-interactive
/// shell starts background jobs with SIGINT ignored until a handler replaces that.
pub fn install() -> io::Result<&'static AtomicBool> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| register().map_err(|e| e.to_string()))
        .clone()
        .map(|()| &**FLAG)
        .map_err(io::Error::other)
}

fn register() -> io::Result<()> {
    // Set in the handler itself, so a poller sees it without waiting for any thread.
    signal_hook::flag::register(SIGINT, Arc::clone(&FLAG))?;
    signal_hook::flag::register(SIGTERM, Arc::clone(&FLAG))?;
    #[cfg(feature = "tokio")]
    {
        // Waking tasks takes a lock, which a signal handler must not: a thread does it.
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
        std::thread::Builder::new()
            .name("arena-sys-interrupt".into())
            .spawn(move || {
                for _ in signals.forever() {
                    FLAG.store(true, Ordering::SeqCst);
                    NOTIFY.notify_waiters();
                }
            })?;
    }
    Ok(())
}

/// The shared flag, installing the handlers if need be. Should that fail (it does not on
/// Linux), the flag simply never sets and signals keep their default action.
pub fn flag() -> &'static AtomicBool {
    let _ = install();
    &FLAG
}

/// The shared flag as an `Arc`, for code that keeps its stop flag by `Arc` (and may set
/// it itself, which then stops every user in the process). Installs as [`flag`] does.
pub fn shared() -> Arc<AtomicBool> {
    let _ = install();
    Arc::clone(&FLAG)
}

/// True once SIGINT or SIGTERM has arrived (after [`install`]).
pub fn interrupted() -> bool {
    FLAG.load(Ordering::SeqCst)
}

/// Returns once SIGINT or SIGTERM has arrived, at once if one already has. Installs the
/// handlers if need be; call [`install`] first to learn of a failure, which would make
/// this wait forever.
#[cfg(feature = "tokio")]
pub async fn wait() {
    let _ = install();
    let notified = NOTIFY.notified();
    tokio::pin!(notified);
    // Registered before the check: a signal between the two still wakes this task.
    notified.as_mut().enable();
    if interrupted() {
        return;
    }
    notified.await;
}

#[cfg(all(test, feature = "tokio"))]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// The only test that signals: the flag never clears, so one test owns it.
    #[test]
    fn a_signal_sets_the_shared_flag_and_wakes_waiters() {
        let a = install().unwrap();
        let b = flag();
        assert!(std::ptr::eq(a, b), "every user shares one flag");
        assert!(std::ptr::eq(a, &*shared()), "by reference or by Arc");
        assert!(!interrupted());
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let woke = rt.block_on(async {
            let waiter = tokio::spawn(wait());
            tokio::task::yield_now().await;
            // SAFETY: raise has no memory preconditions; the handler is installed.
            unsafe { libc::raise(libc::SIGTERM) };
            tokio::time::timeout(Duration::from_secs(5), waiter).await
        });
        assert!(matches!(woke, Ok(Ok(()))), "wait() woke");
        let t0 = Instant::now();
        while !a.load(Ordering::SeqCst) && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(interrupted());
        // Already interrupted: a later wait returns at once.
        rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(1), wait())
                .await
                .expect("immediate")
        });
    }
}

/// Lets SIGPIPE end the process, as it ends `cat` or `grep`, so `arena-perf ... | head`
/// stops quietly once `head` has read enough. Rust starts with SIGPIPE ignored, which
/// turns the first write to a closed pipe into a panic in `print!`. Only for commands
/// that read files and print: the ones that drive browsers and servers keep it ignored,
/// so a closed pipe can never skip their kill-and-reap.
pub fn die_on_closed_pipe() {
    // SAFETY: restoring a signal's default disposition has no handler to race with.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
