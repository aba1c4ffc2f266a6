//! Leases on object stores: the [`LeaseDoc`] itself at
//! `leases/<scope>.json`, created with a create-if-absent PUT, renewed
//! every [`RENEW`] with a PUT conditional on the ETag of our last write,
//! expiring [`TTL`](super::TTL) after the last renewal. A lease whose holder is known
//! dead is taken over at once with a PUT conditional on the ETag read, so
//! two runs taking over one stale lease cannot both win.

use super::{Claim, Holder, Lease, LeaseDoc, LeaseError, busy, describe_scope, overlaps};
use crate::sink::Sink;
use crate::state::StateError;
use object_store::{ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use std::sync::Arc;

/// Creates the claimed lease (or takes over a dead holder's), then checks
/// that no live run holds an overlapping scope.
pub(super) async fn acquire(sink: Arc<Sink>, claim: Claim) -> Result<Lease, LeaseError> {
    let rel = claim.rel.clone();
    let path = sink.storage().path(&rel);
    let body = serde_json::to_vec_pretty(&claim.doc()).map_err(|e| StateError::io(&rel, "encoding", e))?;
    let sent_at = std::time::Instant::now();
    let created = sink
        .storage()
        .unfenced_store()
        .put_opts(&path, PutPayload::from(body.clone()), PutOptions::from(PutMode::Create))
        .await;
    let etag = match created {
        Ok(r) => r.e_tag,
        Err(object_store::Error::AlreadyExists { .. }) | Err(object_store::Error::Precondition { .. }) => {
            take_over(&sink, &claim, &body).await?
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
    for m in list_leases(&sink, &claim.dir).await? {
        if m.scope != claim.scope && overlaps(&claim.scope, &m.scope) && live(&m, &claim.me) {
            // Ours is given back; if that fails it is left to expire, or to
            // be taken over at once by the next run on this host.
            if let Err(e) = sink.storage().unfenced_store().delete(&path).await {
                tracing::warn!("giving back the job's lease {rel}: {e}");
            }
            return Err(busy(&m, false));
        }
    }
    // Writes may go out until the lease could have run out by our clock.
    sink.storage().fence().renewed(sent_at, super::ttl());
    let etag = Arc::new(std::sync::Mutex::new(etag));
    let renew = tokio::spawn(renew_loop(sink.clone(), claim, etag.clone()));
    Ok(Lease {
        sink,
        rel,
        _lock: None,
        renew: Some(renew),
        etag,
    })
}

/// The error naming whoever holds the claimed lease (or a generic one if
/// its document cannot be read: it is only for the message).
async fn holder_of(sink: &Sink, claim: &Claim) -> LeaseError {
    let doc = match sink.storage().unfenced_store().get(&sink.storage().path(&claim.rel)).await {
        Ok(r) => r.bytes().await.ok().and_then(|b| serde_json::from_slice::<LeaseDoc>(&b).ok()),
        Err(_) => None,
    };
    match doc {
        Some(d) => busy(&d, false),
        None => LeaseError::Busy {
            job: claim.job.clone(),
            scope: describe_scope(&claim.scope),
            holder: "held by another process that is just starting".into(),
        },
    }
}

/// Whether an object-store lease is held by a live run.
fn live(doc: &LeaseDoc, me: &Holder) -> bool {
    doc.holder != *me && chrono::Utc::now().timestamp() <= doc.expires_unix && !doc.holder.known_dead(me)
}

/// Every lease document of the job. One deleted between the listing and
/// the read is gone (skipped); one that does not parse is not a lease a run
/// holds (skipped, as [`take_over`] takes it over). Any other failure to
/// read one is an error: a lease that cannot be read must not count as free.
async fn list_leases(sink: &Sink, dir: &str) -> Result<Vec<LeaseDoc>, StateError> {
    use futures::TryStreamExt;
    let metas: Vec<_> = sink
        .storage()
        .unfenced_store()
        .list(Some(&sink.storage().path(dir)))
        .try_collect()
        .await
        .map_err(|e| StateError::io(dir, "listing", e))?;
    let mut out = Vec::new();
    for m in metas {
        let rel = sink.storage().rel_of(&m.location);
        let bytes = match sink.storage().unfenced_store().get(&m.location).await {
            Ok(r) => r.bytes().await.map_err(|e| StateError::io(&rel, "reading", e))?,
            Err(object_store::Error::NotFound { .. }) => continue,
            Err(e) => return Err(StateError::io(&rel, "reading", e)),
        };
        if let Ok(doc) = serde_json::from_slice::<LeaseDoc>(&bytes) {
            out.push(doc);
        }
    }
    Ok(out)
}

/// An existing object-store lease: busy if its holder lives, else replaced
/// by ours with a PUT conditional on the ETag we read.
async fn take_over(sink: &Sink, claim: &Claim, body: &[u8]) -> Result<Option<String>, LeaseError> {
    let rel = claim.rel.as_str();
    let path = sink.storage().path(rel);
    let lost = |e: &object_store::Error| {
        matches!(
            e,
            object_store::Error::Precondition { .. } | object_store::Error::AlreadyExists { .. }
        )
    };
    let r = match sink.storage().unfenced_store().get(&path).await {
        Ok(r) => r,
        // Released between our create and this read: try once more.
        Err(object_store::Error::NotFound { .. }) => {
            return match sink
                .storage()
                .unfenced_store()
                .put_opts(&path, PutPayload::from(body.to_vec()), PutOptions::from(PutMode::Create))
                .await
            {
                Ok(r) => Ok(r.e_tag),
                Err(e) if lost(&e) => Err(holder_of(sink, claim).await),
                Err(e) => Err(StateError::io(rel, "creating", e).into()),
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
        && live(&doc, &claim.me)
    {
        return Err(busy(&doc, false));
    }
    let (job, scope) = (&claim.job, &claim.scope);
    tracing::warn!("job `{job}` ({scope}): taking over a lease whose holder died or expired");
    match sink
        .storage()
        .unfenced_store()
        .put_opts(&path, PutPayload::from(body.to_vec()), PutOptions::from(PutMode::Update(version)))
        .await
    {
        Ok(r) => Ok(r.e_tag),
        Err(e) if lost(&e) => Err(holder_of(sink, claim).await),
        Err(e) => Err(StateError::io(rel, "writing", e).into()),
    }
}

/// Renews an object-store lease until aborted. Losing it (another run took
/// it over because we looked dead) ends the process: two writers must never
/// run on; whatever this run had not committed is redone by the new holder.
async fn renew_loop(sink: Arc<Sink>, claim: Claim, etag: Arc<std::sync::Mutex<Option<String>>>) {
    let path = sink.storage().path(&claim.rel);
    let (job, scope) = (&claim.job, &claim.scope);
    let mut failing_since: Option<std::time::Instant> = None;
    loop {
        tokio::time::sleep(super::renew_every()).await;
        let Ok(body) = serde_json::to_vec_pretty(&claim.doc()) else {
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
        let sent_at = std::time::Instant::now();
        match sink
            .storage()
            .unfenced_store()
            .put_opts(&path, PutPayload::from(body), PutOptions::from(mode))
            .await
        {
            Ok(r) => {
                failing_since = None;
                sink.storage().fence().renewed(sent_at, super::ttl());
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
