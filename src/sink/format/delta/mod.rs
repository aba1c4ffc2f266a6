//! The `delta` output format: how the files a job writes join the output's
//! Delta tables ([`table`]).
//!
//! # Tables
//!
//! Each dataset and decoded table is a table in the folder it has in the
//! `parquet` format (`<uri>/<table>/`). A table is created by the first
//! file published to it: its schema is the writer's Arrow schema plus the
//! partition columns the file's path names that the schema lacks (`date`,
//! typed `date`); its partition columns are the path's hive keys in order
//! (`chain`, then `date` where the dataset has one). A table that exists
//! must agree (same partition columns, same columns and types): another
//! job sharing the output with another `partition_by` or `hash_encoding`
//! is refused, with both layouts in the message.
//!
//! # Grouped commits
//!
//! One [`Committer`] per table in a process: units hand it their files
//! ([`DeltaTables::publish`]) and wait; whoever takes the table's turn
//! commits everything queued by then in one Delta commit, with one `txn`
//! per unit. So many units finishing together make one commit, not a race
//! on `_delta_log/<version>.json`; other processes on the same table
//! (shards, jobs sharing the output) are met by the kernel's conflict
//! check, and the commit is retried on the newer version.
//!
//! # Statistics
//!
//! Each `add` carries `numRecords` and, for the table's key and lookup
//! (bloom filter) columns and `block_timestamp`, min, max and null count —
//! taken from the file's Parquet footer (row group statistics), so a file
//! published again after a crash gets the same statistics as the first
//! time without being read whole.

pub mod table;
mod table_format;
mod vacuum;

use super::Stored;
use super::group::{Group, shared_error};
use crate::sink::{Sink, SinkError};
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::file::metadata::ParquetMetaData;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use table::{AddFile, Change, ColumnStats, DeltaError, Part, Table, partition_values};

/// Attempts at one commit while other writers keep landing theirs first.
const COMMIT_ATTEMPTS: u32 = 100;

/// The output's Delta tables, one committer each.
#[derive(Debug)]
pub struct DeltaTables {
    checkpoint_interval: u64,
    /// Columns with statistics where a table has them, besides its key.
    stats_columns: Vec<String>,
    tables: Mutex<HashMap<String, Arc<Committer>>>,
}

/// One table's committer: its log, and the units' commits queued for it
/// ([`Group`], whose turn's value says whether the table is known to
/// exist with this writer's layout).
#[derive(Debug)]
struct Committer {
    table: Arc<Table>,
    group: Group<Queued, u64>,
}

/// A unit's files waiting for their commit.
#[derive(Debug)]
struct Queued {
    parts: Vec<Part>,
    may_be_in: bool,
}

impl DeltaTables {
    pub(crate) fn new(checkpoint_interval: u64, stats_columns: Vec<String>) -> DeltaTables {
        DeltaTables {
            checkpoint_interval,
            stats_columns,
            tables: Mutex::new(HashMap::new()),
        }
    }

    fn committer(&self, sink: &Sink, table: &str) -> Arc<Committer> {
        let mut tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        tables
            .entry(table.to_string())
            .or_insert_with(|| {
                Arc::new(Committer {
                    table: Arc::new(Table::new(sink.storage(), table, self.checkpoint_interval)),
                    group: Group::default(),
                })
            })
            .clone()
    }

    /// The table at `table`, for reading its log.
    pub fn table(&self, sink: &Sink, table: &str) -> Arc<Table> {
        self.committer(sink, table).table.clone()
    }

    /// The `add` of stored file `f` of `table`, whose footer is read:
    /// statistics against `schema` (the writer's file columns) where its
    /// rows are known, else against the footer's own columns (files the
    /// job's merges wrote, adopted files).
    pub fn add_of(&self, table: &str, schema: Option<&Schema>, f: &Stored) -> Result<AddFile, SinkError> {
        let footer = f.footer.as_deref().ok_or_else(|| SinkError::Write {
            path: f.rel.clone(),
            source: "no footer to take statistics from".into(),
        })?;
        let rows = f.row_count();
        match (schema, f.rows) {
            (Some(schema), Some(_)) => self.add(table, schema, &f.rel, f.bytes, rows, footer),
            _ => {
                let own = crate::sink::reader::footer_schema(&f.rel, footer)?;
                self.add(table, &own, &f.rel, f.bytes, rows, footer)
            }
        }
    }

    /// The log's parts of `joining`: each group's `add`s (footers read),
    /// with its transaction id. Adopted files take their own columns.
    pub fn parts(&self, sink: &Sink, table: &str, joining: &[super::Joining]) -> Result<Vec<Part>, SinkError> {
        let mut parts = Vec::with_capacity(joining.len());
        for j in joining {
            let schema = j.schema.as_ref().filter(|_| !j.adopted).map(|s| sink.file_columns(s).0);
            let adds = j
                .files
                .iter()
                .map(|f| self.add_of(table, schema.as_deref(), f))
                .collect::<Result<Vec<_>, _>>()?;
            parts.push(Part { adds, txn: j.txn.clone() });
        }
        Ok(parts)
    }

    /// Makes `change` to `table` in one commit, in the table's turn (after
    /// the units' commits in flight in this process). The table exists.
    pub async fn commit_change(&self, sink: &Sink, table: &str, change: Change) -> Result<u64, SinkError> {
        let committer = self.committer(sink, table);
        let _turn = committer.group.turn().await;
        committer
            .table
            .blocking(move |t| t.commit(&change, COMMIT_ATTEMPTS))
            .await
            .map_err(|e| delta_error(Arc::new(e)))
    }

    fn add(&self, table: &str, schema: &Schema, rel: &str, bytes: u64, rows: u64, footer: &ParquetMetaData) -> Result<AddFile, SinkError> {
        let path = rel
            .strip_prefix(table)
            .and_then(|p| p.strip_prefix('/'))
            .ok_or_else(|| SinkError::Write {
                path: rel.into(),
                source: format!("not a file of table {table}").into(),
            })?;
        Ok(AddFile {
            path: path.to_string(),
            partition_values: partition_values(path),
            size: bytes,
            rows,
            modification_time: chrono::Utc::now().timestamp_millis(),
            stats: self.stats(schema, footer).map_err(|e| SinkError::Read {
                path: rel.into(),
                source: e.into(),
            })?,
        })
    }

    /// Min, max and null count of the statistics columns `schema` has,
    /// over every row group of `footer`.
    fn stats(&self, schema: &Schema, footer: &ParquetMetaData) -> Result<Vec<ColumnStats>, String> {
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let mut wanted: Vec<&str> = crate::decode::natural_key(&names);
        for c in self.stats_columns.iter().map(String::as_str).chain(["block_timestamp"]) {
            if names.contains(&c) && !wanted.contains(&c) {
                wanted.push(c);
            }
        }
        let groups = footer.row_groups();
        let mut out = Vec::new();
        for name in wanted {
            let Ok(field) = schema.field_with_name(name) else { continue };
            if !has_bounds(field.data_type()) {
                continue;
            }
            let conv =
                StatisticsConverter::try_new(name, schema, footer.file_metadata().schema_descr()).map_err(|e| format!("{name}: {e}"))?;
            let mins = conv.row_group_mins(groups).map_err(|e| format!("{name}: {e}"))?;
            let maxes = conv.row_group_maxes(groups).map_err(|e| format!("{name}: {e}"))?;
            let nulls = conv.row_group_null_counts(groups).map_err(|e| format!("{name}: {e}"))?;
            let null_counts: Vec<Option<u64>> = (0..nulls.len()).map(|i| nulls.is_valid(i).then(|| nulls.value(i))).collect();
            let Some(nulls) = null_counts.iter().copied().sum::<Option<u64>>() else {
                continue;
            };
            // Row groups of nulls only have no bounds and need none.
            let valued: Vec<usize> = (0..groups.len())
                .filter(|&i| null_counts.get(i).copied().flatten() != Some(groups[i].num_rows().max(0) as u64))
                .collect();
            let (min, max) = if valued.is_empty() {
                let none = arrow_array::new_null_array(field.data_type(), 1);
                (none.clone(), none)
            } else {
                match (extreme(&mins, &valued, true)?, extreme(&maxes, &valued, false)?) {
                    (Some(min), Some(max)) => (min, max),
                    // A row group without statistics: no bound for the file.
                    _ => continue,
                }
            };
            out.push(ColumnStats {
                name: name.to_string(),
                min,
                max,
                nulls,
            });
        }
        Ok(out)
    }

    /// Creates the table `table` of rows of `schema` (partition columns
    /// included) unless it exists, and checks one that exists has this
    /// job's layout: before a run writes anything, so a job sharing the
    /// output with another layout is refused up front.
    pub async fn check_table(&self, sink: &Sink, table: &str, schema: &Schema) -> Result<(), SinkError> {
        let (partitions, _) = Self::wanted(sink, schema);
        let committer = self.committer(sink, table);
        let mut ready = committer.group.turn().await;
        prepare(sink, &committer.table, schema, &partitions)
            .await
            .map_err(|e| delta_error(Arc::new(e)))?;
        *ready = true;
        Ok(())
    }

    /// The partition columns and the whole schema this job writes `table`
    /// of rows of `schema` with.
    fn wanted(sink: &Sink, schema: &Schema) -> (Vec<String>, Schema) {
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let keys = crate::decode::partition_keys(&names);
        let partitions: Vec<String> = sink.partition_by.iter().filter(|k| keys.contains(&k.as_str())).cloned().collect();
        let full = table_schema(schema, &partitions);
        (partitions, full)
    }

    /// Whether `table` exists laid out otherwise than this job writes it
    /// (rows of `schema`): other partition columns, or a column missing
    /// from what the job writes or of another type — what only
    /// [`DeltaTables::replace_layout`] changes.
    pub async fn needs_replacing(&self, sink: &Sink, table: &str, schema: &Schema) -> Result<bool, SinkError> {
        let t = self.table(sink, table);
        if !t.exists(sink.storage()).await.map_err(|e| delta_error(Arc::new(e)))? {
            return Ok(false);
        }
        let (partitions, full) = Self::wanted(sink, schema);
        let want = table::delta_columns(&full).map_err(|message| SinkError::Config {
            uri: table.into(),
            message,
            source: None,
        })?;
        let have = t.blocking(|t| t.layout()).await.map_err(|e| delta_error(Arc::new(e)))?;
        Ok(have.partitions != partitions || have.columns.iter().any(|c| !want.contains(c)))
    }

    /// Makes `change` to `table` in one commit that also gives the table
    /// this job's layout for rows of `schema` (see [`Table::replace`]), in
    /// the table's turn.
    pub async fn replace_layout(&self, sink: &Sink, table: &str, schema: &Schema, change: Change) -> Result<u64, SinkError> {
        let (partitions, full) = Self::wanted(sink, schema);
        let committer = self.committer(sink, table);
        let _turn = committer.group.turn().await;
        committer
            .table
            .replace(sink.storage(), change, Arc::new(full), partitions, COMMIT_ATTEMPTS)
            .await
            .map_err(|e| delta_error(Arc::new(e)))
    }

    /// Makes `parts` (one unit's files for `table`, the writer's schema
    /// `schema`) part of the table in a commit that records their
    /// transaction ids; waits for that commit (queued with other units'
    /// files of the same table). Creates the table on first use. Returns
    /// the version committed.
    pub async fn publish(&self, sink: &Sink, table: &str, schema: &SchemaRef, parts: Vec<Part>, may_be_in: bool) -> Result<u64, SinkError> {
        let committer = self.committer(sink, table);
        let layout = parts
            .iter()
            .find_map(|p| p.adds.first())
            .map(|f| f.partition_values.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>());
        let t = committer.table.clone();
        let schema = schema.clone();
        committer
            .group
            .join(Queued { parts, may_be_in }, |ready, members| async move {
                if !ready
                    && let Some(partitions) = &layout
                    && let Err(e) = prepare(sink, &t, &schema, partitions).await
                {
                    return (false, Err(delta_error(Arc::new(e))));
                }
                let change = Change {
                    may_be_in: members.iter().any(|m| m.may_be_in),
                    parts: members.into_iter().flat_map(|m| m.parts).collect(),
                    ..Change::default()
                };
                let r = t
                    .blocking(move |t| t.commit(&change, COMMIT_ATTEMPTS))
                    .await
                    .map_err(|e| delta_error(Arc::new(e)));
                (true, r)
            })
            .await
            .map_err(shared_error)
    }
}

/// A committed-or-not error of the log as the write stage's.
fn delta_error(e: Arc<DeltaError>) -> SinkError {
    match e.as_ref() {
        DeltaError::Refused { table, message } if message.starts_with("layout:") => SinkError::Config {
            uri: table.clone(),
            message: message.trim_start_matches("layout:").trim().to_string(),
            source: None,
        },
        _ => SinkError::Write {
            path: String::new(),
            source: Box::new(ArcError(e)),
        },
    }
}

#[derive(Debug)]
struct ArcError(Arc<DeltaError>);

impl std::fmt::Display for ArcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ArcError {}

/// Creates `table` with `schema` and `partitions` unless it exists, and
/// checks that one that exists has this layout.
async fn prepare(sink: &Sink, table: &Arc<Table>, schema: &Schema, partitions: &[String]) -> Result<(), DeltaError> {
    let full = table_schema(schema, partitions);
    let created = table.create_if_absent(sink.storage(), &full, partitions).await?;
    // Read (and remembered for the commits' check) either way.
    let have = table.blocking(|t| t.layout()).await?;
    if created {
        return Ok(());
    }
    let want = table::delta_columns(&full).map_err(|message| DeltaError::Refused {
        table: table.rel().to_string(),
        message,
    })?;
    if have.forgets_transactions {
        return Err(DeltaError::Refused {
            table: table.rel().to_string(),
            message: format!(
                "layout: the Delta table at {} sets delta.setTransactionRetentionDuration: it forgets the transaction ids \
                 that tell chainetl which files are in, so a re-run could add files twice; write to a table without it",
                table.rel()
            ),
        });
    }
    // A table that lacks columns this job writes, and has every other as
    // it writes it, gains them (a newer release, a new decoded column):
    // a metadata-only commit, old files reading them as null.
    let kept: Vec<&(String, serde_json::Value)> = have.columns.iter().filter(|c| want.contains(c)).collect();
    if have.partitions == partitions && kept.len() == have.columns.len() && have.columns.len() < want.len() {
        let added: Vec<serde_json::Value> = full
            .fields()
            .iter()
            .filter(|f| !have.columns.iter().any(|(n, _)| n == f.name()))
            .map(|f| table::delta_field(f, true))
            .collect::<Result<_, _>>()
            .map_err(|message| DeltaError::Refused {
                table: table.rel().to_string(),
                message,
            })?;
        let names: Vec<String> = added.iter().filter_map(|f| f["name"].as_str().map(String::from)).collect();
        if let Some(version) = table.blocking(move |t| t.add_columns(&added, 100)).await? {
            tracing::info!(table = table.rel(), version, columns = %names.join(", "), "added columns to the Delta table (metadata only: files written before read them as null)");
        }
        return Ok(());
    }
    let same = |a: &[(String, serde_json::Value)], b: &[(String, serde_json::Value)]| a.len() == b.len() && a.iter().all(|c| b.contains(c));
    if have.partitions != partitions || !same(&have.columns, &want) {
        let show = |cols: &[(String, serde_json::Value)]| {
            cols.iter()
                .map(|(n, t)| format!("{n} {}", t.as_str().map_or_else(|| t.to_string(), String::from)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let ty = |t: &serde_json::Value| t.as_str().map_or_else(|| t.to_string(), String::from);
        let mut why = Vec::new();
        for (n, t) in &have.columns {
            match want.iter().find(|(w, _)| w == n) {
                None => why.push(format!("column {n} would be removed (columns are only ever added)")),
                Some((_, u)) if u != t => why.push(format!(
                    "column {n} would change type from {} to {} (a type never changes)",
                    ty(t),
                    ty(u)
                )),
                Some(_) => {}
            }
        }
        if have.partitions != partitions {
            why.push("its partition columns differ".into());
        }
        return Err(DeltaError::Refused {
            table: table.rel().to_string(),
            message: format!(
                "layout: {}: the Delta table at {} is partitioned by [{}] with columns [{}]; this job writes [{}] with [{}] (another job sharing the output with another output.partition_by or hash_encoding?)",
                why.join("; "),
                table.rel(),
                have.partitions.join(", "),
                show(&have.columns),
                partitions.join(", "),
                show(&want)
            ),
        });
    }
    Ok(())
}

/// The table's schema: the writer's, plus partition columns it lacks
/// (`date`, typed date; any other as a string).
pub fn table_schema(schema: &Schema, partitions: &[String]) -> Schema {
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    for p in partitions {
        if schema.field_with_name(p).is_err() {
            let t = if p == "date" { DataType::Date32 } else { DataType::Utf8 };
            fields.push(Field::new(p, t, false));
        }
    }
    Schema::new(fields)
}

/// Whether Delta keeps min/max for values of type `t`.
fn has_bounds(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Utf8 | DataType::Int32 | DataType::Int64 | DataType::Date32 | DataType::Timestamp(_, _) | DataType::Decimal128(_, _)
    )
}

/// The smallest (`min`) or largest value of `a` at the positions `at`
/// as a one-row array; `None` when one of them is missing (a row group
/// without statistics).
fn extreme(a: &ArrayRef, at: &[usize], min: bool) -> Result<Option<ArrayRef>, String> {
    if at.iter().any(|&i| i >= a.len() || a.is_null(i)) {
        return Ok(None);
    }
    let conv = arrow_row::RowConverter::new(vec![arrow_row::SortField::new(a.data_type().clone())]).map_err(|e| e.to_string())?;
    let rows = conv.convert_columns(std::slice::from_ref(a)).map_err(|e| e.to_string())?;
    let Some(&first) = at.first() else {
        return Ok(None);
    };
    let mut best = first;
    for &i in at {
        let better = if min {
            rows.row(i) < rows.row(best)
        } else {
            rows.row(i) > rows.row(best)
        };
        if better {
            best = i;
        }
    }
    Ok(Some(a.slice(best, 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row group of nulls only leaves the others' bounds; a column of
    /// nulls only has no bounds but its null count.
    #[test]
    fn statistics_skip_row_groups_of_nulls() {
        use arrow_array::{RecordBatch, StringArray};
        let schema = Arc::new(Schema::new(vec![
            Field::new("topic0", DataType::Utf8, true),
            Field::new("contract_address", DataType::Utf8, true),
        ]));
        let topic: ArrayRef = Arc::new(StringArray::from(vec![None, None, Some("0xb"), Some("0xa")]));
        let none: ArrayRef = Arc::new(StringArray::from(vec![None::<&str>; 4]));
        let batch = RecordBatch::try_new(schema.clone(), vec![topic, none]).unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(2))
            .build();
        let mut bytes = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut bytes, schema.clone(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        let footer = w.close().unwrap();
        assert_eq!(footer.row_groups().len(), 2);
        let tables = DeltaTables::new(100, vec!["topic0".into(), "contract_address".into()]);
        let stats = tables.stats(&schema, &footer).unwrap();
        let by = |n: &str| stats.iter().find(|c| c.name == n).unwrap().clone();
        let t = by("topic0");
        assert_eq!((t.nulls, t.min.is_null(0), t.max.is_null(0)), (2, false, false));
        let show = |a: &ArrayRef| a.as_any().downcast_ref::<StringArray>().unwrap().value(0).to_string();
        assert_eq!((show(&t.min), show(&t.max)), ("0xa".to_string(), "0xb".to_string()));
        let c = by("contract_address");
        assert_eq!((c.nulls, c.min.is_null(0)), (4, true));
    }

    #[test]
    fn partition_values_are_the_paths_hive_keys_in_order() {
        assert_eq!(
            partition_values("chain=base/date=2024-01-02/j-u-000001.parquet"),
            [
                ("chain".to_string(), "base".to_string()),
                ("date".to_string(), "2024-01-02".to_string())
            ]
        );
        assert!(partition_values("x.parquet").is_empty());
    }

    #[test]
    fn the_table_schema_adds_a_date_partition_typed_date() {
        let s = Schema::new(vec![Field::new("chain", DataType::Utf8, false)]);
        let t = table_schema(&s, &["chain".into(), "date".into()]);
        assert_eq!(t.field_with_name("date").unwrap().data_type(), &DataType::Date32);
        assert_eq!(t.fields().len(), 2);
    }
}
