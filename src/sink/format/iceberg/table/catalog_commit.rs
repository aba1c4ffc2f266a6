//! A table whose commits go through a REST catalog: the catalog holds the
//! pointer to the current metadata and writes each metadata file; this
//! module turns the next version a commit made (the same
//! [`TableMetadata`] the file-system layout writes whole) into the
//! catalog's requirements and updates, and reads what the catalog holds.
//!
//! # Invariants
//!
//! - **A commit asserts what it was made on**: the table's uuid, the
//!   snapshot `main` pointed at, and, where the schema or partition spec
//!   changes, the current ones and the last assigned ids. A commit made on
//!   a stale version is refused (409), and the caller reloads and makes it
//!   again, leaving out what the table records by then.
//! - **An unknown outcome is never resent blind.** A 5xx, a timeout or a
//!   dropped connection is answered like a refusal: the caller reloads,
//!   and its own snapshot id (or the transaction ids of its parts) in the
//!   reloaded table says the commit landed ([`Table::commit`]); a
//!   metadata-only change is made on what the reload shows, so one that
//!   landed is found made.
//! - **The table is where the job's files are.** A catalog table located
//!   elsewhere is refused with both locations.

use super::metadata::{NAME_MAPPING, TableMetadata};
use super::{Current, IcebergError, Table, Written};
use crate::sink::format::iceberg::catalog::{CatalogError, CommitOutcome, Loaded, RestCatalog};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Attempts at the name-mapping commit that follows a table's creation.
const CATALOG_SETUP_ATTEMPTS: u32 = 10;

impl Table {
    pub(crate) fn catalog_error(&self, source: CatalogError) -> IcebergError {
        IcebergError::Catalog {
            table: self.rel.clone(),
            source,
        }
    }

    /// The table as the catalog holds it, `None` where it has none.
    pub(super) async fn catalog_load(&self, catalog: &RestCatalog) -> Result<Option<Arc<Current>>, IcebergError> {
        let Some(loaded) = catalog.load(&self.rel).await.map_err(|e| self.catalog_error(e))? else {
            return Ok(None);
        };
        self.catalog_current(catalog, loaded).map(Some)
    }

    /// What the catalog answered, checked to be this table's.
    fn catalog_current(&self, catalog: &RestCatalog, loaded: Loaded) -> Result<Arc<Current>, IcebergError> {
        let shown = loaded.metadata_location.clone().unwrap_or_else(|| catalog.identifier(&self.rel));
        let bytes = serde_json::to_vec(&loaded.metadata).unwrap_or_default();
        let metadata = TableMetadata::parse(&bytes).map_err(|m| self.unreadable(&shown, m))?;
        if metadata.location.trim_end_matches('/') != self.location {
            return Err(self.layout(format!(
                "the catalog's table {} is at {}, and this job's files are at {}: point output.uri at the table's \
                 location, or use another output.catalog.namespace",
                catalog.identifier(&self.rel),
                metadata.location,
                self.location
            )));
        }
        // For messages and the report only: a catalog's pointer, not this
        // number, orders its versions.
        let name = loaded
            .metadata_location
            .as_deref()
            .and_then(|l| l.rsplit('/').next())
            .unwrap_or_default();
        let version = super::version_of(name)
            .or_else(|| name.split(['-', '.']).next().and_then(|d| d.parse::<u64>().ok()))
            .unwrap_or(0);
        Ok(self.remember(Arc::new(Current {
            version,
            metadata,
            metadata_location: loaded.metadata_location,
        })))
    }

    /// Creates the table in the catalog from `draft` (version 1 as the
    /// file-system layout would write it). The catalog assigns its own
    /// field ids: the name mapping is then written again with them.
    /// Whether this call made it, and the table.
    pub(super) async fn catalog_create(&self, catalog: &RestCatalog, draft: &Current) -> Result<(bool, Arc<Current>), IcebergError> {
        let m = &draft.metadata;
        let mut properties = m.properties.clone();
        properties.remove(NAME_MAPPING);
        let body = json!({
            "name": catalog.identifier(&self.rel).rsplit('.').next().unwrap_or_default(),
            "location": m.location,
            "schema": m.schemas.first(),
            "partition-spec": m.partition_specs.first(),
            "write-order": m.sort_orders.iter().find(|o| o.order_id == m.default_sort_order_id),
            "properties": properties,
            "stage-create": false,
        });
        let made = catalog.create(body).await.map_err(|e| self.catalog_error(e))?;
        let Some(loaded) = made else {
            // Made by another writer meanwhile: its table is the table.
            return match self.catalog_load(catalog).await? {
                Some(c) => Ok((false, c)),
                None => Err(self.refused("the catalog says the table exists, and has none of its name")),
            };
        };
        let current = self.catalog_current(catalog, loaded)?;
        tracing::info!(table = %self.rel, catalog = %catalog.uri(), identifier = %catalog.identifier(&self.rel), "created the iceberg table in the catalog");
        let mut current = current;
        for _ in 0..CATALOG_SETUP_ATTEMPTS {
            let mapping = current.schema().name_mapping().to_string();
            if current.metadata.properties.get(NAME_MAPPING) == Some(&mapping) {
                return Ok((true, current));
            }
            let mut next = current.metadata.clone();
            next.properties.insert(NAME_MAPPING.into(), mapping);
            if let Written::Made(c) = self.catalog_commit(catalog, &current, &next).await? {
                return Ok((true, c));
            }
            current = match self.catalog_load(catalog).await? {
                Some(c) => c,
                None => return Err(self.refused("the table the catalog made is gone")),
            };
        }
        Err(IcebergError::Conflict {
            table: self.rel.clone(),
            attempts: CATALOG_SETUP_ATTEMPTS,
        })
    }

    /// Registers `folder` (the newest version the file-system layout
    /// kept) as the catalog's table: a catalog added to a job whose
    /// tables exist. The folder's hint is deleted once the catalog
    /// points at the table (a hint that no longer moves would show
    /// readers an older table). Whether this call registered it, and
    /// the table.
    pub(super) async fn catalog_register(
        &self,
        catalog: &RestCatalog,
        storage: &crate::storage::Storage,
        folder: &Current,
    ) -> Result<(bool, Arc<Current>), IcebergError> {
        let location = format!(
            "{}/metadata/v{}.metadata.json",
            folder.metadata.location.trim_end_matches('/'),
            folder.version
        );
        let registered = catalog.register(&self.rel, &location).await.map_err(|e| self.catalog_error(e))?;
        let (made, current) = match registered {
            Some(loaded) => (true, self.catalog_current(catalog, loaded)?),
            // Registered (or made) by another writer meanwhile.
            None => match self.catalog_load(catalog).await? {
                Some(c) => (false, c),
                None => return Err(self.refused("the catalog says the table exists, and has none of its name")),
            },
        };
        if made {
            tracing::info!(table = %self.rel, catalog = %catalog.uri(), identifier = %catalog.identifier(&self.rel), metadata = %location, "registered the iceberg table in the catalog");
        }
        if current.metadata.table_uuid == folder.metadata.table_uuid {
            self.drop_hint(storage).await?;
        }
        Ok((made, current))
    }

    /// Commits `next` (a version made on `base`) through the catalog.
    pub(super) async fn catalog_commit(
        &self,
        catalog: &RestCatalog,
        base: &Current,
        next: &TableMetadata,
    ) -> Result<Written, IcebergError> {
        let (requirements, updates) = changes(&base.metadata, next);
        if updates.is_empty() {
            return Ok(Written::Made(Arc::new(base.clone())));
        }
        crate::util::failpoint::hit("before-catalog-commit");
        let had: BTreeSet<i64> = base.metadata.snapshots.iter().map(|s| s.snapshot_id).collect();
        let added: Vec<i64> = next
            .snapshots
            .iter()
            .map(|s| s.snapshot_id)
            .filter(|id| !had.contains(id))
            .collect();
        let holds = |c: &Current| {
            added.iter().all(|id| c.metadata.snapshot(*id).is_some())
                && next
                    .refs
                    .get("main")
                    .is_none_or(|r| c.metadata.refs.get("main").map(|m| m.snapshot_id) == Some(r.snapshot_id))
        };
        let outcome = catalog
            .commit(&self.rel, requirements, updates)
            .await
            .map_err(|e| self.catalog_error(e))?;
        // Sent: from here, what cannot be read is an outcome unknown (the
        // commit may have landed), never an error that deletes its files.
        let why = match outcome {
            CommitOutcome::Applied(loaded) => match self.catalog_current(catalog, loaded) {
                Ok(c) if holds(&c) => {
                    crate::util::failpoint::hit("after-catalog-commit");
                    return Ok(Written::Made(c));
                }
                Ok(_) => "the catalog's answer does not hold the commit".to_string(),
                Err(e) => format!("the catalog's answer cannot be read: {e}"),
            },
            CommitOutcome::Conflict(why) => {
                tracing::debug!(table = %self.rel, reason = %why, "the catalog refused a commit made on an older version; reloading");
                return Ok(Written::Lost);
            }
            CommitOutcome::Unknown(why) => why,
        };
        tracing::warn!(table = %self.rel, reason = %why, "the catalog's answer to a commit was lost; reloading to see whether it landed");
        match self.catalog_load(catalog).await {
            Ok(Some(now)) if !added.is_empty() && holds(&now) => Ok(Written::Made(now)),
            Ok(_) => Ok(Written::Unknown),
            Err(e) => {
                tracing::warn!(table = %self.rel, error = %e, "reloading after a lost answer failed");
                Ok(Written::Unknown)
            }
        }
    }
}

/// The snapshots `next` has and `base` has not.
fn new_snapshots<'a>(base: &TableMetadata, next: &'a TableMetadata) -> impl Iterator<Item = &'a super::Snapshot> {
    let had: BTreeSet<i64> = base.snapshots.iter().map(|s| s.snapshot_id).collect();
    next.snapshots.iter().filter(move |s| !had.contains(&s.snapshot_id))
}

/// The requirements and updates that make `next` of `base`.
pub(super) fn changes(base: &TableMetadata, next: &TableMetadata) -> (Vec<Value>, Vec<Value>) {
    let mut req = vec![
        json!({"type": "assert-table-uuid", "uuid": base.table_uuid}),
        json!({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": base.refs.get("main").map(|r| r.snapshot_id)}),
    ];
    let mut up = Vec::new();
    let had_schemas: BTreeSet<i32> = base.schemas.iter().map(|s| s.schema_id).collect();
    let added_schema = next
        .schemas
        .iter()
        .filter(|s| !had_schemas.contains(&s.schema_id))
        .collect::<Vec<_>>();
    if !added_schema.is_empty() || next.current_schema_id != base.current_schema_id {
        req.push(json!({"type": "assert-current-schema-id", "current-schema-id": base.current_schema_id}));
        req.push(json!({"type": "assert-last-assigned-field-id", "last-assigned-field-id": base.last_column_id}));
    }
    for s in &added_schema {
        up.push(json!({"action": "add-schema", "schema": s, "last-column-id": next.last_column_id}));
    }
    if next.current_schema_id != base.current_schema_id {
        let just_added = added_schema.last().is_some_and(|s| s.schema_id == next.current_schema_id);
        up.push(json!({"action": "set-current-schema", "schema-id": if just_added { -1 } else { next.current_schema_id }}));
    }
    let had_specs: BTreeSet<i32> = base.partition_specs.iter().map(|s| s.spec_id).collect();
    let added_spec = next
        .partition_specs
        .iter()
        .filter(|s| !had_specs.contains(&s.spec_id))
        .collect::<Vec<_>>();
    if !added_spec.is_empty() || next.default_spec_id != base.default_spec_id {
        req.push(json!({"type": "assert-default-spec-id", "default-spec-id": base.default_spec_id}));
        req.push(json!({"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": base.last_partition_id}));
    }
    for s in &added_spec {
        up.push(json!({"action": "add-spec", "spec": s}));
    }
    if next.default_spec_id != base.default_spec_id {
        let just_added = added_spec.last().is_some_and(|s| s.spec_id == next.default_spec_id);
        up.push(json!({"action": "set-default-spec", "spec-id": if just_added { -1 } else { next.default_spec_id }}));
    }
    let had_orders: BTreeSet<i32> = base.sort_orders.iter().map(|o| o.order_id).collect();
    let added_order = next
        .sort_orders
        .iter()
        .filter(|o| !had_orders.contains(&o.order_id))
        .collect::<Vec<_>>();
    for o in &added_order {
        up.push(json!({"action": "add-sort-order", "sort-order": o}));
    }
    if next.default_sort_order_id != base.default_sort_order_id {
        req.push(json!({"type": "assert-default-sort-order-id", "default-sort-order-id": base.default_sort_order_id}));
        let just_added = added_order.last().is_some_and(|o| o.order_id == next.default_sort_order_id);
        up.push(json!({"action": "set-default-sort-order", "sort-order-id": if just_added { -1 } else { next.default_sort_order_id }}));
    }
    for s in new_snapshots(base, next) {
        up.push(json!({"action": "add-snapshot", "snapshot": s}));
    }
    let keeps: BTreeSet<i64> = next.snapshots.iter().map(|s| s.snapshot_id).collect();
    let dropped: Vec<i64> = base
        .snapshots
        .iter()
        .map(|s| s.snapshot_id)
        .filter(|id| !keeps.contains(id))
        .collect();
    if !dropped.is_empty() {
        up.push(json!({"action": "remove-snapshots", "snapshot-ids": dropped}));
    }
    for (name, r) in &next.refs {
        if base.refs.get(name) != Some(r) {
            let mut u = serde_json::to_value(r).unwrap_or_else(|_| json!({}));
            if let Some(o) = u.as_object_mut() {
                o.insert("action".into(), json!("set-snapshot-ref"));
                o.insert("ref-name".into(), json!(name));
            }
            up.push(u);
        }
    }
    for name in base.refs.keys().filter(|n| !next.refs.contains_key(*n)) {
        up.push(json!({"action": "remove-snapshot-ref", "ref-name": name}));
    }
    let set: serde_json::Map<String, Value> = next
        .properties
        .iter()
        .filter(|(k, v)| base.properties.get(*k) != Some(v))
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    if !set.is_empty() {
        up.push(json!({"action": "set-properties", "updates": set}));
    }
    let removed: Vec<&String> = base.properties.keys().filter(|k| !next.properties.contains_key(*k)).collect();
    if !removed.is_empty() {
        up.push(json!({"action": "remove-properties", "removals": removed}));
    }
    (req, up)
}
