//! A capture beside a command (`wire capture -- CMD`): the command runs while the capture
//! does, started through arena-sys like every child, and its whole group is ended and
//! reaped when the capture ends, however it ends: its exit, the duration, a signal.

use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use arena_report::{Exit, ExitKind};
use arena_sys::child::GroupChild;

use crate::capture::{CaptureHandle, CaptureStats};

/// Runs `cmd` (none: only the duration) beside `cap` until it exits, `duration` passes or
/// `stop` is set, then stops the capture. Returns its figures and the command's status
/// when it exited of itself (a command cut short has no failure of its own to report).
pub fn capture_beside(
    cap: CaptureHandle,
    cmd: &[String],
    duration: Option<Duration>,
    stop: &AtomicBool,
) -> Result<(CaptureStats, Option<ExitStatus>)> {
    let deadline = duration.map(|d| Instant::now() + d);
    // The command's whole group is ended (and reaped) when the capture ends, however it
    // ends: its exit, the duration, a signal.
    let mut child = match cmd.split_first() {
        Some((prog, rest)) => {
            let mut cmd = std::process::Command::new(prog);
            cmd.args(rest);
            Some(GroupChild::spawn(cmd).with_context(|| format!("cannot run {prog}"))?)
        }
        None => None,
    };
    let mut child_status = None;
    while !stop.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d) {
        if let Some(st) = child
            .as_mut()
            .map(GroupChild::try_wait)
            .transpose()?
            .flatten()
        {
            child_status = Some(st);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // A command cut short by the duration or a signal has no failure of its own to report.
    if let Some(mut c) = child {
        c.end();
    }
    Ok((cap.stop()?, child_status))
}

/// How `wire capture` ends once its pcap is flushed: interrupted (by `stop`), the
/// command's failure (exit 3), or success.
pub fn beside_ending(interrupted: bool, status: Option<ExitStatus>) -> Result<()> {
    if interrupted {
        return Err(Exit::new(ExitKind::Interrupted, "interrupted; the pcap was flushed").into());
    }
    match status {
        Some(st) if !st.success() => Err(Exit::new(
            ExitKind::TargetFailed,
            format!("the command exited with {st}; the pcap was flushed"),
        )
        .into()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn kind(r: Result<()>) -> Option<ExitKind> {
        ExitKind::of(&r.unwrap_err())
    }

    #[test]
    fn an_interruption_wins_over_the_command_and_a_failed_command_is_exit_3() {
        let failed = ExitStatus::from_raw(1 << 8);
        assert_eq!(
            kind(beside_ending(true, Some(failed))),
            Some(ExitKind::Interrupted)
        );
        assert_eq!(
            kind(beside_ending(false, Some(failed))),
            Some(ExitKind::TargetFailed)
        );
        assert!(beside_ending(false, Some(ExitStatus::from_raw(0))).is_ok());
        assert!(beside_ending(false, None).is_ok());
    }
}
