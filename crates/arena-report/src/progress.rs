//! How progress looks on stderr. On a terminal: an indicatif bar with an ETA, the
//! occasional line printed above it. Elsewhere (a pipe, a CI log) or under `NO_COLOR`:
//! plain lines, one per 25 clicks, and never a control character. With `--quiet`: nothing.

use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How progress is shown.
/// How one step of a library's progress looks: a line above the bar, a step of the bar,
/// the bar's end, or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    Line(String),
    Step { what: String, done: u64, of: u64 },
    Done,
    Nothing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Quiet,
    /// One line per step worth telling, no control characters.
    Lines,
    /// A live bar on the terminal.
    Bar,
}

impl Mode {
    /// The mode for stderr as it is: a bar only on a terminal without `NO_COLOR`.
    /// As [`Mode::detect`] on a terminal, and quiet elsewhere: for commands whose output is
    /// the record (a matrix, a long read), where progress lines would only fill a log.
    pub fn terminal_only(quiet: bool) -> Mode {
        match std::io::stderr().is_terminal() {
            true => Mode::detect(quiet),
            false => Mode::Quiet,
        }
    }

    pub fn detect(quiet: bool) -> Mode {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        match (quiet, std::io::stderr().is_terminal() && !no_color) {
            (true, _) => Mode::Quiet,
            (false, true) => Mode::Bar,
            (false, false) => Mode::Lines,
        }
    }
}

/// Shows a command's progress events; one bar at a time.
pub struct Reporter {
    mode: Mode,
    bar: Mutex<Option<ProgressBar>>,
}

impl Reporter {
    pub fn new(mode: Mode) -> Reporter {
        Reporter {
            mode,
            bar: Mutex::new(None),
        }
    }

    /// A line that stays: above the bar on a terminal, else on its own.
    pub fn line(&self, text: &str) {
        match (self.mode, self.bar.lock().unwrap().as_ref()) {
            (Mode::Quiet, _) => {}
            (Mode::Bar, Some(bar)) => bar.println(text),
            _ => eprintln!("{text}"),
        }
    }

    /// Step `done` of `of` of the work called `what`.
    pub fn step(&self, what: &str, done: u64, of: u64) {
        match self.mode {
            Mode::Quiet => {}
            Mode::Lines if done.is_multiple_of(25) || done == of => eprintln!("{what} {done}/{of}"),
            Mode::Lines => {}
            Mode::Bar => {
                let mut slot = self.bar.lock().unwrap();
                let bar = slot.get_or_insert_with(|| new_bar(of));
                bar.set_length(of);
                bar.set_message(what.to_string());
                bar.set_position(done);
            }
        }
    }

    /// The work under way is over: its bar goes.
    pub fn done(&self) {
        if let Some(bar) = self.bar.lock().unwrap().take() {
            bar.finish_and_clear();
        }
    }

    /// A pilot event, shown.
    /// Shows one step of a library's progress (`arena_pilot::Progress::shown`).
    pub fn show(&self, s: Shown) {
        match s {
            Shown::Line(text) => self.line(&text),
            Shown::Step { what, done, of } => self.step(&what, done, of),
            Shown::Done => self.done(),
            Shown::Nothing => {}
        }
    }
}

impl Reporter {
    /// Runs `work` with a bar of bytes read (with an ETA when `total` is known), fed by
    /// polling `read` ten times a second; on a terminal only.
    pub fn reading<T>(
        &self,
        total: Option<u64>,
        read: &(dyn Fn() -> u64 + Sync),
        work: impl FnOnce() -> T,
    ) -> T {
        if self.mode != Mode::Bar {
            return work();
        }
        let bar = bytes_bar(total);
        let done = std::sync::atomic::AtomicBool::new(false);
        let out = std::thread::scope(|s| {
            s.spawn(|| {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    bar.set_position(read());
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            });
            let out = work();
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            out
        });
        bar.finish_and_clear();
        out
    }
}

/// The total of `files` when every one is a plain regular file (a pipe has no size, and
/// gzip's text is larger than its file).
pub fn plain_total(files: &[std::path::PathBuf]) -> Option<u64> {
    files
        .iter()
        .map(|f| {
            let m = std::fs::metadata(f).ok().filter(|m| m.is_file())?;
            let gz = f.extension().is_some_and(|e| e == "gz");
            (!gz).then_some(m.len())
        })
        .sum()
}

fn bytes_bar(total: Option<u64>) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
    let template = match total {
        Some(_) => "reading {bytes}/{total_bytes} [{bar:30}] {bytes_per_sec} ETA {eta}",
        None => "reading {bytes} {bytes_per_sec} {spinner}",
    };
    let style = ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.done();
    }
}

fn new_bar(len: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    let style =
        ProgressStyle::with_template("{msg} {pos}/{len} [{bar:30}] {elapsed_precise} ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
    bar.set_style(style);
    bar
}
