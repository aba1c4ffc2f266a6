//! The Delta engine's store, keeping each commit file it reads.
//!
//! `delta_kernel` keeps no actions in a snapshot: every scan of the files,
//! every transaction-identifier lookup and every commit reads the commit
//! files since the last checkpoint again. A run or a change of a job asks
//! that of a table many times, so without this a table of 30 commits on
//! S3 cost 30 GETs a question.
//!
//! A commit file (`_delta_log/<20 digits>.json`) never changes once it is
//! written: it is created with put-if-absent, and a version is never
//! written twice (the protocol's own rule, which the log's readers rely
//! on). So its bytes are kept here, by path, the first time it is read
//! whole, and later reads of it are answered from memory. Nothing else is
//! kept: not `_last_checkpoint` (rewritten), not checkpoints (read in
//! ranges), not a missing file (it may be written next). Writes, lists
//! and ranged or conditional reads go to the store.
//!
//! Bounded: at most [`MAX_BYTES`] of commits are kept; past it the oldest
//! versions go first (newer ones are what later snapshots still read,
//! older ones a checkpoint has covered).

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions,
    PutOptions, PutPayload, PutResult, RenameOptions,
};
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// The most bytes of commit files kept for one table.
pub(super) const MAX_BYTES: usize = 32 << 20;

/// A commit file read whole: its bytes and what the store said of it.
#[derive(Debug, Clone)]
struct Kept {
    bytes: Bytes,
    meta: ObjectMeta,
    attributes: object_store::Attributes,
}

/// The commit files kept, by version then path (one table's log has one
/// path a version), and their bytes in all.
#[derive(Debug, Default)]
struct Shelf {
    files: BTreeMap<(u64, Path), Kept>,
    bytes: usize,
}

/// `inner`, with the commit files it reads whole kept (see the module doc).
#[derive(Debug)]
pub(super) struct CommitCache {
    inner: Arc<dyn ObjectStore>,
    kept: Mutex<Shelf>,
}

impl CommitCache {
    pub(super) fn new(inner: Arc<dyn ObjectStore>) -> CommitCache {
        CommitCache {
            inner,
            kept: Mutex::new(Shelf::default()),
        }
    }

    fn lookup(&self, key: &(u64, Path)) -> Option<Kept> {
        self.kept.lock().ok()?.files.get(key).cloned()
    }

    fn keep(&self, key: (u64, Path), kept: Kept) {
        let Ok(mut guard) = self.kept.lock() else {
            return;
        };
        let Shelf { files: map, bytes } = &mut *guard;
        let size = kept.bytes.len();
        if size > MAX_BYTES {
            return;
        }
        if let Some(old) = map.insert(key, kept) {
            *bytes -= old.bytes.len();
        }
        *bytes += size;
        while *bytes > MAX_BYTES {
            let Some((_, oldest)) = map.pop_first() else { break };
            *bytes -= oldest.bytes.len();
        }
    }
}

/// The version of a commit file's path (`…/_delta_log/<20 digits>.json`).
fn commit_version(location: &Path) -> Option<u64> {
    let mut parts = location.as_ref().rsplit('/');
    let name = parts.next()?;
    if parts.next()? != "_delta_log" {
        return None;
    }
    let digits = name.strip_suffix(".json")?;
    (digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Whether `options` ask for the whole object, unconditionally.
fn whole(options: &GetOptions) -> bool {
    options.range.is_none()
        && !options.head
        && options.if_match.is_none()
        && options.if_none_match.is_none()
        && options.if_modified_since.is_none()
        && options.if_unmodified_since.is_none()
        && options.version.is_none()
}

fn answer(kept: Kept) -> GetResult {
    let len = kept.bytes.len() as u64;
    let bytes = kept.bytes;
    GetResult {
        payload: GetResultPayload::Stream(Box::pin(futures::stream::once(async move { Ok(bytes) }))),
        meta: kept.meta,
        range: 0..len,
        attributes: kept.attributes,
        extensions: Default::default(),
    }
}

impl std::fmt::Display for CommitCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CommitCache({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for CommitCache {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> object_store::Result<GetResult> {
        let key = match commit_version(location) {
            Some(version) if whole(&options) => (version, location.clone()),
            _ => return self.inner.get_opts(location, options).await,
        };
        if let Some(kept) = self.lookup(&key) {
            return Ok(answer(kept));
        }
        let result = self.inner.get_opts(location, options).await?;
        let (meta, attributes) = (result.meta.clone(), result.attributes.clone());
        let bytes = result.bytes().await?;
        let kept = Kept { bytes, meta, attributes };
        self.keep(key, kept.clone());
        Ok(answer(kept))
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> object_store::Result<Vec<Bytes>> {
        self.inner.get_ranges(location, ranges).await
    }

    fn delete_stream(&self, locations: BoxStream<'static, object_store::Result<Path>>) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(&self, prefix: Option<&Path>, offset: &Path) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> object_store::Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::counted::Counted;
    use object_store::ObjectStoreExt;

    fn commit(v: u64) -> Path {
        Path::from(format!("t/events/_delta_log/{v:020}.json"))
    }

    #[tokio::test]
    async fn a_commit_file_is_read_from_the_store_once_and_other_files_every_time() {
        let counted = Arc::new(Counted::default());
        let cache = CommitCache::new(counted.clone());
        let others = [
            Path::from("t/events/_delta_log/_last_checkpoint"),
            Path::from("t/events/_delta_log/00000000000000000010.checkpoint.parquet"),
            Path::from("t/events/_delta_log/_00000000000000000003.json.tmp"),
            Path::from("t/events/part-1.json"),
        ];
        for p in others.iter().chain([&commit(3)]) {
            counted.put(p, PutPayload::from_static(b"{\"add\":{}}\n")).await.unwrap();
        }
        for _ in 0..3 {
            let got = cache.get(&commit(3)).await.unwrap();
            assert_eq!(got.meta.location, commit(3));
            assert_eq!(got.bytes().await.unwrap(), Bytes::from_static(b"{\"add\":{}}\n"));
        }
        assert_eq!(counted.reads(), 1, "a commit file is read once");
        // A ranged read and a head go to the store.
        let part = cache.get_range(&commit(3), 1..4).await.unwrap();
        assert_eq!(part, Bytes::from_static(b"\"ad"));
        cache.head(&commit(3)).await.unwrap();
        assert_eq!(counted.reads(), 3);
        for p in &others {
            cache.get(p).await.unwrap().bytes().await.unwrap();
            cache.get(p).await.unwrap().bytes().await.unwrap();
        }
        assert_eq!(counted.reads(), 3 + 2 * others.len(), "other files are read each time");
        // A commit not there yet is not remembered as missing.
        assert!(cache.get(&commit(4)).await.is_err());
        counted.put(&commit(4), PutPayload::from_static(b"{}\n")).await.unwrap();
        assert_eq!(
            cache.get(&commit(4)).await.unwrap().bytes().await.unwrap(),
            Bytes::from_static(b"{}\n")
        );
    }

    #[tokio::test]
    async fn past_its_bound_the_oldest_versions_go_first() {
        let counted = Arc::new(Counted::default());
        let cache = CommitCache::new(counted.clone());
        let big = vec![b'x'; MAX_BYTES / 3 + 1];
        for v in 0..4 {
            counted.put(&commit(v), PutPayload::from(big.clone())).await.unwrap();
            cache.get(&commit(v)).await.unwrap().bytes().await.unwrap();
        }
        let Shelf { files: map, bytes } = &*cache.kept.lock().unwrap();
        assert!(*bytes <= MAX_BYTES, "{bytes} bytes kept");
        let versions: Vec<u64> = map.keys().map(|(v, _)| *v).collect();
        assert_eq!(versions, vec![2, 3]);
    }

    #[test]
    fn only_a_commit_files_name_is_a_commit() {
        assert_eq!(commit_version(&commit(12)), Some(12));
        for name in [
            "t/_delta_log/12.json",
            "t/_delta_log/0000000000000000001x.json",
            "t/_delta_log/00000000000000000012.crc",
            "t/other/00000000000000000012.json",
            "00000000000000000012.json",
        ] {
            assert_eq!(commit_version(&Path::from(name)), None, "{name}");
        }
    }
}
