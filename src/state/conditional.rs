//! Conditional writes of single-writer documents on object stores: the
//! fencing token of [`crate::storage::versions`] in use.
//!
//! A unit's checkpoint (written by the holder of the unit's shard), a
//! compaction record and the compaction index (by the holder of the whole
//! job) are written with a PUT conditional on the version this process
//! wrote last (`If-Match`), or create-if-absent where it knows of none.
//! Refused, the write is checked against what is there: our own bytes
//! mean our write had landed (a retry whose first answer was lost);
//! anything else means another run changed the document since, and this
//! run closes its fence for good ([`crate::storage::fence::Fence::close`]) and
//! fails: it writes nothing more. A conditional PUT is not retried by the
//! store client on a timeout, so it is retried here, a few times, each
//! after reading what is there.

use super::{StateError, StateStore};
use crate::storage::versions::Seen;
use object_store::{PutMode, PutPayload};
use std::time::Duration;

/// Attempts of one conditional write whose answers are lost.
const ATTEMPTS: u32 = 4;
/// The pause before the first retry; doubled each time.
const FIRST_PAUSE: Duration = Duration::from_millis(200);

/// Why another run's change stops this one.
#[derive(Debug, thiserror::Error)]
#[error(
    "another run changed or removed this document since this run last wrote it: another run holds the job now \
     (this one was paused or cut off past its lease), or another shard's reorg repair dropped this unit; \
     this run writes nothing more (re-run to carry on)"
)]
pub struct Superseded;

impl StateStore {
    /// Whether `rel` is a document only the lease holder writes, on an
    /// object store: a unit's checkpoint, a compaction record or the
    /// compaction index. Marks, periods and run reports may be written by
    /// any shard, and are left to the fence.
    pub(super) fn single_writer(&self, rel: &str) -> bool {
        if !self.storage().keeps_versions() {
            return false;
        }
        let Some(sub) = rel.strip_prefix(self.dir.as_str()).and_then(|r| r.strip_prefix('/')) else {
            return false;
        };
        sub.starts_with("units/") || sub.starts_with("compacted/") || sub == "compactions.json"
    }

    /// `<job>/<sub>/` was just listed, showing `rels`: what it does not show
    /// is absent (see [`crate::storage::versions::Versions::listed`]).
    pub(super) fn listed(&self, sub: &str, rels: &[String]) {
        if !self.storage().keeps_versions() {
            return;
        }
        let dir = self.storage().path(&format!("{}/{sub}", self.dir));
        let present = rels.iter().map(|r| self.storage().path(r)).collect();
        self.storage().versions().listed(&dir, &present);
    }

    /// Writes `bytes` at `rel` if it is as this process last wrote it.
    pub(super) async fn write_conditional(&self, rel: &str, bytes: Vec<u8>) -> Result<(), StateError> {
        let path = self.storage().path(rel);
        let versions = self.storage().versions();
        let mut seen = versions.get(&path);
        let mut pause = FIRST_PAUSE;
        for attempt in 1..=ATTEMPTS {
            let mode = match &seen {
                Seen::Version(v) => PutMode::Update(v.clone()),
                Seen::Absent => PutMode::Create,
                Seen::Unknown => PutMode::Overwrite,
            };
            let conditional = !matches!(mode, PutMode::Overwrite);
            let e = match self
                .storage()
                .store()
                .put_opts(&path, PutPayload::from(bytes.clone()), mode.into())
                .await
            {
                Ok(r) => {
                    versions.wrote(&path, r.e_tag, r.version);
                    return Ok(());
                }
                Err(e) => e,
            };
            match e {
                object_store::Error::Precondition { .. }
                | object_store::Error::AlreadyExists { .. }
                | object_store::Error::NotFound { .. }
                    if conditional =>
                {
                    return self.unless_ours(rel, &bytes).await;
                }
                object_store::Error::NotImplemented { .. } if conditional => {
                    // A store without conditional writes: the fence alone.
                    seen = Seen::Unknown;
                    continue;
                }
                e if !conditional || attempt == ATTEMPTS => {
                    versions.uncertain(&path);
                    return Err(StateError::io(rel, "writing", e));
                }
                e => tracing::debug!("{rel}: a conditional write failed ({e}); reading what is there before trying again"),
            }
            tokio::time::sleep(pause).await;
            pause *= 2;
            // Whether the lost write landed: ours, unchanged, or another run's.
            let now = self.read_versioned(rel).await?;
            match (&now, &seen) {
                (Some((b, e_tag, version)), _) if *b == bytes => {
                    versions.wrote(&path, e_tag.clone(), version.clone());
                    return Ok(());
                }
                (Some((_, e_tag, _)), Seen::Version(v)) if *e_tag == v.e_tag => {}
                (None, Seen::Absent) => {}
                (None, _) => return self.removed(rel),
                _ => return self.superseded(rel),
            }
        }
        Err(StateError::io(rel, "writing", "no attempt succeeded"))
    }

    /// A conditional write of `bytes` at `rel` was refused: ours after all
    /// if the document holds `bytes`; otherwise another run's change.
    async fn unless_ours(&self, rel: &str, bytes: &[u8]) -> Result<(), StateError> {
        match self.read_versioned(rel).await? {
            Some((b, e_tag, version)) if b == bytes => {
                self.storage().versions().wrote(&self.storage().path(rel), e_tag, version);
                Ok(())
            }
            Some(_) => self.superseded(rel),
            None => self.removed(rel),
        }
    }

    /// Another run wrote the document: the job is no longer this run's to
    /// write, so the fence closes for good.
    fn superseded(&self, rel: &str) -> Result<(), StateError> {
        self.storage().fence().close();
        tracing::error!("{}: {Superseded}", self.location(rel));
        Err(StateError::io(rel, "writing", Superseded))
    }

    /// Another run removed the document (a new holder's fold, or another
    /// shard's reorg repair dropping the unit, which is no stale holder):
    /// this write fails, and nothing lands, but the run goes on.
    fn removed(&self, rel: &str) -> Result<(), StateError> {
        self.storage().versions().forget_to_absent(&self.storage().path(rel));
        Err(StateError::io(rel, "writing", Removed))
    }

    /// Every document under `<job>/<sub>/` with its path, after one
    /// listing that settles what is absent there (see [`Self::listed`]).
    pub(super) async fn load_dir_listed<T>(&self, sub: &str) -> Result<Vec<(String, T)>, StateError>
    where
        T: serde::de::DeserializeOwned + super::docs::Versioned,
    {
        let rels = self.json_paths(sub).await?;
        self.listed(sub, &rels);
        self.read_docs(rels).await
    }
}

/// Why a checkpoint another run removed is not written again.
#[derive(Debug, thiserror::Error)]
#[error(
    "another run removed this document since this run last wrote it (another shard's reorg repair dropped the \
     unit, or another run holds the job now): not written again; re-run to carry on"
)]
pub struct Removed;
