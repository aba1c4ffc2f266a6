//! Local disk's side of [`super::Storage`]: atomic replace and
//! create-if-absent through fsynced temporary files, chunked reads,
//! sweeping a dead writer's leftovers, and OS locks. Every function here
//! blocks: callers in async code run them on a blocking thread.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Local reads go through a buffer of this size.
pub(super) const READ_BUFFER: usize = 1 << 20;

/// A temporary name beside `path`, unique to this process and call, so two
/// writers of one document (two runs of a job, however they came to run at
/// once) can never interleave their bytes in one file:
/// `<name>.<pid>.<n>.tmp`.
fn unique_tmp(path: &Path) -> PathBuf {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".{}.{n}.tmp", std::process::id()));
    path.with_file_name(name)
}

/// `bytes` in an fsynced temporary file beside `path` (whose directory is
/// created if missing).
fn fsynced_tmp(path: &Path, bytes: &[u8]) -> std::io::Result<PathBuf> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = unique_tmp(path);
    let mut f = File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    Ok(tmp)
}

/// Atomic replace: tmp → fsync → rename → fsync the directory. With
/// `checkpoint`, the crash point `during-checkpoint` lies between the
/// fsync and the rename.
pub(super) fn replace(path: &Path, bytes: &[u8], checkpoint: bool) -> std::io::Result<()> {
    let tmp = fsynced_tmp(path, bytes)?;
    if checkpoint {
        crate::util::failpoint::hit("during-checkpoint");
    }
    std::fs::rename(&tmp, path)?;
    // Best effort: without it a power loss may bring back the previous
    // document, which is safe (its unit redoes work whose files are then
    // orphans), and some file systems refuse to sync a directory at all.
    if let Some(parent) = path.parent()
        && let Ok(d) = File::open(parent)
    {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically (readers — a metrics collector, a
/// person — see the old file or the new one), outside any output: the
/// same atomic replace as [`super::Storage::put_atomic`] on local disk.
pub fn replace_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, false)
}

/// Create-if-absent: an fsynced temporary file hard-linked to `path`
/// (which fails if `path` exists), then removed. Whether we created it.
pub(super) fn create(path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    let tmp = fsynced_tmp(path, bytes)?;
    let won = match std::fs::hard_link(&tmp, path) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    std::fs::remove_file(&tmp)?;
    Ok(won)
}

/// The next bytes of `file` into `buf`: how many (0 at its end).
pub(super) fn read_chunk(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match file.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// Deletes the files under `roots` (recursively) whose names `remove`
/// selects; how many were deleted. A directory that does not exist has
/// nothing to clean; one that cannot be read, or a file that cannot be
/// deleted, is logged and left: leftovers are harmless (listings and the
/// job's file names never include them) and the next run tries again.
pub(super) fn remove_files(
    mut roots: Vec<PathBuf>,
    modified_before: Option<std::time::SystemTime>,
    remove: impl Fn(&str) -> bool,
) -> usize {
    let mut removed = 0;
    while let Some(dir) = roots.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                tracing::warn!("cleanup: cannot read {}: {e}", dir.display());
                continue;
            }
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                roots.push(p);
            } else if p.file_name().and_then(|n| n.to_str()).is_some_and(&remove)
                && modified_before.is_none_or(|t| e.metadata().and_then(|m| m.modified()).is_ok_and(|m| m < t))
            {
                match std::fs::remove_file(&p) {
                    Ok(()) => removed += 1,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => tracing::warn!("cleanup: cannot delete {}: {e}", p.display()),
                }
            }
        }
    }
    removed
}

/// OS locks (`flock`) on files under a local output: held by the open
/// file, so the kernel drops a lock when its holder dies, however it dies.
#[derive(Debug, Clone)]
pub struct OsLocks {
    root: PathBuf,
}

impl OsLocks {
    pub(super) fn new(root: &Path) -> Self {
        OsLocks { root: root.into() }
    }

    /// The local path of `rel`, for messages and for reading a lock file.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Tries the lock of file `rel` (created if missing): `Some(file)`
    /// holds it until dropped, `None` means another process holds it.
    /// Blocks only briefly (no waiting for the lock).
    pub fn try_lock(&self, rel: &str) -> std::io::Result<Option<File>> {
        let path = self.root.join(rel);
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        let f = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path)?;
        match f.try_lock() {
            Ok(()) => Ok(Some(f)),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }

    /// The names of the files in directory `rel` ending in `suffix`, with
    /// it cut off. An error, not an empty list, when the directory cannot
    /// be read.
    pub fn names(&self, rel: &str, suffix: &str) -> std::io::Result<Vec<String>> {
        let entries = std::fs::read_dir(self.root.join(rel))?;
        Ok(entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(suffix)).map(str::to_string))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_beside_the_target_and_unique_per_call() {
        let p = std::path::Path::new("/out/_chainetl/j/units/u.json");
        let (a, b) = (unique_tmp(p), unique_tmp(p));
        assert_ne!(a, b);
        for t in [a, b] {
            assert_eq!(t.parent(), p.parent());
            let name = t.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                name.starts_with(&format!("u.json.{}.", std::process::id())) && name.ends_with(".tmp"),
                "{name}"
            );
        }
    }
}
