//! How a state document reaches storage and comes back: JSON documents of
//! a known format version over [`crate::storage::Storage`]'s atomic
//! replace, create-if-absent, versioned reads and listing (the *Atomicity*
//! section of [`super`]). Every other file of `state` goes through these.

use super::docs::Versioned;
use super::{OLDEST_STATE_VERSION, STATE_VERSION, StateError, StateStore};
use futures::TryStreamExt;
use serde::Serialize;
use serde::de::DeserializeOwned;

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
