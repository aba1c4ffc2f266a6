//! Metadata files in a table's folder that the file-system layout did not
//! write — `NNNNN-<uuid>.metadata.json`, as catalogs and other engines
//! name theirs — seen before a process first writes the table.
//!
//! # Invariants
//!
//! - **Another writer is never overwritten.** A foreign metadata file
//!   newer than the folder's newest `v<N>.metadata.json` holding a
//!   snapshot that another engine made (its summary's `engine-name` is
//!   not chainetl) refuses the write with a layout error (exit 2) naming
//!   the file: committing `v<N+1>` on `v<N>` would drop that writer's
//!   commits for the folder's readers, and a later expiry would delete
//!   its files.
//! - **This job's catalog era is carried on.** Where every snapshot the
//!   newest foreign file adds is chainetl's and it is the same table (a
//!   catalog that was removed from the job's spec wrote it), it becomes
//!   `v<N+1>` and the hint points at it: the folder is read, and written,
//!   as before the catalog.
//! - One listing per table per process: a writer that appears while a
//!   run is in progress is seen by the next process to write.

use super::metadata::TableMetadata;
use super::{Current, ENGINE, IcebergError, Table, version_of};
use crate::storage::Storage;
use std::collections::HashSet;

impl Table {
    /// Checks the folder for metadata another writer left (see the module
    /// doc): refuses, adopts, or finds none.
    pub(super) async fn settle_foreign(&self, storage: &Storage) -> Result<(), IcebergError> {
        let dir = format!("{}/metadata/", self.rel);
        let listed = storage.list(&dir).await.map_err(|e| self.storage_error(e))?;
        let foreign: Vec<String> = listed
            .iter()
            .filter_map(|m| m.location.filename().map(str::to_string))
            .filter(|n| (n.ends_with(".metadata.json") || n.ends_with(".metadata.json.gz")) && version_of(n).is_none())
            .collect();
        if foreign.is_empty() {
            return Ok(());
        }
        let ours = self.folder_latest(storage).await?;
        let since = ours.as_ref().map_or(i64::MIN, |c| c.metadata.last_updated_ms);
        let mut newest: Option<(String, TableMetadata)> = None;
        for name in foreign {
            let rel = format!("{dir}{name}");
            let Some(o) = storage.get(&rel).await.map_err(|e| self.storage_error(e))? else {
                continue;
            };
            let m = match TableMetadata::parse(&o.bytes) {
                Ok(m) => m,
                Err(why) => {
                    return Err(self.layout(format!(
                        "{rel} is metadata another writer left, and chainetl cannot read it ({why}): writing on would \
                         lose that writer's commits; commit through the catalog that writer uses ([output.catalog]), or \
                         move the file away if the table is this job's alone"
                    )));
                }
            };
            if m.last_updated_ms > since && newest.as_ref().is_none_or(|(_, n)| m.last_updated_ms > n.last_updated_ms) {
                newest = Some((name, m));
            }
        }
        let Some((name, theirs)) = newest else {
            return Ok(());
        };
        let known: HashSet<i64> = ours
            .iter()
            .flat_map(|c| c.metadata.snapshots.iter().map(|s| s.snapshot_id))
            .collect();
        let other = theirs
            .ancestry()
            .into_iter()
            .filter(|s| !known.contains(&s.snapshot_id))
            .find(|s| s.summary.get("engine-name").map(String::as_str) != Some(ENGINE));
        let same_table = ours.as_ref().is_none_or(|c| c.metadata.table_uuid == theirs.table_uuid);
        if !same_table {
            return Err(self.layout(format!(
                "{dir}{name} is the metadata of another table (uuid {}) in this job's folder: move it away, or point \
                 output.uri elsewhere",
                theirs.table_uuid
            )));
        }
        if let Some(s) = other {
            let engine = s.summary.get("engine-name").map_or("another engine", String::as_str);
            return Err(self.layout(format!(
                "{dir}{name} was written by another writer ({engine}, snapshot {} `{}`) after {}: committing on would \
                 drop its commits for this folder's readers. Commit through the catalog that writer uses: set \
                 [output.catalog] (chainetl then commits through it, and leaves that writer's snapshots alone)",
                s.snapshot_id,
                s.operation(),
                ours.as_ref().map_or_else(
                    || "this job's tables were made".to_string(),
                    |c| format!("v{}.metadata.json", c.version)
                )
            )));
        }
        // Built on the folder's newest, or the folder moved on since (a
        // command run with the catalog's spec after it was removed).
        // (Ours may be expired from theirs: then all of theirs came after.)
        let builds_on_ours = ours.as_ref().and_then(|c| c.snapshot()).is_none_or(|mine| {
            theirs.snapshot(mine.snapshot_id).is_some() || theirs.snapshots.iter().all(|s| s.timestamp_ms > mine.timestamp_ms)
        });
        if !builds_on_ours {
            return Err(self.layout(format!(
                "{dir}{name} (a catalog's commit of this table) does not build on the folder's newest version: \
                 committing on either would drop the other's commits; set [output.catalog] back and run, or move the \
                 file away to keep the folder's"
            )));
        }
        // A catalog's commits of this job: carried on as the next version.
        let base = ours.map(|c| Current {
            metadata_location: None,
            ..c
        });
        match self.write_version(storage, base.as_ref(), theirs).await? {
            Some(c) => {
                tracing::info!(table = %self.rel, from = %name, version = c.version, "carried on the table a catalog committed (the catalog is no longer in the spec)")
            }
            None => tracing::debug!(table = %self.rel, "another writer carried the catalog's table on first"),
        }
        Ok(())
    }

    /// Refuses a catalog's table that the folder moved on from: the
    /// catalog removed from the spec, the folder committed to, the catalog
    /// added back. Committing on the catalog's would drop the folder's
    /// commits (and a vacuum its files).
    pub(super) async fn check_catalog_current(&self, storage: &Storage, current: &Current) -> Result<(), IcebergError> {
        let Some(folder) = self.folder_latest(storage).await? else {
            return Ok(());
        };
        let moved_on = folder.metadata.table_uuid == current.metadata.table_uuid
            && folder.metadata.last_updated_ms > current.metadata.last_updated_ms
            && folder
                .metadata
                .current_snapshot_id
                .is_some_and(|id| current.metadata.snapshot(id).is_none());
        if moved_on {
            return Err(self.layout(format!(
                "the catalog's table is older than the folder's {}/metadata/v{}.metadata.json (committed without the \
                 catalog since): register that file in the catalog in place of its table, then run again",
                self.rel, folder.version
            )));
        }
        Ok(())
    }
}
