//! One SIGINT/SIGTERM/SIGHUP/SIGQUIT mechanism for the whole process.
//!
//! A run that is interrupted stops, kills its children by pid and writes what finished,
//! instead of dying mid-write. Several parts of one process wait for that (a capture loop,
//! a matrix, a server, a pilot run); with one handler each, the last installed would
//! silently replace the others. Here the handlers go in once and every part shares one
//! flag: sync code polls [`interrupted`], async code awaits [`wait`] (feature `tokio`).
//! The first signal to arrive is kept too, so the process can exit with its code
//! ([`exit_code`]).
//!
//! The handlers are registered through `signal-hook-registry`, the registry tokio's own
//! signal support uses, so they also coexist with `tokio::signal` in the same process.
//! The flag never clears: once asked to stop, the whole process is stopping.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};

/// In an `Arc` so that callers holding their flag by `Arc` (a per-run cancel token) can
/// share this one.
static FLAG: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));

/// The first signal that arrived, 0 before any.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// `/dev/null`, open for the process's life once SIGHUP is handled, -1 otherwise.
static DEV_NULL: AtomicI32 = AtomicI32::new(-1);

/// Bit `fd` set when stdout (1) or stderr (2) was a terminal at install.
static TERMINALS: AtomicU8 = AtomicU8::new(0);

#[cfg(feature = "tokio")]
static NOTIFY: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Installs the SIGINT, SIGTERM, SIGHUP and SIGQUIT handlers on the first call; later
/// calls only return the shared flag. Call it before any slow startup work: a script that
/// starts a job in the background and signals it at once must not lose the signal, and a
/// non-interactive shell starts background jobs with SIGINT and SIGQUIT ignored until a
/// handler replaces that. SIGHUP inherited ignored (`nohup`) stays ignored.
pub fn install() -> io::Result<&'static AtomicBool> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| register().map_err(|e| e.to_string()))
        .clone()
        .map(|()| &**FLAG)
        .map_err(io::Error::other)
}

fn register() -> io::Result<()> {
    let mut signals = vec![SIGINT, SIGTERM, SIGQUIT];
    if !ignored(SIGHUP) {
        signals.push(SIGHUP);
        prepare_for_hangup();
    }
    for &sig in &signals {
        let flag = Arc::clone(&FLAG);
        // Set in the handler itself, so a poller sees it without waiting for any thread;
        // the signal first, so whoever sees the flag also sees which signal it was.
        let action = move || {
            let _ = SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
            flag.store(true, Ordering::SeqCst);
            if sig == SIGHUP {
                release_hung_up_terminal();
            }
        };
        // SAFETY: the action only stores atomics and calls isatty and dup2, all of which
        // are async-signal-safe; it allocates nothing and takes no lock.
        unsafe { signal_hook::low_level::register(sig, action) }?;
    }
    #[cfg(feature = "tokio")]
    {
        // Waking tasks takes a lock, which a signal handler must not: a thread does it.
        let mut signals = signal_hook::iterator::Signals::new(&signals)?;
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

/// True when `sig` is ignored now, as `nohup` leaves SIGHUP.
fn ignored(sig: i32) -> bool {
    // SAFETY: a zeroed sigaction is a valid out-parameter; a null new action only reads.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Notes which of stdout and stderr are terminals and opens `/dev/null` for
/// [`release_hung_up_terminal`], which may not open files.
fn prepare_for_hangup() {
    let mut ttys = 0;
    for fd in [1, 2] {
        // SAFETY: isatty only queries the descriptor.
        if unsafe { libc::isatty(fd) } == 1 {
            ttys |= 1 << fd;
        }
    }
    if ttys == 0 {
        return;
    }
    // SAFETY: a constant C string; the descriptor is kept for the process's life.
    let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd >= 0 {
        DEV_NULL.store(fd, Ordering::SeqCst);
        TERMINALS.store(ttys, Ordering::SeqCst);
    }
}

/// After a hangup the terminal is gone and every write to it fails (EIO), which would make
/// the run's table and messages panic once the run folder is written: stdout and stderr
/// that were the terminal and no longer are one go to `/dev/null` instead. A SIGHUP sent
/// while the terminal lives changes nothing. Runs in the signal handler.
fn release_hung_up_terminal() {
    let null = DEV_NULL.load(Ordering::SeqCst);
    let ttys = TERMINALS.load(Ordering::SeqCst);
    for fd in [1, 2] {
        // SAFETY: isatty and dup2 are async-signal-safe; `null` is open for good.
        if ttys & (1 << fd) != 0 && unsafe { libc::isatty(fd) } == 0 {
            unsafe { libc::dup2(null, fd) };
        }
    }
}

/// The signal that interrupted the process (the first to arrive), if one has.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// The exit code of an interrupted process: 128 + the signal for SIGHUP (129) and
/// SIGQUIT (131), as a shell reports a process that signal killed; 130 for SIGINT and
/// SIGTERM, the code every interruption had before, and when no signal was recorded.
pub fn exit_code() -> u8 {
    code_for(signal())
}

fn code_for(signal: Option<i32>) -> u8 {
    match signal {
        Some(sig @ (SIGHUP | SIGQUIT)) => 128 + sig as u8,
        _ => 130,
    }
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

/// True once SIGINT, SIGTERM, SIGHUP or SIGQUIT has arrived (after [`install`]).
pub fn interrupted() -> bool {
    FLAG.load(Ordering::SeqCst)
}

/// Returns once SIGINT, SIGTERM, SIGHUP or SIGQUIT has arrived, at once if one already
/// has. Installs the handlers if need be; call [`install`] first to learn of a failure,
/// which would make this wait forever.
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

    #[test]
    fn hangup_and_quit_exit_128_plus_the_signal_and_the_rest_130() {
        assert_eq!(code_for(Some(libc::SIGHUP)), 129);
        assert_eq!(code_for(Some(libc::SIGQUIT)), 131);
        assert_eq!(code_for(Some(libc::SIGINT)), 130);
        assert_eq!(code_for(Some(libc::SIGTERM)), 130);
        assert_eq!(code_for(None), 130);
    }

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
        assert_eq!(signal(), Some(libc::SIGTERM), "the signal is kept");
        assert_eq!(exit_code(), 130);
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
