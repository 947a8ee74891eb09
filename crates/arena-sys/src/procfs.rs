//! `/proc` readers for finding, sampling and cleaning up process trees.
//!
//! Samplers read thousands of stat files a second, so parsing borrows from a caller's
//! buffer and never allocates; the whole-table scans are for kill paths and tests, where
//! a `Vec` per call costs nothing that matters.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// The fields of `/proc/<pid>/stat` or `/proc/<pid>/task/<tid>/stat` this workspace uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat<'a> {
    /// Process or thread name (kernel `comm`, at most 15 bytes).
    pub comm: &'a [u8],
    /// One letter: `R`, `S`, `D`, `Z` (zombie: exited, not yet reaped), ...
    pub state: u8,
    pub ppid: i32,
    /// Process group.
    pub pgrp: i32,
    /// User + system CPU in clock ticks.
    pub cpu_ticks: u64,
    /// Start time in clock ticks since boot: with the pid, it names one process even
    /// after the pid is recycled.
    pub start_ticks: u64,
}

/// Parses a stat line. `comm` may hold spaces and parentheses, so the fields after it are
/// found from the LAST `)`.
pub fn parse_stat(buf: &[u8]) -> Option<Stat<'_>> {
    let open = buf.iter().position(|&b| b == b'(')?;
    let close = buf.iter().rposition(|&b| b == b')')?;
    if close < open {
        return None;
    }
    let comm = &buf[open + 1..close];
    let rest = buf.get(close + 2..)?;
    // Field 3 (state) is index 0 here; ppid 4, pgrp 5, utime 14, stime 15, starttime 22.
    let (mut state, mut ppid, mut pgrp) = (None, None, None);
    let (mut utime, mut stime, mut start) = (None, None, None);
    for (i, field) in rest.split(|&b| b == b' ').enumerate() {
        match i {
            0 => state = field.first().copied(),
            1 => ppid = parse_i64(field).map(|v| v as i32),
            2 => pgrp = parse_i64(field).map(|v| v as i32),
            11 => utime = parse_u64(field),
            12 => stime = parse_u64(field),
            19 => {
                start = parse_u64(field);
                break;
            }
            _ => {}
        }
    }
    Some(Stat {
        comm,
        state: state?,
        ppid: ppid?,
        pgrp: pgrp?,
        cpu_ticks: utime?.checked_add(stime?)?,
        start_ticks: start?,
    })
}

fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(v)
}

fn parse_i64(s: &[u8]) -> Option<i64> {
    match s.split_first() {
        Some((b'-', rest)) => parse_u64(rest).map(|v| -(v as i64)),
        _ => parse_u64(s).map(|v| v as i64),
    }
}

/// True when a stat line says the task is a zombie (exited, not yet reaped). Reads only
/// the state letter, so it holds on a line too short for [`parse_stat`].
pub fn is_zombie(buf: &[u8]) -> bool {
    buf.iter()
        .rposition(|&b| b == b')')
        .and_then(|i| buf.get(i + 2))
        .is_some_and(|&s| s == b'Z')
}

/// Reads a small file into `buf` (cleared first). `false` when it cannot be read, which for
/// `/proc` means the task is gone.
pub fn read_into(path: &Path, buf: &mut Vec<u8>) -> bool {
    buf.clear();
    match File::open(path) {
        Ok(mut f) => f.read_to_end(buf).is_ok(),
        Err(_) => false,
    }
}

/// `/proc/<pid>/stat`, read into `buf` and parsed; `None` once the process is gone.
pub fn stat(pid: i32, buf: &mut Vec<u8>) -> Option<Stat<'_>> {
    if !read_into(Path::new(&format!("/proc/{pid}/stat")), buf) {
        return None;
    }
    parse_stat(buf)
}

/// True while `pid` runs. A zombie counts as gone: it was killed, only its parent's wait
/// is missing.
pub fn alive(pid: i32) -> bool {
    let mut buf = Vec::with_capacity(512);
    read_into(Path::new(&format!("/proc/{pid}/stat")), &mut buf) && !is_zombie(&buf)
}

/// True while `/proc/<pid>` exists, zombies included: false only once it was reaped.
pub fn exists(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// One row of the process table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    pub state: u8,
    pub ppid: i32,
    pub pgrp: i32,
}

/// Every process, zombies included (their state is `Z`), from one pass over `/proc`.
pub fn processes() -> Vec<Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut buf = Vec::with_capacity(512);
    let mut out = Vec::new();
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(s) = stat(pid, &mut buf) {
            out.push(Proc {
                pid,
                state: s.state,
                ppid: s.ppid,
                pgrp: s.pgrp,
            });
        }
    }
    out
}

/// Adds to `set` every process of `table` whose parent is in it, transitively: a process
/// tree is found from its roots even where members moved to other groups.
pub fn add_descendants(set: &mut Vec<i32>, table: &[Proc]) {
    loop {
        let before = set.len();
        for p in table {
            if set.contains(&p.ppid) && !set.contains(&p.pid) {
                set.push(p.pid);
            }
        }
        if set.len() == before {
            break;
        }
    }
}

/// Clock ticks per second (`USER_HZ`), the unit of the stat CPU fields.
pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if v > 0 {
        v as f64
    } else {
        100.0
    }
}

/// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID); zero should the clock
/// be unreadable, which it never is on Linux.
pub fn thread_cpu() -> std::time::Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return std::time::Duration::ZERO;
    }
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// CPU time the calling thread has used, in seconds: what a sampler costs itself.
pub fn thread_cpu_seconds() -> f64 {
    thread_cpu().as_secs_f64()
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`).
pub fn loadavg() -> Option<[f64; 3]> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = s.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// The kernel's per-interface counters (`/proc/net/dev`), as text.
pub fn net_dev() -> std::io::Result<String> {
    std::fs::read_to_string("/proc/net/dev")
}

/// The kernel's release (`/proc/sys/kernel/osrelease`), `None` where unreadable.
pub fn kernel_release() -> Option<String> {
    read_trimmed("/proc/sys/kernel/osrelease")
}

/// The machine's host name (`/proc/sys/kernel/hostname`), `None` where unreadable.
pub fn hostname() -> Option<String> {
    read_trimmed("/proc/sys/kernel/hostname")
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Busy CPU ticks of the whole machine since boot, every core together (the `cpu` line
/// of `/proc/stat`): user, nice, system, irq, softirq and steal; idle and iowait are not
/// busy, and guest time is already inside user.
pub fn machine_busy_ticks() -> Option<u64> {
    let mut buf = Vec::with_capacity(4096);
    if !read_into(Path::new("/proc/stat"), &mut buf) {
        return None;
    }
    let line = buf.split(|&b| b == b'\n').next()?;
    let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
    if fields.next()? != b"cpu" {
        return None;
    }
    let v: Vec<u64> = fields.take(8).map(parse_u64).collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal
    let busy = [0, 1, 2, 5, 6, 7].iter().filter_map(|&i| v.get(i)).sum();
    (v.len() >= 7).then_some(busy)
}

/// Online logical cores: what a "total of N00 %" is out of. The machine's, whatever this
/// process is pinned to (`--cpu-split` leaves it half of them): `/proc/stat`'s total
/// counts every online core.
pub fn online_cores() -> usize {
    // SAFETY: sysconf has no preconditions.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .max(allowed_cores().len())
        .max(usize::try_from(online).unwrap_or(0))
}

/// The calling thread's affinity mask as core numbers.
pub fn allowed_cores() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Whole-process command line of `pid` with NULs as spaces, for labelling processes.
pub fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            let s: Vec<u8> = b.iter().map(|&c| if c == 0 { b' ' } else { c }).collect();
            String::from_utf8_lossy(&s).trim_end().to_string()
        })
        .unwrap_or_default()
}

/// An open `/proc/<pid>/task` directory, listed again with `rewinddir`: a sampler lists
/// threads every few milliseconds, and reopening the directory costs a path walk each time.
pub struct TaskDir(*mut libc::DIR);

// SAFETY: the DIR stream is only used through `&mut self`, by one thread at a time.
unsafe impl Send for TaskDir {}

impl TaskDir {
    pub fn open(pid: i32) -> Option<TaskDir> {
        let c = std::ffi::CString::new(format!("/proc/{pid}/task")).ok()?;
        // SAFETY: c is a valid NUL-terminated path.
        let d = unsafe { libc::opendir(c.as_ptr()) };
        (!d.is_null()).then_some(TaskDir(d))
    }

    /// Thread ids into `out` (cleared first); false when the process is gone.
    pub fn list(&mut self, out: &mut Vec<i32>) -> bool {
        out.clear();
        // SAFETY: self.0 is an open DIR stream owned by self.
        unsafe { libc::rewinddir(self.0) };
        let mut any = false;
        loop {
            // SAFETY: as above; the entry is valid until the next readdir on this stream.
            let ent = unsafe { libc::readdir(self.0) };
            if ent.is_null() {
                break;
            }
            any = true;
            // SAFETY: d_name is NUL-terminated within the entry.
            let name = unsafe { std::ffi::CStr::from_ptr((*ent).d_name.as_ptr()) };
            if let Some(tid) = std::str::from_utf8(name.to_bytes())
                .ok()
                .and_then(|s| s.parse().ok())
            {
                out.push(tid);
            }
        }
        any
    }
}

impl Drop for TaskDir {
    fn drop(&mut self) {
        // SAFETY: self.0 was returned by opendir and is closed once.
        unsafe { libc::closedir(self.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_comm_with_spaces_and_parens() {
        let line = b"4242 (my (odd) name) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 3 0 98765 1000 10\n";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.comm, b"my (odd) name");
        assert_eq!(s.ppid, 17);
        assert_eq!(s.cpu_ticks, 325);
        assert_eq!(s.start_ticks, 98765);
        assert_eq!((s.state, s.pgrp), (b'S', 4242));
    }

    #[test]
    fn rejects_truncated_lines() {
        assert!(parse_stat(b"12 (x) S 1 2 3").is_none());
        assert!(parse_stat(b"garbage").is_none());
        assert!(parse_stat(b"").is_none());
    }

    #[test]
    fn the_machine_is_busy_at_least_while_this_thread_spins() {
        let tps = ticks_per_second();
        let before = machine_busy_ticks().expect("/proc/stat has a cpu line");
        let (t, c0) = (std::time::Instant::now(), thread_cpu_seconds());
        while thread_cpu_seconds() - c0 < 0.3 {
            std::hint::black_box(c0);
        }
        let busy_s = (machine_busy_ticks().unwrap() - before) as f64 / tps;
        let wall = t.elapsed().as_secs_f64();
        // This thread used 0.3 s of CPU; no machine is busier than all its cores.
        let cores = online_cores() as f64;
        assert!(busy_s >= 0.25, "{busy_s} s busy");
        assert!(busy_s <= cores * wall + 0.05, "{busy_s} s busy in {wall} s");
        assert!(!allowed_cores().is_empty());
    }

    #[test]
    fn reads_own_stat() {
        let mut buf = Vec::new();
        assert!(read_into(Path::new("/proc/self/stat"), &mut buf));
        let s = parse_stat(&buf).unwrap();
        assert!(s.ppid > 0);
    }

    #[test]
    fn finds_itself_in_the_table_and_its_threads() {
        let me = std::process::id() as i32;
        assert!(alive(me) && exists(me));
        let table = processes();
        let row = table.iter().find(|p| p.pid == me).expect("own row");
        let mut set = vec![row.ppid];
        add_descendants(&mut set, &table);
        assert!(set.contains(&me));
        let mut tids = Vec::new();
        assert!(TaskDir::open(me).unwrap().list(&mut tids));
        assert!(tids.contains(&me));
    }
}
