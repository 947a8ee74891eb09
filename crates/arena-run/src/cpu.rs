//! `run.json`'s `cpu`: CPU by process and phase while the run went on, sampled from
//! `/proc` beside it (`arena_sys::sampler`), in % of one core, with the whole machine's
//! busy time beside it ("total of 200 %" on two cores).

use serde::{Deserialize, Serialize};

/// What the sampler saw over one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunCpu {
    /// Time between samples, ms.
    pub interval_ms: f64,
    /// Samples taken over the run (every process and the machine once each).
    pub samples: u64,
    /// Online cores: the machine's total is out of `cores` x 100 %.
    pub cores: u32,
    /// CPU the sampling thread used, seconds (its own cost, inside this process).
    pub sampler_cpu_s: f64,
    /// The phases in the order they began.
    pub phases: Vec<CpuPhase>,
    /// One column a process (or group) sampled; figures per phase, in `phases` order.
    pub processes: Vec<CpuProcess>,
}

/// One phase of the run (`setup`, `clicks`, `idle`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuPhase {
    pub name: String,
    /// When it began, seconds after sampling began.
    pub start_s: f64,
    /// Wall time sampled inside it, seconds, and the sampling intervals that make it up.
    pub span_s: f64,
    pub intervals: u64,
    /// The whole machine's busy CPU (every process, ours or not), % of one core.
    pub machine_pct: f64,
}

/// One sampled process, process tree or thread group, and its CPU per phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuProcess {
    /// The column's name: the NAME given, `comm (pid)`, `fixture`, `chromium`.
    pub label: String,
    /// How it was named: `pid`, `name`, `fixture` (this process's `fixture-*` threads) or
    /// `chromium` (the browser's process tree).
    pub source: String,
    /// The processes it stands for when sampling began (each with its children).
    pub pids: Vec<i32>,
    /// When the last of `pids` was first seen gone, seconds after sampling began (it
    /// exited within one interval before); figures after it are zero.
    pub exited_at_s: Option<f64>,
    /// CPU seconds per phase.
    pub cpu_s: Vec<f64>,
    /// CPU per phase wall second x 100: 100 is one core busy for the whole phase.
    pub pct_of_core: Vec<f64>,
}

impl RunCpu {
    /// Figures finite and non-negative, one per phase for every process.
    pub(crate) fn check(&self) -> Result<(), String> {
        let bad = |what: String, v: f64| -> Result<(), String> {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(format!("cpu.{what} is {v}: not a finite figure >= 0"))
            }
        };
        bad("interval_ms".into(), self.interval_ms)?;
        bad("sampler_cpu_s".into(), self.sampler_cpu_s)?;
        for p in &self.phases {
            bad(format!("phases.{}.span_s", p.name), p.span_s)?;
            bad(format!("phases.{}.start_s", p.name), p.start_s)?;
            bad(format!("phases.{}.machine_pct", p.name), p.machine_pct)?;
        }
        for p in &self.processes {
            let n = self.phases.len();
            if p.cpu_s.len() != n || p.pct_of_core.len() != n {
                return Err(format!(
                    "cpu.processes `{}`: {} and {} figures for {n} phases",
                    p.label,
                    p.cpu_s.len(),
                    p.pct_of_core.len()
                ));
            }
            for (ph, (c, pct)) in self.phases.iter().zip(p.cpu_s.iter().zip(&p.pct_of_core)) {
                bad(format!("processes.{}.{}.cpu_s", p.label, ph.name), *c)?;
                bad(
                    format!("processes.{}.{}.pct_of_core", p.label, ph.name),
                    *pct,
                )?;
            }
            if let Some(at) = p.exited_at_s {
                bad(format!("processes.{}.exited_at_s", p.label), at)?;
            }
        }
        Ok(())
    }
}
