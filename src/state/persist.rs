//! How a state document reaches storage and comes back: JSON documents of
//! a known format version over [`crate::storage::Storage`]'s atomic
//! replace, create-if-absent, versioned reads and listing (the *Atomicity*
//! section of [`super`]). Every other file of `state` goes through these.
//!
//! # Conditional writes
//!
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

use super::docs::Versioned;
use super::{OLDEST_STATE_VERSION, STATE_VERSION, StateError, StateStore};
use crate::storage::versions::Seen;
use futures::TryStreamExt;
use object_store::{PutMode, PutPayload};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::time::Duration;

/// Documents read at once: state reads are small requests, latency-bound.
const READS_IN_FLIGHT: usize = 32;

impl StateStore {
    /// The bytes at `rel`, or `None` if there is no such object. A
    /// single-writer document's version is noted at first sight (see
    /// [`crate::storage::versions`]).
    pub(super) async fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, StateError> {
        let found = self.read_versioned(rel).await?;
        if self.single_writer(rel) {
            self.storage()
                .versions()
                .read(&self.storage().path(rel), found.as_ref().map(|(_, e, v)| (e.clone(), v.clone())));
        }
        Ok(found.map(|(bytes, ..)| bytes))
    }

    /// The bytes at `rel` with their ETag and version, noting nothing.
    pub(super) async fn read_versioned(&self, rel: &str) -> Result<Option<(Vec<u8>, Option<String>, Option<String>)>, StateError> {
        let found = self.storage().get(rel).await.map_err(|e| StateError::io(rel, "reading", e))?;
        Ok(found.map(|o| (o.bytes.to_vec(), o.e_tag, o.version)))
    }

    /// Writes `bytes` at `rel` atomically; a single-writer document on an
    /// object store conditionally ([`Self::write_conditional`]).
    pub(super) async fn write(&self, rel: &str, bytes: Vec<u8>) -> Result<(), StateError> {
        if self.single_writer(rel) {
            return self.write_conditional(rel, bytes).await;
        }
        self.storage()
            .put_atomic(rel, bytes)
            .await
            .map_err(|e| StateError::io(rel, "writing", e))
    }

    /// Reads a JSON state document of this build's format version.
    pub(super) async fn read_doc<T: DeserializeOwned + Versioned>(&self, rel: &str) -> Result<Option<T>, StateError> {
        let Some(bytes) = self.read(rel).await? else {
            return Ok(None);
        };
        let corrupt = |what: String, source: Option<serde_json::Error>| StateError::Corrupt {
            path: self.location(rel),
            message: format!("{what}; {}", T::FIX),
            source,
        };
        let doc: T = serde_json::from_slice(&bytes).map_err(|e| corrupt(format!("not a chainetl state document ({e})"), Some(e)))?;
        if !(OLDEST_STATE_VERSION..=STATE_VERSION).contains(&doc.version()) {
            // Not damaged: another build's; its own fix would lose the job.
            return Err(StateError::Corrupt {
                path: self.location(rel),
                message: format!(
                    "state format version {} is not one this build reads ({OLDEST_STATE_VERSION} to {STATE_VERSION}): \
                     a newer chainetl wrote it, run that version",
                    doc.version()
                ),
                source: None,
            });
        }
        Ok(Some(doc))
    }

    /// Writes a JSON document atomically.
    pub(super) async fn write_doc(&self, rel: &str, doc: &impl Serialize) -> Result<(), StateError> {
        // Last line: no secret reaches a state document, whatever a server
        // sent (state holds cursors and messages that came from it).
        let json = serde_json::to_vec_pretty(doc).map_err(|e| StateError::io(rel, "encoding", e))?;
        self.write(rel, crate::util::redact::redact_bytes(json)).await
    }

    /// Writes a JSON document atomically, without indentation: documents
    /// of many entries (indexes), read by programs.
    pub(super) async fn write_compact_doc(&self, rel: &str, doc: &impl Serialize) -> Result<(), StateError> {
        let json = serde_json::to_vec(doc).map_err(|e| StateError::io(rel, "encoding", e))?;
        self.write(rel, crate::util::redact::redact_bytes(json)).await
    }

    /// Writes `doc` at `rel` unless it exists, and returns whichever
    /// document is there afterwards: an atomic create-if-absent (a hard link
    /// locally, `PutMode::Create` on object stores) so that concurrent
    /// shards agree.
    pub(super) async fn create_doc<T: Serialize + DeserializeOwned + Versioned + Clone>(
        &self,
        rel: &str,
        doc: &T,
    ) -> Result<T, StateError> {
        let bytes = serde_json::to_vec_pretty(doc).map_err(|e| StateError::io(rel, "encoding", e))?;
        if self.create_bytes(rel, bytes).await? {
            return Ok(doc.clone());
        }
        let vanished = || {
            let e = std::io::Error::new(std::io::ErrorKind::NotFound, "the document vanished while it was being created");
            StateError::io(rel, "creating", e)
        };
        self.read_doc(rel).await?.ok_or_else(vanished)
    }

    /// Writes `bytes` at `rel` unless something is there (create-if-absent,
    /// as [`StateStore::create_doc`]). Whether we created it.
    pub(super) async fn create_bytes(&self, rel: &str, bytes: Vec<u8>) -> Result<bool, StateError> {
        self.storage()
            .create_if_absent(rel, bytes)
            .await
            .map_err(|e| StateError::io(rel, "creating", e))
    }

    /// Objects under `rel_prefix` (relative to the output root).
    pub(super) async fn list(&self, rel_prefix: &str) -> Result<Vec<object_store::ObjectMeta>, StateError> {
        self.storage()
            .list(rel_prefix)
            .await
            .map_err(|e| StateError::io(self.storage().path(rel_prefix).as_ref(), "listing", e))
    }

    /// Every JSON document under `<job>/<sub>/`.
    pub(super) async fn load_dir<T: DeserializeOwned + Versioned>(&self, sub: &str) -> Result<Vec<T>, StateError> {
        Ok(self.load_dir_named(sub).await?.into_iter().map(|(_, d)| d).collect())
    }

    /// The documents of `sub` with their paths, read concurrently; one
    /// deleted between the listing and its read is left out.
    pub(super) async fn load_dir_named<T: DeserializeOwned + Versioned>(&self, sub: &str) -> Result<Vec<(String, T)>, StateError> {
        let rels = self.json_paths(sub).await?;
        self.read_docs(rels).await
    }

    /// Paths of the JSON documents under `<job>/<sub>/` (one listing).
    pub(super) async fn json_paths(&self, sub: &str) -> Result<Vec<String>, StateError> {
        Ok(self
            .list(&format!("{}/{sub}", self.dir))
            .await?
            .iter()
            .map(|m| self.storage().rel_of(&m.location))
            .filter(|rel| rel.ends_with(".json"))
            .collect())
    }

    /// The documents at `rels` with their paths, read concurrently; one
    /// deleted since it was listed is left out.
    pub(super) async fn read_docs<T: DeserializeOwned + Versioned>(&self, rels: Vec<String>) -> Result<Vec<(String, T)>, StateError> {
        use futures::StreamExt;
        let docs: Vec<Option<T>> = futures::stream::iter(rels.iter().map(|rel| self.read_doc::<T>(rel)))
            .buffered(READS_IN_FLIGHT)
            .try_collect()
            .await?;
        Ok(rels.into_iter().zip(docs).filter_map(|(rel, d)| Some((rel, d?))).collect())
    }
}

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
