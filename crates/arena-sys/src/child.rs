//! A child the tool starts for the user (a command to capture beside, a sampler's probe):
//! always in its own process group with a parent-death signal (spawned through
//! [`crate::spawn`]), and always ended whole: its group SIGKILLed and reaped to the last
//! zombie, on every path, drop included. The one way to start such a child, so the rules
//! cannot differ between commands.

use std::io::{self, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::kill;
use crate::spawn::{own_group_with_death_signal, spawn_from_lasting_thread};

/// How long ending a killed group may take before the clean-up gives up (a SIGKILLed
/// process ends in milliseconds; the bound keeps a stuck kernel state from hanging exit).
const REAP_BOUND: Duration = Duration::from_secs(5);

/// A child leading its own process group; the group is killed and reaped on drop.
#[derive(Debug)]
pub struct GroupChild {
    child: Child,
    pgid: i32,
    status: Option<ExitStatus>,
    /// Set by [`GroupChild::release`]: drop leaves the group alone.
    released: bool,
}

impl GroupChild {
    /// Starts `cmd` as the leader of a new group, SIGKILLed should this process die.
    pub fn spawn(mut cmd: Command) -> io::Result<GroupChild> {
        own_group_with_death_signal(&mut cmd);
        let child = spawn_from_lasting_thread(cmd)?;
        let pgid = child.id() as i32;
        Ok(GroupChild {
            child,
            pgid,
            status: None,
            released: false,
        })
    }

    /// The leader's PID, which is also the group's ID.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The leader's stdout, if it was piped.
    pub fn take_stdout(&mut self) -> Option<std::process::ChildStdout> {
        self.child.stdout.take()
    }

    /// The leader's exit status once it has exited (reaped then), else `None`. Members it
    /// left running are ended by [`GroupChild::end`].
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self.child.try_wait()?;
        }
        Ok(self.status)
    }

    /// SIGKILLs the whole group and reaps the leader and every member, zombies included;
    /// returns the leader's status (its own, if it had exited before).
    pub fn end(&mut self) -> Option<ExitStatus> {
        kill::kill_group(self.pgid);
        let deadline = Instant::now() + REAP_BOUND;
        if self.status.is_none() {
            kill::wait_child_until(&mut self.child, deadline);
            self.status = self.child.try_wait().ok().flatten();
        }
        kill::reap_group_until(self.pgid, Vec::new(), deadline);
        self.status
    }
}

impl GroupChild {
    /// Gives up the group once the leader has exited (reaped by [`GroupChild::try_wait`]),
    /// leaving its members running: an arm's setup command may start the target in the
    /// background, and the target must outlive the command. A leader still running is
    /// ended as on drop.
    pub fn release(mut self) {
        self.released = self.status.is_some();
    }
}

impl Drop for GroupChild {
    fn drop(&mut self) {
        if !self.released {
            self.end();
        }
    }
}

/// Runs `cmd` (stdin from /dev/null, stderr discarded) to its end, for at most `limit`,
/// and returns its status and at most `max` bytes of its stdout; `None` when it had not
/// ended within `limit` (its group is then killed and reaped). Reading more than `max`
/// bytes ends it too: a probe that prints without end is not let fill memory.
pub fn output_within(
    mut cmd: Command,
    limit: Duration,
    max: usize,
) -> io::Result<Option<(ExitStatus, Vec<u8>)>> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = GroupChild::spawn(cmd)?;
    let out = child.take_stdout();
    let reader = std::thread::Builder::new()
        .name("arena-sys-output".into())
        .spawn(move || {
            let mut buf = Vec::new();
            if let Some(o) = out {
                let _ = o.take(max as u64).read_to_end(&mut buf);
            }
            buf
        })?;
    // Past `max` the reader drops the pipe: a leader still printing then ends by SIGPIPE.
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break Some(s);
        }
        if Instant::now() >= deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    // Ends the group (members the leader left behind too), which also closes the pipe.
    child.end();
    let bytes = reader.join().unwrap_or_default();
    Ok(status.map(|s| (s, bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(script);
        c
    }

    /// Members of group `pgid` in any state (zombies included).
    fn members(pgid: i32) -> Vec<i32> {
        crate::procfs::processes()
            .into_iter()
            .filter(|p| p.pgrp == pgid)
            .map(|p| p.pid)
            .collect()
    }

    #[test]
    fn output_is_read_and_the_status_kept() {
        let (st, out) = output_within(sh("echo 42; exit 3"), Duration::from_secs(10), 1024)
            .unwrap()
            .expect("ended in time");
        assert_eq!(st.code(), Some(3));
        assert_eq!(out, b"42\n");
    }

    #[test]
    fn a_probe_past_its_limit_is_ended_with_its_group() {
        let t = Instant::now();
        let got = output_within(
            sh("sleep 30 & echo started; sleep 30"),
            Duration::from_millis(300),
            1024,
        )
        .unwrap();
        assert!(got.is_none());
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }

    #[test]
    fn endless_output_is_cut_at_max() {
        use std::os::unix::process::ExitStatusExt;
        let (st, out) = output_within(sh("exec yes"), Duration::from_secs(10), 4096)
            .unwrap()
            .expect("ended by its closed pipe, well within the limit");
        assert_eq!(out.len(), 4096);
        assert_eq!(st.signal(), Some(libc::SIGPIPE));
    }

    #[test]
    fn a_released_group_keeps_what_its_exited_leader_started() {
        let mut c = GroupChild::spawn(sh("sleep 30 >/dev/null 2>&1 & exit 0")).unwrap();
        let pgid = c.id() as i32;
        let deadline = Instant::now() + Duration::from_secs(10);
        while c.try_wait().unwrap().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        c.release();
        let left = members(pgid);
        assert_eq!(left.len(), 1, "the background sleep runs on: {left:?}");
        crate::kill::kill_group(pgid);
        crate::kill::reap_group_until(pgid, Vec::new(), Instant::now() + Duration::from_secs(5));
    }

    #[test]
    fn dropping_a_child_ends_its_whole_group_to_the_last_zombie() {
        let c = GroupChild::spawn(sh("sleep 30 & sleep 30 & wait")).unwrap();
        let pgid = c.id() as i32;
        let t = Instant::now();
        while members(pgid).len() < 3 && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(members(pgid).len(), 3, "sh and its two sleeps");
        drop(c);
        assert_eq!(members(pgid), Vec::<i32>::new());
    }
}
