//! `--cpu-split`: the browser on one half of the cores, this process on the other.
//!
//! In a real deployment the person's browser runs on another machine than the app it
//! streams. Here Chromium, the built-in fixture (its bots and its encodes run in this
//! process) and the pilot share the cores, so a busy moment of one is a slow frame of the
//! other, and that varies from run to run. Split, each side keeps its own cores: Chromium
//! and every process it starts on the upper half, this process on the lower half (a target
//! given by `--url` runs where it was started; only the built-in fixture moves).
//!
//! The split is made once a process, before its first browser, and stays: threads started
//! later inherit it. Each run records it in `run.json` (`host.cpu_split`).

use std::sync::OnceLock;

use anyhow::{Context, Result};

/// Which cores each side runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuSplit {
    /// This process: the pilot and the built-in fixture.
    pub target: Vec<usize>,
    /// Chromium and its helpers.
    pub browser: Vec<usize>,
}

impl CpuSplit {
    /// The lower half of `allowed` for the target, the rest for the browser; `None` under
    /// two cores, where there is nothing to split.
    pub fn of(allowed: &[usize]) -> Option<CpuSplit> {
        (allowed.len() >= 2).then(|| {
            let half = allowed.len() / 2;
            CpuSplit {
                target: allowed[..half].to_vec(),
                browser: allowed[half..].to_vec(),
            }
        })
    }

    /// `target 0, browser 1` (cores as `taskset -c` lists them).
    pub fn describe(&self) -> String {
        let list = |c: &[usize]| c.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        format!(
            "target {}, browser {}",
            list(&self.target),
            list(&self.browser)
        )
    }
}

static APPLIED: OnceLock<Option<CpuSplit>> = OnceLock::new();

/// Splits the cores this process may use, once: pins this process to the target's half
/// and returns the browser's (`None`: under two cores, nothing was split).
pub fn apply() -> Result<Option<&'static CpuSplit>> {
    if let Some(done) = APPLIED.get() {
        return Ok(done.as_ref());
    }
    let split = CpuSplit::of(&arena_sys::procfs::allowed_cores());
    if let Some(s) = &split {
        arena_sys::spawn::pin_this_process(&s.target)
            .with_context(|| format!("--cpu-split: pinning this process to {}", s.describe()))?;
    }
    Ok(APPLIED.get_or_init(|| split).as_ref())
}

/// The split this process made, as `run.json` records it; `None` without one.
pub fn applied() -> Option<String> {
    APPLIED.get()?.as_ref().map(CpuSplit::describe)
}

/// The cores the split shares out (this process's own count reads only its half once
/// pinned); `None` without a split.
pub fn cores() -> Option<u32> {
    let s = APPLIED.get()?.as_ref()?;
    Some((s.target.len() + s.browser.len()) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_of_the_allowed_cores_and_nothing_under_two() {
        assert_eq!(CpuSplit::of(&[0]), None);
        assert_eq!(CpuSplit::of(&[]), None);
        let two = CpuSplit::of(&[0, 1]).unwrap();
        assert_eq!((two.target, two.browser), (vec![0], vec![1]));
        let odd = CpuSplit::of(&[2, 3, 5]).unwrap();
        assert_eq!(
            (odd.target.clone(), odd.browser.clone()),
            (vec![2], vec![3, 5])
        );
        assert_eq!(odd.describe(), "target 2, browser 3,5");
    }
}
