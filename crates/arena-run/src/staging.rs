//! A run folder that appears whole or not at all. A run writes everything (the capture as
//! it comes, the trace, then `run.json`, `loops.csv` and the events) into a hidden sibling,
//! `.<name>.partial-<pid>`, and renames it to its name once the last file is in. A process
//! killed mid-run leaves that hidden folder and no run under the name; folders of runs skip
//! hidden entries ([`crate::Run::find_all`]), so nothing half-written is ever read as a run.
//! A rename is atomic but not durable: after a power loss the new name may point at files
//! whose blocks never reached the disk. So every file and the folder are synced before the
//! rename, and the parent after it.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};

/// The hidden folder a run is written into, and the name it takes when published.
#[derive(Debug)]
pub struct Staging {
    dir: PathBuf,
    target: PathBuf,
    published: bool,
}

impl Staging {
    /// Creates the hidden sibling of `target` (and `target`'s parent, if need be).
    pub fn new(target: &Path) -> Result<Staging> {
        let name = target
            .file_name()
            .ok_or_else(|| anyhow!("{}: a run folder needs a name", target.display()))?;
        let parent = target.parent().unwrap_or(Path::new(""));
        if !parent.as_os_str().is_empty() {
            fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        let dir = parent.join(format!(
            ".{}.partial-{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        // A folder left by a process of the same PID that was killed: not ours to keep.
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Staging {
            dir,
            target: target.to_path_buf(),
            published: false,
        })
    }

    /// Where the run's files go until it is published.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Renames the folder to its name: one step, so a reader sees the whole run or none.
    /// An empty folder already at the name (made by hand for `--out`) is replaced; one
    /// with anything in it is an error, and the run stays in the hidden folder, named.
    pub fn publish(mut self) -> Result<PathBuf> {
        if fs::symlink_metadata(&self.target).is_ok_and(|m| m.is_dir()) {
            let _ = fs::remove_dir(&self.target);
        }
        sync_tree(&self.dir)?;
        fs::rename(&self.dir, &self.target).with_context(|| {
            format!(
                "moving the run from {} to {}",
                self.dir.display(),
                self.target.display()
            )
        })?;
        self.published = true;
        sync_dir(self.target.parent().unwrap_or(Path::new("")))?;
        Ok(self.target.clone())
    }
}

/// Syncs every regular file under `dir`, then `dir` itself, so its names and contents are
/// on disk before it is renamed into view.
pub fn sync_tree(dir: &Path) -> Result<()> {
    let entries = fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let kind = entry
            .file_type()
            .with_context(|| format!("reading {}", entry.path().display()))?;
        if kind.is_dir() {
            sync_tree(&entry.path())?;
        } else if kind.is_file() {
            let path = entry.path();
            fs::File::open(&path)
                .and_then(|f| f.sync_all())
                .with_context(|| format!("syncing {}", path.display()))?;
        }
    }
    sync_dir(dir)
}

/// Syncs a folder's entries (a rename into it, a file made in it); `""` is the current one.
pub fn sync_dir(dir: &Path) -> Result<()> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("syncing {}", dir.display()))
}

impl Drop for Staging {
    /// A run that ends before it could be written (its target never started) leaves no
    /// hidden folder behind; one whose publish failed keeps it, as its error says.
    fn drop(&mut self) {
        if !self.published && fs::read_dir(&self.dir).is_ok_and(|mut d| d.next().is_none()) {
            let _ = fs::remove_dir(&self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_under_the_name_until_publish_and_then_all_of_it() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("runs/20260101T000000Z-stock");
        let s = Staging::new(&target).unwrap();
        fs::write(s.dir().join("run.json"), "{}").unwrap();
        assert!(!target.exists());
        let hidden = s.dir().to_path_buf();
        assert!(hidden
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".20260101T000000Z-stock.partial-"));
        assert_eq!(s.publish().unwrap(), target);
        assert!(target.join("run.json").is_file());
        assert!(!hidden.exists());
    }

    #[test]
    fn an_empty_folder_at_the_name_is_replaced_a_full_one_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        fs::create_dir(&target).unwrap();
        let s = Staging::new(&target).unwrap();
        fs::write(s.dir().join("run.json"), "{}").unwrap();
        s.publish().unwrap();
        assert!(target.join("run.json").is_file());

        let s = Staging::new(&target).unwrap();
        fs::write(s.dir().join("run.json"), "{\"new\":1}").unwrap();
        let hidden = s.dir().to_path_buf();
        let e = s.publish().unwrap_err();
        assert!(
            format!("{e:#}").contains(&hidden.display().to_string()),
            "{e:#}"
        );
        assert_eq!(fs::read_to_string(target.join("run.json")).unwrap(), "{}");
        assert!(
            hidden.join("run.json").is_file(),
            "the new run is kept, hidden"
        );
    }

    #[test]
    fn syncing_reaches_every_file_and_names_what_it_cannot_open() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::write(dir.join("sub/a.csv"), "x").unwrap();
        sync_tree(&dir).unwrap();
        // An unreadable file inside makes the sync fail, naming it, rather than pass over it.
        let locked = dir.join("sub/locked.csv");
        fs::write(&locked, "y").unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
        if fs::File::open(&locked).is_err() {
            let e = sync_tree(&dir).unwrap_err();
            assert!(format!("{e:#}").contains("locked.csv"), "{e:#}");
        }
        let e = sync_dir(&tmp.path().join("gone")).unwrap_err();
        assert!(format!("{e:#}").contains("gone"), "{e:#}");
    }

    #[test]
    fn a_run_that_wrote_nothing_leaves_no_hidden_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let s = Staging::new(&tmp.path().join("r")).unwrap();
        drop(s);
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}
