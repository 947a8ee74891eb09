//! Signalling and reaping children by pid, so nothing outlives a run, not even a zombie.
//!
//! Everything here works on raw pids rather than `std::process::Child`: a sampler must
//! read `/proc/<pid>` after the process exits (so the reap waits for it), and helpers a
//! subreaper adopted never had a `Child` at all.

use std::process::Child;
use std::time::{Duration, Instant};

use crate::procfs;

/// Sends `sig` to every process of group `pgid`. Async-signal-safe (only `kill(2)`), so a
/// signal handler may call it. Groups 0 and 1 are refused: `kill(0)` would signal this
/// process's own group and `kill(-1)` every process it may signal.
pub fn signal_group(pgid: i32, sig: i32) {
    if pgid > 1 {
        // SAFETY: kill has no memory preconditions.
        unsafe {
            libc::kill(-pgid, sig);
        }
    }
}

/// SIGKILLs every process of group `pgid` (see [`signal_group`]).
pub fn kill_group(pgid: i32) {
    signal_group(pgid, libc::SIGKILL);
}

/// Sends `sig` to one process. Pids 0 and 1 are refused, as in [`signal_group`].
pub fn signal_pid(pid: i32, sig: i32) {
    if pid > 1 {
        // SAFETY: kill has no memory preconditions.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// How a reaped process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Exited(i32),
    Signaled(i32),
}

/// Blocks until child `pid` has exited, without reaping it, so `/proc/<pid>` stays
/// readable for a last sample. Returns at once when `pid` is not a child of this process.
pub fn wait_exited(pid: i32) {
    loop {
        // SAFETY: siginfo_t is plain data; waitid writes into it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}

/// Blocks until child `pid` exits and reaps it. `None` when it is not a child (or was
/// reaped already) or stopped rather than ended.
pub fn reap(pid: i32) -> Option<Ended> {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: status is a valid out-pointer.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            break;
        }
        if rc < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return None;
    }
    if libc::WIFEXITED(status) {
        Some(Ended::Exited(libc::WEXITSTATUS(status)))
    } else if libc::WIFSIGNALED(status) {
        Some(Ended::Signaled(libc::WTERMSIG(status)))
    } else {
        None
    }
}

/// Reaps `pid` if it is a dead child of this process; true once it no longer exists (a
/// process that is not our child is someone else's to reap: only its end is awaited).
pub fn reap_if_dead(pid: i32) -> bool {
    let mut status = 0;
    // SAFETY: waitpid writes only to `status`, a valid c_int.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    r == pid || !procfs::exists(pid)
}

/// Polls `child` until it has been reaped or `deadline` passes. A SIGKILLed child ends in
/// milliseconds; the bound only keeps a stuck kernel state from hanging an exit path.
pub fn wait_child_until(child: &mut Child, deadline: Instant) {
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return,
            Ok(None) if Instant::now() >= deadline => return,
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Reaps `pids` and every member of group `pgid`, zombies included, until none is left or
/// `deadline` passes. Members that had already exited when the group was killed are
/// zombies a live-process scan skips; they are in the group all the same. True when
/// nothing is left.
pub fn reap_group_until(pgid: i32, mut pids: Vec<i32>, deadline: Instant) -> bool {
    loop {
        for p in procfs::processes() {
            if p.pgrp == pgid && !pids.contains(&p.pid) {
                pids.push(p.pid);
            }
        }
        pids.retain(|&p| !reap_if_dead(p));
        if pids.is_empty() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spawn::own_group_with_death_signal;
    use std::process::Command;

    #[test]
    fn a_killed_group_is_reaped_to_the_last_zombie() {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c").arg("sleep 30 & sleep 30 & wait");
        own_group_with_death_signal(&mut cmd);
        let child = cmd.spawn().unwrap();
        let pid = child.id() as i32;
        drop(child);
        // Both sleeps are in the group once the shell has forked them.
        let t0 = Instant::now();
        while procfs::processes().iter().filter(|p| p.pgrp == pid).count() < 3
            && t0.elapsed() < Duration::from_secs(5)
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        signal_group(pid, libc::SIGKILL);
        wait_exited(pid);
        assert!(procfs::exists(pid), "not reaped yet: /proc stays readable");
        assert_eq!(reap(pid), Some(Ended::Signaled(libc::SIGKILL)));
        let deadline = Instant::now() + Duration::from_secs(5);
        // The sleeps were the shell's children; reaped by init, they only need to be gone.
        assert!(reap_group_until(pid, Vec::new(), deadline));
        assert!(procfs::processes().iter().all(|p| p.pgrp != pid));
    }

    #[test]
    // Reaped by pid, which is what is under test; the `Child` never waits.
    #[allow(clippy::zombie_processes)]
    fn the_exit_code_is_read_on_reaping() {
        let child = Command::new("/bin/sh")
            .arg("-c")
            .arg("exit 7")
            .spawn()
            .unwrap();
        assert_eq!(reap(child.id() as i32), Some(Ended::Exited(7)));
    }
}
