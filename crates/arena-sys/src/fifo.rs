//! Opening a user-named input that may be a FIFO, and saying so when that waits.
//!
//! Opening a FIFO for reading blocks until a writer opens the other end: the standard
//! behaviour, kept here (`--pilot <(gen)` hands over a pipe). What is added is one line on
//! stderr once the wait has lasted [`ANNOUNCE_AFTER`], so a forgotten writer is not
//! mistaken for a hang, on a terminal or in a CI log alike:
//!
//! ```text
//! arena-perf: waiting for a writer on FIFO /tmp/gc.fifo (a GC log (-Xlog:gc))
//! ```
//!
//! A path that is not a FIFO costs one `stat` more than `File::open`.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

/// How long an open may wait for a writer before the line is printed.
pub const ANNOUNCE_AFTER: Duration = Duration::from_secs(2);

/// Opens `path` for reading like `File::open`. When it is a FIFO with no writer yet,
/// prints `arena-perf: waiting for a writer on FIFO <path> (<what>)` to stderr after
/// [`ANNOUNCE_AFTER`], then keeps waiting. `what` names the input ("matrix file").
pub fn open_announced(path: &Path, what: &str) -> io::Result<File> {
    open_with(path, what, ANNOUNCE_AFTER, &mut |line| eprintln!("{line}"))
}

/// The most a file read whole as text (a pilot, matrix or rules file) may hold: 16 MiB.
/// Such a file is a few kilobytes; `/dev/zero` or an endless FIFO would otherwise be read
/// until memory runs out.
pub const MAX_TEXT_BYTES: u64 = 16 << 20;

/// [`open_announced`]'s whole file as text, at most [`MAX_TEXT_BYTES`].
pub fn read_to_string_announced(path: &Path, what: &str) -> io::Result<String> {
    let mut text = String::new();
    let file = open_announced(path, what)?;
    io::Read::read_to_string(&mut io::Read::take(file, MAX_TEXT_BYTES + 1), &mut text)?;
    if text.len() as u64 > MAX_TEXT_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("longer than 16 MiB, more than any {what} holds: not read further"),
        ));
    }
    Ok(text)
}

/// [`open_announced`] with the delay and the announcer given: `announce` gets the line at
/// most once, and only when `path` is a FIFO whose open has not finished after `after`.
pub fn open_with(
    path: &Path,
    what: &str,
    after: Duration,
    announce: &mut dyn FnMut(&str),
) -> io::Result<File> {
    let fifo = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
    if !fifo {
        return File::open(path);
    }
    // The open blocks in the kernel until a writer appears: it runs on its own thread so
    // that this one can time it. The thread ends when the open does.
    let (tx, rx) = mpsc::sync_channel(1);
    let owned = path.to_path_buf();
    std::thread::Builder::new()
        .name("fifo-open".into())
        .spawn(move || {
            let _ = tx.send(File::open(owned));
        })?;
    let gone = || io::Error::other(format!("{}: the open ended with no result", path.display()));
    match rx.recv_timeout(after) {
        Ok(opened) => opened,
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(gone()),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            announce(&format!(
                "arena-perf: waiting for a writer on FIFO {} ({what})",
                path.display()
            ));
            rx.recv().map_err(|_| gone())?
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::path::PathBuf;
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("arena-sys-fifo-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn mkfifo(p: &Path) {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(
            unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
            0,
            "mkfifo {p:?}"
        );
    }

    /// No line before 2 s, exactly one after, and the open then still completes when a
    /// writer comes: the reader gets the writer's bytes.
    #[test]
    fn a_fifo_without_a_writer_is_announced_once_after_two_seconds() {
        let dir = scratch("wait");
        let fifo = dir.join("in.fifo");
        mkfifo(&fifo);
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let reader = {
            let (fifo, lines) = (fifo.clone(), lines.clone());
            std::thread::spawn(move || {
                let mut announce = |l: &str| lines.lock().unwrap().push(l.to_string());
                let mut f = open_with(&fifo, "a GC log", ANNOUNCE_AFTER, &mut announce).unwrap();
                let mut text = String::new();
                f.read_to_string(&mut text).unwrap();
                text
            })
        };
        let start = Instant::now();
        std::thread::sleep(Duration::from_millis(1500));
        assert!(
            lines.lock().unwrap().is_empty(),
            "{:?}",
            lines.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(1000));
        assert_eq!(
            *lines.lock().unwrap(),
            [format!(
                "arena-perf: waiting for a writer on FIFO {} (a GC log)",
                fifo.display()
            )]
        );
        assert!(start.elapsed() < Duration::from_secs(4));
        let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        w.write_all(b"GC(0) Pause Young\n").unwrap();
        drop(w);
        assert_eq!(reader.join().unwrap(), "GC(0) Pause Young\n");
        assert_eq!(lines.lock().unwrap().len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A writer already there: the open completes at once and nothing is said.
    #[test]
    fn a_fifo_with_a_writer_is_not_announced() {
        let dir = scratch("writer");
        let fifo = dir.join("in.fifo");
        mkfifo(&fifo);
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
                w.write_all(b"x").unwrap();
            })
        };
        let mut lines = Vec::new();
        let start = Instant::now();
        let mut f = open_with(&fifo, "input", ANNOUNCE_AFTER, &mut |l| {
            lines.push(l.to_string())
        })
        .unwrap();
        let mut text = String::new();
        f.read_to_string(&mut text).unwrap();
        writer.join().unwrap();
        assert!(start.elapsed() < Duration::from_secs(1));
        assert_eq!(text, "x");
        assert!(lines.is_empty(), "{lines:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A regular file opens without waiting and without a line; a missing one fails as
    /// `File::open` does.
    #[test]
    fn a_regular_file_opens_at_once() {
        let dir = scratch("plain");
        let plain = dir.join("gc.log");
        std::fs::write(&plain, "text\n").unwrap();
        let mut lines = Vec::new();
        let start = Instant::now();
        let mut f = open_with(&plain, "a GC log", ANNOUNCE_AFTER, &mut |l| {
            lines.push(l.to_string())
        })
        .unwrap();
        assert!(start.elapsed() < Duration::from_millis(500));
        let mut text = String::new();
        f.read_to_string(&mut text).unwrap();
        assert_eq!(text, "text\n");
        assert!(lines.is_empty(), "{lines:?}");
        let missing = open_with(&dir.join("none"), "x", ANNOUNCE_AFTER, &mut |_| {}).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        assert_eq!(read_to_string_announced(&plain, "x").unwrap(), "text\n");
        // An endless device is read to the bound, not until memory runs out.
        let e = read_to_string_announced(Path::new("/dev/zero"), "pilot file").unwrap_err();
        assert!(
            e.to_string()
                .contains("longer than 16 MiB, more than any pilot file"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
