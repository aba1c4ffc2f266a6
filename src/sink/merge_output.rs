//! Where a merge's rows go: files of about the target size, written
//! hidden and rolled in turn, by re-encoding batches or copying an
//! input's row groups as they are; and why a merge stops.

use super::layout::hidden_name;
use super::merge_input::Input;
use super::open_file::OpenFile;
use super::splice;
use super::unit_writer::make_durable;
use super::{Sink, SinkError, WrittenFile};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::file::properties::WriterProperties;

/// Where merged rows go: files of about the target size, rolled in turn.
pub(super) struct Out<'a> {
    sink: &'a Sink,
    name_of: &'a dyn Fn(u64) -> String,
    schema: SchemaRef,
    pub(super) props: WriterProperties,
    target: usize,
    open: Option<OpenFile>,
    pub(super) done: Vec<WrittenFile>,
}

impl<'a> Out<'a> {
    /// Outputs named `name_of(0)`, `name_of(1)`, … (hidden until
    /// revealed), each of about `target` bytes.
    pub(super) fn new(
        sink: &'a Sink,
        name_of: &'a dyn Fn(u64) -> String,
        schema: SchemaRef,
        props: WriterProperties,
        target: usize,
    ) -> Out<'a> {
        Out {
            sink,
            name_of,
            schema,
            props,
            target,
            open: None,
            done: Vec::new(),
        }
    }

    /// The open output, a new one if none is open or the open one holds
    /// the other kind of row groups (`copied`: copied whole, or encoded).
    async fn file(&mut self, copied: bool) -> Result<&mut OpenFile, SinkError> {
        if self.open.as_ref().is_some_and(|f| f.is_copied() != copied) {
            self.roll().await?;
        }
        let f = match self.open.take() {
            Some(f) => f,
            None => {
                let rel = hidden_name(&(self.name_of)(self.done.len() as u64));
                let (schema, props) = (self.schema.clone(), self.props.clone());
                match copied {
                    true => OpenFile::create_copied(self.sink, rel, schema, props)?,
                    false => OpenFile::create_with(self.sink, rel, schema, props)?,
                }
            }
        };
        Ok(self.open.insert(f))
    }

    pub(super) async fn write(&mut self, batch: &RecordBatch) -> Result<(), SinkError> {
        let f = self.file(false).await?;
        f.write(batch).await?;
        f.rows += batch.num_rows() as u64;
        crate::util::failpoint::hit("compact-writing");
        if f.bytes_written() + f.in_progress_size() >= self.target {
            self.roll().await?;
        }
        Ok(())
    }

    /// Copies `input`'s row groups as they are (see [`splice::copyable`]),
    /// reading the whole file in order to check it against the checksum it
    /// was committed with: a mismatch fails the merge, so its outputs are
    /// never revealed.
    pub(super) async fn copy(&mut self, input: &Input) -> Result<(), SinkError> {
        let path = self.sink.storage().path(&input.rel);
        let store = self.sink.storage().store().as_ref();
        let mut filters = splice::read_bloom_filters(store, &path, &input.meta).await?;
        let mut sum = crate::storage::checksum::Checksum::default();
        let mut pos = 0;
        for rg in 0..input.meta.num_row_groups() {
            let end = splice::row_group_end(&input.meta, rg);
            let span = splice::read_span(store, &path, pos..end).await?;
            sum.update(span.bytes());
            pos = end;
            let columns = splice::closed_columns(&input.meta, rg, &mut filters);
            let f = self.file(true).await?;
            f.append_row_group(&span, columns).await?;
            f.rows += input.meta.row_group(rg).num_rows().max(0) as u64;
            crate::util::failpoint::hit("compact-writing");
            if f.bytes_written() >= self.target {
                self.roll().await?;
            }
        }
        sum.update(splice::read_span(store, &path, pos..input.bytes).await?.bytes());
        let expected = input.checksum.as_deref().unwrap_or_default();
        if sum.value() != expected {
            return Err(SinkError::Read {
                path: input.rel.clone(),
                source: format!("its content is not what was committed ({}, {expected} when committed)", sum.value()).into(),
            });
        }
        Ok(())
    }

    pub(super) async fn roll(&mut self) -> Result<(), SinkError> {
        if let Some(f) = self.open.take() {
            let rows = f.rows;
            let super::open_file::Closed {
                rel: hidden,
                checksum,
                bytes,
                footer,
            } = f.close().await?;
            make_durable(self.sink, &hidden, bytes).await?;
            let rel = (self.name_of)(self.done.len() as u64);
            self.done.push(WrittenFile {
                rel,
                rows,
                bytes,
                checksum,
                footer: Some(footer),
            });
        }
        Ok(())
    }

    pub(super) async fn abort(&mut self) {
        if let Some(f) = self.open.take() {
            f.abort().await;
        }
    }
}

/// Why a merge stopped.
pub(super) enum Stop {
    Unsorted,
    Failed(SinkError),
}

impl From<SinkError> for Stop {
    fn from(e: SinkError) -> Stop {
        Stop::Failed(e)
    }
}
