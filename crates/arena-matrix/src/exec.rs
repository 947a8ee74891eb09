//! Runs one command: its own process group, optional CPU pinning, a per-run timeout, lines
//! of stdout/stderr/a log file timestamped on arrival and matched against taps, samplers
//! beside it, and the whole group killed by pid on timeout, interrupt, or when the main
//! process ends with stragglers left.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arena_sys::kill::{self, Ended};
use arena_sys::spawn;
use regex::Regex;
use serde::Serialize;

use crate::lines::{Line, LineReader, Tee, MATCH_LINE_CAP};
use crate::sampler::{
    GenericSampler, GenericSeries, GenericSpec, TreeCpu, TreeSampler, TreeSamplerConfig,
};

/// Where a tap reads lines from.
#[derive(Debug, Clone, PartialEq)]
pub enum TapSource {
    Stdout,
    Stderr,
    /// A log file the command writes; tailed while it runs (a file replaced or truncated
    /// by the command is read from its start again).
    File(PathBuf),
}

/// A regex applied to every line of one source.
#[derive(Debug, Clone)]
pub struct Tap {
    pub source: TapSource,
    pub regex: Regex,
    /// Named group parsed as a number.
    pub value_group: Option<String>,
    /// Named group kept as text (a phase name).
    pub text_group: Option<String>,
    /// Named group `t` holding the line's own time in seconds, used instead of arrival.
    pub time_group: Option<String>,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// Seconds since spawn (or the line's own `t` group).
    pub t: f64,
    pub value: Option<f64>,
    pub text: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Launch {
    /// Run by `/bin/sh -c`.
    pub command: String,
    pub env: Vec<(String, String)>,
    pub workdir: Option<PathBuf>,
    /// Receives `<prefix>stdout.log` and `<prefix>stderr.tail`.
    pub run_dir: PathBuf,
    pub log_prefix: String,
    pub timeout: Duration,
    /// Cores the command (and everything it starts) may run on.
    pub pin: Option<Vec<usize>>,
    pub taps: Vec<Tap>,
    pub tree: Option<TreeSamplerConfig>,
    pub generic: Vec<GenericSpec>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    Exited { code: i32 },
    Signaled { signal: i32 },
    Timeout,
    Interrupted,
    SpawnFailed { error: String },
}

impl Outcome {
    pub fn success(&self) -> bool {
        matches!(self, Outcome::Exited { code: 0 })
    }

    /// The words a table cell shows: `died: exit 134`, `died: signal 6 (SIGABRT)`, `timeout`.
    pub fn describe(&self) -> String {
        match self {
            Outcome::Exited { code: 0 } => "ok".into(),
            Outcome::Exited { code } => format!("died: exit {code}"),
            Outcome::Signaled { signal } => match signal_name(*signal) {
                Some(n) => format!("died: signal {signal} ({n})"),
                None => format!("died: signal {signal}"),
            },
            Outcome::Timeout => "timeout".into(),
            Outcome::Interrupted => "interrupted".into(),
            Outcome::SpawnFailed { error } => format!("did not start: {error}"),
        }
    }
}

fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        libc::SIGABRT => "SIGABRT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGPIPE => "SIGPIPE",
        _ => return None,
    })
}

#[derive(Debug, Clone, Default)]
pub struct Finished {
    pub outcome: Option<Outcome>,
    /// Spawn to exit, seconds.
    pub wall_s: f64,
    /// Per tap, in `Launch::taps` order.
    pub hits: Vec<Vec<Hit>>,
    /// Per tap, in `Launch::taps` order: lines too long to read whole that it did not match.
    pub cut: Vec<CutLines>,
    pub cpu: Option<TreeCpu>,
    pub generic: Vec<GenericSeries>,
    pub stderr_tail: Vec<String>,
    /// Processes of the tree still running after the main process ended, killed by pid.
    pub stragglers_killed: usize,
}

const STDERR_TAIL_LINES: usize = 200;
/// Bytes read from a pipe or log file at a time.
const READ_CHUNK: usize = 64 * 1024;

/// Lines of one tap's source longer than [`MATCH_LINE_CAP`] whose first
/// [`MATCH_LINE_CAP`] bytes the tap did not match: a run with no matching line says so.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CutLines {
    pub count: u64,
    /// Bytes of the longest, its line end not counted.
    pub longest: u64,
}

impl CutLines {
    fn add(&mut self, len: u64) {
        self.count += 1;
        self.longest = self.longest.max(len);
    }
}

/// What the taps caught, per tap in `Launch::taps` order.
struct Caught {
    hits: Vec<Vec<Hit>>,
    cut: Vec<CutLines>,
}

type Hits = Arc<Mutex<Caught>>;

fn apply_taps(taps: &[Tap], src: &TapSource, text: &str, line: Line, t: f64, hits: &Hits) {
    for (i, tap) in taps.iter().enumerate() {
        if &tap.source != src {
            continue;
        }
        let Some(c) = tap.regex.captures(text) else {
            if line.cut() {
                if let Ok(mut h) = hits.lock() {
                    h.cut[i].add(line.len);
                }
            }
            continue;
        };
        let value = tap
            .value_group
            .as_deref()
            .and_then(|g| c.name(g))
            .and_then(|m| m.as_str().trim().replace(',', "").parse::<f64>().ok());
        let text = tap
            .text_group
            .as_deref()
            .and_then(|g| c.name(g))
            .map(|m| m.as_str().to_string());
        let t = tap
            .time_group
            .as_deref()
            .and_then(|g| c.name(g))
            .and_then(|m| m.as_str().trim().parse::<f64>().ok())
            .unwrap_or(t);
        if let Ok(mut h) = hits.lock() {
            h.hits[i].push(Hit { t, value, text });
        }
    }
}

/// Reads `reader` a line at a time through the taps, none of a line past
/// [`MATCH_LINE_CAP`] held; every byte goes on to `sink`, and the last lines to `tail`.
fn pump(
    reader: impl Read,
    src: TapSource,
    t0: Instant,
    taps: Arc<Vec<Tap>>,
    hits: Hits,
    sink: Option<std::io::BufWriter<File>>,
    tail: Option<Arc<Mutex<VecDeque<String>>>>,
) {
    let tee = Tee::new(reader, sink);
    let mut lines = LineReader::new(BufReader::with_capacity(READ_CHUNK, tee), MATCH_LINE_CAP);
    let take = |line: Line| {
        let text = String::from_utf8_lossy(line.head);
        apply_taps(&taps, &src, &text, line, t0.elapsed().as_secs_f64(), &hits);
        if let Some(tail) = &tail {
            if let Ok(mut q) = tail.lock() {
                if q.len() == STDERR_TAIL_LINES {
                    q.pop_front();
                }
                q.push_back(text.into_owned());
            }
        }
    };
    while let Ok(Some(line)) = lines.next_line() {
        take(line);
    }
    if let Some(line) = lines.rest() {
        take(line);
    }
    lines.into_inner().into_inner().finish();
}

/// A log file being tailed: its inode, and its lines from where reading stands.
struct LogTail {
    ino: u64,
    lines: Option<LineReader<BufReader<File>>>,
}

impl LogTail {
    /// The file at `path`, read from its end as it stands (`at_end`) or from its start.
    fn open(path: &Path, at_end: bool) -> LogTail {
        // A log is a regular file: a FIFO would block the open, `/dev/zero` never end.
        let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
        let Some(Ok(mut f)) = regular.then(|| File::open(path)) else {
            return LogTail {
                ino: 0,
                lines: None,
            };
        };
        if at_end && f.seek(SeekFrom::End(0)).is_err() {
            return LogTail {
                ino: 0,
                lines: None,
            };
        }
        LogTail {
            ino: f.metadata().map(|m| m.ino()).unwrap_or(0),
            lines: Some(LineReader::new(
                BufReader::with_capacity(READ_CHUNK, f),
                MATCH_LINE_CAP,
            )),
        }
    }

    /// Reads the file from its start again when it appeared, was replaced or truncated.
    fn follow(&mut self, path: &Path) {
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        let truncated = self.lines.as_ref().is_some_and(|l| {
            let mut f: &File = l.get_ref().get_ref();
            f.stream_position().is_ok_and(|at| meta.len() < at)
        });
        if self.lines.is_none() || meta.ino() != self.ino || truncated {
            *self = LogTail::open(path, false);
        }
    }
}

/// Tails a log file until `stop`, then reads what is left. Lines already in an existing
/// file belong to an earlier run.
fn tail_file(path: PathBuf, t0: Instant, taps: Arc<Vec<Tap>>, hits: Hits, stop: Arc<AtomicBool>) {
    let src = TapSource::File(path.clone());
    let mut log = LogTail::open(&path, true);
    let take = |line: Line| {
        let text = String::from_utf8_lossy(line.head);
        apply_taps(&taps, &src, &text, line, t0.elapsed().as_secs_f64(), &hits);
    };
    loop {
        let last = stop.load(Ordering::Acquire);
        log.follow(&path);
        if let Some(lines) = log.lines.as_mut() {
            while let Ok(Some(line)) = lines.next_line() {
                take(line);
            }
            if last {
                if let Some(line) = lines.rest() {
                    take(line);
                }
            }
        }
        if last {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How the reaped command ended, as an outcome.
fn reap(pid: i32) -> Option<Outcome> {
    Some(match kill::reap(pid)? {
        Ended::Exited(code) => Outcome::Exited { code },
        Ended::Signaled(signal) => Outcome::Signaled { signal },
    })
}

/// Runs `launch` to the end, its timeout, or `interrupt`. Never panics on the command's
/// behaviour; a command that cannot start is an outcome, not an error.
pub fn execute(launch: &Launch, interrupt: &AtomicBool) -> Finished {
    let mut fin = Finished {
        hits: vec![Vec::new(); launch.taps.len()],
        cut: vec![CutLines::default(); launch.taps.len()],
        ..Finished::default()
    };
    let _ = std::fs::create_dir_all(&launch.run_dir);
    let cmd = command_of(launch);
    let t0 = Instant::now();
    // From arena-sys's lasting thread, as every child: the parent-death signal follows the
    // thread that forks, not the process.
    let mut child = match spawn::spawn_from_lasting_thread(cmd) {
        Ok(c) => c,
        Err(e) => {
            fin.outcome = Some(Outcome::SpawnFailed {
                error: e.to_string(),
            });
            return fin;
        }
    };
    let pid = child.id() as i32;

    let taps = Arc::new(launch.taps.clone());
    let hits: Hits = Arc::new(Mutex::new(Caught {
        hits: fin.hits.clone(),
        cut: fin.cut.clone(),
    }));
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    let readers = Readers::start(&mut child, launch, t0, &taps, &hits, &tail);
    let tail_stop = Arc::new(AtomicBool::new(false));
    let tailers = start_tailers(launch, t0, &taps, &hits, &tail_stop);
    let tree = launch
        .tree
        .as_ref()
        .and_then(|cfg| TreeSampler::start(pid, cfg, t0).ok());
    let generic: Vec<GenericSampler> = launch
        .generic
        .iter()
        .filter_map(|g| GenericSampler::start(g, t0, launch.workdir.clone()).ok())
        .collect();

    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::Builder::new()
        .name("run-wait".into())
        .spawn(move || {
            kill::wait_exited(pid);
            let _ = tx.send(Instant::now());
        });
    // Drop the std handle without waiting: the pid is reaped below, after the last sample.
    drop(child);

    let (exited_at, forced) = wait_for_end(&rx, pid, t0 + launch.timeout, interrupt);
    fin.wall_s = exited_at.duration_since(t0).as_secs_f64();

    let (cpu, live) = match tree {
        Some(s) => {
            let (c, l) = s.stop();
            (Some(c), l)
        }
        None => (None, Vec::new()),
    };
    // The main process is a zombie now; anything else of the tree still running is a
    // straggler that would skew the next run.
    let stragglers: Vec<i32> = live.into_iter().filter(|&p| p != pid).collect();
    fin.stragglers_killed = stragglers.len();
    kill::signal_group(pid, libc::SIGKILL);
    for p in &stragglers {
        kill::signal_pid(*p, libc::SIGKILL);
    }
    let reaped = reap(pid);
    if let Ok(w) = waiter {
        let _ = w.join();
    }
    fin.outcome = forced.or(reaped).or(Some(Outcome::Exited { code: -1 }));
    fin.cpu = cpu;
    fin.generic = generic.into_iter().map(|g| g.stop()).collect();

    readers.finish();
    tail_stop.store(true, Ordering::Release);
    for t in tailers {
        let _ = t.join();
    }
    if let Ok(c) = hits.lock() {
        fin.hits = c.hits.clone();
        fin.cut = c.cut.clone();
    }
    fin.stderr_tail = tail
        .lock()
        .map(|q| q.iter().cloned().collect())
        .unwrap_or_default();
    write_tail(
        &launch
            .run_dir
            .join(format!("{}stderr.tail", launch.log_prefix)),
        &fin.stderr_tail,
    );
    fin
}

/// The shell command of `launch`, in a process group of its own, pinned if asked.
fn command_of(launch: &Launch) -> Command {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(&launch.command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("ARENA_RUN_DIR", &launch.run_dir);
    for (k, v) in &launch.env {
        cmd.env(k, v);
    }
    if let Some(d) = &launch.workdir {
        cmd.current_dir(d);
    }
    // If this process dies without cleaning up, the command dies with it.
    spawn::own_group_with_death_signal(&mut cmd);
    if let Some(cores) = &launch.pin {
        spawn::pin_to_cores(&mut cmd, cores);
    }
    cmd
}

/// The threads pumping the command's stdout and stderr through the taps.
struct Readers {
    threads: Vec<JoinHandle<()>>,
    done: mpsc::Receiver<()>,
}

impl Readers {
    fn start(
        child: &mut std::process::Child,
        launch: &Launch,
        t0: Instant,
        taps: &Arc<Vec<Tap>>,
        hits: &Hits,
        tail: &Arc<Mutex<VecDeque<String>>>,
    ) -> Readers {
        let stdout_log = File::create(
            launch
                .run_dir
                .join(format!("{}stdout.log", launch.log_prefix)),
        )
        .ok()
        .map(std::io::BufWriter::new);
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        let (done_tx, done) = mpsc::channel::<()>();
        if let Some(out) = child.stdout.take() {
            let (taps, hits, done) = (taps.clone(), hits.clone(), done_tx.clone());
            threads.extend(
                std::thread::Builder::new()
                    .name("run-stdout".into())
                    .spawn(move || {
                        pump(out, TapSource::Stdout, t0, taps, hits, stdout_log, None);
                        let _ = done.send(());
                    })
                    .ok(),
            );
        }
        if let Some(err) = child.stderr.take() {
            let (taps, hits, tail, done) = (taps.clone(), hits.clone(), tail.clone(), done_tx);
            threads.extend(
                std::thread::Builder::new()
                    .name("run-stderr".into())
                    .spawn(move || {
                        pump(err, TapSource::Stderr, t0, taps, hits, None, Some(tail));
                        let _ = done.send(());
                    })
                    .ok(),
            );
        }
        Readers { threads, done }
    }

    /// Readers end when the last holder of the pipes is gone; a process that escaped the
    /// group could hold them forever, so give up on it after a short wait.
    fn finish(self) {
        let give_up = Instant::now() + Duration::from_secs(2);
        let mut ended = 0;
        while ended < self.threads.len() {
            let left = give_up.saturating_duration_since(Instant::now());
            if self.done.recv_timeout(left).is_err() {
                break;
            }
            ended += 1;
        }
        for r in self.threads {
            if r.is_finished() {
                let _ = r.join();
            }
        }
    }
}

/// One tailing thread per distinct file the taps read.
fn start_tailers(
    launch: &Launch,
    t0: Instant,
    taps: &Arc<Vec<Tap>>,
    hits: &Hits,
    stop: &Arc<AtomicBool>,
) -> Vec<JoinHandle<()>> {
    let mut file_paths: Vec<PathBuf> = Vec::new();
    for tap in launch.taps.iter() {
        if let TapSource::File(p) = &tap.source {
            if !file_paths.contains(p) {
                file_paths.push(p.clone());
            }
        }
    }
    let mut tailers: Vec<JoinHandle<()>> = Vec::new();
    for p in file_paths {
        let (taps, hits, stop) = (taps.clone(), hits.clone(), stop.clone());
        tailers.extend(
            std::thread::Builder::new()
                .name("run-logtail".into())
                .spawn(move || tail_file(p, t0, taps, hits, stop))
                .ok(),
        );
    }
    tailers
}

/// Waits for the command's exit, its deadline or an interrupt; on the last two the group
/// gets SIGTERM, then SIGKILL after 300 ms. Returns when it ended and why, if forced.
fn wait_for_end(
    rx: &mpsc::Receiver<Instant>,
    pid: i32,
    deadline: Instant,
    interrupt: &AtomicBool,
) -> (Instant, Option<Outcome>) {
    loop {
        let now = Instant::now();
        let forced = if interrupt.load(Ordering::Relaxed) {
            Some(Outcome::Interrupted)
        } else if now >= deadline {
            Some(Outcome::Timeout)
        } else {
            None
        };
        if forced.is_some() {
            kill::signal_group(pid, libc::SIGTERM);
            let at = match rx.recv_timeout(Duration::from_millis(300)) {
                Ok(at) => at,
                Err(_) => {
                    kill::signal_group(pid, libc::SIGKILL);
                    rx.recv_timeout(Duration::from_secs(5))
                        .unwrap_or_else(|_| Instant::now())
                }
            };
            return (at, forced);
        }
        let step = (deadline - now).min(Duration::from_millis(50));
        match rx.recv_timeout(step) {
            Ok(at) => return (at, None),
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => return (Instant::now(), None),
        }
    }
}

fn write_tail(path: &Path, lines: &[String]) {
    if let Ok(mut f) = File::create(path) {
        for l in lines {
            let _ = writeln!(f, "{l}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_that_is_a_fifo_or_a_device_is_not_opened() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("phase");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let t = Instant::now();
        // `phase_file = "/dev/zero"` was read forever; a FIFO blocked the open.
        assert!(LogTail::open(&fifo, false).lines.is_none());
        assert!(LogTail::open(Path::new("/dev/zero"), true).lines.is_none());
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
        let log = d.path().join("log");
        std::fs::write(&log, "phase 1\n").unwrap();
        assert!(LogTail::open(&log, false).lines.is_some());
    }
}
