//! What a Delta table no longer needs: the vacuum of its files and log,
//! and the deletion of its whole log when the job leaves the format.
//!
//! A file removed from a table (by `--fresh`, a compaction, a repair)
//! stays on storage while a version within the retention reads it (time
//! travel, and readers that opened an older version). Vacuum deletes a
//! file of the job's under the table only when all hold:
//!
//! - it is not in the table's current version;
//! - no commit at or after the cutoff (now − retention) removed it;
//! - the job's records do not need it ([`Retention::pending`]);
//! - it was written before the cutoff (a file being written, or one a
//!   run is about to commit, is newer).
//!
//! So files of uncommitted work that a run left, which no version ever
//! read, go too once they are older than the retention. Log files no
//! version within the retention needs (commits and checkpoints before the
//! newest checkpoint at or before the oldest such version) are deleted
//! too, so the log stays short however many commits a table has had.
//! Files of other jobs sharing the table are never touched.

use super::DeltaTables;
use crate::sink::format::{Retention, Vacuumed};
use crate::sink::{Sink, SinkError};
use std::collections::HashSet;

fn failed(table: &str, e: impl std::fmt::Display) -> SinkError {
    SinkError::Write {
        path: table.into(),
        source: format!("vacuum: {e}").into(),
    }
}

/// Vacuums `table` (see the module doc).
pub(super) async fn vacuum(tables: &DeltaTables, sink: &Sink, table: &str, keep: &Retention) -> Result<Vacuumed, SinkError> {
    let storage = sink.storage();
    let mut out = Vacuumed::default();
    let t = tables.table(sink, table);
    if !t.exists(storage).await.map_err(|e| failed(table, e))? {
        return Ok(out);
    }
    let live: HashSet<String> = t
        .blocking(|t| t.live_files())
        .await
        .map_err(|e| failed(table, e))?
        .into_iter()
        .map(|f| format!("{table}/{}", f.path))
        .collect();
    let recent: HashSet<String> = t
        .removed_since(storage, keep.cutoff_ms)
        .await
        .map_err(|e| failed(table, e))?
        .into_iter()
        .map(|p| format!("{table}/{p}"))
        .collect();
    let log = format!("{table}/_delta_log/");
    for m in storage.list(&format!("{table}/")).await.map_err(|e| failed(table, e))? {
        let rel = storage.rel_of(&m.location);
        let name = rel.rsplit('/').next().unwrap_or_default();
        if rel.starts_with(&log) || !(keep.owned)(name) {
            continue;
        }
        if live.contains(&rel)
            || recent.contains(&rel)
            || keep.pending.contains(&rel)
            || m.last_modified.timestamp_millis() >= keep.cutoff_ms
        {
            continue;
        }
        storage.delete(&rel).await.map_err(|e| failed(table, e))?;
        out.files += 1;
        out.bytes += m.size;
    }
    out.log_files = t.clean_log(storage, keep.cutoff_ms).await.map_err(|e| failed(table, e))?;
    Ok(out)
}

/// Deletes `table`'s log (`<table>/_delta_log/`), oldest file first: a
/// reader meanwhile finds a log that starts too late, or a checkpoint
/// gone, and fails; never an older version whose removed files are
/// deleted already, read as if current. Whether there was one.
pub(super) async fn delete_log(sink: &Sink, table: &str) -> Result<bool, SinkError> {
    // Log files are named by version: their names sort oldest first.
    crate::sink::format::delete_records(sink, &format!("{table}/_delta_log/"), |_| ()).await
}
