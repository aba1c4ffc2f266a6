//! The output location's storage: the one owner of every object chainetl
//! reads and writes there — data files, state documents, leases — on
//! local disk and on object stores behind one interface, [`Storage`].
//! Nothing outside this module asks which of the two it is talking to;
//! what differs is a capability ([`Storage::keeps_versions`],
//! [`Storage::os_locks`]), not a path.
//!
//! Paths are *relative to the output root* (`rel`): the store's own key
//! prefix (`s3://bucket/<prefix>/`) comes before them ([`Storage::path`]).
//!
//! # Guarantees, by operation
//!
//! - **Get** ([`Storage::get`]): the bytes with their ETag and version, or
//!   `None` when nothing is there.
//! - **Upload** ([`Storage::upload`]) — how a data file becomes visible: the
//!   bytes go to an `object_store` `BufWriter` and appear under the final
//!   name whole or not at all.
//!   - *Local disk:* to a staging file beside the target, `<final name>#<n>`
//!     (`n` a small number unique among concurrent writers of that name),
//!     renamed to the final name on completion. Staging files are not
//!     listed and do not match `*.parquet` globs; a dead writer's are
//!     removed with [`Storage::remove_leftovers`].
//!   - *S3:* a small file is one PUT on completion, a larger one a
//!     multipart upload of parts of at least 5 MiB, visible only once
//!     completed. An upload never completed leaves no object; its parts
//!     stay until a bucket lifecycle rule for incomplete multipart uploads
//!     reclaims them.
//! - **Durability** ([`Storage::make_durable`]): a completed upload is
//!   durable once this returns; locally its bytes are fsynced, and its
//!   size checked against the writer's count; on object stores a completed
//!   upload is durable already, and this asks nothing of the store. (The
//!   directory is not fsynced after the rename, so a power loss, unlike a
//!   crash of the process, can lose a finished file's name; `chainetl
//!   verify` then reports it missing.)
//! - **Atomic replace** ([`Storage::put_atomic`]), for documents: locally
//!   the bytes go to a temporary name beside the target, unique per process
//!   and call (`<name>.<pid>.<n>.tmp`), are fsynced, renamed over the
//!   target, and the directory is fsynced (best effort). A reader sees the
//!   old document or the new; a writer that dies leaves only its temporary
//!   file. Object stores: one PUT, which is atomic.
//! - **Create-if-absent** ([`Storage::create_if_absent`]): locally the
//!   fsynced temporary file is hard-linked to the target (which fails if it
//!   exists), then removed; object stores: `PutMode::Create`. Stores
//!   without conditional PUTs fall back to an atomic replace (the last
//!   creator wins: one run at a time).
//! - **Conditional replace** (object stores only, [`Storage::keeps_versions`]):
//!   `state` writes its single-writer documents with `PutMode::Update` on
//!   the version in [`versions`], through [`Storage::store`].
//! - **List** and **delete**: a listing shows every object under a prefix,
//!   across listing pages; deleting what is not there succeeds.
//! - **Fence**: on object stores every write passes [`fence`] first, so a
//!   run whose lease ran out by its own clock writes nothing. Local disk is
//!   locked by the OS ([`Storage::os_locks`]) and needs no fence.

pub mod checksum;
#[cfg(test)]
pub(crate) mod counted;
pub mod fence;
mod local;
mod open;
pub mod versions;

pub use local::{OsLocks, replace_file};

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::buffered::BufWriter;
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, PutMode, PutPayload};
use std::path::PathBuf;
use std::sync::Arc;

/// An output location that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("output {uri}: {message}{}", source.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
pub struct OpenError {
    /// The configured URI.
    pub uri: String,
    /// What is wrong, or what failed.
    pub message: String,
    /// Cause, when something failed (rather than the URI being wrong).
    #[source]
    pub source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

/// A failed storage operation: the store's error or a local file system
/// error, as they gave it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// The object store refused or failed.
    #[error(transparent)]
    Store(#[from] object_store::Error),
    /// The local file system refused or failed.
    #[error(transparent)]
    Local(#[from] std::io::Error),
}

impl StorageError {
    /// The store's or the file system's error itself.
    pub fn into_cause(self) -> Box<dyn std::error::Error + Send + Sync> {
        match self {
            StorageError::Store(e) => Box::new(e),
            StorageError::Local(e) => Box::new(e),
        }
    }

    /// Whether the object is not there.
    pub fn is_not_found(&self) -> bool {
        match self {
            StorageError::Store(object_store::Error::NotFound { .. }) => true,
            StorageError::Local(e) => e.kind() == std::io::ErrorKind::NotFound,
            StorageError::Store(_) => false,
        }
    }
}

/// An object read whole, with what identifies its version.
#[derive(Debug, Clone)]
pub struct Object {
    /// Its bytes.
    pub bytes: Bytes,
    /// Its ETag, where the store gives one.
    pub e_tag: Option<String>,
    /// Its version, where the store keeps versions.
    pub version: Option<String>,
}

/// An opened output location.
#[derive(Debug)]
pub struct Storage {
    /// The store behind the lease's fence: every write of the run.
    store: Arc<dyn ObjectStore>,
    /// The same store, unfenced: the lease's own documents.
    unfenced: Arc<dyn ObjectStore>,
    fence: Arc<fence::Fence>,
    /// Versions of single-writer documents last seen (object stores).
    versions: versions::Versions,
    prefix: String,
    /// The directory, when the output is on local disk.
    local_root: Option<PathBuf>,
    /// Whether the store creates objects only if absent (put-if-absent).
    creates_conditionally: bool,
    uri: String,
    /// Upload part size: S3 needs at least 5 MiB per part.
    part_bytes: usize,
}

impl Storage {
    /// The object store; on object stores, writes pass only while the
    /// run's lease is valid by its own clock (see [`fence`]). For what the
    /// methods here do not cover: ranged reads of data files, conditional
    /// PUTs of single-writer documents.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The object store without the fence: for the lease's own documents,
    /// whose renewals are what keep the fence open.
    pub fn unfenced_store(&self) -> &Arc<dyn ObjectStore> {
        &self.unfenced
    }

    /// The fence the lease keeps open while it is valid.
    pub fn fence(&self) -> &fence::Fence {
        &self.fence
    }

    /// The versions of single-writer documents this process last read or
    /// wrote, for conditional writes (see [`versions`]).
    pub fn versions(&self) -> &versions::Versions {
        &self.versions
    }

    /// Whether single-writer documents are written conditionally on their
    /// version ([`versions`]): on object stores. Local disk is locked by
    /// the OS for the whole run ([`Storage::os_locks`]) and keeps none.
    pub fn keeps_versions(&self) -> bool {
        self.local_root.is_none()
    }

    /// The OS locks of local disk, which the kernel drops when the holder
    /// dies; `None` on object stores, whose leases are documents.
    pub fn os_locks(&self) -> Option<OsLocks> {
        self.local_root.as_deref().map(OsLocks::new)
    }

    /// The output URI as configured.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Whether the store can create an object only if it is absent, which
    /// a Delta log needs for its commits: local disk and S3 can; an S3
    /// configured with `AWS_CONDITIONAL_PUT=disabled` says it cannot.
    pub fn creates_conditionally(&self) -> bool {
        self.creates_conditionally
    }

    /// Where the Delta kernel finds the table at `rel`: its URL, and the
    /// store whose object paths are that URL's paths. On local disk the
    /// kernel checks `file://` paths on the file system itself, so the URL
    /// is the table's absolute directory and the store is rooted at `/`;
    /// on object stores it is the (fenced) bucket store.
    pub fn table_location(&self, rel: &str) -> (url::Url, Arc<dyn ObjectStore>) {
        let rel = rel.trim_matches('/');
        match &self.local_root {
            Some(root) => {
                let dir = root.join(rel);
                let url = url::Url::from_directory_path(&dir).unwrap_or_else(|()| url::Url::parse("file:///").expect("a valid URL"));
                (url, Arc::new(object_store::local::LocalFileSystem::new()))
            }
            None => {
                let bucket = self.uri.strip_prefix("s3://").and_then(|r| r.split('/').next()).unwrap_or_default();
                let url = url::Url::parse(&format!("s3://{bucket}/{}/", self.path(rel)))
                    .unwrap_or_else(|_| url::Url::parse("s3://invalid/").expect("a valid URL"));
                (url, self.store.clone())
            }
        }
    }

    /// Object path of `rel` (relative to the output root).
    pub fn path(&self, rel: &str) -> Path {
        if self.prefix.is_empty() {
            Path::from(rel)
        } else {
            Path::from(format!("{}/{rel}", self.prefix))
        }
    }

    /// `rel` of an object path under the root.
    pub fn rel_of(&self, p: &Path) -> String {
        let s = p.as_ref();
        if self.prefix.is_empty() {
            s.to_string()
        } else {
            s.strip_prefix(&format!("{}/", self.prefix)).unwrap_or(s).to_string()
        }
    }

    /// The object at `rel` read whole, or `None` if there is none.
    pub async fn get(&self, rel: &str) -> Result<Option<Object>, StorageError> {
        match self.store.get(&self.path(rel)).await {
            Ok(r) => {
                let (e_tag, version) = (r.meta.e_tag.clone(), r.meta.version.clone());
                let bytes = r.bytes().await?;
                Ok(Some(Object { bytes, e_tag, version }))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether an object is at `rel` (one HEAD request).
    pub async fn exists(&self, rel: &str) -> Result<bool, StorageError> {
        match self.store.head(&self.path(rel)).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Reads the object at `rel` from start to end, handing each chunk to
    /// `each` as it arrives; memory stays bounded whatever its size (a
    /// fixed buffer locally, the store's stream elsewhere). Returns the
    /// bytes read.
    pub async fn read_chunks(&self, rel: &str, mut each: impl FnMut(&[u8])) -> Result<u64, StorageError> {
        if let Some(root) = &self.local_root {
            // Large reads straight into one buffer, a blocking task each:
            // the store's own stream reads local files in small chunks.
            let path = root.join(rel);
            let mut open = blocking(move || Ok((std::fs::File::open(path)?, vec![0u8; local::READ_BUFFER]))).await?;
            let mut total = 0u64;
            loop {
                let (mut file, mut buf) = open;
                let (file, buf, n) = blocking(move || {
                    let n = local::read_chunk(&mut file, &mut buf)?;
                    Ok((file, buf, n))
                })
                .await?;
                if n == 0 {
                    return Ok(total);
                }
                each(&buf[..n]);
                total += n as u64;
                open = (file, buf);
            }
        }
        use futures::StreamExt;
        let mut stream = self.store.get(&self.path(rel)).await?.into_stream();
        let mut n = 0;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk?;
            each(&chunk);
            n += chunk.len() as u64;
        }
        Ok(n)
    }

    /// Writes `bytes` at `rel` atomically: readers see the old object or
    /// the new one.
    pub async fn put_atomic(&self, rel: &str, bytes: Vec<u8>) -> Result<(), StorageError> {
        if let Some(root) = &self.local_root {
            let path = root.join(rel);
            return blocking(move || local::replace(&path, &bytes, true)).await;
        }
        self.store.put(&self.path(rel), PutPayload::from(bytes)).await?;
        Ok(())
    }

    /// Writes `bytes` at `rel` unless something is there. Whether this call
    /// created it.
    pub async fn create_if_absent(&self, rel: &str, bytes: Vec<u8>) -> Result<bool, StorageError> {
        if let Some(root) = &self.local_root {
            let path = root.join(rel);
            return blocking(move || local::create(&path, &bytes)).await;
        }
        let opts = object_store::PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match self.store.put_opts(&self.path(rel), PutPayload::from(bytes.clone()), opts).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. }) | Err(object_store::Error::Precondition { .. }) => Ok(false),
            Err(object_store::Error::NotImplemented { .. }) => {
                self.put_atomic(rel, bytes).await?;
                Ok(true)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Every object under `rel_prefix`, across listing pages.
    pub async fn list(&self, rel_prefix: &str) -> Result<Vec<ObjectMeta>, StorageError> {
        let prefix = self.path(rel_prefix);
        Ok(self.store.list(Some(&prefix)).try_collect().await?)
    }

    /// Removes the object at `rel`; one that is not there is fine.
    pub async fn delete(&self, rel: &str) -> Result<(), StorageError> {
        let path = self.path(rel);
        match self.store.delete(&path).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {
                self.versions.deleted(&path);
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// A writer of a new object at `rel`, visible whole once shut down
    /// (see *Upload* above).
    pub fn upload(&self, rel: &str) -> BufWriter {
        BufWriter::with_capacity(self.store.clone(), self.path(rel), self.part_bytes).with_max_concurrency(2)
    }

    /// Makes completed upload `rel`, of the `bytes` its writer handed it,
    /// durable: locally its bytes are fsynced (the upload renamed them into
    /// place without), and a file of another size is an error. An object
    /// store has made a completed upload durable already: no request.
    pub async fn make_durable(&self, rel: &str, bytes: u64) -> Result<(), StorageError> {
        let Some(root) = &self.local_root else {
            return Ok(());
        };
        let file = root.join(rel);
        blocking(move || {
            let f = std::fs::File::open(&file)?;
            let found = f.metadata()?.len();
            if found != bytes {
                return Err(std::io::Error::other(format!(
                    "{} holds {found} bytes where {bytes} were written",
                    file.display()
                )));
            }
            f.sync_all()
        })
        .await?;
        Ok(())
    }

    /// Removes the folder `rel` once it is empty, on local disk (object
    /// stores have no folders): after its last object was deleted, so
    /// that a listing of its parent no longer shows it. A folder still
    /// holding something, or gone, is left as it is.
    pub async fn remove_empty_dir(&self, rel: &str) -> Result<(), StorageError> {
        let Some(root) = &self.local_root else {
            return Ok(());
        };
        let dir = root.join(rel.trim_end_matches('/'));
        blocking(move || match std::fs::remove_dir(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.kind() == std::io::ErrorKind::DirectoryNotEmpty => Ok(()),
            Err(e) => Err(e),
        })
        .await
    }

    /// Deletes what writers that died left under `dirs` (recursively) and
    /// `which` selects by file name: staging files of unfinished uploads
    /// and temporary files of atomic writes. Only local disk has such
    /// leftovers (an unfinished upload or PUT is no object), so on object
    /// stores this removes nothing. Returns how many were deleted; one
    /// that cannot be is logged and left (the next run tries again).
    pub async fn remove_leftovers(&self, dirs: &[String], which: impl Fn(&str) -> bool + Send + 'static) -> usize {
        self.remove_old_leftovers(dirs, None, which).await
    }

    /// [`Storage::remove_leftovers`] of files last modified at least `age`
    /// ago only (`None`: any): where a live writer of another process may
    /// be about to rename its temporary file, its young files stay.
    pub async fn remove_old_leftovers(
        &self,
        dirs: &[String],
        age: Option<std::time::Duration>,
        which: impl Fn(&str) -> bool + Send + 'static,
    ) -> usize {
        let Some(root) = &self.local_root else {
            return 0;
        };
        let roots = dirs.iter().map(|d| root.join(d)).collect();
        let before = age.and_then(|a| std::time::SystemTime::now().checked_sub(a));
        blocking(move || Ok(local::remove_files(roots, before, which))).await.unwrap_or(0)
    }
}

/// Runs local file system work `f` off the async runtime's threads.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> std::io::Result<T> + Send + 'static) -> Result<T, StorageError> {
    Ok(tokio::task::spawn_blocking(f).await.map_err(std::io::Error::other)??)
}
