//! `--fresh`: deleting a job's data files and state, crash-safely
//! (invariant 6 of [`super`]): the `clearing.json` marker goes first and
//! is removed last, state goes before data.

use super::{StateError, StateStore};
use std::collections::BTreeSet;

impl StateStore {
    /// Marker of a `--fresh` in progress: while it exists the job's state
    /// and files cannot be trusted, so every run finishes the clearing first.
    fn clearing_marker(&self) -> String {
        format!("{}/clearing.json", self.dir)
    }

    /// Whether a `--fresh` was interrupted before it finished.
    pub async fn clear_interrupted(&self) -> Result<bool, StateError> {
        Ok(self.read(&self.clearing_marker()).await?.is_some())
    }

    /// `--fresh`: deletes the job's data files and its state. Crash-safe: the
    /// marker goes first and state before data, because checkpoints that
    /// outlived their files would make a later run skip units whose rows are
    /// gone; a run that finds the marker finishes the clearing.
    pub async fn clear(&self, tables: &BTreeSet<String>) -> Result<usize, StateError> {
        let marker = self.clearing_marker();
        self.write_doc(&marker, &serde_json::json!({ "started_at": chrono::Utc::now().to_rfc3339() }))
            .await?;
        let leases = format!("{}/leases/", self.dir);
        for m in self.list(&self.dir).await? {
            let rel = self.storage().rel_of(&m.location);
            // The lease is the clearing run's own: it outlives the clearing.
            if rel != marker && !rel.starts_with(&leases) {
                self.sink.delete(&rel).await?;
            }
        }
        let mut removed = 0;
        for f in self.list_files(tables).await? {
            self.sink.delete(&f.rel).await?;
            crate::util::failpoint::hit("during-fresh");
            removed += 1;
        }
        removed += self.remove_staging(tables, |_| true).await;
        self.sink.delete(&marker).await?;
        Ok(removed)
    }
}
