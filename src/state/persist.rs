//! How a state document reaches storage and comes back: atomic replace,
//! create-if-absent, versioned reads and listing (the *Atomicity* section of
//! [`super`]). Every other file of `state` goes through these.

use super::docs::Versioned;
use super::{OLDEST_STATE_VERSION, STATE_VERSION, StateError, StateStore};
use futures::TryStreamExt;
use object_store::{ObjectStoreExt, PutPayload};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// A temporary name beside `path`, unique to this process and call, so two
/// writers of one document (two runs of a job, however they came to run at
/// once) can never interleave their bytes in one file:
/// `<name>.<pid>.<n>.tmp`.
pub(super) fn unique_tmp(path: &Path) -> PathBuf {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".{}.{n}.tmp", std::process::id()));
    path.with_file_name(name)
}

/// Local atomic replace: tmp → fsync → rename → fsync the directory.
fn replace_local(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = unique_tmp(path);
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    crate::util::failpoint::hit("during-checkpoint");
    std::fs::rename(&tmp, path)?;
    // Best effort: without it a power loss may bring back the previous
    // document, which is safe (its unit redoes work whose files are then
    // orphans, see invariant 1), and some file systems refuse to sync a
    // directory at all.
    if let Some(parent) = path.parent()
        && let Ok(d) = std::fs::File::open(parent)
    {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Local create-if-absent: an fsynced temporary file hard-linked to `path`
/// (which fails if `path` exists), then removed. Whether we created it.
fn create_local(path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    use std::io::Write;
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p)?;
    }
    let tmp = unique_tmp(path);
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    // hard_link fails if the target exists: an atomic create-if-absent.
    let won = match std::fs::hard_link(&tmp, path) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(e) => return Err(e),
    };
    std::fs::remove_file(&tmp)?;
    Ok(won)
}

/// Documents read at once: state reads are small requests, latency-bound.
const READS_IN_FLIGHT: usize = 32;

impl StateStore {
    /// The bytes at `rel`, or `None` if there is no such object. A
    /// single-writer document's version is noted at first sight (see
    /// [`crate::sink::versions`]).
    pub(super) async fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, StateError> {
        let path = self.sink.path(rel);
        let found = self.read_versioned(rel).await?;
        if self.single_writer(rel) {
            self.sink
                .versions()
                .read(&path, found.as_ref().map(|(_, e, v)| (e.clone(), v.clone())));
        }
        Ok(found.map(|(bytes, ..)| bytes))
    }

    /// The bytes at `rel` with their ETag and version, noting nothing.
    pub(super) async fn read_versioned(&self, rel: &str) -> Result<Option<(Vec<u8>, Option<String>, Option<String>)>, StateError> {
        match self.sink.store().get(&self.sink.path(rel)).await {
            Ok(r) => {
                let (e_tag, version) = (r.meta.e_tag.clone(), r.meta.version.clone());
                let bytes = r.bytes().await.map_err(|e| StateError::io(rel, "reading", e))?.to_vec();
                Ok(Some((bytes, e_tag, version)))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(StateError::io(rel, "reading", e)),
        }
    }

    /// Writes `bytes` at `rel` atomically; a single-writer document on an
    /// object store conditionally ([`Self::write_conditional`]).
    pub(super) async fn write(&self, rel: &str, bytes: Vec<u8>) -> Result<(), StateError> {
        if let Some(root) = self.sink.local_root() {
            let path = root.join(rel);
            return tokio::task::spawn_blocking(move || replace_local(&path, &bytes))
                .await
                .map_err(|e| StateError::io(rel, "writing", e))?
                .map_err(|e| StateError::io(rel, "writing", e));
        }
        if self.single_writer(rel) {
            return self.write_conditional(rel, bytes).await;
        }
        self.sink
            .store()
            .put(&self.sink.path(rel), PutPayload::from(bytes))
            .await
            .map(|_| ())
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
        let created = match self.sink.local_root() {
            Some(root) => create_local(&root.join(rel), &bytes).map_err(|e| StateError::io(rel, "creating", e))?,
            None => self.create_in_store(rel, bytes).await?,
        };
        if created {
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
        match self.sink.local_root() {
            Some(root) => {
                let path = root.join(rel);
                tokio::task::spawn_blocking(move || create_local(&path, &bytes))
                    .await
                    .map_err(|e| StateError::io(rel, "creating", e))?
                    .map_err(|e| StateError::io(rel, "creating", e))
            }
            None => self.create_in_store(rel, bytes).await,
        }
    }

    /// Object-store create-if-absent (`PutMode::Create`); stores without
    /// conditional PUTs get an atomic replace. Whether we created it.
    async fn create_in_store(&self, rel: &str, bytes: Vec<u8>) -> Result<bool, StateError> {
        let opts = object_store::PutOptions {
            mode: object_store::PutMode::Create,
            ..Default::default()
        };
        match self
            .sink
            .store()
            .put_opts(&self.sink.path(rel), PutPayload::from(bytes.clone()), opts)
            .await
        {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. }) | Err(object_store::Error::Precondition { .. }) => Ok(false),
            Err(object_store::Error::NotImplemented { .. }) => {
                self.write(rel, bytes).await?;
                Ok(true)
            }
            Err(e) => Err(StateError::io(rel, "creating", e)),
        }
    }

    /// Objects under `rel_prefix` (relative to the output root).
    pub(super) async fn list(&self, rel_prefix: &str) -> Result<Vec<object_store::ObjectMeta>, StateError> {
        let prefix = self.sink.path(rel_prefix);
        self.sink
            .store()
            .list(Some(&prefix))
            .try_collect()
            .await
            .map_err(|e| StateError::io(prefix.as_ref(), "listing", e))
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
            .map(|m| self.sink.rel_of(&m.location))
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
