//! What the kernel does not give from a table's log: for vacuum, the
//! files removed since a cutoff and deleting expired log files; for the
//! job's page, its last commits as a reader of the history sees them.

use super::{DeltaError, Table};
use crate::sink::format::CommitLine;
use crate::storage::{Storage, StorageError};
use std::collections::HashSet;

impl Table {
    /// Paths (relative to the table) of the files removed by commits at or
    /// after `cutoff_ms` (milliseconds since the epoch): files a version
    /// within the retention still reads. Only commit files written after
    /// the cutoff (less a minute of clock slack) are read.
    pub async fn removed_since(&self, storage: &Storage, cutoff_ms: i64) -> Result<HashSet<String>, DeltaError> {
        let mut out = HashSet::new();
        for m in self.log_files(storage).await? {
            if m.last_modified.timestamp_millis() < cutoff_ms - 60_000 || commit_version(&m.location).is_none() {
                continue;
            }
            let rel = storage.rel_of(&m.location);
            let Some(obj) = storage.get(&rel).await.map_err(|source| self.storage_error(source))? else {
                continue;
            };
            for line in obj.bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let Ok(action) = serde_json::from_slice::<serde_json::Value>(line) else {
                    return Err(self.refused(format!("{rel}: a line is not JSON")));
                };
                let remove = &action["remove"];
                if let Some(path) = remove["path"].as_str()
                    && remove["deletionTimestamp"].as_i64().is_none_or(|t| t >= cutoff_ms)
                {
                    out.insert(path.to_string());
                }
            }
        }
        Ok(out)
    }

    /// Deletes the log files no version at or after `cutoff_ms` needs:
    /// commits and checkpoints older than the newest checkpoint at or
    /// before the oldest such version, written before the cutoff. Returns
    /// how many it deleted.
    pub async fn clean_log(&self, storage: &Storage, cutoff_ms: i64) -> Result<usize, DeltaError> {
        let files = self.log_files(storage).await?;
        let commits: Vec<(u64, i64)> = files
            .iter()
            .filter_map(|m| Some((commit_version(&m.location)?, m.last_modified.timestamp_millis())))
            .collect();
        let checkpoints: Vec<u64> = files.iter().filter_map(|m| checkpoint_version(&m.location)).collect();
        // The oldest version a reader within the retention may ask for.
        let Some(oldest) = commits.iter().filter(|(_, t)| *t >= cutoff_ms).map(|(v, _)| *v).min() else {
            return Ok(0);
        };
        // The version current at the cutoff (`oldest - 1`) stays readable
        // too, and so does the checkpoint `_last_checkpoint` names (a
        // reader starts from it).
        let hinted = match storage.get(&format!("{}/_delta_log/_last_checkpoint", self.rel)).await {
            Ok(Some(o)) => serde_json::from_slice::<serde_json::Value>(&o.bytes)
                .ok()
                .and_then(|d| d["version"].as_u64()),
            Ok(None) => None,
            Err(source) => return Err(self.storage_error(source)),
        };
        let Some(hinted) = hinted else {
            return Ok(0);
        };
        let Some(keep_from) = checkpoints.iter().copied().filter(|c| *c < oldest && *c <= hinted).max() else {
            return Ok(0);
        };
        let mut deleted = 0;
        for m in &files {
            let old = m.last_modified.timestamp_millis() < cutoff_ms;
            let expired = commit_version(&m.location)
                .or_else(|| checkpoint_version(&m.location))
                .or_else(|| crc_version(&m.location))
                .is_some_and(|v| v < keep_from);
            if old && expired {
                storage
                    .delete(&storage.rel_of(&m.location))
                    .await
                    .map_err(|source| self.storage_error(source))?;
                deleted += 1;
            }
        }
        Ok(deleted)
    }

    /// The commits of versions `version`, `version - 1`, … (`n` at most,
    /// newest first) that the log still has: what each did, from its
    /// `commitInfo` and its actions. A commit file that is gone (a cleaned
    /// log) or cannot be read is left out (said in the log: the page it
    /// serves is worth more than one commit's line); a line that is not
    /// JSON is skipped.
    pub async fn last_commits(&self, storage: &Storage, version: u64, n: usize) -> Vec<CommitLine> {
        let mut out = Vec::new();
        for v in (0..=version).rev().take(n) {
            let rel = format!("{}/_delta_log/{v:020}.json", self.rel);
            let obj = match storage.get(&rel).await {
                Ok(Some(obj)) => obj,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!("{rel}: could not read the commit ({e}); left out of the table's last commits");
                    continue;
                }
            };
            let mut c = CommitLine {
                version: v,
                ..CommitLine::default()
            };
            for line in obj.bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let Ok(action) = serde_json::from_slice::<serde_json::Value>(line) else {
                    continue;
                };
                if let Some(info) = action.get("commitInfo") {
                    c.operation = info["operation"].as_str().unwrap_or_default().to_string();
                    c.timestamp = info["timestamp"]
                        .as_i64()
                        .and_then(chrono::DateTime::from_timestamp_millis)
                        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
                } else if let Some(add) = action.get("add") {
                    c.adds += 1;
                    c.data_change |= add["dataChange"].as_bool().unwrap_or(true);
                } else if let Some(remove) = action.get("remove") {
                    c.removes += 1;
                    c.data_change |= remove["dataChange"].as_bool().unwrap_or(true);
                } else if action.get("metaData").is_some() {
                    c.metadata = true;
                }
            }
            out.push(c);
        }
        out
    }

    pub(super) async fn log_files(&self, storage: &Storage) -> Result<Vec<object_store::ObjectMeta>, DeltaError> {
        storage
            .list(&format!("{}/_delta_log/", self.rel))
            .await
            .map_err(|source| self.storage_error(source))
    }

    fn storage_error(&self, source: StorageError) -> DeltaError {
        DeltaError::Storage {
            table: self.rel.clone(),
            source,
        }
    }
}

/// The version of a commit file (`<20 digits>.json`).
pub(super) fn commit_version(p: &object_store::path::Path) -> Option<u64> {
    let name = p.filename()?;
    let v = name.strip_suffix(".json")?;
    (v.len() == 20).then(|| v.parse().ok()).flatten()
}

/// The version of a single-file checkpoint (`<20 digits>.checkpoint.parquet`).
pub(super) fn checkpoint_version(p: &object_store::path::Path) -> Option<u64> {
    let v = p.filename()?.strip_suffix(".checkpoint.parquet")?;
    (v.len() == 20).then(|| v.parse().ok()).flatten()
}

/// The version of a checksum file (`<20 digits>.crc`).
pub(super) fn crc_version(p: &object_store::path::Path) -> Option<u64> {
    let v = p.filename()?.strip_suffix(".crc")?;
    (v.len() == 20).then(|| v.parse().ok()).flatten()
}
