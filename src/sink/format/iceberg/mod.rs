//! The `iceberg` output format: how the files a job writes join the
//! output's Apache Iceberg tables ([`table`]).
//!
//! # Tables
//!
//! Each dataset and decoded table is an Iceberg table (format version 2)
//! in the folder it has in the `parquet` format (`<uri>/<table>/`), its
//! metadata under `<table>/metadata/`. A table is created by the first
//! check of a run that writes it: its schema is the writer's Arrow schema
//! (`chain` included, and optional: files keep it only in their path, and
//! readers take it from each file's partition tuple); its partition spec
//! is identity on `chain` and, where the job partitions by `date`, the
//! `day` transform of the rows' timestamp (`timestamp`,
//! `block_timestamp`), or identity on `date` where rows have that column.
//! A table that exists must be partitioned alike; a column the writer
//! adds is a metadata-only commit; another type is refused, both layouts
//! in the message.
//!
//! # Data files
//!
//! Files stay where the job wrote them (the hive folders of the `parquet`
//! format). Columns carry the table's field ids (`PARQUET:field_id`) where
//! the writer knows the table ([`IcebergTables::file_schema`]); files
//! without them (adopted from a parquet or Delta output, or written into a
//! column whose type a rewrite changes) are read by the table's name
//! mapping. Each manifest entry carries counts and bounds from the file's
//! footer.
//!
//! # Commits
//!
//! One snapshot per change: `append` for units' files (the units finished
//! together in a process grouped into one snapshot, each unit's
//! transaction id in its summary), `replace` for compaction and a
//! rewrite, `overwrite` for a repair, `delete` for `--fresh`. Each is a
//! put-if-absent of the next metadata version; a conflict reloads,
//! re-checks (parts now recorded are left out) and retries, bounded.

pub mod catalog;
pub mod table;
mod table_format;

use super::Stored;
use super::group::{Group, shared_error};
use crate::sink::{Sink, SinkError};
use arrow_schema::{Schema, SchemaRef};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use table::{self as ice, Current, DataFile, IcebergError, PartitionKey, Table};

/// Attempts at one commit while other writers keep landing theirs first.
const COMMIT_ATTEMPTS: u32 = 100;

/// The output's Iceberg tables, one committer each.
#[derive(Debug, Default)]
pub struct IcebergTables {
    tables: Mutex<HashMap<String, Arc<Committer>>>,
    /// The REST catalog every table's commits go through, if any.
    catalog: Option<Arc<catalog::RestCatalog>>,
    /// `[output.table_properties]`.
    properties: BTreeMap<String, String>,
}

/// One table: its metadata, and the units' commits queued for it.
#[derive(Debug)]
struct Committer {
    table: Arc<Table>,
    group: Group<Queued, ()>,
}

/// A unit's files waiting for their commit (their footers read), with
/// the transaction ids that record them.
#[derive(Debug)]
struct Queued {
    parts: Vec<(Vec<Stored>, (String, i64))>,
    may_be_in: bool,
}

impl IcebergTables {
    pub(crate) fn new() -> IcebergTables {
        IcebergTables::default()
    }

    /// The tables of an output whose commits go through `catalog` (none:
    /// the file-system layout), with `properties` in each.
    pub(crate) fn with_catalog(catalog: Option<&crate::spec::Catalog>, properties: BTreeMap<String, String>) -> IcebergTables {
        IcebergTables {
            catalog: catalog.map(catalog::RestCatalog::shared),
            properties,
            ..IcebergTables::default()
        }
    }

    /// The catalog the tables' commits go through, if any.
    pub fn catalog(&self) -> Option<&catalog::RestCatalog> {
        self.catalog.as_deref()
    }

    fn committer(&self, sink: &Sink, table: &str) -> Arc<Committer> {
        let mut tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        tables
            .entry(table.to_string())
            .or_insert_with(|| {
                Arc::new(Committer {
                    table: Arc::new(Table::new(sink.storage(), table).with_catalog(self.catalog.clone())),
                    group: Group::default(),
                })
            })
            .clone()
    }

    /// The table at `table`.
    pub fn table(&self, sink: &Sink, table: &str) -> Arc<Table> {
        self.committer(sink, table).table.clone()
    }

    /// The table's metadata now; `None` where it is not made.
    async fn current(&self, sink: &Sink, table: &str) -> Result<Option<Arc<Current>>, SinkError> {
        self.table(sink, table).load(sink.storage()).await.map_err(iceberg_error)
    }

    /// The partition keys this job writes `table` of rows of `schema`
    /// with: each hive key of the job's `partition_by` the rows have, the
    /// date as the day of their timestamp (or their `date`).
    fn keys(sink: &Sink, table: &str, schema: &Schema) -> Result<Vec<PartitionKey>, SinkError> {
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let have = crate::decode::partition_keys(&names);
        let hive: Vec<String> = sink.partition_by.iter().filter(|k| have.contains(&k.as_str())).cloned().collect();
        ice::partition::keys_of_folders(&hive, crate::decode::day_column(&names)).map_err(|message| SinkError::Config {
            uri: table.into(),
            message,
            source: None,
        })
    }

    /// Creates `table` for rows of `schema` (the writer's) unless it
    /// exists, and checks that one that exists is partitioned alike,
    /// giving it the writer's new columns. The table as it is then.
    async fn ready(&self, sink: &Sink, table: &Table, schema: &Schema) -> Result<Arc<Current>, SinkError> {
        let keys = Self::keys(sink, table.rel(), schema)?;
        table
            .prepare(sink.storage(), schema, &keys, &self.properties, COMMIT_ATTEMPTS)
            .await
            .map_err(iceberg_error)
    }

    /// `schema` (a file's columns) with the ids of `table`'s columns, as
    /// this process last read the table. A column of another type than
    /// the table's (a rewrite into another hash encoding) takes the id
    /// the rewrite's snapshot gives it ([`Table::new_layout`] numbers the
    /// changed columns the same way, after the table's last id). As it is
    /// where the table is not read yet: read by the name mapping.
    pub fn file_schema(&self, table: &str, schema: SchemaRef) -> SchemaRef {
        let cached = {
            let tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
            tables.get(table).and_then(|c| c.table.cached())
        };
        let Some(current) = cached else {
            return schema;
        };
        let tagged = ice::schema::with_field_ids(&schema, current.schema()).or_else(|e| {
            // Only a column the table has with another type takes a new
            // id; one it does not have (dropped) would take an id no
            // schema records, which a later column could be given.
            if schema.fields().iter().any(|f| current.schema().field(f.name()).is_none()) {
                return Err(e);
            }
            let (relaid, _) = ice::schema::relaid(current.schema(), current.metadata.last_column_id, &schema, 0, &[])?;
            ice::schema::with_field_ids(&schema, &relaid)
        });
        match tagged {
            Ok(tagged) => Arc::new(tagged),
            Err(_) => schema,
        }
    }

    /// Commits the units' files of `table` in one snapshot, in the
    /// table's turn (with other units' files queued meanwhile), making
    /// the table first when this process has not yet.
    async fn publish(
        &self,
        sink: &Sink,
        table: &str,
        schema: &SchemaRef,
        parts: Vec<(Vec<Stored>, (String, i64))>,
        may_be_in: bool,
    ) -> Result<(), SinkError> {
        let committer = self.committer(sink, table);
        let t = committer.table.clone();
        let queued = Queued { parts, may_be_in };
        let schema = schema.clone();
        committer
            .group
            .join(queued, |ready, members| async move {
                let base = match ready {
                    true => t.load_cached(sink.storage()).await.map_err(iceberg_error),
                    false => self.ready(sink, &t, &schema).await.map(Some),
                };
                let current = match base {
                    Ok(Some(c)) => c,
                    Ok(None) => return (false, Err(iceberg_error(t.refused("its metadata is gone")))),
                    Err(e) => return (ready, Err(e)),
                };
                let mut parts = Vec::with_capacity(members.len());
                for (files, txn) in members.iter().flat_map(|m| &m.parts) {
                    match data_files(&t, &current, None, files) {
                        Ok(files) => parts.push(ice::Part {
                            files,
                            txn: Some(txn.clone()),
                        }),
                        Err(e) => return (true, Err(e)),
                    }
                }
                let change = ice::Change {
                    parts,
                    may_be_in: members.iter().any(|m| m.may_be_in),
                    ..ice::Change::default()
                };
                let outcome = t
                    .commit(sink.storage(), &change, COMMIT_ATTEMPTS)
                    .await
                    .map(|_| ())
                    .map_err(iceberg_error);
                (true, outcome)
            })
            .await
            .map_err(shared_error)
    }

    /// Makes `change` to `table` in one snapshot, in the table's turn.
    async fn commit_change(&self, sink: &Sink, table: &str, change: ice::Change) -> Result<(), SinkError> {
        let committer = self.committer(sink, table);
        let _turn = committer.group.turn().await;
        committer
            .table
            .commit(sink.storage(), &change, COMMIT_ATTEMPTS)
            .await
            .map(|_| ())
            .map_err(iceberg_error)
    }
}

/// The manifest entries of `files` in `current` (or, where given, the
/// layout a change gives the table), paths relative to the table.
fn data_files(table: &Table, current: &Current, layout: Option<&ice::NewLayout>, files: &[Stored]) -> Result<Vec<DataFile>, SinkError> {
    let (schema, spec) = match layout {
        Some(l) => (&l.schema, &l.spec),
        None => (current.schema(), current.spec()),
    };
    let dir = format!("{}/", table.rel());
    let order = current.metadata.write_order();
    let order = order.as_ref().map(|(o, ids)| (o.order_id, ids.as_slice()));
    files
        .iter()
        .map(|f| {
            let path = f.rel.strip_prefix(&dir).ok_or_else(|| SinkError::Write {
                path: f.rel.clone(),
                source: format!("not a file of table {}", table.rel()).into(),
            })?;
            let footer = f.footer.as_deref().ok_or_else(|| SinkError::Write {
                path: f.rel.clone(),
                source: "no footer to take statistics from".into(),
            })?;
            DataFile::from_footer(schema, spec, order, path, f.bytes, footer).map_err(|m| SinkError::Read {
                path: f.rel.clone(),
                source: m.into(),
            })
        })
        .collect()
}

/// An error of an Iceberg table as the write stage's: a table laid out
/// otherwise than the job writes is the spec's to fix.
fn iceberg_error(e: IcebergError) -> SinkError {
    match e {
        IcebergError::Catalog { table, source } if catalog::RestCatalog::is_config(&source) => SinkError::Config {
            uri: table.clone(),
            message: format!("Iceberg table {table}: {source}"),
            source: None,
        },
        IcebergError::Layout { table, message } => SinkError::Config {
            uri: table.clone(),
            message: format!("Iceberg table {table}: {message}"),
            source: None,
        },
        e => SinkError::Write {
            path: String::new(),
            source: Box::new(e),
        },
    }
}
