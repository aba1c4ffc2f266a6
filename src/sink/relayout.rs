//! Writing stored files again in this sink's layout (partition keys,
//! codec, row groups, bloom filters): the data side of a job's relayout
//! (`crate::job`'s, which decides which files and keeps the record).
//!
//! # Invariants
//!
//! - **Rows unchanged, in the order read.** Each input is read back batch
//!   by batch, the partition keys its path holds (`chain=…`, `date=…`) put
//!   back as the columns they were taken from, and the rows handed to a
//!   [`UnitWriter`] of this sink, which routes them to the new partitions
//!   and declares a sort order only where it checked one. The rows written
//!   are checked against the inputs' footers before [`Sink::rewrite`]
//!   returns.
//! - **Nothing visible until revealed.** Outputs are written under their
//!   hidden names ([`super::hidden_name`]); the caller reveals them
//!   ([`Sink::reveal`]) once it has recorded them.
//! - **Bounded memory.** One input batch at a time, and the writer's share
//!   of the memory budget: never a whole file or partition in memory.
//!
//! # Derived tables
//!
//! - **Decoded from stored logs.** With [`Relayout::decoder`], the inputs
//!   are a raw `events` table's files: each batch is read back as the
//!   logs the service sent ([`crate::decode::abi::stored_logs`]), decoded
//!   as a page is, and each decoded table's rows go to writers of that
//!   table. Every row read is checked against the footers; the rows
//!   written are what decoding made of them (a log of no decoded event is
//!   counted, as in an export).
//! - **Hashes in the other encoding.** A column the file holds as 0x-hex
//!   text and the schema as bytes (or the other way round, also as list
//!   items: `topics`) is converted as decoding would have written it: the
//!   output's `hash_encoding` changed.
//! - **Wide-integer columns from stored values.** A column the schema has
//!   and a file lacks, named `<c>_decimal38` or `<c>_binary` beside the
//!   exact decimal text `<c>` of a wide integer (`u256 = [...]`), is
//!   computed from that text as decoding computes it: Decimal128(38,0),
//!   null where the value does not fit; 32 bytes, big-endian two's
//!   complement.

use super::reader::StoreReader;
use super::{Sink, SinkError, UnitWriter, WrittenFile};
use crate::decode::Decoded;
use crate::decode::abi::{DecodeCounts, LogDecoder};
use crate::vocab::chain::Chain;
use arrow_array::{Array, ArrayRef, BooleanArray, Date32Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, SchemaRef, TimeUnit};
use futures::StreamExt;
use parquet::arrow::ParquetRecordBatchStreamBuilder;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Rows read from an input at a time.
const BATCH_ROWS: usize = 8192;

/// What to write: a table's files again, named as one unit's (or one
/// compaction generation's).
#[derive(Debug, Clone)]
pub struct Relayout {
    /// The table (its directory under the output).
    pub table: String,
    /// Its schema with every column, partition keys included (as decoded).
    pub schema: SchemaRef,
    /// Start of the outputs' names: `<job>-<unit>`, or
    /// `<job>-compacted-<generation>`.
    pub prefix: String,
    /// Sequence of the first output.
    pub next_seq: u64,
    /// The chain of every row (a unit's); None: from the path or the
    /// `chain` column.
    pub chain: Option<Chain>,
    /// Bytes of unflushed row groups the writer may hold.
    pub memory: usize,
    /// Decode the inputs (a raw `events` table's files) into the
    /// decoder's tables, instead of writing them again as they are.
    pub decoder: Option<Arc<LogDecoder>>,
    /// The schema each of the decoder's tables is written with (its
    /// columns the export writes), in its order; a table without one is
    /// written with every column.
    pub decoded_schemas: Vec<SchemaRef>,
}

/// What [`Sink::rewrite`] wrote.
#[derive(Debug)]
pub struct Relaid {
    /// The outputs, named by their final names (still hidden).
    pub files: Vec<WrittenFile>,
    /// Rows read, and written.
    pub rows: u64,
    /// The sequence after the last output's.
    pub next_seq: u64,
    /// Decoding: what it left out or changed.
    pub counts: DecodeCounts,
}

/// An input: a file of the output (path relative to its root) and its size.
#[derive(Debug, Clone)]
pub struct RelayoutInput {
    /// Path relative to the output root.
    pub rel: String,
    /// Bytes.
    pub bytes: u64,
}

/// The `key=value` directories of `rel` between its table and its name.
fn path_values(rel: &str) -> Vec<(String, String)> {
    let parts: Vec<&str> = rel.split('/').collect();
    let dirs = parts.get(1..parts.len().saturating_sub(1)).unwrap_or_default();
    dirs.iter()
        .filter_map(|d| d.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn read_failed(rel: &str, e: impl std::error::Error + Send + Sync + 'static) -> SinkError {
    SinkError::Read {
        path: rel.into(),
        source: Box::new(e),
    }
}

fn unfit(rel: &str, message: String) -> SinkError {
    SinkError::Read {
        path: rel.into(),
        source: message.into(),
    }
}

impl Sink {
    /// Writes the rows of `inputs` (files of `job.table`, read in this
    /// order) again in this sink's layout, under hidden names (see the
    /// module's invariants).
    pub async fn rewrite(self: &Arc<Sink>, job: &Relayout, inputs: &[RelayoutInput]) -> Result<Relaid, SinkError> {
        // Writers by output table (the decoder's index; 0 for `job.table`) and chain.
        let mut writers: BTreeMap<(usize, Chain), UnitWriter> = BTreeMap::new();
        let by_chain = self.partition_by.iter().any(|k| k == "chain");
        let by_date = self.partitions_by_date();
        let (mut read, mut footers) = (0u64, 0u64);
        let mut counts = DecodeCounts::default();
        for input in inputs {
            let reader = StoreReader::new(self.storage().store().clone(), self.storage().path(&input.rel), input.bytes);
            let builder = ParquetRecordBatchStreamBuilder::new(reader)
                .await
                .map_err(|e| read_failed(&input.rel, e))?;
            footers += builder.metadata().file_metadata().num_rows().max(0) as u64;
            let mut stream = builder
                .with_batch_size(BATCH_ROWS)
                .build()
                .map_err(|e| read_failed(&input.rel, e))?;
            let values = path_values(&input.rel);
            let value_of = |key: &str| values.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
            let path_chain = match value_of("chain") {
                Some(c) => Some(
                    c.parse::<Chain>()
                        .map_err(|_| unfit(&input.rel, format!("its directory names chain `{c}`, which is none chainetl knows")))?,
                ),
                None => None,
            };
            let path_day = match value_of("date") {
                Some(d) => Some(
                    crate::vocab::window::parse_date(d)
                        .ok_or_else(|| unfit(&input.rel, format!("its directory names date `{d}`, which is no date")))?,
                ),
                None => None,
            };
            while let Some(batch) = stream.next().await {
                let batch = batch.map_err(|e| read_failed(&input.rel, e))?;
                read += batch.num_rows() as u64;
                let full = whole(&job.schema, &batch, &values, &input.rel)?;
                let chain = job.chain.or(path_chain);
                let mut outputs: Vec<(usize, Chain, Decoded)> = Vec::new();
                if let Some(decoder) = &job.decoder {
                    // Decoding needs each row's chain, with or without a chain key.
                    let parts = match chain {
                        Some(c) => vec![(c, full, None)],
                        None => by_chains(&full, None, &input.rel, true)?,
                    };
                    for (c, part, _) in parts {
                        let done = decode_stored(decoder, c, &part, &input.rel)?;
                        counts += done.counts;
                        outputs.extend(done.tables.into_iter().enumerate().map(|(i, d)| (i, c, d)));
                    }
                } else {
                    let days = if by_date { days_of(&full, path_day) } else { None };
                    let parts: Vec<ChainPart> = match chain {
                        Some(c) => vec![(c, full, days)],
                        None => by_chains(&full, days, &input.rel, by_chain)?,
                    };
                    outputs.extend(
                        parts
                            .into_iter()
                            .map(|(c, batch, days)| (0, c, Decoded { batch, days, dropped: 0 })),
                    );
                }
                for (table, c, rows) in outputs {
                    if rows.batch.num_rows() == 0 {
                        continue;
                    }
                    // Without a chain key every chain's rows go to the same
                    // directories: one writer a table, or two would write one name.
                    let c = match writers.keys().find(|(t, _)| *t == table) {
                        Some((_, first)) if !by_chain => *first,
                        _ => c,
                    };
                    let w = match writers.get_mut(&(table, c)) {
                        Some(w) => w,
                        None => {
                            let (name, schema) = match &job.decoder {
                                Some(d) => (
                                    d.tables()[table].table.clone(),
                                    job.decoded_schemas
                                        .get(table)
                                        .cloned()
                                        .unwrap_or_else(|| d.tables()[table].schema()),
                                ),
                                None => (job.table.clone(), job.schema.clone()),
                            };
                            let w = UnitWriter::new(self.clone(), &name, c, &job.prefix, schema, job.next_seq, job.memory).hidden();
                            writers.entry((table, c)).or_insert(w)
                        }
                    };
                    w.write(rows).await?;
                }
            }
        }
        let mut files = Vec::new();
        let mut next_seq = job.next_seq;
        for (_, mut w) in writers {
            next_seq = next_seq.max(w.next_seq);
            for mut f in w.finish().await? {
                f.rel = revealed_name(&f.rel);
                files.push(f);
            }
        }
        let names: std::collections::HashSet<&str> = files.iter().map(|f| f.rel.as_str()).collect();
        if names.len() != files.len() {
            return Err(unfit(&job.table, "rewriting its files named two outputs alike".into()));
        }
        let written: u64 = files.iter().map(|f| f.rows).sum();
        let decoded = job.decoder.is_some();
        if (!decoded && written != read) || read != footers || (decoded && written + counts.undecodable != read) {
            return Err(unfit(
                &job.table,
                format!(
                    "rewriting its files read {read} rows ({footers} by their footers) and wrote {written}{}",
                    if decoded {
                        format!(" ({} logs not decodable)", counts.undecodable)
                    } else {
                        String::new()
                    }
                ),
            ));
        }
        Ok(Relaid {
            files,
            rows: read,
            next_seq,
            counts,
        })
    }
}

/// Stored raw logs of chain `chain` decoded into `decoder`'s tables.
fn decode_stored(decoder: &LogDecoder, chain: Chain, batch: &RecordBatch, rel: &str) -> Result<crate::decode::abi::DecodedLogs, SinkError> {
    let logs = crate::decode::abi::stored_logs(batch).map_err(|m| unfit(rel, m))?;
    let unit = crate::plan::Unit {
        id: rel.to_string(),
        export: 0,
        dataset: crate::vocab::Dataset::Events,
        chain,
        // Every stored row is its unit's already.
        range: crate::plan::UnitRange::Blocks { start: 0, end: u64::MAX },
        estimated_requests: 0,
    };
    let ctx = crate::decode::Ctx {
        unit: &unit,
        page: 0,
        enc: decoder.encoding(),
    };
    decoder.decode(ctx, &logs).map_err(|e| unfit(rel, e.to_string()))
}

/// The final name of hidden file `rel` (`dir/_<name>.pending` → `dir/<name>`).
fn revealed_name(rel: &str) -> String {
    let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    let name = name.strip_prefix('_').and_then(|n| n.strip_suffix(".pending")).unwrap_or(name);
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// `batch` (a file's columns) with every column of `schema`: a partition
/// key from the path (`values`), a column the file predates as nulls.
fn whole(schema: &SchemaRef, batch: &RecordBatch, values: &[(String, String)], rel: &str) -> Result<RecordBatch, SinkError> {
    let n = batch.num_rows();
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for field in schema.fields() {
        let name = field.name();
        if let Some(col) = batch.column_by_name(name) {
            if col.data_type() != field.data_type()
                && let Some(recoded) = recode(col, field.data_type())
            {
                columns.push(recoded.map_err(|m| unfit(rel, format!("column {name}: {m}")))?);
                continue;
            }
            if col.data_type() != field.data_type() {
                return Err(unfit(
                    rel,
                    format!(
                        "column {name} is {} in the file, {} in the table",
                        col.data_type(),
                        field.data_type()
                    ),
                ));
            }
            columns.push(col.clone());
            continue;
        }
        let from_path = values.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let col: ArrayRef = match (from_path, field.data_type()) {
            (Some(v), DataType::Utf8) => Arc::new(StringArray::from(vec![v; n])),
            (Some(v), DataType::Date32) => {
                let day = crate::vocab::window::parse_date(v).ok_or_else(|| unfit(rel, format!("`{v}` is no date")))?;
                Arc::new(Date32Array::from(vec![day; n]))
            }
            (None, _) if let Some(col) = wide_column(batch, name, field.data_type(), rel)? => col,
            (None, _) if field.is_nullable() => arrow_array::new_null_array(field.data_type(), n),
            _ => return Err(unfit(rel, format!("the file has no column {name}, nor its path a value for it"))),
        };
        columns.push(col);
    }
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| read_failed(rel, e))
}

/// `col` as `want` where it is a hash, address or hex blob column in the
/// other `hash_encoding` (0x-hex text ↔ bytes, also as list items);
/// None for any other change of type.
fn recode(col: &ArrayRef, want: &DataType) -> Option<Result<ArrayRef, String>> {
    use arrow_array::{BinaryArray, ListArray};
    match (col.data_type(), want) {
        (DataType::Utf8, DataType::Binary) => {
            let text = col.as_any().downcast_ref::<StringArray>()?;
            let bytes: Result<Vec<Option<Vec<u8>>>, String> = text
                .iter()
                .map(|v| {
                    v.map(|v| {
                        let digits = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")).unwrap_or(v);
                        let even = if digits.len() % 2 == 1 {
                            format!("0{digits}")
                        } else {
                            digits.to_string()
                        };
                        hex::decode(even).map_err(|e| format!("`{}` is not 0x-hex: {e}", v.chars().take(20).collect::<String>()))
                    })
                    .transpose()
                })
                .collect();
            Some(bytes.map(|b| Arc::new(BinaryArray::from_iter(b)) as ArrayRef))
        }
        (DataType::Binary, DataType::Utf8) => {
            let bytes = col.as_any().downcast_ref::<BinaryArray>()?;
            let text: StringArray = bytes.iter().map(|b| b.map(|b| format!("0x{}", hex::encode(b)))).collect();
            Some(Ok(Arc::new(text)))
        }
        (DataType::List(_), DataType::List(item)) => {
            let list = col.as_any().downcast_ref::<ListArray>()?;
            // Items of the same type under another field (an Iceberg
            // file's carries its field id) are taken as they are.
            let values = if list.values().data_type() == item.data_type() {
                list.values().clone()
            } else {
                match recode(list.values(), item.data_type())? {
                    Ok(v) => v,
                    Err(e) => return Some(Err(e)),
                }
            };
            Some(
                ListArray::try_new(item.clone(), list.offsets().clone(), values, list.nulls().cloned())
                    .map(|l| Arc::new(l) as ArrayRef)
                    .map_err(|e| e.to_string()),
            )
        }
        _ => None,
    }
}

/// Column `name` of type `ty` computed from the exact decimal text of a
/// wide integer `batch` holds (see *Derived tables*), if it is one.
fn wide_column(batch: &RecordBatch, name: &str, ty: &DataType, rel: &str) -> Result<Option<ArrayRef>, SinkError> {
    let (base, binary) = match (name.strip_suffix("_decimal38"), name.strip_suffix("_binary"), ty) {
        (Some(base), _, DataType::Decimal128(38, 0)) => (base, false),
        (_, Some(base), DataType::Binary) => (base, true),
        _ => return Ok(None),
    };
    // `<c>_f64` beside `<c>` says `<c>` is a wide integer's text.
    let text = batch.column_by_name(base).and_then(|c| c.as_any().downcast_ref::<StringArray>());
    let (Some(text), true) = (text, batch.column_by_name(&format!("{base}_f64")).is_some()) else {
        return Ok(None);
    };
    let values = text
        .iter()
        .map(|v| {
            v.map(|v| crate::decode::abi::wide_value(v).ok_or_else(|| unfit(rel, format!("column {base}: `{v}` is no integer"))))
                .transpose()
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(if binary {
        let words: Vec<Option<Vec<u8>>> = values.iter().map(|v| v.as_ref().map(crate::decode::abi::word_bytes)).collect();
        Arc::new(arrow_array::BinaryArray::from_iter(words))
    } else {
        let values = values.iter().map(|v| v.as_ref().and_then(crate::decode::abi::decimal38));
        Arc::new(
            arrow_array::Decimal128Array::from_iter(values)
                .with_precision_and_scale(38, 0)
                .map_err(|e| read_failed(rel, e))?,
        )
    }))
}

/// The day of each row of `batch`, for a `date` partition: the path's,
/// or that of the column a dataset's declaration names as its rows' day
/// (decoded tables carry the raw events' columns, so theirs); None for a
/// table with none.
fn days_of(batch: &RecordBatch, path_day: Option<i32>) -> Option<Vec<i32>> {
    if let Some(d) = path_day {
        return Some(vec![d; batch.num_rows()]);
    }
    for name in crate::decode::DECLARATIONS.iter().filter_map(|d| d.day) {
        let Some(col) = batch.column_by_name(name) else {
            continue;
        };
        if let Some(dates) = col.as_any().downcast_ref::<Date32Array>() {
            return Some(dates.iter().map(|d| d.unwrap_or_default()).collect());
        }
        if matches!(col.data_type(), DataType::Timestamp(TimeUnit::Microsecond, _))
            && let Some(ts) = col.as_any().downcast_ref::<TimestampMicrosecondArray>()
        {
            return Some(ts.iter().map(|t| t.unwrap_or_default().div_euclid(86_400_000_000) as i32).collect());
        }
    }
    None
}

/// Rows of one chain, and the day of each (for a `date` partition).
type ChainPart = (Chain, RecordBatch, Option<Vec<i32>>);

/// `batch` split by its `chain` column (one part when every row has the
/// same chain, or when the layout has no chain key: `by_chain` false).
fn by_chains(batch: &RecordBatch, days: Option<Vec<i32>>, rel: &str, by_chain: bool) -> Result<Vec<ChainPart>, SinkError> {
    let Some(names) = batch.column_by_name("chain").and_then(|c| c.as_any().downcast_ref::<StringArray>()) else {
        if !by_chain {
            // No chain key: the writer's chain names no directory.
            return Ok(vec![(Chain::Ethereum, batch.clone(), days)]);
        }
        return Err(unfit(rel, "its rows say no chain (no chain directory, no chain column)".into()));
    };
    let parse = |s: &str| {
        s.parse::<Chain>()
            .map_err(|_| unfit(rel, format!("chain `{s}` is none chainetl knows")))
    };
    if batch.num_rows() == 0 {
        return Ok(Vec::new());
    }
    let first = names.value(0);
    if !by_chain || names.iter().all(|c| c == Some(first)) {
        return Ok(vec![(parse(first)?, batch.clone(), days)]);
    }
    let mut distinct: Vec<&str> = names.iter().flatten().collect();
    distinct.sort_unstable();
    distinct.dedup();
    let mut out = Vec::new();
    for c in distinct {
        let mask: Vec<bool> = names.iter().map(|x| x == Some(c)).collect();
        let part_days = days
            .as_ref()
            .map(|d| d.iter().zip(&mask).filter(|(_, m)| **m).map(|(d, _)| *d).collect());
        let part = arrow_select::filter::filter_record_batch(batch, &BooleanArray::from(mask)).map_err(|e| read_failed(rel, e))?;
        out.push((parse(c)?, part, part_days));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_gives_its_partition_values_and_a_hidden_name_its_final_one() {
        assert_eq!(
            path_values("events/chain=base/date=2024-01-02/x.parquet"),
            vec![("chain".into(), "base".into()), ("date".into(), "2024-01-02".into())]
        );
        assert!(path_values("events/x.parquet").is_empty());
        assert_eq!(
            revealed_name("events/chain=base/_j-u-000001.parquet.pending"),
            "events/chain=base/j-u-000001.parquet"
        );
        assert_eq!(revealed_name(&super::super::hidden_name("t/a.parquet")), "t/a.parquet");
    }

    #[test]
    fn an_iceberg_files_list_with_field_ids_is_rewritten_and_adopted_as_the_tables_type() {
        use arrow_array::ListArray;
        use arrow_schema::Field;
        let tagged = Arc::new(
            Field::new("element", DataType::Binary, true).with_metadata(std::collections::HashMap::from([(
                "PARQUET:field_id".to_string(),
                "14".to_string(),
            )])),
        );
        let values: ArrayRef = Arc::new(arrow_array::BinaryArray::from_iter_values([b"ab".as_slice(), b"c".as_slice()]));
        let col: ArrayRef =
            Arc::new(ListArray::try_new(tagged.clone(), arrow_buffer::OffsetBuffer::from_lengths([1, 1]), values, None).unwrap());
        let want = DataType::List(Arc::new(Field::new("item", DataType::Binary, true)));
        let table = Arc::new(arrow_schema::Schema::new(vec![Field::new("topics", want.clone(), true)]));
        let batch = RecordBatch::try_new(
            Arc::new(arrow_schema::Schema::new(vec![Field::new("topics", col.data_type().clone(), true)])),
            vec![col.clone()],
        )
        .unwrap();
        let out = whole(&table, &batch, &[], "t/f.parquet").unwrap();
        assert_eq!(out.column(0).data_type(), &want);
        assert_eq!(out.column(0).len(), 2);
        let have = batch.schema();
        assert!(crate::sink::format::adoption_refusal("t/f.parquet", &have, &table, "Delta table").is_none());
        let text = arrow_schema::Schema::new(vec![Field::new(
            "topics",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            true,
        )]);
        assert!(crate::sink::format::adoption_refusal("t/f.parquet", &have, &text, "Delta table").is_some());
    }
}
