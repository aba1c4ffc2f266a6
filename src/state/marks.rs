//! High-water marks of incremental exports: `marks/e<i>-<chain>.json`.

use super::{Mark, StateError, StateStore};
use crate::vocab::chain::Chain;

impl StateStore {
    fn mark_path(&self, export: usize, chain: Chain) -> String {
        format!("{}/marks/e{export}-{chain}.json", self.dir)
    }

    /// The high-water mark of an incremental export on a chain.
    pub async fn load_mark(&self, export: usize, chain: Chain) -> Result<Option<Mark>, StateError> {
        self.read_doc(&self.mark_path(export, chain)).await
    }

    /// Every high-water mark of the job.
    pub async fn load_marks(&self) -> Result<Vec<Mark>, StateError> {
        self.load_dir("marks").await
    }

    /// Writes a high-water mark atomically.
    pub async fn save_mark(&self, mark: &Mark) -> Result<(), StateError> {
        self.write_doc(&self.mark_path(mark.export, mark.chain), mark).await
    }
}
