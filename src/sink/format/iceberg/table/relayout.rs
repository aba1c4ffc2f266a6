//! A change that gives a table a new layout — another partition spec,
//! columns of another type or dropped — in the same snapshot that
//! replaces every file (a rewrite of the job's files into the spec's
//! layout), so readers see the old files with the old schema or the new
//! with the new, never one with the other.
//!
//! The new schema keeps the id of each column whose name and type stay;
//! a column whose type changes is dropped and added again under its name
//! with a new id (Iceberg promotes no string to binary), so no reader
//! takes an old file's values for the new type. A partition spec equal
//! to one the table had is taken up again by its id; a new one gets the
//! next id and partition field ids after `last-partition-id`.

use super::metadata::NAME_MAPPING;
use super::partition::{PartitionKey, PartitionSpec, Transform};
use super::schema::{self, Schema};
use super::{Current, IcebergError, Table, TableMetadata};

/// A layout a change gives the table (see the module doc), made on one
/// version's schema and spec.
#[derive(Debug, Clone, PartialEq)]
pub struct NewLayout {
    /// The schema readers read with after the change.
    pub schema: Schema,
    /// The spec new files are written with after it.
    pub spec: PartitionSpec,
    last_column_id: i32,
    last_partition_id: i32,
    /// The current schema id and default spec id it was made on.
    on: (i32, i32),
}

impl NewLayout {
    /// Whether it was made on `base`'s schema and spec (else the table
    /// changed since, and the files made for it may not fit).
    pub(crate) fn fits(&self, base: &Current) -> bool {
        self.on == (base.metadata.current_schema_id, base.metadata.default_spec_id)
    }

    /// `m` (the next version's metadata) with this layout current.
    pub(crate) fn apply(&self, m: &mut TableMetadata) {
        if !m.schemas.iter().any(|s| s.schema_id == self.schema.schema_id) {
            m.schemas.push(self.schema.clone());
        }
        if !m.partition_specs.iter().any(|s| s.spec_id == self.spec.spec_id) {
            m.partition_specs.push(self.spec.clone());
        }
        m.current_schema_id = self.schema.schema_id;
        m.default_spec_id = self.spec.spec_id;
        m.last_column_id = m.last_column_id.max(self.last_column_id);
        m.last_partition_id = m.last_partition_id.max(self.last_partition_id);
        let mapping = self.schema.name_mapping_over(m.properties.get(NAME_MAPPING).map(String::as_str));
        m.properties.insert(NAME_MAPPING.into(), mapping.to_string());
    }
}

impl Table {
    /// The layout `current` must take for files of rows of `arrow`
    /// partitioned by `keys`: `None` where it has it (the same columns,
    /// with their types, and the same partitioning).
    pub fn new_layout(
        &self,
        current: &Current,
        arrow: &arrow_schema::Schema,
        keys: &[PartitionKey],
    ) -> Result<Option<NewLayout>, IcebergError> {
        let m = &current.metadata;
        let optional: Vec<&str> = keys
            .iter()
            .filter(|k| k.transform == Transform::Identity)
            .map(|k| k.source.as_str())
            .collect();
        let next_schema_id = m.schemas.iter().map(|s| s.schema_id).max().unwrap_or(0) + 1;
        let (mut schema, last_column_id) =
            schema::relaid(current.schema(), m.last_column_id, arrow, next_schema_id, &optional).map_err(|e| self.layout(e.to_string()))?;
        let same_columns = schema.fields == current.schema().fields;
        if same_columns {
            schema = current.schema().clone();
        } else if let Some(had) = m.schemas.iter().find(|s| s.fields == schema.fields) {
            schema = had.clone();
        }
        let spec = match m.partition_specs.iter().find(|s| s.is_of(keys, &schema)) {
            Some(s) => s.clone(),
            None => {
                let id = m.partition_specs.iter().map(|s| s.spec_id).max().unwrap_or(0) + 1;
                PartitionSpec::of_keys(id, keys, &schema, m.last_partition_id + 1).map_err(|e| self.layout(e))?
            }
        };
        if same_columns && spec.spec_id == m.default_spec_id {
            return Ok(None);
        }
        let last_partition_id = m.last_partition_id.max(spec.fields.iter().map(|f| f.field_id).max().unwrap_or(0));
        Ok(Some(NewLayout {
            schema,
            spec,
            last_column_id,
            last_partition_id,
            on: (m.current_schema_id, m.default_spec_id),
        }))
    }
}
