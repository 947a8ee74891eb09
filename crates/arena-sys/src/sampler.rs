//! CPU of process trees and thread groups sampled from `/proc` beside a measured run:
//! per-thread and per-process ticks ([`TreeWalker`]), a sampling thread on a fixed
//! schedule ([`Sampler`]), the machine's own busy time ([`procfs::machine_busy_ticks`]),
//! and the split of what was seen by phase ([`cpu_by_phase`]). The matrix samples a
//! command's tree with it; the pilot samples the processes it is told to, the fixture's
//! threads and Chromium.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use regex::Regex;
use serde::Serialize;

use crate::procfs::{self, parse_stat, read_into, TaskDir};

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
    /// The first sample that found the process gone (exited, a zombie included), seconds
    /// since the run started: it ended within one interval before. `None` while it ran.
    /// Not in the matrix's documents (docs/schema/matrix.json).
    #[serde(skip)]
    pub exited_at_s: Option<f64>,
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
    /// Exited but not reaped yet: its figures are final.
    zombie: bool,
    gone_at: Option<f64>,
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
    /// Only the root's threads whose name starts with this are counted (no children).
    thread_prefix: Option<String>,
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
            thread_prefix: None,
        }
    }

    /// A walker of one process's threads named `prefix...` only (its children are not
    /// walked): the process's CPU is theirs, ended ones included. The pilot samples the
    /// fixture's threads inside its own process this way.
    pub fn threads_named(pid: i32, prefix: &str, label: &str, t0: Instant) -> Self {
        let all = Regex::new("").expect("the empty regex compiles");
        let labels = vec![ProcessLabel {
            label: label.to_string(),
            cmdline: all,
        }];
        TreeWalker {
            thread_prefix: Some(prefix.to_string()),
            ..TreeWalker::new(pid, labels, t0)
        }
    }

    /// CPU seconds of everything counted at the last sample, every process together (for
    /// a caller that reads the walker between samples instead of at the end).
    pub fn sample_cpu_s(&self) -> f64 {
        let ticks: u64 = self
            .procs
            .values()
            .map(|p| p.seen.last_ticks.saturating_sub(p.seen.first_ticks))
            .sum();
        ticks as f64 / self.ticks_per_s
    }

    fn counts_thread(&self, name: &str) -> bool {
        self.thread_prefix
            .as_deref()
            .is_none_or(|p| name.starts_with(p))
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
        self.sample_at(self.t0.elapsed().as_secs_f64());
    }

    /// [`TreeWalker::sample`], dated `t` seconds after the walker's start: walkers sampled
    /// together share their instants, so their intervals line up.
    pub fn sample_at(&mut self, t: f64) {
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
        if !self.has_children_files && self.thread_prefix.is_none() {
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
        for p in self.procs.values_mut() {
            if (!p.alive || p.zombie) && p.gone_at.is_none() {
                p.gone_at = Some(t);
            }
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
                zombie: false,
                gone_at: None,
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
        entry.zombie = st.state == b'Z';
        entry.ppid = ppid;
        entry.seen.last_t = t;
        if self.thread_prefix.is_some() {
            // Counted from its threads once they are read, below.
            entry.seen.first_ticks = 0;
            self.sample_threads(pid, t, all_children);
            let sum = self.thread_ticks(pid);
            if let Some(p) = self.procs.get_mut(&pid) {
                p.seen.last_ticks = sum;
                p.series.push((t, sum as f64 / tps));
            }
            return;
        }
        entry.seen.last_ticks = ticks;
        entry.series.push((t, ticks as f64 / tps));
        if entry.zombie {
            return;
        }
        self.sample_threads(pid, t, all_children);
    }

    /// Ticks of the counted threads of `pid` since each was first seen.
    fn thread_ticks(&self, pid: i32) -> u64 {
        self.threads
            .values()
            .filter(|th| th.pid == pid && self.counts_thread(&th.name))
            .map(|th| th.seen.last_ticks.saturating_sub(th.seen.first_ticks))
            .sum()
    }

    /// Threads of `pid`, and the children each thread forked.
    fn sample_threads(&mut self, pid: i32, t: f64, all_children: bool) {
        use std::fmt::Write as _;
        let Some(entry) = self.procs.get_mut(&pid) else {
            return;
        };

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
            let descend = self.thread_prefix.is_none();
            if descend && self.has_children_files && (tid == pid || all_children) {
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
                    exited_at_s: p.gone_at,
                }
            })
            .collect();
        processes.sort_by_key(|p| p.pid);
        let label_of: HashMap<i32, String> =
            processes.iter().map(|p| (p.pid, p.label.clone())).collect();
        let mut threads: Vec<ThreadCpu> = self
            .threads
            .iter()
            .filter(|(_, th)| self.counts_thread(&th.name))
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
pub struct StopSignal {
    stopped: Mutex<bool>,
    cv: Condvar,
}

impl StopSignal {
    pub fn stop(&self) {
        if let Ok(mut g) = self.stopped.lock() {
            *g = true;
        }
        self.cv.notify_all();
    }
    /// Sleeps until `deadline` or a stop; true when stopped.
    pub fn wait_until(&self, deadline: Instant) -> bool {
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
pub struct SamplerThread<T> {
    signal: Arc<StopSignal>,
    handle: Option<JoinHandle<T>>,
}

impl<T: Default + Send + 'static> SamplerThread<T> {
    /// Runs `body` on a named thread; `body` sleeps with `wait_until` and ends when it
    /// returns true.
    pub fn spawn(
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

    pub fn stop(mut self) -> T {
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
pub struct TreeSampler(Sampler);

impl TreeSampler {
    /// Starts sampling the tree under `root` now and every `config.interval` after, on a
    /// fixed schedule (a slow sample does not shift the next ones).
    pub fn start(root: i32, config: &TreeSamplerConfig, t0: Instant) -> std::io::Result<Self> {
        let walker = TreeWalker::new(root, config.labels.clone(), t0);
        Sampler::start(vec![walker], config.interval, t0).map(TreeSampler)
    }

    /// Stops, takes a final sample, and returns what was seen and which tree pids still run.
    pub fn stop(self) -> (TreeCpu, Vec<i32>) {
        let mut s = self.0.stop();
        (
            s.trees.pop().unwrap_or_default(),
            s.live.pop().unwrap_or_default(),
        )
    }
}

/// What a [`Sampler`] saw: one [`TreeCpu`] per walker, in the order given, and the whole
/// machine's busy CPU at the same instants.
#[derive(Debug, Clone, Default)]
pub struct Sampled {
    pub trees: Vec<TreeCpu>,
    /// Per walker, the pids seen that still run.
    pub live: Vec<Vec<i32>>,
    /// (seconds since the run started, busy CPU seconds of every core since boot).
    pub machine: Vec<(f64, f64)>,
    pub interval_ms: f64,
    /// Samples taken (each walker and the machine once per sample).
    pub samples: u32,
    /// CPU the sampling thread used, seconds (its overhead, every walker together).
    pub sampler_cpu_s: f64,
}

/// Walkers sampled together on one thread, on a fixed schedule, until [`Sampler::stop`].
pub struct Sampler(SamplerThread<Sampled>);

impl Sampler {
    /// Samples every walker (and the machine) now and every `interval` after; a slow
    /// sample does not shift the next ones.
    pub fn start(
        mut walkers: Vec<TreeWalker>,
        interval: Duration,
        t0: Instant,
    ) -> std::io::Result<Self> {
        let interval = interval.max(Duration::from_millis(1));
        let tps = procfs::ticks_per_second();
        SamplerThread::spawn("tree-sampler".into(), move |sig| {
            let cpu0 = procfs::thread_cpu_seconds();
            let mut machine = Vec::new();
            let mut samples = 0;
            let mut next = Instant::now();
            loop {
                let mut take = || {
                    let t = t0.elapsed().as_secs_f64();
                    walkers.iter_mut().for_each(|w| w.sample_at(t));
                    if let Some(busy) = procfs::machine_busy_ticks() {
                        machine.push((t, busy as f64 / tps));
                    }
                    samples += 1;
                };
                take();
                next += interval;
                if sig.wait_until(next) {
                    // One last look, while an exited root is still an unreaped zombie.
                    take();
                    break;
                }
            }
            let live = walkers.iter_mut().map(TreeWalker::live_pids).collect();
            let used = procfs::thread_cpu_seconds() - cpu0;
            Sampled {
                trees: walkers
                    .into_iter()
                    .map(|w| w.finish(used, interval))
                    .collect(),
                live,
                machine,
                interval_ms: interval.as_secs_f64() * 1000.0,
                samples,
                sampler_cpu_s: used,
            }
        })
        .map(Sampler)
    }

    /// Stops, takes a final sample, and returns what was seen.
    pub fn stop(self) -> Sampled {
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

/// The phase `t` falls in: the last mark at or before it, else `before`.
fn phase_at<'m>(marks: &[&'m PhaseMark], t: f64) -> &'m str {
    marks
        .iter()
        .rev()
        .find(|m| m.at_s <= t)
        .map(|m| m.name.as_str())
        .unwrap_or("before")
}

fn sorted(marks: &[PhaseMark]) -> Vec<&PhaseMark> {
    let mut marks: Vec<&PhaseMark> = marks.iter().collect();
    marks.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    marks
}

/// One phase's wall time over the sampling instants.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseSpan {
    pub name: String,
    /// Wall time between sampling instants whose midpoint is in the phase, seconds.
    pub span_s: f64,
    /// Sampling intervals counted in the phase.
    pub intervals: u32,
}

/// Phases in order of first appearance over the sampling `instants` (sorted): each
/// interval between two instants goes to the phase its midpoint falls in.
pub fn phase_spans(instants: &[f64], marks: &[PhaseMark]) -> Vec<PhaseSpan> {
    let marks = sorted(marks);
    let mut out: Vec<PhaseSpan> = Vec::new();
    for w in instants.windows(2) {
        let name = phase_at(&marks, (w[0] + w[1]) / 2.0);
        match out.iter_mut().find(|p| p.name == name) {
            Some(p) => {
                p.span_s += w[1] - w[0];
                p.intervals += 1;
            }
            None => out.push(PhaseSpan {
                name: name.to_string(),
                span_s: w[1] - w[0],
                intervals: 1,
            }),
        }
    }
    out
}

/// Every process's sampling instants, sorted, once each: phase wall spans are taken over
/// the whole observation (the sampler samples all processes at the same instants).
pub fn instants(cpu: &TreeCpu) -> Vec<f64> {
    let mut instants: Vec<f64> = cpu
        .processes
        .iter()
        .flat_map(|p| p.series.iter().map(|s| s.0))
        .collect();
    instants.sort_by(f64::total_cmp);
    instants.dedup();
    instants
}

/// Splits each process's CPU by phase. Time before the first mark is phase `before`.
/// Each sampling interval's CPU goes to the phase its midpoint falls in; a phase's span is
/// its wall time while the tree was observed, so processes idle in a phase read 0 %.
pub fn cpu_by_phase(cpu: &TreeCpu, marks: &[PhaseMark]) -> Vec<PhaseCpu> {
    let spans = phase_spans(&instants(cpu), marks);
    let marks = sorted(marks);
    let mut out = Vec::new();
    for p in &cpu.processes {
        let mut by: Vec<f64> = vec![0.0; spans.len()];
        for w in p.series.windows(2) {
            let name = phase_at(&marks, (w[0].0 + w[1].0) / 2.0);
            if let Some(i) = spans.iter().position(|s| s.name == name) {
                by[i] += (w[1].1 - w[0].1).max(0.0);
            }
        }
        for (cpu_s, span) in by.into_iter().zip(&spans) {
            out.push(PhaseCpu {
                pct_of_core: if span.span_s > 0.0 {
                    100.0 * cpu_s / span.span_s
                } else {
                    0.0
                },
                phase: span.name.clone(),
                process: p.label.clone(),
                pid: p.pid,
                cpu_s,
                span_s: span.span_s,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
                exited_at_s: None,
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

    /// Spins until this thread has used `cpu_s` of CPU (not wall time: the machine may be
    /// loaded).
    fn spin(cpu_s: f64) {
        let c0 = procfs::thread_cpu_seconds();
        while procfs::thread_cpu_seconds() - c0 < cpu_s {
            std::hint::black_box(c0);
        }
    }

    #[test]
    fn a_thread_walker_counts_only_the_named_threads() {
        let t0 = Instant::now();
        let me = std::process::id() as i32;
        let mut w = TreeWalker::threads_named(me, "fixture-", "fixture", t0);
        w.sample();
        let (end_tx, end_rx) = std::sync::mpsc::channel::<()>();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let named = std::thread::Builder::new()
            .name("fixture-bot-9".into())
            .spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                spin(0.3);
                let _ = done_tx.send(());
                let _ = end_rx.recv();
            })
            .unwrap();
        w.sample();
        done_rx.recv().unwrap();
        w.sample();
        // The test's own thread spins too, and must not be counted.
        spin(0.3);
        w.sample();
        drop(end_tx);
        named.join().unwrap();
        w.sample();
        let cpu = w.finish(0.0, Duration::from_millis(100));
        let p = &cpu.processes[0];
        assert_eq!((cpu.processes.len(), p.label.as_str()), (1, "fixture"));
        assert!(cpu.threads.iter().all(|t| t.name.starts_with("fixture-")));
        let bot: f64 = cpu.threads.iter().map(|t| t.cpu_s).sum();
        assert!(
            bot > 0.25 && bot < 0.4,
            "the bot spun 0.3 s and showed {bot} s"
        );
        assert!((p.cpu_s - bot).abs() < 1e-9, "{} vs {bot}", p.cpu_s);
        // The ended thread's CPU stays in the series after it is gone.
        assert!((p.series.last().unwrap().1 - bot).abs() < 1e-9);
        assert_eq!(p.exited_at_s, None);
    }

    #[test]
    fn a_process_that_exits_is_dated_and_keeps_its_figures() {
        let mut cmd = std::process::Command::new("sleep");
        cmd.arg("0.2");
        let mut child = crate::spawn::own_group_with_death_signal(&mut cmd)
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let t0 = Instant::now();
        let mut w = TreeWalker::new(pid, Vec::new(), t0);
        w.sample();
        std::thread::sleep(Duration::from_millis(400));
        // Exited, not reaped: a zombie is gone too.
        w.sample();
        let zombie_at = t0.elapsed().as_secs_f64();
        let _ = child.wait();
        w.sample();
        let cpu = w.finish(0.0, Duration::from_millis(100));
        let p = &cpu.processes[0];
        let at = p.exited_at_s.expect("the exit is seen");
        assert!(at > 0.3 && at <= zombie_at, "exited at {at} s");
        assert_eq!(p.comm, "sleep");
        assert!(p.series.len() >= 2);
    }
}
