//! The fence: a run writes to an object store only while its lease is
//! valid by its own monotonic clock.
//!
//! An object-store lease is renewed every few seconds and expires a TTL
//! after its last renewal; another run may take it over then. A holder
//! frozen past the TTL (SIGSTOP, a paused VM, a stalled container) learns
//! it lost the lease only when its next renewal fails, and on waking its
//! unit tasks would run at the same moment as that renewal: a checkpoint or
//! a file could land beside the new holder's. So every write (put, upload
//! part and completion, copy, rename, delete) first checks the fence: the
//! instant of the last successful renewal's request, plus the TTL, less a
//! margin for clocks and the take-over check ([`Fence::renewed`]). Past
//! it, the write fails with [`FenceError`] and nothing lands.
//!
//! Reads and lists pass. The lease's own renewals go to the store
//! unfenced ([`super::Storage::unfenced_store`]): they are what extend it.
//! Local outputs hold an OS lock instead, which no other process can take
//! while this one lives (frozen or not): their fence never closes.
//!
//! The fence also closes for good ([`Fence::close`]) when a conditional
//! write of a single-writer document finds that another run changed it
//! (see [`super::versions`]): the job's state is no longer this run's to
//! write, whatever this process's clocks say.

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions, PutOptions, PutPayload,
    PutResult, RenameOptions, UploadPart,
};
use std::future::Future;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// Kept off the lease's TTL: the other run decides by its wall clock,
/// which may run ahead of ours.
pub const MARGIN: Duration = Duration::from_secs(10);

/// Until when this process may write: by the monotonic clock (a process
/// frozen by SIGSTOP) and by the wall clock (a machine or VM suspended,
/// which stops the monotonic clock, and by which the other run decides).
#[derive(Debug, Default)]
pub struct Fence {
    /// None: no lease with an expiry (none taken yet, or an OS lock).
    valid_until: Mutex<Option<(Instant, SystemTime)>>,
    /// Another run has written since: closed for good ([`Fence::close`]).
    closed: std::sync::atomic::AtomicBool,
}

/// A write refused because the lease may have passed to another run.
#[derive(Debug, thiserror::Error)]
pub enum FenceError {
    /// The lease ran out by this process's clock.
    #[error(
        "this run's lease on the job expired by its own clock {late_ms} ms ago (the process was paused or cut off \
         from the store for longer than the lease lasts): another run may hold the job now, so this run writes \
         nothing more"
    )]
    Expired {
        /// How long ago the lease ran out.
        late_ms: u128,
    },
    /// A document only the lease holder writes was changed by another run.
    #[error(
        "this run found a document of the job's state that only it should write changed by another run, \
         so it writes nothing more (re-run to carry on)"
    )]
    Closed,
}

impl Fence {
    /// A renewal (or the taking) of the lease whose request was sent at
    /// `sent_at` succeeded: writes are allowed until `sent_at + ttl` less
    /// [`MARGIN`] (a quarter of a shorter TTL).
    pub fn renewed(&self, sent_at: Instant, ttl: Duration) {
        let valid = ttl - MARGIN.min(ttl / 4);
        let sent_wall = SystemTime::now() - sent_at.elapsed();
        if let Ok(mut v) = self.valid_until.lock() {
            *v = Some((sent_at + valid, sent_wall + valid));
        }
    }

    /// Closes the fence for good: this process found that another run
    /// wrote a document only the lease holder writes, so the lease is
    /// another run's, whatever its own clock says.
    pub fn close(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether a write may go out now.
    pub fn check(&self) -> Result<(), FenceError> {
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(FenceError::Closed);
        }
        let until = self.valid_until.lock().map(|v| *v).unwrap_or(None);
        let Some((mono, wall)) = until else {
            return Ok(());
        };
        let late = Instant::now()
            .checked_duration_since(mono)
            .or_else(|| SystemTime::now().duration_since(wall).ok());
        match late {
            Some(l) => Err(FenceError::Expired { late_ms: l.as_millis() }),
            None => Ok(()),
        }
    }

    /// The monotonic instant the fence closes, as far as known now.
    fn deadline(&self) -> Option<Instant> {
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return Some(Instant::now());
        }
        self.valid_until.lock().ok().and_then(|v| v.map(|(mono, _)| mono))
    }

    fn guard(&self) -> object_store::Result<()> {
        self.check().map_err(|e| object_store::Error::Generic {
            store: "lease fence",
            source: Box::new(e),
        })
    }
}

/// Runs the write `fut` if the fence is open, and cancels it if the fence
/// closes before it ends (the store client's own retries could otherwise
/// deliver it long after): renewals meanwhile move the deadline on.
///
/// The fence is checked by the clock before *every* step of the write, not
/// only when its timer fires: a process paused past the deadline wakes with
/// the write and the timer ready at once, and one more step of the write
/// would hand its request to the connection, which sends it whatever
/// becomes of this future.
async fn within<T>(fence: &Fence, fut: impl Future<Output = object_store::Result<T>>) -> object_store::Result<T> {
    tokio::pin!(fut);
    let checked = std::future::poll_fn(|cx| {
        fence.guard()?;
        fut.as_mut().poll(cx)
    });
    let mut checked = std::pin::pin!(checked);
    loop {
        let Some(deadline) = fence.deadline() else {
            return checked.await;
        };
        tokio::select! {
            biased;
            _ = tokio::time::sleep_until(deadline.into()) => fence.guard()?,
            r = &mut checked => return r,
        }
    }
}

/// `inner`, with every write checked against the fence first.
#[derive(Debug)]
pub struct FencedStore {
    pub(super) inner: Arc<dyn ObjectStore>,
    pub(super) fence: Arc<Fence>,
}

impl std::fmt::Display for FencedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fenced({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for FencedStore {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> object_store::Result<PutResult> {
        within(&self.fence, self.inner.put_opts(location, payload, opts)).await
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> object_store::Result<Box<dyn MultipartUpload>> {
        let upload = within(&self.fence, self.inner.put_multipart_opts(location, opts)).await?;
        Ok(Box::new(FencedUpload {
            upload,
            fence: self.fence.clone(),
        }))
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> object_store::Result<Vec<Bytes>> {
        self.inner.get_ranges(location, ranges).await
    }

    fn delete_stream(&self, locations: BoxStream<'static, object_store::Result<Path>>) -> BoxStream<'static, object_store::Result<Path>> {
        let fence = self.fence.clone();
        let checked = locations.map(move |l| fence.guard().and(l)).boxed();
        self.inner.delete_stream(checked)
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
        within(&self.fence, self.inner.copy_opts(from, to, options)).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> object_store::Result<()> {
        within(&self.fence, self.inner.rename_opts(from, to, options)).await
    }
}

/// A multipart upload whose parts and completion are fenced.
#[derive(Debug)]
struct FencedUpload {
    upload: Box<dyn MultipartUpload>,
    fence: Arc<Fence>,
}

#[async_trait]
impl MultipartUpload for FencedUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        if let Err(e) = self.fence.guard() {
            return Box::pin(async move { Err(e) });
        }
        let fence = self.fence.clone();
        let part = self.upload.put_part(data);
        Box::pin(async move { within(&fence, part).await })
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        // The object becomes visible here: the last moment to refuse.
        within(&self.fence, self.upload.complete()).await
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        self.upload.abort().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::ObjectStoreExt;
    use object_store::memory::InMemory;

    #[tokio::test]
    async fn past_its_lease_a_run_writes_nothing_and_still_reads() {
        let fence = Arc::new(Fence::default());
        let store = FencedStore {
            inner: Arc::new(InMemory::new()),
            fence: fence.clone(),
        };
        let p = Path::from("a/b.json");
        store.put(&p, PutPayload::from_static(b"1")).await.unwrap();
        // Renewed long ago: the lease ran out by this process's clock.
        fence.renewed(Instant::now() - Duration::from_secs(120), Duration::from_secs(60));
        let e = store.put(&p, PutPayload::from_static(b"2")).await.unwrap_err();
        assert!(e.to_string().contains("lease on the job expired"), "{e}");
        assert!(store.put_multipart(&Path::from("c")).await.is_err());
        assert!(store.delete(&p).await.is_err());
        assert_eq!(store.get(&p).await.unwrap().bytes().await.unwrap().as_ref(), b"1");
        // Renewed now: writes go again.
        fence.renewed(Instant::now(), Duration::from_secs(60));
        store.put(&p, PutPayload::from_static(b"3")).await.unwrap();
    }

    #[tokio::test]
    async fn a_write_still_running_when_the_fence_closes_is_cancelled() {
        let fence = Fence::default();
        fence.renewed(Instant::now(), Duration::from_millis(400));
        // A write the store's retries keep going (here: never ending).
        let never = std::future::pending::<object_store::Result<()>>();
        let e = within(&fence, never).await.unwrap_err();
        assert!(e.to_string().contains("lease on the job expired"), "{e}");
    }

    /// A process paused (SIGSTOP) while a write waits to go out wakes with
    /// two things ready at once: the write, and the fence's deadline long
    /// past. The write must not take one more step: a step is what hands
    /// its request to the connection, which sends it whatever happens to
    /// the future after. Here the write's step is the only thing that sets
    /// `sent`; the pause is the runtime's one thread blocked past the
    /// deadline, so on waking the timer has not yet been seen to fire.
    #[test]
    fn a_write_ready_after_a_pause_past_the_deadline_takes_no_step() {
        for _ in 0..8 {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let sent = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let r = rt.block_on(async {
                let fence = Arc::new(Fence::default());
                fence.renewed(Instant::now(), Duration::from_millis(200));
                let (go, ready) = tokio::sync::oneshot::channel::<()>();
                let flag = sent.clone();
                let write = async move {
                    let _ = ready.await;
                    flag.store(true, std::sync::atomic::Ordering::SeqCst);
                    Ok::<(), object_store::Error>(())
                };
                let f = fence.clone();
                let task = tokio::spawn(async move { within(&f, write).await });
                tokio::task::yield_now().await;
                // The write becomes ready, then the whole process stops
                // past the deadline before anything runs again.
                let _ = go.send(());
                std::thread::sleep(Duration::from_millis(220));
                task.await.unwrap()
            });
            assert!(r.is_err(), "the write went out after the lease ran out");
            assert!(
                !sent.load(std::sync::atomic::Ordering::SeqCst),
                "the write took a step past the deadline"
            );
        }
    }
}
