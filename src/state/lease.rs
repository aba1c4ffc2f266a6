//! One writer per job: a lease under `_chainetl/<job>/leases/`.
//!
//! A run (or one shard of a job) holds a lease for as long as it may write
//! the job's files or state; a second run of the same job, or of a shard
//! overlapping it, exits with a message naming the holder and when it
//! started. Scopes: `all` for an unsharded run, `shard-K-of-N` for
//! `--shard K/N`. An unsharded run overlaps every shard; shards of one
//! `N` are disjoint; shards of different `N` overlap.
//!
//! On object stores `leases/<scope>.json` holds:
//! `{version, job, scope, holder: {host, pid, run_id}, started_at,
//! renewed_at, expires_at}` (RFC 3339 times, `expires_at` also as unix
//! seconds in `expires_unix`).
//!
//! - **Local disk:** the lease is an OS lock (`flock`) on
//!   `leases/<scope>.lock`, held by the open file: the kernel drops it
//!   when the process dies, however it dies, so there is nothing to
//!   expire. The holder writes the JSON above into that file, to be named.
//! - **Object stores:** the JSON document itself, created with a
//!   create-if-absent PUT. The holder renews it every [`RENEW`]; it
//!   expires [`TTL`] after the last renewal. A lease whose holder is
//!   known dead is taken over at once: same host, and its pid is gone or
//!   is our own (a restarted container reuses pids, but we are not the
//!   holder). Take-over and renewal are conditional PUTs on the ETag
//!   read, so two runs taking over one stale lease cannot both win. A
//!   holder that finds its lease taken (it stalled past the TTL) stops the
//!   process at once rather than write beside the new holder.
//!
//! Stores without conditional PUTs cannot hold a lease: the run warns and
//! goes on without one.

use super::StateError;
use crate::sink::Sink;
use object_store::{ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// How long an object-store lease stays valid after its last renewal.
pub const TTL: Duration = Duration::from_secs(60);
/// How often the holder renews it.
pub const RENEW: Duration = Duration::from_secs(15);

/// Who holds a lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// Host name.
    pub host: String,
    /// Process id on that host.
    pub pid: u32,
    /// Unique per run.
    pub run_id: String,
}

/// A lease document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LeaseDoc {
    /// Format version.
    pub version: u32,
    /// Job name.
    pub job: String,
    /// `all` or `shard-K-of-N`.
    pub scope: String,
    /// The holder.
    pub holder: Holder,
    /// When the holder took it (RFC 3339).
    pub started_at: String,
    /// Last renewal (RFC 3339).
    pub renewed_at: String,
    /// Expiry (unix seconds); meaningless for local OS locks.
    pub expires_unix: i64,
}

/// Why a lease could not be taken.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeaseError {
    /// Another run holds it.
    #[error(
        "job `{job}` is already running ({scope}): {holder}; \
         wait for that run to finish (or stop it) and run again"
    )]
    Busy {
        /// Job name.
        job: String,
        /// The scope held, as users write it.
        scope: String,
        /// Who holds it and since when.
        holder: String,
    },
    /// Reading or writing the lease failed.
    #[error(transparent)]
    State(#[from] StateError),
}

/// The scope of a run: `all`, or `shard-K-of-N`.
pub fn scope(shard: Option<(usize, usize)>) -> String {
    match shard {
        Some((k, n)) => format!("shard-{k}-of-{n}"),
        None => "all".into(),
    }
}

/// Whether runs of scopes `a` and `b` may touch the same units.
fn overlaps(a: &str, b: &str) -> bool {
    let parse = |s: &str| -> Option<(u64, u64)> {
        let rest = s.strip_prefix("shard-")?;
        let (k, n) = rest.split_once("-of-")?;
        Some((k.parse().ok()?, n.parse().ok()?))
    };
    match (parse(a), parse(b)) {
        (Some((ka, na)), Some((kb, nb))) => na != nb || ka == kb,
        _ => true,
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// Whether a process `pid` on this host may be alive (true when it cannot
/// be told: then only expiry frees the lease).
fn pid_alive(pid: u32) -> bool {
    let proc = std::path::Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

impl Holder {
    fn me() -> Holder {
        Holder {
            host: host_name(),
            pid: std::process::id(),
            run_id: format!(
                "{}-{}-{:08x}",
                chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ"),
                std::process::id(),
                rand_u32()
            ),
        }
    }

    /// Whether this holder is certainly gone: it ran on this host, and its
    /// process no longer exists or is this very process (a restarted
    /// container reuses pids; we are not the holder, so it died).
    fn known_dead(&self, me: &Holder) -> bool {
        self.host == me.host && (self.pid == me.pid || !pid_alive(self.pid))
    }
}

fn rand_u32() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish() as u32
}

/// A held lease. Dropping it releases it (local locks at once; object-store
/// leases stop being renewed; call [`Lease::release`] to delete them).
#[derive(Debug)]
pub struct Lease {
    sink: Arc<Sink>,
    rel: String,
    /// Local: the locked file, held open.
    _lock: Option<std::fs::File>,
    /// Object stores: the renewal task.
    renew: Option<tokio::task::JoinHandle<()>>,
    /// Object stores: the ETag of our last write, shared with the renewal task.
    etag: Arc<std::sync::Mutex<Option<String>>>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(t) = self.renew.take() {
            t.abort();
        }
    }
}

fn now_doc(job: &str, scope: &str, holder: &Holder, started_at: &str) -> LeaseDoc {
    let now = chrono::Utc::now();
    LeaseDoc {
        version: super::STATE_VERSION,
        job: job.into(),
        scope: scope.into(),
        holder: holder.clone(),
        started_at: started_at.into(),
        renewed_at: now.to_rfc3339(),
        expires_unix: now.timestamp() + TTL.as_secs() as i64,
    }
}

/// A scope as users write it: `the whole job` or `shard K/N`.
fn describe_scope(scope: &str) -> String {
    match scope.strip_prefix("shard-").and_then(|r| r.split_once("-of-")) {
        Some((k, n)) => format!("shard {k}/{n}"),
        None => "the whole job".into(),
    }
}

fn busy(doc: &LeaseDoc, local: bool) -> LeaseError {
    let h = &doc.holder;
    let mut holder = format!("held by pid {} on {} since {}", h.pid, h.host, doc.started_at);
    if !local {
        holder.push_str(&format!(
            ", renewed {}; if that process died the lease expires at {}",
            doc.renewed_at,
            crate::vocab::window::iso(doc.expires_unix)
        ));
    }
    LeaseError::Busy {
        job: doc.job.clone(),
        scope: describe_scope(&doc.scope),
        holder,
    }
}

impl Lease {
    /// Takes the lease of `scope` for job `job` in `sink`'s output, or
    /// fails with [`LeaseError::Busy`] naming the holder.
    pub async fn acquire(sink: Arc<Sink>, job: &str, scope: &str) -> Result<Lease, LeaseError> {
        let dir = format!("_chainetl/{job}/leases");
        let me = Holder::me();
        let started_at = chrono::Utc::now().to_rfc3339();
        let doc = now_doc(job, scope, &me, &started_at);
        let rel = format!("{dir}/{scope}.json");
        if let Some(root) = sink.local_root().cloned() {
            let lock = tokio::task::spawn_blocking({
                let root = root.clone();
                let dir = dir.clone();
                let scope = scope.to_string();
                move || local_lock(&root, &dir, &scope)
            })
            .await
            .map_err(|e| StateError::io(&rel, "locking", e))?;
            let lock = match lock {
                Ok(Some(f)) => f,
                Ok(None) => return Err(local_holder(&root, &dir, job, scope).await),
                Err(e) => return Err(StateError::io(&rel, "locking", e).into()),
            };
            let lease = Lease {
                sink: sink.clone(),
                rel: rel.clone(),
                _lock: Some(lock),
                renew: None,
                etag: Default::default(),
            };
            // Overlapping scopes: hold ours, then try each other lock. The
            // second of two overlapping runs to get here sees the first's.
            for other in local_scopes(&root, &dir) {
                if other != scope && overlaps(scope, &other) {
                    let held = tokio::task::spawn_blocking({
                        let (root, dir, other) = (root.clone(), dir.clone(), other.clone());
                        move || local_lock(&root, &dir, &other).map(|f| f.is_none())
                    })
                    .await
                    .map_err(|e| StateError::io(&rel, "locking", e))?
                    .map_err(|e| StateError::io(&rel, "locking", e))?;
                    if held {
                        return Err(local_holder(&root, &dir, job, &other).await);
                    }
                }
            }
            if let Some(f) = &lease._lock {
                write_into(f, &doc).map_err(|e| StateError::io(&rel, "writing", e))?;
            }
            return Ok(lease);
        }

        let store = sink.store().clone();
        let path = sink.path(&rel);
        let body = serde_json::to_vec_pretty(&doc).map_err(|e| StateError::io(&rel, "encoding", e))?;
        let created = store
            .put_opts(&path, PutPayload::from(body.clone()), PutOptions::from(PutMode::Create))
            .await;
        let etag = match created {
            Ok(r) => r.e_tag,
            Err(object_store::Error::AlreadyExists { .. }) | Err(object_store::Error::Precondition { .. }) => {
                take_over(&sink, &rel, &me, job, scope, &body).await?
            }
            Err(object_store::Error::NotImplemented { .. }) => {
                tracing::warn!("the output store has no conditional writes: running without a lease (one run at a time is up to you)");
                return Ok(Lease {
                    sink,
                    rel,
                    _lock: None,
                    renew: None,
                    etag: Default::default(),
                });
            }
            Err(e) => return Err(StateError::io(&rel, "creating", e).into()),
        };
        for m in list_leases(&sink, &dir).await? {
            if m.scope != scope && overlaps(scope, &m.scope) && live(&m, &me) {
                let _ = store.delete(&path).await;
                return Err(busy(&m, false));
            }
        }
        let etag = Arc::new(std::sync::Mutex::new(etag));
        let renew = tokio::spawn(renew_loop(
            sink.clone(),
            rel.clone(),
            job.to_string(),
            scope.to_string(),
            me,
            started_at,
            etag.clone(),
        ));
        Ok(Lease {
            sink,
            rel,
            _lock: None,
            renew: Some(renew),
            etag,
        })
    }

    /// Gives the lease up: local locks are released when the file closes;
    /// an object-store lease is deleted if it is still ours.
    pub async fn release(mut self) {
        if let Some(t) = self.renew.take() {
            t.abort();
            let ours = self.etag.lock().ok().and_then(|e| e.clone());
            let path = self.sink.path(&self.rel);
            if let Ok(r) = self.sink.store().get(&path).await
                && r.meta.e_tag.is_some()
                && r.meta.e_tag == ours
            {
                let _ = self.sink.store().delete(&path).await;
            }
        }
    }
}

/// Tries the OS lock of `scope`: `Some(file)` holds it, `None` means another
/// process does.
fn local_lock(root: &std::path::Path, dir: &str, scope: &str) -> std::io::Result<Option<std::fs::File>> {
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

fn local_scopes(root: &std::path::Path, dir: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".lock")).map(str::to_string))
        .collect()
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
async fn local_holder(root: &std::path::Path, dir: &str, job: &str, scope: &str) -> LeaseError {
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

/// The error naming whoever holds `rel` (or a generic one if its document
/// cannot be read yet: the holder writes it just after locking).
async fn holder_of(sink: &Sink, rel: &str, job: &str, scope: &str) -> LeaseError {
    let doc = match sink.store().get(&sink.path(rel)).await {
        Ok(r) => r.bytes().await.ok().and_then(|b| serde_json::from_slice::<LeaseDoc>(&b).ok()),
        Err(_) => None,
    };
    match doc {
        Some(d) => busy(&d, false),
        None => LeaseError::Busy {
            job: job.into(),
            scope: describe_scope(scope),
            holder: "held by another process that is just starting".into(),
        },
    }
}

/// Whether an object-store lease is held by a live run.
fn live(doc: &LeaseDoc, me: &Holder) -> bool {
    doc.holder != *me && chrono::Utc::now().timestamp() <= doc.expires_unix && !doc.holder.known_dead(me)
}

async fn list_leases(sink: &Sink, dir: &str) -> Result<Vec<LeaseDoc>, StateError> {
    use futures::TryStreamExt;
    let metas: Vec<_> = sink
        .store()
        .list(Some(&sink.path(dir)))
        .try_collect()
        .await
        .map_err(|e| StateError::io(dir, "listing", e))?;
    let mut out = Vec::new();
    for m in metas {
        if let Ok(r) = sink.store().get(&m.location).await
            && let Ok(b) = r.bytes().await
            && let Ok(doc) = serde_json::from_slice::<LeaseDoc>(&b)
        {
            out.push(doc);
        }
    }
    Ok(out)
}

/// An existing object-store lease: busy if its holder lives, else replaced
/// by ours with a PUT conditional on the ETag we read.
async fn take_over(sink: &Sink, rel: &str, me: &Holder, job: &str, scope: &str, body: &[u8]) -> Result<Option<String>, LeaseError> {
    let path = sink.path(rel);
    let r = match sink.store().get(&path).await {
        Ok(r) => r,
        // Released between our create and this read: try once more.
        Err(object_store::Error::NotFound { .. }) => {
            return match sink
                .store()
                .put_opts(&path, PutPayload::from(body.to_vec()), PutOptions::from(PutMode::Create))
                .await
            {
                Ok(r) => Ok(r.e_tag),
                Err(_) => Err(holder_of(sink, rel, job, scope).await),
            };
        }
        Err(e) => return Err(StateError::io(rel, "reading", e).into()),
    };
    let version = UpdateVersion {
        e_tag: r.meta.e_tag.clone(),
        version: r.meta.version.clone(),
    };
    let bytes = r.bytes().await.map_err(|e| StateError::io(rel, "reading", e))?;
    if let Ok(doc) = serde_json::from_slice::<LeaseDoc>(&bytes)
        && live(&doc, me)
    {
        return Err(busy(&doc, false));
    }
    tracing::warn!("job `{job}` ({scope}): taking over a lease whose holder died or expired");
    match sink
        .store()
        .put_opts(&path, PutPayload::from(body.to_vec()), PutOptions::from(PutMode::Update(version)))
        .await
    {
        Ok(r) => Ok(r.e_tag),
        Err(object_store::Error::Precondition { .. }) | Err(object_store::Error::AlreadyExists { .. }) => {
            Err(holder_of(sink, rel, job, scope).await)
        }
        Err(e) => Err(StateError::io(rel, "writing", e).into()),
    }
}

/// Renews an object-store lease until aborted. Losing it (another run took
/// it over because we looked dead) ends the process: two writers must never
/// run on; whatever this run had not committed is redone by the new holder.
async fn renew_loop(
    sink: Arc<Sink>,
    rel: String,
    job: String,
    scope: String,
    me: Holder,
    started_at: String,
    etag: Arc<std::sync::Mutex<Option<String>>>,
) {
    let path = sink.path(&rel);
    let mut failing_since: Option<std::time::Instant> = None;
    loop {
        tokio::time::sleep(RENEW).await;
        let doc = now_doc(&job, &scope, &me, &started_at);
        let Ok(body) = serde_json::to_vec_pretty(&doc) else {
            continue;
        };
        let current = etag.lock().ok().and_then(|e| e.clone());
        let mode = match &current {
            Some(e) => PutMode::Update(UpdateVersion {
                e_tag: Some(e.clone()),
                version: None,
            }),
            None => PutMode::Overwrite,
        };
        match sink.store().put_opts(&path, PutPayload::from(body), PutOptions::from(mode)).await {
            Ok(r) => {
                failing_since = None;
                if let Ok(mut e) = etag.lock() {
                    *e = r.e_tag;
                }
            }
            Err(object_store::Error::Precondition { .. }) => {
                tracing::error!("job `{job}` ({scope}): another run took over this run's lease; stopping at once");
                std::process::exit(1);
            }
            Err(e) => {
                // A store outage: keep trying; past the TTL another run may
                // take the lease, and the next renewal then finds that out.
                let since = *failing_since.get_or_insert_with(std::time::Instant::now);
                tracing::warn!(elapsed_secs = since.elapsed().as_secs(), "renewing the job's lease failed: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_overlap_unless_disjoint_shards() {
        assert!(overlaps("all", "shard-1-of-2"));
        assert!(overlaps("shard-1-of-2", "all"));
        assert!(!overlaps("shard-1-of-2", "shard-2-of-2"));
        assert!(overlaps("shard-1-of-2", "shard-1-of-2"));
        assert!(overlaps("shard-1-of-2", "shard-1-of-3"));
    }

    #[test]
    fn a_holder_is_dead_when_its_pid_is_gone_or_ours() {
        let me = Holder::me();
        let other = |pid| Holder {
            host: me.host.clone(),
            pid,
            run_id: "x".into(),
        };
        assert!(other(me.pid).known_dead(&me));
        assert!(other(u32::MAX - 7).known_dead(&me));
        assert!(!other(1).known_dead(&me));
        let far = Holder {
            host: "elsewhere".into(),
            ..other(u32::MAX - 7)
        };
        assert!(!far.known_dead(&me));
    }
}
