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

pub use arena_sys::procfs::{allowed_cores, loadavg, online_cores};

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
        Machine {
            hostname: arena_sys::procfs::hostname().unwrap_or_default(),
            kernel: arena_sys::procfs::kernel_release().unwrap_or_default(),
            cores: online_cores(),
            allowed_cores: allowed_cores(),
            governor: governor(),
            loadavg: loadavg(),
            pinned,
        }
    }
}
