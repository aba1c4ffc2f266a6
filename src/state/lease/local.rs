//! Leases on local disk: an OS lock (`flock`, [`crate::storage::OsLocks`])
//! on `leases/<scope>.lock`, held by the open file, so the kernel drops it
//! when the process dies, however it dies. The holder writes its
//! [`LeaseDoc`] into the locked file so that a second run can name it.

use super::{Claim, Holder, Lease, LeaseDoc, LeaseError, busy, describe_scope, overlaps};
use crate::sink::Sink;
use crate::state::StateError;
use crate::storage::OsLocks;
use std::sync::Arc;
use std::time::Duration;

/// Takes the OS lock of the claimed scope, then checks that no run holds
/// an overlapping scope.
pub(super) async fn acquire(sink: Arc<Sink>, locks: OsLocks, claim: &Claim) -> Result<Lease, LeaseError> {
    let (dir, scope) = (claim.dir.as_str(), claim.scope.as_str());
    let lock_rel = format!("{dir}/{scope}.lock");
    let io = |e: std::io::Error| StateError::io(&lock_rel, "locking", e);
    let lock = match try_lock_blocking(&locks, dir, scope).await {
        Ok(Some(f)) => f,
        Ok(None) => return Err(local_holder(&locks, dir, &claim.job, scope).await),
        Err(e) => return Err(io(e).into()),
    };
    // Overlapping scopes: hold ours, then try each other lock. The
    // second of two overlapping runs to get here sees the first's.
    for other in locks.names(dir, ".lock").map_err(io)? {
        if other != scope && overlaps(scope, &other) {
            let held = try_lock_blocking(&locks, dir, &other).await.map_err(io)?.is_none();
            if held {
                return Err(local_holder(&locks, dir, &claim.job, &other).await);
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

/// Tries the OS lock of `scope` off the async runtime's threads: `Some(file)`
/// holds it, `None` means another process does.
async fn try_lock_blocking(locks: &OsLocks, dir: &str, scope: &str) -> std::io::Result<Option<std::fs::File>> {
    let (locks, rel) = (locks.clone(), format!("{dir}/{scope}.lock"));
    tokio::task::spawn_blocking(move || locks.try_lock(&rel))
        .await
        .map_err(std::io::Error::other)?
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
async fn local_holder(locks: &OsLocks, dir: &str, job: &str, scope: &str) -> LeaseError {
    let path = locks.path(&format!("{dir}/{scope}.lock"));
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
