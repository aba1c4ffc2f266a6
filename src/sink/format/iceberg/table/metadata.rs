//! The table metadata document (`metadata/v<N>.metadata.json`) and its
//! parts: partition specs, sort orders, snapshots, references and logs.
//!
//! Read liberally: fields the spec makes optional may be missing, fields
//! this reader does not know are ignored, `current-snapshot-id: -1` means
//! none (as Java writes it). Written strictly, format version 2 only: every
//! field the spec requires of version 2, none it deprecates (`schema`,
//! `partition-spec`).

use super::partition::PartitionSpec;
use super::schema::Schema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// The format version written, and the only one read.
pub const FORMAT_VERSION: u8 = 2;

/// The table property holding the name mapping.
pub const NAME_MAPPING: &str = crate::spec::defaults::ICEBERG_NAME_MAPPING;

/// A table's metadata, as one `*.metadata.json` holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct TableMetadata {
    /// Always [`FORMAT_VERSION`] (checked on reading).
    pub format_version: u8,
    /// The table's id, set when it was made.
    pub table_uuid: String,
    /// The table's base location (an absolute URI).
    pub location: String,
    /// The highest sequence number assigned (a snapshot's).
    #[serde(default)]
    pub last_sequence_number: i64,
    /// When the metadata was written, milliseconds since the epoch.
    pub last_updated_ms: i64,
    /// The highest column id ever assigned.
    pub last_column_id: i32,
    /// Every schema the table has had.
    pub schemas: Vec<Schema>,
    /// The schema readers read with.
    pub current_schema_id: i32,
    /// Every partition spec.
    pub partition_specs: Vec<PartitionSpec>,
    /// The spec new files are written with.
    pub default_spec_id: i32,
    /// The highest partition field id ever assigned.
    pub last_partition_id: i32,
    /// Table properties.
    #[serde(default)]
    pub properties: BTreeMap<String, String>,
    /// The current snapshot, if any.
    #[serde(default, deserialize_with = "snapshot_id_or_none", serialize_with = "none_as_minus_one")]
    pub current_snapshot_id: Option<i64>,
    /// The snapshots kept.
    #[serde(default)]
    pub snapshots: Vec<Snapshot>,
    /// When each snapshot became current.
    #[serde(default)]
    pub snapshot_log: Vec<SnapshotLogEntry>,
    /// The previous metadata files, oldest first.
    #[serde(default)]
    pub metadata_log: Vec<MetadataLogEntry>,
    /// Sort orders (chainetl declares none but the unsorted order).
    #[serde(default)]
    pub sort_orders: Vec<SortOrder>,
    /// The sort order writers use.
    #[serde(default)]
    pub default_sort_order_id: i32,
    /// Branches and tags; `main` is the current snapshot.
    #[serde(default)]
    pub refs: BTreeMap<String, SnapshotRef>,
    /// Statistics files (Puffin), kept as read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statistics: Vec<serde_json::Value>,
    /// Partition statistics files, kept as read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partition_statistics: Vec<serde_json::Value>,
}

/// A snapshot: the table's files at one commit, through its manifest list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Snapshot {
    /// Its id.
    pub snapshot_id: i64,
    /// The snapshot it was made on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_snapshot_id: Option<i64>,
    /// Its sequence number.
    #[serde(default)]
    pub sequence_number: i64,
    /// When it was made, milliseconds since the epoch.
    pub timestamp_ms: i64,
    /// Its manifest list (an absolute URI).
    pub manifest_list: String,
    /// What it did: `operation` and the counts, and chainetl's own keys.
    #[serde(default)]
    pub summary: BTreeMap<String, String>,
    /// The schema current when it was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_id: Option<i32>,
}

/// What a snapshot did to the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Files added, none removed.
    Append,
    /// Files replaced by files holding the same rows (compaction).
    Replace,
    /// Files added and removed, rows changed (a repair).
    Overwrite,
    /// Files removed.
    Delete,
}

impl Operation {
    /// Its name in the summary.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Append => "append",
            Operation::Replace => "replace",
            Operation::Overwrite => "overwrite",
            Operation::Delete => "delete",
        }
    }
}

impl Snapshot {
    /// Its `operation`, as the summary names it.
    pub fn operation(&self) -> &str {
        self.summary.get("operation").map(String::as_str).unwrap_or_default()
    }

    /// The summary's count `key` (`added-records`), if it has one.
    pub fn count(&self, key: &str) -> Option<u64> {
        self.summary.get(key).and_then(|v| v.parse().ok())
    }
}

/// When a snapshot became the current one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SnapshotLogEntry {
    /// The snapshot.
    pub snapshot_id: i64,
    /// When, milliseconds since the epoch.
    pub timestamp_ms: i64,
}

/// A previous metadata file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct MetadataLogEntry {
    /// Its location (an absolute URI).
    pub metadata_file: String,
    /// Its `last-updated-ms`.
    pub timestamp_ms: i64,
}

/// A sort order (fields kept as read: chainetl declares the table's
/// natural key, ascending, nulls first, as its files are sorted; see
/// [`TableMetadata::declare_key_order`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SortOrder {
    /// Its id; 0 is unsorted.
    pub order_id: i32,
    /// Its fields.
    #[serde(default)]
    pub fields: Vec<serde_json::Value>,
}

/// A branch or tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SnapshotRef {
    /// The snapshot it names.
    pub snapshot_id: i64,
    /// `branch` or `tag`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Retention, for branches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_snapshots_to_keep: Option<i32>,
    /// Retention, for branches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_snapshot_age_ms: Option<i64>,
    /// How long the reference itself is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ref_age_ms: Option<i64>,
}

fn snapshot_id_or_none<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    Ok(Option::<i64>::deserialize(d)?.filter(|id| *id != -1))
}

fn none_as_minus_one<S: Serializer>(id: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_i64(id.unwrap_or(-1))
}

impl TableMetadata {
    /// Reads a metadata document: refused when it is not JSON, not of
    /// format version 2, or names a current schema or spec it lacks.
    pub fn parse(bytes: &[u8]) -> Result<TableMetadata, String> {
        let probe: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
        match probe.get("format-version").and_then(|v| v.as_u64()) {
            Some(v) if v == u64::from(FORMAT_VERSION) => {}
            Some(v) => {
                return Err(format!(
                    "format version {v}: chainetl reads and writes format version {FORMAT_VERSION} only"
                ));
            }
            None => return Err("no format-version".into()),
        }
        let mut m: TableMetadata = serde_path_to_error::deserialize(probe).map_err(|e| format!("{}: {}", e.path(), e.inner()))?;
        if m.schema().is_none() {
            return Err(format!("current-schema-id {} names no schema", m.current_schema_id));
        }
        if m.spec().is_none() {
            return Err(format!("default-spec-id {} names no partition spec", m.default_spec_id));
        }
        // Missing where the spec requires them: derived from what is there.
        let highest_seq = m.snapshots.iter().map(|s| s.sequence_number).max().unwrap_or(0);
        m.last_sequence_number = m.last_sequence_number.max(highest_seq);
        if let Some(id) = m.current_snapshot_id {
            m.refs.entry("main".into()).or_insert_with(|| SnapshotRef::branch(id));
        }
        if m.sort_orders.is_empty() {
            m.sort_orders.push(SortOrder::unsorted());
        }
        Ok(m)
    }

    /// The document, as written.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).unwrap_or_default()
    }

    /// The current schema.
    pub fn schema(&self) -> Option<&Schema> {
        self.schemas.iter().find(|s| s.schema_id == self.current_schema_id)
    }

    /// The default partition spec.
    pub fn spec(&self) -> Option<&PartitionSpec> {
        self.partition_specs.iter().find(|s| s.spec_id == self.default_spec_id)
    }

    /// The partition spec with id `id`.
    pub fn spec_by_id(&self, id: i32) -> Option<&PartitionSpec> {
        self.partition_specs.iter().find(|s| s.spec_id == id)
    }

    /// The schema with id `id`.
    pub fn schema_by_id(&self, id: i32) -> Option<&Schema> {
        self.schemas.iter().find(|s| s.schema_id == id)
    }

    /// The table's default sort order, where it is one of ascending
    /// identity fields ([`SortOrder::ascending_ids`]), with those fields.
    pub fn write_order(&self) -> Option<(&SortOrder, Vec<i32>)> {
        let order = self.sort_orders.iter().find(|o| o.order_id == self.default_sort_order_id)?;
        Some((order, order.ascending_ids()?))
    }

    /// Declares the current schema's natural key (the columns chainetl
    /// sorts a table's files by: `block_number, log_index` for events) as
    /// the default sort order, where the table has none (unsorted): an
    /// order of the next free id. A table of another order, or whose
    /// schema has no key, is left as it is.
    pub fn declare_key_order(&mut self) {
        if self
            .sort_orders
            .iter()
            .any(|o| o.order_id == self.default_sort_order_id && !o.fields.is_empty())
        {
            return;
        }
        let Some(schema) = self.schema() else { return };
        let names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
        let ids: Vec<i32> = crate::decode::declared::natural_key(&names)
            .iter()
            .filter_map(|k| schema.field(k).map(|f| f.id))
            .collect();
        if ids.is_empty() {
            return;
        }
        let id = self.sort_orders.iter().map(|o| o.order_id).max().unwrap_or(0) + 1;
        self.sort_orders.push(SortOrder::ascending(id, &ids));
        self.default_sort_order_id = id;
    }

    /// The current snapshot.
    pub fn current_snapshot(&self) -> Option<&Snapshot> {
        let id = self.current_snapshot_id?;
        self.snapshot(id)
    }

    /// The snapshot with id `id`, if kept.
    pub fn snapshot(&self, id: i64) -> Option<&Snapshot> {
        self.snapshots.iter().find(|s| s.snapshot_id == id)
    }

    /// The current snapshot and its ancestors still kept, newest first.
    pub fn ancestry(&self) -> Vec<&Snapshot> {
        // Indexed once: a long table's walk stays linear.
        let by_id: std::collections::HashMap<i64, &Snapshot> = self.snapshots.iter().map(|s| (s.snapshot_id, s)).collect();
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        let mut next = self.current_snapshot_id;
        while let Some(id) = next {
            let Some(s) = by_id.get(&id).copied() else { break };
            // A parent loop (a damaged document) ends the walk.
            if !seen.insert(id) {
                break;
            }
            out.push(s);
            next = s.parent_snapshot_id;
        }
        out
    }

    /// A snapshot id no kept snapshot has: positive, random.
    pub fn new_snapshot_id(&self) -> i64 {
        loop {
            let id = (fastrand::u64(..) & (i64::MAX as u64)) as i64;
            if id != 0 && self.snapshot(id).is_none() {
                return id;
            }
        }
    }
}

impl SnapshotRef {
    /// A branch at snapshot `id`.
    pub fn branch(id: i64) -> SnapshotRef {
        SnapshotRef {
            snapshot_id: id,
            kind: "branch".into(),
            min_snapshots_to_keep: None,
            max_snapshot_age_ms: None,
            max_ref_age_ms: None,
        }
    }
}

impl SortOrder {
    /// The unsorted order, id 0.
    pub fn unsorted() -> SortOrder {
        SortOrder {
            order_id: 0,
            fields: Vec::new(),
        }
    }

    /// Order `order_id`: by the columns `source_ids`, each ascending with
    /// nulls first (as Parquet footers declare chainetl's files sorted).
    pub fn ascending(order_id: i32, source_ids: &[i32]) -> SortOrder {
        SortOrder {
            order_id,
            fields: source_ids
                .iter()
                .map(|id| serde_json::json!({"transform": "identity", "source-id": id, "direction": "asc", "null-order": "nulls-first"}))
                .collect(),
        }
    }

    /// The columns of an order of identity fields, each ascending with
    /// nulls first; `None` for any other order (or the unsorted one).
    pub fn ascending_ids(&self) -> Option<Vec<i32>> {
        let ids: Option<Vec<i32>> = self
            .fields
            .iter()
            .map(|f| {
                let plain = f.get("transform")?.as_str()? == "identity"
                    && f.get("direction")?.as_str()? == "asc"
                    && f.get("null-order")?.as_str()? == "nulls-first";
                plain.then_some(())?;
                i32::try_from(f.get("source-id")?.as_i64()?).ok()
            })
            .collect();
        ids.filter(|ids| !ids.is_empty())
    }
}

/// A random (version 4) UUID.
pub fn uuid4() -> String {
    let mut b = [0u8; 16];
    for chunk in b.chunks_mut(8) {
        chunk.copy_from_slice(&fastrand::u64(..).to_le_bytes());
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}
