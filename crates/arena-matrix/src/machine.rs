//! What the machine looked like when a matrix started: cores, governor, load.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub hostname: String,
    pub kernel: String,
    /// Online logical cores.
    pub cores: usize,
    /// Cores this process may run on.
    pub allowed_cores: Vec<usize>,
    /// `scaling_governor` per core where readable (absent in most VMs).
    pub governor: Option<String>,
    /// 1, 5 and 15 minute load averages at the start.
    pub loadavg: Option<[f64; 3]>,
    /// Cores the measured commands were pinned to.
    pub pinned: Option<Vec<usize>>,
}

pub use arena_sys::procfs::{allowed_cores, online_cores};

/// Affinity of another process (to check pinning took effect).
pub fn affinity_of(pid: i32) -> Option<Vec<usize>> {
    // SAFETY: as above.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let rc =
        unsafe { libc::sched_getaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return None;
    }
    Some(
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect(),
    )
}

pub fn loadavg() -> Option<[f64; 3]> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = s.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

fn governor() -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for c in 0..online_cores() {
        let p = format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor");
        if let Ok(g) = std::fs::read_to_string(p) {
            let g = g.trim().to_string();
            if !seen.contains(&g) {
                seen.push(g);
            }
        }
    }
    if seen.is_empty() {
        None
    } else {
        Some(seen.join(","))
    }
}

impl Machine {
    pub fn now(pinned: Option<Vec<usize>>) -> Machine {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        Machine {
            hostname: read("/proc/sys/kernel/hostname"),
            kernel: read("/proc/sys/kernel/osrelease"),
            cores: online_cores(),
            allowed_cores: allowed_cores(),
            governor: governor(),
            loadavg: loadavg(),
            pinned,
        }
    }
}
