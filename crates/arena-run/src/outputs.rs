//! Outputs never overwrite inputs. A command that reads files or run folders and writes a
//! file checks, before any work, that none of its outputs is a file it reads, lies inside a
//! run folder it reads, or (for a folder it fills) holds one of its inputs; each refusal
//! exits 2 naming the flag, the output and the input. Paths are compared after resolving
//! `.`, `..` and symlinks, so `runs/a/../a/run.json` and a link into `runs/a` are caught.
//!
//! And `pilot --out DIR --force` onto an existing run replaces the folder whole: the run is
//! written into a hidden sibling, then swapped in ([`Replacement`]).

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::{EVENTS_JSONL, LOOPS_CSV, RUN_JSON};
use anyhow::Result;
use arena_report::Exit;

/// Something a command writes, and the flag that named it.
#[derive(Debug, Clone, Copy)]
pub struct Output<'a> {
    pub flag: &'a str,
    pub path: &'a Path,
    /// A folder the command fills (a run folder), rather than one file.
    pub folder: bool,
}

impl<'a> Output<'a> {
    pub fn file(flag: &'a str, path: &'a Path) -> Self {
        Output {
            flag,
            path,
            folder: false,
        }
    }

    pub fn folder(flag: &'a str, path: &'a Path) -> Self {
        Output {
            flag,
            path,
            folder: true,
        }
    }
}

/// True when `dir` holds a run's record: `run.json`, `loops.csv` or `events.jsonl`.
pub fn is_run_folder(dir: &Path) -> bool {
    [RUN_JSON, LOOPS_CSV, EVENTS_JSONL]
        .iter()
        .any(|f| dir.join(f).is_file())
}

/// An input as given on the command line and as it resolves.
struct Input {
    given: PathBuf,
    real: PathBuf,
    run_folder: bool,
}

/// The inputs that exist, resolved; a folder of runs also stands for each run folder in it
/// (as `compare` expands it). One that does not resolve is left to the command to report.
fn resolve_inputs<'p>(paths: impl IntoIterator<Item = &'p Path>) -> Vec<Input> {
    let mut out = Vec::new();
    for given in paths {
        let Ok(real) = std::fs::canonicalize(given) else {
            continue;
        };
        let run_folder = real.is_dir() && is_run_folder(&real);
        if real.is_dir() && !run_folder {
            let entries = std::fs::read_dir(&real).into_iter().flatten().flatten();
            for e in entries {
                let Ok(child) = std::fs::canonicalize(e.path()) else {
                    continue;
                };
                if child.is_dir() && is_run_folder(&child) {
                    out.push(Input {
                        given: given.join(e.file_name()),
                        real: child,
                        run_folder: true,
                    });
                }
            }
        }
        out.push(Input {
            given: given.to_path_buf(),
            real,
            run_folder,
        });
    }
    out
}

/// `path` resolved as writing to it would: the whole path when it exists; else its nearest
/// existing ancestor resolved and the rest put back (`..` taken lexically), a dangling
/// symlink followed to where it points.
fn resolve_output(path: &Path) -> Option<PathBuf> {
    resolve_output_within(path, 8)
}

fn resolve_output_within(path: &Path, links: u32) -> Option<PathBuf> {
    if let Ok(real) = std::fs::canonicalize(path) {
        return Some(real);
    }
    let abs = match path.is_absolute() {
        true => path.to_path_buf(),
        false => std::env::current_dir().ok()?.join(path),
    };
    if links > 0 {
        if let Ok(target) = std::fs::read_link(&abs) {
            let parent = abs.parent().unwrap_or(Path::new("/"));
            return resolve_output_within(&parent.join(target), links - 1);
        }
    }
    let parts: Vec<Component> = abs.components().collect();
    for k in (1..parts.len()).rev() {
        let prefix: PathBuf = parts[..k].iter().collect();
        let Ok(mut real) = std::fs::canonicalize(&prefix) else {
            continue;
        };
        for c in &parts[k..] {
            match c {
                Component::ParentDir => {
                    real.pop();
                }
                Component::Normal(name) => real.push(name),
                _ => {}
            }
        }
        return Some(real);
    }
    None
}

/// The same file under two names (a hard link, a bind mount): same device and inode.
#[cfg(unix)]
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.is_file() && a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &Path, _: &Path) -> bool {
    false
}

/// `--out report/x.html` with no `report/`: said before any work, naming the folder.
pub fn parent_exists(file: &Path, flag: &str) -> Result<()> {
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => return Ok(()),
    };
    if !parent.is_dir() {
        return Err(Exit::bad_input(format!(
            "{flag} {}: folder {} does not exist (create it first)",
            file.display(),
            parent.display()
        ))
        .into());
    }
    Ok(())
}

/// Refuses (exit 2) any of `outputs` that would overwrite one of `inputs` (files, run
/// folders, folders of runs): an output that is an input, lies inside an input run folder,
/// or is a folder holding an input. Call it before any work, so nothing has been written.
pub fn refuse_overwrite<'p>(
    inputs: impl IntoIterator<Item = &'p Path>,
    outputs: &[Output<'_>],
) -> Result<()> {
    let inputs = resolve_inputs(inputs);
    for out in outputs {
        let Some(real) = resolve_output(out.path) else {
            continue;
        };
        for i in &inputs {
            let given = i.given.display();
            let why = if real == i.real || same_file(&real, &i.real) {
                format!("would overwrite {given}")
            } else if i.run_folder && real.starts_with(&i.real) {
                match (real.strip_prefix(&i.real), real.exists()) {
                    (Ok(file), true) => format!(
                        "would overwrite {} of the run folder {given}",
                        file.display()
                    ),
                    _ => format!("would write inside the run folder {given}"),
                }
            } else if out.folder && i.real.starts_with(&real) {
                format!("would fill the folder holding {given}")
            } else {
                continue;
            };
            return Err(Exit::bad_input(format!(
                "{} {}: {why}, which this command reads (outputs never overwrite inputs: \
                 write it elsewhere)",
                out.flag,
                out.path.display(),
            ))
            .into());
        }
        if !out.folder && is_database(&real) {
            return Err(Exit::bad_input(format!(
                "{} {}: would overwrite {}, an SQLite database (a history?), though this \
                 command does not read it: no output of this tool is one, so it is never \
                 written over (write it elsewhere)",
                out.flag,
                out.path.display(),
                real.display()
            ))
            .into());
        }
    }
    Ok(())
}

/// Whether `path` is a regular file that starts with SQLite's header: a history kept
/// where no flag of the command names it (a report's `--out` linked onto it was written
/// over, exit 0).
fn is_database(path: &Path) -> bool {
    use std::io::Read;
    const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
    let mut head = [0u8; 16];
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
        && std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut head))
            .is_ok()
        && &head == SQLITE_MAGIC
}

/// A run folder replaced whole (`pilot --out DIR --force`): the new run is written into
/// `.DIR.tmp-<pid>` beside it; [`Replacement::commit`] renames the old folder aside to
/// `.DIR.old-<pid>`, the new one into place, and removes the old. Each step is a rename in
/// one parent folder, so DIR is never a mix of the two runs: a crash leaves the old run in
/// DIR (or, between the two renames, in `.DIR.old-<pid>`) and the new one complete in the
/// staging folder, or the new run in DIR.
#[derive(Debug)]
pub struct Replacement {
    /// DIR as given.
    given: PathBuf,
    /// DIR resolved: the folder that is replaced (a symlink to a run is replaced where it
    /// points).
    target: PathBuf,
    staging: PathBuf,
    aside: PathBuf,
}

impl Replacement {
    /// Prepares to replace the existing folder `dir`; nothing is moved yet. A leftover
    /// staging folder of this name (a crashed run with the same process id) is removed.
    pub fn stage(dir: &Path) -> Result<Replacement> {
        let target = std::fs::canonicalize(dir)
            .map_err(|e| Exit::bad_input(format!("--out {}: {e}", dir.display())))?;
        let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(Exit::bad_input(format!(
                "--out {}: cannot replace the root folder",
                dir.display()
            ))
            .into());
        };
        let sibling = |what: &str| {
            let mut n = OsString::from(".");
            n.push(name);
            n.push(format!(".{what}-{}", std::process::id()));
            parent.join(n)
        };
        let r = Replacement {
            given: dir.to_path_buf(),
            staging: sibling("tmp"),
            aside: sibling("old"),
            target,
        };
        remove_leftover(&r.staging)?;
        Ok(r)
    }

    /// Where the new run is written.
    pub fn staging(&self) -> &Path {
        &self.staging
    }

    /// Swaps the written run into place and removes the old one; returns DIR as given.
    pub fn commit(self) -> Result<PathBuf> {
        if !is_run_folder(&self.staging) {
            return Err(anyhow::anyhow!(
                "replacing {}: the new run was not written into {}; the old run is untouched",
                self.given.display(),
                self.staging.display()
            ));
        }
        remove_leftover(&self.aside)?;
        crate::staging::sync_tree(&self.staging)?;
        let had_old = match std::fs::rename(&self.target, &self.aside) {
            Ok(()) => true,
            // Removed meanwhile: nothing to put aside.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => {
                return Err(anyhow::anyhow!(
                    "replacing {}: cannot move the old run aside ({e}); it is untouched, and \
                     the new run is in {}",
                    self.given.display(),
                    self.staging.display()
                ))
            }
        };
        if let Err(e) = std::fs::rename(&self.staging, &self.target) {
            let back = had_old && std::fs::rename(&self.aside, &self.target).is_ok();
            return Err(anyhow::anyhow!(
                "replacing {}: cannot move the new run into place ({e}); the new run is in {}, \
                 the old one {}",
                self.given.display(),
                self.staging.display(),
                match (had_old, back) {
                    (false, _) => "was gone already".to_string(),
                    (true, true) => "is back in place".to_string(),
                    (true, false) => format!("is in {}", self.aside.display()),
                }
            ));
        }
        if had_old {
            if let Err(e) = std::fs::remove_dir_all(&self.aside) {
                eprintln!(
                    "arena-perf: the replaced run is left in {}: {e}",
                    self.aside.display()
                );
            }
        }
        crate::staging::sync_dir(self.target.parent().unwrap_or(Path::new("")))?;
        Ok(self.given)
    }

    /// The run failed before its folder was complete: the staging folder goes, DIR stays.
    pub fn abandon(self) {
        let _ = std::fs::remove_dir_all(&self.staging);
    }
}

fn remove_leftover(dir: &Path) -> Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(anyhow::anyhow!(
            "removing the leftover {}: {e}",
            dir.display()
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_folder(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(RUN_JSON), "{}").unwrap();
        std::fs::write(dir.join(LOOPS_CSV), "index\n").unwrap();
    }

    fn refused(inputs: &[&Path], out: Output<'_>) -> Option<String> {
        refuse_overwrite(inputs.iter().copied(), &[out])
            .err()
            .map(|e| format!("{e:#}"))
    }

    #[test]
    fn an_output_inside_an_input_run_or_equal_to_an_input_file_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let runs = tmp.path().join("runs");
        let run = runs.join("a");
        run_folder(&run);
        let loops = run.join(LOOPS_CSV);
        let detour = runs.join("a").join("..").join("a").join(RUN_JSON);

        let e = refused(&[&run], Output::file("--out", &detour)).unwrap();
        assert!(
            e.contains("--out") && e.contains("run.json of the run folder"),
            "{e}"
        );
        // A folder of runs protects the runs in it, not the folder itself.
        let e = refused(&[&runs], Output::file("--summary", &loops)).unwrap();
        assert!(e.contains("--summary") && e.contains("runs/a"), "{e}");
        assert!(refused(&[&runs], Output::file("--out", &runs.join("x.html"))).is_none());
        // A new file under a new folder of a run is still inside it.
        let deep = run.join("new").join("..").join("new").join("x.svg");
        assert!(refused(&[&runs], Output::file("--plot", &deep)).is_some());
        // An input file, through a symlink.
        let link = tmp.path().join("link.csv");
        std::os::unix::fs::symlink(&loops, &link).unwrap();
        let e = refused(&[&loops], Output::file("--out", &link)).unwrap();
        assert!(e.contains("would overwrite"), "{e}");
        // A dangling symlink into a run folder.
        let dangling = tmp.path().join("dangling.html");
        std::os::unix::fs::symlink(run.join("page.html"), &dangling).unwrap();
        assert!(refused(&[&run], Output::file("--out", &dangling)).is_some());
        // A hard link to an input.
        let hard = tmp.path().join("hard.csv");
        std::fs::hard_link(&loops, &hard).unwrap();
        assert!(refused(&[&hard], Output::file("--out", &loops)).is_some());
        // A folder output holding an input.
        let pilot = tmp.path().join("p").join("pilot.toml");
        std::fs::create_dir_all(pilot.parent().unwrap()).unwrap();
        std::fs::write(&pilot, "").unwrap();
        let e = refused(&[&pilot], Output::folder("--out", pilot.parent().unwrap())).unwrap();
        assert!(e.contains("holding"), "{e}");
        // Elsewhere is fine; an input that does not exist is the command's to report.
        let other = tmp.path().join("report.html");
        assert!(refused(
            &[&run, &tmp.path().join("nope")],
            Output::file("--out", &other)
        )
        .is_none());
    }

    #[test]
    fn a_replacement_swaps_the_whole_folder_and_leaves_no_sibling() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        run_folder(&dir);
        std::fs::write(dir.join("wire.pcap"), "old").unwrap();
        let r = Replacement::stage(&dir).unwrap();
        assert!(r
            .staging()
            .starts_with(std::fs::canonicalize(tmp.path()).unwrap()));
        // Nothing written: the old run stays.
        let e = Replacement::stage(&dir).unwrap().commit().unwrap_err();
        assert!(format!("{e:#}").contains("untouched"), "{e:#}");
        assert!(dir.join("wire.pcap").is_file());
        run_folder(r.staging());
        assert_eq!(r.commit().unwrap(), dir);
        assert!(dir.join(RUN_JSON).is_file() && !dir.join("wire.pcap").exists());
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }
}
