//! Where a run came from: the branch and commit it measured and the machine it ran on.
//! Flags set them; otherwise `git` in the current folder and the machine's name.

use std::process::Command;

/// Branch, commit and testbed stored beside a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub testbed: String,
}

impl Origin {
    /// The flags' branch, commit and testbed, each missing one from `git` in the current
    /// folder or the machine's name (`history add`, and `--history` on the pilot).
    pub fn or_defaults(
        branch: Option<String>,
        commit: Option<String>,
        testbed: Option<String>,
    ) -> Origin {
        Origin {
            branch: branch.or_else(git_branch),
            commit: commit.or_else(git_commit),
            testbed: testbed.unwrap_or_else(default_testbed),
        }
    }
}

/// `git rev-parse` answers in milliseconds; the bound only keeps a stuck one from hanging
/// a store.
const GIT_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// A branch name or a hash is short; more is not an answer.
const GIT_MAX_BYTES: usize = 64 * 1024;

fn git(args: &[&str]) -> Option<String> {
    let mut cmd = Command::new("git");
    cmd.args(args);
    // Through arena-sys like every child: its own group, ended whole if it hangs.
    let (status, out) = arena_sys::child::output_within(cmd, GIT_LIMIT, GIT_MAX_BYTES).ok()??;
    let text = String::from_utf8(out).ok()?.trim().to_string();
    (status.success() && !text.is_empty()).then_some(text)
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
    arena_sys::procfs::hostname()
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|s| s.trim().to_string())
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}
