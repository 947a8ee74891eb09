//! Samplers that run beside a measured command: per-thread and per-process CPU of its whole
//! process tree (from `arena_sys::sampler`, shared with the pilot), and a generic sampler
//! that reads a file or runs a command every interval (a GPU-busy sysfs node, a queue
//! depth).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

pub use arena_sys::sampler::*;

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

/// The most of a probe's output read: the first number is near the start.
const PROBE_MAX_BYTES: usize = 64 * 1024;

/// One reading of a command probe (`sh -c`), through arena-sys like every child: in its
/// own group, ended whole once it exits, or once it has taken the sampling interval (at
/// least a second), so a probe that hangs costs a miss, not the sampler.
fn probe(command: &str, cwd: Option<&std::path::Path>, interval: Duration) -> Option<String> {
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.arg("-c").arg(command);
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    let limit = interval.max(Duration::from_secs(1));
    arena_sys::child::output_within(cmd, limit, PROBE_MAX_BYTES)
        .ok()
        .flatten()
        .filter(|(status, _)| status.success())
        .map(|(_, out)| String::from_utf8_lossy(&out).into_owned())
}

/// A file sampler's reading: a regular file's first 4 KiB (a reading is one number). A FIFO
/// would block the sampler and the stop that waits for it, `/dev/zero` never end: either
/// is a miss, every interval.
pub(crate) fn read_reading(p: &std::path::Path) -> Option<String> {
    if !std::fs::metadata(p).ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    let file = std::fs::File::open(p).ok()?;
    std::io::Read::read_to_string(&mut std::io::Read::take(file, 4096), &mut text).ok()?;
    Some(text)
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
                    GenericSource::File(p) => read_reading(p),
                    GenericSource::Command(c) => probe(c, cwd.as_deref(), spec.interval),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_reads_its_number_and_one_that_hangs_is_a_miss_within_its_bound() {
        let d = Duration::from_millis(100);
        assert_eq!(
            probe("echo 'gpu busy: 37 %'", None, d)
                .as_deref()
                .and_then(first_number),
            Some(37.0)
        );
        assert_eq!(probe("echo 5; exit 1", None, d), None, "a failed probe");
        let t = Instant::now();
        assert_eq!(probe("echo 5; sleep 30", None, d), None);
        // The bound is the interval, at least a second; killing the group is quick.
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }

    #[test]
    fn a_file_reading_is_a_regular_files_start_and_a_fifo_or_device_a_miss() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("busy");
        std::fs::write(&file, "37\n").unwrap();
        assert_eq!(read_reading(&file).as_deref(), Some("37\n"));
        let fifo = d.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // No writer ever comes: a miss at once, not a sampler blocked in its open.
        let t = Instant::now();
        assert_eq!(read_reading(&fifo), None);
        assert_eq!(read_reading(std::path::Path::new("/dev/zero")), None);
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    }

    #[test]
    fn first_number_finds_numbers() {
        assert_eq!(first_number("gpu busy: 37 %"), Some(37.0));
        assert_eq!(first_number("  12.5\n"), Some(12.5));
        assert_eq!(first_number("-3 degrees"), Some(-3.0));
        assert_eq!(first_number("none"), None);
    }
}
