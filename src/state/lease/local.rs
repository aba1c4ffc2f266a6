//! Leases on local disk: an OS lock (`flock`) on `leases/<scope>.lock`,
//! held by the open file, so the kernel drops it when the process dies,
//! however it dies. The holder writes its [`LeaseDoc`] into the locked
//! file so that a second run can name it.

use super::{Claim, Holder, Lease, LeaseDoc, LeaseError, busy, describe_scope, overlaps};
use crate::sink::Sink;
use crate::state::StateError;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Takes the OS lock of the claimed scope, then checks that no run holds
/// an overlapping scope.
pub(super) async fn acquire(sink: Arc<Sink>, root: &Path, claim: &Claim) -> Result<Lease, LeaseError> {
    let (dir, scope) = (claim.dir.as_str(), claim.scope.as_str());
    let lock_rel = format!("{dir}/{scope}.lock");
    let io = |e: std::io::Error| StateError::io(&lock_rel, "locking", e);
    let lock = match try_lock_blocking(root, dir, scope).await {
        Ok(Some(f)) => f,
        Ok(None) => return Err(local_holder(root, dir, &claim.job, scope).await),
        Err(e) => return Err(io(e).into()),
    };
    // Overlapping scopes: hold ours, then try each other lock. The
    // second of two overlapping runs to get here sees the first's.
    for other in local_scopes(root, dir).map_err(io)? {
        if other != scope && overlaps(scope, &other) {
            let held = try_lock_blocking(root, dir, &other).await.map_err(io)?.is_none();
            if held {
                return Err(local_holder(root, dir, &claim.job, &other).await);
            }
        }
    }
    write_into(&lock, &claim.doc()).map_err(|e| StateError::io(&lock_rel, "writing", e))?;
    Ok(Lease {
        sink,
        rel: claim.rel.clone(),
        _lock: Some(lock),
        renew: None,
        etag: Default::default(),
    })
}

/// [`local_lock`] off the async runtime's threads.
async fn try_lock_blocking(root: &Path, dir: &str, scope: &str) -> std::io::Result<Option<std::fs::File>> {
    let (root, dir, scope): (PathBuf, String, String) = (root.into(), dir.into(), scope.into());
    tokio::task::spawn_blocking(move || local_lock(&root, &dir, &scope))
        .await
        .map_err(std::io::Error::other)?
}

/// Tries the OS lock of `scope`: `Some(file)` holds it, `None` means another
/// process does.
fn local_lock(root: &Path, dir: &str, scope: &str) -> std::io::Result<Option<std::fs::File>> {
    let d = root.join(dir);
    std::fs::create_dir_all(&d)?;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(d.join(format!("{scope}.lock")))?;
    match f.try_lock() {
        Ok(()) => Ok(Some(f)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// The scopes that have a lock file. An error, not an empty list, when the
/// directory cannot be read: a run must not skip the overlap check.
fn local_scopes(root: &Path, dir: &str) -> std::io::Result<Vec<String>> {
    let entries = std::fs::read_dir(root.join(dir))?;
    Ok(entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".lock")).map(str::to_string))
        .collect())
}

/// Writes who holds a local lock into the locked file itself, so a
/// second run can name the holder.
fn write_into(mut f: &std::fs::File, doc: &LeaseDoc) -> std::io::Result<()> {
    use std::io::{Seek, Write};
    let bytes = serde_json::to_vec_pretty(doc).map_err(std::io::Error::other)?;
    f.set_len(0)?;
    f.seek(std::io::SeekFrom::Start(0))?;
    f.write_all(&bytes)?;
    f.flush()
}

/// Who holds a local lock, read from the locked file. The holder writes it
/// just after taking the lock, so an empty file, or one naming a process
/// that no longer exists, is read again for a moment.
async fn local_holder(root: &Path, dir: &str, job: &str, scope: &str) -> LeaseError {
    let path = root.join(dir).join(format!("{scope}.lock"));
    let me = Holder::me();
    for _ in 0..40 {
        if let Ok(b) = std::fs::read(&path)
            && let Ok(doc) = serde_json::from_slice::<LeaseDoc>(&b)
            && !doc.holder.known_dead(&me)
        {
            return busy(&doc, true);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    LeaseError::Busy {
        job: job.into(),
        scope: describe_scope(scope),
        holder: format!("held by another process (see {})", path.display()),
    }
}
