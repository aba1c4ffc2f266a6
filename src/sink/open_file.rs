//! One data file being written: Parquet encoding into [`Chunks`], handed to
//! an `object_store` `BufWriter` that keeps the bytes out of sight until the
//! file is complete (the *Visibility and durability* section of [`super`]).
//! A file is either encoded from Arrow batches or assembled from row
//! groups copied whole from other files ([`super::splice`]), never both.
//! The encoder's output buffer: what a Parquet writer writes into, in
//! chunks the upload takes as they are.

use super::splice::Span;
use super::{Sink, SinkError};
use crate::storage::checksum::Checksum;
use arrow_schema::SchemaRef;
use object_store::buffered::BufWriter;
use parquet::arrow::ArrowWriter;
use parquet::column::writer::ColumnCloseResult;
use parquet::file::writer::SerializedFileWriter;
use std::sync::Arc;

/// How a file's row groups are made.
enum Encoder {
    /// Encoded from Arrow batches.
    Arrow(ArrowWriter<Chunks>),
    /// Copied whole from other files.
    Copied(SerializedFileWriter<Chunks>),
}

/// One file being written: the encoder, and the upload its bytes go to.
pub(super) struct OpenFile {
    /// Path relative to the output root: its final name.
    pub(super) rel: String,
    encoder: Encoder,
    out: BufWriter,
    /// The checksum of the bytes handed to the upload so far.
    sum: Checksum,
    /// How many bytes were handed to the upload so far.
    handed: u64,
    /// Rows written to it.
    pub(super) rows: u64,
}

impl OpenFile {
    /// Starts file `rel` of `sink`, encoded with `props`: nothing is
    /// visible under `rel` until [`OpenFile::close`] completes it.
    pub(super) fn create_with(
        sink: &Sink,
        rel: String,
        schema: SchemaRef,
        props: parquet::file::properties::WriterProperties,
    ) -> Result<OpenFile, SinkError> {
        let writer = ArrowWriter::try_new(Chunks::default(), schema, Some(props)).map_err(|e| write_error(&rel, e))?;
        Ok(OpenFile::start(sink, rel, Encoder::Arrow(writer)))
    }

    /// [`OpenFile::create_with`] for a file of row groups copied whole
    /// ([`OpenFile::append_row_group`]): the same footer, Arrow schema
    /// included, as an encoded file of `schema` and `props` has.
    pub(super) fn create_copied(
        sink: &Sink,
        rel: String,
        schema: SchemaRef,
        props: parquet::file::properties::WriterProperties,
    ) -> Result<OpenFile, SinkError> {
        let writer = ArrowWriter::try_new(Chunks::default(), schema, Some(props))
            .and_then(|w| w.into_serialized_writer())
            .map_err(|e| write_error(&rel, e))?
            .0;
        Ok(OpenFile::start(sink, rel, Encoder::Copied(writer)))
    }

    fn start(sink: &Sink, rel: String, encoder: Encoder) -> OpenFile {
        let out = sink.storage().upload(&rel);
        OpenFile {
            rel,
            encoder,
            out,
            sum: Checksum::default(),
            handed: 0,
            rows: 0,
        }
    }

    /// Whether the file is made of copied row groups.
    pub(super) fn is_copied(&self) -> bool {
        matches!(self.encoder, Encoder::Copied(_))
    }

    /// Bytes handed to the upload so far.
    pub(super) fn bytes_written(&self) -> usize {
        match &self.encoder {
            Encoder::Arrow(w) => w.bytes_written(),
            Encoder::Copied(w) => w.bytes_written(),
        }
    }

    /// Bytes of the row group being encoded, not yet handed on.
    pub(super) fn in_progress_size(&self) -> usize {
        match &self.encoder {
            Encoder::Arrow(w) => w.in_progress_size(),
            Encoder::Copied(_) => 0,
        }
    }

    fn chunks(&mut self) -> &mut Chunks {
        match &mut self.encoder {
            Encoder::Arrow(w) => w.inner_mut(),
            Encoder::Copied(w) => w.inner_mut(),
        }
    }

    fn error(&self, e: impl std::error::Error + Send + Sync + 'static) -> SinkError {
        write_error(&self.rel, e)
    }

    /// Hands what the encoder has produced to the upload.
    async fn drain(&mut self) -> Result<(), SinkError> {
        for b in self.chunks().take() {
            self.sum.update(&b);
            self.handed += b.len() as u64;
            self.out.put(b).await.map_err(|e| self.error(e))?;
        }
        Ok(())
    }

    /// Encodes `batch`, handing finished row groups to the upload.
    pub(super) async fn write(&mut self, batch: &arrow_array::RecordBatch) -> Result<(), SinkError> {
        let Encoder::Arrow(w) = &mut self.encoder else {
            return Err(self.error(not_encoded()));
        };
        let groups = w.flushed_row_groups().len();
        let written = w.write(batch);
        let flushed = w.flushed_row_groups().len() != groups;
        written.map_err(|e| self.error(e))?;
        if flushed {
            self.drain().await?;
        }
        Ok(())
    }

    /// Appends a row group copied whole: `columns` are its column chunks,
    /// whose bytes `span` holds.
    pub(super) async fn append_row_group(&mut self, span: &Span, columns: Vec<ColumnCloseResult>) -> Result<(), SinkError> {
        let Encoder::Copied(w) = &mut self.encoder else {
            return Err(self.error(not_encoded()));
        };
        let appended = (|| {
            let mut rg = w.next_row_group()?;
            for c in columns {
                rg.append_column(span, c)?;
            }
            rg.close().map(|_| ())
        })();
        appended.map_err(|e| self.error(e))?;
        self.drain().await
    }

    /// Ends the row group in progress.
    pub(super) async fn end_row_group(&mut self) -> Result<(), SinkError> {
        if let Encoder::Arrow(w) = &mut self.encoder {
            w.flush().map_err(|e| write_error(&self.rel, e))?;
        }
        self.drain().await
    }

    /// Writes the footer and completes the upload. A failed completion
    /// leaves nothing visible (the single PUT, or the multipart
    /// completion, did not happen); before it, a failure aborts the upload.
    /// Returns the file's name and the checksum of its bytes.
    pub(super) async fn close(mut self) -> Result<Closed, SinkError> {
        let encoded = async {
            let finished = match &mut self.encoder {
                Encoder::Arrow(w) => w.finish(),
                Encoder::Copied(w) => w.finish(),
            };
            let footer = finished.map_err(|e| self.error(e))?;
            self.drain().await?;
            Ok(footer)
        }
        .await;
        let footer = match encoded {
            Ok(f) => f,
            Err(e) => {
                self.abort().await;
                return Err(e);
            }
        };
        use tokio::io::AsyncWriteExt;
        // Not aborted on failure: a `BufWriter` cannot be aborted once shut down.
        self.out.shutdown().await.map_err(|e| self.error(e))?;
        Ok(Closed {
            rel: self.rel,
            checksum: self.sum.value(),
            bytes: self.handed,
            footer: Arc::new(footer),
        })
    }

    /// Drops the upload: nothing appears under the file's name. Failing to
    /// clean up is logged, not returned: what is left (a local staging file,
    /// the parts of an S3 upload) is never listed as a file.
    pub(super) async fn abort(mut self) {
        if let Err(e) = self.out.abort().await {
            tracing::warn!("abandoning the upload of {}: {e}", self.rel);
        }
    }
}

/// A completed file.
pub(super) struct Closed {
    /// Its name, relative to the output root.
    pub(super) rel: String,
    /// The checksum of its bytes.
    pub(super) checksum: String,
    /// Its size: the bytes handed to the upload.
    pub(super) bytes: u64,
    /// Its footer: row groups and their statistics.
    pub(super) footer: Arc<parquet::file::metadata::ParquetMetaData>,
}

/// A file's row groups are either encoded or copied, never both.
fn not_encoded() -> std::io::Error {
    std::io::Error::other("a file of copied row groups cannot take encoded rows, nor the other way round")
}

fn write_error(rel: &str, e: impl std::error::Error + Send + Sync + 'static) -> SinkError {
    SinkError::Write {
        path: rel.into(),
        source: Box::new(e),
    }
}

/// The encoder's output: bytes in fixed-size chunks handed to the upload
/// without further copies. (`AsyncArrowWriter` instead collects a row
/// group in one `Vec` that reallocates as it grows and is then copied into
/// the upload buffer, so a row group's bytes are held several times over
/// at its end.)
#[derive(Default)]
pub(super) struct Chunks {
    done: Vec<bytes::Bytes>,
    current: Vec<u8>,
}

/// Size of an output chunk.
const CHUNK_BYTES: usize = 256 * 1024;

impl std::io::Write for Chunks {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() >= CHUNK_BYTES / 2 {
            // A whole page: its own exact-size chunk.
            self.seal();
            self.done.push(bytes::Bytes::copy_from_slice(buf));
            return Ok(buf.len());
        }
        if self.current.capacity() - self.current.len() < buf.len() {
            self.seal();
        }
        if self.current.capacity() == 0 {
            self.current.reserve_exact(CHUNK_BYTES);
        }
        self.current.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Chunks {
    fn seal(&mut self) {
        if !self.current.is_empty() {
            self.done.push(std::mem::take(&mut self.current).into());
        }
    }

    /// The bytes written so far, in order.
    pub(super) fn take(&mut self) -> Vec<bytes::Bytes> {
        self.seal();
        std::mem::take(&mut self.done)
    }
}
