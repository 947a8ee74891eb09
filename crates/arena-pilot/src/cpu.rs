//! CPU by process and phase beside a run. What `--sample PID|NAME` names is resolved
//! once, before any browser starts (a PID that does not run or a NAME nothing matches is
//! exit 2); the in-process fixture's threads and Chromium are sampled besides. The run
//! marks its phases as it goes ([`CpuWatch::mark`]) and keeps the figures in `run.json`.
//!
//! A NAME matches a process whose kernel name (`comm`, at most 15 bytes) is NAME, or whose
//! command's first word has NAME as its file name (`/usr/bin/java ...` for `java`): a
//! match on the whole command line would take this command itself, whose own arguments
//! say `--sample NAME`. Every match is one column, counted with its children; processes
//! started later under that name are not followed.

use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use arena_report::Exit;
use arena_run::{CpuPhase, CpuProcess, RunCpu};
use arena_sys::procfs;
use arena_sys::sampler::{
    cpu_by_phase, instants, phase_spans, PhaseMark, ProcessCpu, Sampler, TreeCpu, TreeWalker,
};

/// Time between samples: 10 a second costs the sampler well under 1 % of a core
/// (crates/arena-matrix/benches/overhead.rs) and still puts a dozen samples in a short
/// phase.
pub const INTERVAL: Duration = Duration::from_millis(100);

/// The fixture's threads in this process, as crates/arena-fixture/src/bots.rs and conn.rs
/// name them, and their columns: the bots (`bots` knob; the column is left out when there
/// are none) and the sessions' event-dispatch threads (inputs, line of sight, frames).
const FIXTURE_THREADS: [(&str, &str); 2] = [
    ("fixture-bot-", "fixture bots"),
    ("fixture-edt-", "fixture session"),
];

/// One `--sample` column, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleTarget {
    /// The column's name: the NAME as given, or `comm (pid)` for a PID.
    pub label: String,
    /// `pid` or `name`.
    pub source: &'static str,
    /// The processes it stands for (each with its children).
    pub pids: Vec<i32>,
}

/// Resolves every `--sample` argument now: bad input is exit 2, before a browser starts.
pub fn resolve_samples(specs: &[String]) -> Result<Vec<SampleTarget>> {
    let mut out = Vec::new();
    let table = procfs::processes();
    for spec in specs {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(anyhow!(Exit::bad_input("--sample: give a PID or a NAME")));
        }
        let target = match spec.parse::<i32>() {
            Ok(pid) => by_pid(pid)?,
            Err(_) => by_name(spec, &table)?,
        };
        out.push(target);
    }
    Ok(out)
}

fn by_pid(pid: i32) -> Result<SampleTarget> {
    let mut buf = Vec::new();
    let comm = procfs::stat(pid, &mut buf)
        .filter(|s| s.state != b'Z' && pid > 0)
        .map(|s| String::from_utf8_lossy(s.comm).into_owned());
    let Some(comm) = comm else {
        return Err(anyhow!(Exit::bad_input(format!(
            "--sample {pid}: no process {pid} is running"
        ))));
    };
    Ok(SampleTarget {
        label: format!("{comm} ({pid})"),
        source: "pid",
        pids: vec![pid],
    })
}

fn by_name(name: &str, table: &[procfs::Proc]) -> Result<SampleTarget> {
    let mut buf = Vec::new();
    let pids: Vec<i32> = table
        .iter()
        .filter(|p| p.state != b'Z')
        .filter(|p| {
            let comm = procfs::stat(p.pid, &mut buf).map(|s| s.comm.to_vec());
            comm.is_some_and(|c| names_match(name, &c, &procfs::cmdline(p.pid)))
        })
        .map(|p| p.pid)
        .collect();
    if pids.is_empty() {
        return Err(anyhow!(Exit::bad_input(format!(
            "--sample {name}: no running process is named {name} (a NAME matches a process's \
             name or its command's file name; give a PID otherwise)"
        ))));
    }
    Ok(SampleTarget {
        label: name.to_string(),
        source: "name",
        pids,
    })
}

/// True when `name` is the process's `comm` (which the kernel cuts at 15 bytes) or the
/// file name of its command's first word.
fn names_match(name: &str, comm: &[u8], cmdline: &str) -> bool {
    let cut = &name.as_bytes()[..name.len().min(15)];
    if comm == cut && (name.len() <= 15 || cmdline.contains(name)) {
        return true;
    }
    let argv0 = cmdline.split(' ').next().unwrap_or("");
    argv0.rsplit('/').next() == Some(name)
}

/// One column of the CPU table while sampling.
struct Column {
    label: String,
    source: String,
    pids: Vec<i32>,
}

/// The sampler beside a run, and the phases the run marked. `pilot` and `ab` start one
/// per run; any command that drives a browser can do the same with one call
/// ([`CpuWatch::start`]), mark its phases, and keep [`CpuWatch::finish`]'s figures.
pub struct CpuWatch {
    sampler: Sampler,
    t0: Instant,
    marks: Vec<PhaseMark>,
    columns: Vec<Column>,
    /// For each walker, its column.
    walker_column: Vec<usize>,
}

impl CpuWatch {
    /// Starts sampling now, in phase `first`: this process's fixture threads when
    /// `fixture`, Chromium's tree when `browser_pid` is known, and every `--sample` target.
    pub fn start(
        first: &str,
        samples: &[SampleTarget],
        fixture: bool,
        browser_pid: Option<i32>,
    ) -> std::io::Result<CpuWatch> {
        let t0 = Instant::now();
        let column = |label: &str, source: &str, pids: &[i32]| Column {
            label: label.to_string(),
            source: source.to_string(),
            pids: pids.to_vec(),
        };
        let mut planned: Vec<(Column, Vec<TreeWalker>)> = Vec::new();
        if fixture {
            let me = std::process::id() as i32;
            for (prefix, label) in FIXTURE_THREADS {
                let w = TreeWalker::threads_named(me, prefix, label, t0);
                planned.push((column(label, "fixture", &[me]), vec![w]));
            }
        }
        if let Some(pid) = browser_pid {
            let w = TreeWalker::new(pid, Vec::new(), t0);
            planned.push((column("chromium", "chromium", &[pid]), vec![w]));
        }
        for s in samples {
            let ws = s.pids.iter().map(|&p| TreeWalker::new(p, Vec::new(), t0));
            planned.push((column(&s.label, s.source, &s.pids), ws.collect()));
        }
        let (mut columns, mut walkers, mut walker_column) = (Vec::new(), Vec::new(), Vec::new());
        for (i, (c, ws)) in planned.into_iter().enumerate() {
            columns.push(c);
            walker_column.extend(std::iter::repeat_n(i, ws.len()));
            walkers.extend(ws);
        }
        let sampler = Sampler::start(walkers, INTERVAL, t0)?;
        Ok(CpuWatch {
            sampler,
            t0,
            marks: vec![PhaseMark {
                at_s: 0.0,
                name: first.to_string(),
            }],
            columns,
            walker_column,
        })
    }

    /// From now on the run is in phase `name`.
    pub fn mark(&mut self, name: &str) {
        self.marks.push(PhaseMark {
            at_s: self.t0.elapsed().as_secs_f64(),
            name: name.to_string(),
        });
    }

    /// Stops sampling (one last sample) and splits what was seen by phase.
    pub fn finish(self) -> RunCpu {
        let sampled = self.sampler.stop();
        // Every process of every walker in one tree, labelled by its column's index, and
        // the machine beside them as one more: phase spans are then taken over the same
        // instants for all of them.
        let mut all = TreeCpu::default();
        let mut exits: Vec<Vec<Option<f64>>> = vec![Vec::new(); self.columns.len()];
        let mut empty = vec![false; self.columns.len()];
        for (tree, &col) in sampled.trees.into_iter().zip(&self.walker_column) {
            exits[col].push(root_exit(&tree, &self.columns[col].pids));
            empty[col] = self.columns[col].source == "fixture" && tree.threads.is_empty();
            for mut p in tree.processes {
                p.label = col.to_string();
                all.processes.push(p);
            }
        }
        all.processes.push(machine(sampled.machine));
        let spans = phase_spans(&instants(&all), &self.marks);
        let rows = cpu_by_phase(&all, &self.marks);
        let cpu_in = |label: &str, phase: &str| -> f64 {
            rows.iter()
                .filter(|r| r.process == label && r.phase == phase)
                .map(|r| r.cpu_s)
                .sum()
        };
        let pct = |cpu: f64, span: f64| if span > 0.0 { 100.0 * cpu / span } else { 0.0 };
        let phases = spans
            .iter()
            .map(|s| CpuPhase {
                name: s.name.clone(),
                start_s: self
                    .marks
                    .iter()
                    .find(|m| m.name == s.name)
                    .map_or(0.0, |m| m.at_s),
                span_s: s.span_s,
                intervals: u64::from(s.intervals),
                machine_pct: pct(cpu_in(MACHINE, &s.name), s.span_s),
            })
            .collect();
        let processes = self
            .columns
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !empty[*i])
            .map(|(i, c)| {
                let cpu_s: Vec<f64> = spans
                    .iter()
                    .map(|s| cpu_in(&i.to_string(), &s.name))
                    .collect();
                CpuProcess {
                    pct_of_core: cpu_s
                        .iter()
                        .zip(&spans)
                        .map(|(c, s)| pct(*c, s.span_s))
                        .collect(),
                    cpu_s,
                    exited_at_s: last_exit(&exits[i]),
                    label: c.label,
                    source: c.source,
                    pids: c.pids,
                }
            })
            .collect();
        RunCpu {
            interval_ms: sampled.interval_ms,
            samples: u64::from(sampled.samples),
            cores: procfs::online_cores() as u32,
            sampler_cpu_s: sampled.sampler_cpu_s,
            phases,
            processes,
        }
    }
}

/// The label the machine's own series goes by (no column index looks like it).
const MACHINE: &str = "machine";

fn machine(series: Vec<(f64, f64)>) -> ProcessCpu {
    ProcessCpu {
        pid: 0,
        ppid: 0,
        label: MACHINE.into(),
        comm: String::new(),
        cpu_s: 0.0,
        span_s: 0.0,
        pct_of_core: 0.0,
        series,
        exited_at_s: None,
    }
}

/// When the walker's root was first seen gone; a root never seen at all had gone before
/// the first sample.
fn root_exit(tree: &TreeCpu, roots: &[i32]) -> Option<f64> {
    match tree.processes.iter().find(|p| roots.contains(&p.pid)) {
        Some(p) => p.exited_at_s,
        None => Some(0.0),
    }
}

/// A column has exited once all its roots have: when the last one went.
fn last_exit(exits: &[Option<f64>]) -> Option<f64> {
    exits
        .iter()
        .copied()
        .collect::<Option<Vec<f64>>>()
        .and_then(|v| v.into_iter().reduce(f64::max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_process_name_or_the_commands_file_name() {
        assert!(names_match("sleep", b"sleep", "sleep 1"));
        assert!(names_match(
            "java",
            b"java",
            "/usr/lib/jvm/bin/java -jar x.jar"
        ));
        // A script run by an interpreter goes by the interpreter's name and its own.
        assert!(names_match("server.py", b"python3", "server.py --port 1"));
        assert!(!names_match("sleep", b"bash", "bash -c sleep 1"));
        assert!(!names_match(
            "java",
            b"arena-perf",
            "arena-perf pilot --sample java"
        ));
        // The kernel cuts names at 15 bytes: a longer NAME needs the command line too.
        assert!(names_match(
            "chromium-browser-x",
            b"chromium-browse",
            "/x/chromium-browser-x --a"
        ));
        assert!(!names_match(
            "chromium-browser-x",
            b"chromium-browse",
            "/x/other"
        ));
    }

    #[test]
    fn unknown_names_and_pids_are_bad_input_naming_what_was_given() {
        for spec in ["no-such-process-xyz", "2147483646", " "] {
            let e = resolve_samples(&[spec.to_string()]).unwrap_err();
            assert_eq!(
                arena_report::ExitKind::of(&e),
                Some(arena_report::ExitKind::BadInput),
                "{spec}"
            );
            assert!(format!("{e:#}").contains(spec.trim()), "{e:#}");
        }
        let me = std::process::id().to_string();
        let t = resolve_samples(std::slice::from_ref(&me)).unwrap();
        assert_eq!(
            (t[0].source, t[0].pids.clone()),
            ("pid", vec![me.parse().unwrap()])
        );
    }
}
