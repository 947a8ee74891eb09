//! Samplers that run beside a measured command: per-thread and per-process CPU of its whole
//! process tree from `/proc`, and a generic sampler that reads a file or runs a command
//! every interval (a GPU-busy sysfs node, a queue depth).

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use regex::Regex;
use serde::Serialize;

use arena_sys::procfs::{self, parse_stat, read_into, TaskDir};

/// Names a process by a regex over its command line (`/proc/<pid>/cmdline`), so two JVMs
/// both called `java` read as "match host" and "client".
#[derive(Debug, Clone)]
pub struct ProcessLabel {
    pub label: String,
    pub cmdline: Regex,
}

#[derive(Debug, Clone)]
pub struct TreeSamplerConfig {
    pub interval: Duration,
    pub labels: Vec<ProcessLabel>,
}

impl Default for TreeSamplerConfig {
    fn default() -> Self {
        TreeSamplerConfig {
            interval: Duration::from_millis(100),
            labels: Vec::new(),
        }
    }
}

/// One thread's CPU over the span it was observed.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadCpu {
    pub pid: i32,
    /// The owning process's label (or its `comm`).
    pub process: String,
    pub tid: i32,
    /// Thread name (`comm` of the task, as set by `pthread_setname_np` / `PR_SET_NAME`).
    pub name: String,
    pub cpu_s: f64,
    pub span_s: f64,
    /// CPU seconds per wall second x 100: 100 is one core fully busy.
    pub pct_of_core: f64,
}

/// One process's CPU (all its threads, including those that ended) over its observed span.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessCpu {
    pub pid: i32,
    pub ppid: i32,
    pub label: String,
    pub comm: String,
    pub cpu_s: f64,
    pub span_s: f64,
    pub pct_of_core: f64,
    /// (seconds since the run started, cumulative CPU seconds) per sample, for phases.
    #[serde(skip)]
    pub series: Vec<(f64, f64)>,
}

/// What the tree sampler saw over one run.
#[derive(Debug, Clone, Serialize, Default)]
pub struct TreeCpu {
    pub interval_ms: f64,
    pub samples: u32,
    /// From the first to the last sample, seconds.
    pub span_s: f64,
    pub threads: Vec<ThreadCpu>,
    pub processes: Vec<ProcessCpu>,
    /// CPU of every process in the tree per wall second x 100 (200 = two cores).
    pub tree_pct_of_core: f64,
    /// CPU the sampler itself used, seconds (its overhead).
    pub sampler_cpu_s: f64,
}

impl TreeCpu {
    /// The busiest thread of the tree.
    pub fn top_thread(&self) -> Option<&ThreadCpu> {
        self.threads
            .iter()
            .max_by(|a, b| a.pct_of_core.total_cmp(&b.pct_of_core))
    }
}

struct Seen {
    first_t: f64,
    first_ticks: u64,
    last_t: f64,
    last_ticks: u64,
}

struct ThreadState {
    pid: i32,
    start_ticks: u64,
    name: String,
    seen: Seen,
    /// `/proc/<pid>/task/<tid>/stat`, kept open: re-reading an open procfs file from
    /// offset 0 regenerates it, and skips the path walk that dominates a fresh open.
    fd: Option<File>,
}

struct ProcState {
    ppid: i32,
    start_ticks: u64,
    comm: String,
    label: String,
    seen: Seen,
    series: Vec<(f64, f64)>,
    alive: bool,
    stat_fd: Option<File>,
    task_dir: Option<TaskDir>,
    /// Children of the main thread, read every sample; other threads' children are read
    /// every [`ALL_CHILDREN_EVERY`] samples.
    children_fd: Option<File>,
}

/// Open descriptors the walker may keep; past this, files are opened per read.
const MAX_CACHED_FDS: usize = 768;
/// Every this many samples, every thread's `children` file is read (not only the main
/// thread's), to find processes forked by other threads.
const ALL_CHILDREN_EVERY: u64 = 4;

/// Reads a procfs file through a kept descriptor when there is one, else opens it (and
/// keeps it while `keep` allows). False when the task is gone.
fn read_proc(fd: &mut Option<File>, path: &str, buf: &mut Vec<u8>, keep: &mut usize) -> bool {
    use std::os::unix::fs::FileExt;
    if let Some(f) = fd.as_ref() {
        buf.clear();
        buf.resize(4096, 0);
        let mut len = 0;
        loop {
            match f.read_at(&mut buf[len..], len as u64) {
                Ok(0) => break,
                Ok(n) => {
                    len += n;
                    if len == buf.len() {
                        buf.resize(len * 2, 0);
                    }
                }
                Err(_) => {
                    len = 0;
                    break;
                }
            }
        }
        buf.truncate(len);
        if len > 0 {
            return true;
        }
        *fd = None;
        *keep = keep.saturating_sub(1);
        return false;
    }
    match File::open(path) {
        Ok(mut f) => {
            buf.clear();
            if f.read_to_end(buf).is_err() || buf.is_empty() {
                return false;
            }
            if *keep < MAX_CACHED_FDS {
                *keep += 1;
                *fd = Some(f);
            }
            true
        }
        Err(_) => false,
    }
}

/// Walks the tree rooted at one pid and accumulates per-thread and per-process ticks.
/// Keeps its procfs files open between samples, so a sample costs one `pread` per thread.
pub struct TreeWalker {
    root: i32,
    labels: Vec<ProcessLabel>,
    ticks_per_s: f64,
    t0: Instant,
    threads: HashMap<i32, ThreadState>,
    procs: HashMap<i32, ProcState>,
    samples: u32,
    first_sample_t: Option<f64>,
    last_sample_t: f64,
    buf: Vec<u8>,
    path: String,
    stack: Vec<i32>,
    visited: Vec<i32>,
    tids: Vec<i32>,
    open_fds: usize,
    has_children_files: bool,
}

impl TreeWalker {
    pub fn new(root: i32, labels: Vec<ProcessLabel>, t0: Instant) -> Self {
        TreeWalker {
            root,
            labels,
            ticks_per_s: procfs::ticks_per_second(),
            t0,
            threads: HashMap::new(),
            procs: HashMap::new(),
            samples: 0,
            first_sample_t: None,
            last_sample_t: 0.0,
            buf: Vec::with_capacity(4096),
            path: String::with_capacity(64),
            stack: Vec::new(),
            visited: Vec::new(),
            tids: Vec::new(),
            open_fds: 0,
            has_children_files: std::path::Path::new(&format!(
                "/proc/self/task/{}/children",
                std::process::id()
            ))
            .exists(),
        }
    }

    /// Pids seen in the tree that still run (checked against their start time, so a
    /// recycled pid is never mistaken for one of ours).
    pub fn live_pids(&mut self) -> Vec<i32> {
        let mut out = Vec::new();
        let pids: Vec<(i32, u64)> = self
            .procs
            .iter()
            .map(|(p, s)| (*p, s.start_ticks))
            .collect();
        for (pid, start) in pids {
            if let Some(st) = procfs::stat(pid, &mut self.buf) {
                if st.start_ticks == start && st.state != b'Z' {
                    out.push(pid);
                }
            }
        }
        out
    }

    /// Takes one sample of every process in the tree and every thread in each.
    pub fn sample(&mut self) {
        let t = self.t0.elapsed().as_secs_f64();
        self.samples += 1;
        self.first_sample_t.get_or_insert(t);
        self.last_sample_t = t;
        for p in self.procs.values_mut() {
            p.alive = false;
        }
        self.stack.clear();
        self.visited.clear();
        self.stack.push(self.root);
        // Processes seen before stay sampled after their parent dies and they are
        // re-parented out of the tree.
        let known: Vec<i32> = self.procs.keys().copied().collect();
        self.stack.extend(known);
        if !self.has_children_files {
            self.scan_children_by_ppid();
        }
        let all_children = u64::from(self.samples) % ALL_CHILDREN_EVERY == 1;
        while let Some(pid) = self.stack.pop() {
            if self.visited.contains(&pid) {
                continue;
            }
            self.visited.push(pid);
            self.sample_process(pid, t, all_children);
        }
        // Processes that are gone give their descriptors back.
        let mut freed = 0;
        for p in self.procs.values_mut().filter(|p| !p.alive) {
            freed += usize::from(p.stat_fd.take().is_some())
                + usize::from(p.children_fd.take().is_some());
            p.task_dir = None;
        }
        for th in self.threads.values_mut() {
            if th.seen.last_t < t && th.fd.take().is_some() {
                freed += 1;
            }
        }
        self.open_fds = self.open_fds.saturating_sub(freed);
    }

    fn sample_process(&mut self, pid: i32, t: f64, all_children: bool) {
        use std::fmt::Write as _;
        self.path.clear();
        let _ = write!(self.path, "/proc/{pid}/stat");
        let mut stat_fd = self.procs.get_mut(&pid).and_then(|p| p.stat_fd.take());
        if !read_proc(&mut stat_fd, &self.path, &mut self.buf, &mut self.open_fds) {
            return;
        }
        let Some(st) = parse_stat(&self.buf) else {
            return;
        };
        let (ppid, start, ticks) = (st.ppid, st.start_ticks, st.cpu_ticks);
        let comm = String::from_utf8_lossy(st.comm).into_owned();
        if let Some(p) = self.procs.get(&pid) {
            if p.start_ticks != start {
                // The pid was recycled: the old process is over.
                self.procs.remove(&pid);
            }
        }
        let tps = self.ticks_per_s;
        let labels = &self.labels;
        let entry = self.procs.entry(pid).or_insert_with(|| {
            let cmd = procfs::cmdline(pid);
            let label = labels
                .iter()
                .find(|l| l.cmdline.is_match(&cmd))
                .map(|l| l.label.clone())
                .unwrap_or_else(|| comm.clone());
            ProcState {
                ppid,
                start_ticks: start,
                comm: comm.clone(),
                label,
                seen: Seen {
                    first_t: t,
                    first_ticks: ticks,
                    last_t: t,
                    last_ticks: ticks,
                },
                series: Vec::new(),
                alive: true,
                stat_fd: None,
                task_dir: None,
                children_fd: None,
            }
        });
        entry.stat_fd = stat_fd;
        // An exec changes comm and the command line: label the new program afresh.
        if entry.comm != comm {
            let cmd = procfs::cmdline(pid);
            entry.label = labels
                .iter()
                .find(|l| l.cmdline.is_match(&cmd))
                .map(|l| l.label.clone())
                .unwrap_or_else(|| comm.clone());
            entry.comm = comm;
        }
        entry.alive = true;
        entry.ppid = ppid;
        entry.seen.last_t = t;
        entry.seen.last_ticks = ticks;
        entry.series.push((t, ticks as f64 / tps));

        // Threads, and the children each thread forked.
        if entry.task_dir.is_none() {
            entry.task_dir = TaskDir::open(pid);
        }
        let listed = match entry.task_dir.as_mut() {
            Some(d) => d.list(&mut self.tids),
            None => false,
        };
        if !listed {
            return;
        }
        let mut children_fd = entry.children_fd.take();
        for i in 0..self.tids.len() {
            let tid = self.tids[i];
            self.path.clear();
            let _ = write!(self.path, "/proc/{pid}/task/{tid}/stat");
            let mut fd = self.threads.get_mut(&tid).and_then(|th| th.fd.take());
            if read_proc(&mut fd, &self.path, &mut self.buf, &mut self.open_fds) {
                if let Some(ts) = parse_stat(&self.buf) {
                    let fresh = |name: &str| ThreadState {
                        pid,
                        start_ticks: ts.start_ticks,
                        name: name.to_string(),
                        seen: Seen {
                            first_t: t,
                            first_ticks: ts.cpu_ticks,
                            last_t: t,
                            last_ticks: ts.cpu_ticks,
                        },
                        fd: None,
                    };
                    let name = String::from_utf8_lossy(ts.comm);
                    let th = self.threads.entry(tid).or_insert_with(|| fresh(&name));
                    if th.start_ticks != ts.start_ticks || th.pid != pid {
                        *th = fresh(&name);
                    }
                    if th.name != name {
                        th.name = name.into_owned();
                    }
                    th.seen.last_t = t;
                    th.seen.last_ticks = ts.cpu_ticks;
                    th.fd = fd;
                }
            }
            if self.has_children_files && (tid == pid || all_children) {
                self.path.clear();
                let _ = write!(self.path, "/proc/{pid}/task/{tid}/children");
                let ok = if tid == pid {
                    read_proc(
                        &mut children_fd,
                        &self.path,
                        &mut self.buf,
                        &mut self.open_fds,
                    )
                } else {
                    read_into(std::path::Path::new(&self.path), &mut self.buf)
                };
                if ok {
                    for c in self.buf.split(|&b| b == b' ' || b == b'\n') {
                        if let Some(cpid) = std::str::from_utf8(c).ok().and_then(|s| s.parse().ok())
                        {
                            self.stack.push(cpid);
                        }
                    }
                }
            }
        }
        if let Some(p) = self.procs.get_mut(&pid) {
            p.children_fd = children_fd;
        }
    }

    /// Without `/proc/<pid>/task/<tid>/children` (kernels built without
    /// CONFIG_PROC_CHILDREN), descendants are found by scanning every process's parent.
    fn scan_children_by_ppid(&mut self) {
        let mut tree = vec![self.root];
        procfs::add_descendants(&mut tree, &procfs::processes());
        self.stack.extend(tree);
    }

    pub fn finish(self, sampler_cpu_s: f64, interval: Duration) -> TreeCpu {
        let tps = self.ticks_per_s;
        let pct = |s: &Seen| {
            let span = s.last_t - s.first_t;
            let cpu = s.last_ticks.saturating_sub(s.first_ticks) as f64 / tps;
            let p = if span > 0.0 { 100.0 * cpu / span } else { 0.0 };
            (cpu, span, p)
        };
        let mut processes: Vec<ProcessCpu> = self
            .procs
            .iter()
            .map(|(pid, p)| {
                let (cpu_s, span_s, pct_of_core) = pct(&p.seen);
                ProcessCpu {
                    pid: *pid,
                    ppid: p.ppid,
                    label: p.label.clone(),
                    comm: p.comm.clone(),
                    cpu_s,
                    span_s,
                    pct_of_core,
                    series: p.series.clone(),
                }
            })
            .collect();
        processes.sort_by_key(|p| p.pid);
        let label_of: HashMap<i32, String> =
            processes.iter().map(|p| (p.pid, p.label.clone())).collect();
        let mut threads: Vec<ThreadCpu> = self
            .threads
            .iter()
            .map(|(tid, th)| {
                let (cpu_s, span_s, pct_of_core) = pct(&th.seen);
                ThreadCpu {
                    pid: th.pid,
                    process: label_of.get(&th.pid).cloned().unwrap_or_default(),
                    tid: *tid,
                    name: th.name.clone(),
                    cpu_s,
                    span_s,
                    pct_of_core,
                }
            })
            .collect();
        threads.sort_by(|a, b| {
            b.pct_of_core
                .total_cmp(&a.pct_of_core)
                .then(a.tid.cmp(&b.tid))
        });
        let span_s = self.last_sample_t - self.first_sample_t.unwrap_or(self.last_sample_t);
        let total: f64 = processes.iter().map(|p| p.cpu_s).sum();
        TreeCpu {
            interval_ms: interval.as_secs_f64() * 1000.0,
            samples: self.samples,
            span_s,
            tree_pct_of_core: if span_s > 0.0 {
                100.0 * total / span_s
            } else {
                0.0
            },
            threads,
            processes,
            sampler_cpu_s,
        }
    }
}

/// Wakes a sampler thread early (stop) instead of letting it sleep out its interval.
#[derive(Default)]
struct StopSignal {
    stopped: Mutex<bool>,
    cv: Condvar,
}

impl StopSignal {
    fn stop(&self) {
        if let Ok(mut g) = self.stopped.lock() {
            *g = true;
        }
        self.cv.notify_all();
    }
    /// Sleeps until `deadline` or a stop; true when stopped.
    fn wait_until(&self, deadline: Instant) -> bool {
        let Ok(mut g) = self.stopped.lock() else {
            return true;
        };
        loop {
            if *g {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            match self.cv.wait_timeout(g, deadline - now) {
                Ok((ng, _)) => g = ng,
                Err(_) => return true,
            }
        }
    }
}

/// A sampling loop on its own thread, stopped (and joined) early through its signal.
struct SamplerThread<T> {
    signal: Arc<StopSignal>,
    handle: Option<JoinHandle<T>>,
}

impl<T: Default + Send + 'static> SamplerThread<T> {
    /// Runs `body` on a named thread; `body` sleeps with `wait_until` and ends when it
    /// returns true.
    fn spawn(
        name: String,
        body: impl FnOnce(&StopSignal) -> T + Send + 'static,
    ) -> std::io::Result<Self> {
        let signal = Arc::new(StopSignal::default());
        let sig = signal.clone();
        let handle = std::thread::Builder::new()
            .name(name)
            .spawn(move || body(&sig))?;
        Ok(SamplerThread {
            signal,
            handle: Some(handle),
        })
    }

    fn stop(mut self) -> T {
        self.signal.stop();
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl<T> Drop for SamplerThread<T> {
    fn drop(&mut self) {
        self.signal.stop();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A tree sampler running on its own thread until [`TreeSampler::stop`].
pub struct TreeSampler(SamplerThread<(TreeCpu, Vec<i32>)>);

impl TreeSampler {
    /// Starts sampling the tree under `root` now and every `config.interval` after, on a
    /// fixed schedule (a slow sample does not shift the next ones).
    pub fn start(root: i32, config: &TreeSamplerConfig, t0: Instant) -> std::io::Result<Self> {
        let interval = config.interval.max(Duration::from_millis(1));
        let labels = config.labels.clone();
        SamplerThread::spawn("tree-sampler".into(), move |sig| {
            let cpu0 = procfs::thread_cpu_seconds();
            let mut walker = TreeWalker::new(root, labels, t0);
            let mut next = Instant::now();
            loop {
                walker.sample();
                next += interval;
                if sig.wait_until(next) {
                    break;
                }
            }
            // One last look, while an exited root is still an unreaped zombie.
            walker.sample();
            let pids = walker.live_pids();
            let used = procfs::thread_cpu_seconds() - cpu0;
            (walker.finish(used, interval), pids)
        })
        .map(TreeSampler)
    }

    /// Stops, takes a final sample, and returns what was seen and which tree pids still run.
    pub fn stop(self) -> (TreeCpu, Vec<i32>) {
        self.0.stop()
    }
}

/// What a generic sampler reads each interval.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum GenericSource {
    /// A file read whole each time (a sysfs node).
    File(PathBuf),
    /// A shell command run each time; its stdout is read.
    Command(String),
}

#[derive(Debug, Clone)]
pub struct GenericSpec {
    pub name: String,
    pub source: GenericSource,
    pub interval: Duration,
}

/// The series one generic sampler recorded: the first number of each reading.
#[derive(Debug, Clone, Serialize, Default)]
pub struct GenericSeries {
    pub name: String,
    /// (seconds since the run started, value)
    pub points: Vec<(f64, f64)>,
    /// Readings that failed or held no number.
    pub misses: u32,
    pub mean: Option<f64>,
    pub max: Option<f64>,
}

/// First decimal number in `s` (`"gpu busy: 37 %"` -> 37).
pub fn first_number(s: &str) -> Option<f64> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let starts_num = c.is_ascii_digit()
            || ((c == b'-' || c == b'.') && bytes.get(i + 1).is_some_and(|d| d.is_ascii_digit()));
        if starts_num {
            let mut j = i + 1;
            while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == b'.') {
                j += 1;
            }
            if let Ok(v) = s[i..j].parse::<f64>() {
                return Some(v);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    None
}

/// A generic sampler running on its own thread until [`GenericSampler::stop`].
pub struct GenericSampler(SamplerThread<GenericSeries>);

impl GenericSampler {
    pub fn start(spec: &GenericSpec, t0: Instant, cwd: Option<PathBuf>) -> std::io::Result<Self> {
        let spec = spec.clone();
        SamplerThread::spawn(format!("sampler-{}", spec.name), move |sig| {
            let mut series = GenericSeries {
                name: spec.name.clone(),
                ..GenericSeries::default()
            };
            let mut next = Instant::now();
            loop {
                let reading = match &spec.source {
                    GenericSource::File(p) => std::fs::read_to_string(p).ok(),
                    GenericSource::Command(c) => {
                        let mut cmd = std::process::Command::new("/bin/sh");
                        cmd.arg("-c").arg(c).stdin(std::process::Stdio::null());
                        if let Some(d) = &cwd {
                            cmd.current_dir(d);
                        }
                        cmd.output()
                            .ok()
                            .filter(|o| o.status.success())
                            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                    }
                };
                match reading.as_deref().and_then(first_number) {
                    Some(v) => series.points.push((t0.elapsed().as_secs_f64(), v)),
                    None => series.misses += 1,
                }
                next += spec.interval.max(Duration::from_millis(1));
                if sig.wait_until(next) {
                    break;
                }
            }
            let vals: Vec<f64> = series.points.iter().map(|p| p.1).collect();
            if !vals.is_empty() {
                series.mean = Some(vals.iter().sum::<f64>() / vals.len() as f64);
                series.max = vals.iter().copied().reduce(f64::max);
            }
            series
        })
        .map(GenericSampler)
    }

    pub fn stop(self) -> GenericSeries {
        self.0.stop()
    }
}

/// A phase boundary: from `at_s` (seconds since the run started) on, the run is in `name`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseMark {
    pub at_s: f64,
    pub name: String,
}

/// CPU of one process within one phase.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PhaseCpu {
    pub phase: String,
    pub process: String,
    pub pid: i32,
    pub cpu_s: f64,
    pub span_s: f64,
    pub pct_of_core: f64,
}

/// Splits each process's CPU by phase. Time before the first mark is phase `before`.
/// Each sampling interval's CPU goes to the phase its midpoint falls in; a phase's span is
/// its wall time while the tree was observed, so processes idle in a phase read 0 %.
pub fn cpu_by_phase(cpu: &TreeCpu, marks: &[PhaseMark]) -> Vec<PhaseCpu> {
    let mut marks: Vec<&PhaseMark> = marks.iter().collect();
    marks.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    let phase_at = |t: f64| -> &str {
        marks
            .iter()
            .rev()
            .find(|m| m.at_s <= t)
            .map(|m| m.name.as_str())
            .unwrap_or("before")
    };
    // Phase wall spans over the whole observation, from the union of every process's
    // sampling instants (the tree sampler samples all processes at the same instants).
    let mut instants: Vec<f64> = cpu
        .processes
        .iter()
        .flat_map(|p| p.series.iter().map(|s| s.0))
        .collect();
    instants.sort_by(f64::total_cmp);
    instants.dedup();
    let mut span_of: Vec<(String, f64)> = Vec::new();
    for w in instants.windows(2) {
        let name = phase_at((w[0] + w[1]) / 2.0);
        match span_of.iter_mut().find(|(n, _)| n == name) {
            Some(e) => e.1 += w[1] - w[0],
            None => span_of.push((name.to_string(), w[1] - w[0])),
        }
    }
    let mut out = Vec::new();
    for p in &cpu.processes {
        let mut by: Vec<(String, f64)> = span_of.iter().map(|(n, _)| (n.clone(), 0.0)).collect();
        for w in p.series.windows(2) {
            let name = phase_at((w[0].0 + w[1].0) / 2.0);
            if let Some(e) = by.iter_mut().find(|(n, _)| n == name) {
                e.1 += (w[1].1 - w[0].1).max(0.0);
            }
        }
        for ((phase, cpu_s), (_, span)) in by.into_iter().zip(&span_of) {
            out.push(PhaseCpu {
                pct_of_core: if *span > 0.0 {
                    100.0 * cpu_s / span
                } else {
                    0.0
                },
                phase,
                process: p.label.clone(),
                pid: p.pid,
                cpu_s,
                span_s: *span,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_number_finds_numbers() {
        assert_eq!(first_number("gpu busy: 37 %"), Some(37.0));
        assert_eq!(first_number("  12.5\n"), Some(12.5));
        assert_eq!(first_number("-3 degrees"), Some(-3.0));
        assert_eq!(first_number("none"), None);
    }

    #[test]
    fn phases_split_cpu_by_midpoint() {
        let cpu = TreeCpu {
            processes: vec![ProcessCpu {
                pid: 1,
                ppid: 0,
                label: "host".into(),
                comm: "java".into(),
                cpu_s: 0.0,
                span_s: 0.0,
                pct_of_core: 0.0,
                // Idle for 1 s, then a full core for 1 s.
                series: vec![(0.0, 0.0), (0.5, 0.0), (1.0, 0.0), (1.5, 0.5), (2.0, 1.0)],
            }],
            ..TreeCpu::default()
        };
        let marks = vec![PhaseMark {
            at_s: 1.0,
            name: "bots".into(),
        }];
        let rows = cpu_by_phase(&cpu, &marks);
        let before = rows.iter().find(|r| r.phase == "before").unwrap();
        let bots = rows.iter().find(|r| r.phase == "bots").unwrap();
        assert!((before.pct_of_core - 0.0).abs() < 1e-9);
        assert!((bots.pct_of_core - 100.0).abs() < 1e-9);
        assert!((bots.span_s - 1.0).abs() < 1e-9);
    }
}
