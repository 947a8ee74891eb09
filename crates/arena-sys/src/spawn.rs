//! Starting children that can always be cleaned up.
//!
//! A measured command or a browser runs in its own process group, so one `kill(-pgid)`
//! reaches everything it started and a terminal's Ctrl-C reaches only this process (which
//! then cleans up and writes what finished). Its parent-death signal is SIGKILL, so even a
//! SIGKILL of this process takes the child with it.
//!
//! For a `tokio::process::Command`, configure `cmd.as_std_mut()`.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::Duration;

/// Makes `cmd` start as the leader of a new process group, SIGKILLed when the thread
/// that spawns it exits (see [`spawn_from_lasting_thread`] for why the thread matters).
pub fn own_group_with_death_signal(cmd: &mut Command) -> &mut Command {
    // Read before fork: between fork and exec only async-signal-safe calls may run.
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: only setpgid, prctl and getppid run between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setpgid(0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl: the signal would never come.
            if libc::getppid() != parent {
                return Err(io::Error::other("parent exited during launch"));
            }
            Ok(())
        })
    }
}

/// `cores` as an affinity mask; cores past `CPU_SETSIZE` are ignored.
fn cpu_set(cores: &[usize]) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is plain data; CPU_SET writes inside it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cores {
        if c < libc::CPU_SETSIZE as usize {
            unsafe { libc::CPU_SET(c, &mut set) };
        }
    }
    set
}

/// Restricts `cmd` (and everything it starts) to `cores`; cores past `CPU_SETSIZE` are
/// ignored. The set is built before fork, so the child only makes one syscall.
pub fn pin_to_cores<'a>(cmd: &'a mut Command, cores: &[usize]) -> &'a mut Command {
    let set = cpu_set(cores);
    // SAFETY: sched_setaffinity is a raw syscall on memory the closure owns.
    unsafe {
        cmd.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// Restricts every thread of this process to `cores`. A thread started later inherits
/// the mask of the thread that starts it, so the whole process stays there.
pub fn pin_this_process(cores: &[usize]) -> io::Result<()> {
    let set = cpu_set(cores);
    for entry in std::fs::read_dir("/proc/self/task")? {
        let name = entry?.file_name();
        let Some(tid) = name.to_str().and_then(|s| s.parse::<libc::pid_t>().ok()) else {
            continue;
        };
        // SAFETY: sched_setaffinity reads `set`, which outlives the call.
        let rc =
            unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        if rc != 0 {
            let e = io::Error::last_os_error();
            // A thread that ended since the listing has nothing left to pin.
            if e.raw_os_error() != Some(libc::ESRCH) {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Makes this process adopt its descendants' orphans. A child's helpers (Chromium's
/// zygote, renderers) killed with it would otherwise be handed to init and stay zombies
/// until init reaps them, after this tool has exited; adopted, they can be reaped here.
pub fn become_subreaper() {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes no pointers.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong);
    }
}

type SpawnReply = mpsc::Sender<io::Result<Child>>;

/// Spawns `cmd` from one thread that lives as long as the process. The parent-death
/// signal fires when the *thread* that forked exits, not the process: a child spawned
/// from a short-lived thread (a tokio blocking thread, a test thread) would be killed
/// when that thread ends.
pub fn spawn_from_lasting_thread(cmd: Command) -> io::Result<Child> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<(Command, SpawnReply)>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<(Command, SpawnReply)>();
        // Never joined: its exit would deliver the death signal to every child.
        let spawned = std::thread::Builder::new()
            .name("arena-sys-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            });
        if let Err(e) = spawned {
            // Without the thread every spawn reports that it is gone.
            eprintln!("arena-sys: cannot start the spawner thread: {e}");
        }
        Mutex::new(tx)
    });
    let (reply_tx, reply_rx) = mpsc::channel();
    spawner
        .lock()
        .map_err(|_| io::Error::other("spawner lock poisoned"))?
        .send((cmd, reply_tx))
        .map_err(|_| io::Error::other("the spawner thread is gone"))?;
    reply_rx
        .recv_timeout(Duration::from_secs(10))
        .map_err(|_| io::Error::other("the spawner thread did not answer"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_child_leads_its_own_group() {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c").arg("sleep 30");
        own_group_with_death_signal(&mut cmd);
        let mut child = spawn_from_lasting_thread(cmd).unwrap();
        let pid = child.id() as i32;
        let mut buf = Vec::new();
        let pgrp = crate::procfs::stat(pid, &mut buf).map(|s| s.pgrp);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(pgrp, Some(pid));
    }

    #[test]
    fn pinning_this_process_reaches_its_threads_and_the_ones_it_starts_later() {
        let before = crate::procfs::allowed_cores();
        let one = [before[0]];
        // A thread started before the pinning is pinned with it.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let early = std::thread::spawn(move || {
            rx.recv().unwrap();
            crate::procfs::allowed_cores()
        });
        pin_this_process(&one).unwrap();
        tx.send(()).unwrap();
        let late = std::thread::spawn(crate::procfs::allowed_cores);
        let got = (early.join().unwrap(), late.join().unwrap());
        pin_this_process(&before).unwrap();
        assert_eq!(got, (one.to_vec(), one.to_vec()));
        assert_eq!(crate::procfs::allowed_cores(), before);
    }

    #[test]
    fn pinning_reaches_the_child() {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg("grep Cpus_allowed_list /proc/self/status");
        pin_to_cores(&mut cmd, &[0]);
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.trim_end().ends_with(":\t0"), "{text}");
    }
}
