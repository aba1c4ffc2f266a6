//! One data file being written: Parquet encoding into [`Chunks`], handed to
//! an `object_store` `BufWriter` that keeps the bytes out of sight until the
//! file is complete (the *Visibility and durability* section of [`super`]).

use super::checksum::Checksum;
use super::chunks::Chunks;
use super::{Sink, SinkError};
use arrow_schema::SchemaRef;
use object_store::buffered::BufWriter;
use parquet::arrow::ArrowWriter;

/// One file being written: the encoder, and the upload its bytes go to.
pub(super) struct OpenFile {
    /// Path relative to the output root: its final name.
    pub(super) rel: String,
    pub(super) writer: ArrowWriter<Chunks>,
    out: BufWriter,
    /// The checksum of the bytes handed to the upload so far.
    sum: Checksum,
    /// Rows written to it.
    pub(super) rows: u64,
}

impl OpenFile {
    /// Starts file `rel` of `sink`: nothing is visible under `rel` until
    /// [`OpenFile::close`] completes it.
    pub(super) fn create(sink: &Sink, rel: String, schema: SchemaRef) -> Result<OpenFile, SinkError> {
        OpenFile::create_with(sink, rel, schema, sink.props.clone())
    }

    /// [`OpenFile::create`] with writer properties of its own.
    pub(super) fn create_with(
        sink: &Sink,
        rel: String,
        schema: SchemaRef,
        props: parquet::file::properties::WriterProperties,
    ) -> Result<OpenFile, SinkError> {
        let out = BufWriter::with_capacity(sink.store.clone(), sink.path(&rel), sink.part_bytes).with_max_concurrency(2);
        let writer = ArrowWriter::try_new(Chunks::default(), schema, Some(props)).map_err(|e| SinkError::Write {
            path: rel.clone(),
            source: Box::new(e),
        })?;
        Ok(OpenFile {
            rel,
            writer,
            out,
            sum: Checksum::default(),
            rows: 0,
        })
    }

    fn error(&self, e: impl std::error::Error + Send + Sync + 'static) -> SinkError {
        SinkError::Write {
            path: self.rel.clone(),
            source: Box::new(e),
        }
    }

    /// Hands what the encoder has produced to the upload.
    async fn drain(&mut self) -> Result<(), SinkError> {
        for b in self.writer.inner_mut().take() {
            self.sum.update(&b);
            self.out.put(b).await.map_err(|e| self.error(e))?;
        }
        Ok(())
    }

    /// Encodes `batch`, handing finished row groups to the upload.
    pub(super) async fn write(&mut self, batch: &arrow_array::RecordBatch) -> Result<(), SinkError> {
        let groups = self.writer.flushed_row_groups().len();
        self.writer.write(batch).map_err(|e| self.error(e))?;
        if self.writer.flushed_row_groups().len() != groups {
            self.drain().await?;
        }
        Ok(())
    }

    /// Ends the row group in progress.
    pub(super) async fn end_row_group(&mut self) -> Result<(), SinkError> {
        self.writer.flush().map_err(|e| self.error(e))?;
        self.drain().await
    }

    /// Writes the footer and completes the upload. A failed completion
    /// leaves nothing visible (the single PUT, or the multipart
    /// completion, did not happen); before it, a failure aborts the upload.
    /// Returns the file's name and the checksum of its bytes.
    pub(super) async fn close(mut self) -> Result<(String, String), SinkError> {
        let encoded = async {
            self.writer.finish().map_err(|e| self.error(e))?;
            self.writer.sync().map_err(|e| self.error(e))?;
            self.drain().await
        }
        .await;
        if let Err(e) = encoded {
            self.abort().await;
            return Err(e);
        }
        use tokio::io::AsyncWriteExt;
        // Not aborted on failure: a `BufWriter` cannot be aborted once shut down.
        self.out.shutdown().await.map_err(|e| self.error(e))?;
        Ok((self.rel, self.sum.value()))
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
