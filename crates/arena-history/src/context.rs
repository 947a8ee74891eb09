//! Where a run came from: the branch and commit it measured and the machine it ran on.
//! Flags set them; otherwise `git` in the current folder and the machine's name.

use std::process::{Command, Stdio};

/// Branch, commit and testbed stored beside a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub testbed: String,
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

/// The current folder's branch (`None` outside a repository or on a detached head).
pub fn git_branch() -> Option<String> {
    git(&["rev-parse", "--abbrev-ref", "HEAD"]).filter(|b| b != "HEAD")
}

/// The current folder's commit, full hash.
pub fn git_commit() -> Option<String> {
    git(&["rev-parse", "HEAD"])
}

/// The machine's name (`/proc/sys/kernel/hostname`), or `unknown`.
pub fn default_testbed() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}
