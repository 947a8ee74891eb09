//! Minimal `/proc` readers for the samplers: one `stat` line parsed without allocation.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// The fields of `/proc/<pid>/stat` or `/proc/<pid>/task/<tid>/stat` the samplers use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat<'a> {
    /// Process or thread name (kernel `comm`, at most 15 bytes).
    pub comm: &'a [u8],
    pub ppid: i32,
    /// User + system CPU in clock ticks.
    pub cpu_ticks: u64,
    /// Start time in clock ticks since boot.
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
    // Field 3 (state) is index 0 here; utime is field 14, stime 15, starttime 22.
    let mut ppid = None;
    let mut utime = None;
    let mut stime = None;
    let mut start = None;
    for (i, field) in rest.split(|&b| b == b' ').enumerate() {
        match i {
            1 => ppid = parse_i64(field).map(|v| v as i32),
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
        ppid: ppid?,
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

/// True when a stat line says the task is a zombie (exited, not yet reaped).
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

/// CPU time the calling thread has used, in seconds.
pub fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Whole-process name and command line of `pid`, for labelling processes.
pub fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            let s: Vec<u8> = b.iter().map(|&c| if c == 0 { b' ' } else { c }).collect();
            String::from_utf8_lossy(&s).trim_end().to_string()
        })
        .unwrap_or_default()
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
    }

    #[test]
    fn rejects_truncated_lines() {
        assert!(parse_stat(b"12 (x) S 1 2 3").is_none());
        assert!(parse_stat(b"garbage").is_none());
        assert!(parse_stat(b"").is_none());
    }

    #[test]
    fn reads_own_stat() {
        let mut buf = Vec::new();
        assert!(read_into(Path::new("/proc/self/stat"), &mut buf));
        let s = parse_stat(&buf).unwrap();
        assert!(s.ppid > 0);
    }
}
