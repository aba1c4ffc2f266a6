//! One writer per job: a lease under `_chainetl/<job>/leases/`.
//!
//! A run (or one shard of a job) holds a lease for as long as it may write
//! the job's files or state; a second run of the same job, or of a shard
//! overlapping it, exits with a message naming the holder and when it
//! started. Scopes: `all` for an unsharded run, `shard-K-of-N` for
//! `--shard K/N`. An unsharded run overlaps every shard; shards of one
//! `N` are disjoint; shards of different `N` overlap.
//!
//! The lease document ([`LeaseDoc`]) is
//! `{version, job, scope, holder: {host, pid, run_id}, started_at,
//! renewed_at, expires_unix}` (RFC 3339 times; the expiry in unix seconds,
//! meaningless for local locks).
//!
//! - **Local disk** (`local.rs`): the lease is an OS lock (`flock`) on
//!   `leases/<scope>.lock`, held by the open file: the kernel drops it
//!   when the process dies, however it dies, so there is nothing to
//!   expire. The holder writes the JSON above into that file, to be named.
//! - **Object stores** (`object.rs`): the JSON document itself, created with a
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

mod local;
mod object;
#[cfg(test)]
mod tests;

use super::StateError;
use crate::sink::Sink;
use object_store::ObjectStoreExt;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// How long an object-store lease stays valid after its last renewal.
pub const TTL: Duration = Duration::from_secs(60);
/// How often the holder renews it.
pub const RENEW: Duration = Duration::from_secs(15);

/// A shorter TTL (seconds; 0: none), set only by the crash tests' tool.
static TEST_TTL_SECS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Shortens the lease's TTL (renewals every quarter of it) so that a test
/// can let a paused holder's lease run out in seconds. For the crash tests'
/// tool only (`tests/bin/chainetl-failpoints.rs`); nothing else calls it.
pub fn set_test_ttl(secs: u64) {
    TEST_TTL_SECS.store(secs, std::sync::atomic::Ordering::Relaxed);
}

/// The lease's TTL in force.
fn ttl() -> Duration {
    match TEST_TTL_SECS.load(std::sync::atomic::Ordering::Relaxed) {
        0 => TTL,
        s => Duration::from_secs(s),
    }
}

/// How often the holder renews.
fn renew_every() -> Duration {
    if ttl() == TTL { RENEW } else { ttl() / 4 }
}

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
        expires_unix: now.timestamp() + ttl().as_secs() as i64,
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

/// What a run asks for: the lease of `scope` of job `job`, for holder `me`.
#[derive(Debug)]
struct Claim {
    job: String,
    scope: String,
    /// `_chainetl/<job>/leases`.
    dir: String,
    /// `<dir>/<scope>.json`: the lease document on object stores, and the
    /// path errors name.
    rel: String,
    me: Holder,
    started_at: String,
}

impl Claim {
    /// The lease document as of now.
    fn doc(&self) -> LeaseDoc {
        now_doc(&self.job, &self.scope, &self.me, &self.started_at)
    }
}

impl Lease {
    /// Takes the lease of `scope` for job `job` in `sink`'s output, or
    /// fails with [`LeaseError::Busy`] naming the holder.
    pub async fn acquire(sink: Arc<Sink>, job: &str, scope: &str) -> Result<Lease, LeaseError> {
        let dir = format!("_chainetl/{job}/leases");
        let claim = Claim {
            job: job.into(),
            scope: scope.into(),
            rel: format!("{dir}/{scope}.json"),
            dir,
            me: Holder::me(),
            started_at: chrono::Utc::now().to_rfc3339(),
        };
        match sink.storage().os_locks() {
            Some(locks) => local::acquire(sink, locks, &claim).await,
            None => object::acquire(sink, claim).await,
        }
    }

    /// Gives the lease up: local locks are released when the file closes;
    /// an object-store lease is deleted if it is still ours. A lease that
    /// cannot be deleted is logged: it expires [`TTL`] after its last
    /// renewal, and a run on this host takes it over at once (its holder,
    /// this process, is gone by then).
    pub async fn release(mut self) {
        if let Some(t) = self.renew.take() {
            t.abort();
            let ours = self.etag.lock().ok().and_then(|e| e.clone());
            let path = self.sink.storage().path(&self.rel);
            let current = match self.sink.storage().unfenced_store().get(&path).await {
                Ok(r) => r,
                Err(object_store::Error::NotFound { .. }) => return,
                Err(e) => {
                    tracing::warn!("releasing the job's lease {}: {e}", self.rel);
                    return;
                }
            };
            if current.meta.e_tag.is_some()
                && current.meta.e_tag == ours
                && let Err(e) = self.sink.storage().unfenced_store().delete(&path).await
            {
                tracing::warn!("releasing the job's lease {}: {e}", self.rel);
            }
        }
    }
}
