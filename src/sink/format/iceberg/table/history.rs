//! What a table holds and has held: the live files of a snapshot, columns
//! added by a metadata-only commit, and retention — expiring old
//! snapshots and deleting the metadata files no kept snapshot needs.

use super::manifest::Status;
use super::metadata::{MetadataLogEntry, NAME_MAPPING, Snapshot};
use super::stats::DataFile;
use super::{Current, IcebergError, Table, backoff, schema};
use crate::storage::Storage;
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

/// How much history [`Table::expire`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Snapshots made at or after this instant (milliseconds since the
    /// epoch) are kept, and metadata files written since (or within
    /// [`super::ORPHAN_AGE`]) are not orphans.
    pub keep_since_ms: i64,
    /// The current snapshot and this many ancestors before it at least
    /// (whatever their age) are kept.
    pub keep_last: usize,
}

/// Which transaction ids `(application, version)` their writer needs no
/// more ([`super::Table::expire`]).
pub type Settled = dyn Fn(&str, i64) -> bool + Send + Sync;

/// Nothing is settled: every id of a dropped snapshot is kept.
pub fn nothing_settled(_: &str, _: i64) -> bool {
    false
}

impl Retention {
    /// What the table's maintenance properties keep at `now_ms`
    /// (`history.expire.max-snapshot-age-ms`,
    /// `history.expire.min-snapshots-to-keep`, each defaulting to
    /// [`crate::spec::defaults::ICEBERG_MAINTENANCE`]); `None` where no
    /// snapshot is past them (nothing to commit).
    pub fn of_properties(current: &Current, now_ms: i64) -> Option<Retention> {
        let prop = |key: &str| -> i64 {
            let default = crate::spec::defaults::ICEBERG_MAINTENANCE
                .iter()
                .find(|(k, _)| *k == key)
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(1);
            current
                .metadata
                .properties
                .get(key)
                .and_then(|v| v.trim().parse().ok())
                .filter(|v| *v >= 1)
                .unwrap_or(default)
        };
        let retention = Retention {
            keep_since_ms: now_ms - prop("history.expire.max-snapshot-age-ms"),
            keep_last: (prop("history.expire.min-snapshots-to-keep") as usize).saturating_sub(1),
        };
        let keep = kept(current, retention);
        current
            .metadata
            .snapshots
            .iter()
            .any(|s| !keep.contains(&s.snapshot_id))
            .then_some(retention)
    }
}

/// What [`Table::expire`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expired {
    /// The snapshots dropped from the metadata.
    pub snapshots: Vec<i64>,
    /// Data files (paths relative to the table) that no kept snapshot
    /// reads any more: the caller deletes those it owns.
    pub unreferenced: BTreeSet<String>,
    /// Manifest lists, manifests and metadata versions deleted.
    pub metadata_files_deleted: usize,
}

impl Table {
    /// The files of the current snapshot (none before the first).
    /// Refused (a layout error: no retry makes it) when the table has
    /// delete files (row-level deletes, which no chainetl table has and
    /// which its readings would not apply).
    pub async fn live_files(&self, storage: &Storage, current: &Current) -> Result<Vec<DataFile>, IcebergError> {
        match current.snapshot() {
            Some(s) => self.snapshot_files(storage, current, s).await,
            None => Ok(Vec::new()),
        }
    }

    /// The files of snapshot `s` of `current`.
    pub async fn snapshot_files(&self, storage: &Storage, current: &Current, s: &Snapshot) -> Result<Vec<DataFile>, IcebergError> {
        let rel = self.rel_of(current, &s.manifest_list)?;
        let Some(list) = self.manifest_list(storage, current, &s.manifest_list).await? else {
            return Err(self.unreadable(&rel, "missing"));
        };
        let mut out = Vec::new();
        for m in &list {
            if m.content != 0 {
                return Err(self.layout(format!(
                    "snapshot {} has delete files (row-level deletes another engine wrote), which chainetl does not apply: \
                     rewrite the table without them in that engine (Spark: CALL system.rewrite_data_files with \
                     delete-file-threshold 1), or write the job into another output",
                    s.snapshot_id
                )));
            }
            let Some(entries) = self.manifest_entries(storage, current, m).await? else {
                return Err(self.unreadable(&self.rel_of(current, &m.path)?, "missing"));
            };
            out.extend(entries.into_iter().filter(|e| e.status != Status::Deleted).map(|e| e.file));
        }
        Ok(out)
    }

    /// The data files (paths relative to the table) any snapshot of
    /// `current` reads: what a vacuum leaves. Each manifest is read once,
    /// however many snapshots list it.
    pub async fn referenced_files(&self, storage: &Storage, current: &Current) -> Result<HashSet<String>, IcebergError> {
        let mut seen = HashSet::new();
        let mut files = HashSet::new();
        for s in &current.metadata.snapshots {
            let Some(list) = self.manifest_list(storage, current, &s.manifest_list).await? else {
                return Err(self.unreadable(
                    &self.rel_of(current, &s.manifest_list)?,
                    "missing (a kept snapshot's manifest list)",
                ));
            };
            for m in list {
                if !seen.insert(m.path.clone()) {
                    continue;
                }
                let Some(entries) = self.manifest_entries(storage, current, &m).await? else {
                    return Err(self.unreadable(&self.rel_of(current, &m.path)?, "missing (a kept snapshot's manifest)"));
                };
                files.extend(entries.into_iter().filter(|e| e.status != Status::Deleted).map(|e| e.file.path));
            }
        }
        Ok(files)
    }

    /// Adds the columns of `arrow` (a writer's schema) that the table
    /// lacks, optional, with new ids, in one metadata-only commit (no
    /// snapshot): files written before read them as null. A conflict is
    /// retried on the new version, adding only what is still missing.
    /// Returns the new version, or `None` when nothing was missing.
    /// Refused (a layout error): a column of another type, or one the
    /// table requires that the writer may leave null or lacks.
    pub async fn add_columns(
        &self,
        storage: &Storage,
        arrow: &arrow_schema::Schema,
        attempts: u32,
    ) -> Result<Option<Arc<Current>>, IcebergError> {
        for attempt in 0..attempts.max(1) {
            let Some(base) = self.load_to_write(storage).await? else {
                return Err(self.refused("no table to add columns to"));
            };
            let evolved = schema::evolve(base.schema(), base.metadata.last_column_id, arrow).map_err(|e| self.layout(e.to_string()))?;
            let Some(mut evolved) = evolved else {
                return Ok(None);
            };
            let mut m = base.metadata.clone();
            evolved.schema.schema_id = m.schemas.iter().map(|s| s.schema_id).max().unwrap_or(0) + 1;
            let mapping = evolved.schema.name_mapping_over(m.properties.get(NAME_MAPPING).map(String::as_str));
            m.properties.insert(NAME_MAPPING.into(), mapping.to_string());
            m.current_schema_id = evolved.schema.schema_id;
            m.schemas.push(evolved.schema);
            m.last_column_id = evolved.last_column_id;
            self.log_previous(&base, &mut m);
            if let Some(c) = self.write_version(storage, Some(&base), m).await? {
                tracing::info!(table = %self.rel, version = c.version, columns = %evolved.added.join(", "), "added columns to the iceberg table (metadata only: files written before read them as null)");
                return Ok(Some(c));
            }
            tokio::time::sleep(backoff(attempt)).await;
        }
        Err(IcebergError::Conflict {
            table: self.rel.clone(),
            attempts,
        })
    }

    /// `m` (the next version after `base`'s) with `base`'s file in its
    /// metadata log and a fresh `last-updated-ms`.
    pub(super) fn log_previous(&self, base: &Current, m: &mut super::TableMetadata) {
        m.metadata_log.push(MetadataLogEntry {
            metadata_file: format!("{}/metadata/v{}.metadata.json", m.location, base.version),
            timestamp_ms: m.last_updated_ms,
        });
        self.trim_log(m);
        m.last_updated_ms = chrono::Utc::now().timestamp_millis().max(m.last_updated_ms);
    }

    /// Drops the snapshots `retention` does not keep — neither made since
    /// `keep_since_ms`, nor the one current then, nor among the current one
    /// and its last `keep_last` ancestors, nor named by a branch or tag — in one
    /// metadata-only commit (retried on conflict, up to `attempts`
    /// times), then deletes the manifest lists and manifests only they
    /// read, the metadata versions before the last
    /// [`super::Limits::previous_versions`], and `.avro` files in
    /// `metadata/` older than the cutoff and than [`super::ORPHAN_AGE`]
    /// that no kept snapshot names (left by attempts that died). Returns the data files no kept
    /// snapshot reads: deleting them is the caller's (it knows which are
    /// its own).
    ///
    /// Transaction ids only dropped snapshots record move into the
    /// table's properties, unless `settled` says the writer that made them
    /// needs them no more (its job records the unit published at that
    /// version or later); such properties already there are removed in
    /// the same commit, which is also made for them alone. So the ids
    /// kept past expiry are a job's units in flight, not every unit ever.
    pub async fn expire(&self, storage: &Storage, retention: Retention, settled: &Settled, attempts: u32) -> Result<Expired, IcebergError> {
        let mut out = Expired::default();
        let mut expired: Option<(Arc<Current>, Vec<String>)> = None;
        let mut current = None;
        for attempt in 0..attempts.max(1) {
            let Some(base) = self.load_to_write(storage).await? else {
                return Ok(out);
            };
            let keep = kept(&base, retention);
            let dropped: Vec<&Snapshot> = base.metadata.snapshots.iter().filter(|s| !keep.contains(&s.snapshot_id)).collect();
            let stale: Vec<String> = base
                .metadata
                .properties
                .iter()
                .filter(|(k, v)| {
                    let app = k.strip_prefix(super::TXN_PREFIX);
                    app.zip(v.parse::<i64>().ok()).is_some_and(|(app, v)| settled(app, v))
                })
                .map(|(k, _)| k.clone())
                .collect();
            if dropped.is_empty() && stale.is_empty() {
                current = Some(base);
                break;
            }
            let ids: Vec<i64> = dropped.iter().map(|s| s.snapshot_id).collect();
            let lists: Vec<String> = dropped.iter().map(|s| s.manifest_list.clone()).collect();
            let mut m = base.metadata.clone();
            // The transaction ids only dropped snapshots record move into
            // the table's properties: a unit committed before the
            // retention is still known to be in.
            for k in &stale {
                m.properties.remove(k);
            }
            for s in &dropped {
                for (app, v) in Current::txns(s) {
                    if !settled(&app, v) && base.recorded_version_kept(&app, &keep).is_none_or(|k| k < v) {
                        let key = format!("{}{app}", super::TXN_PREFIX);
                        let was = m.properties.get(&key).and_then(|x| x.parse::<i64>().ok());
                        if was.is_none_or(|w| w < v) {
                            m.properties.insert(key, v.to_string());
                        }
                    }
                }
            }
            m.snapshots.retain(|s| keep.contains(&s.snapshot_id));
            // The log starts after the last snapshot it no longer has.
            if let Some(last) = m.snapshot_log.iter().rposition(|e| !keep.contains(&e.snapshot_id)) {
                m.snapshot_log.drain(..=last);
            }
            m.statistics
                .retain(|s| s.get("snapshot-id").and_then(|v| v.as_i64()).is_none_or(|id| keep.contains(&id)));
            m.partition_statistics
                .retain(|s| s.get("snapshot-id").and_then(|v| v.as_i64()).is_none_or(|id| keep.contains(&id)));
            self.log_previous(&base, &mut m);
            if let Some(c) = self.write_version(storage, Some(&base), m).await? {
                // Read the dropped snapshots' lists with the version that
                // still named them.
                expired = Some((base, lists));
                out.snapshots = ids;
                current = Some(c);
                break;
            }
            if attempt + 1 == attempts.max(1) {
                return Err(IcebergError::Conflict {
                    table: self.rel.clone(),
                    attempts,
                });
            }
            tokio::time::sleep(backoff(attempt)).await;
        }
        let Some(current) = current else { return Ok(out) };
        // What the kept snapshots read: their lists, manifests and files.
        let mut kept_files: HashSet<String> = HashSet::new();
        let mut kept_meta: HashSet<String> = HashSet::new();
        for s in &current.metadata.snapshots {
            let list_rel = self.rel_of(&current, &s.manifest_list)?;
            // A kept snapshot's list gone: what it reads is unknown, so
            // nothing is deleted.
            let Some(list) = self.manifest_list(storage, &current, &s.manifest_list).await? else {
                return Err(self.unreadable(&list_rel, "missing (a kept snapshot's manifest list)"));
            };
            kept_meta.insert(list_rel);
            for m in list {
                if kept_meta.insert(self.rel_of(&current, &m.path)?)
                    && let Some(entries) = self.manifest_entries(storage, &current, &m).await?
                {
                    kept_files.extend(entries.into_iter().filter(|e| e.status != Status::Deleted).map(|e| e.file.path));
                }
            }
        }
        let mut doomed = BTreeSet::new();
        let (base, lists) = expired.unwrap_or_else(|| (current.clone(), Vec::new()));
        for list_abs in &lists {
            doomed.insert(self.rel_of(&base, list_abs)?);
            let Some(list) = self.manifest_list(storage, &base, list_abs).await? else {
                continue;
            };
            for m in list {
                let rel = self.rel_of(&base, &m.path)?;
                if kept_meta.contains(&rel) || !doomed.insert(rel) {
                    continue;
                }
                if let Some(entries) = self.manifest_entries(storage, &base, &m).await? {
                    out.unreferenced
                        .extend(entries.into_iter().map(|e| e.file.path).filter(|p| !kept_files.contains(p)));
                }
            }
        }
        // Leftovers of attempts that died, and old versions. A file no
        // snapshot names may be joining a commit in flight (another
        // process's, paused or slow): only one older than any commit in
        // flight reaches is a leftover, whatever the snapshot retention.
        let cutoff = retention
            .keep_since_ms
            .min(chrono::Utc::now().timestamp_millis() - super::ORPHAN_AGE.as_millis() as i64);
        let listed = storage
            .list(&format!("{}/metadata/", self.rel))
            .await
            .map_err(|e| self.storage_error(e))?;
        let previous = current
            .metadata
            .properties
            .get("write.metadata.previous-versions-max")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(self.limits.previous_versions as u64)
            .max(1);
        let oldest_kept = current.version.saturating_sub(previous);
        for meta in listed {
            let rel = storage.rel_of(&meta.location);
            let Some(name) = meta.location.filename() else { continue };
            let old = meta.last_modified.timestamp_millis() < cutoff;
            let stale_avro = name.ends_with(".avro") && old && !kept_meta.contains(&rel);
            // A catalog's table may point at a registered `v<N>`: the
            // catalog keeps its own metadata files.
            let stale_version = self.catalog().is_none() && super::version_of(name).is_some_and(|v| v < oldest_kept);
            if stale_avro || stale_version {
                doomed.insert(rel);
            }
        }
        for rel in &doomed {
            storage.delete(rel).await.map_err(|e| self.storage_error(e))?;
        }
        out.metadata_files_deleted = doomed.len();
        Ok(out)
    }
}

/// The ids of the snapshots `retention` keeps in `current`.
fn kept(current: &Current, retention: Retention) -> HashSet<i64> {
    let mut keep: HashSet<i64> = current.metadata.refs.values().map(|r| r.snapshot_id).collect();
    let mut at_cutoff = false;
    for (i, s) in current.metadata.ancestry().into_iter().enumerate() {
        // The newest ancestor made before the cutoff was current at it:
        // a reader may have it open, and the files a later snapshot
        // removed within the retention are its.
        let current_at_cutoff = !at_cutoff && s.timestamp_ms < retention.keep_since_ms;
        at_cutoff |= current_at_cutoff;
        if i <= retention.keep_last || s.timestamp_ms >= retention.keep_since_ms || current_at_cutoff {
            keep.insert(s.snapshot_id);
        }
    }
    for s in &current.metadata.snapshots {
        // Another writer's snapshots (through a catalog) are its own to
        // expire.
        let others = s.summary.get("engine-name").map(String::as_str) != Some(super::ENGINE);
        if s.timestamp_ms >= retention.keep_since_ms || others {
            keep.insert(s.snapshot_id);
        }
    }
    keep
}
