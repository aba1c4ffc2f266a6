//! For tests: an in-memory object store that counts the requests reaching
//! it, by kind, as an S3 endpoint would bill them. A HEAD is a `get_opts`
//! with `head` set; a range read is one with a range; a listing is one
//! request a page (the in-memory store answers in one page).

use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions, PutOptions, PutPayload,
    PutResult, RenameOptions,
};
use std::sync::{Arc, Mutex};

/// Requests of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Kind {
    /// A whole object read.
    Get,
    /// A read of a byte range.
    GetRange,
    Head,
    Put,
    Delete,
    List,
    Copy,
}

/// An in-memory store and the requests made of it, each with its path.
#[derive(Debug, Default)]
pub(crate) struct Counted {
    inner: InMemory,
    made: Arc<Mutex<Vec<(Kind, Path)>>>,
}

impl Counted {
    fn note(&self, kind: Kind, path: &Path) {
        self.made.lock().unwrap().push((kind, path.clone()));
    }

    /// Reads made so far: whole, ranged and HEADs.
    pub(crate) fn reads(&self) -> usize {
        self.made
            .lock()
            .unwrap()
            .iter()
            .filter(|(k, _)| matches!(k, Kind::Get | Kind::GetRange | Kind::Head))
            .count()
    }

    /// Every request made so far, in order.
    pub(crate) fn made(&self) -> Vec<(Kind, Path)> {
        self.made.lock().unwrap().clone()
    }

    /// Forgets the requests made so far.
    pub(crate) fn reset(&self) {
        self.made.lock().unwrap().clear();
    }
}

impl std::fmt::Display for Counted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Counted")
    }
}

#[async_trait]
impl ObjectStore for Counted {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> object_store::Result<PutResult> {
        self.note(Kind::Put, location);
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.note(Kind::Put, location);
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> object_store::Result<GetResult> {
        let kind = match (options.head, options.range.is_some()) {
            (true, _) => Kind::Head,
            (false, true) => Kind::GetRange,
            (false, false) => Kind::Get,
        };
        self.note(kind, location);
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(&self, locations: BoxStream<'static, object_store::Result<Path>>) -> BoxStream<'static, object_store::Result<Path>> {
        // One request a path (the S3 client may send many in one).
        let made = self.made.clone();
        let noted = locations.inspect(move |p| {
            if let Ok(p) = p {
                made.lock().unwrap().push((Kind::Delete, p.clone()));
            }
        });
        self.inner.delete_stream(noted.boxed())
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.note(Kind::List, prefix.unwrap_or(&Path::default()));
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.note(Kind::List, prefix.unwrap_or(&Path::default()));
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> object_store::Result<()> {
        self.note(Kind::Copy, to);
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> object_store::Result<()> {
        self.note(Kind::Copy, to);
        self.inner.rename_opts(from, to, options).await
    }
}
